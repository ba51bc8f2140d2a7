"""The OpenAPI 3.1 document of `/api/v1`, built from the same pydantic models the routes validate with."""

from __future__ import annotations

from service.api import MAX_LIMIT, ItemsPage, SiteVerdictRequest, Source, VerdictRequest, WatchRequest


def _json(ref: str, description: str) -> dict:
    return {"description": description, "content": {"application/json": {"schema": {"$ref": ref}}}}


_ERROR = {"description": "refused, with the reason", "content": {"application/json": {"schema": {
    "type": "object", "properties": {"error": {"type": "string"}}}}}}
_PAGE = [{"name": "limit", "in": "query", "schema": {"type": "integer", "minimum": 1, "maximum": MAX_LIMIT}},
         {"name": "offset", "in": "query", "schema": {"type": "integer", "minimum": 0}}]
_ID = {"name": "id", "in": "path", "required": True, "schema": {"type": "string"},
       "description": "the source's id (a hash of its URL, as /api/v1/sources lists it)"}
_ITEMS = [{"name": "since", "in": "query", "schema": {"type": "string"},
           "description": "the `next` cursor of an earlier answer; none: from the first item"},
          {"name": "limit", "in": "query", "schema": {"type": "integer", "minimum": 1, "maximum": MAX_LIMIT}}]


def openapi_document() -> dict:
    models = {model.__name__: model.model_json_schema(ref_template="#/components/schemas/{model}")
              for model in (Source, ItemsPage, WatchRequest, VerdictRequest, SiteVerdictRequest)}
    components = {}
    for name, schema in models.items():
        components.update(schema.pop("$defs", {}))
        components[name] = schema
    errors = {"400": _ERROR, "401": _ERROR, "403": _ERROR}
    return {
        "openapi": "3.1.0",
        "info": {"title": "sourcewatch", "version": "1",
                 "description": "Source pages of news and events, their records, and their new items as they "
                                "appear. Every route takes `Authorization: Bearer TOKEN`."},
        "components": {"schemas": components,
                       "securitySchemes": {"token": {"type": "http", "scheme": "bearer"}}},
        "security": [{"token": []}],
        "paths": {
            "/api/v1/sources": {"get": {
                "summary": "source pages found or watched, with their figures",
                "parameters": [*_PAGE, {"name": "search", "in": "query", "schema": {"type": "string"}}],
                "responses": {"200": {"description": "a page of sources", "content": {"application/json": {
                    "schema": {"type": "object", "properties": {
                        "total": {"type": "integer"},
                        "sources": {"type": "array", "items": {"$ref": "#/components/schemas/Source"}}}}}}},
                    **errors}}},
            "/api/v1/sources/{id}": {"get": {
                "summary": "one source page", "parameters": [_ID],
                "responses": {"200": _json("#/components/schemas/Source", "the source"), "404": _ERROR, **errors}}},
            "/api/v1/sources/{id}/records": {"get": {
                "summary": "its current records, newest first sight first", "parameters": [_ID, *_PAGE],
                "responses": {"200": {"description": "records"}, "404": _ERROR, **errors}}},
            "/api/v1/sources/{id}/items": {"get": {
                "summary": "its new items after a cursor, in the order they were stored", "parameters": [_ID, *_ITEMS],
                "responses": {"200": _json("#/components/schemas/ItemsPage", "items and the next cursor"),
                              "404": _ERROR, **errors}}},
            "/api/v1/items": {"get": {
                "summary": "new items of every source after a cursor: none twice, none skipped",
                "parameters": _ITEMS,
                "responses": {"200": _json("#/components/schemas/ItemsPage", "items and the next cursor"),
                              **errors}}},
            "/api/v1/expansions": {"get": {
                "summary": "domain expansions' rounds (`sourcewatch expand`): the operator the bandit chose, the "
                           "pages it found, its reward and every operator's score; the latest expansion first",
                "parameters": _PAGE,
                "responses": {"200": {"description": "rounds"}, **errors}}},
            "/api/v1/discovery/gave-up": {"get": {
                "summary": "sites whose discovery gave up without a find, no source page watched and no verdict "
                           "given: where to tell it (POST /api/v1/sites/verdict); the latest first",
                "parameters": _PAGE,
                "responses": {"200": {"description": "a page of sites", "content": {"application/json": {
                    "schema": {"type": "object", "properties": {
                        "total": {"type": "integer"}, "sites": {"type": "array", "items": {"type": "object"}}}}}}},
                    **errors}}},
            "/api/v1/watch": {"post": {
                "summary": "watch a listing page, or discover a homepage's listing page and watch it",
                "requestBody": {"required": True, "content": {"application/json": {
                    "schema": {"$ref": "#/components/schemas/WatchRequest"}}}},
                "responses": {"202": {"description": "queued for the workers"}, "415": _ERROR, **errors}}},
            "/api/v1/sources/{id}/verdict": {"post": {
                "summary": "a person's verdict on a found page: whether it is a listing (kept for `sourcewatch "
                           "retrain classifier|discovery`)", "parameters": [_ID],
                "requestBody": {"required": True, "content": {"application/json": {
                    "schema": {"$ref": "#/components/schemas/VerdictRequest"}}}},
                "responses": {"202": {"description": "queued"}, "404": _ERROR, "415": _ERROR, **errors}}},
            "/api/v1/sites/verdict": {"post": {
                "summary": "a person's verdict on a site discovery ran on: its listing page (watched from then "
                           "on), or none — labels for `sourcewatch retrain discovery`",
                "requestBody": {"required": True, "content": {"application/json": {
                    "schema": {"$ref": "#/components/schemas/SiteVerdictRequest"}}}},
                "responses": {"202": {"description": "queued, with the topics"}, "415": _ERROR, **errors}}},
        },
    }

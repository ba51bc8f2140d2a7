"""Who may call the service: infra.api_access's rule (token, Host, Origin, JSON bodies) on every route but
the health check, with the token also taken from a cookie — a browser opens the dashboard once with
`?token=…`, which sets it (HttpOnly, SameSite=Strict) and redirects to the same page without it — or, for a
feed, from its URL."""

from __future__ import annotations

import logging

from aiohttp import web
from multidict import CIMultiDict

from infra.api_access import AccessRule

log = logging.getLogger(__name__)
COOKIE = "sourcewatch_token"
OPEN_PATHS = frozenset({"/healthz"})
# Feed readers cannot send a header or keep a cookie: a feed's URL carries the token (`?token=…`).
TOKEN_IN_URL_PREFIX = "/feeds/"


def _without_token(request: web.Request) -> str:
    query = {key: value for key, value in request.query.items() if key != "token"}
    return str(request.rel_url.with_query(query))


def access_middleware(rule: AccessRule, resources: frozenset | None = None):
    """The rule on every request, or, given `resources`, on requests to those only (a worker's web server
    checks its own routes itself)."""
    @web.middleware
    async def check_access(request: web.Request, handler):
        if request.path in OPEN_PATHS or (resources is not None
                                          and request.match_info.route.resource not in resources):
            return await handler(request)
        headers = CIMultiDict(request.headers)
        offered = request.query.get("token")
        if offered and request.path.startswith(TOKEN_IN_URL_PREFIX) and "Authorization" not in headers:
            headers["Authorization"] = f"Bearer {offered}"
        elif offered and request.method == "GET" and "Authorization" not in headers:
            if rule.refusal("GET", CIMultiDict(headers, Authorization=f"Bearer {offered}")) is None:
                redirect = web.HTTPFound(_without_token(request))
                redirect.set_cookie(COOKIE, offered, httponly=True, samesite="Strict", path="/")
                raise redirect
        if "Authorization" not in headers and COOKIE in request.cookies:
            headers["Authorization"] = f"Bearer {request.cookies[COOKIE]}"
        refused = rule.refusal(request.method, headers)
        if refused is not None:
            log.warning("%s %s refused (%d): %s", request.method, request.path, refused.status, refused.reason)
            return web.json_response({"error": refused.reason}, status=refused.status)
        return await handler(request)

    return check_access

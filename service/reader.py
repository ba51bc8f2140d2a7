"""The service's reads: infra.queries on the configured ClickHouse, off the event loop, as dicts with
aware UTC datetimes whichever way they came (directly, or through a worker's /sql/ as JSON text)."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime

from infra.queries import Query
from infra.settings import Settings
from infra.sql_owner import read_clickhouse

# The columns the service's queries return as times.
TIME_COLUMNS = frozenset({"stored_at", "found_at", "first_seen", "last_seen", "date", "last_record_seen",
                          "last_new_item"})
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def _moment(value) -> datetime | None:
    if value is None:
        return None
    moment = value if isinstance(value, datetime) else datetime.fromisoformat(str(value))
    moment = moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)
    return None if moment == _EPOCH else moment  # an outer join's empty side


class Unreadable(RuntimeError):
    """ClickHouse did not answer the query (a worker starting or stopping, a server down, a query error)."""


class Reader:
    def __init__(self, settings: Settings) -> None:
        self.settings = settings

    async def rows(self, query: Query) -> list[dict]:
        try:
            columns, rows = await asyncio.to_thread(read_clickhouse, self.settings, query)
        except Exception as error:  # the caller gets a 503 that says why; the service goes on
            raise Unreadable(str(error)) from error
        return [{column: _moment(value) if column in TIME_COLUMNS else value for column, value in zip(columns, row)}
                for row in rows]

"""The service's reads: infra.queries on the configured ClickHouse, off the event loop, as dicts with
aware UTC datetimes whichever way they came (directly, or through a worker's /sql/ as JSON text)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime

from infra.queries import Query
from infra.settings import Settings
from infra.sql_owner import read_clickhouse

# The columns the service's queries return as times.
TIME_COLUMNS = frozenset({"stored_at", "found_at", "first_seen", "last_seen", "date", "published", "event_start",
                          "last_record_seen", "last_new_item"})
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def _moment(value) -> datetime | None:
    if value is None:
        return None
    moment = value if isinstance(value, datetime) else datetime.fromisoformat(str(value))
    moment = moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)
    return None if moment == _EPOCH else moment  # an outer join's empty side


class Unreadable(RuntimeError):
    """ClickHouse did not answer the query (a worker starting or stopping, a server down, a query error)."""


ReadQuery = Callable[[Query], Awaitable[tuple[list[str], list[list]]]]


class Reader:
    def __init__(self, settings: Settings, read: ReadQuery | None = None) -> None:
        """`read`: how a query reaches ClickHouse — by default as `sourcewatch sql` does (through the worker
        holding an embedded chDB, or directly), off the event loop; a worker holding it passes its own client's."""
        self.settings = settings
        self._read = read or (lambda query: asyncio.to_thread(read_clickhouse, settings, query))

    async def rows(self, query: Query) -> list[dict]:
        try:
            columns, rows = await self._read(query)
        except Exception as error:  # the caller gets a 503 that says why; the service goes on
            raise Unreadable(str(error)) from error
        return [{column: _moment(value) if column in TIME_COLUMNS else value for column, value in zip(columns, row)}
                for row in rows]

"""The new-items cursor: where a consumer of `/api/v1/items` or a feed has read up to.

Items are ordered by the moment ClickHouse first stored them (a replayed item keeps its first moment), then
by event id. A cursor is that pair, base64url-encoded so a client treats it as opaque. Items are served
only once they have been stored for a settling interval: a batch still being inserted when a reader passes
its moment would otherwise be skipped by that reader.
"""

from __future__ import annotations

import base64
import binascii
import json
from dataclasses import dataclass
from datetime import UTC, datetime


class BadCursor(ValueError):
    """A cursor this service did not make."""


@dataclass(frozen=True, order=True)
class Cursor:
    stored_at: datetime
    event_id: str

    def encode(self) -> str:
        text = json.dumps([self.stored_at.astimezone(UTC).isoformat(timespec="milliseconds"), self.event_id])
        return base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")

    @classmethod
    def after(cls, rows: list[dict], otherwise: Cursor) -> Cursor:
        """The cursor after the last of these item rows (`otherwise` when there are none)."""
        return cls(rows[-1]["stored_at"], rows[-1]["event_id"]) if rows else otherwise

    @classmethod
    def decode(cls, text: str) -> Cursor:
        try:
            stored_at, event_id = json.loads(base64.urlsafe_b64decode(text + "=" * (-len(text) % 4)))
            moment = datetime.fromisoformat(stored_at)
        except (ValueError, TypeError, binascii.Error) as error:
            raise BadCursor(f"not a cursor this service made: {text!r}") from error
        if not isinstance(event_id, str) or moment.tzinfo is None:
            raise BadCursor(f"not a cursor this service made: {text!r}")
        return cls(moment.astimezone(UTC), event_id)


# Before every item.
START = Cursor(datetime(1970, 1, 1, tzinfo=UTC), "")

"""Whether the parlor's ledger works, as the dashboard's page tells staff and players.

Two sources, kept apart because they mean different things:

* the ledger service's retained status (``<p>/ledger/v1/status``, docs/ledger.md):
  ``offline`` (stopped, or its last will) or ``online`` with ``"database": "down"``: the
  tables keep their finished games in their journals and send them when it is back;
* the dashboard's own reads of the ledger's database (the finished games, the close):
  while they fail the page's finished games and close are out of date.

Pure: times are passed in. Each change returns the model key ``"ledger"`` so that the
web layer pushes it to the pages.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

__all__ = ["LEDGER_KEY", "LedgerHealth"]

#: The change key the page redraws its ledger banner for.
LEDGER_KEY = "ledger"
#: Longest reason kept from a failed read (one line of a database error).
MAX_REASON = 300


@dataclass
class LedgerHealth:
    """What the page's ledger banner says: the service's state and the dashboard's reads."""

    #: ``"online"`` or ``"offline"`` as the service said last; None: never heard (no
    #: ledger service in this parlor, or not yet).
    state: str | None = None
    #: ``"up"`` or ``"down"``: the service's own database, as it said last.
    database: str | None = None
    #: Since when the service is offline or its database down (Unix time).
    trouble_since: float | None = None
    #: Why the dashboard's last read of the ledger's database failed (None: it worked).
    read_error: str | None = None
    #: Since when those reads fail.
    read_since: float | None = None

    def status(self, payload: bytes, now: float) -> set[str] | None:
        """The service's status message: the keys that changed, or None for a message
        that does not fit the contract (docs/mqtt/ledger-status.schema.json)."""
        try:
            data = json.loads(payload)
        except (ValueError, UnicodeDecodeError, RecursionError):
            return None
        if not isinstance(data, dict):
            return None
        state, database = data.get("state"), data.get("database")
        if state not in ("online", "offline") or database not in ("up", "down"):
            return None
        if (state, database) == (self.state, self.database):
            return set()
        was_fine = self.state != "offline" and self.database != "down"
        self.state, self.database = state, database
        fine = state == "online" and database == "up"
        if fine:
            self.trouble_since = None
        elif was_fine or self.trouble_since is None:
            self.trouble_since = now  # offline after down (or back) keeps the first time
        return {LEDGER_KEY}

    def read(self, error: str | None, now: float) -> set[str]:
        """The dashboard's read of the ledger's database worked (``error`` None) or
        failed for ``error``; the keys that changed."""
        if error is None:
            if self.read_error is None:
                return set()
            self.read_error = self.read_since = None
            return {LEDGER_KEY}
        error = error[:MAX_REASON]
        if self.read_error is None:
            self.read_since = now
        if error == self.read_error:
            return set()
        self.read_error = error
        return {LEDGER_KEY}

    def as_json(self) -> dict[str, Any]:
        """What the page shows (its banner is worded in the page's language)."""
        return {
            "state": self.state,
            "database": self.database,
            "trouble_since": self.trouble_since,
            "read_error": self.read_error,
            "read_since": self.read_since,
        }

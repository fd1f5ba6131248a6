"""The score trays: the totals the table reports against the scores, the mismatch staff
are told of, and the dice held until the trays agree (or staff say play on).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from typing import Any

from tablectl.console.core import TableCore, log, tray_alert_text


class Trays:
    """Owns the trays' last totals, the seats whose tray differs from their score, and
    staff's "play on" for this hand; stores all three."""

    def __init__(self, core: TableCore, *, hold_on_mismatch: bool) -> None:
        self.core = core
        #: The next hand's dice wait while a tray differs (unless staff say play on).
        self.hold_on_mismatch = hold_on_mismatch
        #: Seats whose tray total differs from their score, with the tray's total.
        self.mismatch: dict[int, int] = {}
        #: The totals the trays reported last (None: no trays, or none reported yet).
        self.totals: tuple[int, ...] | None = None
        #: Staff let this hand start although the trays differ.
        self.override = False

    def report(self, totals: Sequence[int]) -> None:
        """The table reported its trays' totals."""
        if len(totals) != self.core.players:
            log.warning("[%s] tray totals for %d seats ignored", self.core.table_id, len(totals))
            return
        self.totals = tuple(totals)
        self.compare()

    def compare(self) -> None:
        """Compare the last tray totals with the scores as they now stand; journal and
        publish a change (the same seats off against other scores is one too)."""
        totals = self.totals
        if totals is None:
            return
        expected = self.core.state.scores
        mismatch = {
            seat: totals[seat]
            for seat in range(self.core.players)
            if totals[seat] != expected[seat]
        }
        if mismatch == self.mismatch and (
            not mismatch or self._alert() == tray_alert_text(totals, expected)
        ):
            return
        self.mismatch = mismatch
        detail: dict[str, Any] = {"trays": list(totals), "scores": list(expected)}
        self.core.note("tray_mismatch" if mismatch else "trays_match", None, detail)
        self.core.publish_state()

    def _alert(self) -> str | None:
        """The open tray alert's text, or None."""
        texts = (a["text"] for a in self.core.alerts.as_list() if a["kind"] == "tray_mismatch")
        return next(texts, None)

    def hold_dice(self) -> bool:
        """The dealer may not roll: a tray differs, and staff did not say play on."""
        return bool(self.mismatch) and self.hold_on_mismatch and not self.override

    # ------------------------------------------------------------------ stored flow

    def snapshot(self) -> dict[str, Any]:
        """The mismatch, staff's override and the last totals."""
        return {
            "tray_mismatch": {str(k): v for k, v in sorted(self.mismatch.items())},
            "tray_override": self.override,
            "tray_totals": None if self.totals is None else list(self.totals),
        }

    def key(self) -> Hashable:
        """:meth:`snapshot` as a cheap comparable value."""
        return (tuple(sorted(self.mismatch.items())), self.override, self.totals)

    def restore(self, snapshot: dict[str, Any]) -> Callable[[], None]:
        """Read :meth:`snapshot`'s part; the returned call takes it up. Raises ValueError
        (KeyError, TypeError) on a bad one."""
        mismatch = {int(k): int(v) for k, v in snapshot.get("tray_mismatch", {}).items()}
        override = bool(snapshot.get("tray_override", False))
        raw = snapshot.get("tray_totals")
        totals = None if raw is None else tuple(int(t) for t in raw)

        def commit() -> None:
            self.mismatch, self.override, self.totals = mismatch, override, totals

        return commit

    def restore_alerts(self) -> None:
        """A restored mismatch stands as an alert again."""
        if self.mismatch and self.totals is not None:
            detail = {"trays": list(self.totals), "scores": self.core.state.scores}
            self.core.alert_for_note("tray_mismatch", None, detail)

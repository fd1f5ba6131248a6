"""Wins scored from the tiles (a tile-aware hand): what a win is worth, why the tiles make
no win, each winner's entry as the tiles score it, and the lines of ``OK?``.

Only computes and shows: the entry itself (``OK?``, ``PAO?``) is :mod:`.entry`'s.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace

from firmware_bridge import messages as m
from tablectl.console.core import TableCore, log
from tablectl.console.model import LINE, RonValue, WinEntry, fit
from tablectl.rules import tilechecks as checks
from tablectl.rules import tiletrack
from tablectl.rules.options import MoneyOptions
from tablectl.rules.refusal import Refusal
from tablectl.rules.scoring import hand_value, ron_points, tsumo_payments
from tablectl.rules.state import GameState
from tablectl.tiles.hand import HandScore
from tablectl.tiles.ids import KIND_NAMES, kind

_FURITEN = (
    (re.compile(r"has discarded (\S+)$"), "in your discards"),
    (re.compile(r"let (\S+) pass after its riichi"), "passed in riichi"),
    (re.compile(r"let (\S+) pass since"), "passed this turn"),
)


def value_text(han: int, fu: int | None, yakuman: int, *, fu_counts: bool = True) -> str:
    """A scored value: ``3 HAN 40 FU``, ``YAKUMAN x2``; without the fu where they do not
    count (5 han and more, a table without fu)."""
    if yakuman:
        return "YAKUMAN" + ("" if yakuman == 1 else f" x{yakuman}")
    if fu is None or not fu_counts or han >= 5:
        return f"{han} HAN"
    return f"{han} HAN {fu} FU"


def score_line(entry: WinEntry, *, fu_counts: bool = True) -> str:
    """Line 1 of a scored win: ``3 HAN 40 FU 5200 OK?``, ``YAKUMAN 32000 OK?``; kantan's
    ron off several discarders with their number and the sum: ``RON x2 9000 OK?``."""
    if entry.each:
        return fit(f"RON x{len(entry.each)} {entry.points} OK?")
    value = value_text(entry.han, entry.fu, entry.yakuman, fu_counts=fu_counts)
    text = f"{value} {entry.points} OK?"
    if len(text) > LINE:
        text = text.replace(" HAN ", "HAN ").replace(" FU ", "FU ")
    return fit(text)


def has_chips(money: MoneyOptions) -> bool:
    """The preset pays chips (祝儀): the displays show them (docs/console.md, "Money")."""
    return money.chip_value > 0 and (money.hand_chips or money.yakuman_chips > 0)


def win_value(entry: WinEntry, *, fu_counts: bool = True) -> str:
    """A winner's value once the hand is settled, for line 1 of its ``CONFIRM`` on a
    preset with chips: ``3 HAN 40 FU``, ``YAKUMAN x2``, kantan's ``RON x2``; at most 12
    characters (two-digit han drop the fu, fu have three digits at most)."""
    if entry.each:
        return f"RON x{len(entry.each)}"
    return value_text(entry.han, entry.fu, entry.yakuman, fu_counts=fu_counts)


def yaku_pages(yaku: Sequence[str]) -> list[str]:
    """The yaku cut into display lines (each name is at most one line), key 0 pages."""
    pages: list[str] = []
    for name in yaku:
        if pages and len(pages[-1]) + 2 + len(name) <= LINE:
            pages[-1] += ", " + name
        else:
            pages.append(fit(name))
    return pages or [""]


class WinScoring:
    """What a win is worth by the tiles, and how ``OK?`` shows it (see the module doc)."""

    def __init__(self, core: TableCore) -> None:
        self.core = core

    def win_score(
        self, seat: int, *, tsumo: bool, discarder: int | None, state: GameState | None = None
    ) -> HandScore | tuple[str, str]:
        """What ``seat``'s win is worth by the tiles, or why it is no win (a short head
        and detail for the two display lines)."""
        from tablectl.rules.tilescoring import score_win

        state = self.core.state if state is None else state
        tiles = state.tiles
        assert tiles is not None
        st = tiles.seats[seat]
        if tsumo:
            if not checks.is_complete(self.core.rules, st.concealed):
                return "not a win", "hand not complete"
        else:
            tile = checks.ron_tile(state, -1 if discarder is None else discarder)
            if tile is None:
                return "not a win", "nothing to ron"
            name = KIND_NAMES[kind(tile)]
            if not checks.is_complete(self.core.rules, (*st.concealed, tile)):
                return "not a win", f"{name} is no wait"
            reason = checks.furiten(self.core.rules, tiles, seat, tile)
            if reason is not None:
                for pattern, said in _FURITEN:
                    found = pattern.search(reason)
                    if found:
                        return f"furiten: {found.group(1)}", said
                return "furiten", ""
        ctx = checks.win_context(self.core.rules, state, seat, tsumo, discarder)
        score = score_win(self.core.rules, ctx)
        if isinstance(score, Refusal):
            detail = {
                "no_yaku": "dora are no yaku",
                "atozuke": "no atozuke here",
                "not_complete": "hand not complete",
            }.get(score.code, score.code)
            head = "no yaku" if score.code in ("no_yaku", "atozuke") else "not a win"
            return head, detail
        return score

    def kantan_discarders(
        self, seat: int, state: GameState | None = None
    ) -> list[int] | tuple[str, str]:
        """Kantan: every other seat whose last discard ``seat`` wins on by the tiles, in
        turn order after it (ロン牌が複数ある場合は全員からあがれる: the tiles name them all,
        and the winner never gains by leaving one out), or why none is a win: the reason a
        completing tile gave (no yaku), else that none completes the hand."""
        state = self.core.state if state is None else state
        wall = state.wall
        found: list[int] = []
        why = ("not a win", "no last discard wins")
        for step_ in range(1, self.core.players):
            discarder = (seat + step_) % self.core.players
            if wall is None or not wall.discards[discarder]:
                continue
            score = self.win_score(seat, tsumo=False, discarder=discarder, state=state)
            if isinstance(score, tuple):
                why = why if score[0] == "not a win" else score
                continue
            found.append(discarder)
        return found or why

    def refuse_win(self, seat: int, why: tuple[str, str]) -> None:
        """A win the tiles do not make, on both display lines (``! furiten: 3p`` / ``in
        your discards``); nothing changes."""
        head, detail = why
        self.core.consoles[seat].message = fit(f"! {head}") + "\n" + fit(detail)
        log.info("[%s] seat %d's win refused: %s %s", self.core.table_id, seat, head, detail)
        self.core.post_command(m.BuzzerCommand(pattern=m.BuzzerPattern.BEEP, duration_ms=100))

    def scored_entry(
        self, seat: int, score: HandScore, *, tsumo: bool, discarder: int | None = None
    ) -> WinEntry:
        """The win entry of a scored hand: its han, fu or yakuman, its points as the rules
        core pays them (without honba and deposits), its yaku, and where the preset pays
        chips those the tiles show, for the winner to see at ``OK?`` (the hand carries
        none: the rules core counts them from the same tiles)."""
        from tablectl.rules.tilescoring import to_hand

        hand = to_hand(score, seat)
        value = hand_value(
            self.core.rules, han=hand.han, fu=hand.fu, yakuman=hand.yakuman, tsumo=tsumo
        )
        points = 0
        if not isinstance(value, Refusal):
            dealer = self.core.state.dealer
            if tsumo:
                points = sum(tsumo_payments(self.core.rules, value, winner=seat, dealer=dealer))
            else:
                points = ron_points(self.core.rules, value, dealer=seat == dealer)
        chips = None
        if self.core.rules.money.hand_chips:
            found = tiletrack.chip_tiles(self.core.state, seat, None if tsumo else discarder)
            chips = None if found is None else found.chips(self.core.rules)
        return WinEntry(
            seat=seat,
            han=hand.han,
            fu=hand.fu,
            yakuman=hand.yakuman,
            counted_chips=chips,
            scored=True,
            points=points,
            yaku=list(score.yaku),
        )

    def scored(
        self, seat: int, *, tsumo: bool, discarders: tuple[int, ...]
    ) -> WinEntry | tuple[str, str]:
        """``seat``'s win entry as the tiles score it, or why it is no win. Kantan's ron
        off several discarders is scored once per discarder, on that discarder's tile
        (each pays its own value: docs/rules.md, "Several winners")."""
        if tsumo or len(discarders) < 2:
            discarder = discarders[0] if discarders else None
            score = self.win_score(seat, tsumo=tsumo, discarder=discarder)
            if isinstance(score, tuple):
                return score
            return self.scored_entry(seat, score, tsumo=tsumo, discarder=discarder)
        entries: list[WinEntry] = []
        for discarder in discarders:
            score = self.win_score(seat, tsumo=False, discarder=discarder)
            if isinstance(score, tuple):
                return score
            entries.append(self.scored_entry(seat, score, tsumo=False))
        each = [
            RonValue(d, e.han, e.fu, e.yakuman, e.points, e.yaku)
            for d, e in zip(discarders, entries, strict=True)
        ]
        # The first discarder's value stands for the entry; the winner gets the sum.
        return replace(entries[0], points=sum(v.points for v in each), each=each)

    def score_lines(self, seat: int) -> tuple[str, str]:
        """The two lines of a seat at ``OK?``."""
        console = self.core.consoles[seat]
        entry = self.core.entry(seat)
        if entry is None:
            return "OK?", fit(console.message)
        line1 = score_line(entry, fu_counts=self.core.rules.scoring.table == "standard")
        if console.message:
            return line1, fit(console.message)
        pages = self.score_pages(entry)
        return line1, pages[(console.choice or 0) % len(pages)]

    def score_pages(self, entry: WinEntry) -> list[str]:
        """Line 2 at ``OK?``, paged with 0: the chips the tiles counted (``CHIPS +3``,
        where the entry has them) and the yaku; for kantan's ron off several
        discarders each one's wind and value (``S: 3 HAN 6000``) before its yaku."""
        if not entry.each:
            # The chips the tiles counted, first: the winner agrees to them with the value.
            counted = entry.chips if entry.chips is not None else entry.counted_chips
            chips = [] if counted is None else [f"CHIPS {counted:+d}"]
            return yaku_pages([*chips, *entry.yaku])
        fu_counts = self.core.rules.scoring.table == "standard"
        pages: list[str] = []
        for v in entry.each:
            wind = "ESWN"[(v.discarder - self.core.state.dealer) % self.core.players]
            value = value_text(v.han, v.fu, v.yakuman, fu_counts=fu_counts)
            pages += [fit(f"{wind}: {value} {v.points}"), *yaku_pages(v.yaku)]
        return pages

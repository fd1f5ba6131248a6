"""What the table's displays and lamps show, rendered from the core and the flows, and
sent only where it changed (a key press usually changes one display of nine).
"""

from __future__ import annotations

from typing import Any

from firmware_bridge import messages as m
from tablectl.console.core import TableCore
from tablectl.console.faults import FaultFlow
from tablectl.console.layouts import WallLayouts
from tablectl.console.model import fit, signed
from tablectl.console.prompts import Prompt
from tablectl.console.trays import Trays
from tablectl.console.wins import WinScoring, has_chips
from tablectl.rules.conditions import tsumo_split
from tablectl.rules.ending import ranking

#: A display or lamp slot: the message class's name and its seat (0 for the centre).
_Slot = tuple[str, int]


class Displays:
    """Renders every seat display, the lamps and the centre display, memoised on what
    each is made from, and sends what changed (:meth:`refresh`)."""

    def __init__(
        self,
        core: TableCore,
        *,
        wins: WinScoring,
        layouts: WallLayouts,
        faults: FaultFlow,
        trays: Trays,
    ) -> None:
        self.core = core
        self.wins = wins
        self.layouts = layouts
        self.faults = faults
        self.trays = trays
        #: What each display and lamp slot was last sent (its field values).
        self.sent: dict[tuple[str, int], dict[str, Any]] = {}
        #: Per seat: the state and console inputs its display fields were made from.
        self._seat_memo: dict[int, tuple[Any, tuple[Any, ...], dict[str, Any]]] = {}
        #: The centre display's fields and the (state fields, dora, clock) they came from.
        self._centre_memo: tuple[dict[str, Any], tuple[int, ...], int | None, dict[str, Any]] | None
        self._centre_memo = None
        #: The lamps and centre fields (without the clock) made from one state.
        self._state_memo: tuple[Any, list[dict[str, Any]], dict[str, Any]] = (None, [], {})

    def seat_lines(self, seat: int) -> tuple[str, str]:
        """The two display lines of ``seat``."""
        console = self.core.consoles[seat]
        state = self.core.state
        if self.faults.faults:
            return "FAULT", self.faults.text
        if "\n" in console.message and not console.prompt:
            # A refused win says why on both lines (``! furiten: 3p`` / ``in your discards``).
            head, _, detail = console.message.partition("\n")
            return fit(head), fit(detail)
        if console.prompt == Prompt.SCORE:
            return self.wins.score_lines(seat)
        if console.prompt:
            typed = "*" * len(console.typed) if console.prompt == Prompt.PIN else console.typed
            settling = console.prompt in (Prompt.CONFIRM, Prompt.GAME_OVER)
            if seat in self.trays.mismatch and (not typed or settling):
                # Sticks move while CONFIRM shows: the mismatch must stay in sight (over
                # a winner's value, which is only there to be read).
                typed = f"!TRAY {self.trays.mismatch[seat]}"
            line1 = f"{console.prompt} {typed}".rstrip()
            return fit(line1), fit(console.message.replace("\n", " "))
        wind = "ESWN"[(seat - state.dealer) % self.core.players]
        # After the game the final scores (leftover deposits, adjustments) are what count.
        score = state.final.scores[seat] if state.final is not None else state.scores[seat]
        message = console.message
        if seat in self.trays.mismatch:
            message = f"! TRAY {self.trays.mismatch[seat]}"
        if console.page == 1:
            # Each other seat by its wind: E+8000 on line 1 after the title, the rest below.
            others = [
                f"{'ESWN'[(o - state.dealer) % self.core.players]}{signed(score - state.scores[o])}"
                for o in range(self.core.players)
                if o != seat
            ]
            return fit(f"{wind} DIFF {others[0]}"), fit(" ".join(others[1:]))
        if console.page == 2:
            order = sorted(range(self.core.players), key=lambda s: (-state.scores[s], s))
            return fit(f"{wind} RANK {order.index(seat) + 1}/{self.core.players}"), fit(str(score))
        if console.page == 3 and self.core.conditions() is not None:
            return self.condition_lines(seat)  # once the game is over: the score page
        tag = " LAST" if console.last_game else ""
        clock = self.core.clock_text()
        if not message and clock is not None:
            message = f"TIME {clock}"  # the game clock, where the preset has one
        elif not message and state.final is not None and state.final.money is not None:
            # The game is over: its rank and P are what the seat takes away.
            rank = state.final.ranking.index(seat) + 1
            message = f"#{rank} {state.final.money.total[seat]:+d}P"
        elif not message and has_chips(self.core.rules.money) and state.chips:
            message = f"CHIPS {state.chips[seat]:+d}"  # the seat's net chips so far
        return fit(f"{wind} {score}{tag}"), fit(message)

    def condition_lines(self, seat: int) -> tuple[str, str]:
        """The conditions page: the best place ``seat`` can reach, by ron off a third
        seat (R) and off the seat it must pass (D), then by tsumo, as parlors say them
        (``1ST R 8000 D 3900`` / ``TSUMO 1000-2000``); ``SAFE`` for the leader, ``NO WAY``
        when no hand moves the seat up."""
        found = self.core.conditions() or {}
        if str(seat) not in found:
            return "SAFE", "TOP NOW"
        places = found[str(seat)]
        if not places:
            return "NO WAY", "NO HAND MOVES UP"
        place = min(places, key=int)
        need = places[place]
        order = ranking(self.core.state.scores)
        target = str(order[int(place) - 1])
        others = [v for d, v in need["ron"].items() if d != target]
        third = "-" if not others or None in others else str(max(others))
        direct = need["ron"].get(target)
        label = {"1": "1ST", "2": "2ND", "3": "3RD"}[place]
        line1 = f"{label} R {third} D {'-' if direct is None else direct}"
        tsumo = need["tsumo"]
        split = "-" if tsumo is None else tsumo_split(self.core.state, seat, tsumo)
        return fit(line1), fit(f"TSUMO {split}")

    def _seat_fields(
        self, seat: int, clock: int | None, fault: str | None, state: Any
    ) -> dict[str, Any]:
        """A seat display's fields, remade only when what :meth:`seat_lines` reads changed
        (a key press usually changes one seat's console and nothing else); ``clock``,
        ``fault`` (its text while one stands) and ``state`` are read once per refresh."""
        console = self.core.consoles[seat]
        inputs = (
            console.prompt,
            console.typed,
            console.message,
            console.page,
            console.choice,
            console.last_game,
            fault,
            self.trays.mismatch.get(seat),
            clock,
        )
        memo = self._seat_memo.get(seat)
        if memo is not None and memo[0] is state and memo[1] == inputs:
            return memo[2]
        line1, line2 = self.seat_lines(seat)
        fields = {"seat": seat, "line1": line1, "line2": line2}
        self._seat_memo[seat] = (state, inputs, fields)
        return fields

    def _state_fields(self) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        """The lamps and the centre display (clock left out), remade on a new state."""
        state = self.core.state
        if self._state_memo[0] is state:
            return self._state_memo[1], self._state_memo[2]
        lamps = [
            {
                "seat": seat,
                "dealer": seat == state.dealer,
                "riichi": seat in state.riichi or seat == state.pending_riichi,
            }
            for seat in range(self.core.players)
        ]
        wall = state.wall
        centre = {
            "round_wind": m.Wind(state.round_index % 4),
            "round_number": state.dealer + 1,
            "honba": min(state.honba, 255),
            "deposits": min(state.kyoutaku // 1000, 255),
            "tiles_left": min(wall.live_left, 136) if wall is not None else 0,
        }
        self._state_memo = (state, lamps, centre)
        return lamps, centre

    def _centre_fields(self, centre: dict[str, Any], clock: int | None) -> dict[str, Any]:
        """The centre display's fields: ``centre`` from :meth:`_state_fields` with the dora
        and the clock, remade only when one of the three changed."""
        dora = self.layouts.dora_tiles()
        memo = self._centre_memo
        if memo is not None and memo[0] is centre and memo[1] == dora and memo[2] == clock:
            return memo[3]
        fields = {**centre, "dora": dora, "clock": clock}
        self._centre_memo = (centre, dora, clock, fields)
        return fields

    def _display_fields(self) -> list[tuple[_Slot, type[m.Message], dict[str, Any]]]:
        """Every display and lamp command describing the table now: its slot, its class
        and its field values (cheap to compare; building the message validates every
        field). Unchanged fields are the very dicts made last time (memoised)."""
        out: list[tuple[_Slot, type[m.Message], dict[str, Any]]] = []
        lamps, centre = self._state_fields()
        core = self.core
        clock = core.clock_seconds()
        fault = self.faults.text if self.faults.faults else None
        state = core.state
        for seat in range(core.players):
            fields = self._seat_fields(seat, clock, fault, state)
            out.append((("SeatDisplay", seat), m.SeatDisplay, fields))
            out.append((("SeatLamps", seat), m.SeatLamps, lamps[seat]))
        out.append((("CentreDisplay", 0), m.CentreDisplay, self._centre_fields(centre, clock)))
        return out

    def refresh(self, force: bool = False) -> None:
        """Send the display and lamp commands that changed since they were last sent.

        Called after every table event; only the changed ones are built as messages (a key
        press usually changes one display of nine)."""
        phase = self.core.phase
        if not phase.startswith("table_") and phase != "fault":
            return
        sent = self.sent
        for slot, cls, fields in self._display_fields():
            last = sent.get(slot)
            # The memoised dict itself: nothing changed (the dicts are never mutated).
            if last is fields and not force:
                continue
            if force or last != fields:
                sent[slot] = fields
                self.core.post_command(cls(**fields))

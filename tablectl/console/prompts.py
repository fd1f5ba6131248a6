"""The seat console flows as data: every prompt, the keys it takes, where it may be,
and what handles it.

Every prompt is a :class:`Prompt` (its value is what the display shows and what the
stored flow keeps), and its :class:`PromptSpec` in :data:`PROMPTS` declares

* ``keys``: the keys the prompt takes, each with what it does (a key not listed is
  refused on that seat's display with the list, and a beep; nothing changes);
* ``phases``: the table phases in which the prompt may stand. A prompt is opened only in
  one of them, and a phase change clears every prompt that does not belong to the new
  phase, so a handler never runs in a phase it was not written for;
* ``fires``: the phase-machine triggers its handler may fire. A test checks that each
  of them is a transition of the machine from every phase in ``phases``, which makes a
  ``MachineError`` from a key impossible by construction.
* ``goes_to``: the prompts it may lead to on the same seat (the flow diagrams in
  docs/console.md are drawn from these);
* ``handler``: the method of the flow that owns the prompt, called with each key the
  prompt takes (:class:`tablectl.console.keys.KeyRouter`).

:func:`idle_spec` does the same for a seat with no prompt. ``tablectl diagram --consoles``
draws the flows from this module.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Protocol

from firmware_bridge.messages import Key
from tablectl.phases import HAND_PHASES, PLAYING, TABLE_PHASES

__all__ = ["HAND_PHASES", "PLAYING", "PROMPTS", "TABLE_PHASES", "Prompt", "PromptSpec"]

K = Key
DIGITS = tuple(Key(d) for d in range(10))


class Prompt(StrEnum):
    """Every prompt a seat console shows, by the text on its display (the stored form)."""

    ROLL = "ROLL?"
    RON = "RON?"
    FROM = "FROM?"
    HAN = "HAN?"
    FU = "FU?"
    PAO = "PAO?"
    CHIPS = "CHIPS?"
    SCORE = "OK?"
    KAN = "KAN?"
    PLACE_MELD = "PLACE MELD"
    ABORT = "ABORT?"
    TENPAI = "TENPAI?"
    STOP = "STOP?"
    CONFIRM = "CONFIRM"
    GAME_OVER = "GAME OVER"
    STAFF = "STAFF?"
    PIN = "PIN?"
    SEAT = "SEAT?"
    RULES = "RULES?"
    MEMBER = "MEMBER?"


# What the handlers declared below are called on: the flows, as the handlers they answer
# with. Protocols rather than the flow classes, because every flow imports this module:
# the declarations sit below the flows, and mypy checks that the table's
# tablectl.console.flows.Flows has each handler (tablectl.console.keys calls them on it).


class _ConfirmHandlers(Protocol):
    async def roll_prompt(self, seat: int, key: Key) -> None: ...
    async def confirm_prompt(self, seat: int, key: Key) -> None: ...
    async def stop_prompt(self, seat: int, key: Key) -> None: ...


class _ClaimHandlers(Protocol):
    async def ron_prompt(self, seat: int, key: Key) -> None: ...
    async def from_prompt(self, seat: int, key: Key) -> None: ...
    async def kan_prompt(self, seat: int, key: Key) -> None: ...


class _EntryHandlers(Protocol):
    async def han_prompt(self, seat: int, key: Key) -> None: ...
    async def fu_prompt(self, seat: int, key: Key) -> None: ...
    async def pao_prompt(self, seat: int, key: Key) -> None: ...
    async def chips_prompt(self, seat: int, key: Key) -> None: ...
    async def score_prompt(self, seat: int, key: Key) -> None: ...


class _DrawHandlers(Protocol):
    async def abort_prompt(self, seat: int, key: Key) -> None: ...
    async def tenpai_prompt(self, seat: int, key: Key) -> None: ...


class _TileHandlers(Protocol):
    async def meld_prompt(self, seat: int, key: Key) -> None: ...


class _StaffHandlers(Protocol):
    async def staff_prompt(self, seat: int, key: Key) -> None: ...
    async def pin_prompt(self, seat: int, key: Key) -> None: ...
    async def seat_prompt(self, seat: int, key: Key) -> None: ...
    async def rules_prompt(self, seat: int, key: Key) -> None: ...
    async def member_prompt(self, seat: int, key: Key) -> None: ...


class FlowHandlers(Protocol):
    """The flows a prompt's handler is called on, by the handlers they answer with."""

    @property
    def confirm(self) -> _ConfirmHandlers: ...
    @property
    def claim(self) -> _ClaimHandlers: ...
    @property
    def entry(self) -> _EntryHandlers: ...
    @property
    def draw(self) -> _DrawHandlers: ...
    @property
    def tiles(self) -> _TileHandlers: ...
    @property
    def staff(self) -> _StaffHandlers: ...


#: What a key at a prompt runs: the owning flow's handler, reached through the flows.
Handler = Callable[[FlowHandlers, int, Key], Awaitable[None]]


@dataclass(frozen=True)
class PromptSpec:
    """One prompt of a seat console flow (see the module docstring)."""

    name: Prompt
    flow: str
    says: str
    keys: dict[Key, str]
    phases: frozenset[str]
    handler: Handler
    fires: frozenset[str] = frozenset()
    goes_to: tuple[Prompt, ...] = ()
    digits: str = ""

    def accepts(self, key: Key) -> bool:
        """Whether ``key`` does something at this prompt."""
        return key in self.keys

    def refusal(self) -> str:
        """What a refused key shows after ``! `` (the keys that would do something)."""
        keys = self.key_help()
        return f"keys: {keys}" if len(keys) <= 12 else keys

    def key_help(self) -> str:
        """The accepted keys, short enough for a display line (``! keys: OK CANCEL``)."""
        names = [self.digits] if self.digits else []
        names += [_key_label(k) for k in self.keys if k not in DIGITS]
        return " ".join(names)


def _key_label(key: Key) -> str:
    if key in DIGITS:
        return str(int(key))
    return {Key.STAFF_CALL: "STAFF", Key.LAST_GAME: "LAST"}.get(key, key.name)


def _digits(what: str, lo: int = 0, hi: int = 9) -> dict[Key, str]:
    return {Key(d): what for d in range(lo, hi + 1)}


STAFF_MENU: dict[int, str] = {
    0: "call staff",
    1: "chombo",
    2: "false call",
    3: "correct the last hand",
    4: "end this game / new game",
    5: "trays: play on",
    6: "seat a member here",
}
#: Staff menu entries that need the staff PIN (0, calling staff, is open to everyone).
STAFF_ONLY = frozenset({1, 2, 3, 4, 5, 6})
#: The staff menu's prompts: STAFF CALL opens STAFF? over any other prompt.
STAFF_PROMPTS = frozenset({Prompt.STAFF, Prompt.PIN, Prompt.SEAT, Prompt.RULES, Prompt.MEMBER})

PROMPTS: dict[Prompt, PromptSpec] = {
    spec.name: spec
    for spec in (
        PromptSpec(
            Prompt.ROLL,
            "hand start",
            "(dealer) roll the dice",
            {K.OK: "roll the dice"},
            frozenset({"table_walls_up"}),
            fires=frozenset({"roll"}),
            handler=lambda f, seat, key: f.confirm.roll_prompt(seat, key),
        ),
        PromptSpec(
            Prompt.RON,
            "claim window",
            "another seat declared ron on this discard, or (tiles read) the last discard is"
            " out: ron it (kantan: any of the others' 18th discards)",
            {K.RON: "join the ron", K.CANCEL: "pass"},
            PLAYING,
            fires=frozenset({"claim_closed", "enter_result", "hand_over"}),
            goes_to=(Prompt.HAN, Prompt.SCORE),
            handler=lambda f, seat, key: f.claim.ron_prompt(seat, key),
        ),
        PromptSpec(
            Prompt.FROM,
            "claim window",
            "name the discarder(s)",
            {**_digits("toggle that seat"), K.OK: "done", K.CANCEL: "leave"},
            PLAYING,
            fires=frozenset({"enter_result"}),
            goes_to=(Prompt.HAN, Prompt.PLACE_MELD),
            digits="seat",
            handler=lambda f, seat, key: f.claim.from_prompt(seat, key),
        ),
        PromptSpec(
            Prompt.HAN,
            "win entry",
            "enter the han",
            {
                **_digits("type a digit"),
                K.MENU: "yakuman x1, x2, ...",
                K.OK: "done",
                K.CANCEL: "clear, or leave the entry",
            },
            frozenset({"table_result_entry"}),
            fires=frozenset({"hand_over", "entry_cancelled"}),
            goes_to=(Prompt.FU, Prompt.PAO, Prompt.CHIPS),
            digits="0-9",
            handler=lambda f, seat, key: f.entry.han_prompt(seat, key),
        ),
        PromptSpec(
            Prompt.FU,
            "win entry",
            "enter the fu",
            {**_digits("type a digit"), K.OK: "done", K.CANCEL: "back to HAN?"},
            frozenset({"table_result_entry"}),
            fires=frozenset({"hand_over"}),
            goes_to=(Prompt.HAN, Prompt.CHIPS),
            digits="0-9",
            handler=lambda f, seat, key: f.entry.fu_prompt(seat, key),
        ),
        PromptSpec(
            Prompt.PAO,
            "win entry",
            "name the responsible seat, or none",
            {**_digits("that seat pays"), K.OK: "done", K.CANCEL: "back to HAN?"},
            frozenset({"table_result_entry"}),
            fires=frozenset({"hand_over"}),
            goes_to=(Prompt.HAN, Prompt.CHIPS),
            digits="seat",
            handler=lambda f, seat, key: f.entry.pao_prompt(seat, key),
        ),
        PromptSpec(
            Prompt.CHIPS,
            "win entry",
            "(a preset with chips) the chips the hand earns besides the yakuman chips",
            {
                **_digits("type a digit"),
                K.OK: "done (nothing typed: none)",
                K.CANCEL: "clear, or back to HAN?",
            },
            frozenset({"table_result_entry"}),
            fires=frozenset({"hand_over"}),
            goes_to=(Prompt.HAN,),
            digits="0-9",
            handler=lambda f, seat, key: f.entry.chips_prompt(seat, key),
        ),
        PromptSpec(
            Prompt.SCORE,
            "win entry",
            "(tiles read) the win as the tiles score it: han, fu, points; line 2 the yaku",
            {K.OK: "agree", K.CANCEL: "take the win back", K.DIGIT_0: "next yaku"},
            frozenset({"table_result_entry"}),
            fires=frozenset({"hand_over", "entry_cancelled"}),
            goes_to=(Prompt.PAO,),
            handler=lambda f, seat, key: f.entry.score_prompt(seat, key),
        ),
        PromptSpec(
            Prompt.KAN,
            "kan",
            "1 closed, 2 added, 3 north",
            {
                K.DIGIT_1: "closed kan",
                K.DIGIT_2: "added kan",
                K.DIGIT_3: "north",
                K.CANCEL: "leave",
            },
            PLAYING,
            goes_to=(Prompt.PLACE_MELD,),
            digits="1-3",
            handler=lambda f, seat, key: f.claim.kan_prompt(seat, key),
        ),
        PromptSpec(
            Prompt.PLACE_MELD,
            "kan",
            "(tiles read) lay the meld in the meld zone: the call is made when it shows",
            {K.CANCEL: "withdraw the call"},
            PLAYING,
            handler=lambda f, seat, key: f.tiles.meld_prompt(seat, key),
        ),
        PromptSpec(
            Prompt.ABORT,
            "abortive draw",
            "1 nine terminals, 2 four winds, 3 four riichi, 4 four kans",
            {**_digits("choose", 1, 4), K.OK: "declare", K.CANCEL: "leave"},
            frozenset({"table_dealing", *PLAYING}),
            fires=frozenset({"hand_over"}),
            digits="1-4",
            handler=lambda f, seat, key: f.draw.abort_prompt(seat, key),
        ),
        PromptSpec(
            Prompt.TENPAI,
            "exhaustive draw",
            "declare tenpai or noten",
            {K.TENPAI: "tenpai", K.NOTEN: "noten", K.MENU: "nagashi"},
            frozenset({"table_result_entry"}),
            fires=frozenset({"hand_over"}),
            handler=lambda f, seat, key: f.draw.tenpai_prompt(seat, key),
        ),
        PromptSpec(
            Prompt.STOP,
            "all-last stop",
            "(all-last dealer) end the game now",
            {K.OK: "end the game", K.CANCEL: "play on"},
            frozenset({"table_settlement"}),
            fires=frozenset({"game_ended", "next_hand", "new_game", "shuffle"}),
            goes_to=(Prompt.CONFIRM, Prompt.GAME_OVER),
            handler=lambda f, seat, key: f.confirm.stop_prompt(seat, key),
        ),
        PromptSpec(
            Prompt.CONFIRM,
            "confirm",
            "what this seat pays or receives",
            {K.OK: "agree", K.CANCEL: "wrong: enter the hand again"},
            frozenset({"table_settlement"}),
            fires=frozenset({"next_hand", "shuffle", "reopen", "resume_play"}),
            goes_to=(Prompt.HAN, Prompt.SCORE, Prompt.TENPAI),
            handler=lambda f, seat, key: f.confirm.confirm_prompt(seat, key),
        ),
        PromptSpec(
            Prompt.GAME_OVER,
            "confirm",
            "the final score and rank",
            {K.OK: "agree (a new game when all have)", K.CANCEL: "wrong: enter the hand again"},
            frozenset({"table_settlement", "table_game_over"}),
            fires=frozenset({"game_ended", "new_game", "shuffle", "reopen", "resume_play"}),
            goes_to=(Prompt.HAN, Prompt.SCORE, Prompt.TENPAI),
            handler=lambda f, seat, key: f.confirm.confirm_prompt(seat, key),
        ),
        PromptSpec(
            Prompt.STAFF,
            "staff",
            "0 call staff, 1 chombo, 2 false call, 3 correct, 4 new game, 5 trays, 6 seat a member",
            {**_digits("choose", 0, 6), K.CANCEL: "leave"},
            TABLE_PHASES,
            goes_to=(Prompt.PIN,),
            digits="0-6",
            handler=lambda f, seat, key: f.staff.staff_prompt(seat, key),
        ),
        PromptSpec(
            Prompt.PIN,
            "staff",
            "the staff PIN",
            {**_digits("type a digit"), K.OK: "check", K.CANCEL: "leave"},
            TABLE_PHASES,
            fires=frozenset({"reopen", "resume_play", "shuffle", "new_game", "abandon"}),
            goes_to=(
                Prompt.SEAT,
                Prompt.RULES,
                Prompt.MEMBER,
                Prompt.HAN,
                Prompt.SCORE,
                Prompt.TENPAI,
            ),
            digits="0-9",
            handler=lambda f, seat, key: f.staff.pin_prompt(seat, key),
        ),
        PromptSpec(
            Prompt.SEAT,
            "staff",
            "the seat the penalty is for",
            {**_digits("that seat"), K.OK: "apply", K.CANCEL: "leave"},
            HAND_PHASES,
            fires=frozenset({"hand_over"}),
            digits="seat",
            handler=lambda f, seat, key: f.staff.seat_prompt(seat, key),
        ),
        PromptSpec(
            Prompt.RULES,
            "staff",
            "the rules of the new game",
            {**_digits("choose"), K.MENU: "next rules", K.OK: "start", K.CANCEL: "leave"},
            TABLE_PHASES,
            fires=frozenset({"abandon", "shuffle"}),
            digits="0-9",
            handler=lambda f, seat, key: f.staff.rules_prompt(seat, key),
        ),
        PromptSpec(
            Prompt.MEMBER,
            "staff",
            "between games: the member number of the player for this seat",
            {**_digits("type a digit"), K.OK: "seat the member", K.CANCEL: "leave"},
            TABLE_PHASES,
            digits="0-9",
            handler=lambda f, seat, key: f.staff.member_prompt(seat, key),
        ),
    )
}

#: What a seat with no prompt may press, by phase (the keys of a hand in play on top of
#: what every phase takes).
ANY_PHASE_KEYS: dict[Key, str] = {
    K.DIGIT_0: "next page: score, differences, rank",
    K.LAST_GAME: "mark this game as my last (again: unmark)",
    K.STAFF_CALL: "staff menu",
}
PLAY_KEYS: dict[Key, str] = {
    K.RIICHI: "declare riichi",
    K.TSUMO: "win by self-draw",
    K.RON: "win on a discard",
    K.PON: "pon",
    K.CHI: "chi",
    K.KAN: "kan (own turn: KAN? menu)",
    K.TENPAI: "exhaustive draw: tenpai",
    K.NOTEN: "exhaustive draw: noten",
    K.MENU: "abortive draw menu",
}


#: How a seat with no prompt gets to a prompt: (key, the prompt it opens, when).
OPENED_BY: tuple[tuple[str, str, str], ...] = (
    ("STAFF", "STAFF?", "any phase, over any other prompt"),
    ("MENU", "ABORT?", "dealing, playing"),
    ("RON", "RON?", "other seats, after a discard"),
    ("RON", "FROM?", "kantan keyed, or no take sensors"),
    ("RON", "OK?", "kantan, own turn, tiles read"),
    ("PON CHI KAN", "FROM?", "kantan, or no take sensors"),
    ("KAN", "KAN?", "own turn"),
    ("TSUMO", "HAN?", "own turn"),
    ("TSUMO", "OK?", "own turn, tiles read"),
    ("PON CHI KAN", "PLACE MELD", "tiles read, the meld not shown yet"),
    ("TENPAI NOTEN", "TENPAI?", "after the last discard"),
    ("(walls up)", "ROLL?", "dealer"),
    ("(hand settled)", "CONFIRM", "every seat"),
    ("(game over)", "GAME OVER", "every seat"),
    ("(all-last choice)", "STOP?", "dealer"),
)


@dataclass(frozen=True)
class IdleSpec:
    """What a seat with no prompt takes in one phase."""

    phase: str
    keys: dict[Key, str] = field(default_factory=dict)
    fires: frozenset[str] = frozenset()


def idle_spec(phase: str) -> IdleSpec:
    """The keys a seat with no prompt takes in ``phase``."""
    keys = dict(ANY_PHASE_KEYS)
    fires: frozenset[str] = frozenset()
    if phase in PLAYING:
        keys.update(PLAY_KEYS)
        fires = frozenset({"claim_closed", "enter_result"})
        if phase == "table_playing_turn":
            fires |= {"claim_opened"}
    elif phase == "table_dealing":
        keys[K.MENU] = PLAY_KEYS[K.MENU]
    return IdleSpec(phase, keys, fires)

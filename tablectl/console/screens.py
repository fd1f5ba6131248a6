"""Which screen a key was pressed on: a key answers the prompt its player saw.

A table sends a key the moment it is pressed, and the daemon may have changed that
seat's display meanwhile: a fault raised over the prompt or cleared from it, the
settlement after another seat's answer, a reconnect. Taken as an answer to the display
the seat shows *now*, such a key does what its player never asked: an OK that
acknowledged a FAULT confirmed the GAME OVER that came back under it, and the table
started a new game (issue 29, the tile soak's sanma-free seed 237).

Every frame from the table carries its ack of the daemon's commands
(:attr:`firmware_bridge.Delivery.peer_acked`), so the daemon knows which of the seat
displays it sent the table had when the key was sent. :class:`ShownScreens` keeps the
recent ones; a key sent while the table showed another screen than the seat shows now,
changed by something else than that seat's own keys, is dropped with a refusal
(docs/console.md, "A key pressed on another screen").
"""

from __future__ import annotations

import collections
import dataclasses

from tablectl.console.prompts import Prompt

#: Prompts by length, longest first: the first that starts a line is the line's.
_PROMPTS = sorted((p.value for p in Prompt), key=len, reverse=True)
#: Displays kept per seat until the table acked a newer one (a seat that presses nothing
#: for this many display changes has had them all long ago).
KEPT = 64


def screen_of(line1: str) -> str:
    """The screen a seat display's first line shows: ``FAULT``, the prompt (``GAME
    OVER``, ``HAN?`` with or without digits typed, ``OK?`` after a scored win's value),
    or "" for the seat's own pages (its score, the differences, the conditions), where
    no prompt stands."""
    if line1 == "FAULT":
        return line1
    for prompt in _PROMPTS:
        if line1 == prompt or line1.startswith(prompt + " "):
            return prompt
    if line1.endswith(" " + Prompt.SCORE):
        return Prompt.SCORE.value
    return ""


@dataclasses.dataclass(slots=True)
class _Shown:
    """A seat display the daemon made: its screen, its command's ordinal in the link
    session (None while it waits to go out), and whether that seat's own key made it."""

    screen: str
    own: bool
    ordinal: int | None = None


class ShownScreens:
    """The screens the daemon sent each seat, by the link session and the ordinal of the
    display command in it (:attr:`firmware_bridge.Link.posted_count`), until the table
    acked a newer one for that seat; and which of them the seat's own keys made.

    A key is **stale** when the screen it was pressed on is not the one its seat shows
    now and something other than that seat's own keys changed the screen since (another
    seat, a table event, a fault, staff). Keys typed ahead on the seat's own way through
    its prompts (``STAFF`` then ``0`` before ``STAFF?`` reached the table) are not."""

    def __init__(self) -> None:
        self._session: int | None = None
        self._shown: dict[int, collections.deque[_Shown]] = {}

    def _in(self, session: int) -> None:
        """A new session starts from what each seat showed last: a table that lost the
        link keeps its displays, and keys pressed on them come again in the new session
        before the daemon's displays do (ordinal 0: the table had it from the start)."""
        if session == self._session:
            return
        self._session = session
        for seat, shown in self._shown.items():
            sent = [s for s in shown if s.ordinal is not None]
            waiting = [s for s in shown if s.ordinal is None]
            base = [_Shown(sent[-1].screen, True, 0)] if sent else []
            self._shown[seat] = collections.deque([*base, *waiting], maxlen=KEPT)

    def made(self, seat: int, line1: str, *, own: bool) -> None:
        """The daemon made a display for ``seat`` (``own``: handling a key of that seat);
        it goes out next (:meth:`posted`) or never (:meth:`unsent`)."""
        shown = self._shown.setdefault(seat, collections.deque(maxlen=KEPT))
        shown.append(_Shown(screen_of(line1), own))

    def _waiting(self, seat: int) -> _Shown | None:
        return next((s for s in self._shown.get(seat, ()) if s.ordinal is None), None)

    def posted(self, seat: int, session: int, ordinal: int) -> None:
        """The oldest display made for ``seat`` and not sent went out, the ``ordinal``-th
        command of ``session``."""
        self._in(session)
        shown = self._waiting(seat)
        if shown is not None:
            shown.ordinal = ordinal

    def unsent(self, seat: int) -> None:
        """The oldest display made for ``seat`` never went out (the link was down)."""
        shown = self._waiting(seat)
        if shown is not None:
            self._shown[seat].remove(shown)

    def stale(self, seat: int, session: int, acked: int) -> tuple[str, str] | None:
        """The screen ``seat`` showed when the table sent a key with ``acked`` commands of
        ``session`` acknowledged, and the one it shows now, if the key is stale (see the
        class); None if it is not, or if the table had none of this daemon's displays
        for the seat (a restarted daemon: the key is taken as it comes)."""
        self._in(session)
        shown = self._shown.get(seat)
        if not shown:
            return None
        # Acks only grow in a session: what a newer ack covers, older keys never need.
        while len(shown) > 1 and shown[1].ordinal is not None and shown[1].ordinal <= acked:
            shown.popleft()
        first = shown[0]
        if first.ordinal is None or first.ordinal > acked:
            return None
        now = shown[-1].screen
        if now == first.screen:
            return None
        before = first.screen
        for later in list(shown)[1:]:
            if not later.own and later.screen != before:
                return first.screen, now
            before = later.screen
        return None

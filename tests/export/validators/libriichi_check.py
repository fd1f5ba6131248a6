"""Check mjai logs with Mortal's libriichi, as the PyPI wheel ``mjai`` (0.2.1) bundles it
(``mjai.mlibriichi``, AGPL-3.0-or-later).  Run by tests/export/test_other_tools.py with the
python of its own venv (the wheel pins ``mahjong~=1.2``); never imported by tablectl.

``python libriichi_check.py FILE...`` prints one JSON object per file:
``{"file": F, "validate_logs": null | "why", "line_by_line": null | "why",
"reach_then_call": n}``.

- ``validate_logs``: the reading of Mortal's own log checker
  (libriichi/src/bin/validate_logs.rs): one ``PlayerState`` per seat; before each player
  action (dahai, chi, pon, daiminkan, ankan, kakan, reach, hora) the actor's
  ``validate_reaction`` must accept it; every line goes to every seat.  The checker feeds
  lines with ``update_with_keep_cans(ev, true)``: an announcement (``reach_accepted``,
  ``dora``, ``hora``) keeps the action candidates of the event before it.  The binding
  has no keep_cans, so an announcement is held back and applied just before the next
  event, after that event was checked: the same effect on what is legal.
- ``line_by_line``: plain ``update()`` for every line, as a naive consumer fed the log
  line by line sees it: an announcement clears the seat's candidates, so a discard
  right after a ``dora`` that follows the seat's draw is refused.  One exception, kept
  with the candidates as above and counted in ``"reach_then_call"``: a
  ``reach_accepted`` right before the chi, pon or open kan of the riichi tile.  That is
  the order libriichi's arena and tenhou.net's mjlog write, and the only one libriichi's
  state reads right: ``ReachAccepted`` turns the riichi seat's ippatsu on and a call
  turns it off, so the stick cannot be written after the call; a bot decides its call
  on the discard before the acceptance reaches it, and mjai-reviewer takes its
  candidates there too (it skips ``dora`` and ``reach_accepted`` looking for the
  player's action).
"""

import json
import sys

from mjai.mlibriichi.state import PlayerState

REACTIONS = {"dahai", "chi", "pon", "daiminkan", "ankan", "kakan", "reach", "hora"}
CALLS = {"chi", "pon", "daiminkan"}
ANNOUNCEMENTS = {"reach_accepted", "dora", "hora"}


def short(exc):
    """The Rust error without the backtrace the binding appends."""
    return str(exc).split("\n\nStack backtrace")[0].replace("\n", " | ")


def check(lines, keep_candidates, counted=None):
    """None when every line is legal, else why the first one that is not is refused."""
    states = [PlayerState(seat) for seat in range(4)]
    held = []
    events = [json.loads(line) for line in lines]

    def feed(number, line):
        for state in states:
            try:
                state.update(line)
            except Exception as exc:
                return f"line {number}: seat {state.player_id} cannot take it: {short(exc)}: {line}"
        return None

    for number, line in enumerate(lines, 1):
        event = events[number - 1]
        following = events[number]["type"] if number < len(events) else None
        if not keep_candidates and event["type"] == "reach_accepted" and following in CALLS:
            counted["reach_then_call"] += 1
            held.append((number, line))
            continue
        if event["type"] in REACTIONS:
            try:
                states[event["actor"]].validate_reaction(line)
            except Exception as exc:
                return f"line {number}: seat {event['actor']} may not: {short(exc)}: {line}"
        if keep_candidates and event["type"] in ANNOUNCEMENTS:
            held.append((number, line))
            continue
        for held_number, held_line in held:
            if why := feed(held_number, held_line):
                return why
        held = []
        if why := feed(number, line):
            return why
    for held_number, held_line in held:
        if why := feed(held_number, held_line):
            return why
    return None


def main(paths):
    for path in paths:
        with open(path, encoding="utf-8") as f:
            lines = [line.strip() for line in f if line.strip()]
        counted = {"reach_then_call": 0}
        report = {
            "file": path,
            "validate_logs": check(lines, keep_candidates=True),
            "line_by_line": check(lines, keep_candidates=False, counted=counted),
        }
        print(json.dumps({**report, **counted}), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])

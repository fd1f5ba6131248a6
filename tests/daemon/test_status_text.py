"""``tablectl ctl status`` without --json: the daemon's status object in a few lines."""

from __future__ import annotations

from typing import Any

from tablectl.status_text import format_status


def _status(**changes: Any) -> dict[str, Any]:
    status: dict[str, Any] = {
        "table": "t7",
        "rules": "kenko",
        "game_id": "b619b6f8",
        "phase": "table_playing_turn",
        "link": {"up": True, "refused": None},
        "round": {"wind": "E", "number": 2},
        "dealer": 1,
        "honba": 1,
        "deposits": 1000,
        "tiles_left": 61,
        "scores": [20100, 32300, 23300, 24300],
        "names": None,
        "riichi": [2],
        "prompts": ["", "", "", ""],
        "tray_mismatch": {},
        "staff_locked_s": 0.0,
        "finished": False,
        "alerts": [],
    }
    status.update(changes)
    return status


def test_a_game_in_progress_is_a_few_lines() -> None:
    assert format_status(_status()) == (
        "table t7: kenko, game b619b6f8\n"
        "phase: table_playing_turn, link up\n"
        "round: East 2, honba 1, deposits 1000; 61 tiles left\n"
        "  seat 0  N   20100\n"
        "  seat 1  E   32300\n"
        "  seat 2  S   23300  riichi\n"
        "  seat 3  W   24300\n"
        "alerts: none\n"
    )


def test_names_alerts_and_what_staff_must_see() -> None:
    alerts = [
        {"id": "a1", "kind": "tray_mismatch", "seat": 3, "text": "tray 63000", "acked_by": None},
        {"id": "a2", "kind": "fault", "seat": None, "text": "MOTOR: wall 2", "acked_by": "ann"},
    ]
    text = format_status(
        _status(
            names=["Aoki", "Bo", "Chiba", "\x1b[2JDan"],
            tray_mismatch={"3": 63000},
            prompts=["", "OK?", "", ""],
            staff_locked_s=42.5,
            link={"up": False, "refused": "signing key differs"},
            alerts=alerts,
        )
    )
    assert "\x1b" not in text  # a name cannot drive the terminal
    assert text.splitlines()[1:] == [
        "phase: table_playing_turn, link down (refused: signing key differs)",
        "round: East 2, honba 1, deposits 1000; 61 tiles left",
        "  seat 0  N  Aoki         20100",
        "  seat 1  E  Bo           32300  at OK?",
        "  seat 2  S  Chiba        23300  riichi",
        "  seat 3  W  \\x1b[2JDan   24300  tray 63000",
        "staff actions locked for 42.5 s (wrong PINs)",
        "alerts: 2",
        "  tray_mismatch (seat 3): tray 63000",
        "  fault (table): MOTOR: wall 2 [acknowledged by ann]",
    ]


def test_an_odd_status_is_shown_not_a_traceback() -> None:
    assert format_status(None) == "status: None\n"
    text = format_status({"round": "E1", "scores": "x", "riichi": 3, "alerts": {}})
    assert text.splitlines() == [
        "table ?: ?, game none",
        "phase: ?, link None",
        "round: ?, honba ?, deposits ?",
        "seats: ?",
        "alerts: none",
    ]

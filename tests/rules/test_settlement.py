"""Worked settlement examples, preset by preset (RULES.md rows: points table, honba value,
tenpai payment, kiriage, fu quirks, kazoe, multiple yakuman, pao, multiple ron, nagashi,
chombo, false call, riichi deposits).  Every expectation is computed by hand."""

from __future__ import annotations

from typing import Any

import pytest

from tablectl.rules.loader import load_rules
from tests.helpers import play


def ron(frm: int | list[int], *winners: dict[str, Any]) -> dict[str, Any]:
    return {"type": "ron", "from": frm, "winners": list(winners)}


def w(seat: int, han: int = 0, fu: int | None = None, **kw: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"seat": seat, **kw}
    if "yakuman" not in kw:
        out["han"] = han
        if fu is not None:
            out["fu"] = fu
    return out


def tsumo(seat: int, han: int = 0, fu: int | None = None, **kw: Any) -> dict[str, Any]:
    return {"type": "tsumo", **w(seat, han, fu, **kw)}


def draw(*tenpai: int, nagashi: tuple[int, ...] = ()) -> dict[str, Any]:
    out: dict[str, Any] = {"type": "draw", "tenpai": list(tenpai)}
    if nagashi:
        out["nagashi"] = list(nagashi)
    return out


RIICHI1 = {"type": "riichi", "seat": 1}
NOTEN_DRAW = {"type": "draw", "tenpai": []}

# (id, preset, events, deltas of the last hand)
CASES: list[tuple[str, str, list[dict[str, Any]], list[int]]] = [
    # --- standard table ---
    ("ariari non-dealer ron 3h30", "ariari", [ron(0, w(2, 3, 30))], [-3900, 0, 3900, 0]),
    ("ariari dealer ron 3h30", "ariari", [ron(1, w(0, 3, 30))], [5800, -5800, 0, 0]),
    ("ariari kiriage 4h30", "ariari", [ron(0, w(2, 4, 30))], [-8000, 0, 8000, 0]),
    ("ariari kiriage 3h60", "ariari", [ron(0, w(2, 3, 60))], [-8000, 0, 8000, 0]),
    ("jboy no kiriage 4h30", "jboy", [ron(0, w(2, 4, 30))], [-7700, 0, 7700, 0]),
    ("jboy 60fu reading 3h60 -> 4h30", "jboy", [ron(0, w(2, 3, 60))], [-7700, 0, 7700, 0]),
    ("jboy 60fu reading 2h70 -> 3h40", "jboy", [ron(0, w(2, 2, 70))], [-5200, 0, 5200, 0]),
    ("ariari 2h70 standard", "ariari", [ron(0, w(2, 2, 70))], [-4500, 0, 4500, 0]),
    ("ariari tsumo 1h30", "ariari", [tsumo(1, 1, 30)], [-500, 1100, -300, -300]),
    ("ariari dealer tsumo 2h20 pinfu", "ariari", [tsumo(0, 2, 20)], [2100, -700, -700, -700]),
    ("ariari chiitoitsu 2h25 ron", "ariari", [ron(3, w(1, 2, 25))], [0, 1600, 0, -1600]),
    ("ariari haneman", "ariari", [ron(3, w(1, 7))], [0, 12000, 0, -12000]),
    ("ariari baiman dealer", "ariari", [ron(3, w(0, 9))], [24000, 0, 0, -24000]),
    ("ariari sanbaiman", "ariari", [ron(3, w(1, 12))], [0, 24000, 0, -24000]),
    ("ariari kazoe 13h yakuman", "ariari", [ron(3, w(1, 13))], [0, 32000, 0, -32000]),
    ("kenko kazoe off 13h sanbaiman", "kenko", [ron(3, w(1, 13))], [0, 24000, 0, -24000]),
    ("ariari double yakuman", "ariari", [ron(3, w(1, yakuman=2))], [0, 64000, 0, -64000]),
    ("kenko no double yakuman", "kenko", [ron(3, w(1, yakuman=2))], [0, 32000, 0, -32000]),
    (
        "ariari dealer yakuman tsumo",
        "ariari",
        [tsumo(0, yakuman=1)],
        [48000, -16000, -16000, -16000],
    ),
    # --- honba ---
    ("ariari 1 honba ron", "ariari", [NOTEN_DRAW, ron(0, w(2, 1, 30))], [-1300, 0, 1300, 0]),
    ("ariari 1 honba tsumo", "ariari", [NOTEN_DRAW, tsumo(2, 1, 30)], [-400, -600, 1400, -400]),
    ("jboy 1 honba ron 1500", "jboy", [NOTEN_DRAW, ron(0, w(2, 1, 30))], [-2500, 0, 2500, 0]),
    (
        "jboy 1 honba tsumo 500 each",
        "jboy",
        [NOTEN_DRAW, tsumo(2, 1, 30)],
        [-800, -1000, 2600, -800],
    ),
    (
        "jboy-sanma 1 honba tsumo 500 from two",
        "jboy-sanma",
        [NOTEN_DRAW, tsumo(2, 1, 30)],
        [-800, -1000, 1800],
    ),
    (
        "sanma-free 1 honba dealer tsumo 2000 -> 3000 all",
        "sanma-free",
        [tsumo(0, 2), tsumo(0, 3)],
        [6000, -3000, -3000],
    ),
    (
        "sanma-free 1 honba ron +1000",
        "sanma-free",
        [tsumo(0, 2), ron(1, w(0, 1))],
        [2500, -2500, 0],
    ),
    # --- sanma-free flat table ---
    ("sanma-free 1h ron non-dealer", "sanma-free", [ron(0, w(1, 1))], [-1000, 1000, 0]),
    ("sanma-free 2h ron non-dealer", "sanma-free", [ron(0, w(1, 2))], [-2000, 2000, 0]),
    ("sanma-free 3h ron non-dealer", "sanma-free", [ron(0, w(1, 3))], [-4000, 4000, 0]),
    ("sanma-free 3h ron dealer", "sanma-free", [ron(2, w(0, 3))], [6000, 0, -6000]),
    ("sanma-free 1h tsumo 500 each", "sanma-free", [tsumo(1, 1)], [-500, 1000, -500]),
    ("sanma-free dealer 1h tsumo 500 all", "sanma-free", [tsumo(0, 1)], [1000, -500, -500]),
    ("sanma-free 2h tsumo 500-1000", "sanma-free", [tsumo(1, 2)], [-1000, 1500, -500]),
    ("sanma-free 3h tsumo 1000-2000", "sanma-free", [tsumo(2, 3)], [-2000, -1000, 3000]),
    ("sanma-free 4h mangan", "sanma-free", [ron(0, w(1, 4))], [-8000, 8000, 0]),
    ("sanma-free fu ignored", "sanma-free", [ron(0, w(1, 2, 110))], [-2000, 2000, 0]),
    # --- three-player tsumo-son ---
    ("jboy-sanma mangan tsumo non-dealer", "jboy-sanma", [tsumo(1, 5)], [-4000, 6000, -2000]),
    ("jboy-sanma mangan tsumo dealer", "jboy-sanma", [tsumo(0, 5)], [8000, -4000, -4000]),
    # --- kantan fixed table ---
    ("kantan 1h ron", "kantan", [ron(1, w(2, 1))], [0, -1500, 1500, 0]),
    ("kantan dealer 1h ron, no dealer bonus", "kantan", [ron(1, w(0, 1))], [1500, -1500, 0, 0]),
    ("kantan 5h ron 12000", "kantan", [ron(1, w(2, 5))], [0, -12000, 12000, 0]),
    ("kantan 7h ron 18000", "kantan", [ron(1, w(2, 7))], [0, -18000, 18000, 0]),
    ("kantan 10h ron 24000", "kantan", [ron(1, w(2, 10))], [0, -24000, 24000, 0]),
    ("kantan 12h ron 36000", "kantan", [ron(1, w(2, 12))], [0, -36000, 36000, 0]),
    ("kantan yakuman ron 48000", "kantan", [ron(1, w(2, yakuman=2))], [0, -48000, 48000, 0]),
    ("kantan 3h tsumo 2000 all", "kantan", [tsumo(2, 3)], [-2000, -2000, 6000, -2000]),
    ("kantan 13h tsumo 16000 all", "kantan", [tsumo(2, 13)], [-16000, -16000, 48000, -16000]),
    ("kantan ron from two discarders", "kantan", [ron([1, 3], w(0, 2))], [6000, -3000, 0, -3000]),
    (
        "kantan ron from two discarders, each at its own tile's value",
        "kantan",
        [ron([1, 3], w(0, 2), w(0, 3))],
        [9000, -3000, 0, -6000],
    ),
    # --- riichi deposits ---
    (
        "riichi stick to the winner",
        "ariari",
        [RIICHI1, ron(0, w(2, 1, 30))],
        [-1000, -1000, 2000, 0],
    ),
    (
        "declaration tile deals in: no deposit",
        "ariari",
        [RIICHI1, ron(1, w(2, 1, 30))],
        [0, -1000, 1000, 0],
    ),
    ("riichi winner by tsumo", "ariari", [RIICHI1, tsumo(1, 1, 30)], [-500, 1100, -300, -300]),
    (
        "deposits carried over a draw",
        "ariari",
        [RIICHI1, draw(1), ron(0, w(2, 1, 30))],
        [-1300, 0, 2300, 0],
    ),
    # --- pao ---
    (
        "ariari pao tsumo: pao pays all",
        "ariari",
        [tsumo(1, yakuman=1, pao=2)],
        [0, 32000, -32000, 0],
    ),
    (
        "ariari pao ron split",
        "ariari",
        [ron(3, w(1, yakuman=1, pao=2))],
        [0, 32000, -16000, -16000],
    ),
    (
        "ariari pao ron honba paid by pao",
        "ariari",
        [NOTEN_DRAW, ron(3, w(2, yakuman=1, pao=1))],
        [0, -16300, 32300, -16000],
    ),
    (
        "kenko pao ron honba paid by discarder",
        "kenko",
        [NOTEN_DRAW, NOTEN_DRAW, ron(3, w(1, yakuman=1, pao=2))],
        [0, 32600, -16000, -16600],
    ),
    (
        "ariari pao covers one of a double yakuman",
        "ariari",
        [ron(3, w(1, yakuman=2, pao=2))],
        [0, 64000, -16000, -48000],
    ),
    (
        "ariari pao dealer tsumo with honba",
        "ariari",
        [tsumo(0, 1, 30), tsumo(0, yakuman=1, pao=3)],
        [48300, 0, 0, -48300],
    ),
    # --- several winners ---
    (
        "ariari double ron: bonus to nearest",
        "ariari",
        [RIICHI1, draw(1), ron(0, w(3, 2, 30), w(1, 1, 30))],
        [-3800, 2800, 0, 2000],
    ),
    ("jboy head bump", "jboy", [ron(0, w(3, 2, 30), w(1, 1, 30))], [-1000, 1000, 0, 0]),
    (
        "jboy head bump wraps around",
        "jboy",
        [ron(2, w(1, 2, 30), w(3, 1, 30))],
        [0, 0, -1000, 1000],
    ),
    (
        "sanma-free double ron: honba to nearest",
        "sanma-free",
        [tsumo(0, 1), ron(0, w(2, 2), w(1, 1))],
        [-4000, 2000, 2000],
    ),
    (
        "ema all three win",
        "ema",
        [ron(0, w(1, 1, 30), w(2, 1, 30), w(3, 1, 30))],
        [-3000, 1000, 1000, 1000],
    ),
    # --- tenpai payments ---
    ("ariari 1 tenpai", "ariari", [draw(2)], [-1000, -1000, 3000, -1000]),
    ("ariari 2 tenpai", "ariari", [draw(0, 2)], [1500, -1500, 1500, -1500]),
    ("ariari 3 tenpai", "ariari", [draw(0, 1, 3)], [1000, 1000, -3000, 1000]),
    ("ariari all tenpai", "ariari", [draw(0, 1, 2, 3)], [0, 0, 0, 0]),
    ("jboy-sanma 1 tenpai 3000 pool", "jboy-sanma", [draw(2)], [-1500, -1500, 3000]),
    ("jboy-sanma 2 tenpai", "jboy-sanma", [draw(0, 1)], [1500, 1500, -3000]),
    ("sanma-free 1 tenpai 2000 pool", "sanma-free", [draw(2)], [-1000, -1000, 2000]),
    ("sanma-free 2 tenpai", "sanma-free", [draw(0, 1)], [1000, 1000, -2000]),
    ("kantan 1 tenpai", "kantan", [draw(2)], [-1000, -1000, 3000, -1000]),
    ("kantan 2 tenpai table", "kantan", [draw(0, 2)], [2000, -2000, 2000, -2000]),
    ("kantan 3 tenpai", "kantan", [draw(0, 1, 3)], [1000, 1000, -3000, 1000]),
    # --- nagashi mangan ---
    (
        "ariari nagashi by non-dealer, no tenpai payments",
        "ariari",
        [draw(1, nagashi=(2,))],
        [-4000, -2000, 8000, -2000],
    ),
    (
        "ariari nagashi with honba",
        "ariari",
        [NOTEN_DRAW, draw(nagashi=(2,))],
        [-2100, -4100, 8300, -2100],
    ),
    ("sanma-free nagashi baiman", "sanma-free", [draw(nagashi=(1,))], [-8000, 12000, -4000]),
    # --- chombo ---
    (
        "ariari non-dealer chombo: mangan",
        "ariari",
        [{"type": "chombo", "seat": 2}],
        [4000, 2000, -8000, 2000],
    ),
    (
        "ariari dealer chombo: mangan",
        "ariari",
        [{"type": "chombo", "seat": 0}],
        [-12000, 4000, 4000, 4000],
    ),
    ("jboy chombo 3000 each", "jboy", [{"type": "chombo", "seat": 2}], [3000, 3000, -9000, 3000]),
    (
        "sanma-free chombo 5000 all",
        "sanma-free",
        [{"type": "chombo", "seat": 1}],
        [5000, -10000, 5000],
    ),
    (
        "kantan chombo 5000 all",
        "kantan",
        [{"type": "chombo", "seat": 1}],
        [5000, -15000, 5000, 5000],
    ),
    (
        "chombo returns the riichi stick",
        "jboy",
        [RIICHI1, {"type": "chombo", "seat": 2}],
        [3000, 3000, -9000, 3000],
    ),
    (
        "mleague chombo is off the final score",
        "mleague",
        [{"type": "chombo", "seat": 2}],
        [0, 0, 0, 0],
    ),
    (
        "ariari noten riichi at a draw is chombo",
        "ariari",
        [RIICHI1, draw(0)],
        [4000, -8000, 2000, 2000],
    ),
    (
        "kantan noten riichi 3000 all plus tenpai payments",
        "kantan",
        [RIICHI1, draw(0)],
        [6000, -11000, 2000, 2000],
    ),
]


@pytest.mark.parametrize(
    ("preset", "events", "deltas"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_settlement(preset: str, events: list[dict[str, Any]], deltas: list[int]) -> None:
    out = play(preset, *events)
    assert out["rejected"] == []
    assert out["hands"][-1]["deltas"] == deltas
    rules = load_rules(preset)
    # Points only move between seats and the table.
    assert sum(out["scores"]) + out["kyoutaku"] == rules.game.start_points * rules.players


def test_kantan_noten_riichi_deposit_goes_to_table() -> None:
    # RIICHI1 then a draw with seat 1 noten: deposit 1000 to the table, penalty 3000 x 3,
    # and 1 tenpai (seat 0): +3000, -1000 each.  The deposit stays for the next winner.
    out = play("kantan", RIICHI1, draw(0))
    assert out["scores"] == [31000, 14000, 27000, 27000]
    assert out["kyoutaku"] == 1000


def test_mleague_chombo_deducted_at_the_end() -> None:
    out = play("mleague", {"type": "chombo", "seat": 2})
    assert out["scores"] == [25000] * 4
    # Nobody busts in M-League: play the game out with quick non-dealer wins.
    events = [ron(0, w(1, 1, 30)) if i % 4 != 1 else ron(0, w(2, 1, 30)) for i in range(8)]
    out = play("mleague", {"type": "chombo", "seat": 2}, *events)
    assert out["finished"]
    # The penalty is taken from the result points after ranking and uma (M-League:
    # チョンボは20000点相当の罰符, -20.0 after the game): the table score stays.
    assert out["final"]["scores"][2] == out["scores"][2]
    assert out["final"]["penalties"] == [0, 0, 20000, 0]
    place = out["final"]["ranking"].index(2)
    uma = [50, 10, -10, -30][place]
    assert out["final"]["result"][2] == round((out["scores"][2] - 30000) / 1000 + uma - 20, 1)

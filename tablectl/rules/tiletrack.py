"""Glue between the rules core and the tile tracker (:mod:`tablectl.rules.tiletracker`).

A hand without a ``layout`` event has no tiles (``GameState.tiles`` is None): every check
here passes and the hand is what it was before tables read tiles.  With a layout, the
tile tracker steps beside the wall tracker, and the score events are checked against the
tiles: riichi needs a closed tenpai hand, a ron or tsumo a complete one (and no furiten for
a ron), an exhaustive draw the tenpai and nagashi seats the tiles say, a nine-terminals or
four-winds abort the tiles that make it, and a win's han and fu those of the scorer
(:mod:`tablectl.rules.tilescoring`, when it is there).
"""

from __future__ import annotations

from tablectl.rules import events as ev
from tablectl.rules import tenpai, tilechecks, tileshapes
from tablectl.rules.refusal import Refusal
from tablectl.rules.scoring import MAX_HAN
from tablectl.rules.state import GameState
from tablectl.rules.tilechips import ChipTiles, count_tiles
from tablectl.rules.tiletracker import TileState, declare_riichi, start_tiles, tile_step
from tablectl.rules.wall import WallState
from tablectl.tiles.hand import HandScore
from tablectl.tiles.ids import KIND_NAMES, kind


def step_tiles(
    state: GameState, event: ev.WallEvent, new_wall: WallState
) -> TileState | Refusal | None:
    """The tiles after a wall event the wall tracker accepted (``new_wall``): None for a
    hand without a layout (and at the dice, which start a new hand)."""
    if isinstance(event, ev.Dice):
        return None
    if isinstance(event, ev.Layout):
        return start_tiles(state.rules, new_wall, event.tiles)
    if state.tiles is None or state.wall is None:
        return None
    return tile_step(state.rules, state.tiles, state.wall, new_wall, event)


def _winds(state: GameState, seat: int) -> tuple[int, int]:
    return (seat - state.dealer) % state.players, state.round_index % 4


def _tenpai(state: GameState, seat: int, concealed: tuple[int, ...]) -> bool:
    assert state.tiles is not None
    seat_wind, round_wind = _winds(state, seat)
    melds = state.tiles.seats[seat].melds
    return tenpai.tenpai(state.rules, concealed, melds, seat_wind=seat_wind, round_wind=round_wind)


def riichi(state: GameState, seat: int) -> TileState | Refusal | None:
    """Check a riichi declaration against the tiles and mark it (None: no tiles).

    Refused with an open hand (``open_riichi``) but where riichi counts with calls
    (``tiles.yaku_with_calls``: kantan), and when no discard leaves the hand tenpai
    (``not_tenpai``) unless the preset lets a noten riichi be declared as a bluff
    (:func:`~tablectl.rules.tenpai.noten_riichi_allowed`): then it is found at the draw."""
    tiles, wall = state.tiles, state.wall
    if tiles is None or wall is None:
        return None
    st = tiles.seats[seat]
    if not st.closed and not state.rules.tiles.yaku_with_calls:
        return Refusal("open_riichi", f"seat {seat} has called and may not declare riichi")
    if not tenpai.noten_riichi_allowed(state.rules):
        if wall.phase == "discard":
            options = {t // 4: t for t in st.concealed}.values()
            ready = any(
                _tenpai(state, seat, tuple(x for x in st.concealed if x != t)) for t in options
            )
        else:
            ready = _tenpai(state, seat, st.concealed)
        if not ready:
            return Refusal("not_tenpai", f"seat {seat} is not tenpai and may not declare riichi")
    return declare_riichi(state.rules, tiles, wall, seat)


def check_ron(state: GameState, event: ev.Ron) -> Refusal | None:
    """Every winner's hand is complete with each tile it rons, it is not furiten, and its
    value off each discarder is the scorer's for that tile (kantan: a winner paid by
    several discarders at one value needs that value off every tile)."""
    tiles = state.tiles
    if tiles is None:
        return None
    several = len(event.discarders) > 1
    for hand, discarder in event.pairs():
        st = tiles.seats[hand.seat]
        tile = tilechecks.ron_tile(state, discarder)
        if tile is None:
            return Refusal("not_a_win", f"seat {discarder} has no tile open to ron")
        name = KIND_NAMES[kind(tile)]
        if not tilechecks.is_complete(state.rules, (*st.concealed, tile)):
            waits = tileshapes.waits(state.rules, st.concealed)
            return Refusal(
                "not_a_win",
                f"seat {hand.seat}: seat {discarder}'s {name} does not complete its hand"
                f" (waits: {tileshapes.kinds_text(waits)})",
            )
        if _robs_closed_kan(state) and not tilechecks.is_kokushi((*st.concealed, tile)):
            return Refusal(
                "not_a_win",
                f"seat {hand.seat}: only thirteen orphans may rob a closed kan",
            )
        reason = tilechecks.furiten(state.rules, tiles, hand.seat, tile)
        if reason is not None:
            return Refusal("furiten", f"seat {hand.seat} may not ron {name}: {reason}")
        off = f" off seat {discarder}'s {name}" if several else ""
        bad = _check_value(state, hand, tsumo=False, discarder=discarder, off=off)
        bad = bad or _check_chips(state, hand, discarder=discarder, off=off)
        if bad is not None:
            return bad
    return None


def _robs_closed_kan(state: GameState) -> bool:
    wall = state.wall
    return (
        wall is not None
        and wall.phase == "rinshan"
        and wall.replacing == "kan"
        and wall.last_kan == "closed"
    )


def check_tsumo(state: GameState, hand: ev.Hand) -> Refusal | None:
    """The winner's hand, drawn tile included, is complete and its value the scorer's."""
    tiles = state.tiles
    if tiles is None:
        return None
    st = tiles.seats[hand.seat]
    if not tilechecks.is_complete(state.rules, st.concealed):
        drawn = "" if st.drawn is None else f" with {KIND_NAMES[kind(st.drawn)]}"
        return Refusal("not_a_win", f"seat {hand.seat}'s hand{drawn} is not complete")
    bad = _check_value(state, hand, tsumo=True, discarder=None)
    return bad or _check_chips(state, hand, discarder=None)


def chip_tiles(state: GameState, seat: int, discarder: int | None) -> ChipTiles | None:
    """What earns chips in ``seat``'s win (a tsumo, or a ron off ``discarder``) by the
    tiles; None in a hand without tiles.  The caller has checked the win."""
    if state.tiles is None or state.wall is None:
        return None
    tsumo = discarder is None
    ctx = tilechecks.win_context(state.rules, state, seat, tsumo, discarder)
    return count_tiles(state.rules, ctx)


def win_chips(state: GameState, hand: ev.Hand, discarder: int | None) -> int:
    """The chips ``hand`` earns besides the yakuman chips (a tsumo, or a ron off
    ``discarder``): in a hand with tiles those the tiles show (a table that reads its
    tiles never has them typed), else the count entered with the hand (none: 0)."""
    if hand.chips is not None or not state.rules.money.hand_chips:
        return hand.chips or 0
    found = chip_tiles(state, hand.seat, discarder)
    return 0 if found is None else found.chips(state.rules)


def _check_chips(
    state: GameState, hand: ev.Hand, *, discarder: int | None, off: str = ""
) -> Refusal | None:
    """A chip count given with a win in a hand with tiles is the one the tiles show
    (``chips_mismatch``); none given is counted from them."""
    if hand.chips is None or not state.rules.money.hand_chips:
        return None
    found = chip_tiles(state, hand.seat, discarder)
    if found is None or found.chips(state.rules) == hand.chips:
        return None
    return Refusal(
        "chips_mismatch",
        f"seat {hand.seat} claims {hand.chips} chips{off}; the tiles show "
        f"{found.chips(state.rules)} ({found.text()})",
    )


def _value_text(han: int, fu: int | None, yakuman: int) -> str:
    if yakuman:
        return f"{yakuman}x yakuman"
    return f"{han} han" + ("" if fu is None else f" {fu} fu")


def _same_value(state: GameState, hand: ev.Hand, score: HandScore) -> bool:
    kazoe = hand.yakuman == 1 and not score.yakuman and score.han >= MAX_HAN
    kazoe = kazoe or (score.yakuman == 1 and not hand.yakuman and hand.han == MAX_HAN)
    if hand.yakuman or score.yakuman:
        return hand.yakuman == score.yakuman or kazoe
    if min(score.han, MAX_HAN) != hand.han:
        return False
    fu_counts = state.rules.scoring.table == "standard" and hand.han < 5
    return not fu_counts or score.fu is None or hand.fu == score.fu


def _check_value(
    state: GameState, hand: ev.Hand, *, tsumo: bool, discarder: int | None, off: str = ""
) -> Refusal | None:
    score_win = tenpai.scorer()
    if score_win is None:
        return None
    ctx = tilechecks.win_context(state.rules, state, hand.seat, tsumo, discarder)
    score = score_win(state.rules, ctx)
    if isinstance(score, Refusal):
        return Refusal("not_a_win", f"seat {hand.seat}{off}: {score.code}: {score.message}")
    if _same_value(state, hand, score):
        return None
    yaku = f" ({', '.join(score.yaku)})" if score.yaku else ""
    return Refusal(
        "value_mismatch",
        f"seat {hand.seat} claims {_value_text(hand.han, hand.fu, hand.yakuman)}{off}; the "
        f"tiles make {_value_text(score.han, score.fu, score.yakuman)}{yaku}",
    )


#: Nine terminals needs this many different terminal and honour kinds.
NINE_TERMINALS = 9


def check_abort(state: GameState, reason: str) -> Refusal | None:
    """An abortive draw the tiles can judge, once the wall has allowed it (the declarer's
    first draw with no call yet; the first go-around's four discards with no call).

    ``nine_terminals``: the declarer's 14 tiles hold nine or more different terminal and
    honour kinds (``too_few_terminals``).  ``four_winds``: every seat's first discard is
    the same wind (``not_same_wind``).  Other reasons are not the tiles' business."""
    tiles, wall = state.tiles, state.wall
    if tiles is None or wall is None:
        return None
    if reason == "nine_terminals":
        seat = wall.turn
        found = tilechecks.terminal_kinds(tiles.seats[seat].concealed)
        if len(found) < NINE_TERMINALS:
            return Refusal(
                "too_few_terminals",
                f"seat {seat} holds {len(found)} different terminals and honours "
                f"({tileshapes.kinds_text(found)}); nine terminals needs {NINE_TERMINALS}",
            )
    if reason == "four_winds":
        firsts = [kind(st.discards[0].tile) for st in tiles.seats]
        if len(set(firsts)) != 1 or firsts[0] not in tilechecks.WINDS:
            said = ", ".join(f"seat {s} {KIND_NAMES[k]}" for s, k in enumerate(firsts))
            return Refusal(
                "not_same_wind",
                f"the first discards are {said}; four winds needs the same wind from every seat",
            )
    return None


def _seats_text(seats: list[int]) -> str:
    return ", ".join(map(str, seats)) if seats else "none"


def check_draw(state: GameState, event: ev.Draw) -> Refusal | None:
    """An exhaustive draw's tenpai and nagashi seats are those the tiles say (a dead hand
    is neither)."""
    expected = expected_draw(state)
    if expected is None:
        return None
    if set(expected.tenpai) != set(event.tenpai):
        return Refusal(
            "tenpai_mismatch",
            f"the draw lists tenpai seats {_seats_text(sorted(event.tenpai))}; the tiles say "
            f"{_seats_text(list(expected.tenpai))}",
        )
    if set(expected.nagashi) != set(event.nagashi):
        return Refusal(
            "nagashi_mismatch",
            f"the draw lists nagashi seats {_seats_text(sorted(event.nagashi))}; the tiles "
            f"say {_seats_text(list(expected.nagashi))}",
        )
    return None


def furiten_riichi(state: GameState) -> tuple[int, ...]:
    """The seats in riichi whose riichi was furiten when declared (a wait among their own
    discards or pulled norths, see ``SeatTiles.riichi_furiten``), in seat order; none
    without tiles.  Whether that matters is the preset's ``riichi.furiten_at_draw``."""
    tiles = state.tiles
    if tiles is None:
        return ()
    return tuple(s for s in sorted(state.riichi) if tiles.seats[s].riichi_furiten)


def expected_draw(state: GameState) -> ev.Draw | None:
    """The exhaustive draw the tiles say (tenpai and nagashi seats), or None without tiles.
    The daemon and simulated players use it instead of asking the players."""
    tiles = state.tiles
    if tiles is None:
        return None
    alive = [s for s in range(state.players) if s not in state.dead]
    return ev.Draw(
        tenpai=tuple(s for s in alive if _tenpai(state, s, tiles.seats[s].concealed)),
        nagashi=tuple(s for s in alive if tilechecks.nagashi(state.rules, tiles.seats[s])),
    )

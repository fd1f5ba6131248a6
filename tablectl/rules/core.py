"""The pure rules core: ``step(state, event) -> (state, effects)``.

No I/O, clock or randomness.  An event the rules refuse yields the *same* state and a
single :class:`~tablectl.rules.refusal.Refusal` effect with a stable code.

Hand-level flow (riichi deposits, wins, draws, aborts, chombo) and game-level flow (dealer
repeat, honba, game end) live here; han/fu arithmetic lives in :mod:`scoring` and the end
of game adjustments in :mod:`ending`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from tablectl.rules import events as ev
from tablectl.rules import tiletrack, walltrack
from tablectl.rules.ending import finish, ranking
from tablectl.rules.money import chip_payments, chips_refusal, yakuman_chips
from tablectl.rules.refusal import Refusal
from tablectl.rules.scoring import (
    HandValue,
    chombo_deltas,
    hand_value,
    nagashi_payments,
    nearest_in_turn,
    ron_points,
    tenpai_payments,
    tsumo_payments,
)
from tablectl.rules.state import (
    DeadHand,
    Effect,
    GameOver,
    GameState,
    HandRecord,
    HandResult,
    HandSettled,
    HandUndone,
    Noted,
    Payment,
    StopOffered,
    UndoPoint,
)

Step = tuple[GameState, tuple[Effect, ...]]
Handled = tuple[GameState, list[Effect]] | Refusal


def step(state: GameState, event: ev.Event) -> Step:
    """Apply one event.  On refusal the state comes back unchanged with one Refusal."""
    outcome = _undo(state) if isinstance(event, ev.Undo) else _dispatch(state, event)
    if isinstance(outcome, Refusal):
        return state, (outcome,)
    new_state, effects = outcome
    if not isinstance(event, ev.Undo):
        new_state = _undo_point(state, event, new_state, effects)
    return new_state, tuple(effects)


# --- corrections ------------------------------------------------------------------------


def _undo_point(
    before: GameState, event: ev.Event, after: GameState, effects: Sequence[Effect]
) -> GameState:
    """What an ``undo`` after ``event`` would go back to.

    A hand result keeps the state before it (one level: an undo cannot be undone). The
    all-last stop is undone with the result it followed; the clock running out is a fact
    an undo keeps. Anything else comes from the next hand and ends the chance to undo.
    """
    settled = [e.record for e in effects if isinstance(e, HandSettled)]
    if settled:
        return replace(after, undo=UndoPoint(replace(before, undo=None), settled[-1]))
    point = before.undo
    if point is None or point.blocked is not None:
        return replace(after, undo=point) if after.undo is not point else after
    if isinstance(event, ev.Stop):
        return replace(after, undo=point)
    if isinstance(event, ev.TimeUp):
        return replace(after, undo=replace(point, time_up=True))
    blocked = ev.event_to_json(event)["type"]
    return replace(after, undo=replace(point, blocked=blocked))


def _undo(state: GameState) -> Handled:
    point = state.undo
    if point is None:
        return Refusal("nothing_to_undo", "no hand result to undo")
    if point.blocked is not None:
        return Refusal(
            "next_hand_started",
            f"the next hand has begun ({point.blocked}); only the last result before it"
            " can be undone",
        )
    restored = point.before
    effects: list[Effect] = [HandUndone(point.record, reopened=state.finished)]
    if point.time_up and not restored.last_hand:
        restored = replace(restored, last_hand=True)
        effects.append(Noted("time_up"))
    return restored, effects


def _dispatch(state: GameState, event: ev.Event) -> Handled:
    if state.finished:
        return Refusal("game_over", "the game is over; no more events are accepted")
    if isinstance(event, ev.Start):
        return Refusal("unexpected_start", "'start' may only be the first line of a replay")
    if isinstance(event, ev.Stop):
        return _stop(state)
    # Any other event means the all-last dealer chose to go on.
    if state.stop_offered:
        state = replace(state, stop_offered=False)
    if isinstance(event, ev.TimeUp):
        return _time_up(state)
    if isinstance(event, ev.Riichi):
        return _riichi(state, event.seat)
    if isinstance(event, ev.TilesOff):
        # Not a hand event: a riichi declared just before keeps waiting for its tile.
        return _tiles_off(state)
    pre: list[Effect] = []
    if state.pending_riichi is not None and not _keeps_riichi_pending(state, event):
        state, pre = _take_riichi_deposit(state, event)
    outcome = _dispatch_hand_event(state, event)
    if isinstance(outcome, Refusal):
        return outcome
    new_state, effects = outcome
    return new_state, pre + effects


def _dispatch_hand_event(state: GameState, event: ev.Event) -> Handled:
    match event:
        case ev.Ron():
            return _ron(state, event)
        case ev.Tsumo(hand=hand):
            return _tsumo(state, hand)
        case ev.Draw():
            return _draw(state, event)
        case ev.Abort(reason=reason):
            return _abort(state, reason)
        case ev.Chombo(seat=seat):
            return _chombo(state, (seat,), "chombo")
        case ev.FalseCall(seat=seat):
            return _false_call(state, seat)
        case _:
            return walltrack.wall_event(state, event)


def _tiles_off(state: GameState) -> Handled:
    if state.tiles is None:
        return Refusal("no_tiles", "the hand in progress has no tiles to stop reading")
    return replace(state, tiles=None), [Noted("tiles_off")]


# --- validation helpers -------------------------------------------------------------


def _seat_refusal(state: GameState, seat: int, role: str) -> Refusal | None:
    if not 0 <= seat < state.players:
        return Refusal(
            "no_such_seat", f"{role} seat {seat} does not exist (seats 0..{state.players - 1})"
        )
    return None


def _seats_refusal(state: GameState, seats: Sequence[int], role: str) -> Refusal | None:
    for seat in seats:
        bad = _seat_refusal(state, seat, role)
        if bad is not None:
            return bad
    if len(set(seats)) != len(seats):
        return Refusal("duplicate_seat", f"a seat is listed twice among the {role} seats")
    return None


def _dead_refusal(state: GameState, seat: int, what: str) -> Refusal | None:
    if seat in state.dead:
        return Refusal("dead_hand", f"seat {seat} has a dead hand and may not {what}")
    return None


# --- riichi -------------------------------------------------------------------------


def _keeps_riichi_pending(state: GameState, event: ev.Event) -> bool:
    """The declaration tile is still on its way: its own discard does not settle it."""
    if isinstance(event, ev.Discard) and event.seat == state.pending_riichi:
        return True
    return (
        isinstance(event, ev.Ron)
        and not state.rules.riichi.deposit_on_deal_in
        and (state.pending_riichi in event.discarders)
    )


def _take_riichi_deposit(state: GameState, event: ev.Event) -> tuple[GameState, list[Effect]]:
    seat = state.pending_riichi
    assert seat is not None
    deposit = state.rules.scoring.riichi_deposit
    deltas = [0] * state.players
    deltas[seat] = -deposit
    new = replace(
        state,
        scores=_add(state.scores, deltas),
        hand_payments=_add(state.hand_payments, deltas),
        kyoutaku=state.kyoutaku + deposit,
        riichi=(*state.riichi, seat),
        riichi_deposits=state.riichi_deposits + deposit,
        pending_riichi=None,
    )
    return new, [Payment("riichi", tuple(deltas), to_table=deposit)]


def _riichi(state: GameState, seat: int) -> Handled:
    bad = _seat_refusal(state, seat, "riichi")
    if bad is not None:
        return bad
    if seat in state.riichi or seat == state.pending_riichi:
        return Refusal("already_riichi", f"seat {seat} has already declared riichi this hand")
    bad = _dead_refusal(state, seat, "declare riichi")
    if bad is not None:
        return bad
    bad = walltrack.check_riichi(state, seat)
    if bad is not None:
        return bad
    tiles = tiletrack.riichi(state, seat)
    if isinstance(tiles, Refusal):
        return tiles
    effects: list[Effect] = []
    if state.pending_riichi is not None:
        state, effects = _take_riichi_deposit(state, ev.Riichi(seat))
    opts = state.rules.riichi
    if state.scores[seat] < opts.min_points and opts.under_min != "allowed":
        if opts.under_min == "refused":
            return Refusal(
                "riichi_needs_points",
                f"seat {seat} has {state.scores[seat]} points; riichi needs {opts.min_points}",
            )
        bust = (seat,) if opts.under_min == "dead_hand_bust" else ()
        new = replace(
            state,
            dead=(*state.dead, seat),
            bust_after_hand=(*state.bust_after_hand, *bust),
        )
        return new, [*effects, DeadHand(seat, "riichi without the points for the deposit")]
    marked = state.tiles if tiles is None else tiles
    return replace(state, pending_riichi=seat, tiles=marked), [*effects, Noted("riichi")]


# --- wins ---------------------------------------------------------------------------


def _value(state: GameState, hand: ev.Hand, *, tsumo: bool) -> HandValue | Refusal:
    value = hand_value(state.rules, han=hand.han, fu=hand.fu, yakuman=hand.yakuman, tsumo=tsumo)
    if isinstance(value, Refusal):
        return Refusal(value.code, f"seat {hand.seat}: {value.message}")
    if hand.pao is not None:
        bad = _seat_refusal(state, hand.pao, "pao")
        if bad is not None:
            return bad
        if not state.rules.scoring.pao:
            return Refusal("pao_not_allowed", "this preset has no responsibility payment (pao)")
        if not hand.yakuman:
            return Refusal("pao_needs_yakuman", "pao applies to yakuman hands only")
        if hand.pao == hand.seat:
            return Refusal("bad_pao", f"seat {hand.seat} cannot be responsible for its own win")
    if hand.chips is not None:
        riichi = hand.seat in state.riichi
        bad = chips_refusal(state.rules, hand.seat, hand.chips, riichi=riichi)
        if bad is not None:
            return bad
    return value


def _chips(state: GameState, hand: ev.Hand, value: HandValue, discarder: int | None) -> list[int]:
    """Each seat's chip change for one winner's hand paid by ``discarder`` (None: a
    tsumo): the chips entered with the hand, or those its tiles show in a hand with
    tiles, and the yakuman chips of its value (a yakuman entered as han is a kazoe one)."""
    money = state.rules.money
    counted = tiletrack.win_chips(state, hand, discarder)
    earned = counted + yakuman_chips(money, yakuman=value.yakuman, kazoe=not hand.yakuman)
    if not earned:
        return [0] * state.players
    return list(
        chip_payments(
            state.players,
            hand.seat,
            earned,
            discarder=discarder,
            pao=hand.pao,
            pao_pays=money.pao_pays_chips,
        )
    )


#: One yakuman: the part of a hand a pao player is responsible for.
SINGLE_YAKUMAN = HandValue(han=13, fu=None, yakuman=1, base=8000)


def _ron(state: GameState, event: ev.Ron) -> Handled:
    rules = state.rules
    players = state.players
    mode = rules.flow.multiple_ron
    if not event.discarders:
        return Refusal("no_discarder", "a ron names the seat whose discard it takes")
    if not event.winners:
        return Refusal("no_winner", "a ron names at least one winner")
    bad = _seats_refusal(state, event.discarders, "discarder")
    if bad is not None:
        return bad
    if len(event.discarders) > 1 and mode != "every_discarder":
        return Refusal("one_discarder", "a ron is off one discard under this preset")
    # Kantan's one winner may be listed once per discarder (each at its tile's value).
    if event.each_discarder:
        winner_seats = [event.winners[0].seat]
    else:
        winner_seats = [w.seat for w in event.winners]
    bad = _seats_refusal(state, winner_seats, "winner")
    if bad is not None:
        return bad
    for seat in winner_seats:
        if seat in event.discarders:
            return Refusal("winner_is_discarder", f"seat {seat} cannot ron its own discard")
        bad = _dead_refusal(state, seat, "win")
        if bad is not None:
            return bad
    priced: dict[tuple[int, int], tuple[ev.Hand, HandValue]] = {}
    for hand, discarder in event.pairs():
        value = _value(state, hand, tsumo=False)
        if isinstance(value, Refusal):
            return value
        priced[hand.seat, discarder] = (hand, value)
    bad = walltrack.check_ron(state, event.discarders, tuple(winner_seats))
    bad = bad or tiletrack.check_ron(state, event)
    if bad is not None:
        return bad
    if mode == "every_discarder":
        if len(winner_seats) != 1:
            return Refusal("one_winner", "kantan: one player wins, on their own turn")
        return _settle_ron(state, event.discarders, [winner_seats[0]], priced)
    discarder = event.discarders[0]
    order = nearest_in_turn(players, discarder, winner_seats)
    if mode == "head_bump":
        order = order[:1]
    elif mode == "double" and len(order) >= 3:
        if "triple_ron" in rules.flow.abortive_draws:
            return _abort(state, "triple_ron")
        order = order[:2]
    return _settle_ron(state, (discarder,), order, priced)


def _settle_ron(
    state: GameState,
    discarders: tuple[int, ...],
    winners: list[int],
    priced: dict[tuple[int, int], tuple[ev.Hand, HandValue]],
) -> Handled:
    """Pay each of ``winners`` (nearest the discarder first) by each of ``discarders``, at
    the hand and value ``priced`` gives that (winner, discarder)."""
    rules = state.rules
    deltas = [0] * state.players
    chips = [0] * state.players
    honba_each = rules.flow.multiple_ron_bonus == "each"
    for index, seat in enumerate(winners):
        is_dealer = seat == state.dealer
        gets_honba = index == 0 or honba_each
        honba = rules.scoring.honba_ron * state.honba if gets_honba else 0
        for discarder in discarders:
            hand, value = priced[seat, discarder]
            points = ron_points(rules, value, dealer=is_dealer)
            payers = _ron_payers(state, discarder, hand, points, honba, is_dealer)
            for payer, amount in payers.items():
                deltas[payer] -= amount
                deltas[seat] += amount
            chips = list(_add(chips, _chips(state, hand, value, discarder)))
    deltas = _share_deposits(state, winners, deltas)
    dealer_won = state.dealer in winners
    return _end_hand(
        state,
        "ron",
        deltas,
        kyoutaku_taken=True,
        dealer_repeats=dealer_won and rules.flow.dealer_repeat != "never",
        detail={"winners": winners, "from": list(discarders)},
        winners=winners,
        chips=chips,
    )


def _share_deposits(state: GameState, winners: list[int], deltas: list[int]) -> list[int]:
    """The deposits on the table to the ron winners (``winners`` nearest first).

    ``own_then_nearest`` (EMA RCR 2016, multiple ron): a winner whose riichi stick went
    out in this hand takes it back; the other sticks go to the winner nearest the discarder.
    """
    rest = state.kyoutaku
    if state.rules.flow.multiple_ron_deposits == "own_then_nearest" and len(winners) > 1:
        stick = state.rules.scoring.riichi_deposit
        for seat in winners[1:]:
            if seat in state.riichi:
                deltas[seat] += stick
                rest -= stick
    deltas[winners[0]] += rest
    return deltas


def _ron_payers(
    state: GameState,
    discarder: int,
    hand: ev.Hand,
    points: int,
    honba: int,
    is_dealer: bool,
) -> dict[int, int]:
    """Who pays how much of one winner's ron (honba included), with pao applied."""
    scoring = state.rules.scoring
    pays = {discarder: points + honba}
    if hand.pao is None or hand.pao == discarder:
        return pays
    pao_part = ron_points(state.rules, SINGLE_YAKUMAN, dealer=is_dealer)
    pao_share = pao_part if scoring.pao_ron == "full" else -(-pao_part // 200) * 100
    pao_pays_honba = scoring.pao_ron == "full" or scoring.pao_honba == "pao"
    pays[hand.pao] = pao_share + (honba if pao_pays_honba else 0)
    pays[discarder] = points - pao_share + (0 if pao_pays_honba else honba)
    return pays


def _tsumo(state: GameState, hand: ev.Hand) -> Handled:
    rules = state.rules
    seat = hand.seat
    bad = _seat_refusal(state, seat, "winner") or _dead_refusal(state, seat, "win")
    if bad is not None:
        return bad
    value = _value(state, hand, tsumo=True)
    if isinstance(value, Refusal):
        return value
    bad = walltrack.check_tsumo(state, seat) or tiletrack.check_tsumo(state, hand)
    if bad is not None:
        return bad
    pays = list(tsumo_payments(rules, value, winner=seat, dealer=state.dealer))
    honba = [
        0 if s == seat else rules.scoring.honba_tsumo_each * state.honba
        for s in range(state.players)
    ]
    if hand.pao is not None:
        single = tsumo_payments(rules, SINGLE_YAKUMAN, winner=seat, dealer=state.dealer)
        # The pao player pays the whole of the responsible yakuman, honba included.
        pao_total = sum(single) + sum(honba)
        pays = [p - q for p, q in zip(pays, single, strict=True)]
        honba = [0] * state.players
        pays[hand.pao] += pao_total
    deltas = [-(p + h) for p, h in zip(pays, honba, strict=True)]
    deltas[seat] = -sum(deltas) + state.kyoutaku
    return _end_hand(
        state,
        "tsumo",
        deltas,
        kyoutaku_taken=True,
        dealer_repeats=seat == state.dealer and rules.flow.dealer_repeat != "never",
        detail={"winners": [seat]},
        winners=[seat],
        chips=_chips(state, hand, value, None),
    )


# --- draws, aborts, penalties --------------------------------------------------------


def _draw(state: GameState, event: ev.Draw) -> Handled:
    rules = state.rules
    bad = _seats_refusal(state, event.tenpai, "tenpai") or _seats_refusal(
        state, event.nagashi, "nagashi"
    )
    if bad is not None:
        return bad
    for seat in event.tenpai:
        bad = _dead_refusal(state, seat, "be tenpai")
        if bad is not None:
            return bad
    if event.nagashi and rules.flow.nagashi == "none":
        return Refusal("nagashi_not_allowed", "this preset has no nagashi mangan")
    bad = walltrack.check_draw(state) or tiletrack.check_draw(state, event)
    if bad is not None:
        return bad
    tenpai = frozenset(event.tenpai)
    noten_riichi = [s for s in _turn_order(state) if s in state.riichi and s not in tenpai]
    chombo = _riichi_chombo(state, noten_riichi, tenpai)
    if chombo is not None:
        return chombo
    deltas: list[int] = [0] * state.players
    if noten_riichi and rules.riichi.noten_at_draw == "penalty_each":
        for seat in noten_riichi:
            for other in range(state.players):
                if other != seat:
                    deltas[other] += rules.riichi.noten_penalty_each
                    deltas[seat] -= rules.riichi.noten_penalty_each
    honba_each = rules.scoring.honba_tsumo_each * state.honba if rules.flow.nagashi_honba else 0
    for seat in event.nagashi:
        pays = nagashi_payments(rules, seat, state.dealer)
        for payer, amount in enumerate(pays):
            if payer != seat:
                deltas[payer] -= amount + honba_each
                deltas[seat] += amount + honba_each
    if not event.nagashi or rules.flow.nagashi_tenpai_payments:
        deltas = list(_add(deltas, tenpai_payments(rules, tenpai)))
    flow = rules.flow.nagashi_flow
    dealer_nagashi = state.dealer in event.nagashi
    tenpai_repeat = rules.flow.dealer_repeat == "win_or_tenpai" and state.dealer in tenpai
    if event.nagashi and flow == "win":
        # ariari: 流局時にマンガンのアガリ扱い（親の場合は連荘）: the flow of a win.
        dealer_repeats = dealer_nagashi
    else:
        dealer_repeats = tenpai_repeat or (flow == "dealer_repeats" and dealer_nagashi)
    detail: dict[str, object] = {"tenpai": sorted(tenpai)}
    if event.nagashi:
        detail["nagashi"] = list(event.nagashi)
    return _end_hand(
        state,
        "draw",
        deltas,
        kyoutaku_taken=False,
        dealer_repeats=dealer_repeats,
        detail=detail,
        tenpai=tenpai,
        won=bool(event.nagashi) and flow == "win",
    )


def _riichi_chombo(
    state: GameState, noten_riichi: list[int], tenpai: frozenset[int]
) -> Handled | None:
    """The chombo an exhaustive draw becomes for its riichi seats, or None: a noten riichi
    (``noten_at_draw = "chombo"``), and, where the tiles are read and the preset says so
    (``furiten_at_draw = "chombo"``, sanma-free: フリテンリーチは流局時チョンボ), a tenpai
    riichi that was furiten when declared."""
    riichi = state.rules.riichi
    noten = noten_riichi if riichi.noten_at_draw == "chombo" else []
    furiten: list[int] = []
    if riichi.furiten_at_draw == "chombo":
        found = tiletrack.furiten_riichi(state)
        furiten = [s for s in _turn_order(state) if s in found and s in tenpai]
    if not noten and not furiten:
        return None
    seats = tuple(s for s in _turn_order(state) if s in noten or s in furiten)
    kinds = [name for name, some in (("noten", noten), ("furiten", furiten)) if some]
    return _chombo(state, seats, "_and_".join(kinds) + "_riichi")


def _abort(state: GameState, reason: ev.AbortReason) -> Handled:
    rules = state.rules
    if reason not in rules.flow.abortive_draws:
        allowed = ", ".join(rules.flow.abortive_draws) or "none"
        return Refusal(
            "abort_not_allowed",
            f"{rules.name} has no abortive draw for {reason} (allowed: {allowed})",
        )
    if reason == "four_riichi" and len(state.riichi) < state.players:
        return Refusal(
            "abort_condition", f"four riichi needs every player in riichi; {len(state.riichi)} are"
        )
    bad = walltrack.check_abort(state, reason) or tiletrack.check_abort(state, reason)
    if bad is not None:
        return bad
    return _end_hand(
        state,
        "abort",
        [0] * state.players,
        kyoutaku_taken=False,
        dealer_repeats=rules.flow.abort_dealer == "repeats",
        detail={"reason": reason},
    )


def _chombo(state: GameState, seats: tuple[int, ...], reason: str) -> Handled:
    rules = state.rules
    bad = _seats_refusal(state, seats, "chombo")
    if bad is not None:
        return bad
    deltas = [0] * state.players
    penalties = list(state.final_penalties)
    for seat in seats:
        deltas = list(_add(deltas, chombo_deltas(rules, seat, state.dealer)))
        if rules.penalties.chombo == "final":
            penalties[seat] += rules.penalties.chombo_amount
    # This hand's riichi deposits go back to their owners; under chombo_returns =
    # "all_deposits" every deposit of the hand does (kenko: その局に出た供託は出した人に返す).
    if rules.penalties.chombo_returns == "all_deposits":
        returned = [-paid for paid in state.hand_payments]
    else:
        returned = [0] * state.players
        for seat in state.riichi:
            returned[seat] += rules.scoring.riichi_deposit
    deltas = list(_add(deltas, returned))
    state = replace(
        state,
        kyoutaku=state.kyoutaku - sum(returned),
        riichi_deposits=0,
        final_penalties=tuple(penalties),
    )
    mode = rules.penalties.chombo_dealer
    dealer_passes = state.dealer in seats and (
        mode == "dealer_passes"
        or (mode == "dealer_passes_except_all_last" and not _all_last(state))
    )
    return _end_hand(
        state,
        "chombo",
        deltas,
        kyoutaku_taken=False,
        dealer_repeats=not dealer_passes,
        detail={"seats": list(seats), "reason": reason},
        replay=not dealer_passes,
    )


def _false_call(state: GameState, seat: int) -> Handled:
    rules = state.rules
    bad = _seat_refusal(state, seat, "false call")
    if bad is not None:
        return bad
    mode = rules.penalties.false_call
    amount = rules.penalties.false_call_deposit
    if mode == "deposit" and state.scores[seat] >= amount:
        deltas = [0] * state.players
        deltas[seat] = -amount
        new = replace(
            state,
            scores=_add(state.scores, deltas),
            hand_payments=_add(state.hand_payments, deltas),
            kyoutaku=state.kyoutaku + amount,
        )
        return new, [Payment("false_call", tuple(deltas), to_table=amount)]
    if mode in ("deposit", "dead_hand"):
        if seat in state.dead:
            return state, [Noted("false_call")]
        return replace(state, dead=(*state.dead, seat)), [DeadHand(seat, "false call")]
    return state, [Noted("false_call")]


def _stop(state: GameState) -> Handled:
    if not state.stop_offered:
        return Refusal(
            "stop_not_allowed", "only the all-last dealer may stop, right after a win or tenpai"
        )
    final = finish(state, "dealer_stop")
    return replace(state, finished=True, final=final, stop_offered=False), [GameOver(final)]


def _time_up(state: GameState) -> Handled:
    if state.rules.game.time_limit_minutes is None:
        return Refusal("no_clock", f"{state.rules.name} has no game clock")
    if state.last_hand:
        return state, [Noted("time_up")]
    return replace(state, last_hand=True), [Noted("time_up")]


# --- the end of a hand and of the game -------------------------------------------------


def _turn_order(state: GameState) -> list[int]:
    return [(state.dealer + i) % state.players for i in range(state.players)]


def _last_round(state: GameState) -> int | None:
    """Index of the last regular round, or None when rounds never end the game (kantan)."""
    length = state.rules.game.length
    return {"east": 0, "east_south": 1}.get(length)


def _all_last(state: GameState) -> bool:
    last = _last_round(state)
    if last is None:
        return False
    if state.round_index > last and state.rules.game.extension_dealer_repeat_first:
        # Every extension hand is played as the last one: the dealer's top stop applies.
        return True
    return state.round_index >= last and state.dealer == state.players - 1


def _add(a: Sequence[int], b: Sequence[int]) -> tuple[int, ...]:
    return tuple(x + y for x, y in zip(a, b, strict=True))


def _sole_top(scores: Sequence[int], seat: int) -> bool:
    return all(scores[seat] > s for i, s in enumerate(scores) if i != seat)


def _end_hand(
    state: GameState,
    result: HandResult,
    deltas: Sequence[int],
    *,
    kyoutaku_taken: bool,
    dealer_repeats: bool,
    detail: dict[str, object],
    winners: Sequence[int] = (),
    tenpai: frozenset[int] = frozenset(),
    replay: bool = False,
    won: bool = False,
    chips: Sequence[int] = (),
) -> Handled:
    """Settle a hand and move the game on. ``won``: a draw that flows like a win (a
    nagashi under ``nagashi_flow = "win"``); ron and tsumo always do. ``chips``: each
    seat's chip change (none when empty)."""
    rules = state.rules
    won = won or result in ("ron", "tsumo")
    hand_chips = tuple(chips) or (0,) * state.players
    record = HandRecord(
        wind=state.wind,
        number=state.dealer + 1,
        honba=state.honba,
        result=result,
        deltas=_add(deltas, state.hand_payments),
        detail=dict(detail),
        chips=hand_chips,
    )
    scores = _add(state.scores, deltas)
    played = replace(
        state,
        scores=scores,
        chips=_add(state.chips, hand_chips),
        hand_payments=(0,) * state.players,
        kyoutaku=0 if kyoutaku_taken else state.kyoutaku,
        riichi=(),
        riichi_deposits=0,
        pending_riichi=None,
        dead=(),
        bust_after_hand=(),
        wall=None,
        tiles=None,
        hands_played=state.hands_played + 1,
    )
    effects: list[Effect] = [HandSettled(record)]
    reason = _game_end_reason(state, played, result, winners, tenpai)
    if reason is None and not replay:
        reason, offered = _all_last_choice(state, played, result, winners, tenpai, dealer_repeats)
        if offered:
            effects.append(StopOffered(state.dealer))
            played = replace(played, stop_offered=True)
    if reason is None and replay:
        honba = state.honba + (1 if rules.penalties.chombo_honba == "plus_one" else 0)
        return replace(played, honba=honba if rules.flow.honba else 0), effects
    if reason is None:
        nxt = _advance(played, won, dealer_repeats)
        reason = _round_end_reason(state, nxt, dealer_repeats)
        if reason is None:
            nxt, start_effects = with_hand_start(state, nxt)
            return nxt, effects + start_effects
    final = finish(played, reason, made_bust=state.bust_after_hand)
    effects.append(GameOver(final))
    return replace(played, finished=True, final=final, stop_offered=False), effects


def _game_end_reason(
    before: GameState,
    played: GameState,
    result: HandResult,
    winners: Sequence[int],
    tenpai: frozenset[int],
) -> str | None:
    """Reasons that end the game right after a hand, whatever the round."""
    rules = before.rules
    game = rules.game
    scores = played.scores
    if game.bust == "below_zero" and min(scores) < 0:
        return "bust"
    if before.bust_after_hand:
        return "bust"
    if game.cold_game_at is not None and max(scores) >= game.cold_game_at:
        return "cold_game"
    leaders = list(winners) if result in ("ron", "tsumo") else sorted(tenpai)
    if game.cold_game_east_lead is not None and before.round_index == 0:
        for seat in leaders:
            others = [s for i, s in enumerate(scores) if i != seat]
            if scores[seat] - max(others) >= game.cold_game_east_lead:
                return "cold_game"
    if before.last_hand:
        return "time_up"
    sudden_death = game.length == "east_then_sudden_death" and before.round_index >= 1
    if sudden_death and any(_sole_top(scores, s) for s in leaders):
        return "sudden_death"
    return None


def _all_last_choice(
    before: GameState,
    played: GameState,
    result: HandResult,
    winners: Sequence[int],
    tenpai: frozenset[int],
    dealer_repeats: bool,
) -> tuple[str | None, bool]:
    """The all-last dealer who repeats: a forced end when top, or the choice to stop."""
    game = before.rules.game
    if not dealer_repeats or not _all_last(before):
        return None, False
    dealer = before.dealer
    won = result in ("ron", "tsumo") and dealer in winners
    is_tenpai = result == "draw" and dealer in tenpai
    reached = game.extension == "none" or played.scores[dealer] >= game.return_points
    if (
        _sole_top(played.scores, dealer)
        and reached
        and (
            (won and game.all_last_top_ends_on_win)
            or (is_tenpai and game.all_last_top_ends_on_tenpai)
        )
    ):
        return "all_last_top", False
    offered = (won and game.all_last_agari_yame) or (is_tenpai and game.all_last_tenpai_yame)
    return None, offered


def _advance(played: GameState, won: bool, dealer_repeats: bool) -> GameState:
    rules = played.rules
    if dealer_repeats:
        dealer, round_index = played.dealer, played.round_index
    else:
        dealer = (played.dealer + 1) % played.players
        round_index = played.round_index + (1 if dealer == 0 else 0)
    if not rules.flow.honba or (won and not dealer_repeats):
        honba = 0
    else:
        honba = played.honba + 1
    return replace(played, dealer=dealer, round_index=round_index, honba=honba)


def _round_end_reason(before: GameState, nxt: GameState, dealer_repeats: bool) -> str | None:
    """Whether moving on to ``nxt`` ends the game (last round over, extension over)."""
    game = before.rules.game
    last = _last_round(before)
    if last is None:
        return None
    if nxt.round_index <= last:
        return None
    if game.extension == "none":
        return "last_round"
    if dealer_repeats and game.extension_dealer_repeat_first and before.round_index > last:
        # Tenhou: 親の連荘+子の3万点超えが同時に発生した場合は連荘を優先する. A dealer who
        # is top with the return has already been stopped by the all-last rule.
        return None
    if max(nxt.scores) >= game.return_points:
        return "last_round" if before.round_index <= last else "extension_end"
    if nxt.round_index > last + 1:
        return "extension_end"
    return None


def with_hand_start(before: GameState, nxt: GameState) -> tuple[GameState, list[Effect]]:
    """Add kantan's West bonus pot when a new hand from West 1 on starts."""
    step_points = nxt.rules.game.west_bonus_step
    new_hand = (nxt.round_index, nxt.dealer) != (before.round_index, before.dealer)
    if not step_points or nxt.round_index < 2 or not new_hand:
        return nxt, []
    count = (nxt.round_index - 2) * nxt.players + nxt.dealer + 1
    pot = step_points * count
    zero = (0,) * nxt.players
    return replace(nxt, kyoutaku=nxt.kyoutaku + pot), [Payment("west_bonus", zero, to_table=pot)]


__all__ = ["Step", "ranking", "step"]

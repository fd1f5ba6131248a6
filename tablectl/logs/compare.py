"""Two records of one game compared result by result: a log played elsewhere and the
table's own export of it (``tablectl journal export --format tenhou6``, read back).

Pure.  What counts is what a game record says a hand was worth: each hand's place
(round, honba, sticks), its start scores, its result (each winner, who paid, han, fu,
points and deltas; or the kind of draw and its deltas), then the final scores.  The
actions are not compared (the table plays them from the log); neither are the yaku,
whose names two records may spell differently for the same han.
"""

from __future__ import annotations

from tablectl.logs.game import DrawnHand, LogGame, LogHand, Win

__all__ = ["differences"]


def _win_differences(where: str, log: Win, table: Win) -> list[str]:
    out = []
    for field in ("seat", "source", "han", "points", "deltas", "pao"):
        want, got = getattr(log, field), getattr(table, field)
        if want != got:
            out.append(f"{where}: {field} {got!r}, the log {want!r}")
    if log.fu and table.fu and log.fu != table.fu:  # tenhou.net/6 writes no fu for limits
        out.append(f"{where}: fu {table.fu}, the log {log.fu}")
    return out


def _hand_differences(log: LogHand, table: LogHand) -> list[str]:
    where = log.name
    out = []
    for field in ("round_index", "honba", "sticks", "dealer", "scores"):
        want, got = getattr(log, field), getattr(table, field)
        if want != got:
            out.append(f"{where}: {field} {got!r}, the log {want!r}")
    if isinstance(log.result, DrawnHand) or isinstance(table.result, DrawnHand):
        if log.result != table.result:
            out.append(f"{where}: result {table.result!r}, the log {log.result!r}")
        return out
    if len(log.result) != len(table.result):
        out.append(f"{where}: {len(table.result)} winners, the log {len(log.result)}")
        return out
    for n, (want, got) in enumerate(zip(log.result, table.result, strict=True), 1):
        out += _win_differences(f"{where} win {n}" if len(log.result) > 1 else where, want, got)
    return out


def differences(log: LogGame, table: LogGame) -> list[str]:
    """Where ``table`` (the table's record) differs from ``log``: one line each, empty
    when they agree.  Final scores are compared where both records have them."""
    out = []
    if len(log.hands) != len(table.hands):
        out.append(f"{len(table.hands)} hands, the log {len(log.hands)}")
    for want, got in zip(log.hands, table.hands, strict=False):
        out += _hand_differences(want, got)
    if (
        log.final_scores is not None
        and table.final_scores is not None
        and log.final_scores != table.final_scores
    ):
        out.append(f"final scores {list(table.final_scores)}, the log {list(log.final_scores)}")
    return out

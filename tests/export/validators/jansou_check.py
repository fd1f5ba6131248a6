"""Replay mjai logs in jansou (PyPI ``jansou`` 0.14.0, MIT), an engine independent of
tablectl: every action must be legal and every win must score, under the preset's
rules, what the log's deltas say.  Run by tests/export/test_other_tools.py with the
python of its own venv; never imported by tablectl.

``python jansou_check.py SPEC.json`` where SPEC is ``[{"file": F, "rules": {...jansou
Rules fields...}, "honba_ron": N, "honba_tsumo_each": N, "honba_to": "nearest" |
"each"}, ...]``; prints one JSON object per file: ``{"file": F, "decisions": n, "wins":
n, "errors": [why, ...]}``.

jansou reads the rules from the ``rules`` object of ``start_game`` (its extension to
mjai); without one it plays tenhou.net's rules, red fives included.  The check puts the
preset's rules there, in a copy of the log.  jansou knows honba only as 0 or 100 per
payer, so the value a win should score is worked out here from the log's deltas and the
preset's honba: the winner's gain, less the deposits it collects (the deltas' sum) and
its honba.
"""

import json
import sys

from jansou.io.mjai import parse_mjai
from jansou.io.paifu import replay_round
from jansou.io.replay import replay_paifu
from jansou.scoring.score import ScoringError, score


def with_rules(text, rules):
    lines = text.splitlines()
    start = json.loads(lines[0])
    start["rules"] = rules
    return "\n".join([json.dumps(start), *lines[1:]]) + "\n"


def honba_of(spec, hora_events):
    """The honba each hora's winner collects, in log order."""
    out = []
    for hand in hora_events:
        honba, wins = hand
        for number, win in enumerate(wins):
            if number and spec["honba_to"] == "nearest":
                out.append(0)
            elif win["actor"] == win["target"]:
                out.append(spec["honba_tsumo_each"] * 3 * honba)
            else:
                out.append(spec["honba_ron"] * honba)
    return out


def hands_with_wins(text):
    hands = []
    for line in text.splitlines():
        event = json.loads(line)
        if event["type"] == "start_kyoku":
            hands.append((event["honba"], []))
        elif event["type"] == "hora":
            hands[-1][1].append(event)
    return [h for h in hands if h[1]]


def check(spec):
    with open(spec["file"], encoding="utf-8") as f:
        text = f.read()
    errors = []
    paifu = parse_mjai(with_rules(text, spec["rules"]).encode())
    decisions = 0
    try:
        for _ in replay_paifu(paifu):
            decisions += 1
    except Exception as exc:
        errors.append(f"replay: {type(exc).__name__}: {exc}")
    honba = honba_of(spec, hands_with_wins(text))
    wins = 0
    for round_number, round_log in enumerate(paifu.rounds):
        for record in replay_round(round_log, paifu.rules, paifu.player_count):
            deltas = record.expected_deltas
            expected = deltas[record.winner] - sum(deltas) - honba[wins]
            wins += 1
            try:
                result = score(record.hand, record.winning_tile, record.context)
            except ScoringError as exc:
                errors.append(f"round {round_number}: seat {record.winner}: unscorable: {exc}")
                continue
            payment = result.payment
            value = payment.total - payment.honba - payment.sticks
            if value != expected:
                errors.append(
                    f"round {round_number}: seat {record.winner} from {record.from_seat}: "
                    f"jansou scores {value}, the log's deltas {list(deltas)} say {expected}"
                )
    return {"file": spec["file"], "decisions": decisions, "wins": wins, "errors": errors}


def main(spec_path):
    with open(spec_path, encoding="utf-8") as f:
        specs = json.load(f)
    for spec in specs:
        try:
            report = check(spec)
        except Exception as exc:
            report = {
                "file": spec["file"],
                "decisions": 0,
                "wins": 0,
                "errors": [f"{type(exc).__name__}: {exc}"],
            }
        print(json.dumps(report), flush=True)


if __name__ == "__main__":
    main(sys.argv[1])

"""The daemon sends its games to the ledger: a simulated sanma-free table played by bots,
the daemon with MQTT, the ledger service on SQLite, one real Mosquitto, all in this
process. The game arrives once, as the journal recorded it, and the night's close of the
ledger equals the table's own records."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import io
import json
from datetime import datetime
from pathlib import Path

from hw_sim import SimTable
from tablectl.cli import main as cli_main
from tablectl.config import config_for
from tablectl.daemon import Daemon
from tablectl.journal import Journal
from tablectl.ledger.db import open_database
from tablectl.ledger.service import LedgerService
from tablectl.ledger.settings import LedgerSettings
from tablectl.ledger.store import LedgerStore
from tablectl.mqtt_settings import MqttSettings
from tablectl.rules.loader import load_rules
from tests.helpers import Broker


def run_cli(argv: list[str]) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert cli_main(argv) == 0
    return out.getvalue()


async def test_a_game_the_daemon_finishes_reaches_the_ledger_once(
    mosquitto: Broker, tmp_path: Path
) -> None:
    sim = SimTable(load_rules("sanma-free"), 5, max_games=1)
    url = await sim.start_pty()
    settings = MqttSettings(host="127.0.0.1", port=mosquitto.port, topic_prefix="parlor")
    journal_path = tmp_path / "journal.sqlite3"
    config = config_for(url, "sanma-free", journal_path, table_id="t3", mqtt=settings)
    config = dataclasses.replace(config, seat_names=("Aoki", "Baba", "Chiba"))
    database = str(tmp_path / "ledger.sqlite3")
    ledger = LedgerService(LedgerSettings(database=database, broker_port=mosquitto.port,
                                          prefix="parlor"))  # fmt: skip
    ledger_task = asyncio.create_task(ledger.run())
    # The daemon runs on after the game (the bots stop): it sends the game once a ledger
    # is online, and gets the acknowledgement.
    daemon = Daemon(config, claim_window_s=0.05)
    task = asyncio.create_task(daemon.run())
    try:
        async with asyncio.timeout(90):
            await sim.wait_games(1)
            # The acknowledgement comes back and is journalled; until then it is pending.
            while True:
                with Journal.open(journal_path, readonly=True) as journal:
                    pending = journal.query("SELECT 1 FROM ledger_outbox WHERE revision > acked")
                    stored = journal.query("SELECT COUNT(*) FROM ledger_outbox")[0][0]
                if stored and not pending:
                    break
                await asyncio.sleep(0.05)
    finally:
        daemon.stop.set()
        await task
        await sim.close()
        ledger.stop()
        await ledger_task
    assert (ledger.stored, ledger.duplicates, ledger.refused) == (1, 0, 0)
    store = LedgerStore(open_database(database))
    try:
        [(table, game_id, revision, state)] = store.games()
        held = store.db.query("SELECT final, finished_at FROM ledger_games")[0]
    finally:
        store.db.close()
    with Journal.open(journal_path, readonly=True) as journal:
        [(record_id, final, finished_at)] = journal.query(
            "SELECT game_id, final, finished_at FROM records"
        )
    assert (table, game_id, revision, state) == ("t3", record_id, 1, "finished")
    assert json.loads(held[0]) == json.loads(final)
    assert held[1] == finished_at
    [record] = json.loads(run_cli(["records", "--journal", str(journal_path), "--json"]))
    day = datetime.fromtimestamp(finished_at).date().isoformat()
    night = json.loads(run_cli(["ledger", "close", "--day", day, "--db", database,
                                "--cutoff-hour", "0", "--json"]))  # fmt: skip
    assert [
        (p["player"], p["games"], p["places"].index(1) + 1, p["score"], p["result"])
        for p in night["players"]
    ] == [
        (name, 1, record["ranks"][seat], record["scores"][seat], record["result"][seat])
        for seat, name in enumerate(record["seats"])
    ]
    # Money is in the close exactly as the record holds it (sanma-free settles in P): the
    # record's final.money per seat, or nothing where the record has none.
    money = json.loads(final).get("money")
    fees = None if money is None else -sum(money["fee"])
    assert night["tables"] == [{"table": "t3", "games": 1, "fees": fees}]
    assert [(p["chips"], p["fees"], p["p"]) for p in night["players"]] == [
        (None, None, None) if money is None
        else (money["chips"][seat], -money["fee"][seat], money["total"][seat])
        for seat in range(3)
    ]  # fmt: skip

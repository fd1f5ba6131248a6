"""The parlor's ledger: every finished game of every table, in one database.

* :mod:`~tablectl.ledger.db`: SQLite or PostgreSQL behind one small interface;
* :mod:`~tablectl.ledger.store`: the tables, and each game stored once by revision;
* :mod:`~tablectl.ledger.service`: the service on the broker (``tablectl ledger run``);
* :mod:`~tablectl.ledger.close`: the night's close (``tablectl ledger close``);
* :mod:`~tablectl.ledger.settings` and :mod:`~tablectl.ledger.cli`: its settings and
  command line.

The tables' side (the journal's outbox and the resends) is :mod:`tablectl.journal_ledger`
and :mod:`tablectl.mqtt_ledger`. See docs/ledger.md.
"""

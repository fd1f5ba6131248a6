"""``tablectl dashboard``: a web page for the parlor's staff showing every table live.

A separate process from the table daemon: it subscribes to the parlor's broker
(:mod:`.mqtt_in`), folds the messages into a model (:mod:`.model`) and serves a page with
a live stream (:mod:`.web`). This package's ``__init__`` imports nothing, so ``tablectl
run`` never loads aiohttp. See docs/dashboard.md.
"""

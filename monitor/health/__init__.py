"""Is slamon doing its job: a scheduler leads, the periodic tasks run on schedule, deliveries
drain and feeds are polled, within the bounds of the config's ``watchdog`` section.

``read.read_snapshot`` reads what the judgement needs in one short read transaction into a
``model.Snapshot``; ``judge.judge`` is the pure judgement over it (a ``model.Judgement`` with a
short sentence per failing check); ``assess.assess`` adds the database and the broker. The
same judgement answers /healthz, /metrics and the watchdog ping (``workers/watchdog.py``).
"""

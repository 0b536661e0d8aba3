"""The read model of what happened: the one place that reads timelines.

Every surface (the monthly report, the status page, ``/api/v1/sla``, ``/metrics``, the SLA
alerts) asks these modules when a target was observed, down or unusable (``spans``), when it
existed (``lifetimes``), what its training job reported (``heartbeats``), which provider
incidents touched it (``incidents``) and which maintenance windows applied (``maintenance``).
Read-only: it imports only ``monitor.db`` and ``monitor.sla``; the writers (the probe round's
quorum and recorder, the feed store, the heartbeat endpoint, the history import) own the rows.
``generation`` tells a reader whether anything it cached may have changed.
"""

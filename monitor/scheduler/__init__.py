"""Any number of schedulers, one leader.

Every scheduler (``slamon beat``, ``slamon worker --beat``, ``slamon run``'s) asks the
database for the lease (``lease.hold``); the one that holds it leads, renews it every third of
``schedule.lease`` and sends the periodic tasks, the others stand by and take it once it has
expired. Each message the leader sends carries the lease's fencing token and its slot; a
worker runs it only if the token is still the lease's and the slot has not run yet
(``lease.admit``), so a leader that was paused past its lease and wakes sends nothing that
runs, and no slot of a periodic task runs twice. Slots lie on a grid (``slots``): whichever
scheduler leads computes the same slots, and a new leader carries on where the old one stopped.
"""

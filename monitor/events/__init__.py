"""What a slamon console prints: one line per event that matters, with a UTC time, a fixed
event word and the facts::

    2026-12-01 12:00:03Z  outage opened     trainer-0 (reachable) at 12:00:01Z: connect refused

The words are fixed so that a person can scan the column and a script can grep it. The text of
each event is built by a pure ``*_text`` function in ``words`` (tested as tables); the emitters
in ``emitting`` log it to the ``slamon.events`` logger, which every long-running slamon process
prints at INFO whatever ``--log-level`` says (``console.configure_console``). ``episodes`` lets
a failure that repeats every second print once. Nothing here touches the database.

Events found inside a transaction (an outage, an incident, an alert) are printed only when that
transaction commits (``emitting.after_commit``): a probe round that is rolled back and retried
must not print its outage twice, and one that is rolled back for good must not print it at all.
"""

"""The SLA vocabulary: the ground floor every other layer stands on (docs/architecture.md).

Pure, no I/O, importing nothing of slamon's but itself: ``intervals`` is the span algebra,
``months`` bounds a calendar month in UTC, ``times`` reads an ISO 8601 time that must carry its
offset (``parse_aware``), ``policy`` is an SLA policy as data, ``terms`` holds the providers'
published terms as built-in policies (one module per provider), ``policy_config`` reads the
user's own from config, ``math`` turns outages into uptime, credits and budgets,
``maintenance`` says which planned windows apply to a target, and ``response`` holds incident
response times and the percentiles they are summarised with.
"""

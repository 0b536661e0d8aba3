"""The pure SLA engine (docs/DESIGN.md, "Availability and SLA math"): spans, policies, arithmetic.

``intervals`` holds the span algebra, ``policy`` the policies as data (built-ins and user
policies from config), ``math`` the arithmetic from outages to uptime, credits and budgets.
Incident response times are computed in ``monitor.feeds.response``; they are re-exported here
so SLA callers have one place to import from.
"""

from monitor.feeds.response import (
    Lifecycle,
    lifecycle,
    status_page_lag,
    summarize,
    time_to_acknowledge,
    time_to_resolve,
)

__all__ = [
    "Lifecycle",
    "lifecycle",
    "status_page_lag",
    "summarize",
    "time_to_acknowledge",
    "time_to_resolve",
]

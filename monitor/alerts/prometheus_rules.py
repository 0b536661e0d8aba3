"""Prometheus recording and alerting rules over slamon's own series (pure): what
``slamon export prometheus-rules`` writes, so a team that pages through Prometheus and
Alertmanager gets slamon's SLA alerts from its own stack.

Availability over a window is ``1 − increase(downtime) / increase(observed)`` on the two
interval-exact counters ``/metrics`` serves (``monitor/metrics.py``): downtime as the monthly
report counts it against uptime, observed time as the report's denominator, so a window's figure
is the report's arithmetic over that window. A target's burn rate is its error ratio over its SLA
objective's allowed share (``slamon_target_sla_objective_ratio``, served for every target under
an instance-scoped policy, as slamon's own ``sla_burn`` judges), and the burn alerts are slamon's
window pairs (``alerts.burn_windows``: 14.4× over 1 h and 5 min pages, 6× over 6 h and 30 min
warns), each firing only where no earlier pair fires, as slamon raises one ``sla_burn`` with the
first pair's severity.

Two differences from slamon's own rule, both on the side of the report: time in a maintenance
window is not downtime here, and time nobody observed is left out of the window rather than
counted as up. And slamon asks for ``burn_min_samples`` probe results in the short window; here a
window with no observed time has no ratio at all (absent), so it cannot page either.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta
from typing import Any

import yaml

from monitor.alerts.sla_rules import BurnWindow

OBSERVED = "slamon_target_observed_seconds_total"
DOWNTIME = "slamon_target_downtime_seconds_total"
OBJECTIVE = "slamon_target_sla_objective_ratio"
TARGET_UP = "slamon_target_up"
BY = "target, provider, region, pool"  # the target metrics' labels (a replica's are dropped)
MONTH = timedelta(days=30)  # the month-ish window: Prometheus has no calendar month
LONG_INTERVAL = "5m"  # the 30-day window reads a month of samples: evaluated less often

HEADER = """\
# Prometheus rules for slamon, written by `slamon export prometheus-rules` from the config's
# alerts.burn_windows; regenerate rather than edit. Load with rule_files: in prometheus.yml.
"""


def duration(window: timedelta) -> str:
    """A Prometheus duration for ``window``: ``5m``, ``6h``, ``30d``, ``90s`` (the largest unit
    that divides it exactly). Raises ``ValueError`` below a whole second."""
    seconds = window.total_seconds()
    if seconds < 1 or seconds != int(seconds):
        raise ValueError(f"a rule window must be whole seconds, got {seconds:g} s")
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60), ("s", 1)):
        if seconds % size == 0:
            return f"{int(seconds) // size}{unit}"
    raise AssertionError("unreachable: every whole second divides by 1")


def error_ratio(window: timedelta) -> str:
    """The recorded share of the observed time that was downtime over ``window``."""
    return f"target:slamon_downtime:ratio_rate{duration(window)}"


def availability(window: timedelta) -> str:
    """The recorded availability over ``window`` (1 − the error ratio)."""
    return f"target:slamon_availability:ratio_rate{duration(window)}"


def burn_rate(window: timedelta) -> str:
    """The recorded burn rate over ``window``: the error ratio over the objective's allowed
    share (1.0 spends the month's budget exactly by its end)."""
    return f"target:slamon_burn_rate:ratio_rate{duration(window)}"


def windows_of(pairs: Sequence[BurnWindow]) -> list[timedelta]:
    """Every window the burn pairs use, shortest first, and the month-ish one."""
    return sorted({*(w.long for w in pairs), *(w.short for w in pairs), MONTH})


def rule_groups(pairs: Sequence[BurnWindow]) -> dict[str, Any]:
    """The rule file for the burn window ``pairs`` (in the order slamon judges them): the
    availability, error ratio and burn rate of every target over each window, the burn alerts
    and ``target_down``. Raises ``ValueError`` for an empty ``pairs``."""
    if not pairs:
        raise ValueError("no burn windows: alerts.burn_windows needs at least one pair")
    short = [w for w in windows_of(pairs) if w != MONTH]
    month = [*_ratios(MONTH), *_burn(MONTH)]
    return {
        "groups": [
            {
                "name": "slamon-availability",
                "rules": [rule for w in short for rule in (*_ratios(w), *_burn(w))],
            },
            {"name": "slamon-availability-30d", "interval": LONG_INTERVAL, "rules": month},
            {"name": "slamon-alerts", "rules": [*_burn_alerts(pairs), _target_down()]},
        ]
    }


class _Dumper(yaml.SafeDumper):
    """Multi-line expressions as literal blocks (``|``), as people write rule files."""


def _text(dumper: yaml.SafeDumper, text: str) -> yaml.Node:
    style = "|" if "\n" in text else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", text, style=style)


_Dumper.add_representer(str, _text)


def render(groups: dict[str, Any]) -> str:
    """The rule file as YAML, with a header saying where it came from."""
    body = yaml.dump(groups, Dumper=_Dumper, sort_keys=False, width=1000, allow_unicode=True)
    return HEADER + body


def _increase(counter: str, window: timedelta) -> str:
    return f"sum by ({BY}) (increase({counter}[{duration(window)}]))"


def _ratios(window: timedelta) -> list[dict[str, str]]:
    """Downtime over observed time (absent while nothing was observed: unknown is no
    figure, never 100 %), and its complement."""
    ratio = f"{_increase(DOWNTIME, window)}\n/\n({_increase(OBSERVED, window)} > 0)\n"
    return [
        {"record": error_ratio(window), "expr": ratio},
        {"record": availability(window), "expr": f"1 - {error_ratio(window)}"},
    ]


def _burn(window: timedelta) -> list[dict[str, str]]:
    """The error ratio over the allowed share; a 100 % objective allows none, so any downtime
    burns at +Inf and none at NaN (no alert), as slamon's ``burn_rate`` has it."""
    objective = f"max by ({BY}, sla) ({OBJECTIVE})"
    expr = f"{error_ratio(window)}\n/ on ({BY}) group_left (sla)\n(1 - {objective})\n"
    return [{"record": burn_rate(window), "expr": expr}]


def _burning(pair: BurnWindow) -> str:
    factor = f"{pair.factor:g}"
    return f"{burn_rate(pair.long)} >= {factor} and {burn_rate(pair.short)} >= {factor}"


def _burn_alerts(pairs: Sequence[BurnWindow]) -> list[dict[str, Any]]:
    """One ``SlamonSlaBurn`` per pair, firing where its long and short windows both burn at
    its factor or more and no earlier pair fires (slamon raises one ``sla_burn``, with the
    first firing pair's severity)."""
    alerts = []
    for k, pair in enumerate(pairs):
        expr = f"({_burning(pair)})"
        for earlier in pairs[:k]:
            expr += f"\nunless on ({BY})\n({_burning(earlier)})"
        long, short = duration(pair.long), duration(pair.short)
        summary = (
            f"{{{{ $labels.target }}}} is burning its error budget at "
            f'{{{{ $value | printf "%.1f" }}}}× over {long} (page at ≥ {pair.factor:g}×)'
        )
        alerts.append(
            {
                "alert": "SlamonSlaBurn",
                "expr": expr + "\n",
                "labels": {
                    "severity": pair.severity,
                    "rule": "sla_burn",
                    "long_window": long,
                    "short_window": short,
                },
                "annotations": {
                    "summary": summary,
                    "description": (
                        f"Over both {long} and {short} the target's downtime spends its SLA "
                        f"policy's ({{{{ $labels.sla }}}}) monthly error budget at "
                        f"{pair.factor:g}× the pace that would use it up by the month's end."
                    ),
                },
            }
        )
    return alerts


def _target_down() -> dict[str, Any]:
    """``target_down``: slamon's confirmed verdict, as ``/metrics`` serves it (0 while down;
    absent while unknown, which is not down). slamon confirms before it says down, so the
    alert needs no ``for``."""
    return {
        "alert": "SlamonTargetDown",
        "expr": f"max by ({BY}) ({TARGET_UP}) == 0\n",
        "labels": {"severity": "critical", "rule": "target_down"},
        "annotations": {"summary": "{{ $labels.target }} is down"},
    }

"""Prometheus rules from the config's burn windows (``monitor/alerts/prometheus_rules.py``):
the rule file shipped in ``deploy/prometheus`` is what the export writes for
slamon.example.yaml, and Debian's promtool accepts it (``check rules``) and runs the unit tests
shipped beside it (``test rules``: the burn alerts fire, give way and stay quiet as slamon's
``sla_burn`` would)."""

from __future__ import annotations

import shutil
from datetime import timedelta
from pathlib import Path

import pytest
import yaml

from monitor.alerts.prometheus_rules import duration, render, rule_groups, windows_of
from monitor.alerts.sla_rules import BURN_WINDOWS, BurnWindow, burn_windows
from monitor.config import parse_config
from tests.monitor.cli.test_errors import slamon
from tests.prometheus import RULES, promtool

ROOT = Path(__file__).parents[3]
SHIPPED = RULES / "slamon.rules.yml"
UNIT_TESTS = RULES / "slamon.rules.test.yml"
SMALL_FLEET = """
alerts:
  burn_windows:
    - {long: 10m, short: 90s, factor: 14.4, severity: critical}
    - {long: 2h, short: 10m, factor: 6, severity: warning}
    - {long: 1d, short: 2h, factor: 1.5, severity: info}
"""


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        pytest.param(300, "5m", id="minutes"),
        pytest.param(3600, "1h", id="an-hour-not-60m"),
        pytest.param(90, "90s", id="not-whole-minutes"),
        pytest.param(30 * 86400, "30d", id="days"),
        pytest.param(36 * 3600, "36h", id="not-whole-days"),
    ],
)
def test_a_window_is_written_in_its_largest_whole_unit(seconds: int, text: str) -> None:
    assert duration(timedelta(seconds=seconds)) == text


@pytest.mark.parametrize("seconds", [0, 0.5, 1.5], ids=["empty", "under-a-second", "fraction"])
def test_a_window_of_no_whole_seconds_is_refused(seconds: float) -> None:
    with pytest.raises(ValueError, match="whole seconds"):
        duration(timedelta(seconds=seconds))


def test_the_windows_are_the_burn_pairs_and_the_month_shortest_first() -> None:
    assert [duration(w) for w in windows_of(BURN_WINDOWS)] == ["5m", "30m", "1h", "6h", "30d"]


def test_each_configured_pair_is_one_alert_that_gives_way_to_the_pairs_before_it() -> None:
    pairs = burn_windows(parse_config(SMALL_FLEET).alerts.burn_windows)
    groups = rule_groups(pairs)["groups"]
    recorded = [r["record"] for g in groups for r in g["rules"] if "record" in r]
    assert [r for r in recorded if r.startswith("target:slamon_burn_rate:")] == [
        f"target:slamon_burn_rate:ratio_rate{w}" for w in ("90s", "10m", "2h", "1d", "30d")
    ]
    alerts = [r for r in groups[-1]["rules"] if r["alert"] == "SlamonSlaBurn"]
    assert [(a["labels"]["severity"], a["labels"]["long_window"]) for a in alerts] == [
        ("critical", "10m"),
        ("warning", "2h"),
        ("info", "1d"),
    ]
    assert [a["expr"].count("unless on") for a in alerts] == [0, 1, 2]
    assert (
        "ratio_rate1d >= 1.5 and target:slamon_burn_rate:ratio_rate2h >= 1.5" in alerts[2]["expr"]
    )


def test_no_burn_windows_is_refused() -> None:
    with pytest.raises(ValueError, match="no burn windows"):
        rule_groups(())


def test_the_rendered_file_reads_back_as_the_groups() -> None:
    groups = rule_groups([BurnWindow(timedelta(hours=1), timedelta(minutes=5), 14.4, "page")])
    assert yaml.safe_load(render(groups)) == groups


def test_the_shipped_rules_are_what_the_export_writes_for_the_example_config(
    tmp_path: Path,
) -> None:
    """Regenerate with: slamon export prometheus-rules --config slamon.example.yaml
    --out deploy/prometheus/slamon.rules.yml"""
    done = slamon("export", "prometheus-rules", "--config", "slamon.example.yaml", cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert done.stdout == SHIPPED.read_text()
    out = tmp_path / "rules.yml"
    done = slamon("export", "prometheus-rules", "--config", "slamon.example.yaml", "--out",
                  str(out), cwd=ROOT)  # fmt: skip
    assert (done.returncode, done.stdout, out.read_text()) == (0, "", SHIPPED.read_text())


def test_promtool_accepts_the_shipped_rules() -> None:
    code, said = promtool("check", "rules", str(SHIPPED))
    assert code == 0, said
    assert "SUCCESS: 18 rules found" in said


def test_promtool_accepts_the_rules_of_other_burn_windows(tmp_path: Path) -> None:
    pairs = burn_windows(parse_config(SMALL_FLEET).alerts.burn_windows)
    (tmp_path / "rules.yml").write_text(render(rule_groups(pairs)))
    code, said = promtool("check", "rules", str(tmp_path / "rules.yml"))
    assert code == 0, said
    assert "SUCCESS: 19 rules found" in said  # 5 windows x 3 records, 3 burn alerts, 1 down


def test_the_shipped_unit_tests_pass_on_the_shipped_rules() -> None:
    code, said = promtool("test", "rules", UNIT_TESTS.name, cwd=RULES)
    assert code == 0, said
    assert "SUCCESS" in said


@pytest.mark.parametrize(
    ("change", "what"),
    [
        pytest.param((">= 14.4", ">= 20"), "a page at another factor", id="factor"),
        pytest.param(("unless on", "or on"), "a warning beside the page", id="one-alert"),
        pytest.param(("> 0)", ">= 0)"), "a figure for unobserved time", id="unknown"),
        pytest.param(("ratio_rate5m >= 14.4", "ratio_rate1h >= 14.4"), "no short window",
                     id="short-window"),
    ],
)  # fmt: skip
def test_the_unit_tests_fail_on_rules_that_alert_otherwise(
    tmp_path: Path, change: tuple[str, str], what: str
) -> None:
    """The shipped tests can fail: each changed rule file here breaks a rule slamon's own
    ``sla_burn`` keeps, and promtool says so."""
    text = SHIPPED.read_text()
    assert change[0] in text, what
    (tmp_path / SHIPPED.name).write_text(text.replace(change[0], change[1]))
    shutil.copy(UNIT_TESTS, tmp_path / UNIT_TESTS.name)
    code, said = promtool("test", "rules", UNIT_TESTS.name, cwd=tmp_path)
    assert code == 1, what
    assert "FAILED" in said, what

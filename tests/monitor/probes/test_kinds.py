"""Probe kinds are records in one registry: a new kind is its module plus one line.

The toy kind (``toy_kind.py``) is registered here and nowhere else, then driven through
everything a kind touches: config validation and the JSON schema, the dispatcher's claim, a
real probe round with its stored results and outage, and the alert rule its usable series
raises. A static check proves no module outside ``monitor/probes/kinds/`` names a kind.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from monitor.alerts.service import alert_hook
from monitor.config import parse_config
from monitor.config.models import Config, TargetConfig
from monitor.db.base import utcnow
from monitor.db.models import Alert, Outage
from monitor.db.models import ProbeResult as ResultRow
from monitor.errors import ConfigError
from monitor.probes import kinds
from monitor.probes.round import Prober
from monitor.probes.schedule import claim_due_targets, live_probe_target_ids
from monitor.targets import sync_config_targets
from tests.monitor.probes import toy_kind

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture
def toy() -> Iterator[None]:
    kinds.register(toy_kind.KIND)  # the one registry line a new kind adds
    yield
    kinds.unregister("toy")


def toy_config(flag: Path) -> Config:
    return parse_config(
        f"""
targets:
  - {{name: trainer-flag, kind: toy, url: "file://{flag}", interval: 1, timeout: 0.5,
     confirmations: 1}}
"""
    )


def test_config_knows_a_registered_kind_and_its_url_rule(toy: None) -> None:
    assert TargetConfig.model_validate({"name": "t", "kind": "toy", "url": "file:///f"})
    with pytest.raises(ValueError, match=r"url: a toy target needs file:///path/to/flag"):
        TargetConfig.model_validate({"name": "t", "kind": "toy", "url": "http://h/"})
    schema = TargetConfig.model_json_schema()
    assert "toy" in schema["properties"]["kind"]["enum"]
    rules = {tuple(rule["if"]["properties"]["kind"]["enum"]): rule for rule in schema["allOf"]}
    assert rules[("toy",)]["then"]["properties"]["url"]["pattern"] == r"^file:///\S+$"


def test_an_unregistered_kind_is_refused_with_the_known_ones() -> None:
    with pytest.raises(ConfigError, match=r"Input should be 'http', 'tcp', 'dcgm' or 'heartbeat'"):
        parse_config("targets:\n  - {name: t, kind: toy, url: 'file:///f'}\n")


def test_a_toy_kind_is_claimed_probed_stored_and_alerts_with_its_own_rule(
    toy: None, sessions: sessionmaker[Session], tmp_path: Path
) -> None:
    flag = tmp_path / "flag"
    flag.write_text("ready")
    config = toy_config(flag)
    with sessions() as session, session.begin():
        sync_config_targets(session, config, utcnow())
    with sessions() as session, session.begin():
        [tid] = live_probe_target_ids(session)
        assert [c.target_id for c in claim_due_targets(session, utcnow())] == [tid]

    prober = Prober(sessions, "test", config.probes, on_transitions=alert_hook(config))
    [up] = prober.round([tid]).results
    assert (up.ok, up.usable) == (True, True)

    flag.write_text("warming up")
    [unready] = prober.round([tid]).results
    assert (unready.ok, unready.usable, unready.error) == (True, False, "flag reads 'warming up'")

    flag.unlink()
    [gone] = prober.round([tid]).results
    assert (gone.ok, gone.error_kind) == (False, "connect")

    with sessions() as session:
        stored = session.scalars(select(ResultRow.ok).where(ResultRow.target_id == tid))
        assert list(stored) == [True, True, False]
        alerts = {a.rule: a for a in session.scalars(select(Alert))}
        assert set(alerts) == {"toy_unready", "target_down"}
        assert alerts["toy_unready"].summary.startswith(
            "trainer-flag is up but its flag is not ready"
        )
        assert alerts["toy_unready"].severity == "warning"
        outage = session.scalars(
            select(Outage).where(Outage.target_id == tid, Outage.series == "reachable")
        ).one()
        assert outage.end is None
        assert outage.start == gone.at


def test_a_registered_name_cannot_be_taken_twice_and_built_ins_stay(toy: None) -> None:
    with pytest.raises(ValueError, match="already registered"):
        kinds.register(toy_kind.KIND)
    with pytest.raises(ValueError, match="built in"):
        kinds.unregister("http")


def kind_names_spelled_in(path: Path, names: set[str]) -> list[str]:
    """Places in ``path`` that compare something's ``kind`` with a kind's name, or list two or
    more kind names together (the spellings the registry replaced)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        strings = {
            n.value for n in ast.walk(node) if isinstance(n, ast.Constant) and n.value in names
        }
        if isinstance(node, ast.Compare) and strings:
            operands = [node.left, *node.comparators]
            if any(
                isinstance(o, ast.Attribute | ast.Name) and "kind" in ast.unparse(o).lower()
                for o in operands
            ):
                found.append(f"{path}:{node.lineno}: {ast.unparse(node)}")
        elif isinstance(node, ast.Set | ast.Tuple | ast.List | ast.Subscript) and len(strings) > 1:
            found.append(f"{path}:{node.lineno}: {ast.unparse(node)[:80]}")
    return found


def test_no_module_outside_the_kinds_names_a_kind() -> None:
    names = set(kinds.KINDS)
    own = ROOT / "monitor" / "probes" / "kinds"
    spelled = [
        line
        for package in ("monitor", "workers")
        for path in sorted((ROOT / package).rglob("*.py"))
        if own not in path.parents
        for line in kind_names_spelled_in(path, names)
    ]
    assert spelled == []


def test_the_static_check_sees_a_kind_spelled_out(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text('USABLE = frozenset({"dcgm", "heartbeat"})\nx = row.kind == "tcp"\n')
    assert len(kind_names_spelled_in(sample, set(kinds.KINDS))) == 2

"""`slamon export openslo|sloth` and `slamon import openslo`, run as users run them: the config
in, files out, the same policies back, and one clear line for what slamon refuses."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import yaml

from monitor.config import load_config
from monitor.sla.policy_config import policies_for
from tests.support import slamon_command

ROOT = Path(__file__).parents[3]

CONFIG = """\
targets:
  - {name: trainer-0, kind: tcp, url: 'tcp://10.0.0.5:22', sla: aws-ec2-instance, interval: 15s}
  - {name: lambda-0, kind: tcp, url: 'tcp://10.0.0.6:22', sla: lambda-h100, interval: 2m}
  - {name: "GPU box #7", kind: tcp, url: 'tcp://10.0.0.7:22', sla: lambda-h100}
  - {name: scratch, kind: tcp, url: 'tcp://10.0.0.8:22'}
  - {name: perfect-0, kind: tcp, url: 'tcp://10.0.0.9:22', sla: perfect}
sla_policies:
  - name: lambda-h100
    provider: lambda
    title: Lambda — H100 on-demand (our contract)
    target_pct: 99.9
    measurement: whole_minutes
    min_downtime_s: 60
    exclude_maintenance: false
    tiers: [{below_pct: 99.9, credit_pct: 10}, {below_pct: 99, credit_pct: 25}]
    claim_deadline: days_after_period:30
    source_url: https://lambdalabs.com/legal/sla
    terms_date: 2025-01-15
  - {name: spare, provider: lambda, target_pct: 99}
  - {name: perfect, provider: lambda, target_pct: 100}
"""


def slamon(*args: str, cwd: Path, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "SLAMON_CONFIG"}
    return subprocess.run(
        [*slamon_command(), *args],
        cwd=cwd,
        env=env,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def _config(tmp_path: Path, text: str = CONFIG, name: str = "slamon.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def _refused(result: subprocess.CompletedProcess[str]) -> str:
    """The one line a refusal prints (and nothing else, no traceback)."""
    assert result.returncode == 1, result.stdout + result.stderr
    assert "Traceback" not in result.stderr
    [line] = result.stderr.splitlines()
    assert line.startswith("error: ")
    return line


def test_export_openslo_writes_the_example_config_s_target() -> None:
    result = slamon("export", "openslo", "--config", "slamon.example.yaml", cwd=ROOT)

    assert result.returncode == 0, result.stderr
    service, slo = yaml.safe_load_all(result.stdout)
    assert (service["kind"], service["metadata"]["name"]) == ("Service", "aws")
    assert (slo["kind"], slo["metadata"]["name"], slo["spec"]["service"]) == (
        "SLO",
        "trainer-0",
        "aws",
    )
    assert slo["spec"]["objectives"][0]["target"] == 0.995
    assert slo["spec"]["objectives"][0]["timeSliceWindow"] == 0.25
    assert result.stderr == "standard output: 1 SLOs (OpenSLO v1)\n"


def test_export_then_import_gives_the_config_s_policies_back(tmp_path: Path) -> None:
    config = _config(tmp_path)
    exported = slamon(
        "export", "openslo", "--config", str(config), "--out", "slos.yaml", cwd=tmp_path
    )
    assert exported.returncode == 0, exported.stderr
    assert exported.stderr.splitlines() == [
        "note: 1 targets have no SLA policy (`sla:`): left out",
        "note: policy 'spare': no target names it; an SLO measures a target, so it is left out",
        "note: policy 'perfect': a 100 % target has no OpenSLO form (objectives' targets lie "
        "below 1); its targets are left out",
        "slos.yaml: 3 SLOs (OpenSLO v1)",
    ]

    imported = slamon("import", "openslo", "slos.yaml", "--config", str(config), cwd=tmp_path)

    assert imported.returncode == 0, imported.stderr
    lines = imported.stdout.splitlines()
    assert lines[0].startswith("# slos.yaml: 3 SLOs, 2 SLA policies; paste under")
    assert "# aws-ec2-instance: built in, unchanged (nothing to paste)" in lines
    assert lines[-4:] == [
        "# targets: give each its policy with `sla:`",
        "#   trainer-0: sla: aws-ec2-instance",
        "#   lambda-0: sla: lambda-h100",
        "#   GPU box #7: sla: lambda-h100",
    ]
    pasted = yaml.safe_load(imported.stdout)
    assert [p["name"] for p in pasted["sla_policies"]] == ["lambda-h100"]
    # pasted over the config's own entry of that name
    original = yaml.safe_load(CONFIG)
    kept = [p for p in original["sla_policies"] if p["name"] != "lambda-h100"]
    policies = [*kept, *pasted["sla_policies"]]
    rebuilt = yaml.safe_dump({**original, "sla_policies": policies}, allow_unicode=True)
    assert "lambdalabs" in rebuilt
    before = policies_for(load_config(config).sla_policies)
    after = policies_for(load_config(_config(tmp_path, rebuilt, "rebuilt.yaml")).sla_policies)
    assert after["lambda-h100"] == before["lambda-h100"]
    assert after["lambda-h100"].policy_hash() == before["lambda-h100"].policy_hash()


def test_import_openslo_json_prints_one_object_per_policy(tmp_path: Path) -> None:
    config = _config(tmp_path)
    exported = slamon("export", "openslo", "--config", str(config), cwd=tmp_path)

    result = slamon(
        "import",
        "openslo",
        "-",
        "--json",
        "--config",
        str(config),
        cwd=tmp_path,
        stdin=exported.stdout,
    )

    assert result.returncode == 0, result.stderr
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    assert [(x["policy"]["name"], x["builtin"], x["targets"]) for x in lines] == [
        ("aws-ec2-instance", True, ["trainer-0"]),
        ("lambda-h100", False, ["lambda-0", "GPU box #7"]),
    ]
    assert lines[1]["policy"]["tiers"] == [
        {"below_pct": 99.9, "credit_pct": 10.0},
        {"below_pct": 99.0, "credit_pct": 25.0},
    ]
    assert lines[1]["slos"][0] == "lambda-0"


def test_import_refuses_a_time_slice_shorter_than_the_probe_interval(tmp_path: Path) -> None:
    config = _config(tmp_path)
    exported = slamon(
        "export", "openslo", "--config", str(config), "--out", "slos.yaml", cwd=tmp_path
    )
    assert exported.returncode == 0, exported.stderr
    # the config now probes trainer-0 every minute: its 15 s slices cannot be judged
    _config(tmp_path, CONFIG.replace("interval: 15s", "interval: 1m"))

    result = slamon("import", "openslo", "slos.yaml", "--config", str(config), cwd=tmp_path)

    assert _refused(result) == (
        "error: slos.yaml: SLO 'trainer-0': time slice 15s is shorter than the probe interval "
        "60s (target 'trainer-0' in the config); slamon cannot judge a slice it does not probe"
    )
    assert result.stdout == ""


def test_import_refuses_a_hand_edited_slice_for_a_target_the_config_does_not_have(
    tmp_path: Path,
) -> None:
    config = _config(tmp_path)
    exported = slamon("export", "openslo", "--config", str(config), cwd=tmp_path)
    documents: list[dict[str, Any]] = list(yaml.safe_load_all(exported.stdout))
    slo = next(d for d in documents if d["metadata"]["name"] == "lambda-0")
    slo["spec"]["objectives"][0]["timeSliceWindow"] = "1m"  # probed every 2m
    (tmp_path / "edited.yaml").write_text(yaml.safe_dump_all(documents, allow_unicode=True))

    result = slamon("import", "openslo", "edited.yaml", "--config", "none.yaml", cwd=tmp_path)

    assert _refused(result) == (
        "error: edited.yaml: SLO 'lambda-0': time slice 60s is shorter than the probe interval "
        "120s (slamon.dev/probe-interval); slamon cannot judge a slice it does not probe"
    )


def test_import_says_in_one_line_what_is_wrong_with_a_file(tmp_path: Path) -> None:
    (tmp_path / "broken.yaml").write_text("apiVersion: openslo/v1\nkind: [SLO\n")
    (tmp_path / "alpha.yaml").write_text("apiVersion: openslo/v1alpha\nkind: SLO\n")

    broken = slamon("import", "openslo", "broken.yaml", cwd=tmp_path)
    alpha = slamon("import", "openslo", "alpha.yaml", cwd=tmp_path)
    missing = slamon("import", "openslo", "missing.yaml", cwd=tmp_path)

    assert _refused(broken).startswith("error: broken.yaml: not valid YAML: ")
    assert _refused(alpha) == (
        "error: alpha.yaml: document 1: apiVersion must be openslo/v1, got 'openslo/v1alpha'"
    )
    assert _refused(missing) == "error: missing.yaml: cannot read: No such file or directory"


def test_export_sloth_writes_one_spec_per_provider(tmp_path: Path) -> None:
    result = slamon("export", "sloth", "--config", str(_config(tmp_path)), cwd=tmp_path)

    assert result.returncode == 0, result.stderr
    aws, lam = yaml.safe_load_all(result.stdout)
    assert (aws["version"], aws["service"], lam["service"]) == ("prometheus/v1", "aws", "lambda")
    assert [(s["name"], s["objective"]) for s in lam["slos"]] == [
        ("lambda-0", 99.9),
        (lam["slos"][1]["name"], 99.9),
        ("perfect-0", 100.0),
    ]
    assert lam["slos"][1]["labels"]["target"] == "GPU box #7"
    assert result.stderr.splitlines()[-1] == "standard output: 2 Sloth specs, 4 SLOs"


def test_export_of_a_config_without_objectives_says_so_in_one_line(tmp_path: Path) -> None:
    config = _config(tmp_path, "targets:\n  - {name: x, kind: tcp, url: 'tcp://h:22'}\n")

    for command in ("openslo", "sloth"):
        result = slamon("export", command, "--config", str(config), cwd=tmp_path)
        assert result.returncode == 1
        assert result.stderr.splitlines()[-1] == (
            "error: no target has an SLA policy (`sla:` in the config): nothing to export"
        )
        assert "Traceback" not in result.stderr

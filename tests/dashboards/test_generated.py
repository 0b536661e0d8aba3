"""dashboards/*.json is what dashboards/build.py generates: the code is the source, the JSON its
committed output (docker-compose and `slamon grafana push` read the JSON)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from dashboards import build

DASHBOARDS = Path(build.__file__).resolve().parent


def test_the_code_builds_exactly_the_four_dashboard_files() -> None:
    assert sorted(build.generate()) == sorted(p.name for p in DASHBOARDS.glob("*.json"))


@pytest.mark.parametrize("name", sorted(build.BUILDERS))
def test_the_committed_json_is_what_the_code_generates(name: str) -> None:
    committed = (DASHBOARDS / name).read_text(encoding="utf-8")
    assert committed == build.generate()[name], (
        f"dashboards/{name} is out of date: run `python -m dashboards.build`"
    )


def test_check_passes_on_the_committed_files() -> None:
    assert build.main(["--check"]) == 0


def test_check_fails_naming_a_changed_file_and_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for path in DASHBOARDS.glob("*.json"):
        shutil.copy(path, tmp_path / path.name)
    edited = tmp_path / "gpu-fleet.json"
    edited.write_text(edited.read_text(encoding="utf-8").replace("GPU fleet", "GPU flee"))
    before = edited.read_text(encoding="utf-8")

    assert build.main(["--check", "--dir", str(tmp_path)]) == 1

    err = capsys.readouterr().err
    assert "gpu-fleet.json" in err
    assert "alerts.json" not in err
    assert edited.read_text(encoding="utf-8") == before


def test_build_rewrites_a_changed_or_missing_file(tmp_path: Path) -> None:
    for path in DASHBOARDS.glob("*.json"):
        shutil.copy(path, tmp_path / path.name)
    (tmp_path / "alerts.json").write_text("{}\n", encoding="utf-8")
    (tmp_path / "sla-compliance.json").unlink()

    assert build.main(["--dir", str(tmp_path)]) == 0

    assert build.main(["--check", "--dir", str(tmp_path)]) == 0

"""What a wheel ships: a user who installs slamon with `pip install` (not from a checkout) can
migrate a database and provision the Grafana dashboards. Both read files beside the code, which
only reach the wheel when the package data says so."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

FROM_THE_WHEEL = """
import json, sys, tempfile
import monitor
from monitor.db.engine import make_engine
from monitor.db.migrate import upgrade
from monitor.db.schema import stored_revision
from monitor.grafana import load_dashboards
engine = make_engine(f"sqlite:///{tempfile.mkdtemp()}/fresh.db")
upgrade(engine)
print(json.dumps({
    "package": monitor.__file__,
    "revision": stored_revision(engine),
    "dashboards": sorted(d["uid"] for d in load_dashboards()),
}))
"""


@pytest.fixture(scope="module")
def installed_wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel built from this checkout, unpacked into its own folder (no dependencies: the
    test's own environment provides those)."""
    folder = tmp_path_factory.mktemp("wheel")
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "-q"]
    subprocess.run([*pip, "wheel", str(ROOT), "--no-deps", "-w", folder / "dist"], check=True)
    [wheel] = (folder / "dist").glob("slamon-*.whl")
    site = folder / "site"
    subprocess.run([*pip, "install", "--no-deps", "--target", site, wheel], check=True)
    return site


def test_a_wheel_install_migrates_a_database_and_finds_the_dashboards(
    installed_wheel: Path, tmp_path: Path
) -> None:
    env = os.environ | {"PYTHONPATH": str(installed_wheel)}
    done = subprocess.run(
        [sys.executable, "-c", FROM_THE_WHEEL],
        cwd=tmp_path,  # not the checkout, whose folders would shadow the wheel's
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert Path(found["package"]).is_relative_to(installed_wheel)
    versions = (ROOT / "monitor/db/migrations/versions").glob("*.py")
    heads = sorted(p for p in versions if p.stem != "__init__")
    assert found["revision"] == heads[-1].name.split("_", 1)[0]
    shipped = sorted(json.loads(p.read_text())["uid"] for p in (ROOT / "dashboards").glob("*.json"))
    assert found["dashboards"] == shipped
    assert len(shipped) >= 4

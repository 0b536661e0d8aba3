"""Imports follow use: each process loads what its work needs and no more. Every Python
process of `slamon run` pays for what it imports, in memory and start-up time, so the heavy
stacks (the API's, the PDF's, apprise's, Grafana's, the RSS reader's, the clouds' SDKs) load
only where used.

Each case imports an entry point in a fresh interpreter (and, for the worker, runs a real probe
round with its alert hook on a SQLite database), then lists the heavy modules it loaded.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from monitor.cli import COMMANDS

ROOT = Path(__file__).resolve().parents[1]
HEAVY = (
    "celery", "sqlalchemy", "alembic", "fastapi", "starlette", "uvicorn", "jinja2", "reportlab",
    "apprise", "grafana_client", "feedparser", "httpx", "pydantic", "yaml", "psycopg", "boto3",
    "botocore", "kubernetes", "grpc",
)  # fmt: skip
# the discovery sources' SDKs (their extras): each loaded by its own sweep alone
CLOUD_SDKS = {"boto3", "botocore", "kubernetes"}

PROBE_ROUND = """
import os, tempfile
from pathlib import Path
folder = Path(tempfile.mkdtemp())
os.environ["SLAMON_DATABASE_URL"] = f"sqlite:///{folder / 'db.sqlite'}"
from monitor.db.engine import make_engine, make_sessionmaker
from monitor.db.migrate import upgrade
engine = make_engine(os.environ["SLAMON_DATABASE_URL"])
upgrade(engine)
from workers.app import app
import workers.tasks
from monitor.alerts.service import alert_hook
from monitor.config import parse_config
from monitor.probes.round import Prober
from monitor.targets import sync_config_targets
from monitor.db.base import utcnow
config = parse_config("targets: [{name: t, kind: tcp, url: 'tcp://127.0.0.1:9', interval: 5}]")
sessions = make_sessionmaker(engine)
with sessions() as session, session.begin():
    sync_config_targets(session, config, utcnow())
Prober(sessions, "test", config.probes, on_transitions=alert_hook(config)).round([1])
"""

# a config with cloud sources, checked (its extra is installed), and a sweep of a file_sd one
OTHER_KIND_SWEEP = """
import tempfile
from datetime import UTC, datetime
from pathlib import Path
sd = Path(tempfile.mkdtemp()) / "sd.json"
sd.write_text('[{"targets": ["10.0.0.1:80"]}]')
from monitor.config import parse_config
from monitor.fleet.sweep import list_source
config = parse_config(f'''
discovery:
  - {{name: lab, kind: file_sd, path: "{sd}", template: {{kind: http, url: "http://{{address}}/"}}}}
  - {{name: aws, kind: ec2, regions: [us-east-1], template: {{kind: http}}}}
  - {{name: k8s, kind: kubernetes, template: {{kind: http}}}}
''')
from monitor.discovery.kinds import KINDS
assert all(KINDS[s.kind].missing_extra() is None for s in config.discovery)
assert len(list_source(config.source("lab"), datetime.now(UTC))) == 1
"""

# a sweep of an ec2 source (its API unreachable: what it loads is the point)
EC2_SWEEP = """
import socket
from datetime import UTC, datetime
from monitor.config import parse_config
from monitor.errors import SweepFailed
from monitor.fleet.sweep import list_source
with socket.socket() as s:
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
config = parse_config(f'''
discovery:
  - {{name: aws, kind: ec2, regions: [us-east-1], endpoint_url: "http://127.0.0.1:{port}",
     timeout: 1s, template: {{kind: http}}}}
''')
try:
    list_source(config.source("aws"), datetime.now(UTC))
except SweepFailed:
    pass
"""

# a sweep of the kubernetes kind (against a closed port: what it loads is the point)
KUBERNETES_SWEEP = """
from datetime import UTC, datetime
from monitor.discovery.kind import SweepContext
from monitor.discovery.kinds.kubernetes import KIND, KubernetesOptions
from monitor.errors import SweepFailed
context = SweepContext("k8s", datetime.now(UTC), 2.0)
try:
    KIND.list_instances(KubernetesOptions(host="http://127.0.0.1:9"), context)
except SweepFailed:
    pass
"""

# entry point -> what it must not load
CASES = {
    "the supervisor (slamon's command line)": (
        "import monitor.cli",
        set(HEAVY),
    ),
    "a probe worker, after a probe round with its alert hook": (
        PROBE_ROUND,
        {
            "fastapi",
            "starlette",
            "uvicorn",
            "jinja2",
            "reportlab",
            "apprise",
            "grafana_client",
            "feedparser",
            *CLOUD_SDKS,
        },
    ),
    "a worker's start-up checks (config, database, schema revision, broker)": (
        "from monitor.cli.serve import preflight\n"
        "from monitor.settings import Settings\n"
        "import os, tempfile\n"
        "from monitor.db.engine import make_engine\n"
        "from monitor.db.schema import stored_revision\n"
        'stored_revision(make_engine(f"sqlite:///{tempfile.mkdtemp()}/x.db"))\n',
        {"alembic", "fastapi", "jinja2", "reportlab", "apprise", "grafana_client", "feedparser"}
        | CLOUD_SDKS,
    ),
    "the API": (
        "from monitor.api.app import create_app",
        {"celery", "reportlab", "apprise", "grafana_client", "feedparser", "alembic", *CLOUD_SDKS},
    ),
    "the delivery of a webhook, slack or any non-apprise channel": (
        "import workers.tasks, monitor.alerts.delivery, monitor.alerts.channels.send",
        {"apprise", "reportlab", "fastapi", "grafana_client", "feedparser", "alembic", *CLOUD_SDKS},
    ),
    "`slamon agent`, after a reading through NVML and one through nvidia-smi": (
        "from monitor.cli import cli\n"
        "cli.get_command(None, 'agent')\n"
        "from monitor.agent.nvml import NvmlReader\n"
        "from monitor.agent.smi import SmiReader\n"
        "from monitor.agent.push import Pusher\n"
        "from tests.fake_nvml import FakeNvml, h100s\n"
        "NvmlReader(FakeNvml(h100s(2))).read().to_json()\n"
        "csv = open('tests/fixtures/nvidia-smi/gpuexp-h100-load.csv').read()\n"
        "SmiReader(run=lambda argv: csv).read().to_json()\n",
        set(HEAVY) - {"httpx"},
    ),
    "the report service (CLI and beat), before a format is rendered": (
        "import monitor.reports.service",
        {"reportlab", "jinja2", "fastapi", "apprise", "grafana_client", "feedparser", *CLOUD_SDKS},
    ),
    "the account event kinds' registry, their options and parsers, before a poll": (
        "from monitor.account.kinds import KINDS\n"
        "from monitor.account.kinds.aws_health import from_eventbridge\n"
        "from monitor.account.kinds.azure_resource_health import from_service_health_alert\n"
        "KINDS['aws_health'].options.model_validate({'services': ['EC2']})\n"
        "assert all(kind.missing_extra() is None for kind in KINDS.values())\n",
        {"fastapi", "reportlab", "apprise", "celery", "sqlalchemy", "httpx", *CLOUD_SDKS},
    ),
    "the config naming cloud sources, and a sweep of a file_sd one": (
        OTHER_KIND_SWEEP,
        {"fastapi", "reportlab", "apprise", "grafana_client", "feedparser", *CLOUD_SDKS},
    ),
}


def loaded(code: str) -> set[str]:
    probe = f"{code}\nimport sys, json\nprint(json.dumps(sorted(sys.modules)))\n"
    done = subprocess.run(
        [sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, check=True
    )
    modules = json.loads(done.stdout.strip().splitlines()[-1])
    return {name.split(".")[0] for name in modules}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_process_loads_none_of_the_heavy_modules_it_does_not_use(case: str) -> None:
    code, forbidden = CASES[case]
    assert sorted(loaded(code) & forbidden) == []


def test_the_check_sees_a_heavy_import() -> None:
    assert "reportlab" in loaded("import monitor.reports.render.pdf")


def test_a_sweep_of_a_cloud_kind_loads_its_sdk() -> None:
    assert loaded(EC2_SWEEP) >= {"boto3", "botocore"}
    assert "kubernetes" in loaded(KUBERNETES_SWEEP)


def modules_loaded(code: str) -> set[str]:
    probe = f"{code}\nimport sys, json\nprint(json.dumps(sorted(sys.modules)))\n"
    done = subprocess.run(
        [sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, check=True
    )
    return set(json.loads(done.stdout.strip().splitlines()[-1]))


def test_slamon_run_loads_its_own_command_module_and_no_other() -> None:
    found = modules_loaded("from monitor.cli import cli\ncli.get_command(None, 'run')")
    command_modules = {where.partition(":")[0] for where in COMMANDS.values()}
    assert found & command_modules == {"monitor.cli.serve"}
    assert sorted({name.split(".")[0] for name in found} & set(HEAVY)) == []


# gce's and azure's SDKs, by the module prefixes they load
GCE_AZURE_SDKS = (
    "google.cloud.compute", "google.api_core", "google.auth", "google.protobuf", "grpc",
    "proto", "azure.core", "azure.mgmt.compute", "azure.identity", "msal", "requests",
)  # fmt: skip

CLOUD_CONFIG = """
import json, tempfile
from datetime import datetime, UTC
from pathlib import Path
from monitor.config import parse_config
from monitor.fleet.sweep import list_source
sd = Path(tempfile.mkdtemp()) / "sd.json"
sd.write_text(json.dumps([{"targets": ["10.0.0.1:9400"]}]))
template = '{kind: tcp, url: "tcp://x:1"}'
config = parse_config(f'''
discovery:
  - {{name: gcp, kind: gce, projects: [p], template: {template}}}
  - {{name: az, kind: azure, subscription: s, template: {template}}}
  - {{name: lab, kind: file_sd, path: "{sd}", template: {template}}}
''')
assert len(list_source(config.source("lab"), datetime.now(UTC))) == 1
"""

SWEEP_OF = """
from datetime import datetime, UTC
from monitor.config import parse_config
from monitor.fleet.sweep import list_source
config = parse_config('''
discovery: [{{name: it, kind: {kind}, {options}, template: {{kind: tcp, url: "tcp://x:1"}}}}]
''')
try:
    list_source(config.source("it"), datetime.now(UTC))
except Exception:
    pass  # nothing answers at the endpoint: the SDK was loaded all the same
"""


def test_a_config_naming_cloud_sources_and_a_sweep_of_another_kind_load_no_cloud_sdk() -> None:
    found = modules_loaded(CLOUD_CONFIG)
    assert sorted(name for name in found if name.startswith(GCE_AZURE_SDKS)) == []


@pytest.mark.parametrize(
    ("kind", "options", "sdk"),
    [
        ("gce", "projects: [p], endpoint: 'http://127.0.0.1:1', timeout: 1",
         "google.cloud.compute_v1"),
        ("azure", "subscription: s, endpoint: 'http://127.0.0.1:1', token: t, timeout: 1",
         "azure.mgmt.compute"),
    ],
)  # fmt: skip
def test_the_check_sees_a_cloud_sdk_a_sweep_of_its_kind_loads(
    kind: str, options: str, sdk: str
) -> None:
    assert sdk in modules_loaded(SWEEP_OF.format(kind=kind, options=options))


def test_a_worker_starts_without_celerys_command_line() -> None:
    found = modules_loaded(
        "import os, tempfile\n"
        "os.environ['SLAMON_STATE_DIR'] = tempfile.mkdtemp()\n"
        "from workers.app import start_worker, run_beat"
    )
    assert "celery" in {name.split(".")[0] for name in found}  # the check sees the app
    assert sorted(n for n in found if n.startswith(("celery.bin", "prompt_toolkit"))) == []


def test_the_account_kinds_sdks_are_seen_when_a_poll_loads_them() -> None:
    poll = (
        "from datetime import UTC, datetime\n"
        "from monitor.account.kind import EventPollContext\n"
        "from monitor.account.kinds import KINDS\n"
        "from monitor.errors import EventPollFailed\n"
        "kind = KINDS['aws_health']\n"
        "options = kind.options(endpoint_url='http://127.0.0.1:9')\n"
        "try:\n"
        "    kind.list_events(options, EventPollContext('a', datetime.now(UTC), 1.0))\n"
        "except EventPollFailed:\n"
        "    pass\n"
    )
    assert loaded(poll) >= {"boto3", "botocore"}
    found = modules_loaded("import monitor.account.kinds")
    assert sorted(name for name in found if name.startswith(GCE_AZURE_SDKS)) == []

"""A dcgm target's GPU counters are judged against the memory stored when its result is
recorded, not the one its round read before probing. A target probed every second has rounds
that overlap (the slot after is loaded while this one's re-probes still record), and a verdict
on a stale memory once turned a GPU reset into a fresh ECC fault, held until the next reset.

The readings are a captured dcgm-exporter document (one L4) with the ECC double-bit counters
added for its GPU, judged by the real probe code and recorded by the real recorder."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from sqlalchemy import select
from sqlalchemy.orm import Session

from monitor.config.models import TargetConfig
from monitor.db.models import ProbeResult as ResultRow
from monitor.db.models import TargetState
from monitor.probes.kinds.dcgm import judge
from monitor.probes.model import ProbeResult, ProbeTarget
from monitor.probes.record import load_probe_targets, record_round
from monitor.targets import upsert_target
from tests.support import FIXTURES

L4 = (FIXTURES / "feeds" / "dcgm" / "cncf-kops-aws-L4.prom").read_text()
LABELS = next(line for line in L4.splitlines() if line and not line.startswith("#"))
LABELS = LABELS[LABELS.index("{") : LABELS.index("}") + 1]  # the L4's own GPU labels
T0 = datetime(2026, 11, 30, 23, 59, 58, tzinfo=UTC)  # the rounds cross a month boundary
VANTAGE = "eu"


def ecc(volatile: int, aggregate: int) -> bytes:
    """The captured document, with the L4's double-bit ECC counts at these values."""
    return (
        f"{L4}DCGM_FI_DEV_ECC_DBE_VOL_TOTAL{LABELS} {volatile}\n"
        f"DCGM_FI_DEV_ECC_DBE_AGG_TOTAL{LABELS} {aggregate}\n"
    ).encode()


def dcgm_target(session: Session) -> int:
    cfg = TargetConfig.model_validate(
        {"name": "l4", "kind": "dcgm", "url": "http://l4:9400/metrics", "gpus": 1, "interval": 1}
    )
    row = upsert_target(session, cfg, "config")
    session.flush()
    return row.id


def loaded(session: Session, tid: int) -> ProbeTarget:
    """The target as a round reads it before probing: with the memory stored now."""
    [target] = load_probe_targets(session, [tid], VANTAGE)
    return target


def scraped(target: ProbeTarget, second: int, raw: bytes) -> ProbeResult:
    at = T0 + timedelta(seconds=second)
    return judge(ProbeResult(target.id, target.name, at, True, status_code=200), raw, target)


def recorded(session: Session, result: ProbeResult) -> ProbeResult:
    outcome = record_round(session, VANTAGE, [result], now=result.at)
    session.flush()
    [stored] = outcome.results
    return stored


def stored_usable(session: Session, tid: int, second: int) -> bool | None:
    at = T0 + timedelta(seconds=second)
    query = select(ResultRow.usable).where(ResultRow.target_id == tid, ResultRow.at == at)
    return session.execute(query).scalar_one()


def test_a_round_that_read_its_memory_before_a_fault_and_its_reset_is_judged_on_the_stored_one(
    session: Session,
) -> None:
    tid = dcgm_target(session)
    assert recorded(session, scraped(loaded(session, tid), 0, ecc(0, 0))).usable is True
    ahead = loaded(session, tid)  # the next slot's round reads its targets a slot ahead
    fault = recorded(session, scraped(loaded(session, tid), 1, ecc(1, 1)))
    reset = recorded(session, scraped(loaded(session, tid), 2, ecc(0, 1)))
    assert (fault.usable, reset.usable) == (False, True)

    late = scraped(ahead, 3, ecc(0, 1))
    # against the memory it read, the aggregate count grew: a fault that no reset would clear
    assert (late.usable, late.error) == (False, "ECC double-bit errors +1 on GPU 0")
    kept = recorded(session, late)
    assert (kept.usable, kept.error) == (True, None)
    assert stored_usable(session, tid, 3) is True
    after = recorded(session, scraped(loaded(session, tid), 4, ecc(0, 1)))
    assert after.usable is True
    state = session.get_one(TargetState, (tid, VANTAGE, "usable"))
    assert (state.state, state.consecutive_failures) == ("up", 0)


def test_a_held_fault_holds_for_a_round_that_read_the_memory_from_before_it(
    session: Session,
) -> None:
    tid = dcgm_target(session)
    recorded(session, scraped(loaded(session, tid), 0, ecc(0, 0)))
    ahead = loaded(session, tid)
    recorded(session, scraped(loaded(session, tid), 1, ecc(1, 1)))
    held = recorded(session, scraped(ahead, 2, ecc(1, 1)))
    assert (held.usable, held.error) == (False, "ECC double-bit errors +1 on GPU 0")
    counters = session.get_one(TargetState, (tid, VANTAGE, "usable")).detail["gpu_counters"]
    [memory] = counters["gpus"].values()
    # the fault seen at second 1 is held (its second scrape), not seen anew by the late round
    assert (memory["fault_kind"], memory["fault_scrapes"]) == ("ecc", 2)


def test_a_reading_older_than_the_memory_keeps_its_verdict_and_is_not_remembered(
    session: Session,
) -> None:
    tid = dcgm_target(session)
    recorded(session, scraped(loaded(session, tid), 0, ecc(0, 0)))
    early = scraped(loaded(session, tid), 1, ecc(1, 1))  # probed first, recorded last
    recorded(session, scraped(loaded(session, tid), 2, ecc(0, 1)))
    before = session.get_one(TargetState, (tid, VANTAGE, "usable")).detail
    kept = recorded(session, early)
    # judged against the memory of second 0 when it was probed: a new fault, as it was then
    assert (kept.usable, kept.error) == (False, "ECC double-bit errors +1 on GPU 0")
    session.expire_all()
    after = session.get_one(TargetState, (tid, VANTAGE, "usable")).detail
    assert after["gpu_counters"] == before["gpu_counters"]
    assert after["remembered_at"] == (T0 + timedelta(seconds=2)).isoformat()

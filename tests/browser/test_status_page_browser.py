"""The status page in a real headless Chromium (Debian's /usr/bin/chromium via playwright):
`slamon api` serves a migrated SQLite file with seeded rows; the page loads, shows them, logs no
console errors, and leaves a screenshot in the test's tmp dir."""

from __future__ import annotations

import os
import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from sqlalchemy.orm import Session

from monitor.db.engine import make_engine
from monitor.db.migrate import upgrade
from tests.monitor.api.test_status_page import EVIL, seed
from tests.support import CHROMIUM, CHROMIUM_ARGS, REQUIRE_SERVICES, slamon_command, wait_for

pytestmark = pytest.mark.slow
EVIL_CSS = EVIL.replace("\\", "\\\\").replace('"', '\\"')  # as a CSS attribute value

if not CHROMIUM.exists() and not REQUIRE_SERVICES:
    pytest.skip(
        "Debian's chromium is not installed (/usr/bin/chromium); apt-get install chromium",
        allow_module_level=True,
    )


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _answers(url: str) -> bool:
    try:
        return httpx.get(url, timeout=1).status_code == 200
    except httpx.TransportError:
        return False


@pytest.fixture
def served(tmp_path: Path) -> Iterator[str]:
    """`slamon api` on a free port over a migrated, seeded SQLite file; its base URL."""
    database_url = f"sqlite:///{tmp_path / 'slamon.db'}"
    engine = make_engine(database_url)
    upgrade(engine)
    with Session(engine) as session:
        seed(session)
    engine.dispose()
    port = free_port()
    env = {
        **os.environ,
        "SLAMON_DATABASE_URL": database_url,
        "SLAMON_CONFIG": str(tmp_path / "none.yaml"),
        "SLAMON_STATE_DIR": str(tmp_path / "state"),
    }
    log = (tmp_path / "api.log").open("wb")
    server = subprocess.Popen(
        [*slamon_command(), "api", "--port", str(port)], env=env, stdout=log, stderr=log
    )
    base = f"http://127.0.0.1:{port}"
    try:
        wait_for(lambda: server.poll() is not None or _answers(f"{base}/healthz"))
        assert server.poll() is None, (tmp_path / "api.log").read_text()
        yield base
    finally:
        server.terminate()
        server.wait(timeout=20)
        log.close()


def _launch(pw):  # type: ignore[no-untyped-def]
    return pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)


def test_status_page_loads_in_chromium_with_seeded_data_and_no_console_errors(
    served: str, tmp_path: Path
) -> None:
    assert CHROMIUM.exists(), "Debian's chromium is required here: apt-get install -y chromium"
    from playwright.sync_api import sync_playwright

    messages: list[tuple[str, str]] = []
    screenshot = tmp_path / "status.png"
    with sync_playwright() as pw:
        browser = _launch(pw)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.on("console", lambda m: messages.append((m.type, m.text)))
            page.on("pageerror", lambda e: messages.append(("pageerror", str(e))))
            page.on("dialog", lambda d: messages.append(("dialog", d.message)))
            response = page.goto(served + "/", wait_until="load")
            assert response is not None
            assert response.status == 200
            assert page.title() == "slamon status"
            fleet = page.locator("#fleet").inner_text()
            alerts = page.locator("#alerts").inner_text()
            page.screenshot(path=str(screenshot), full_page=True)
        finally:
            browser.close()
    assert "gpu-h100-0" in fleet
    assert '<script>alert("pwned")</script>' in fleet  # shown as text, never run
    assert "gpu-h100-9 unreachable for 3 minutes" in alerts
    assert [m for m in messages if m[0] in ("error", "pageerror", "dialog")] == []
    assert screenshot.exists()
    assert screenshot.stat().st_size > 0
    assert screenshot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_chromium_shows_usable_apart_from_reachable_history_bars_and_feed_health(
    served: str, tmp_path: Path
) -> None:
    """What a person sees: the unusable box labelled so (not up) in amber, the history bar's
    segments drawn in their colours across the whole bar, and each provider's feed health in
    words."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = _launch(pw)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.emulate_media(color_scheme="light")
            page.goto(served + "/", wait_until="load")
            unusable = page.locator('#fleet tr[data-target="gpu-h100-1"]')
            badge = unusable.locator(".badge")
            badge_text = badge.inner_text().strip()
            badge_colour = badge.evaluate("e => getComputedStyle(e).color")
            bar = page.locator('#fleet tr[data-target="gpu-h100-0"] .bar')
            segments = bar.locator("i")
            states = [segments.nth(i).get_attribute("data-state") for i in range(segments.count())]
            colours = [
                segments.nth(i).evaluate("e => getComputedStyle(e).backgroundColor")
                for i in range(segments.count())
            ]
            widths = [segments.nth(i).bounding_box()["width"] for i in range(segments.count())]
            bar_width = bar.bounding_box()["width"]
            unknown_bar = page.locator(f'#fleet tr[data-target="{EVIL_CSS}"] .bar i')
            unknown_image = unknown_bar.evaluate("e => getComputedStyle(e).backgroundImage")
            providers = page.locator("#providers").inner_text()
            pool = page.locator('#pools tr[data-pool="h100"]').inner_text()
            page.screenshot(path=str(tmp_path / "status-wide.png"), full_page=True)
        finally:
            browser.close()
    assert badge_text == "unusable"
    assert badge_colour == "rgb(122, 67, 0)"  # amber text: neither up's green nor down's red
    assert states == ["up", "down", "up"]
    assert colours == ["rgb(31, 157, 85)", "rgb(220, 38, 38)", "rgb(31, 157, 85)"]
    assert sum(widths) == pytest.approx(bar_width, abs=6)  # gaps between segments only
    assert widths[0] > 10 * widths[1]  # 43 slots against 2
    assert "repeating-linear-gradient" in unknown_image  # hatched: not watched, not a colour
    assert "unknown — feed never polled" in providers
    assert "unknown — no public feed" in providers
    assert "unknown — feed unreachable since" in providers
    assert "operational — polled" in providers
    assert "1 / 4" in pool


def test_the_page_fits_a_phone_without_sideways_scrolling(served: str, tmp_path: Path) -> None:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = _launch(pw)
        try:
            page = browser.new_page(viewport={"width": 390, "height": 844})
            page.goto(served + "/", wait_until="load")
            overflow = page.evaluate(
                "document.documentElement.scrollWidth - document.documentElement.clientWidth"
            )
            bar = page.locator('#fleet tr[data-target="gpu-h100-0"] .bar').bounding_box()
            page.screenshot(path=str(tmp_path / "status-phone.png"), full_page=True)
        finally:
            browser.close()
    assert overflow <= 0
    assert bar is not None
    assert bar["width"] > 250  # the bar gets the row's width on a phone


def test_a_target_and_a_provider_open_from_the_status_page_on_their_own_pages(
    served: str, tmp_path: Path
) -> None:
    """Click a target's name, then its provider: each page loads with what the status page
    only summarizes (the open usable outage, the incidents), without console errors, fits a
    phone, and its back link returns to the status page."""
    from playwright.sync_api import sync_playwright

    messages: list[tuple[str, str]] = []
    with sync_playwright() as pw:
        browser = _launch(pw)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.on("console", lambda m: messages.append((m.type, m.text)))
            page.on("pageerror", lambda e: messages.append(("pageerror", str(e))))
            page.goto(served + "/", wait_until="load")
            page.locator('#fleet tr[data-target="gpu-h100-1"] a.name').click()
            page.wait_for_load_state("load")
            target_url = page.url
            target_title = page.title()
            outage = page.locator("#outages tr.outage").first
            outage_text = outage.inner_text()
            outage_open = outage.get_attribute("data-open")
            segments = page.locator("#history i")
            days = sum(
                int(segments.nth(i).get_attribute("data-buckets") or 0)
                for i in range(segments.count())
            )
            first_state = segments.first.get_attribute("data-state")
            page.screenshot(path=str(tmp_path / "target.png"), full_page=True)
            page.set_viewport_size({"width": 390, "height": 844})
            overflow = page.evaluate(
                "document.documentElement.scrollWidth - document.documentElement.clientWidth"
            )
            page.get_by_role("link", name="← slamon status").click()
            page.wait_for_load_state("load")
            back_url = page.url
            page.set_viewport_size({"width": 1280, "height": 900})
            page.locator('#providers [data-provider="aws"] a.name').click()
            page.wait_for_load_state("load")
            provider_url = page.url
            incidents = page.locator("#incidents").inner_text()
            incident_link = page.get_by_role("link", name="EC2 p5 capacity degraded")
            incident_href = incident_link.get_attribute("href")
            page.screenshot(path=str(tmp_path / "provider.png"), full_page=True)
        finally:
            browser.close()
    assert target_url == served + "/targets/gpu-h100-1"
    assert target_title == "gpu-h100-1 · slamon"
    assert outage_open == "true"
    assert outage_text.startswith("not usable")
    assert "open" in outage_text.split()
    assert days == 30
    assert first_state == "unknown"  # watched for two days only: the rest is not up
    assert overflow <= 0
    assert back_url == served + "/"
    assert provider_url == served + "/providers/aws"
    assert "EC2 p5 capacity degraded" in incidents
    assert "Old resolved thing" in incidents  # resolved within the 30 days
    assert incident_href == "https://status.aws/1"
    assert [m for m in messages if m[0] in ("error", "pageerror")] == []

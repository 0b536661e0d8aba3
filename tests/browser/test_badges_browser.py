"""The badges and the grouped status page in a real headless Chromium (Debian's
/usr/bin/chromium via playwright), served by `slamon api` over a seeded SQLite file: each badge
is drawn in its colour (screenshot pixels: grey for unknown, never green), its texts fit their
boxes by Chromium's own measure of the font, and a pool opens from the status page on its own
page. The screenshots stay in the test's tmp dir."""

from __future__ import annotations

import os
import struct
import subprocess
import zlib
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest
from sqlalchemy.orm import Session

from monitor.db.base import utcnow
from monitor.db.engine import make_engine
from monitor.db.migrate import upgrade
from monitor.status.badge_svg import COLOURS, FONT, text_width
from monitor.status.badges import badge_path
from tests.browser.test_status_page_browser import _answers, _launch, free_port
from tests.monitor.api.test_status_page import EVIL, add_states, add_target, seed
from tests.support import CHROMIUM, slamon_command, wait_for

pytestmark = pytest.mark.slow


@pytest.fixture
def served(tmp_path: Path) -> Iterator[str]:
    """`slamon api` over the status page's seeded deployment and one target down."""
    database_url = f"sqlite:///{tmp_path / 'slamon.db'}"
    engine = make_engine(database_url)
    upgrade(engine)
    with Session(engine) as session:
        seed(session)
        down = add_target(session, "gpu-down", pool="a100")
        add_states(session, down, "down", "down", utcnow() - timedelta(seconds=5))
        session.commit()
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


# --------------------------------------------------------------------------- reading a PNG


def png_pixels(data: bytes) -> tuple[int, int, list[bytes], int]:
    """An 8-bit, non-interlaced RGB or RGBA PNG (what Chromium's screenshots are): width,
    height, the unfiltered rows and the bytes per pixel."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    at, idat, header = 8, b"", b""
    while at < len(data):
        (length,) = struct.unpack(">I", data[at : at + 4])
        kind, body = data[at + 4 : at + 8], data[at + 8 : at + 8 + length]
        at += 12 + length
        if kind == b"IHDR":
            header = body
        elif kind == b"IDAT":
            idat += body
    width, height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", header)
    assert (depth, interlace) == (8, 0)
    assert colour in (2, 6)
    step = 3 if colour == 2 else 4
    raw, stride, rows = zlib.decompress(idat), width * step, []
    previous = bytearray(stride)
    for y in range(height):
        kind, line = (
            raw[y * (stride + 1)],
            bytearray(raw[y * (stride + 1) + 1 : (y + 1) * (stride + 1)]),
        )
        for x in range(stride):
            left = line[x - step] if x >= step else 0
            up, corner = previous[x], previous[x - step] if x >= step else 0
            line[x] = (line[x] + _predict(kind, left, up, corner)) & 0xFF
        rows.append(bytes(line))
        previous = line
    return width, height, rows, step


def _predict(kind: int, left: int, up: int, corner: int) -> int:
    if kind == 0:
        return 0
    if kind == 1:
        return left
    if kind == 2:
        return up
    if kind == 3:
        return (left + up) // 2
    guess = left + up - corner  # Paeth
    near = min(
        (abs(guess - left), 0, left), (abs(guess - up), 1, up), (abs(guess - corner), 2, corner)
    )
    return near[2]


def pixel(png: tuple[int, int, list[bytes], int], x: int, y: int) -> tuple[int, int, int]:
    _, _, rows, step = png
    r, g, b = rows[y][x * step : x * step + 3]
    return r, g, b


def rgb(colour: str) -> tuple[int, int, int]:
    digits = colour.lstrip("#")
    if len(digits) == 3:
        digits = "".join(c * 2 for c in digits)
    return int(digits[0:2], 16), int(digits[2:4], 16), int(digits[4:6], 16)


def nearest(seen: tuple[int, int, int]) -> str:
    """The badge colour (or the label's grey, ``label``) a pixel is closest to: the gloss
    shades a fill by a tenth at most, far less than the palette's colours stand apart."""
    palette = {**{name: rgb(hex_) for name, hex_ in COLOURS.items()}, "label": rgb("#555")}
    return min(
        palette, key=lambda n: sum((a - b) ** 2 for a, b in zip(seen, palette[n], strict=True))
    )


# --------------------------------------------------------------------------- the badges


BADGES = [  # kind, name, metric, the colour its value is drawn in
    ("targets", "gpu-h100-0", "state", "green"),  # up
    ("targets", "gpu-h100-1", "state", "orange"),  # unusable
    ("targets", "gpu-down", "state", "red"),
    ("targets", EVIL, "state", "grey"),  # never probed: unknown
    ("targets", "gpu-h100-2", "state", "grey"),  # a verdict nobody renewed: unknown
    ("targets", EVIL, "uptime-30d", "grey"),  # no data
    ("pools", "h100", "state", "yellow"),  # degraded: one usable of four
    ("pools", "a100", "state", "red"),  # its one member down
]


def test_chromium_draws_each_badge_in_its_colour_and_unknown_never_green(
    served: str, tmp_path: Path
) -> None:
    """Each badge opened on its own and screenshotted: the value box's pixels are nearest its
    colour (unknown and no data grey, never green), the label box's the label's grey."""
    assert CHROMIUM.exists(), "Debian's chromium is required here: apt-get install -y chromium"
    from playwright.sync_api import sync_playwright

    drawn: dict[str, tuple[list[str], list[str]]] = {}
    with sync_playwright() as pw:
        browser = _launch(pw)
        try:
            page = browser.new_page(viewport={"width": 400, "height": 40}, device_scale_factor=1)
            for n, (kind, name, metric, _) in enumerate(BADGES):
                response = page.goto(served + badge_path(kind, name, metric), wait_until="load")
                assert response is not None
                assert response.status == 200
                width = int(page.locator("svg").get_attribute("width") or 0)
                shot = tmp_path / f"badge-{n}.png"
                page.screenshot(path=str(shot), clip={"x": 0, "y": 0, "width": width, "height": 20})
                png = png_pixels(shot.read_bytes())
                assert png[:2] == (width, 20)
                # the value box's right edge and the label box's left edge: clear of the texts
                value = [nearest(pixel(png, width - 3, y)) for y in (5, 10, 14)]
                label = [nearest(pixel(png, 2, y)) for y in (5, 10, 14)]
                drawn[f"{kind}/{name}/{metric}"] = (value, label)
        finally:
            browser.close()
    for kind, name, metric, colour in BADGES:
        assert drawn[f"{kind}/{name}/{metric}"] == ([colour] * 3, ["label"] * 3), (name, metric)


def test_the_width_table_agrees_with_chromium_s_measure_of_the_font(served: str) -> None:
    """Chromium measures each text in the badge's own font stack at 11 px (DejaVu Sans here):
    the table's width is within 3 % of it, so a box holds its text without squeezing it."""
    from playwright.sync_api import sync_playwright

    samples = ["gpu-h100-0", "uptime 24h", "99.95%", "SLA 2026-05", "degraded", "WIDE mmm @@@"]
    with sync_playwright() as pw:
        browser = _launch(pw)
        try:
            page = browser.new_page()
            page.goto(served + "/healthz")
            measured = page.evaluate(
                """([font, texts]) => {
                    const ctx = document.createElement("canvas").getContext("2d");
                    ctx.font = "11px " + font;
                    return texts.map(t => ctx.measureText(t).width);
                }""",
                [FONT, samples],
            )
        finally:
            browser.close()
    for text, width in zip(samples, measured, strict=True):
        assert text_width(text) == pytest.approx(width, rel=0.03), text


def test_a_pool_opens_from_the_grouped_status_page_on_its_own_page(
    served: str, tmp_path: Path
) -> None:
    """Click pool h100 in the status page's groups: its page lists its four members (trouble
    first), logs no console error, fits a phone, and links back."""
    from playwright.sync_api import sync_playwright

    messages: list[tuple[str, str]] = []
    with sync_playwright() as pw:
        browser = _launch(pw)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.on("console", lambda m: messages.append((m.type, m.text)))
            page.on("pageerror", lambda e: messages.append(("pageerror", str(e))))
            page.goto(served + "/", wait_until="load")
            group = page.locator('#pools tr[data-group="aws"]').inner_text()
            page.locator('#pools tr[data-pool="h100"] a.name').click()
            page.wait_for_load_state("load")
            pool_url, title = page.url, page.title()
            members = page.locator("#fleet tr.target")
            names = [members.nth(i).get_attribute("data-target") for i in range(members.count())]
            page.screenshot(path=str(tmp_path / "pool.png"), full_page=True)
            page.set_viewport_size({"width": 390, "height": 844})
            overflow = page.evaluate(
                "document.documentElement.scrollWidth - document.documentElement.clientWidth"
            )
            page.get_by_role("link", name="← slamon status").click()
            page.wait_for_load_state("load")
            back = page.url
        finally:
            browser.close()
    assert "Amazon Web Services" in group
    assert pool_url == served + "/pools/h100"
    assert title == "h100 · slamon"
    assert names[0] == "gpu-h100-1"  # unusable first
    assert sorted(n or "" for n in names) == sorted(
        ["gpu-h100-0", "gpu-h100-1", "gpu-h100-2", EVIL]
    )
    assert overflow <= 0
    assert back == served + "/"
    assert [m for m in messages if m[0] in ("error", "pageerror")] == []

"""Drawing a badge (monitor/status/badge_svg.py): a well-formed SVG document whose boxes fit
their texts, with every text escaped and the widths taken from the per-character table."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from monitor.status.badge_svg import (
    COLOURS,
    MAX_CHARS,
    PADDING,
    Badge,
    render,
    shown,
    text_width,
    xml_text,
)

SVG = "{http://www.w3.org/2000/svg}"


def parsed(badge: Badge) -> ET.Element:
    return ET.fromstring(render(badge))


def texts(root: ET.Element) -> list[str]:
    """The texts a viewer draws (the shadows are aria-hidden copies)."""
    return [t.text or "" for t in root.iter(f"{SVG}text") if t.get("aria-hidden") != "true"]


def rects(root: ET.Element) -> list[dict[str, str]]:
    return [dict(r.attrib) for r in root.iter(f"{SVG}rect")]


def test_a_badge_is_an_svg_document_sized_in_pixels_with_a_view_box_and_a_title() -> None:
    root = parsed(Badge("gpu-0", "up", "green"))
    assert root.tag == f"{SVG}svg"
    width, height = int(root.get("width", "0")), int(root.get("height", "0"))
    assert height == 20
    assert root.get("viewBox") == f"0 0 {width} {height}"
    assert root.findtext(f"{SVG}title") == "gpu-0: up"
    assert root.get("role") == "img"
    assert texts(root) == ["gpu-0", "up"]


def test_the_label_is_grey_and_the_value_wears_its_colour() -> None:
    label, value, gloss = rects(parsed(Badge("state", "down", "red")))[1:]
    assert label["fill"] == "#555"
    assert value["fill"] == COLOURS["red"]
    assert gloss["fill"] == "url(#s)"


def test_each_box_holds_its_text_plus_padding_and_the_two_make_the_width() -> None:
    root = parsed(Badge("uptime 30d", "99.95%", "green"))
    label, value = rects(root)[1:3]
    label_width, value_width = int(label["width"]), int(value["width"])
    assert label_width == round(text_width("uptime 30d")) + 2 * PADDING
    assert value_width == round(text_width("99.95%")) + 2 * PADDING
    assert int(value["x"]) == label_width
    assert label_width + value_width == int(root.get("width", "0"))
    lengths = [int(t.get("textLength", "0")) for t in root.iter(f"{SVG}text")]
    assert lengths == [round(text_width(s)) * 10 for s in ("uptime 30d",) * 2 + ("99.95%",) * 2]


@pytest.mark.parametrize(
    ("narrow", "wide"),
    [
        pytest.param("iiii", "WWWW", id="letters-differ"),
        pytest.param("up", "unknown", id="longer-is-wider"),
        pytest.param("99.9%", "99.99%", id="digits-add"),
    ],
)
def test_widths_follow_the_characters_not_their_count(narrow: str, wide: str) -> None:
    assert text_width(narrow) < text_width(wide)


def test_known_widths_of_dejavu_sans_at_11_px() -> None:
    assert text_width("0") == 7.0  # every digit is as wide: tabular figures
    assert text_width(" ") == 3.5
    assert text_width("build") == pytest.approx(27.05, abs=0.01)


def test_a_character_outside_the_table_counts_as_the_widest_so_it_never_overflows() -> None:
    assert text_width("日") == text_width("@") == max(text_width(chr(c)) for c in range(32, 127))


def test_names_are_escaped_and_characters_xml_cannot_hold_are_replaced() -> None:
    evil = '<script>alert("x")</script>&\x00\x1b'
    root = parsed(Badge(evil, "up", "green"))  # parses: nothing broke out of the text
    assert texts(root)[0] == '<script>alert("x")</script>&\ufffd\ufffd'
    assert root.find(f".//{SVG}script") is None
    assert xml_text("a'b\"c") == "a&apos;b&quot;c"


def test_a_long_text_is_cut_with_an_ellipsis_and_kept_whole_in_the_title() -> None:
    name = "gpu-" + "x" * 100
    root = parsed(Badge(name, "up", "green"))
    drawn = texts(root)[0]
    assert len(drawn) == MAX_CHARS
    assert drawn.endswith("\u2026")
    assert root.findtext(f"{SVG}title") == f"{name}: up"
    assert shown("two\nlines  here") == "two lines here"

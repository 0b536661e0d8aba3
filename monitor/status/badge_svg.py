"""A badge as SVG (pure): the flat two-part badge people embed in READMEs and wikis (a grey
label, a coloured value), drawn as shields.io draws its ``flat`` style, so it sits beside the
other badges of a README without looking out of place.

SVG has no text layout: a badge's width must be known before a viewer draws it. Each text's
width is summed from ``WIDTHS``, the advance widths of DejaVu Sans at 11 px (the fallback font
the badge names after Verdana, Geneva: Bitstream Vera's metrics, which DejaVu keeps, were cut to
Verdana's, so the two agree to a few percent), and every ``<text>`` carries that width as its
``textLength``: a viewer with Verdana, DejaVu or neither stretches or squeezes the glyphs to the
box instead of overflowing it. Text is escaped for XML, characters XML cannot hold are replaced,
and a text longer than ``MAX_CHARS`` is cut with an ellipsis (the whole of it is in the badge's
``<title>``).
"""

from __future__ import annotations

from dataclasses import dataclass
from xml.sax.saxutils import escape

HEIGHT = 20
PADDING = 5  # px each side of a text
MAX_CHARS = 48
# the named colours a badge's value may take (shields' palette)
COLOURS = {
    "green": "#4c1",
    "yellowgreen": "#a4a61d",
    "yellow": "#dfb317",
    "orange": "#fe7d37",
    "red": "#e05d44",
    "blue": "#007ec6",
    "grey": "#9f9f9f",
}
LABEL_COLOUR = "#555"
FONT = "Verdana,Geneva,DejaVu Sans,sans-serif"

# Advance widths in tenths of a pixel at 11 px of DejaVu Sans, printable ASCII from " " (0x20)
# to "~" (0x7e), measured from /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf at 110 px.
WIDTHS = (
    35, 44.1, 50.6, 92.2, 70, 104.5, 85.8, 30.2,  # space ! " # $ % & '
    42.9, 42.9, 55, 92.2, 35, 39.7, 35, 37.1,  # ( ) * + , - . /
    70, 70, 70, 70, 70, 70, 70, 70,  # 0 - 7
    70, 70, 37.1, 37.1, 92.2, 92.2, 92.2, 58.4,  # 8 9 : ; < = > ?
    110, 75.2, 75.5, 76.8, 84.7, 69.5, 63.3, 85.2,  # @ A - G
    82.7, 32.4, 32.4, 72.1, 61.3, 94.9, 82.3, 86.6,  # H - O
    66.3, 86.6, 76.4, 69.8, 67.2, 80.5, 75.2, 108.8,  # P - W
    75.4, 67.2, 75.4, 42.9, 37.1, 42.9, 92.2, 55,  # X Y Z [ \ ] ^ _
    55, 67.4, 69.8, 60.5, 69.8, 67.7, 38.7, 69.8,  # ` a - g
    69.7, 30.6, 30.6, 63.7, 30.6, 107.2, 69.7, 67.3,  # h - o
    69.8, 69.8, 45.2, 57.3, 43.1, 69.7, 65.1, 90,  # p - w
    65.1, 65.1, 57.7, 70, 37.1, 70, 92.2,  # x y z { | } ~
)  # fmt: skip
FIRST = 0x20
WIDEST = 110  # "@": what a character outside the table is taken to be, so it never overflows


@dataclass(frozen=True, slots=True)
class Badge:
    """What a badge says: ``label`` on grey, ``value`` on ``colour`` (a name of ``COLOURS``),
    and ``title``, the sentence a screen reader and a tooltip give (label: value by default)."""

    label: str
    value: str
    colour: str
    title: str | None = None

    @property
    def hex(self) -> str:
        return COLOURS[self.colour]


def text_width(text: str) -> float:
    """``text``'s width in pixels at 11 px, from ``WIDTHS``."""
    tenths = 0.0
    for char in text:
        code = ord(char) - FIRST
        tenths += WIDTHS[code] if 0 <= code < len(WIDTHS) else WIDEST
    return tenths / 10


def xml_text(text: str) -> str:
    """``text`` escaped for an XML element or attribute, with the characters XML 1.0 cannot
    hold at all (controls, lone surrogates, U+FFFE/U+FFFF) replaced by U+FFFD."""
    kept = "".join(c if _xml_char(c) else "\ufffd" for c in text)
    return escape(kept, {'"': "&quot;", "'": "&apos;"})


def _xml_char(char: str) -> bool:
    code = ord(char)
    if code < 0x20:
        return char in "\t\n\r"
    return not (0xD800 <= code <= 0xDFFF or code in (0xFFFE, 0xFFFF))


def shown(text: str) -> str:
    """A text as the badge draws it: one line, at most ``MAX_CHARS`` characters."""
    line = " ".join(text.split())
    return line if len(line) <= MAX_CHARS else line[: MAX_CHARS - 1] + "\u2026"


def render(badge: Badge) -> str:
    """The badge as an SVG document: ``width``, ``height`` and a ``viewBox`` in pixels, a
    ``<title>``, and the label and the value each as a shadow and a white ``<text>``."""
    label, value = shown(badge.label), shown(badge.value)
    label_text, value_text = round(text_width(label)), round(text_width(value))
    label_box, value_box = label_text + 2 * PADDING, value_text + 2 * PADDING
    width = label_box + value_box
    title = xml_text(badge.title or f"{badge.label}: {badge.value}")
    return "".join(
        (
            f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{HEIGHT}" '
            f'viewBox="0 0 {width} {HEIGHT}" role="img" aria-label="{title}">',
            f"<title>{title}</title>",
            '<linearGradient id="s" x2="0" y2="100%"><stop offset="0" stop-color="#bbb" '
            'stop-opacity=".1"/><stop offset="1" stop-opacity=".1"/></linearGradient>',
            f'<clipPath id="r"><rect width="{width}" height="{HEIGHT}" rx="3" fill="#fff"/>'
            "</clipPath>",
            '<g clip-path="url(#r)">',
            f'<rect width="{label_box}" height="{HEIGHT}" fill="{LABEL_COLOUR}"/>',
            f'<rect x="{label_box}" width="{value_box}" height="{HEIGHT}" fill="{badge.hex}"/>',
            f'<rect width="{width}" height="{HEIGHT}" fill="url(#s)"/>',
            "</g>",
            f'<g fill="#fff" text-anchor="middle" font-family="{FONT}" '
            'text-rendering="geometricPrecision" font-size="110">',
            _text(label, PADDING + label_text / 2, label_text),
            _text(value, label_box + PADDING + value_text / 2, value_text),
            "</g></svg>",
        )
    )


def _text(text: str, middle: float, width: int) -> str:
    """One text, drawn at ten times its size and scaled down (as shields does, for sub-pixel
    placement): a dark shadow a pixel lower, then the white text, both ``width`` px long."""
    x, length, body = round(middle * 10), width * 10, xml_text(text)
    return (
        f'<text aria-hidden="true" x="{x}" y="150" fill="#010101" fill-opacity=".3" '
        f'transform="scale(.1)" textLength="{length}">{body}</text>'
        f'<text x="{x}" y="140" transform="scale(.1)" fill="#fff" '
        f'textLength="{length}">{body}</text>'
    )

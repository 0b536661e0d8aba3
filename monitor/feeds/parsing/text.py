"""Plain text from what feeds write: HTML stripped to text, ASCII folding, slugs."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from html.parser import HTMLParser

_BLOCK_TAGS = frozenset(
    {"p", "br", "div", "li", "ul", "ol", "tr", "h1", "h2", "h3", "h4", "h5", "h6", "small"}
)
_HTML_HINT = re.compile(r"<[a-zA-Z/!?]|&#?\w+;")
_TAG = re.compile(r"<[^>]*>")


class _TextExtractor(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _BLOCK_TAGS:
            self.parts.append("\n")

    def handle_endtag(self, tag: str) -> None:
        if tag in _BLOCK_TAGS:
            self.parts.append("\n")

    def handle_data(self, data: str) -> None:
        self.parts.append(data)


def html_to_text(html: str | None) -> str:
    """Plain text of an HTML fragment: tags dropped, entities decoded, blank runs folded.

    Never raises: ``html.parser`` asserts on some malformed markup (an unknown marked section
    such as ``<![foo[ bar ]]>``); such a fragment is read again with every tag cut out.
    """
    if not html:
        return ""
    try:
        return _extract_text(html)
    except AssertionError:
        return _extract_text(_TAG.sub(" ", html).replace("<", "&lt;"))


def _extract_text(html: str) -> str:
    extractor = _TextExtractor()
    extractor.feed(html)
    extractor.close()
    lines = (" ".join(line.split()) for line in "".join(extractor.parts).splitlines())
    return "\n".join(line for line in lines if line)


def plain_text(value: object) -> str:
    """A body as plain text: HTML is reduced to text; plain text keeps its paragraphs."""
    if not isinstance(value, str):
        return ""
    if _HTML_HINT.search(value):
        return html_to_text(value)
    lines = [line.rstrip() for line in value.replace("\r\n", "\n").split("\n")]
    return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()


def to_ascii(text: str) -> str:
    """``text`` with accents dropped ("São Paulo" -> "Sao Paulo") and other non-ASCII removed."""
    return unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()


def page_slug(name: object, default: str) -> str:
    """A provider slug ([a-z0-9-]) from a status page's name or feed title; ``default`` when
    ``name`` is no text or no letter or digit is left.

    The words from the first "status" on name the page, not the provider, unless "status" is
    the first word: "Cloudflare Status" -> "cloudflare", "GitHub Status - Incident History" ->
    "github", "Together AI Status Page" -> "together-ai", "CoreWeave Cloud" ->
    "coreweave-cloud", "Status" -> "status".
    """
    if not isinstance(name, str):
        return default
    words = re.sub(r"[^a-z0-9]+", " ", to_ascii(name).lower()).split()
    if "status" in words[1:]:
        words = words[: words.index("status", 1)]
    return "-".join(words) or default


def unique(values: Iterable[str]) -> tuple[str, ...]:
    """The values de-duplicated, in order of first appearance."""
    return tuple(dict.fromkeys(values))

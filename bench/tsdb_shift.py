"""A Prometheus TSDB block copied forward in time: the peer's history of an age repeated from
one pattern built by promtool, as bench/ages_seed.py repeats slamon's (bench/ages_peer.py).

A block's samples are stored with their timestamps delta-encoded, so moving every sample by
the same ``delta_ms`` touches few bytes (the formats:
https://github.com/prometheus/prometheus/tree/main/tsdb/docs/format):

- each XOR chunk in ``chunks/`` holds its first timestamp whole (a varint after the two-byte
  sample count), then deltas: the first timestamp is rewritten, and the chunk's CRC32;
- each series in ``index`` holds its first chunk's ``mint`` whole (a varint), then deltas: it
  is rewritten, and the series entry's CRC32;
- ``meta.json`` gets the moved ``minTime`` and ``maxTime`` and a new ULID.

A varint that would change length (a timestamp crossing 2^41 ms, in 2039) is refused, since every
reference into the files would move. The copy of a block that promtool built from samples
repeating with a period dividing ``delta_ms`` is the block promtool would build from the moved
samples, byte for byte but for its ULID (``tests/test_bench_tsdb_shift.py`` compares the two with
``promtool tsdb dump``).
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import struct
import time
from pathlib import Path

from crc32c import crc32c

XOR_ENCODING = 1
CHUNKS_HEADER = 8  # magic, version, padding
INDEX_TOC = 6 * 8 + 4  # six section offsets, then the TOC's CRC32
SERIES_ALIGN = 16
CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"


def uvarint(data: bytes | bytearray | memoryview, at: int) -> tuple[int, int]:
    """The unsigned varint at ``at``: its value and the offset after it."""
    value = shift = 0
    while True:
        byte = data[at]
        at += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, at
        shift += 7


def varint(data: bytes | bytearray | memoryview, at: int) -> tuple[int, int]:
    """The signed (zig-zag) varint at ``at``: its value and the offset after it."""
    raw, end = uvarint(data, at)
    return (raw >> 1) ^ -(raw & 1), end


def put_varint(value: int) -> bytes:
    """``value`` as a signed (zig-zag) varint."""
    raw = (value << 1) ^ (value >> 63)
    out = bytearray()
    while raw >= 0x80:
        out.append((raw & 0x7F) | 0x80)
        raw >>= 7
    out.append(raw)
    return bytes(out)


def _rewrite_varint(data: bytearray, at: int, delta: int, what: str) -> int:
    """Add ``delta`` to the signed varint at ``at`` in place; the offset after it."""
    value, end = varint(data, at)
    moved = put_varint(value + delta)
    if len(moved) != end - at:
        raise ValueError(f"{what} {value} moved by {delta} ms changes its length: not movable")
    data[at:end] = moved
    return end


def shift_chunks(data: bytearray, delta_ms: int) -> int:
    """Move every chunk of one ``chunks/`` segment file by ``delta_ms``, in place; how many."""
    at, count = CHUNKS_HEADER, 0
    while at < len(data):
        length, start = uvarint(data, at)
        if length == 0:  # the zero padding some writers leave at a segment's end
            break
        encoding = data[start]
        body = start + 1
        if encoding != XOR_ENCODING:
            raise ValueError(f"chunk at {at}: encoding {encoding}, only XOR (float) chunks move")
        _rewrite_varint(data, body + 2, delta_ms, "a chunk's first timestamp")
        end = body + length
        struct.pack_into(">I", data, end, crc32c(data[start:end]))
        at, count = end + 4, count + 1
    return count


def _index_sections(data: bytearray) -> tuple[int, int]:
    """Where the index's series section starts and ends (from its table of contents)."""
    toc = struct.unpack_from(">6Q", data, len(data) - INDEX_TOC)
    series = toc[1]
    later = [offset for offset in toc if offset > series]
    return series, min(later) if later else len(data) - INDEX_TOC


def shift_index(data: bytearray, delta_ms: int) -> int:
    """Move the first chunk's ``mint`` of every series in an ``index`` file by ``delta_ms``, in
    place (the later chunks' times are deltas); how many series."""
    at, end = _index_sections(data)
    count = 0
    while (at := -(-at // SERIES_ALIGN) * SERIES_ALIGN) < end:  # each entry starts aligned
        length, start = uvarint(data, at)
        if length == 0:
            break
        entry_end = start + length
        labels, p = uvarint(data, start)
        for _ in range(2 * labels):
            _, p = uvarint(data, p)
        chunks, p = uvarint(data, p)
        if chunks:
            _rewrite_varint(data, p, delta_ms, "a series' first chunk time")
        struct.pack_into(">I", data, entry_end, crc32c(data[start:entry_end]))
        at, count = entry_end + 4, count + 1
    return count


def new_ulid(at_ms: int) -> str:
    """A ULID whose time part is ``at_ms``."""
    value = (at_ms << 80) | int.from_bytes(secrets.token_bytes(10), "big")
    return "".join(CROCKFORD[(value >> (5 * i)) & 31] for i in reversed(range(26)))


def shift_block(block: Path, into: Path, delta_ms: int) -> Path:
    """A copy of ``block`` under ``into`` with every sample ``delta_ms`` later; its folder."""
    meta = json.loads((block / "meta.json").read_text())
    if meta.get("compaction", {}).get("level") != 1:
        raise ValueError(f"{block.name}: only uncompacted blocks (level 1, promtool's) move")
    min_time, max_time = meta["minTime"] + delta_ms, meta["maxTime"] + delta_ms
    ulid = new_ulid(int(time.time() * 1000))
    staging = into / f"{ulid}.tmp-for-creation"  # Prometheus ignores and removes these
    (staging / "chunks").mkdir(parents=True)
    for segment in sorted((block / "chunks").iterdir()):
        data = bytearray(segment.read_bytes())
        shift_chunks(data, delta_ms)
        (staging / "chunks" / segment.name).write_bytes(data)
    index = bytearray((block / "index").read_bytes())
    shift_index(index, delta_ms)
    (staging / "index").write_bytes(index)
    if (block / "tombstones").exists():
        shutil.copyfile(block / "tombstones", staging / "tombstones")
    meta |= {"ulid": ulid, "minTime": min_time, "maxTime": max_time}
    meta["compaction"] = {"level": 1, "sources": [ulid]}  # a block of its own, as promtool's
    (staging / "meta.json").write_text(json.dumps(meta, indent="\t"))
    os.replace(staging, into / ulid)
    return into / ulid

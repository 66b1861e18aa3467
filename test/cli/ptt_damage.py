#!/usr/bin/env python3
"""Structural damage of a binary ptt trace, the kind no checksum sees (ptt-trace(5)), written apart from formats/.

  ptt_damage.py DAMAGE IN OUT

IN is a version 1 trace with plain (uncompressed) blocks; its EVENTS records are first cut
into blocks of 40 records (a good trace of several blocks, written as "split"), then:

  split        nothing more (the good trace the others are made from)
  retag        the third EVENTS block's kind becomes 9 (a kind no version knows)
  snapshot     the third EVENTS block gets the snapshot flag, its records kept
  meta-after   the META blocks before the first EVENTS block moved after it
  duplicate    the third EVENTS block written twice
  swap         the third and fourth EVENTS blocks swapped
  drop         the third EVENTS block left out (a hole no checksum sees: not reported, the times jump)
  drop-first   the first EVENTS block left out (what a reader keeps of meta-after)
  clock-ns     clock_hz 1000000000 in the first META block (what a reader makes of clock-zero)
  clock-zero   clock_hz 0 in the first META block
  clock-minus  clock_hz -1 in the first META block
  count        the third EVENTS block's header says one record more than it holds
Every header crc (and a META block's text crc) is made right again.
"""
import struct, sys, zlib

HDR = struct.Struct("<IHHIIIIQQII")  # 48 bytes: magic kind flags payload_len raw_len count lost first last stream crc
MAGIC = b"\x89PTT\r\n\x1a\n"
META, EVENTS, CRC, SNAPSHOT = 1, 2, 0x2, 0x8


def blocks(data):
    at = 16
    while at + 48 <= len(data):
        h = list(HDR.unpack_from(data, at))
        yield h, data[at + 48:at + 48 + h[3]]
        at += 48 + h[3]


def records(payload):
    at = 0
    while at + 4 <= len(payload):
        n = (struct.unpack_from("<I", payload, at)[0] >> 16) & 0xff
        yield payload[at:at + 4 * n]
        at += 4 * n


def ticks(rec):
    lo, hi = struct.unpack_from("<II", rec, 4)
    return hi << 32 | lo


def events_block(magic, recs):
    p = b"".join(recs)
    return [magic, EVENTS, 0, len(p), len(p), len(recs), 0, ticks(recs[0]), ticks(recs[-1]), 0, 0], p


def split(data, per=40):
    out = []
    for h, p in blocks(data):
        if h[1] != EVENTS:
            out.append([h, p])
            continue
        if h[2] != 0:
            sys.exit("ptt_damage.py: only plain blocks are cut: flags %d" % h[2])
        recs = list(records(p))
        for i in range(0, len(recs), per):
            nh, np = events_block(h[0], recs[i:i + per])
            out.append([nh, np])
    return out


def meta_clock(h, p, value):
    text = zlib.decompress(p) if h[2] & 1 else p
    lines = [l if not l.startswith(b"clock_hz ") else b"clock_hz " + value for l in text.split(b"\n")]
    text = b"\n".join(lines)
    h[2] &= ~1
    h[3] = h[4] = len(text)
    if h[2] & CRC:
        h[5] = zlib.crc32(text)
    return h, text


def main():
    damage, src, dst = sys.argv[1:4]
    with open(src, "rb") as f:
        data = f.read()
    if data[:8] != MAGIC:
        sys.exit("ptt_damage.py: %s: not a binary trace" % src)
    bl = split(data)
    ev = [i for i, (h, _) in enumerate(bl) if h[1] == EVENTS]
    if len(ev) < 4:
        sys.exit("ptt_damage.py: %s: fewer than 4 EVENTS blocks once cut" % src)
    third, fourth = ev[2], ev[3]
    if damage == "retag":
        bl[third][0][1] = 9
    elif damage == "snapshot":
        bl[third][0][2] |= SNAPSHOT
    elif damage == "meta-after":
        lead = [b for b in bl[:ev[0]] if b[0][1] == META]
        rest = [b for b in bl[:ev[0]] if b[0][1] != META]
        bl = rest + [bl[ev[0]]] + lead + bl[ev[0] + 1:]
    elif damage == "duplicate":
        bl.insert(third + 1, [list(bl[third][0]), bl[third][1]])
    elif damage == "swap":
        bl[third], bl[fourth] = bl[fourth], bl[third]
    elif damage == "drop":
        del bl[third]
    elif damage == "drop-first":
        del bl[ev[0]]
    elif damage in ("clock-zero", "clock-minus", "clock-ns"):
        m = next(i for i, (h, _) in enumerate(bl) if h[1] == META)
        bl[m] = list(meta_clock(bl[m][0], bl[m][1], {"clock-zero": b"0", "clock-minus": b"-1"}.get(damage, b"1000000000")))
    elif damage == "count":
        bl[third][0][5] += 1
    elif damage != "split":
        sys.exit("ptt_damage.py: unknown damage '%s'" % damage)
    out = bytearray(data[:16])
    for h, p in bl:
        h[10] = zlib.crc32(HDR.pack(*h)[:44])
        out += HDR.pack(*h) + p
    with open(dst, "wb") as f:
        f.write(out)


main()

#!/usr/bin/env python3
"""Block-level views of a binary ptt trace, written apart from formats/ (ptt-trace(5)).

  ptt_blocks.py flags FILE      one line per block: KIND FLAGS (decimal)
  ptt_blocks.py counts FILE     one line per EVENTS block: OFFSET RECORDS FLAGS PAYLOAD_BYTES
  ptt_blocks.py meta FILE       the first META block's text, decompressed here (zlib or the zstd CLI)
  ptt_blocks.py marks FILE      version 3 (streams): "version V streams S marks M late L unordered U":
                                L stream blocks with a record before a MARK written ahead of them,
                                U stream blocks that begin before their stream's previous block ends
  ptt_blocks.py mix IN OUT      IN (uncompressed) with its EVENTS blocks stored in turn raw,
                                zlib (python's) and zstd (the zstd CLI's), unpacked (compact blocks
                                stay compact, compressed)
  ptt_blocks.py setflag FILE N FLAG
                                FILE's Nth EVENTS block (from 1) given the flag bit FLAG as well,
                                its header's checksum made right: a block this reader must refuse
  ptt_blocks.py flip FILE AT     FILE's byte at offset AT xor 0x55: damage only a record's checksum sees
  ptt_blocks.py anchor IN OUT NS HOST
                                IN with its first META block's realtime_ns moved by NS (may be
                                negative) and its hostname made HOST, stored uncompressed: a
                                recording as another host with a clock NS off would have made it
"""
import struct, subprocess, sys, zlib

HDR = struct.Struct("<IHHIIIIQQII")  # 48 bytes: magic kind flags payload_len raw_len count lost first last stream crc
ZLIB, ZSTD, COMPACT = 0x1, 0x10, 0x20


def blocks(data):
    at = 16
    while at + 48 <= len(data):
        if data[at:at + 8] == b"\x89PTT\r\n\x1a\n":
            at += 16
            continue
        h = list(HDR.unpack_from(data, at))
        end = at + 48 + h[3]
        yield at, h, data[at + 48:end]
        at = end


def unzstd(payload):
    return subprocess.run(["zstd", "-q", "-d", "-c"], input=payload, stdout=subprocess.PIPE, check=True).stdout


def main():
    with open(sys.argv[2], "rb") as f:
        data = f.read()
    if sys.argv[1] == "flags":
        for _, h, _ in blocks(data):
            print(h[1], h[2])
    elif sys.argv[1] == "counts":
        for at, h, _ in blocks(data):
            if h[1] == 2:
                print(at, h[5], h[2], h[3])
    elif sys.argv[1] == "marks":
        mark, marks, late, unordered, last = 0, 0, 0, 0, {}
        for _, h, _ in blocks(data):
            if h[1] == 4:
                marks += 1
                mark = max(mark, h[7])
            elif h[1] == 2 and h[9] and h[5]:
                late += h[7] < mark
                unordered += h[7] < last.get(h[9], 0)
                last[h[9]] = h[8]
        print("version", struct.unpack_from("<I", data, 8)[0], "streams", len(last), "marks", marks,
              "late", late, "unordered", unordered)
    elif sys.argv[1] == "meta":
        for _, h, p in blocks(data):
            if h[1] == 1:
                sys.stdout.write((zlib.decompress(p) if h[2] & ZLIB else unzstd(p) if h[2] & ZSTD else p).decode())
                break
    elif sys.argv[1] == "anchor":
        out, done = bytearray(data[:16]), False
        for _, h, p in blocks(data):
            if h[1] == 1 and not done:
                done = True
                text = (zlib.decompress(p) if h[2] & ZLIB else unzstd(p) if h[2] & ZSTD else p).decode()
                lines = []
                for line in text.split("\n"):
                    if line.startswith("realtime_ns "):
                        line = "realtime_ns %d" % (int(line.split()[1]) + int(sys.argv[4]))
                    elif line.startswith("hostname "):
                        line = "hostname " + sys.argv[5]
                    elif line.startswith("machine_id ") or line.startswith("boot_id "):
                        line = line.split()[0] + " " + "%032x" % zlib.crc32(sys.argv[5].encode() + line.encode())
                    lines.append(line)
                p = "\n".join(lines).encode()
                h[2] &= ~(ZLIB | ZSTD)
                h[3] = h[4] = len(p)
                if h[2] & 2:
                    h[5] = zlib.crc32(p)
            h[10] = zlib.crc32(HDR.pack(*h)[:44])
            out += HDR.pack(*h) + p
        with open(sys.argv[3], "wb") as f:
            f.write(out)
    elif sys.argv[1] == "flip":
        data = bytearray(data)
        data[int(sys.argv[3])] ^= 0x55
        with open(sys.argv[2], "wb") as f:
            f.write(data)
    elif sys.argv[1] == "setflag":
        data, seen = bytearray(data), 0
        for at, h, _ in blocks(data):
            if h[1] == 2:
                seen += 1
                if seen == int(sys.argv[3]):
                    h[2] |= int(sys.argv[4], 0)
                    h[10] = zlib.crc32(HDR.pack(*h)[:44])
                    HDR.pack_into(data, at, *h)
                    break
        else:
            sys.exit("no EVENTS block %s" % sys.argv[3])
        with open(sys.argv[2], "wb") as f:
            f.write(data)
    elif sys.argv[1] == "mix":
        out, n = bytearray(data[:16]), 0
        for _, h, p in blocks(data):
            if h[1] == 2 and h[2] & ~COMPACT == 0 and h[5]:
                n += 1
                z = zlib.compress(p) if n % 3 == 1 else subprocess.run(
                    ["zstd", "-q", "-1", "-c"], input=p, stdout=subprocess.PIPE, check=True).stdout if n % 3 == 2 else None
                if z is not None:
                    h[2], h[3], h[4], p = (ZLIB if n % 3 == 1 else ZSTD) | (h[2] & COMPACT), len(z), len(p), z
            h[10] = zlib.crc32(HDR.pack(*h)[:44])
            out += HDR.pack(*h) + p
        with open(sys.argv[3], "wb") as f:
            f.write(out)
        print(n)


main()

#!/usr/bin/env python3
"""compact_seeds.py DIR TRACE...: the compact EVENTS blocks of TRACEs as inputs of
fuzz_compact.c (first timestamp, 8 bytes; a byte that says which of the harness's checks
run on it, how it stores the block and its record count; the payload, decompressed), each
three times: for the expansion alone, for the reader (raw or zlib), for the writer.
fuzz/corpus/compact holds those of test/cli/fixtures, made once."""
import os, struct, sys, zlib

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
for path in sys.argv[2:]:
    d = open(path, 'rb').read()
    off, n = 16, 0
    while off + 48 <= len(d):
        if d[off:off + 4] == b'\x89PTT':
            off += 16
            continue
        magic, kind, flags, plen, rlen, count = struct.unpack_from('<IHHIII', d, off)
        first, = struct.unpack_from('<Q', d, off + 24)
        if magic != 0x42545450:
            break
        payload = d[off + 48:off + 48 + plen]
        off += 48 + plen
        if kind != 2 or not flags & 0x20 or flags & 0x10:
            continue  # not compact, or zstd (python has no zstd here; the zstd fixtures' blocks are
                      # in the reader's and ptt-paje's corpora)
        if flags & 1:
            try:
                payload = zlib.decompress(payload)
            except zlib.error:
                continue
        # byte % 16: 15 the reader (byte % 3: 0 raw, 1 zlib; byte / 3 * 7 records), 14 the writer
        for suffix, byte in (('x', 0), ('r', 15 if n % 2 else 79), ('w', 14)):
            name = '%s/%s.%d%s' % (out, os.path.basename(path).replace('.ptt', ''), n, suffix)
            open(name, 'wb').write(struct.pack('<QB', first, byte) + payload[:8192 - 9])
        n += 1

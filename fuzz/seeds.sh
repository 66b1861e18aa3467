#!/bin/sh
# seeds.sh BUILD DIR: seed inputs for the harnesses from traces of the examples,
# recorded now: DIR/reader (binary plain, zstd and zlib packed, and text), DIR/text
# (ptt-dump lines), DIR/paje (the same traces), DIR/snapshot (their ptt-index copies),
# DIR/compact (their compact blocks, when python3 is there), DIR/blocks (the binary
# traces again, their blocks moved about by the harness).  fuzz/corpus holds a copy
# made once, replayed by make check.
set -eu
BUILD=$1
DIR=$2
BIN=$BUILD/bin
mkdir -p "$DIR/reader" "$DIR/text" "$DIR/paje" "$DIR/compact" "$DIR/snapshot" "$DIR/blocks"
for ex in primitives prim_rwlock prim_sem prim_spin addr_reuse prim_c11; do
	[ -x "$BUILD/examples/$ex" ] || continue
	# the examples' exit status is their own verdict; a trace is all we need
	"$BIN/ptt-record" -q -o "$DIR/reader/$ex.ptt" -- "$BUILD/examples/$ex" >/dev/null 2>&1 || true
	"$BIN/ptt-record" -q -z -o "$DIR/reader/$ex.z.ptt" -- "$BUILD/examples/$ex" >/dev/null 2>&1 || true
	"$BIN/ptt-record" -q -z -Z zlib -o "$DIR/reader/$ex.zlib.ptt" -- "$BUILD/examples/$ex" >/dev/null 2>&1 || true
	"$BIN/ptt-dump" "$DIR/reader/$ex.ptt" >"$DIR/text/$ex.txt" 2>/dev/null || true
	cp "$DIR/reader/$ex.ptt" "$DIR/paje/$ex.ptt"
	"$BIN/ptt-index" -i 50 "$DIR/reader/$ex.zlib.ptt" >"$DIR/snapshot/$ex.ptt" 2>/dev/null || true
done
! command -v python3 >/dev/null || python3 "$(dirname "$0")/compact_seeds.py" "$DIR/compact" "$DIR"/reader/*.ptt
cp "$DIR/text/primitives.txt" "$DIR/reader/primitives.txt"
cp "$DIR/text/primitives.txt" "$DIR/paje/primitives.txt"
cp "$DIR"/reader/*.ptt "$DIR/blocks/"

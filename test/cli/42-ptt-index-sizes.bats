#!/usr/bin/env bats
# ptt-index's copy is no bigger than its input (README, ptt-index(1)): on a default trace
# (compact coding, uncompressed), a compressed one (zstd, zlib) and a rotated one, the copy,
# snapshots included, takes no more bytes than the input's files, and reads as the input.
# Sizes are compared, never times.
bats_require_minimum_version 1.5.0
load helpers

# the copy of the input files "$@" with a snapshot every 5000 events: no bigger than them,
# the same events, and a window from its snapshots the same as one from the input
copy_no_bigger() {
	local in=0 out f
	for f in "$@"; do in=$((in + $(stat -c %s "$f"))); done
	run -0 --separate-stderr ptt-index -i 5000 "$@"
	[ -z "$stderr" ]
	ptt-index -i 5000 "$@" >"$BATS_TEST_TMPDIR/copy.ptt"
	out=$(stat -c %s "$BATS_TEST_TMPDIR/copy.ptt")
	echo "input $in bytes, copy $out bytes"
	[ "$out" -le "$in" ]
	# snapshots were written (flag 8), so the comparison includes them
	python3 "$BATS_TEST_DIRNAME/ptt_blocks.py" flags "$BATS_TEST_TMPDIR/copy.ptt" | awk '$1 == 2 && $2 % 16 >= 8 { n++ } END { exit !(n >= 2) }'
	diff <(ptt-dump "$@") <(ptt-dump "$BATS_TEST_TMPDIR/copy.ptt")
	# a window from the copy's snapshots, byte for byte the window of a full replay (a pipe: no
	# seeking back, the snapshots are skipped).  (A rotated set's own window is not compared: the
	# files read as a set and their one-file copy give the same events but not the same context.)
	n=$(ptt-dump -n "$@" | wc -l)
	ptt-filter --first=$((n * 2 / 3)) --count=50 "$BATS_TEST_TMPDIR/copy.ptt" >"$BATS_TEST_TMPDIR/a.ptt"
	cat "$BATS_TEST_TMPDIR/copy.ptt" | ptt-filter --first=$((n * 2 / 3)) --count=50 >"$BATS_TEST_TMPDIR/b.ptt"
	# (a rotated set's copy too: the state its snapshots hold was numbered as the set was read, each
	# part's skipped head counted, and came after the copy's own events in the window's context, 2
	# windows in 25 of -z sets; positions now count the events delivered, the copy's numbering)
	cmp "$BATS_TEST_TMPDIR/a.ptt" "$BATS_TEST_TMPDIR/b.ptt"
	[ "$(ptt-dump -n "$BATS_TEST_TMPDIR/a.ptt" | wc -l)" -ge 50 ]
}

@test "ptt-index: the copy of a default (compact, uncompressed) trace is no bigger than it" {
	ptt-record -q -o "$BATS_TEST_TMPDIR/t.ptt" -- "$EXAMPLES/prodcons" -p 2 -c 2 -n 30000 >/dev/null
	copy_no_bigger "$BATS_TEST_TMPDIR/t.ptt"
}

@test "ptt-index: the copy of a compressed trace (zstd, zlib) is no bigger than it, and compressed the same way" {
	for comp in zstd zlib; do
		ptt-record -q -z -Z "$comp" -o "$BATS_TEST_TMPDIR/z.ptt" -- "$EXAMPLES/prodcons" -p 2 -c 2 -n 30000 >/dev/null
		copy_no_bigger "$BATS_TEST_TMPDIR/z.ptt"
		want=$([ "$comp" = zstd ] && echo 16 || echo 1)
		# on a loaded machine the recorder's compressor (at idle priority) can fall behind and write some
		# blocks raw; ptt-index takes the compressor of the blocks read when it opens the copy, so the
		# copy is then zlib or zstd: one of them throughout
		# (a block of a record or two, which no compressor makes smaller, is stored raw by design: a
		# raw block of under 128 payload bytes is left out of both checks; counts: OFFSET RECORDS FLAGS BYTES)
		if python3 "$BATS_TEST_DIRNAME/ptt_blocks.py" counts "$BATS_TEST_TMPDIR/z.ptt" |
			awk '$3 % 16 < 8 && $3 % 2 == 0 && int($3 / 16) % 2 == 0 && $4 >= 128 { raw++ } END { exit !raw }'; then
			run python3 "$BATS_TEST_DIRNAME/ptt_blocks.py" counts "$BATS_TEST_TMPDIR/copy.ptt"
			[ "$status" -eq 0 ]
			echo "$output" | awk '$3 % 16 < 8 && ($3 % 2 || int($3 / 16) % 2 || $4 >= 128) { z[$3 % 2 ? "zlib" : int($3 / 16) % 2 ? "zstd" : "raw"]++ }
				END { n = 0; for (k in z) n++; exit !(n == 1 && !("raw" in z)) }'
			continue
		fi
		# every EVENTS block of the copy with records (not a snapshot, flag 8) by the input's compressor
		run python3 "$BATS_TEST_DIRNAME/ptt_blocks.py" counts "$BATS_TEST_TMPDIR/copy.ptt"
		[ "$status" -eq 0 ]
		echo "$output" | awk -v w="$want" '$3 % 16 < 8 && ($3 % 2 || int($3 / 16) % 2 || $4 >= 128) { n++; if (int($3 / w) % 2 == 0) bad++ }
			END { exit !(n > 0 && !bad) }'
	done
}

@test "ptt-index: the copy of a rotated trace (-m), default and compressed, is no bigger than its files" {
	for z in "" -z; do
		rm -f "$BATS_TEST_TMPDIR"/r.ptt.*
		# (compressed, 64 KiB, the smallest -m, holds more events: a longer run for several files)
		ptt-record -q $z -m 64k -o "$BATS_TEST_TMPDIR/r.ptt" -- "$EXAMPLES/prodcons" -p 2 -c 2 -n "$([ -z "$z" ] && echo 30000 || echo 100000)" >/dev/null
		set -- "$BATS_TEST_TMPDIR"/r.ptt.*
		[ "$#" -ge 3 ]
		copy_no_bigger "$@"
	done
}

@test "ptt-index -z 0: an uncompressed copy in the compact coding, as large as the input and its snapshots" {
	ptt-record -q -o "$BATS_TEST_TMPDIR/t.ptt" -- "$EXAMPLES/prodcons" -p 2 -c 2 -n 30000 >/dev/null
	ptt-index -z 0 -i 5000 "$BATS_TEST_TMPDIR/t.ptt" >"$BATS_TEST_TMPDIR/raw.ptt"
	ptt-index -i 5000 "$BATS_TEST_TMPDIR/t.ptt" >"$BATS_TEST_TMPDIR/z.ptt"
	# EVENTS blocks with records: compact (32), none compressed (zlib 1, zstd 16)
	python3 "$BATS_TEST_DIRNAME/ptt_blocks.py" flags "$BATS_TEST_TMPDIR/raw.ptt" |
		awk '$1 == 2 && $2 % 16 < 8 { n++; if (int($2 / 32) % 2 == 0 || $2 % 2 || int($2 / 16) % 2) bad++ } END { exit !(n > 0 && !bad) }'
	# without snapshots, the events coded as the input's: its size within 1 %
	ptt-index -z 0 -i 1000000000 "$BATS_TEST_TMPDIR/t.ptt" >"$BATS_TEST_TMPDIR/nosnap.ptt"
	in=$(stat -c %s "$BATS_TEST_TMPDIR/t.ptt") raw=$(stat -c %s "$BATS_TEST_TMPDIR/raw.ptt")
	z=$(stat -c %s "$BATS_TEST_TMPDIR/z.ptt") nosnap=$(stat -c %s "$BATS_TEST_TMPDIR/nosnap.ptt")
	echo "input $in, -z 0 copy $raw ($nosnap without snapshots), default copy $z"
	[ "$nosnap" -le $((in + in / 100)) ] && [ "$nosnap" -ge $((in - in / 100)) ]
	[ "$raw" -gt "$nosnap" ]
	[ "$z" -lt "$in" ]
	diff <(ptt-dump "$BATS_TEST_TMPDIR/t.ptt") <(ptt-dump "$BATS_TEST_TMPDIR/raw.ptt")
}

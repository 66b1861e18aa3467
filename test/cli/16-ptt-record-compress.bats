#!/usr/bin/env bats
# -z: zstd blocks (zlib with -Z zlib), read by every tool; raw and compressed blocks mixed in one trace.
bats_require_minimum_version 1.5.0
load helpers

blocks() { python3 "$BATS_TEST_DIRNAME/ptt_blocks.py" "$@"; }

# every reading tool on TRACE, each checked against the same tool on REF (the same events)
same_everywhere() {
	local t=$1 ref=$2 tool
	cmp <(ptt-dump -n "$ref") <(ptt-dump -n "$t")
	run -0 --separate-stderr ptt-dump --check "$t"
	[[ "$output" == *" 0 damaged, 0 lost, 0 out of order, 0 violations: ok" ]]
	[ -z "$stderr" ]
	for tool in "ptt-stat -n 0" "ptt-csv --states" "ptt-json" "ptt-deadlock" "ptt-paje --objects" "ptt-dump --info"; do
		# shellcheck disable=SC2086 # the tool's words
		cmp <($tool "$ref" 2>&1 | sed "s|$ref|TRACE|g") <($tool "$t" 2>&1 | sed "s|$t|TRACE|g") ||
			{ echo "$tool differs"; return 1; }
	done
	cmp <(ptt-dump -n "$ref") <(ptt-filter "$t" | ptt-dump -n)
}

@test "-z writes zstd blocks, -z -Z zlib zlib blocks: both read by every tool as their raw copy" {
	for comp in zstd zlib; do
		run -0 --separate-stderr ptt-record -q -z -Z "$comp" -o "$BATS_TEST_TMPDIR/$comp.ptt" -- "$EXAMPLES/prodcons" -n 3000
		[ -z "$stderr" ]
		# the META block is text: decompressed here by an independent decoder (python's zlib, the zstd CLI)
		blocks meta "$BATS_TEST_TMPDIR/$comp.ptt" >"$BATS_TEST_TMPDIR/meta.txt"
		grep -q '^clock_hz [1-9][0-9]*$' "$BATS_TEST_TMPDIR/meta.txt"
		# EVENTS blocks are compact and compressed (flags 32 and 16 or 1); META and END carry their crc (2)
		blocks flags "$BATS_TEST_TMPDIR/$comp.ptt" | sort | uniq -c >"$BATS_TEST_TMPDIR/flags.txt"
		want=$([ $comp = zstd ] && echo 48 || echo 33)
		grep -qE "^ +[1-9][0-9]* 2 $want\$" "$BATS_TEST_TMPDIR/flags.txt" || { cat "$BATS_TEST_TMPDIR/flags.txt"; return 1; }
		# nothing of the other compressor
		other=$([ $comp = zstd ] && echo 1 || echo 16)
		awk -v o="$other" '{ if (int($3 / o) % 2) exit 1 }' "$BATS_TEST_TMPDIR/flags.txt"
		# a raw copy (ptt-filter writes uncompressed) reads the same in every tool
		ptt-filter "$BATS_TEST_TMPDIR/$comp.ptt" >"$BATS_TEST_TMPDIR/raw.ptt"
		blocks flags "$BATS_TEST_TMPDIR/raw.ptt" | awk '$1 == 2 && $2 != 0 { exit 1 }'
		same_everywhere "$BATS_TEST_TMPDIR/$comp.ptt" "$BATS_TEST_TMPDIR/raw.ptt"
		ptt-paje "$BATS_TEST_TMPDIR/$comp.ptt" >"$BATS_TEST_TMPDIR/t.paje"
		assert_paje_valid "$BATS_TEST_TMPDIR/t.paje"
	done
	# the END block says which compressor made the blocks, and how many went raw because it was behind
	ptt-dump "$BATS_TEST_TMPDIR/zlib.ptt" | sed -n '/^# end$/,$p' >"$BATS_TEST_TMPDIR/end.txt"
	grep -qx '# compressor zlib' "$BATS_TEST_TMPDIR/end.txt"
	grep -qE '^# blocks [1-9][0-9]*$' "$BATS_TEST_TMPDIR/end.txt"
	grep -qE '^# blocks_raw_behind [0-9]+$' "$BATS_TEST_TMPDIR/end.txt"
}

@test "raw, zlib and zstd EVENTS blocks mixed in one trace read as the raw trace" {
	record "$EXAMPLES/prodcons" -n 3000
	# plain blocks (ptt-filter's copy), every EVENTS block in turn: raw, zlib (python's), zstd (the zstd CLI's), not packed
	ptt-filter "$BATS_TEST_TMPDIR/t.ptt" >"$BATS_TEST_TMPDIR/plain.ptt"
	run -0 blocks mix "$BATS_TEST_TMPDIR/plain.ptt" "$BATS_TEST_TMPDIR/mixed.ptt"
	[ "$output" -ge 6 ]
	blocks flags "$BATS_TEST_TMPDIR/mixed.ptt" | sort | uniq -c >"$BATS_TEST_TMPDIR/flags.txt"
	for f in 0 1 16; do
		grep -qE "^ +[1-9][0-9]* 2 $f\$" "$BATS_TEST_TMPDIR/flags.txt" || { cat "$BATS_TEST_TMPDIR/flags.txt"; return 1; }
	done
	same_everywhere "$BATS_TEST_TMPDIR/mixed.ptt" "$BATS_TEST_TMPDIR/t.ptt"
	# ptt-record's compact blocks (flag 32), compressed the same way: the coded records inside the frame
	run -0 blocks mix "$BATS_TEST_TMPDIR/t.ptt" "$BATS_TEST_TMPDIR/cmixed.ptt"
	[ "$output" -ge 3 ]
	blocks flags "$BATS_TEST_TMPDIR/cmixed.ptt" | sort | uniq -c >"$BATS_TEST_TMPDIR/flags.txt"
	for f in 32 33 48; do
		grep -qE "^ +[1-9][0-9]* 2 $f\$" "$BATS_TEST_TMPDIR/flags.txt" || { cat "$BATS_TEST_TMPDIR/flags.txt"; return 1; }
	done
	same_everywhere "$BATS_TEST_TMPDIR/cmixed.ptt" "$BATS_TEST_TMPDIR/t.ptt"
	# a window of the mixed trace, with its context, as the raw trace's
	cmp <(ptt-filter --first=100 --count=50 "$BATS_TEST_TMPDIR/t.ptt" | ptt-dump -n) \
		<(ptt-filter --first=100 --count=50 "$BATS_TEST_TMPDIR/mixed.ptt" | ptt-dump -n)
}

@test "a block with a compressor this version does not know is skipped and said so" {
	record "$EXAMPLES/prodcons" -n 3000
	# flag 0x80 on the second EVENTS block: not a compressor of this version
	blocks setflag "$BATS_TEST_TMPDIR/t.ptt" 2 0x80
	run -1 --separate-stderr ptt-dump --check "$BATS_TEST_TMPDIR/t.ptt"
	[[ "$stderr" == *"block compressed in a way this version does not know, block skipped"* ]]
	[[ "$output" == *"1 damaged"* ]]
}

@test "the coded flag on a block that is no thread's stream is said and the block skipped, not read as a plain one" {
	record "$EXAMPLES/prodcons" -n 3000
	# flag 0x40 (a thread's coded stream, --streams=coded) on the second EVENTS block of a default trace
	blocks setflag "$BATS_TEST_TMPDIR/t.ptt" 2 0x40
	run -1 --separate-stderr ptt-dump --check "$BATS_TEST_TMPDIR/t.ptt"
	[[ "$stderr" == *"coded EVENTS block that names no stream, skipped: "*" events lost"* ]]
	[[ "$output" == *" events, 1 damaged, "* ]]
}

@test "a coded stream's block in a file that says version 3 is damage, said block by block; version 4 reads it" {
	# --streams=coded -z: coded blocks, compressed (112) and raw (96), in a file of version 4
	run -0 --separate-stderr ptt-record -q --streams=coded -z -o "$BATS_TEST_TMPDIR/t.ptt" -- "$EXAMPLES/prodcons" -n 3000
	[ "$(head -c 12 "$BATS_TEST_TMPDIR/t.ptt" | od -An -tu4 -j8 | tr -d ' ')" = 4 ]
	run -0 --separate-stderr ptt-dump --check "$BATS_TEST_TMPDIR/t.ptt"
	[[ "$output" == *" 0 damaged, 0 lost, 0 out of order, 0 violations: ok" ]]
	coded=$(blocks flags "$BATS_TEST_TMPDIR/t.ptt" | awk '$1 == 2 && int($2 / 64) % 2 { n++ } END { print n + 0 }')
	[ "$coded" -ge 3 ]
	# the same bytes saying version 3: no reader of version 3 wrote a coded block
	cp "$BATS_TEST_TMPDIR/t.ptt" "$BATS_TEST_TMPDIR/v3.ptt"
	printf '\003' | dd of="$BATS_TEST_TMPDIR/v3.ptt" bs=1 seek=8 conv=notrunc 2>/dev/null
	run -1 --separate-stderr ptt-dump --check "$BATS_TEST_TMPDIR/v3.ptt"
	[[ "$output" =~ ": "([0-9]+)" events, "([0-9]+)" damaged, "[0-9]+" lost, 0 out of order, 0 violations: FAILED"$ ]]
	[ "${BASH_REMATCH[2]}" -eq "$coded" ]
	# the first three said, then the count
	[ "$(grep -c "coded EVENTS block in a file of version 3 (coded streams are version 4's), skipped: [0-9]* events\? lost" <<<"$stderr")" -eq 3 ]
	[[ "$stderr" == *"ptt-dump: $BATS_TEST_TMPDIR/v3.ptt: $coded damaged records or blocks skipped in all (the first 3 shown above)" ]]
}

@test "-Z takes zstd or zlib, and needs -z" {
	run -2 --separate-stderr ptt-record -Z lzma -z -- true
	[ "$stderr" = "ptt-record: -Z: zstd or zlib: 'lzma'" ]
	run -2 --separate-stderr ptt-record --compressor=zlib -- true
	[ "$stderr" = "ptt-record: -Z needs -z" ]
	run -0 --separate-stderr ptt-record -q -z --compressor=zlib -o "$BATS_TEST_TMPDIR/t.ptt" -- true
	[ -z "$stderr" ]
}

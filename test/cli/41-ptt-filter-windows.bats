#!/usr/bin/env bats
# Windows are windows: context stamped at the window's start, readers describe the window only;
# ptt-index's snapshots give the same window, byte for byte, without replaying from the start.
bats_require_minimum_version 1.5.0
load helpers

setup() {
	T="$BATS_TEST_TMPDIR/t.ptt"
	ptt-record -q -o "$T" -- "$EXAMPLES/prodcons" -p 2 -c 2 -n 20000 >/dev/null
	dur=$(ptt-dump --info "$T" | awk '/^duration:/ { print $2 }')
	# a window from the trace's event at 40% of its events, and after every thread began:
	# the threads all live then (40% of the duration is not that: a loaded machine can
	# make the program's start-up a large share of a short run)
	from=$(ptt-dump -n "$T" | awk '{ t[NR] = $1 } $5 == "thread_begin" { last = NR }
		END { k = int(NR * 0.4); if (k <= last) k = last + 1; printf "%.0f", t[k] * 1e9 }')
}

@test "a 10 ms window is drawn from its start: nothing before it, in the trace or in the Paje" {
	[ "$(awk -v d="$dur" 'BEGIN { print (d > 0.03) }')" = 1 ]
	to=$((from + 10000000))
	ptt-filter --from="${from}ns" --to="${to}ns" "$T" >"$BATS_TEST_TMPDIR/w.ptt"
	ptt-dump -n "$BATS_TEST_TMPDIR/w.ptt" >"$BATS_TEST_TMPDIR/w.txt"
	# the window's start, on the first clock tick at or after --from (a nanosecond later at most)
	f=$(awk 'NR == 1 { print $1 }' "$BATS_TEST_TMPDIR/w.txt")
	awk -v f="$f" -v n="$from" 'BEGIN { d = f * 1e9 - n; if (d > -0.5 && d < 2.5) exit 0; exit 1 }'
	# the context (process, threads, names, holds and waits) is there, at the window's start
	grep -q "^$f [0-9]* [0-9]* pthread process_begin " "$BATS_TEST_TMPDIR/w.txt"
	[ "$(grep -c "^$f [0-9]* [0-9]* pthread thread_begin " "$BATS_TEST_TMPDIR/w.txt")" -eq 5 ]
	[ -z "$(awk -v f="$f" '$1 < f' "$BATS_TEST_TMPDIR/w.txt")" ]
	ptt-paje "$BATS_TEST_TMPDIR/w.ptt" >"$BATS_TEST_TMPDIR/w.paje"
	assert_paje_valid "$BATS_TEST_TMPDIR/w.paje"
	pj_dump "$BATS_TEST_TMPDIR/w.paje" >"$BATS_TEST_TMPDIR/pj.txt"
	# Paje time 0 is the window's start (viewers begin at 0): the program spans the 10 ms,
	# every thread from its first moment, and nothing lies outside it
	grep -q '^Container, 0, Program, 0, 0.01, 0.01, Program$' "$BATS_TEST_TMPDIR/pj.txt"
	[ "$(grep -c '^Container, [a-z]* [0-9]*, Thread, 0, ' "$BATS_TEST_TMPDIR/pj.txt")" -eq 5 ]
	[ "$(grep -c '^State, ' "$BATS_TEST_TMPDIR/pj.txt")" -gt 100 ]
	run -0 awk -F', ' '($1 == "State" || $1 == "Container" || $1 == "Link") && ($4 < 0 || $5 > 0.0100001) { print; bad = 1 }
		END { exit bad }' "$BATS_TEST_TMPDIR/pj.txt"
	assert_vite_clean "$BATS_TEST_TMPDIR/w.paje"
}

@test "ptt-dump --info of a window gives the window's bounds and length" {
	to=$((from + 10000000))
	ptt-filter --from="${from}ns" --to="${to}ns" "$T" >"$BATS_TEST_TMPDIR/w.ptt"
	run -0 --separate-stderr ptt-dump --info "$BATS_TEST_TMPDIR/w.ptt"
	[ -z "$stderr" ]
	f=$(awk -v n="$from" 'BEGIN { printf "%.9f", n / 1e9 }')
	t=$(awk -v n="$to" 'BEGIN { printf "%.9f", n / 1e9 }')
	[[ "$output" == *"window:     $f s to $t s"* ]]
	[[ "$output" == *"duration:   0.010000000 s"* ]]
	# every thread's first event is at the window's start
	[ "$(echo "$output" | awk -v f="$f" '$1 ~ /^[0-9]+$/ && NF >= 5 && $4 == f' | wc -l)" -eq 5 ]
	# through a pipe, in text form, the same
	run -0 --separate-stderr sh -c "ptt-dump '$BATS_TEST_TMPDIR/w.ptt' | ptt-dump --info -"
	[ -z "$stderr" ]
	[[ "$output" == *"duration:   0.010000000 s"* ]]
	# and --check takes the window as a trace that starts mid-run: no false violation
	run -0 --separate-stderr ptt-dump --check "$BATS_TEST_TMPDIR/w.ptt"
	[[ "$output" == *": "*" events, 0 damaged, 0 lost, 0 out of order, 0 violations: ok" ]]
	[ -z "$stderr" ]
}

@test "ptt-stat of a 20 ms window: lives and the trace's time are the window's" {
	to=$((from + 20000000))
	ptt-filter --from="${from}ns" --to="${to}ns" "$T" >"$BATS_TEST_TMPDIR/w.ptt"
	run -0 --separate-stderr ptt-stat "$BATS_TEST_TMPDIR/w.ptt"
	[ -z "$stderr" ]
	[[ "$output" == *"in 20.000 ms of trace"* ]]
	# the five threads live through the window: LIFE(ms) is 20.000 for each
	[ "$(echo "$output" | awk '/LIFE\(ms\)/ { on = 1; for (i = 1; i <= NF; i++) if ($i == "LIFE(ms)") back = NF - i; next }
		on && NF >= 4 && $(NF - back) == "20.000"' | wc -l)" -eq 5 ]
	run -0 --separate-stderr ptt-stat -c "$BATS_TEST_TMPDIR/w.ptt"
	[ "$(echo "$output" | awk -F, '$4 == 20000000' | wc -l)" -eq 5 ]
}

# One window, one clock: every timeline begins at the window's start and runs to its end.
@test "a window has the same bounds and origin in ptt-paje, ptt-json, ptt-csv and ptt-stat" {
	command -v python3 >/dev/null || skip "python3 not installed"
	to=$((from + 5000000))
	ptt-filter --from="${from}ns" --to="${to}ns" "$T" >"$BATS_TEST_TMPDIR/w.ptt"
	W="$BATS_TEST_TMPDIR/w.ptt"
	# Paje: the program's container ends at the window's length
	[ "$(ptt-paje "$W" | awk '$NF == "C_prog" && $3 == "CT_Program" { print $2 }' | tail -1)" = "0.005000000" ]
	# CSV states: from 0 to 5 ms; event rows within them
	[ "$(ptt-csv --states "$W" | awk -F, 'NR > 1 { if (mn == "" || $7 < mn) mn = $7; if ($8 > mx) mx = $8 } END { print mn, mx }')" = "0 5000000" ]
	[ "$(ptt-csv "$W" | awk -F, 'NR > 1 && ($1 < 0 || $1 > 5000000) { n++ } END { print n + 0 }')" = 0 ]
	# JSON (microseconds, integers where the nanoseconds are 0): the same
	[ "$(ptt-json "$W" | python3 -c '
import json, sys
ev = [e for e in json.load(sys.stdin)["traceEvents"] if "ts" in e]
print("%g %g" % (min(e["ts"] for e in ev), max(e["ts"] + e.get("dur", 0) for e in ev)))')" = "0 5000" ]
	# ptt-stat: the window's length
	[[ "$(ptt-stat "$W")" == *" in 5.000 ms of trace"* ]]
}

@test "ptt-index: --help and usage errors" {
	run -0 --separate-stderr ptt-index --help
	[[ "$output" == *"Usage: ptt-index"* ]]
	[ -z "$stderr" ]
	run -2 --separate-stderr ptt-index --interval=0 "$T"
	[ -z "$output" ]
	[[ "$stderr" == *"--interval: not a positive number: '0'"* ]]
	run -2 --separate-stderr ptt-index --compress=12 "$T"
	[[ "$stderr" == *"--compress: not a level 0-9: '12'"* ]]
	run -2 --separate-stderr ptt-index "$BATS_TEST_TMPDIR/none.ptt"
	[[ "$stderr" == *"none.ptt"* ]]
}

@test "ptt-index: the copy reads as the trace; windows from its snapshots equal windows from a full replay" {
	ptt-index -i 5000 "$T" >"$BATS_TEST_TMPDIR/i.ptt"
	ptt-index -z 6 -i 1000 "$T" >"$BATS_TEST_TMPDIR/iz.ptt"
	diff <(ptt-dump "$T") <(ptt-dump "$BATS_TEST_TMPDIR/i.ptt")
	diff <(ptt-dump "$T") <(ptt-dump "$BATS_TEST_TMPDIR/iz.ptt")
	n=$(ptt-dump --info "$T" | awk '/^events:/ { print $2 }')
	for w in "--from=${from}ns --to=$((from + 5000000))ns" "--first=$((n / 2)) --count=3000" \
		"--first=$((n - 100))" "--from=${from}ns --to=$((from + 1000000))ns --mutex=queue_lock" "--first=10 --count=5"; do
		# $T has no snapshots: the window's context is replayed from the start
		ptt-filter $w "$T" >"$BATS_TEST_TMPDIR/a.ptt"
		for c in i iz; do
			run -0 --separate-stderr ptt-filter $w "$BATS_TEST_TMPDIR/$c.ptt"
			[ -z "$stderr" ]
			ptt-filter $w "$BATS_TEST_TMPDIR/$c.ptt" >"$BATS_TEST_TMPDIR/b.ptt"
			cmp "$BATS_TEST_TMPDIR/a.ptt" "$BATS_TEST_TMPDIR/b.ptt" || { echo "differs: $c $w"; return 1; }
			# without the index after the END block, the block headers lead to the snapshot: the same
			size=$(stat -c %s "$BATS_TEST_TMPDIR/$c.ptt")
			at=$(od -An -tu8 -j $((size - 12)) -N 8 "$BATS_TEST_TMPDIR/$c.ptt" | tr -d ' ')
			[ "$at" -gt 0 ] && [ "$at" -lt "$size" ]
			head -c "$at" "$BATS_TEST_TMPDIR/$c.ptt" >"$BATS_TEST_TMPDIR/noindex.ptt"
			run -0 --separate-stderr ptt-filter $w "$BATS_TEST_TMPDIR/noindex.ptt"
			[ -z "$stderr" ]
			ptt-filter $w "$BATS_TEST_TMPDIR/noindex.ptt" | cmp "$BATS_TEST_TMPDIR/a.ptt" -
			# through a pipe the snapshots are skipped (no seeking back): the same again
			cat "$BATS_TEST_TMPDIR/$c.ptt" | ptt-filter $w >"$BATS_TEST_TMPDIR/c.ptt"
			cmp "$BATS_TEST_TMPDIR/a.ptt" "$BATS_TEST_TMPDIR/c.ptt"
		done
	done
}

@test "ptt-index: the snapshot is what a window reads (damage before it is never seen)" {
	# uncompressed (-z 0: the compact coding, a record's checksum is spoilt) and compressed (the default:
	# the zstd frame of the block is)
	for z in "0 bad checksum" "1 corrupt compressed block"; do
		ptt-index -z "${z%% *}" -i 20000 "$T" >"$BATS_TEST_TMPDIR/i.ptt"
		# spoil a record inside the first EVENTS block of some size (the first may hold only the
		# recorder's first records, shorter than the offset chosen), long before the first snapshot
		at=$(python3 "$BATS_TEST_DIRNAME/ptt_blocks.py" counts "$BATS_TEST_TMPDIR/i.ptt" | awk '$4 > 1024 { print $1 + 48 + 200; exit }')
		[ -n "$at" ]
		printf '\377\377\377\377' | dd of="$BATS_TEST_TMPDIR/i.ptt" bs=1 seek="$at" conv=notrunc status=none
		# a window that begins after the first snapshot (event 20000): at event 30001, not at a
		# share of the duration (a program that stalls early puts event 20000 late in time)
		read -r a b < <(ptt-dump -n "$T" | awk 'NR == 30001 { printf "%s %.9f\n", $1, $1 + 0.001; exit }')
		w="--from=${a}s --to=${b}s"
		# from the file: the last snapshot before the window, the damage is not read
		run -0 --separate-stderr ptt-filter $w "$BATS_TEST_TMPDIR/i.ptt"
		[ -z "$stderr" ]
		# from a pipe the whole trace is read: the damage is reported
		run -1 --separate-stderr sh -c "cat '$BATS_TEST_TMPDIR/i.ptt' | ptt-filter $w >/dev/null"
		[[ "$stderr" == *"${z#* }"* ]]
	done
}

@test "ptt-index: snapshots of the recorded examples give byte-identical windows" {
	for t in "$BATS_TEST_DIRNAME"/frozen/*.txt; do
		b=$(basename "$t" .txt)
		ptt-index -i 7 "$t" >"$BATS_TEST_TMPDIR/$b.i.ptt"
		ptt-index -i 1000000 "$t" >"$BATS_TEST_TMPDIR/$b.n.ptt"
		n=$(grep -vc '^#' "$t")
		t1=$(grep -v '^#' "$t" | awk '{ v[NR] = $1 } END { printf "%s", v[int(NR / 2)] }')
		for w in "--first=$((n / 3)) --count=20" "--first=$((n * 3 / 4))" "--from=${t1}s"; do
			ptt-filter $w "$BATS_TEST_TMPDIR/$b.n.ptt" >"$BATS_TEST_TMPDIR/a.ptt"
			ptt-filter $w "$BATS_TEST_TMPDIR/$b.i.ptt" >"$BATS_TEST_TMPDIR/b.ptt"
			cmp "$BATS_TEST_TMPDIR/a.ptt" "$BATS_TEST_TMPDIR/b.ptt" || { echo "differs: $b $w"; return 1; }
		done
	done
}

@test "ptt-index: --site in a window from a snapshot selects as a full replay does (the snapshot's modules are learnt)" {
	run -0 --separate-stderr ptt-record -q -o "$BATS_TEST_TMPDIR/s.ptt" -- "$EXAMPLES/two_sites"
	ptt-index -i 200 "$BATS_TEST_TMPDIR/s.ptt" >"$BATS_TEST_TMPDIR/si.ptt"
	n=$(ptt-dump -n "$BATS_TEST_TMPDIR/s.ptt" | wc -l)
	f=$(ptt-dump -n "$BATS_TEST_TMPDIR/s.ptt" | sed -n "$((n / 2))p" | awk '{print $1}')
	ptt-filter --from="${f}s" --site='*slow_path*' "$BATS_TEST_TMPDIR/si.ptt" | ptt-dump -n >"$BATS_TEST_TMPDIR/a.txt"
	cat "$BATS_TEST_TMPDIR/si.ptt" | ptt-filter --from="${f}s" --site='*slow_path*' | ptt-dump -n >"$BATS_TEST_TMPDIR/b.txt" # a pipe: full replay
	diff "$BATS_TEST_TMPDIR/a.txt" "$BATS_TEST_TMPDIR/b.txt"
	grep -q ' mutex_lock ' "$BATS_TEST_TMPDIR/a.txt"
}

@test "ptt-index: the copy of a compressed trace is compressed as it was (zstd or zlib), -z 0 makes it raw" {
	for comp in zstd zlib; do
		ptt-record -q -z 1 -Z "$comp" -o "$BATS_TEST_TMPDIR/z.ptt" -- "$EXAMPLES/prodcons" -p 2 -c 2 -n 20000 >/dev/null
		ptt-index -i 5000 "$BATS_TEST_TMPDIR/z.ptt" >"$BATS_TEST_TMPDIR/zi.ptt"
		ptt-index -z 0 -i 5000 "$BATS_TEST_TMPDIR/z.ptt" >"$BATS_TEST_TMPDIR/raw.ptt"
		diff <(ptt-dump "$BATS_TEST_TMPDIR/z.ptt") <(ptt-dump "$BATS_TEST_TMPDIR/zi.ptt")
		# every EVENTS block of the copy (kind 2) but its snapshots (flag 8) by the input's compressor
		want=$([ "$comp" = zstd ] && echo 16 || echo 1)
		python3 "$BATS_TEST_DIRNAME/ptt_blocks.py" flags "$BATS_TEST_TMPDIR/zi.ptt" >"$BATS_TEST_TMPDIR/zi.flags"
		python3 "$BATS_TEST_DIRNAME/ptt_blocks.py" flags "$BATS_TEST_TMPDIR/raw.ptt" >"$BATS_TEST_TMPDIR/raw.flags"
		python3 "$BATS_TEST_DIRNAME/ptt_blocks.py" flags "$BATS_TEST_TMPDIR/z.ptt" >"$BATS_TEST_TMPDIR/z.flags"
		# (the recorder writes a block raw when its compressor falls behind, on a loaded machine:
		# the copy keeps such blocks' events raw, and may cut them into more blocks)
		python3 - "$BATS_TEST_TMPDIR/zi.flags" "$BATS_TEST_TMPDIR/raw.flags" "$want" "$BATS_TEST_TMPDIR/z.flags" <<'PY'
import sys
def events(f):
    return [int(fl) for k, fl in (l.split() for l in open(f)) if k == "2" and not int(fl) & 8]
zi, raw, want, z = events(sys.argv[1]), events(sys.argv[2]), int(sys.argv[3]), events(sys.argv[4])
assert zi and sum(1 for f in zi if f & want) * 2 > len(zi), zi
assert all(f & want for f in zi) or not all(f & want for f in z), (zi, z)
assert raw and not any(f & 17 for f in raw), raw
PY
		# about the input's size (snapshots added), and below the raw copy's
		zi=$(stat -c %s "$BATS_TEST_TMPDIR/zi.ptt") z=$(stat -c %s "$BATS_TEST_TMPDIR/z.ptt")
		[ "$zi" -lt $((z * 3 / 2 + 65536)) ]
		[ "$zi" -lt "$(stat -c %s "$BATS_TEST_TMPDIR/raw.ptt")" ]
	done
}

@test "a window outside the trace says where the trace is, writes nothing and exits 1; an empty stretch inside is no error" {
	last=$(ptt-dump -n "$T" | awk 'END { printf "%.6f", $1 }')
	first=$(ptt-dump -n "$T" | awk 'NR == 1 { printf "%.6f", $1 }')
	for ctx in "" --no-context; do
		run -1 --separate-stderr ptt-filter $ctx --from=12s --to=12.1s "$T"
		[ -z "$output" ]
		if [ -z "$ctx" ]; then
			[ "$stderr" = "ptt-filter: the window selects no event: [12.000000 s, 12.100000 s] begins after the trace's last event, at $last s" ]
		else # the blocks before the window are passed over unread: where the trace ends may be unknown
			[[ "$stderr" == "ptt-filter: the window selects no event: [12.000000 s, 12.100000 s] begins after the trace's last event"* ]]
		fi
		run -1 --separate-stderr ptt-filter $ctx --from=12s "$T"
		[[ "$stderr" == "ptt-filter: the window selects no event: [12.000000 s, the end] begins after the trace's last event"* ]]
	done
	run -1 --separate-stderr ptt-filter --to=1ns "$T"
	[ "$stderr" = "ptt-filter: the window selects no event: [0.000000 s, 0.000000 s] ends before the trace's first event, at $first s" ]
	[ -z "$output" ]
	run -1 --separate-stderr ptt-filter --first=100000000 "$T"
	[ "$stderr" = "ptt-filter: the window selects no event: --first=100000000 is past the trace's last event" ]
	# the README's pipeline past the end: the viewer is not opened on an empty Paje
	run -2 --separate-stderr bash -c "ptt-filter --from=12s --to=12.1s '$T' | ptt-paje > '$BATS_TEST_TMPDIR/w.paje' && echo opened"
	[ -z "$output" ]
	[[ "$stderr" == *$'\nptt-paje: -: empty input, not a ptt trace' ]]
	# a nanosecond-wide window between two events inside the trace selects no event: the context, exit 0
	gap=$(ptt-dump -n "$T" | awk 'NR > 1 && $1 - prev > 2e-6 { printf "%.0f", (prev + 1e-6) * 1e9; exit } { prev = $1 }')
	[ -n "$gap" ]
	run -0 --separate-stderr ptt-filter --from="${gap}ns" --to="${gap}ns" "$T"
	[ -z "$stderr" ]
	ptt-filter --from="${gap}ns" --to="${gap}ns" "$T" | ptt-dump --check - >/dev/null
}

#!/usr/bin/env bats
# ptt-paje: Paje that PajeNG reads whole and ViTE loads cleanly, for whole, cut, killed and hostile traces.
bats_require_minimum_version 1.5.0
load helpers

teardown() { stop_recorder_left; }

setup() {
	T="$BATS_TEST_TMPDIR/t.ptt"
	ptt-record -q -o "$T" -- "$EXAMPLES/prodcons" -p 2 -c 2 -n 2000 >/dev/null
}

@test "ptt-paje --help, --version and usage errors" {
	run -0 ptt-paje --help
	[[ "$output" == *"Usage: ptt-paje"* ]]
	run -0 ptt-paje --version
	run -2 --separate-stderr ptt-paje --bogus
	# several inputs are one trace; none of these can be read
	run -2 --separate-stderr ptt-paje a b
	[[ "$stderr" == *"ptt-paje: a: No such file or directory"*"ptt-paje: b: No such file or directory"* ]]
	run -2 --separate-stderr ptt-paje "$BATS_TEST_TMPDIR/nope"
}

@test "the demo trace converts to Paje that pj_dump and ViTE accept" {
	ptt-paje "$T" >"$BATS_TEST_TMPDIR/t.paje"
	assert_paje_valid "$BATS_TEST_TMPDIR/t.paje"
	assert_vite_clean "$BATS_TEST_TMPDIR/t.paje"
}

@test "holding intervals per thread equal the acquisitions in the trace" {
	command -v pj_dump >/dev/null || skip "pj_dump (pajeng) not installed"
	ptt-paje "$T" >"$BATS_TEST_TMPDIR/t.paje"
	pj_dump "$BATS_TEST_TMPDIR/t.paje" | awk -F', ' '$1=="State" && $8=="Holding mutex" {split($2, c, " "); n[c[1]]++} END {for (k in n) print k, n[k]}' | sort >"$BATS_TEST_TMPDIR/paje.txt"
	ptt-dump -n "$T" | awk '$5=="mutex_lock" || $5=="cond_wait" {n[$3]++} END {for (k in n) print k, n[k]}' | sort >"$BATS_TEST_TMPDIR/trace.txt"
	[ -s "$BATS_TEST_TMPDIR/trace.txt" ]
	diff "$BATS_TEST_TMPDIR/paje.txt" "$BATS_TEST_TMPDIR/trace.txt"
	# one container per thread, links for creation and hand-offs
	[ "$(pj_dump "$BATS_TEST_TMPDIR/t.paje" | grep -c '^Container, [a-z_]* [0-9]*, Thread,')" -eq 5 ]
	[ "$(pj_dump "$BATS_TEST_TMPDIR/t.paje" | grep -c '^Link, .*Thread creation')" -eq 4 ]
}

@test "text input and binary input give the same Paje, byte for byte" {
	ptt-paje "$T" >"$BATS_TEST_TMPDIR/a.paje"
	ptt-dump "$T" | ptt-paje >"$BATS_TEST_TMPDIR/b.paje"
	cmp "$BATS_TEST_TMPDIR/a.paje" "$BATS_TEST_TMPDIR/b.paje"
}

@test "a trace cut anywhere still gives valid Paje" {
	size=$(stat -c %s "$T")
	for part in 3 2; do
		head -c $((size / part)) "$T" >"$BATS_TEST_TMPDIR/cut.ptt"
		run -1 --separate-stderr ptt-paje "$BATS_TEST_TMPDIR/cut.ptt"
		echo "$output" >"$BATS_TEST_TMPDIR/cut.paje"
		assert_paje_valid "$BATS_TEST_TMPDIR/cut.paje"
	done
	# a text trace cut in the middle: threads still blocked and holding at the end
	ptt-dump "$T" | head -n 3000 | ptt-paje >"$BATS_TEST_TMPDIR/cut2.paje"
	assert_paje_valid "$BATS_TEST_TMPDIR/cut2.paje"
	assert_vite_clean "$BATS_TEST_TMPDIR/cut2.paje"
}

@test "a window without thread beginnings (filtered by hand) is still valid" {
	ptt-dump "$T" | awk '/^#/ || NR % 3 == 0' | ptt-paje >"$BATS_TEST_TMPDIR/sparse.paje"
	assert_paje_valid "$BATS_TEST_TMPDIR/sparse.paje"
	assert_vite_clean "$BATS_TEST_TMPDIR/sparse.paje"
}

@test "a SIGKILLed program's trace converts to valid Paje" {
	ptt-record -q -o "$BATS_TEST_TMPDIR/k.ptt" -- "$EXAMPLES/prodcons" -n 100000000 >/dev/null 3>&- &
	rec=$!
	wait_size "$rec" "$BATS_TEST_TMPDIR/k.ptt" 2000000 # killed after some 50000 events, on any machine
	kill -KILL "$prog"
	wait "$rec" || true
	ptt-paje "$BATS_TEST_TMPDIR/k.ptt" >"$BATS_TEST_TMPDIR/k.paje"
	assert_paje_valid "$BATS_TEST_TMPDIR/k.paje"
}

@test "hostile thread names cannot break the file" {
	tid=$(ptt-dump -n "$T" | awk '$5=="thread_begin" {print $3; exit}')
	pid=$(ptt-dump -n "$T" | awk '$5=="thread_begin" {print $2; exit}')
	{ ptt-dump "$T" | grep '^#'
	  printf '0.000000000 %s %s pthread thread_name target=%s name="a\\"b#c'"'"'d e\\n\\x01"\n' "$pid" "$tid" "$tid"
	  ptt-dump -n "$T"; } >"$BATS_TEST_TMPDIR/hostile.txt"
	run -0 --separate-stderr ptt-paje "$BATS_TEST_TMPDIR/hostile.txt"
	echo "$output" >"$BATS_TEST_TMPDIR/hostile.paje"
	grep -q '"'"$tid"' a_b_c_d e__"' "$BATS_TEST_TMPDIR/hostile.paje"
	assert_paje_valid "$BATS_TEST_TMPDIR/hostile.paje"
	assert_vite_clean "$BATS_TEST_TMPDIR/hostile.paje"
}

@test "a text trace whose time goes back gives valid Paje, one message per stretch, exit 1" {
	# line 2000 of the events (header lines not counted by awk's e) stamped at the trace's start
	ptt-dump "$T" | awk '!/^#/ && ++e == 2000 { $1 = "0.000000001" } 1' >"$BATS_TEST_TMPDIR/back.txt"
	line=$(grep -n '^0.000000001 ' "$BATS_TEST_TMPDIR/back.txt" | cut -d: -f1)
	run -1 --separate-stderr ptt-paje "$BATS_TEST_TMPDIR/back.txt"
	[ "$stderr" = "ptt-paje: $BATS_TEST_TMPDIR/back.txt: line $line: time goes back $(sed -n "$((line - 1))p" "$BATS_TEST_TMPDIR/back.txt" | awk '{ split($1, t, "."); print t[1] * 1000000000 + t[2] - 1 }') ns, events moved forward" ]
	echo "$output" >"$BATS_TEST_TMPDIR/back.paje"
	assert_paje_valid "$BATS_TEST_TMPDIR/back.paje"
	assert_vite_clean "$BATS_TEST_TMPDIR/back.paje"
	# the intervals of --states and the times of ptt-stat never come out negative
	run -1 --separate-stderr ptt-csv --states "$BATS_TEST_TMPDIR/back.txt"
	[ "$(echo "$stderr" | wc -l)" -eq 1 ]
	echo "$output" | awk -F, 'NR > 1 && $9 > 1e12 { print "negative interval: " $0; bad = 1 } END { exit bad }'
	run -1 --separate-stderr ptt-stat --csv "$BATS_TEST_TMPDIR/back.txt"
	[ "$(echo "$stderr" | wc -l)" -eq 1 ]
	echo "$output" | awk -F, '{ for (i = 1; i <= NF; i++) if ($i ~ /^[0-9]+$/ && $i + 0 > 1e15) { print "negative time: " $0; bad = 1 } } END { exit bad }'
}

@test "threads are shown by the names they gave themselves after they began, from a file or a pipe" {
	command -v pj_dump >/dev/null || skip "pj_dump (pajeng) not installed"
	# prodcons names its threads with pthread_setname_np once they run
	ptt-dump -n "$T" | grep -q ' thread_name target=[0-9]* name="producer-0"$'
	ptt-paje "$T" >"$BATS_TEST_TMPDIR/file.paje"
	cat "$T" | ptt-paje >"$BATS_TEST_TMPDIR/pipe.paje"
	ptt-dump "$T" | ptt-paje >"$BATS_TEST_TMPDIR/text.paje"
	cmp "$BATS_TEST_TMPDIR/file.paje" "$BATS_TEST_TMPDIR/pipe.paje"
	cmp "$BATS_TEST_TMPDIR/file.paje" "$BATS_TEST_TMPDIR/text.paje"
	run -0 pj_dump "$BATS_TEST_TMPDIR/pipe.paje"
	for n in producer-0 producer-1 consumer-0 consumer-1; do
		echo "$output" | grep -q "^Container, .*, Thread, .*, [0-9]* $n\$" || { echo "no container named $n"; return 1; }
	done
}

# A state says where its hold or wait was asked for, an event where it was called: the last field
# (Site) of PajeSetState 15 / PajeNewEvent 16, which ViTE shows on click; running states have none.
@test "states and events carry their call site, and the file stays valid for pj_dump and ViTE" {
	ptt-record -q -o "$BATS_TEST_TMPDIR/t.ptt" -- "$EXAMPLES/two_sites" -n 20 >/dev/null
	run -0 --separate-stderr ptt-paje "$BATS_TEST_TMPDIR/t.ptt"
	[ "$stderr" = "" ]
	printf '%s\n' "$output" >"$BATS_TEST_TMPDIR/t.paje"
	grep -q '^%EventDef PajeSetState 15$' "$BATS_TEST_TMPDIR/t.paje"
	grep -q '^%EventDef PajeNewEvent 16$' "$BATS_TEST_TMPDIR/t.paje"
	# -n 20 rounds in 2 threads: 120 holds taken in fast_path, 40 in slow_path
	[ "$(grep -cE '^15 [0-9.]+ ST_Thread T[0-9]+ MH "fast_path\+0x[0-9a-f]+ \(two_sites\) at two_sites\.c:17"$' "$BATS_TEST_TMPDIR/t.paje")" -eq 120 ]
	[ "$(grep -cE '^15 [0-9.]+ ST_Thread T[0-9]+ MH "slow_path\+0x[0-9a-f]+ \(two_sites\) at two_sites\.c:24"$' "$BATS_TEST_TMPDIR/t.paje")" -eq 40 ]
	grep -qE '^16 [0-9.]+ E_Thread T[0-9]+ thread_create "main\+0x[0-9a-f]+ \(two_sites\) at two_sites\.c:[0-9]+"$' "$BATS_TEST_TMPDIR/t.paje"
	# running carries no site; a site is never a bare address
	run -1 grep -E '^15 .* R ' "$BATS_TEST_TMPDIR/t.paje"
	run -1 grep -E '^1[56] .* "0x[0-9a-f]+"$' "$BATS_TEST_TMPDIR/t.paje"
	assert_paje_valid "$BATS_TEST_TMPDIR/t.paje"
	assert_vite_clean "$BATS_TEST_TMPDIR/t.paje"
}

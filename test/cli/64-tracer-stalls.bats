#!/usr/bin/env bats
# ptt's own stalls are data: a thread that waits for room in its ring records the wait as an
# interval (tracer_stall .. tracer_stall_end), shown apart from the program's own waits.
bats_require_minimum_version 1.5.0
load helpers

# contention's 4 workers and 4 K rings, into a pipe that nobody reads for a second once the
# program runs: the recorder blocks in write(2) with the pipe full, every ring fills, and the
# threads must wait (the second counts from the program's start, not from ptt-record's: a
# loaded machine may take most of a second to start them).  2000 rounds a thread: some 30 K
# events, several times what the pipe holds even in compact blocks (about 10 bytes an event)
# OPTIONS: ptt-record's instead of -b 4k
stalled_trace() {
	mkfifo "$BATS_TEST_TMPDIR/fifo"
	# shellcheck disable=SC2068 # the options' words
	ptt-record ${@:--b 4k} -o "$BATS_TEST_TMPDIR/fifo" -- "$EXAMPLES/contention" -n 2000 2>"$BATS_TEST_TMPDIR/rec.err" &
	local rec=$! n=0
	exec 7<"$BATS_TEST_TMPDIR/fifo"
	until pgrep -x -P "$rec" contention >/dev/null; do
		sleep 0.02
		[ $((n += 1)) -lt 3000 ] || { echo "contention never started: $(cat "$BATS_TEST_TMPDIR/rec.err")"; return 1; }
	done
	sleep 1
	cat <&7 >"$BATS_TEST_TMPDIR/t.ptt"
	exec 7<&-
	wait "$rec"
}

@test "a thread waiting for room in its ring records the stall as begin and end" {
	stalled_trace
	check_stalls
}

@test "--streams=coded: a thread waiting for room in its coded stream records the stall as begin and end" {
	# the smallest coded rings (32 KiB of coded bytes each): contention's 30 K events are some 300 KB
	stalled_trace --streams=coded -b 64k
	check_stalls
}

check_stalls() {
	# every stall that began ended, on the same thread, later, and each wait was counted
	ptt-dump -n "$BATS_TEST_TMPDIR/t.ptt" | awk '
		$5 == "tracer_stall" { if (open[$3]) bad = "nested"; open[$3] = $1; n++ }
		$5 == "tracer_stall_end" { if (!open[$3] || $1 < open[$3]) bad = "end without begin"; open[$3] = ""; e++ }
		$5 == "rec_ring_full" { sub(/^waits=/, "", $7); waits += $7 }
		END { for (t in open) if (open[t] != "") bad = "never ended";
		      if (bad != "" || n < 1 || e != n || waits < n) { print bad, n, e, waits; exit 1 } }'
	run -0 --separate-stderr ptt-dump --check "$BATS_TEST_TMPDIR/t.ptt"
	[[ "$output" == *" 0 lost, 0 out of order, 0 violations: ok" ]]
	[ -z "$stderr" ]
	n=$(ptt-dump -n "$BATS_TEST_TMPDIR/t.ptt" | grep -c ' tracer_stall_end ')
	run -0 --separate-stderr ptt-dump --info "$BATS_TEST_TMPDIR/t.ptt"
	[[ "$output" =~ $'\n'"stalls:     $n by the tracer, "[0-9]+\.[0-9]{6}" ms summed over threads"$'\n' ]]
	run -0 --separate-stderr ptt-dump --human -n "$BATS_TEST_TMPDIR/t.ptt"
	[[ "$output" == *") is stalled by the tracer: it waits for room in its ring (the recorder is behind)"* ]]
}

@test "ptt-stat, the closing summary, ptt-csv, ptt-json and the pictures show tracer stalls apart" {
	stalled_trace
	T=$BATS_TEST_TMPDIR/t.ptt
	# stalls of about a second against a run of about as long: far above the summary's 1 %
	run -0 --separate-stderr ptt-stat --brief "$T"
	[[ "$output" == *$'\nwarning: the tracer stalled threads '*" waiting for room in their rings"* ]]
	[[ "$output" == *"bigger rings (-b), no -z, or -d (drop events instead of waiting) avoid it"* ]]
	[ -z "$stderr" ]
	run -0 --separate-stderr ptt-stat "$T"
	[[ "$output" =~ $'\n'"tracer stalls: "[1-9][0-9]*", "[0-9.]+" ms summed over threads" ]]
	[ -z "$stderr" ]
	run -0 --separate-stderr ptt-csv --states "$T"
	grep -q ',tracer_stall,' <<<"$output"
	ptt-json "$T" >"$BATS_TEST_TMPDIR/t.json"
	run -0 python3 "$BATS_TEST_DIRNAME/chrome_json_check.py" "$BATS_TEST_TMPDIR/t.json"
	python3 -c 'import json, sys
ev = json.load(open(sys.argv[1]))
ev = ev["traceEvents"] if isinstance(ev, dict) else ev
s = [e for e in ev if e.get("name") == "Stalled by tracer"]
sys.exit(not s or any(e.get("cname") != "black" or e.get("ph") != "X" for e in s))' "$BATS_TEST_TMPDIR/t.json"
	ptt-paje "$T" >"$BATS_TEST_TMPDIR/t.paje"
	grep -qE '^5 TS ST_Thread "Stalled by tracer" ' "$BATS_TEST_TMPDIR/t.paje"
	grep -qE '^[0-9]+ [0-9.]+ ST_Thread T[0-9]+ TS$' "$BATS_TEST_TMPDIR/t.paje"
	assert_paje_valid "$BATS_TEST_TMPDIR/t.paje"
	assert_vite_clean "$BATS_TEST_TMPDIR/t.paje"
}

@test "a wait is lengthened by the stall of the thread holding its lock, by their overlap" {
	# thread 10 holds 0x10 and is stalled from 2 to 7 ms; thread 11 waits for 0x10 from 3 to 9 ms
	trace stall \
		'0.001000000 10 10 pthread mutex_lock mutex=0x10 ret=0' \
		'0.002000000 10 10 recorder tracer_stall need=9' \
		'0.003000000 10 11 pthread mutex_lock_req mutex=0x10' \
		'0.007000000 10 10 recorder tracer_stall_end polls=70' \
		'0.008000000 10 10 pthread mutex_unlock mutex=0x10 ret=0' \
		'0.009000000 10 11 pthread mutex_lock mutex=0x10 ret=0' \
		'0.010000000 10 11 pthread mutex_unlock mutex=0x10 ret=0'
	run -0 --separate-stderr ptt-stat "$BATS_TEST_TMPDIR/stall.txt"
	want=$(printf '%s\n' "tracer stalls: 1, 5.000 ms summed over threads (29.41 % of their time), 5.000 ms of it holding locks;" \
		"waits lengthened by them: 4.000 ms (ptt's doing, not the program's: counted in the tables above)" \
		"  0x10                 1 wait lengthened by 4.000 ms (of 6.000 ms waited)")
	[[ "$output" == *$'\n'"$want" ]]
	[ -z "$stderr" ]
	# the stall is no wait of the program's: thread 10 waited for nothing (its NO-WAIT leaves the stall out)
	grep -qE '^ +10 +10 .* +10\.000 +5\.000 +0\.000 ' <<<"$output"
	run -0 --separate-stderr ptt-stat --brief "$BATS_TEST_TMPDIR/stall.txt"
	[[ "$output" == *$'\nwarning: the tracer stalled threads 5.000 ms ('*' % of their time) waiting for room in their rings, lengthening waits for locks by 4.000 ms;'* ]]
	run -0 --separate-stderr ptt-dump --info "$BATS_TEST_TMPDIR/stall.txt"
	[[ "$output" == *$'\nstalls:     1 by the tracer, 5.000000 ms summed over threads\n'* ]]
	run -0 --separate-stderr ptt-csv --states "$BATS_TEST_TMPDIR/stall.txt"
	[[ "$output" == *$'\n10,10,x,tracer_stall,'* ]]
	# a stall while holding nothing lengthens no wait
	trace free \
		'0.001000000 10 10 recorder tracer_stall need=9' \
		'0.003000000 10 11 pthread mutex_lock_req mutex=0x10' \
		'0.004000000 10 11 pthread mutex_lock mutex=0x10 ret=0' \
		'0.007000000 10 10 recorder tracer_stall_end polls=70'
	run -0 --separate-stderr ptt-stat "$BATS_TEST_TMPDIR/free.txt"
	[[ "$output" == *$'\ntracer stalls: 1, 6.000 ms summed over threads (54.55 % of their time), 0.000 ms of it holding locks;\nwaits lengthened by them: 0.000 ms'* ]]
	[[ "$output" != *"lengthened by 0"*"(of "* ]]
}

#!/usr/bin/env bats
# ptt-record --flight: the last events of each thread, written at the end, on a kill, on SIGUSR1.
bats_require_minimum_version 1.5.0
load helpers

# wait for a file to appear, 60 s at most (a recorder that died never writes it)
wait_for_file() {
	local n=0
	while [ ! -e "$1" ]; do
		[ $((n += 1)) -le 600 ] || { echo "no $1 after 60 s; recorder: $(cat "$BATS_TEST_TMPDIR/rec.err" 2>/dev/null)"; return 1; }
		sleep 0.1
	done
}

# wait for a line in a file, 60 s at most
wait_for_line() {
	local n=0
	until grep -qx "$2" "$1" 2>/dev/null; do
		[ $((n += 1)) -le 600 ] || { echo "no '$2' in $1 after 60 s; recorder: $(cat "$BATS_TEST_TMPDIR/rec.err" 2>/dev/null)"; return 1; }
		sleep 0.1
	done
}

# a failed test leaves no recorder or program running behind it
teardown() {
	if [ -n "${rec:-}" ]; then
		pkill -KILL -P "$rec" 2>/dev/null || true
		kill -KILL "$rec" 2>/dev/null || true
	fi
}

# every thread of the flight recording t holds at most SIZE bytes of events (24 bytes each at least)
assert_bounded() {
	local file=$1 size=$2
	run -0 --separate-stderr ptt-dump --info "$file"
	echo "$output" | awk -v max=$((size / 24)) '
		/^ *PID +TID/ { t = 1; next } t && NF == 0 { t = 0 }
		t { n++; if ($3 > max) { print "thread " $2 ": " $3 " events > " max; bad = 1 } }
		END { exit bad || n == 0 }'
}

@test "--flight usage errors exit 2" {
	run -2 --separate-stderr ptt-record --flight=1000 -- true
	[[ "$stderr" == *"--flight: size must be a power of two"* ]]
	run -2 --separate-stderr ptt-record --flight -d -- true
	[[ "$stderr" == *"--flight: writes one file at the end"* ]]
	run -2 --separate-stderr ptt-record --flight -m 1M -- true
	[[ "$stderr" == *"--flight: writes one file at the end"* ]]
	run -2 --separate-stderr ptt-record --flight -o - -- true
	[[ "$stderr" == *"--flight: writes one file at the end"* ]]
}

@test "--flight: a program that ends keeps every event when they fit" {
	run -0 --separate-stderr ptt-record -q --flight -o "$BATS_TEST_TMPDIR/t.ptt" -- "$EXAMPLES/many_threads" 300 10
	[ "$output" = "threads 300 alive at once, locks 3000" ]
	[ "$stderr" = "" ]
	run -0 --separate-stderr ptt-dump --info "$BATS_TEST_TMPDIR/t.ptt"
	[[ "$output" == *"mode        flight"* ]]
	[ "$(echo "$output" | awk '$1 == "thread_begin" {print $2}')" -eq 301 ]
	[ "$(echo "$output" | awk '$1 == "mutex_lock" {print $2}')" -eq 3000 ]
	run -0 --separate-stderr ptt-dump "$BATS_TEST_TMPDIR/t.ptt"
	[ "$(echo "$output" | grep -c '^# flight_thread .* whole$')" -eq 301 ]
	run -0 --separate-stderr ptt-dump --check "$BATS_TEST_TMPDIR/t.ptt"
	[[ "$output" == *" 0 damaged, 0 lost, 0 out of order, 0 violations: ok" ]]
}

@test "--flight: a SIGKILLed program leaves its last events, bounded by SIZE, that pass --check" {
	ptt-record -q --flight=64k -o "$BATS_TEST_TMPDIR/t.ptt" -- "$EXAMPLES/prodcons" -n 100000000 >/dev/null 2>"$BATS_TEST_TMPDIR/rec.err" 3>&- &
	rec=$!
	# 0.3 s of the program's processor time: millions of events, each worker's 64k turned
	# over many times, on a loaded machine as on a quiet one (nothing is written before the end)
	wait_cpu "$rec" 0.3
	kill -KILL "$prog"
	st=0
	wait "$rec" || st=$?
	[ "$st" -eq 137 ]
	run -0 --separate-stderr ptt-dump --check "$BATS_TEST_TMPDIR/t.ptt"
	[[ "$output" == *" 0 damaged, 0 lost, 0 out of order, 0 violations: ok" ]]
	assert_bounded "$BATS_TEST_TMPDIR/t.ptt" 65536
	run -0 --separate-stderr ptt-dump "$BATS_TEST_TMPDIR/t.ptt"
	# the workers' oldest events were overwritten: their histories are cut, and the file says from when
	[ "$(echo "$output" | grep -c '^# flight_thread .* cut$')" -ge 2 ]
	[[ "$output" == *"# flight_from "* ]]
	[[ "$output" == *" mutex_lock "* ]]
	[[ "$output" == *"# exit_status 137"* ]]
	run -0 --separate-stderr ptt-paje "$BATS_TEST_TMPDIR/t.ptt"
	echo "$output" >"$BATS_TEST_TMPDIR/t.paje"
	assert_paje_valid "$BATS_TEST_TMPDIR/t.paje"
	assert_vite_clean "$BATS_TEST_TMPDIR/t.paje"
}

@test "--flight: SIGUSR1 writes a snapshot that passes --check while the program goes on" {
	ptt-record -q --flight=64k -o "$BATS_TEST_TMPDIR/t.ptt" -- "$EXAMPLES/prodcons" -n 100000000 >/dev/null 2>"$BATS_TEST_TMPDIR/rec.err" 3>&- &
	rec=$!
	wait_cpu "$rec" 0.3 # every worker past the start barrier, and busy
	kill -USR1 "$rec"
	wait_for_file "$BATS_TEST_TMPDIR/t.ptt.1"
	pkill -0 -P "$rec" # the program still runs
	run -0 --separate-stderr ptt-dump --check "$BATS_TEST_TMPDIR/t.ptt.1"
	[[ "$output" == *" 0 damaged, 0 lost, 0 out of order, 0 violations: ok" ]]
	# a snapshot of a live program holds what every ring kept at one instant: every
	# thread (main, 2 producers, 2 consumers) is in it, however slowly the recorder
	# copies (ASan) or however long it is preempted while 64k rings turn over in
	# milliseconds: the writers wait rather than overwrite until the copy is done
	assert_bounded "$BATS_TEST_TMPDIR/t.ptt.1" 65536
	run -0 --separate-stderr ptt-dump -n "$BATS_TEST_TMPDIR/t.ptt.1"
	[ "$(echo "$output" | awk '$4 != "recorder" {print $3}' | sort -u | wc -l)" -eq 5 ]
	[ "$(echo "$output" | awk '$5 == "mutex_lock"' | wc -l)" -gt 100 ]
	run -0 --separate-stderr ptt-dump --info "$BATS_TEST_TMPDIR/t.ptt.1"
	[[ "$output" == *"mode        flight"* ]]
	[[ "$output" != *"exit_status"* ]]
	kill -USR1 "$rec"
	wait_for_file "$BATS_TEST_TMPDIR/t.ptt.2"
	kill -TERM "$rec"
	st=0
	wait "$rec" || st=$?
	[ "$st" -eq 143 ]
	run -0 --separate-stderr ptt-dump --check "$BATS_TEST_TMPDIR/t.ptt.2"
	[[ "$output" == *" 0 violations: ok" ]]
	run -0 --separate-stderr ptt-dump --check "$BATS_TEST_TMPDIR/t.ptt"
	[[ "$output" == *" 0 damaged, 0 lost, 0 out of order, 0 violations: ok" ]]
}

@test "--flight: churning threads get rings back and nothing hangs" {
	run -0 --separate-stderr ptt-record -q --flight=16k -o "$BATS_TEST_TMPDIR/t.ptt" -- "$EXAMPLES/churn" 2000 10
	[ "$output" = "threads 2000 locks 2000" ]
	run -0 --separate-stderr ptt-dump --check "$BATS_TEST_TMPDIR/t.ptt"
	[[ "$output" == *" 0 damaged, 0 lost, 0 out of order, 0 violations: ok" ]]
	run -0 --separate-stderr ptt-record -q -t 8 --flight=16k -o "$BATS_TEST_TMPDIR/t.ptt" -- "$EXAMPLES/churn" 500 10
	[ "$output" = "threads 500 locks 500" ]
	run -0 --separate-stderr ptt-dump --check "$BATS_TEST_TMPDIR/t.ptt"
	[[ "$output" == *" 0 violations: ok" ]]
}

@test "--flight: threads blocked since before the busy threads' histories begin are kept, waiting and deadlocked" {
	# the pair deadlocks first; then two threads turn their 16k rings over many times
	ptt-record -q --flight=16k -o "$BATS_TEST_TMPDIR/t.ptt" -- "$EXAMPLES/deadlock" 20000 >"$BATS_TEST_TMPDIR/out" 2>"$BATS_TEST_TMPDIR/rec.err" 3>&- &
	rec=$!
	wait_for_line "$BATS_TEST_TMPDIR/out" "busy rounds 40000"
	kill -INT "$rec" # forwarded to the program
	st=0
	wait "$rec" || st=$?
	[ "$st" -eq 130 ]
	run -0 --separate-stderr ptt-dump "$BATS_TEST_TMPDIR/t.ptt"
	[ "$stderr" = "" ]
	echo "$output" >"$BATS_TEST_TMPDIR/t.txt"
	# the busy threads' histories are cut and begin after the pair's last events; the pair and main are whole
	[ "$(grep -c '^# flight_thread .* cut$' "$BATS_TEST_TMPDIR/t.txt")" -eq 2 ]
	[ "$(grep -c '^# flight_thread .* whole$' "$BATS_TEST_TMPDIR/t.txt")" -eq 3 ]
	from=$(awk '$2 == "flight_from" { print $3 }' "$BATS_TEST_TMPDIR/t.txt")
	# the pair's two requests (the busy threads' own contended requests on busy_lock come after from)
	awk -v from="$from" '$5 == "mutex_lock_req" && / # worker\+/ { n++; split($1, t, "."); if (t[1] * 1e9 + t[2] >= from) bad = 1 }
		END { exit !(n == 2 && !bad) }' "$BATS_TEST_TMPDIR/t.txt"
	run -0 --separate-stderr ptt-dump --check "$BATS_TEST_TMPDIR/t.ptt"
	[[ "$output" == *" 0 damaged, 0 lost, 0 out of order, 0 violations: ok" ]]
	run -3 --separate-stderr ptt-deadlock "$BATS_TEST_TMPDIR/t.ptt"
	[ "$stderr" = "" ]
	[[ "$output" == *"deadlock: threads blocked in a cycle at the end of the trace"* ]]
	[[ "$output" == *"for left (0x"*"held by thread"* ]]
	[[ "$output" == *"for right (0x"*"held by thread"* ]]
	run -0 --separate-stderr ptt-stat "$BATS_TEST_TMPDIR/t.ptt"
	[[ "$output" == *"2 waits were still open at the end of the trace"* ]]
	[ "$(echo "$output" | awk '$1 == "left" || $1 == "right" { print $2, $3, $4 }')" = "$(printf 'mutex 1 1\nmutex 1 1')" ]
	# ptt-paje: each of the pair holds its lock, then is blocked on the other's until the end
	run -0 --separate-stderr ptt-paje "$BATS_TEST_TMPDIR/t.ptt"
	echo "$output" >"$BATS_TEST_TMPDIR/t.paje"
	# (the busy threads may wait on busy_lock too, at deadlock.c:48: those are not the pair's)
	[ "$(grep -c '^15 [0-9.]* ST_Thread T[0-9]* MW .*deadlock.c:38' "$BATS_TEST_TMPDIR/t.paje")" -eq 2 ]
	[ "$(grep -c '^15 [0-9.]* ST_Thread T[0-9]* MH .*deadlock.c:' "$BATS_TEST_TMPDIR/t.paje")" -ge 2 ]
	assert_paje_valid "$BATS_TEST_TMPDIR/t.paje"
	assert_vite_clean "$BATS_TEST_TMPDIR/t.paje"
}

#!/usr/bin/env bats
# ptt-top: the live view of a running recording, followed as ptt-record writes it.
bats_require_minimum_version 1.5.0
load helpers

# a recording of contention in the background: 4 threads, each holding hot_lock 200 ms ROUNDS times
# (3 threads wait for it at any moment); sets REC (ptt-record's pid)
record_contention() {
	ptt-record -q -o "$BATS_TEST_TMPDIR/live.ptt" -- "$EXAMPLES/contention" -t 4 -n "$1" -u 200000 \
		>"$BATS_TEST_TMPDIR/out.txt" 2>"$BATS_TEST_TMPDIR/err.txt" 3>&- &
	REC=$!
	wait_recorder "$REC"
	for _ in $(seq 100); do [ -s "$BATS_TEST_TMPDIR/live.ptt" ] && break; sleep 0.05; done
}

# wait until ptt-record PID runs, with its program started
wait_recorder() {
	for _ in $(seq 200); do
		tr '\0' ' ' <"/proc/$1/cmdline" | grep -q '^[^ ]*ptt-record ' && pgrep -P "$1" >/dev/null && return 0
		sleep 0.05
	done
	return 1
}

# the counts of the program's events by name, without those that timing decides (requests: a thread
# blocked, and the stacks recorded with them; the recorder's notes of its drains)
program_events() {
	ptt-dump -n "$1" | awk '$4 != "recorder" && $5 !~ /_req$|^stack/ { n[$5]++ } END { for (e in n) print e, n[e] }' | sort
}

@test "ptt-top -b -n 2 on a running recording: the hot lock, its holder and its waiters, in each frame" {
	record_contention 12
	run -0 --separate-stderr timeout 60 ptt-top -b -n 2 -d 0.5 "$BATS_TEST_TMPDIR/live.ptt"
	[ -z "$stderr" ]
	[ "$(grep -c '^ptt-top .*live.ptt  recording$' <<<"$output")" -eq 2 ]
	# the lock's row: its name, mutex, waits since the start
	grep -qE '^1 hot_lock +mutex +[0-9]+ ' <<<"$output"
	# under it, now: one holder and waiters, named at the program's function that took it
	grep -qE '^    holder  [0-9]+ \(worker\) for [0-9.]+ ms at worker$' <<<"$output"
	[ "$(grep -cE '^    waiter  [0-9]+ \(worker\) for [0-9.]+ ms at worker$' <<<"$output")" -ge 2 ]
	# and the threads that waited most in the interval (a hand-off every 200 ms: waits end in each 0.5 s)
	[ "$(grep -cE '^    waited  [0-9]+ \(worker\) [0-9.]+ ms in [0-9]+ waits? ended in the last interval, at worker$' <<<"$output")" -ge 2 ]
	wait "$REC"
}

@test "ptt-top PID takes ptt-record's pid or the traced program's and finds the trace it writes" {
	record_contention 8
	# one frame 1.5 s in: hand-offs every 200 ms, the recorder's drains, on a machine however loaded
	run -0 --separate-stderr timeout 60 ptt-top -b -n 1 -d 1.5 "$REC"
	[ -z "$stderr" ]
	grep -q "^ptt-top $BATS_TEST_TMPDIR/live.ptt  recording$" <<<"$output"
	grep -qE '^1 hot_lock +mutex' <<<"$output"
	child=$(pgrep -P "$REC" contention)
	run -0 --separate-stderr timeout 60 ptt-top -b -n 1 -d 1.5 "$child"
	[ -z "$stderr" ]
	grep -q "^ptt-top $BATS_TEST_TMPDIR/live.ptt  recording$" <<<"$output"
	wait "$REC"
}

@test "ptt-top follows a recording to its end, and leaves it as a recording without ptt-top" {
	record_contention 6
	run -0 --separate-stderr timeout 120 ptt-top -b -d 0.3 "$BATS_TEST_TMPDIR/live.ptt"
	[ -z "$stderr" ]
	wait "$REC"
	# the last frame is the whole recording: 4 x 6 acquisitions, its end read
	[ "$(tail -n +2 <<<"$output" | grep -c '^ptt-top .*  recording ended$')" -eq 1 ]
	tail -12 <<<"$output" | grep -q '  recording ended$'
	run -0 ptt-dump --check "$BATS_TEST_TMPDIR/live.ptt"
	program_events "$BATS_TEST_TMPDIR/live.ptt" >"$BATS_TEST_TMPDIR/with"
	ptt-record -q -o "$BATS_TEST_TMPDIR/alone.ptt" -- "$EXAMPLES/contention" -t 4 -n 6 -u 200000 >/dev/null 2>&1
	program_events "$BATS_TEST_TMPDIR/alone.ptt" >"$BATS_TEST_TMPDIR/without"
	grep -qx 'mutex_lock 24' "$BATS_TEST_TMPDIR/with"
	run -0 diff "$BATS_TEST_TMPDIR/without" "$BATS_TEST_TMPDIR/with"
}

@test "ptt-top on a finished trace: one frame of the whole, recording ended" {
	record "$EXAMPLES/contention" -t 3 -n 200 -u 100
	run -0 --separate-stderr ptt-top -b "$BATS_TEST_TMPDIR/t.ptt"
	[ -z "$stderr" ]
	[ "$(grep -c '^ptt-top ' <<<"$output")" -eq 1 ]
	grep -q '  recording ended$' <<<"$output"
	# the totals are ptt-stat's: the same contended count
	stat=$(ptt-stat "$BATS_TEST_TMPDIR/t.ptt" | awk '$1 == "hot_lock" { print $4; exit }')
	top=$(awk '$2 == "hot_lock" { print $11 }' <<<"$output")
	[ -n "$stat" ] && [ "$stat" = "$top" ]
}

@test "ptt-top's waiters of the interval: 3 threads, each one's waits; together the row's waits and wait time" {
	# holds of 100 us, as a server's: a frame rarely catches a waiter at its instant
	record "$EXAMPLES/contention" -t 3 -n 300 -u 100
	run -0 --separate-stderr ptt-top -b "$BATS_TEST_TMPDIR/t.ptt"
	[ -z "$stderr" ]
	tids=$(ptt-dump "$BATS_TEST_TMPDIR/t.ptt" | awk '$5 == "mutex_lock_req" { print $3 }' | sort -u | wc -l)
	[ "$(grep -cE '^    waited  [0-9]+ \(worker\) [0-9.]+ ms in [0-9]+ waits? ended in the last interval, at worker$' <<<"$output")" -eq "$tids" ]
	# the row's interval WAITS and WAIT(ms) are the sums of its waiters' (the whole run is the one interval)
	awk '$2 == "hot_lock" { waits = $4; ms = $5 }
	     $1 == "waited" { n += $7; t += $4 }
	     END { d = t - ms; if (d < 0) d = -d; exit !(n == waits && d < 0.005 && n > 0) }' <<<"$output"
}

@test "ptt-top on a trace cut short by no writer: said on stderr, exit status 1" {
	record "$EXAMPLES/contention" -t 3 -n 200 -u 100
	head -c 3000 "$BATS_TEST_TMPDIR/t.ptt" >"$BATS_TEST_TMPDIR/cut.ptt"
	run -1 --separate-stderr ptt-top -b "$BATS_TEST_TMPDIR/cut.ptt"
	grep -q 'recording ended' <<<"$output"
	[[ "$stderr" == *"cut.ptt: offset "*"trace ends"* ]] || [[ "$stderr" == *"cut.ptt: offset "*"truncated"* ]]
}

@test "ptt-top: bad input, one clear line on stderr and exit status 2" {
	run -2 --separate-stderr ptt-top -b 2147483640
	[ -z "$output" ] && [ "$stderr" = "ptt-top: 2147483640: no such process" ]
	sleep 30 3>&- &
	pid=$!
	run -2 --separate-stderr ptt-top -b "$pid"
	kill "$pid"
	[ -z "$output" ]
	[ "$stderr" = "ptt-top: $pid: not a ptt recording (neither ptt-record nor a program it traces)" ]
	printf 'not a trace\n' >"$BATS_TEST_TMPDIR/x.txt"
	run -2 --separate-stderr ptt-top -b "$BATS_TEST_TMPDIR/x.txt"
	[ "$stderr" = "ptt-top: $BATS_TEST_TMPDIR/x.txt: not a ptt trace (a binary trace, as ptt-record writes, is followed)" ]
	run -2 --separate-stderr ptt-top -b "$BATS_TEST_TMPDIR/none.ptt"
	[ "$stderr" = "ptt-top: $BATS_TEST_TMPDIR/none.ptt: No such file or directory" ]
	run -2 --separate-stderr ptt-top -b -d 0 "$BATS_TEST_TMPDIR/x.txt"
	[[ "$stderr" == "ptt-top: --delay: seconds from 0.1 to 3600: '0'"* ]]
	run -2 --separate-stderr ptt-top
	[[ "$stderr" == "ptt-top: one PID or TRACE"* ]]
}

@test "ptt-top on a recording to a pipe, by pid: it has no file to read, exit status 3, and says to pipe it in" {
	mkfifo "$BATS_TEST_TMPDIR/fifo"
	cat "$BATS_TEST_TMPDIR/fifo" >/dev/null 3>&- &
	ptt-record -q -o - -- sleep 30 >"$BATS_TEST_TMPDIR/fifo" 3>&- &
	rec=$!
	wait_recorder "$rec"
	run --separate-stderr ptt-top -b "$rec"
	echo "$stderr"
	[ "$status" -eq 3 ]
	[ "$stderr" = "ptt-top: $rec: ptt-record writes its trace to a pipe or terminal (-o -), not to a file: pipe it into ptt-top - instead (ptt-record -o - -- PROGRAM | ptt-top -)" ]
	pkill -P "$rec" sleep || true
	wait
}

@test "ptt-top - follows a recording piped into it: frames while it runs, the last one ptt-stat's totals" {
	# 4 threads, each holding hot_lock 200 ms 6 times: frames come each 0.5 s, between the recorder's writes too
	run -0 --separate-stderr bash -c "ptt-record -q -o - -- '$EXAMPLES/contention' -t 4 -n 6 -u 200000 2>/dev/null |
		tee '$BATS_TEST_TMPDIR/p.ptt' | timeout 60 ptt-top -b -d 0.5 -"
	[ -z "$stderr" ]
	[ "$(grep -c '^ptt-top -  recording$' <<<"$output")" -ge 3 ]
	[ "$(grep -c '^ptt-top -  recording ended$' <<<"$output")" -eq 1 ]
	grep -qE '^    holder  [0-9]+ \(worker\) for [0-9.]+ ms at worker$' <<<"$output"
	# the last frame's totals since the start: ptt-stat's on the same bytes
	want=$(ptt-stat "$BATS_TEST_TMPDIR/p.ptt" | awk '$1 == "hot_lock" { print $4, $6; exit }')
	got=$(tail -8 <<<"$output" | awk '$2 == "hot_lock" { print $11, $12 }')
	[ -n "$want" ] && [ "$got" = "$want" ]
	# a complete trace on standard input: one frame of the whole; a terminal is refused
	run -0 --separate-stderr bash -c "ptt-top -b - <'$BATS_TEST_TMPDIR/p.ptt'"
	[ -z "$stderr" ]
	[ "$(grep -c '^ptt-top ' <<<"$output")" -eq 1 ]
	grep -q '^ptt-top -  recording ended$' <<<"$output"
	run -2 --separate-stderr script -qec "ptt-top -b -" /dev/null
	[[ "$output" == *"ptt-top: -: standard input is a terminal: pipe a recording in (ptt-record -o - -- PROGRAM | ptt-top -)"* ]]
}

@test "ptt-top in a terminal (tmux): redrawn every interval, s sorts, 1 shows the stacks, q quits" {
	command -v tmux >/dev/null || skip "tmux not installed"
	record_contention 15
	sock="$BATS_TEST_TMPDIR/tmux.sock"
	tmux -S "$sock" new-session -d -x 160 -y 40 "ptt-top -d 0.3 $BATS_TEST_TMPDIR/live.ptt; echo status=\$? >$BATS_TEST_TMPDIR/status; sleep 30"
	pane() { tmux -S "$sock" capture-pane -p; }
	until_pane() { for _ in $(seq 100); do pane | grep -qE "$1" && return 0; sleep 0.1; done; pane; return 1; }
	until_pane '^1 hot_lock +mutex'
	until_pane '^\(sort: wait\)'
	tmux -S "$sock" send-keys s
	until_pane '^\(sort: total\)'
	tmux -S "$sock" send-keys 1
	until_pane 'no stack: ptt-record -S records them|<-'
	tmux -S "$sock" send-keys 0
	until_pane 'keys: s sort \(total\)'
	tmux -S "$sock" send-keys q
	for _ in $(seq 100); do [ -s "$BATS_TEST_TMPDIR/status" ] && break; sleep 0.1; done
	tmux -S "$sock" kill-server || true
	[ "$(cat "$BATS_TEST_TMPDIR/status")" = "status=0" ]
	wait "$REC"
}

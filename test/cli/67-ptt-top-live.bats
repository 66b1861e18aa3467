#!/usr/bin/env bats
# ptt-top attached to a recording that has run a while: it starts 1 s before the live end, not at the
# trace's start, says so, and leaves the recording as it would be without it.
bats_require_minimum_version 1.5.0
load helpers

# contention in the background for some 8 s: 4 threads, each holding hot_lock 100 ms 20 times (3 threads
# wait for it at any moment, each wait shorter than 1 s); sets REC (ptt-record's pid)
record_long() {
	ptt-record -q -o "$BATS_TEST_TMPDIR/live.ptt" -- "$EXAMPLES/contention" -t 4 -n 20 -u 100000 \
		>"$BATS_TEST_TMPDIR/out.txt" 2>"$BATS_TEST_TMPDIR/err.txt" 3>&- &
	REC=$!
	for _ in $(seq 200); do
		tr '\0' ' ' <"/proc/$REC/cmdline" | grep -q '^[^ ]*ptt-record ' && pgrep -P "$REC" >/dev/null && break
		sleep 0.05
	done
	for _ in $(seq 100); do [ -s "$BATS_TEST_TMPDIR/live.ptt" ] && break; sleep 0.05; done
}

# the counts of the program's events by name, without those that timing decides (as in 66-ptt-top.bats)
program_events() {
	ptt-dump -n "$1" | awk '$4 != "recorder" && $5 !~ /_req$|^stack/ { n[$5]++ } END { for (e in n) print e, n[e] }' | sort
}

@test "ptt-top attached after 3 s: the first frame starts near the live end, with the hot lock, its holder and waiters" {
	record_long
	sleep 3
	run -0 --separate-stderr timeout 60 ptt-top -b -n 1 -d 0.5 "$REC"
	[ -z "$stderr" ]
	echo "$output"
	# where it attached: 1 s before the live end it found, at least 1.5 s into the trace
	at=$(sed -n 's/^attached at \([0-9.]*\) s: the events before are not read .*/\1/p' <<<"$output")
	[ -n "$at" ]
	awk -v a="$at" 'BEGIN { exit !(a >= 1.5) }'
	grep -qE "^\(sort: wait\) .*\| -- since $at s --$" <<<"$output"
	# how far it is from the live end, said
	grep -qE '^live end [0-9.]+ s: [0-9.]+ s behind it$' <<<"$output"
	grep -qE '^trace .* MB passed over or read, [0-9.]+ MB behind$' <<<"$output"
	# the trace it read ends after the attach point; what it counts is from there
	last=$(sed -n 's/^trace \([0-9.]*\) s, .* in the interval \([0-9.]*\)-.*/\1 \2/p' <<<"$output")
	awk -v l="$last" -v a="$at" 'BEGIN { split(l, x, " "); exit !(x[1] > a && x[2] == a) }'
	grep -qE '^1 hot_lock +mutex +[0-9]+ ' <<<"$output"
	grep -qE '^    holder  [0-9]+ \(worker\) for [0-9.]+ ms at worker$' <<<"$output"
	[ "$(grep -cE '^    waiter  [0-9]+ \(worker\) for [0-9.]+ ms at worker$' <<<"$output")" -ge 2 ]
	wait "$REC"
	# detached: the trace is whole and has the events of a run without ptt-top
	run -0 ptt-dump --check "$BATS_TEST_TMPDIR/live.ptt"
	program_events "$BATS_TEST_TMPDIR/live.ptt" >"$BATS_TEST_TMPDIR/with"
	ptt-record -q -o "$BATS_TEST_TMPDIR/alone.ptt" -- "$EXAMPLES/contention" -t 4 -n 20 -u 100000 >/dev/null 2>&1
	program_events "$BATS_TEST_TMPDIR/alone.ptt" >"$BATS_TEST_TMPDIR/without"
	grep -qx 'mutex_lock 80' "$BATS_TEST_TMPDIR/with"
	run -0 diff "$BATS_TEST_TMPDIR/without" "$BATS_TEST_TMPDIR/with"
}

@test "ptt-top -a replays a live recording from its start: no attach point, totals since the start" {
	record_long
	sleep 2
	run -0 --separate-stderr timeout 60 ptt-top -a -b -n 1 -d 0.5 "$BATS_TEST_TMPDIR/live.ptt"
	[ -z "$stderr" ]
	printf '%s\n' "$output" >"$BATS_TEST_TMPDIR/frame"
	grep -qE '^\(sort: wait\) .*\| -- since the start --$' "$BATS_TEST_TMPDIR/frame"
	grep -qE '^1 hot_lock +mutex' "$BATS_TEST_TMPDIR/frame"
	run -1 grep -c '^attached at' "$BATS_TEST_TMPDIR/frame"
	wait "$REC"
}

@test "ptt-top attached in a terminal (tmux): the first frame has the hot lock and its waiters, q leaves" {
	command -v tmux >/dev/null || skip "tmux not installed"
	record_long
	sleep 3
	sock="$BATS_TEST_TMPDIR/tmux.sock"
	tmux -S "$sock" new-session -d -x 160 -y 40 "ptt-top -d 0.5 $REC; echo status=\$? >$BATS_TEST_TMPDIR/status; sleep 30"
	pane() { tmux -S "$sock" capture-pane -p; }
	until_pane() { for _ in $(seq 100); do pane | grep -qE "$1" && return 0; sleep 0.1; done; pane; return 1; }
	until_pane '^attached at [0-9.]+ s: '
	pane >"$BATS_TEST_TMPDIR/first"
	grep -qE '^1 hot_lock +mutex' "$BATS_TEST_TMPDIR/first"
	grep -qE '^    waiter  [0-9]+ \(worker\)' "$BATS_TEST_TMPDIR/first"
	grep -qE '^    waited  [0-9]+ \(worker\) [0-9.]+ ms in [0-9]+ waits? ended in the last interval, at worker$' "$BATS_TEST_TMPDIR/first"
	grep -qE '^live end [0-9.]+ s: [0-9.]+ s behind it$' "$BATS_TEST_TMPDIR/first"
	tmux -S "$sock" send-keys q
	for _ in $(seq 100); do [ -s "$BATS_TEST_TMPDIR/status" ] && break; sleep 0.1; done
	tmux -S "$sock" kill-server || true
	[ "$(cat "$BATS_TEST_TMPDIR/status")" = "status=0" ]
	wait "$REC"
	run -0 ptt-dump --check "$BATS_TEST_TMPDIR/live.ptt"
}

#!/usr/bin/env bats
# A program that daemonizes (fork, setsid, fork, the parents exit) keeps being traced: ptt-record
# records until every traced process it left has exited, and passes signals on to them.
bats_require_minimum_version 1.5.0
load helpers

teardown() {
	stop_recorder_left
	[ -z "${daemon:-}" ] || kill -KILL "$daemon" 2>/dev/null || true
}

@test "a daemon that forked away from the program is recorded until it exits" {
	run -0 --separate-stderr ptt-record -o "$BATS_TEST_TMPDIR/t.ptt" -- "$EXAMPLES/daemonize" 300
	[ -z "$output" ]
	# (the process it left: the daemon, or the parent the daemon forked from, still there)
	[[ "$stderr" =~ ^"ptt-record: $EXAMPLES/daemonize exited; recording goes on until the process it left (pid "[0-9]+") exits: kill -INT "[0-9]+" passes SIGINT on to it, Ctrl-C on this terminal stops the recording and leaves it running"$'\n' ]]
	# the daemon's whole life is in the trace: its threads' locks and its own exit, last
	run -0 --separate-stderr ptt-dump -n "$BATS_TEST_TMPDIR/t.ptt"
	[ -z "$stderr" ]
	# the daemon: the process that exited last, with status 0
	daemon=$(awk '$5 == "process_exit" { p = $2; st = $6 } END { if (st == "status=0") print p }' <<<"$output")
	[ -n "$daemon" ]
	locks=$(awk -v d="$daemon" '$2 == d && $3 != d && $5 == "mutex_lock"' <<<"$output" | wc -l)
	[ "$locks" -ge 2 ]
	# the program itself (the daemon's grandparent) exited long before
	first=$(awk '$5 == "process_begin" { print $2; exit }' <<<"$output")
	[ "$first" != "$daemon" ]
	# three processes: the program, the parent of the daemon, the daemon
	[ "$(awk '$5 == "process_begin"' <<<"$output" | wc -l)" -eq 3 ]
}

@test "a signal sent to ptt-record reaches the daemon it is waiting for" {
	ptt-record -o "$BATS_TEST_TMPDIR/t.ptt" -- "$EXAMPLES/daemonize" 600000 2>"$BATS_TEST_TMPDIR/rec.err" &
	rec=$!
	local n=0
	until grep -q 'recording goes on' "$BATS_TEST_TMPDIR/rec.err"; do
		[ $((n += 1)) -le 600 ] || { cat "$BATS_TEST_TMPDIR/rec.err"; false; }
		sleep 0.1
	done
	# the daemon: once its parent is gone, the one process left running the example
	n=0
	until [ "$(pgrep -c -f "^$EXAMPLES/daemonize 600000\$")" -eq 1 ]; do
		[ $((n += 1)) -le 600 ] || { pgrep -a -f "$EXAMPLES/daemonize"; false; }
		sleep 0.1
	done
	daemon=$(pgrep -f "^$EXAMPLES/daemonize 600000\$")
	kill -0 "$daemon"
	# the line says how to stop it, with the recorder's pid: what it says is done here
	grep -q "^ptt-record: $EXAMPLES/daemonize exited; recording goes on until the process it left (pid [0-9]*) exits: kill -INT $rec passes SIGINT on to it, Ctrl-C on this terminal stops the recording and leaves it running\$" "$BATS_TEST_TMPDIR/rec.err"
	[ "$(grep -c 'recording goes on' "$BATS_TEST_TMPDIR/rec.err")" -eq 1 ]
	kill -INT "$rec"
	st=0
	wait "$rec" || st=$?
	[ "$st" = 0 ] # the program's own status: it exited 0 when it daemonized
	n=0
	while kill -0 "$daemon" 2>/dev/null; do
		[ $((n += 1)) -le 600 ] || { echo "daemon $daemon still runs"; false; }
		sleep 0.1
	done
	run -0 --separate-stderr ptt-dump --check "$BATS_TEST_TMPDIR/t.ptt"
	[[ "$output" == *": ok" ]]
}

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
	[[ "$stderr" =~ ^"ptt-record: $EXAMPLES/daemonize exited; recording goes on until the process it left (pid "([0-9]+)") exits"$'\n' ]]
	daemon=${BASH_REMATCH[1]}
	# the daemon's whole life is in the trace: its threads' locks and its own exit, last
	run -0 --separate-stderr ptt-dump -n "$BATS_TEST_TMPDIR/t.ptt"
	[ -z "$stderr" ]
	exits=$(awk -v d="$daemon" '$2 == d && $5 == "process_exit"' <<<"$output")
	[ "$exits" != "" ]
	[[ "$exits" == *" $daemon $daemon pthread process_exit status=0" ]]
	locks=$(awk -v d="$daemon" '$2 == d && $3 != d && $5 == "mutex_lock"' <<<"$output" | wc -l)
	[ "$locks" -ge 2 ]
	# the program itself (the daemon's grandparent) exited long before
	first=$(awk '$5 == "process_begin" { print $2; exit }' <<<"$output")
	[ "$first" != "$daemon" ]
	[ "$(ptt-dump -n "$BATS_TEST_TMPDIR/t.ptt" | awk '$5 == "process_exit" { p = $2 } END { print p }')" = "$daemon" ]
}

@test "a signal sent to ptt-record reaches the daemon it is waiting for" {
	ptt-record -o "$BATS_TEST_TMPDIR/t.ptt" -- "$EXAMPLES/daemonize" 600000 2>"$BATS_TEST_TMPDIR/rec.err" &
	rec=$!
	local n=0
	until grep -q 'recording goes on' "$BATS_TEST_TMPDIR/rec.err"; do
		[ $((n += 1)) -le 600 ] || { cat "$BATS_TEST_TMPDIR/rec.err"; false; }
		sleep 0.1
	done
	daemon=$(sed -n 's/.*(pid \([0-9]*\)) exits$/\1/p' "$BATS_TEST_TMPDIR/rec.err")
	kill -0 "$daemon"
	kill -TERM "$rec"
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

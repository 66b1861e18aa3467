#!/usr/bin/env bats
# ptt-record's failures.  Before the program starts (the output, the rings, memory): exit 1 and
# the program never runs.  Once it runs, a failure (a full disk, a closed pipe, a rotated file
# that cannot be made, a flight file or snapshot that cannot be written) is said on one line,
# the writing stops and ptt-record waits for the program, reaps it and exits with its status.
# The programs below end only once ptt-record has said so: a recorder that returned without
# waiting for its program would return before the program's own status and mark exist.
bats_require_minimum_version 1.5.0
load helpers

# $BATS_TEST_TMPDIR/prog, the traced program (run as sh prog): run BEFORE, then wait (a minute
# at most) until the recorder's stderr, in $BATS_TEST_TMPDIR/err, says WORDS; leave a mark, exit STATUS
program() {
	local words=$1 status=$2 before=${3:-}
	cat >"$BATS_TEST_TMPDIR/prog" <<-EOS
		$before
		for i in \$(seq 1200); do grep -q '$words' '$BATS_TEST_TMPDIR/err' && break; sleep 0.05; done
		echo ran >'$BATS_TEST_TMPDIR/ran'
		exit $status
	EOS
}

# ptt-record ARGS... -- sh prog, its stderr in $BATS_TEST_TMPDIR/err
record_prog() {
	ptt-record "$@" -- sh "$BATS_TEST_TMPDIR/prog" 2>"$BATS_TEST_TMPDIR/err"
}

@test "an output that cannot be created: exit 1, the program never runs" {
	run -1 --separate-stderr ptt-record -o "$BATS_TEST_TMPDIR/no/such/dir/t.ptt" -- sh -c "echo ran >'$BATS_TEST_TMPDIR/ran'"
	[ -z "$output" ]
	[ "$stderr" = "ptt-record: $BATS_TEST_TMPDIR/no/such/dir/t.ptt: No such file or directory" ]
	[ ! -e "$BATS_TEST_TMPDIR/ran" ]
	# with -m the first part is made before the program starts, too
	mkdir "$BATS_TEST_TMPDIR/t.ptt.0001"
	run -1 --separate-stderr ptt-record -m 64k -o "$BATS_TEST_TMPDIR/t.ptt" -- sh -c "echo ran >'$BATS_TEST_TMPDIR/ran'"
	[ "$stderr" = "ptt-record: $BATS_TEST_TMPDIR/t.ptt.0001: Is a directory" ]
	[ ! -e "$BATS_TEST_TMPDIR/ran" ]
}

@test "a program that cannot be run: 126 or 127, reaped, no trace left" {
	printf '#!/bin/sh\nexit 0\n' >"$BATS_TEST_TMPDIR/not-executable"
	chmod -x "$BATS_TEST_TMPDIR/not-executable"
	run -126 --separate-stderr ptt-record -o "$BATS_TEST_TMPDIR/t.ptt" -- "$BATS_TEST_TMPDIR/not-executable"
	[ "$stderr" = "ptt-record: $BATS_TEST_TMPDIR/not-executable: Permission denied" ]
	[ ! -e "$BATS_TEST_TMPDIR/t.ptt" ]
	run -127 --separate-stderr ptt-record -m 64k -o "$BATS_TEST_TMPDIR/t.ptt" -- "$BATS_TEST_TMPDIR/no-such-program"
	[ "$stderr" = "ptt-record: $BATS_TEST_TMPDIR/no-such-program: No such file or directory" ]
	[ ! -e "$BATS_TEST_TMPDIR/t.ptt.0001" ]
}

@test "a script without #! runs through sh, as execvp runs it, traced, with its arguments and status" {
	printf 'echo "args: $1 $2"; echo "ring: ${PTT_SHM_FD:+named}"; exit 5\n' >"$BATS_TEST_TMPDIR/script"
	chmod +x "$BATS_TEST_TMPDIR/script"
	PATH="$BATS_TEST_TMPDIR:$PATH" run -5 --separate-stderr ptt-record -o "$BATS_TEST_TMPDIR/t.ptt" -- script 'a b' c
	[ "$output" = "$(printf 'args: a b c\nring: named')" ]
	[[ "$stderr" == "ptt-record: $BATS_TEST_TMPDIR/t.ptt: "*" events, 0 lost, "* ]]
	run -0 --separate-stderr ptt-dump --check "$BATS_TEST_TMPDIR/t.ptt"
	[ -z "$stderr" ]
	[[ "$output" == *" events, 0 damaged, 0 lost, 0 out of order, 0 violations: ok" ]]
	# the ring's descriptor is named once, whatever the environment held
	PTT_SHM_FD=7 run -0 --separate-stderr ptt-record -q -o "$BATS_TEST_TMPDIR/t.ptt" -- sh -c 'env | grep -c "^PTT_SHM_FD="; [ "$PTT_SHM_FD" != 7 ]'
	[ "$output" = 1 ]
	[ -z "$stderr" ]
	# under a descriptor limit below 990 the ring still reaches the program
	run -0 --separate-stderr sh -c "ulimit -n 256 && ptt-record -q -o '$BATS_TEST_TMPDIR/t.ptt' -- sh -c 'echo \$PTT_SHM_FD'"
	[ -n "$output" ] && [ "$output" -lt 256 ]
	[ -z "$stderr" ]
}

@test "a full disk while the program runs: said once, the program runs to its end, its status" {
	[ -w /dev/full ] || skip "no /dev/full"
	program incomplete 3
	run -3 --separate-stderr record_prog -q -o /dev/full
	[ -z "$output" ]
	[ "$(cat "$BATS_TEST_TMPDIR/ran")" = ran ]
	run -0 cat "$BATS_TEST_TMPDIR/err"
	[[ "$output" =~ ^"ptt-record: /dev/full: No space left on device; the trace is incomplete, sh (pid "[0-9]+") runs on untraced to its end"$ ]]
}

@test "a closed pipe while the program runs: said once, the program runs to its end, its status" {
	program incomplete 3
	run -0 --separate-stderr bash -c 'ptt-record -q -o - -- sh "$1/prog" 2>"$1/err" | true; echo "${PIPESTATUS[0]}"' _ "$BATS_TEST_TMPDIR"
	[ -z "$stderr" ]
	[ "$output" = 3 ]
	[ "$(cat "$BATS_TEST_TMPDIR/ran")" = ran ]
	run -0 cat "$BATS_TEST_TMPDIR/err"
	[[ "$output" =~ ^"ptt-record: stdout: Broken pipe; the trace is incomplete, sh (pid "[0-9]+") runs on untraced to its end"$ ]]
}

@test "-m: a next file that cannot be made stops the writing; the program runs to its end" {
	mkdir "$BATS_TEST_TMPDIR/t.ptt.0002"
	program incomplete 4 "'$EXAMPLES/prodcons' -n 2000 >/dev/null"
	run -4 --separate-stderr record_prog -q -m 64k -o "$BATS_TEST_TMPDIR/t.ptt"
	[ "$(cat "$BATS_TEST_TMPDIR/ran")" = ran ]
	run -0 cat "$BATS_TEST_TMPDIR/err"
	[[ "$output" =~ ^"ptt-record: $BATS_TEST_TMPDIR/t.ptt.0002: Is a directory; the trace is incomplete, sh (pid "[0-9]+") runs on untraced to its end"$ ]]
	# the first file holds the run up to there, without its end
	run -1 --separate-stderr ptt-dump -n "$BATS_TEST_TMPDIR/t.ptt.0001"
	[ "$(awk '$5 == "thread_create"' <<<"$output" | wc -l)" -ge 1 ]
	[[ "$stderr" == *"the trace ends without its end block (cut short)"* ]]
}

@test "--flight: an end that cannot be written is said; the status is the program's" {
	[ -w /dev/full ] || skip "no /dev/full"
	run -5 --separate-stderr ptt-record -q --flight -o /dev/full -- sh -c "echo ran >'$BATS_TEST_TMPDIR/ran'; exit 5"
	[ -z "$output" ]
	[ "$stderr" = "ptt-record: /dev/full: No space left on device; the trace is incomplete" ]
	[ "$(cat "$BATS_TEST_TMPDIR/ran")" = ran ]
}

@test "--flight: a snapshot that cannot be written is said and the recording goes on" {
	mkdir "$BATS_TEST_TMPDIR/t.ptt.1"
	# the program asks its recorder (its parent) for a snapshot, then waits for the answer
	program 'recording goes on' 6 'kill -USR1 $PPID'
	run -6 --separate-stderr record_prog -q --flight -o "$BATS_TEST_TMPDIR/t.ptt"
	[ "$(cat "$BATS_TEST_TMPDIR/ran")" = ran ]
	run -0 cat "$BATS_TEST_TMPDIR/err"
	[ "$output" = "ptt-record: $BATS_TEST_TMPDIR/t.ptt.1: Is a directory; the recording goes on" ]
	# the directory as it was, and nothing beside it
	[ -d "$BATS_TEST_TMPDIR/t.ptt.1" ]
	[ -z "$(ls -A "$BATS_TEST_TMPDIR/t.ptt.1")" ]
	[ -z "$(find "$BATS_TEST_TMPDIR" -name 't.ptt.1.tmp*')" ]
	# the recording at the end is whole
	run -0 --separate-stderr ptt-dump --check "$BATS_TEST_TMPDIR/t.ptt"
	[[ "$output" == *" 0 damaged, 0 lost, 0 out of order, 0 violations: ok" ]]
	run -0 --separate-stderr ptt-dump --info "$BATS_TEST_TMPDIR/t.ptt"
	[[ "$output" == *"exit_status 6"* ]]
}

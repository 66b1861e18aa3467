#!/usr/bin/env bats
# ptt-dump --human: sentences that say what happened, never a raw number read as something else.
bats_require_minimum_version 1.5.0
load helpers

@test "--human: the barrier's serial thread, the main thread, a thread whose creation was not traced" {
	trace b \
		'0.000000002 10 10 pthread thread_begin handle=0x1 start=0x0 parent=0' \
		'0.000000003 10 11 pthread thread_begin handle=0x2 start=0x0 parent=10' \
		'0.000000004 10 12 pthread thread_begin handle=0x3 start=0x0 parent=0' \
		'0.000000005 10 11 pthread barrier_wait_req barrier=0x30 site=0x0' \
		'0.000000006 10 10 pthread barrier_wait_req barrier=0x30 site=0x0' \
		'0.000000007 10 11 pthread barrier_wait barrier=0x30 ret=-1 site=0x0' \
		'0.000000008 10 10 pthread barrier_wait barrier=0x30 ret=0 site=0x0' \
		'0.000000009 10 11 pthread thread_end retval=0x0 how=2'
	run -0 --separate-stderr ptt-dump --human -n "$BATS_TEST_TMPDIR/b.txt"
	[ -z "$stderr" ]
	[[ "$output" == *"0.000000002 thread 10 (x) begins (the process's main thread)"* ]]
	[[ "$output" == *"0.000000003 thread 11 begins (created by thread 10 (x))"* ]]
	[[ "$output" == *"0.000000004 thread 12 begins (its creation was not traced)"* ]]
	[[ "$output" == *"0.000000007 thread 11 leaves barrier 0x30 as the serial thread (PTHREAD_BARRIER_SERIAL_THREAD)"* ]]
	[[ "$output" == *"0.000000008 thread 10 (x) leaves barrier 0x30"$'\n'* ]]
	[[ "$output" == *"0.000000009 thread 11 ends (cancelled)"* ]]
	[[ "$output" != *"thread 0"* ]]
	[[ "$output" != *"result"* ]]
}

@test "--human: failed calls say what did not happen, with the error's name, not a number" {
	trace f \
		'0.000000002 10 10 pthread mutex_timedlock mutex=0x10 ret=110 site=0x0' \
		'0.000000003 10 10 pthread mutex_trylock mutex=0x10 ret=16 site=0x0' \
		'0.000000004 10 10 pthread mutex_trylock mutex=0x10 ret=0 site=0x0' \
		'0.000000005 10 10 pthread mutex_unlock mutex=0x10 ret=0 site=0x0' \
		'0.000000006 10 10 pthread mutex_unlock mutex=0x10 ret=1 site=0x0' \
		'0.000000007 10 10 pthread mutex_lock mutex=0x20 ret=130 site=0x0' \
		'0.000000008 10 10 pthread sem_trywait sem=0x40 ret=11 site=0x0' \
		'0.000000009 10 10 pthread process_exit status=3'
	run -0 --separate-stderr ptt-dump --human -n "$BATS_TEST_TMPDIR/f.txt"
	[ -z "$stderr" ]
	[[ "$output" == *"0.000000002 thread 10 (x) does not get mutex 0x10: timed out (ETIMEDOUT)"* ]]
	[[ "$output" == *"0.000000003 thread 10 (x) tries mutex 0x10 and does not get it: busy (EBUSY)"* ]]
	[[ "$output" == *"0.000000004 thread 10 (x) tries mutex 0x10 and holds it"* ]]
	[[ "$output" == *"0.000000006 thread 10 (x) fails to release mutex 0x10: the thread does not hold it (EPERM)"* ]]
	[[ "$output" == *"0.000000007 thread 10 (x) holds mutex 0x20: its previous holder died holding it (EOWNERDEAD)"* ]]
	[[ "$output" == *"0.000000008 thread 10 (x) tries semaphore 0x40 and does not take it: not available now (EAGAIN)"* ]]
	[[ "$output" == *"0.000000009 process 10 exits with status 3"* ]]
	[[ "$output" != *"failed:"* ]]
}

@test "--human: a program killed by a signal has no exit status (python3 and SIGINT)" {
	command -v python3 >/dev/null || skip "python3 is not installed"
	# the recorder passes SIGINT on; python3 dies of it (KeyboardInterrupt, then re-raised).
	# SIGINT is sent once the program's thread runs (it writes the file), however slow the start.
	ptt-record -q -o "$BATS_TEST_TMPDIR/s.ptt" -- python3 -c 'import sys, threading, time
threading.Thread(target=time.sleep, args=(60,), daemon=True).start()
open(sys.argv[1], "w").close()
time.sleep(60)' "$BATS_TEST_TMPDIR/ready" 2>/dev/null &
	local rec=$!
	for _ in $(seq 600); do [ -e "$BATS_TEST_TMPDIR/ready" ] && break; sleep 0.1; done
	kill -INT "$rec"
	local st=0
	wait "$rec" || st=$?
	[ "$st" -eq 130 ]
	run -0 --separate-stderr ptt-dump --human "$BATS_TEST_TMPDIR/s.ptt"
	[ -z "$stderr" ]
	[[ "$output" == *"the recorder passes signal 2 (SIGINT) on to process "* ]]
	[[ "$output" == *"the recorder stops: the program was killed by signal 2 (SIGINT)" ]]
	[[ "$output" != *"exit status"* ]]
	[[ "$output" == *" begins (the process's main thread)"* ]]
	[[ "$output" == *" begins (created by thread "* ]]
	ptt-record -q -o "$BATS_TEST_TMPDIR/e.ptt" -- sh -c 'exit 3' || true
	run -0 --separate-stderr ptt-dump --human "$BATS_TEST_TMPDIR/e.ptt"
	[[ "$output" == *"the recorder stops: the program exited with status 3" ]]
}

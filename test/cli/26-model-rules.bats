#!/usr/bin/env bats
# The one state model's rules (convert/lib/model.h), seen through the tools, on small hand-written traces.
bats_require_minimum_version 1.5.0
load helpers

@test "--human has a sentence for every event type of a fresh trace" {
	ptt-record -q -o "$BATS_TEST_TMPDIR/t.ptt" -- true
	# one event of each type, every argument 0 or empty
	ptt-dump "$BATS_TEST_TMPDIR/t.ptt" | awk '/^# type / {
		line = "0.000000001 10 11 " $7 " " $4
		n = split($8 == "-" ? "" : $8, args, ",")
		for (i = 1; i <= n; i++) { split(args[i], a, ":"); line = line " " a[1] "=" (a[2] == "str" ? "\"\"" : a[2] == "ptr" ? "0x0" : "0") }
		print line; types++ }
		/^# / { print; next }
		END { if (types < 60) exit 1 }' >"$BATS_TEST_TMPDIR/all.txt"
	run -0 --separate-stderr ptt-dump --human -n "$BATS_TEST_TMPDIR/all.txt"
	[ -z "$stderr" ]
	# a type without a sentence falls back to "TIME thread TID: name args"
	missing=$(echo "$output" | grep -E '^[0-9.]+ thread [0-9]+: ' || true)
	[ -z "$missing" ] || { echo "no sentence: $missing"; return 1; }
	# but the stack events (and a CPython's py_runtime and py_code), which --human folds into the
	# sentence of the event they belong to
	[ "$(echo "$output" | wc -l)" -eq "$(grep -vcE '^#| pthread (stack(_frames)?|py_runtime|py_code) ' "$BATS_TEST_TMPDIR/all.txt")" ]
	grep -qE ' pthread stack_frames ' "$BATS_TEST_TMPDIR/all.txt"
	! grep -qE 'stack(_frames)? ' <<<"$output"
}

@test "a refused unlock releases nothing" {
	trace refused \
		'0.000000002 10 10 pthread mutex_lock mutex=0x10 ret=0' \
		'0.000000003 10 11 pthread mutex_unlock mutex=0x10 ret=1' \
		'0.000000004 10 11 pthread mutex_lock mutex=0x10 ret=0'
	run -1 --separate-stderr ptt-dump --check "$BATS_TEST_TMPDIR/refused.txt"
	[[ "$output" == *"0.000000004 pid 10 tid 11 mutex_lock: 0x10 acquired while held by thread 10"* ]]
	[[ "$output" == *" 1 violations: FAILED" ]]
	[ -z "$stderr" ]
	# the refused unlock ends no hold in the pictures either
	run -0 --separate-stderr ptt-csv --states "$BATS_TEST_TMPDIR/refused.txt"
	[[ "$output" == *"10,10,x,holding_mutex,0x10,,2,4,2,0"* ]]
	[ -z "$stderr" ]
}

@test "an rwlock's refused unlock releases nothing; a real one ends the write hold first" {
	trace rw \
		'0.000000002 10 10 pthread rwlock_rdlock rwlock=0x30 ret=0' \
		'0.000000003 10 10 pthread rwlock_unlock rwlock=0x30 ret=1' \
		'0.000000004 10 11 pthread rwlock_wrlock rwlock=0x30 ret=0'
	run -1 --separate-stderr ptt-dump --check "$BATS_TEST_TMPDIR/rw.txt"
	[[ "$output" == *"rwlock_wrlock: 0x30 write-locked while 1 readers hold it"* ]]
	[ -z "$stderr" ]
}

@test "a robust mutex taken with EOWNERDEAD after its owner died is no violation" {
	trace ownerdead \
		'0.000000002 10 10 pthread thread_create handle=0x1 start=0x2 child=11 ret=0' \
		'0.000000003 10 11 pthread thread_begin handle=0x1 start=0x2 parent=10' \
		'0.000000004 10 11 pthread mutex_lock mutex=0x10 ret=0' \
		'0.000000005 10 11 pthread thread_end retval=0x0 how=0' \
		'0.000000006 10 10 pthread mutex_lock mutex=0x10 ret=130' \
		'0.000000007 10 10 pthread mutex_unlock mutex=0x10 ret=0'
	run -0 --separate-stderr ptt-dump --check "$BATS_TEST_TMPDIR/ownerdead.txt"
	[[ "$output" == *" 0 violations: ok" ]]
	[ -z "$stderr" ]
	# without EOWNERDEAD the dead owner still holds it
	sed -i 's/ret=130/ret=0/' "$BATS_TEST_TMPDIR/ownerdead.txt"
	run -1 --separate-stderr ptt-dump --check "$BATS_TEST_TMPDIR/ownerdead.txt"
	[[ "$output" == *"mutex_lock: 0x10 acquired while held by thread 11"* ]]
}

@test "spinlocks are checked like mutexes" {
	trace spin \
		'0.000000002 10 10 pthread spin_lock spin=0x40 ret=0' \
		'0.000000003 10 11 pthread spin_lock spin=0x40 ret=0'
	run -1 --separate-stderr ptt-dump --check "$BATS_TEST_TMPDIR/spin.txt"
	[[ "$output" == *"spin_lock: 0x40 acquired while held by thread 10"* ]]
}

@test "a semaphore set to 1 is held like a lock, and released by a post" {
	trace semlock \
		'0.000000002 10 10 pthread sem_init sem=0x50 value=1 ret=0' \
		'0.000000003 10 10 pthread sem_wait sem=0x50 ret=0' \
		'0.000000005 10 10 pthread sem_post sem=0x50 ret=0' \
		'0.000000006 10 10 pthread thread_end retval=0x0 how=0'
	run -0 --separate-stderr ptt-csv --states "$BATS_TEST_TMPDIR/semlock.txt"
	[[ "$output" == *"10,10,x,sem_hold,0x50,,3,5,2,1"* ]]
	[ -z "$stderr" ]
	run -0 --separate-stderr ptt-stat --csv "$BATS_TEST_TMPDIR/semlock.txt"
	[[ "$output" == *"0x50,0x50,sem,10,1,0,0.00,0,0,0,0,0,2,2,2,0,0"* ]]
	# a counting semaphore (set to 0, posted past 1) is no lock
	trace semcount \
		'0.000000002 10 10 pthread sem_init sem=0x50 value=0 ret=0' \
		'0.000000003 10 10 pthread sem_post sem=0x50 ret=0' \
		'0.000000004 10 10 pthread sem_post sem=0x50 ret=0' \
		'0.000000005 10 10 pthread sem_wait sem=0x50 ret=0' \
		'0.000000006 10 10 pthread sem_post sem=0x50 ret=0'
	run -0 --separate-stderr ptt-csv --states "$BATS_TEST_TMPDIR/semcount.txt"
	[[ "$output" != *"sem_hold"* ]]
}

# CPython's Condition: the waiter takes its lock, blocks taking it again, and the notifier releases it.
@test "a semaphore set to 1 that another thread posts for its taker is a signal from then on" {
	trace semsig \
		'0.000000002 10 10 pthread sem_init sem=0x50 value=1 ret=0' \
		'0.000000003 10 10 pthread sem_wait sem=0x50 ret=0' \
		'0.000000004 10 10 pthread sem_wait_req sem=0x50' \
		'0.000000010 10 11 pthread sem_post sem=0x50 ret=0' \
		'0.000000011 10 10 pthread sem_wait sem=0x50 ret=0' \
		'0.000000012 10 10 pthread mutex_lock mutex=0x60 ret=0' \
		'0.000000013 10 10 pthread mutex_unlock mutex=0x60 ret=0' \
		'0.000000020 10 11 pthread sem_post sem=0x50 ret=0'
	run -0 --separate-stderr ptt-csv --states "$BATS_TEST_TMPDIR/semsig.txt"
	[ -z "$stderr" ]
	# held from its first take (shown until the thread blocks on it again); the second take holds nothing
	[ "$(grep -c ',sem_hold,' <<<"$output")" -eq 1 ]
	[[ "$output" == *"10,10,x,sem_hold,0x50,,3,4,1,1"* ]]
	[[ "$output" == *"10,10,x,sem_wait,0x50,,4,11,7,1"$'\n'"10,10,x,running,,,11,12,1,1"* ]]
	# ptt-stat: waiting for work, not a lock
	run -0 --separate-stderr ptt-stat --csv -S 0 "$BATS_TEST_TMPDIR/semsig.txt"
	[ "$(awk -F, '$1 == "0x50" { print $6, $18 }' <<<"$output")" = "1 work" ]
}

@test "a cond wait's hidden unlock and re-lock: the mutex is free during the wait" {
	trace cw \
		'0.000000002 10 10 pthread mutex_lock mutex=0x10 ret=0' \
		'0.000000003 10 10 pthread cond_wait_req cond=0x20 mutex=0x10' \
		'0.000000004 10 11 pthread mutex_lock mutex=0x10 ret=0' \
		'0.000000005 10 11 pthread cond_signal cond=0x20 ret=0' \
		'0.000000006 10 11 pthread mutex_unlock mutex=0x10 ret=0' \
		'0.000000007 10 10 pthread cond_wait cond=0x20 mutex=0x10 ret=0' \
		'0.000000008 10 10 pthread mutex_unlock mutex=0x10 ret=0'
	run -0 --separate-stderr ptt-dump --check "$BATS_TEST_TMPDIR/cw.txt"
	[[ "$output" == *" 0 violations: ok" ]]
	run -0 --separate-stderr ptt-dump --human -n "$BATS_TEST_TMPDIR/cw.txt"
	[[ "$output" == *"thread 10 (x) wakes on condition 0x20 and holds mutex 0x10"* ]]
}

@test "--human names the holder a thread waits for" {
	trace held \
		'0.000000002 10 10 pthread mutex_lock mutex=0x10 ret=0' \
		'0.000000003 10 11 pthread mutex_lock_req mutex=0x10' \
		'0.000000004 10 10 pthread mutex_unlock mutex=0x10 ret=0' \
		'0.000000005 10 11 pthread mutex_lock mutex=0x10 ret=0'
	run -0 --separate-stderr ptt-dump --human -n "$BATS_TEST_TMPDIR/held.txt"
	[[ "$output" == *"0.000000003 thread 11 waits for mutex 0x10, held by thread 10"* ]]
	[ -z "$stderr" ]
}

@test "a thread holding more than 1024 objects at once: the oldest forgotten, said once by every tool that models" {
	local t="$BATS_TEST_TMPDIR/nest.txt"
	{
		printf '# ptt-trace 1\n# clock ns\n# clock_hz 1000000000\n# start_ticks 0\n'
		echo '0.000001000 100 100 pthread process_begin ppid=1 cmd="nest"'
		echo '0.000001100 100 100 pthread thread_begin handle=0x1 start=0x0 parent=0'
		awk 'BEGIN { for (i = 0; i < 1030; i++) printf "0.%09d 100 100 pthread mutex_lock mutex=0x%x ret=0\n", 2000 + i, 4096 + 64 * i
			for (i = 1029; i >= 0; i--) printf "0.%09d 100 100 pthread mutex_unlock mutex=0x%x ret=0\n", 6029 - i, 4096 + 64 * i }'
		echo '0.000009000 100 100 pthread process_exit status=0'
		echo '0.000009100 100 100 pthread thread_end retval=0x0 how=3'
	} >"$t"
	note="6 holds and waits in force forgotten: a thread had more than the 1024 kept at once (the oldest forgotten)"
	run -0 --separate-stderr ptt-stat "$t"
	[[ "$output" == *"limit: $note"* ]]
	run -0 --separate-stderr ptt-deadlock "$t"
	[ "$stderr" = "ptt-deadlock: $t: note: $note" ]
	run -0 --separate-stderr ptt-csv --states "$t"
	[ "$stderr" = "ptt-csv: $t: note: $note" ]
	# 1024 objects at once is within the cap: nothing said
	sed -i '/mutex=0x11\(000\|040\|080\|0c0\|100\|140\) /d' "$t"
	run -0 --separate-stderr ptt-deadlock "$t"
	[ "$stderr" = "" ]
}

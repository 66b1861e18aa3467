#!/usr/bin/env bats
# ptt-critical on small hand-written traces whose critical path and attribution are worked out by hand
# here (the figures of a text trace are exact: ns), one edge kind of man/ptt-critical.1 at a time; then on
# recorded traces that lost events (-d) or begin mid-run (--flight): unknown time, never a guess.
bats_require_minimum_version 1.5.0
load helpers

# spawn US TID...: thread 10 creates each TID at US, US+2, ...; each begins 1 us after its creation
spawn() {
	local t=$1
	shift
	for tid in "$@"; do
		echo "$t 10 thread_create handle=0x$tid start=0x2 child=$tid ret=0"
		echo "$((t + 1)) $tid thread_begin handle=0x$tid start=0x2 parent=10"
		t=$((t + 2))
	done
}

# the first lines of the report: length and window, the check, the parts (running, hand-offs, own
# waits, start-up, unknown)
head_ok() { # LEN_MS FROM_MS TO_MS END_THREAD RUN FREE HANDOFF SELF START UNKNOWN (ms, as printed)
	local want
	want=$(printf 'critical path: %s ms, from %s to %s ms, ending where %s ends\n  check: its stretches cover the window end to end, each once' "$1" "$2" "$3" "$4")
	[ "$(sed -n 1,2p <<<"$output")" = "$want" ] || { echo "got: $(sed -n 1,2p <<<"$output")"; echo "want: $want"; return 1; }
	part() { awk -v p="$1" 'index($0, "  " p " ") == 1 { split(substr($0, length(p) + 3), a, " "); print a[1] }' <<<"$output"; }
	[ "$(part running)" = "$5" ] || { echo "running: $(part running), want $5"; return 1; }
	[[ "$output" == *"(holding no lock: $6 ms)"* ]] || { echo "holding no lock: want $6"; return 1; }
	[ "$(part 'waiting for a hand-off')" = "$7" ] || { echo "hand-off: $(part 'waiting for a hand-off'), want $7"; return 1; }
	[ "$(part 'own waits (timeouts)')" = "$8" ] || { echo "own: $(part 'own waits (timeouts)'), want $8"; return 1; }
	[ "$(part 'thread start-up')" = "$9" ] || { echo "start-up: $(part 'thread start-up'), want $9"; return 1; }
	[ "$(part unknown)" = "${10}" ] || { echo "unknown: $(part unknown), want ${10}"; return 1; }
}

# obj_row NAME: "CLASS ON-PATH HELD WAITED ALL-WAITS WAITS" of an object of WHAT TO FIX FIRST
obj_row() { awk -v o="$1" '/^WHAT TO FIX FIRST/ { on = 1; next } on && /^$/ { on = 0 } on && $1 == o { print $2, $3, $5, $6, $7, $8 }' <<<"$output"; }
# thr_rows: "TID:RUNNING" of THREADS ON THE PATH, in their order
thr_rows() { awk '/^THREADS ON THE PATH/ { on = 1; getline; next } on && NF { t = $NF; gsub(/[()]/, "", t); printf "%s%s:%s", sep, t, $1; sep = " " }' <<<"$output"; }
# folded_sum: the --folded lines' ns, added
folded_sum() { awk '{ n += $NF } END { printf "%.0f\n", n }' <<<"$output"; }

# the traces of the tests below (their paths worked out there)
trace_barge() {
	{
		spawn 10 11 12 13
		cat <<-'E'
		16 10 thread_end retval=0x0 how=0
		20 11 mutex_lock mutex=0x100 ret=0
		30 13 mutex_lock_req mutex=0x100
		40 11 mutex_unlock mutex=0x100 ret=0
		45 12 mutex_lock mutex=0x100 ret=0
		50 11 thread_end retval=0x0 how=0
		70 12 mutex_unlock mutex=0x100 ret=0
		72 12 thread_end retval=0x0 how=0
		75 13 mutex_lock mutex=0x100 ret=0
		80 13 mutex_unlock mutex=0x100 ret=0
		90 13 thread_end retval=0x0 how=0
		E
	} | ctrace barge
}

trace_rw() {
	{
		spawn 10 11 12 13
		cat <<-'E'
		16 10 thread_end retval=0x0 how=0
		20 11 rwlock_rdlock rwlock=0x200 ret=0
		22 12 rwlock_rdlock rwlock=0x200 ret=0
		30 13 rwlock_wrlock_req rwlock=0x200
		40 12 rwlock_unlock rwlock=0x200 ret=0
		45 12 thread_end retval=0x0 how=0
		60 11 rwlock_unlock rwlock=0x200 ret=0
		61 11 thread_end retval=0x0 how=0
		65 13 rwlock_wrlock rwlock=0x200 ret=0
		70 13 rwlock_unlock rwlock=0x200 ret=0
		80 13 thread_end retval=0x0 how=0
		E
	} | ctrace rw
}

trace_cond() {
	{
		spawn 10 11 12
		cat <<-'E'
		14 10 thread_end retval=0x0 how=0
		20 11 mutex_lock mutex=0x100 ret=0
		25 11 cond_wait_req cond=0x300 mutex=0x100
		30 12 mutex_lock mutex=0x100 ret=0
		40 12 cond_signal cond=0x300 ret=0
		60 12 mutex_unlock mutex=0x100 ret=0
		62 11 cond_wait cond=0x300 mutex=0x100 ret=0
		65 11 mutex_unlock mutex=0x100 ret=0
		66 12 thread_end retval=0x0 how=0
		70 11 thread_end retval=0x0 how=0
		E
	} | ctrace cond
}

# cond with the signaller letting the mutex go (40) before it signals (50), the waiter returning at 52
trace_cond2() {
	trace_cond
	sed -e 's/^0.000040000 10 12 pthread cond_signal .*/0.000040000 10 12 pthread mutex_unlock mutex=0x100 ret=0/' \
	    -e 's/^0.000060000 10 12 pthread mutex_unlock .*/0.000050000 10 12 pthread cond_signal cond=0x300 ret=0/' \
	    -e 's/^0.000062000 \(.*cond_wait \)/0.000052000 \1/' "$BATS_TEST_TMPDIR/cond.txt" >"$BATS_TEST_TMPDIR/cond2.txt"
}

trace_sem() {
	{
		spawn 10 11
		cat <<-'E'
		1 10 sem_init sem=0x400 value=0 ret=0
		20 10 sem_wait_req sem=0x400
		50 11 sem_post sem=0x400 ret=0
		53 10 sem_wait sem=0x400 ret=0
		55 11 thread_end retval=0x0 how=0
		60 10 thread_end retval=0x0 how=0
		E
	} | sort -n -s -k1,1 | ctrace sem
}

trace_bar() {
	{
		spawn 10 11 12
		cat <<-'E'
		1 10 barrier_init barrier=0x500 count=3 ret=0
		20 10 barrier_wait_req barrier=0x500
		30 12 barrier_wait_req barrier=0x500
		50 11 barrier_wait_req barrier=0x500
		51 11 barrier_wait barrier=0x500 ret=-1
		52 12 barrier_wait barrier=0x500 ret=0
		53 10 barrier_wait barrier=0x500 ret=0
		55 11 thread_end retval=0x0 how=0
		56 12 thread_end retval=0x0 how=0
		60 10 thread_end retval=0x0 how=0
		E
	} | sort -n -s -k1,1 | ctrace bar
}

trace_fut() {
	{
		spawn 10 11
		cat <<-'E'
		20 10 futex_wait_req futex=0x600 val=0 op=0 timeout_ns=-1
		45 11 futex_wake futex=0x600 count=1 op=1 woken=1
		48 10 futex_wait futex=0x600 ret=0
		50 11 thread_end retval=0x0 how=0
		60 10 thread_end retval=0x0 how=0
		E
	} | ctrace fut
}

trace_join() {
	{
		spawn 10 11 12
		cat <<-'E'
		20 10 thread_join_req handle=0x11 target=11
		40 11 thread_end retval=0x0 how=0
		42 10 thread_join handle=0x11 target=11 ret=0 retval=0x0
		43 10 thread_join_req handle=0x12 target=12
		44 12 thread_end retval=0x0 how=0
		46 10 thread_join handle=0x12 target=12 ret=0 retval=0x0
		50 10 thread_end retval=0x0 how=0
		E
	} | ctrace join
}

trace_pool() {
	{
		spawn 10 11 12
		cat <<-'E'
		15 11 mutex_lock mutex=0x100 ret=0
		16 11 cond_wait_req cond=0x300 mutex=0x100
		17 12 mutex_lock mutex=0x100 ret=0
		18 12 cond_wait_req cond=0x300 mutex=0x100
		20 10 mutex_lock mutex=0x100 ret=0
		21 10 cond_signal cond=0x300 ret=0
		22 10 mutex_unlock mutex=0x100 ret=0
		24 11 cond_wait cond=0x300 mutex=0x100 ret=0
		25 11 mutex_unlock mutex=0x100 ret=0
		30 10 thread_join_req handle=0x11 target=11
		60 11 thread_end retval=0x0 how=0
		62 10 thread_join handle=0x11 target=11 ret=0 retval=0x0
		70 10 mutex_lock mutex=0x100 ret=0
		71 10 cond_broadcast cond=0x300 ret=0
		72 10 mutex_unlock mutex=0x100 ret=0
		73 10 thread_join_req handle=0x12 target=12
		74 12 cond_wait cond=0x300 mutex=0x100 ret=0
		75 12 mutex_unlock mutex=0x100 ret=0
		76 12 thread_end retval=0x0 how=0
		77 10 thread_join handle=0x12 target=12 ret=0 retval=0x0
		80 10 thread_end retval=0x0 how=0
		E
	} | ctrace pool
}

@test "mutex: the path runs through the thread that barged in, not the owner when the wait began" {
	# A (11) holds L 20-40; C (13) asks at 30; A lets go at 40, B (12) barges in at 45 without
	# waiting and holds L to 70; C gets it at 75.  The path back from C's end (90): C 75-90 (L held
	# 75-80), the hand-off 70-75, B 13-70 (L held 45-70), B's start 12-13, thread 10 0-12.  A is not on it.
	trace_barge
	run -0 --separate-stderr ptt-critical "$BATS_TEST_TMPDIR/barge.txt"
	[ -z "$stderr" ]
	# running 57 (B) + 15 (C) + 12 (10) = 84, 54 of it free (B 13-45, C 80-90, 10); hand-off 5; start-up 1
	head_ok 0.090 0.000 0.090 'thread 13 (13)' 0.084 0.054 0.005 0.000 0.001 0.000
	# L: held 25 (B) + 5 (C), waited 5 on the path; every thread's waits: C's 30-75, one
	[ "$(obj_row 0x100)" = "mutex 0.035 0.030 0.005 0.045 1" ]
	[ "$(thr_rows)" = "12:0.057 13:0.015 10:0.012" ]
	run -0 --separate-stderr ptt-critical --folded "$BATS_TEST_TMPDIR/barge.txt"
	[ -z "$stderr" ]
	[ "$output" = "[no site];[held 0x100] 30000
[no site];[waited 0x100] 5000
thread_12;[running, no lock] 32000
thread_13;[running, no lock] 10000
x;[running, no lock] 12000
[own waits and thread start-up] 1000" ]
	[ "$(folded_sum)" -eq 90000 ]
}

@test "a lock never waited for on the path is said to be work under it; a path with no waits, that no lock bounds it" {
	# thread 11 holds 0x100 20-60 with nobody waiting, then 0x200 70-80 while 12 waits for it from 65 and
	# gets it at 80: 0x100 is on the path only by the work under it; 0x200 was waited for
	ctrace quiet <<-'E'
	1 10 thread_create handle=0x11 start=0x2 child=11 ret=0
	2 11 thread_begin handle=0x11 start=0x2 parent=10
	3 10 thread_end retval=0x0 how=0
	20 11 mutex_lock mutex=0x100 ret=0
	60 11 mutex_unlock mutex=0x100 ret=0
	100 11 thread_end retval=0x0 how=0
	E
	run -0 --separate-stderr ptt-critical "$BATS_TEST_TMPDIR/quiet.txt"
	[ -z "$stderr" ]
	[ "$(obj_row 0x100)" = "mutex 0.040 0.040 0.000 0.000 0" ]
	[[ "$output" == *$'\n(it was never waited for on the path: its time on it is the work done holding it, which only faster code shortens, not a better lock)\n'* ]]
	[[ "$output" == *$'\n(waiting for hand-offs is only 0.0 % of the path: no lock\'s waits set this run\'s length, its threads\' own work does; 40.0 % of the path is that work done holding 0x100: shorter holds would shorten it, a faster lock would not)\n'* ]]
	# the same with a second thread waiting 0x100 20 us of the path: neither line
	ctrace waited <<-'E'
	1 10 thread_create handle=0x11 start=0x2 child=11 ret=0
	2 11 thread_begin handle=0x11 start=0x2 parent=10
	3 10 thread_create handle=0x12 start=0x2 child=12 ret=0
	4 12 thread_begin handle=0x12 start=0x2 parent=10
	5 10 thread_end retval=0x0 how=0
	20 11 mutex_lock mutex=0x100 ret=0
	40 12 mutex_lock_req mutex=0x100
	60 11 mutex_unlock mutex=0x100 ret=0
	60 11 thread_end retval=0x0 how=0
	61 12 mutex_lock mutex=0x100 ret=0
	62 12 mutex_unlock mutex=0x100 ret=0
	100 12 thread_end retval=0x0 how=0
	E
	run -0 --separate-stderr ptt-critical "$BATS_TEST_TMPDIR/waited.txt"
	[ -z "$stderr" ]
	[ "$(obj_row 0x100)" = "mutex 0.042 0.041 0.001 0.021 1" ]
	[[ "$output" != *"never waited for on the path"* ]]
	[[ "$output" != *"waiting for hand-offs is only"* ]]
}

@test "rwlock: a writer after readers is let in by the last reader's unlock" {
	# readers 11 (20-60) and 12 (22-40); writer 13 asks at 30, gets it at 65: the edge is 11's unlock
	# at 60 (not 12's at 40).  Path: 13 65-80 (held 65-70), hand-off 60-65, 11 11-60 (held 20-60),
	# 11's start 10-11, thread 10 0-10.
	trace_rw
	run -0 --separate-stderr ptt-critical "$BATS_TEST_TMPDIR/rw.txt"
	[ -z "$stderr" ]
	# running 15 + 49 + 10 = 74, free 10 (13) + 9 (11) + 10 (10) = 29
	head_ok 0.080 0.000 0.080 'thread 13 (13)' 0.074 0.029 0.005 0.000 0.001 0.000
	[ "$(obj_row 0x200)" = "rwlock 0.050 0.045 0.005 0.035 1" ]
	[ "$(thr_rows)" = "11:0.049 13:0.015 10:0.010" ]
}

@test "condition wait: the signal wakes it, then the mutex's release by the signaller is the edge" {
	# 11 waits on 0x300 from 25 (its mutex 0x100 let go); 12 takes 0x100 at 30, signals at 40 and lets
	# 0x100 go at 60; 11 returns at 62.  Path: 11 62-70 (0x100 held 62-65), hand-off 60-62 waiting for
	# 0x100, 12 13-60 (0x100 held 30-60), 12's start 12-13, thread 10 0-12.  The cond is not on it.
	trace_cond
	run -0 --separate-stderr ptt-critical "$BATS_TEST_TMPDIR/cond.txt"
	[ -z "$stderr" ]
	# running 8 + 47 + 12 = 67, free 5 + 17 + 12 = 34
	head_ok 0.070 0.000 0.070 'thread 11 (11)' 0.067 0.034 0.002 0.000 0.001 0.000
	[ "$(obj_row 0x100)" = "mutex 0.035 0.033 0.002 0.000 0" ]
	[ -z "$(obj_row 0x300)" ]
	[ "$(thr_rows)" = "12:0.047 10:0.012 11:0.008" ]
	# the signaller lets the mutex go (40) before it signals (50): the signal is the edge, 11
	# returns at 52.  Path: 11 52-70 (0x100 held 52-65), hand-off 50-52 on the cond, 12 13-50 (held
	# 30-40), start-up 12-13, thread 10 0-12
	trace_cond2
	run -0 --separate-stderr ptt-critical "$BATS_TEST_TMPDIR/cond2.txt"
	[ -z "$stderr" ]
	head_ok 0.070 0.000 0.070 'thread 11 (11)' 0.067 0.044 0.002 0.000 0.001 0.000
	[ "$(obj_row 0x100)" = "mutex 0.023 0.023 0.000 0.000 0" ]
	[ "$(obj_row 0x300)" = "cond 0.002 0.000 0.002 0.027 1" ]
	[ "$(thr_rows)" = "12:0.037 11:0.018 10:0.012" ]
}

@test "semaphore post, barrier's last arrival, join, futex wake: each is the edge; thread creation too" {
	# thread 10 waits (20 on) for what 11 does at 50 (45 for the futex); it returns 3 us later and ends
	# at 60.  Path: 10 53-60, hand-off 50-53, 11 11-50, 11's start 10-11 (its pthread_create), 10 0-10.
	trace_sem
	run -0 --separate-stderr ptt-critical "$BATS_TEST_TMPDIR/sem.txt"
	[ -z "$stderr" ]
	head_ok 0.060 0.000 0.060 'x (10)' 0.056 0.056 0.003 0.000 0.001 0.000
	[ "$(obj_row 0x400)" = "sem 0.003 0.000 0.003 0.033 1" ]
	[ "$(thr_rows)" = "11:0.039 10:0.017" ]
	# a barrier of 3: 10 arrives at 20, 12 at 30, 11 last at 50; the path runs through 11, not 12
	trace_bar
	run -0 --separate-stderr ptt-critical "$BATS_TEST_TMPDIR/bar.txt"
	[ -z "$stderr" ]
	head_ok 0.060 0.000 0.060 'x (10)' 0.056 0.056 0.003 0.000 0.001 0.000
	# every thread's waits: 33 + 22 + 1
	[ "$(obj_row 0x500)" = "barrier 0.003 0.000 0.003 0.056 3" ]
	[ "$(thr_rows)" = "11:0.039 10:0.017" ]
	# futex: 10 waits from 20, 11 wakes it at 45, it returns at 48: 10 48-60, hand-off 45-48, 11 11-45
	trace_fut
	run -0 --separate-stderr ptt-critical "$BATS_TEST_TMPDIR/fut.txt"
	[ -z "$stderr" ]
	head_ok 0.060 0.000 0.060 'x (10)' 0.056 0.056 0.003 0.000 0.001 0.000
	[ "$(obj_row 0x600)" = "futex 0.003 0.000 0.003 0.028 1" ]
	[ "$(thr_rows)" = "11:0.034 10:0.022" ]
	# join: 10 joins 11 (ended at 40, before the path's end) then 12, which ends at 44; 10 returns
	# at 46, ends at 50.  Path: 10 46-50, hand-off 44-46 (the join of 12), 12 13-44, 12's start
	# 12-13, 10 0-12
	trace_join
	run -0 --separate-stderr ptt-critical "$BATS_TEST_TMPDIR/join.txt"
	[ -z "$stderr" ]
	head_ok 0.050 0.000 0.050 'x (10)' 0.047 0.047 0.002 0.000 0.001 0.000
	[ "$(thr_rows)" = "12:0.031 10:0.016" ]
	# the join of 12 beside every join's wait of it (43-46, one); 11's (20-42) is off the path
	[ "$(grep '^join of thread 12 ' <<<"$output" | tr -s ' ')" = "join of thread 12 join 0.002 4.0 0.000 0.002 0.003 1" ]
	[ -z "$(grep '^join of thread 11 ' <<<"$output")" ]
	run -0 --separate-stderr ptt-critical -F "$BATS_TEST_TMPDIR/join.txt"
	[ -z "$stderr" ]
	[ "$output" = "[no site];[waited join_of_thread_12] 2000
thread_12;[running, no lock] 31000
x;[running, no lock] 16000
[own waits and thread start-up] 1000" ]
}

@test "a thread pool: the idle worker's wait for work carries no critical time" {
	# workers 11 and 12 wait for work on 0x300 (queue lock 0x100); 10 signals once at 21 (releases
	# 0x100 at 22), 11 takes the item (returns 24), works to 60 and ends; 10 joins it (30-62), then
	# broadcasts at 71 (releases 0x100 at 72) to stop the pool: 12, idle since 18, returns at 74, ends
	# at 76; 10 joins it (73-77), ends at 80.  Path back from 80: 10 77-80, join of 12 76-77, 12 74-76
	# (0x100 held 74-75), 12's wait handed off by 10's release of 0x100 72-74, 10 62-72 (0x100 held
	# 70-72), join of 11 60-62, 11 24-60 (0x100 held 24-25), 11's wait handed off by 10's release
	# 22-24, 10 0-22 (0x100 held 20-22).  12's 54 us idle (18-72) are not on it, nor is the cond.
	trace_pool
	run -0 --separate-stderr ptt-critical "$BATS_TEST_TMPDIR/pool.txt"
	[ -z "$stderr" ]
	# running 35 (10) + 36 (11) + 2 (12) = 73, 6 of it holding 0x100; hand-offs 2 + 2 + 2 + 1
	head_ok 0.080 0.000 0.080 'x (10)' 0.073 0.067 0.007 0.000 0.000 0.000
	[ "$(obj_row 0x100)" = "mutex 0.010 0.006 0.004 0.000 0" ]
	[ -z "$(obj_row 0x300)" ]
	[ "$(thr_rows)" = "11:0.036 10:0.035 12:0.002" ]
	# one line per stack and kind (a hold and a wait of one object are two contexts, never one per
	# wait), adding up to the path
	run -0 --separate-stderr ptt-critical -F "$BATS_TEST_TMPDIR/pool.txt"
	[ -z "$stderr" ]
	[ "$output" = "[no site];[held 0x100] 6000
[no site];[waited 0x100] 4000
[no site];[waited join_of_thread_11] 2000
[no site];[waited join_of_thread_12] 1000
thread_11;[running, no lock] 35000
x;[running, no lock] 31000
thread_12;[running, no lock] 1000" ]
	[ "$(folded_sum)" -eq 80000 ]
}

@test "--what-if naming nothing replays the run as recorded, to the ns" {
	# every hand-off (sem post, barrier, futex wake, join, condition then mutex, thread creation, a lock
	# handed over): the replay with no hold changed ends where the run did.  A thread's running time is
	# one step of the replay until another thread's wait names a point inside it (a post, a create):
	# it was merged past that point, and the waiter woke late (+25 % on sem, barrier and futex).  A lock
	# no --what-if names keeps its recorded order: on the barging mutex (12 takes it from under 13, which
	# waited longer), handing it to its longest waiter predicted -39 %
	{
		spawn 10 11 12 13
		cat <<-'E'
		16 10 thread_end retval=0x0 how=0
		20 11 mutex_lock mutex=0x100 ret=0
		30 13 mutex_lock_req mutex=0x100
		40 11 mutex_unlock mutex=0x100 ret=0
		45 12 mutex_lock mutex=0x100 ret=0
		50 11 thread_end retval=0x0 how=0
		70 12 mutex_unlock mutex=0x100 ret=0
		71 13 mutex_lock mutex=0x100 ret=0
		72 12 thread_end retval=0x0 how=0
		80 13 mutex_unlock mutex=0x100 ret=0
		90 13 thread_end retval=0x0 how=0
		E
	} | ctrace barge2 # barge's, 13 handed the lock 1 us after 12's release: at 41 it would beat 12 to it
	for t in sem bar fut join cond cond2 pool barge barge2 rw; do
		[ "$t" = barge2 ] || "trace_$t"
		run -0 --separate-stderr ptt-critical --what-if=nothing:-50% "$BATS_TEST_TMPDIR/$t.txt"
		[ -z "$stderr" ]
		[[ "$output" == *$'\n''  nothing: holds -50 %  -- no lock or site of that name in the trace: nothing changed'$'\n'* ]]
		len=$(sed -n 's/^critical path: \([0-9.]*\) ms.*/\1/p' <<<"$output")
		[ "${lines[-1]}" = "predicted: $len ms (the run as recorded: $len ms; +0.0 %)" ] || { echo "$t: ${lines[-1]}"; return 1; }
	done
}

@test "--what-if: holds halved, the hand-off's latency kept, and a take never before the holder lets go" {
	# 11 holds 0x100 20-60; 12 asks at 30, is handed it at 60 and returns at 62 (latency 2), holds it
	# to 72 and ends at 80.  Holds halved: 11 gives it back at 20 + 20 = 40, 12 returns at 42, holds
	# 5, runs 8: ends at 55 (-31.2 %).  Holds at 0 %: the run as recorded (the latency kept: 80)
	ctrace wi1 <<-'E'
	10 10 thread_create handle=0x11 start=0x2 child=11 ret=0
	11 11 thread_begin handle=0x11 start=0x2 parent=10
	12 10 thread_create handle=0x12 start=0x2 child=12 ret=0
	13 12 thread_begin handle=0x12 start=0x2 parent=10
	16 10 thread_end retval=0x0 how=0
	20 11 mutex_lock mutex=0x100 ret=0
	30 12 mutex_lock_req mutex=0x100
	60 11 mutex_unlock mutex=0x100 ret=0
	62 12 mutex_lock mutex=0x100 ret=0
	65 11 thread_end retval=0x0 how=0
	72 12 mutex_unlock mutex=0x100 ret=0
	80 12 thread_end retval=0x0 how=0
	E
	run -0 --separate-stderr ptt-critical --what-if=0x100:-50% "$BATS_TEST_TMPDIR/wi1.txt"
	[ -z "$stderr" ]
	head_ok 0.080 0.000 0.080 'thread 12 (12)' 0.077 0.027 0.002 0.000 0.001 0.000
	[[ "$output" == *$'\n''  0x100: holds -50 %'$'\n'* ]]
	[ "${lines[-1]}" = "predicted: 0.055 ms (the run as recorded: 0.080 ms; -31.2 %)" ]
	[[ "$output" != *"ptt's own recording"* ]] # wi1 does not say what an event cost
	# with it (1 us an event): the path's own events are 10's create (its process_begin comes before
	# it is known), 11's begin, lock and unlock (its end after the path left it), 12's lock (which ends
	# its wait: its cost is in the hand-off), unlock and end: 7 us
	{ cat "$BATS_TEST_TMPDIR/wi1.txt"; echo "# trace_path_ps 1000000"; } >"$BATS_TEST_TMPDIR/wi1c.txt"
	run -0 --separate-stderr ptt-critical "$BATS_TEST_TMPDIR/wi1c.txt"
	[ -z "$stderr" ]
	[ "${lines[7]}" = "  of it ptt's own recording: about 0.007 ms (7 events on the path, 1000.0 ns each), in the running and held times: untraced, the path is that much shorter" ]
	run -0 --separate-stderr ptt-critical -w 0x100:0% "$BATS_TEST_TMPDIR/wi1.txt"
	[ "${lines[-1]}" = "predicted: 0.080 ms (the run as recorded: 0.080 ms; +0.0 %)" ]
	# gone (-100 %): 11 gives it back at 20, 12 asks at 30 and takes it at once: 30 + 0 + 8 = 38
	run -0 --separate-stderr ptt-critical -w 0x100:-100% "$BATS_TEST_TMPDIR/wi1.txt"
	[ "${lines[-1]}" = "predicted: 0.038 ms (the run as recorded: 0.080 ms; -52.5 %)" ]
	# 13 holds 0x100 16-36, then takes 0x110 at 50 without waiting (12 held it 30-45) and ends at 80;
	# 12 ends at 70.  0x100 halved: 13 is at 40 when it asks for 0x110, which 12 holds to 45: it takes
	# it at 45, not 40, holds it 5 and runs 25: 75 (-6.2 %), not 70
	ctrace wi2 <<-'E'
	10 10 thread_create handle=0x12 start=0x2 child=12 ret=0
	11 12 thread_begin handle=0x12 start=0x2 parent=10
	12 10 thread_create handle=0x13 start=0x2 child=13 ret=0
	13 13 thread_begin handle=0x13 start=0x2 parent=10
	14 10 thread_end retval=0x0 how=0
	16 13 mutex_lock mutex=0x100 ret=0
	30 12 mutex_lock mutex=0x110 ret=0
	36 13 mutex_unlock mutex=0x100 ret=0
	45 12 mutex_unlock mutex=0x110 ret=0
	50 13 mutex_lock mutex=0x110 ret=0
	55 13 mutex_unlock mutex=0x110 ret=0
	70 12 thread_end retval=0x0 how=0
	80 13 thread_end retval=0x0 how=0
	E
	run -0 --separate-stderr ptt-critical -w 0x100:-50% "$BATS_TEST_TMPDIR/wi2.txt"
	[ -z "$stderr" ]
	[ "${lines[-1]}" = "predicted: 0.075 ms (the run as recorded: 0.080 ms; -6.2 %)" ]
	# 0x110 halved instead: 12 gives it back at 37.5; 13 takes it at 50 as before: 50 + 2.5 + 25
	run -0 --separate-stderr ptt-critical -w 0x110:-50% "$BATS_TEST_TMPDIR/wi2.txt"
	[ "${lines[-1]}" = "predicted: 0.077 ms (the run as recorded: 0.080 ms; -3.1 %)" ]
	# both at once (repeatable): 0x100 halved, 0x110 gone: 13 at 40 takes it free, 40 + 0 + 25
	run -0 --separate-stderr ptt-critical -w 0x100:-50% -w 0x110:-100% "$BATS_TEST_TMPDIR/wi2.txt"
	[ "${lines[-1]}" = "predicted: 0.065 ms (the run as recorded: 0.080 ms; -18.8 %)" ]
	# not with a window; not a percentage
	run -2 --separate-stderr ptt-critical -w 0x100:-50% --to=50us "$BATS_TEST_TMPDIR/wi2.txt"
	[ -z "$output" ]
	[[ "$stderr" == "ptt-critical: --what-if predicts the whole run: not with --from or --to"* ]]
	run -2 --separate-stderr ptt-critical -w 0x100 "$BATS_TEST_TMPDIR/wi2.txt"
	[ -z "$output" ]
	[[ "$stderr" == *"not NAME:-PERCENT% "* ]]
}

@test "a timed-out wait is the thread's own time; a wait with no visible waker and lost events are unknown (exit 1)" {
	# 10 holds 0x100 20-21, waits on 0x300 from 21 until it times out at 51 (ETIMEDOUT), holds 0x100
	# 51-52, ends at 60 (11 ran 11-30, off the path): running 0-21 and 51-60, own wait 30
	ctrace timed <<-'E'
	10 10 thread_create handle=0x11 start=0x2 child=11 ret=0
	11 11 thread_begin handle=0x11 start=0x2 parent=10
	20 10 mutex_lock mutex=0x100 ret=0
	21 10 cond_timedwait_req cond=0x300 mutex=0x100
	30 11 thread_end retval=0x0 how=0
	51 10 cond_wait cond=0x300 mutex=0x100 ret=110
	52 10 mutex_unlock mutex=0x100 ret=0
	60 10 thread_end retval=0x0 how=0
	E
	run -0 --separate-stderr ptt-critical "$BATS_TEST_TMPDIR/timed.txt"
	[ -z "$stderr" ]
	head_ok 0.060 0.000 0.060 'x (10)' 0.030 0.028 0.000 0.030 0.000 0.000
	# a condition's timed wait that timed out is a timer the thread set: said under the own waits, given
	# to no object (mariadbd's background timer ranked first with 28 % of a 19 s window)
	[ -z "$(obj_row 0x300)" ]
	[[ "$output" == *$'\n    of it, timed waits for a signal or a thread\'s end that timed out: 0.030 ms (50.0 %): timers the threads set (a period, a poll), no other thread\'s doing, given to no object below\n'* ]]
	[ "$(obj_row 0x100)" = "mutex 0.002 0.002 0.000 0.000 0" ]
	# a lock's timed wait that gave up (11 held it) was contention: the lock keeps it
	ctrace timedlock <<-'E'
	10 10 thread_create handle=0x11 start=0x2 child=11 ret=0
	11 11 thread_begin handle=0x11 start=0x2 parent=10
	12 11 mutex_lock mutex=0x100 ret=0
	21 10 mutex_timedlock_req mutex=0x100
	51 10 mutex_timedlock mutex=0x100 ret=110
	55 11 mutex_unlock mutex=0x100 ret=0
	56 11 thread_end retval=0x0 how=0
	60 10 thread_end retval=0x0 how=0
	E
	run -0 --separate-stderr ptt-critical "$BATS_TEST_TMPDIR/timedlock.txt"
	[ -z "$stderr" ]
	[ "$(obj_row 0x100)" = "mutex 0.030 0.000 0.030 0.030 1" ]
	[[ "$output" != *"timers the threads set"* ]]
	# a semaphore wait 20-40 that nobody's post ends: unknown, never a guess, and the status says so
	ctrace nowaker <<-'E'
	20 10 sem_wait_req sem=0x400
	40 10 sem_wait sem=0x400 ret=0
	50 10 thread_end retval=0x0 how=0
	E
	run -1 --separate-stderr ptt-critical "$BATS_TEST_TMPDIR/nowaker.txt"
	[ -z "$stderr" ]
	head_ok 0.050 0.000 0.050 'x (10)' 0.030 0.030 0.000 0.000 0.000 0.020
	[[ "$output" == *"  unknown                      0.020 ms  40.0 %  (lost events, wakers ptt cannot see, a start the trace does not show)"* ]]
	run -1 --separate-stderr ptt-critical -F "$BATS_TEST_TMPDIR/nowaker.txt"
	[ -z "$stderr" ]
	[ "$output" = "x;[running, no lock] 30000
[unknown] 20000" ]
	# 11's events 30-40 were lost (the recorder's note at the stretch's start, as ptt-record -d puts
	# it); 10 joins 11 (20-52), ends at 55.  Path: 10 52-55, join 50-52, 11 11-50 of which 30-40 is
	# unknown, 11's start 10-11, 10 0-10
	ctrace lost <<-'E'
	10 10 thread_create handle=0x11 start=0x2 child=11 ret=0
	11 11 thread_begin handle=0x11 start=0x2 parent=10
	20 10 thread_join_req handle=0x11 target=11
	30 99 rec_lost stream=11 count=4 from_ns=30000 to_ns=40000
	50 11 thread_end retval=0x0 how=0
	52 10 thread_join handle=0x11 target=11 ret=0 retval=0x0
	55 10 thread_end retval=0x0 how=0
	E
	run -1 --separate-stderr ptt-critical "$BATS_TEST_TMPDIR/lost.txt"
	[ -z "$stderr" ]
	[ "${lines[0]}" = "loss: 4 events known lost, in 1 stretch where findings cannot be verified:" ]
	output=$(sed -n '/^critical path:/,$p' <<<"$output")
	head_ok 0.055 0.000 0.055 'x (10)' 0.042 0.042 0.002 0.000 0.001 0.010
	[ "$(thr_rows)" = "11:0.029 10:0.013" ]
	run -1 --separate-stderr ptt-critical -F "$BATS_TEST_TMPDIR/lost.txt"
	[ "$(folded_sum)" -eq 55000 ]
	[[ "$output" == *$'\n''[unknown] 10000' ]]
}

@test "--from/--to: the path explains its window only; --thread: where that thread ends" {
	trace_barge
	# 30-80: 13 holds L 75-80, the hand-off 70-75, 12 30-70 (L held 45-70); what came before 30 is
	# no part of it
	run -0 --separate-stderr ptt-critical --from=30us --to=80us "$BATS_TEST_TMPDIR/barge.txt"
	[ -z "$stderr" ]
	head_ok 0.050 0.030 0.080 'thread 13 (13)' 0.045 0.015 0.005 0.000 0.000 0.000
	[[ "$output" != *"the window asked ends"* ]]
	[ "$(obj_row 0x100)" = "mutex 0.035 0.030 0.005 0.045 1" ]
	[ "$(thr_rows)" = "12:0.040 13:0.005" ]
	run -0 --separate-stderr ptt-critical -F --from=30us --to=80us "$BATS_TEST_TMPDIR/barge.txt"
	[ "$(folded_sum)" -eq 50000 ]
	# a window ending while 13 still waits (74): the path ends where 12 ends, at 72
	run -0 --separate-stderr ptt-critical --to=74us "$BATS_TEST_TMPDIR/barge.txt"
	head_ok 0.072 0.000 0.072 'thread 12 (12)' 0.071 0.046 0.000 0.000 0.001 0.000
	[ "${lines[2]}" = "  the window asked ends at 0.074 ms, where every thread was ended or waiting: the path ends where one last ran" ]
	# past the end: an error
	run -1 --separate-stderr ptt-critical --from=100us "$BATS_TEST_TMPDIR/barge.txt"
	[ -z "$output" ]
	[ "$stderr" = "ptt-critical: the window starts after the trace ends (0.090 ms)" ]
	# --thread 11: 11 11-50 (L held 20-40), its start 10-11, 10 0-10
	run -0 --separate-stderr ptt-critical --thread=11 "$BATS_TEST_TMPDIR/barge.txt"
	[ -z "$stderr" ]
	head_ok 0.050 0.000 0.050 'thread 11 (11)' 0.049 0.029 0.000 0.000 0.001 0.000
	[ "$(obj_row 0x100)" = "mutex 0.020 0.020 0.000 0.045 1" ]
	run -1 --separate-stderr ptt-critical -t 99 "$BATS_TEST_TMPDIR/barge.txt"
	[ "$stderr" = "ptt-critical: no thread 99 in the trace" ]
	run -2 --separate-stderr ptt-critical -t x "$BATS_TEST_TMPDIR/barge.txt"
	[ -z "$output" ]
	[[ "$stderr" == "ptt-critical: --thread: not a number: 'x'"* ]]
}

# the report's unknown figure, in ns (rounded to the us printed)
unknown_ns() { awk '/^  unknown / { printf "%.0f\n", $2 * 1e6 }' <<<"$output"; }

@test "recorded with -d while the recorder is stopped: events lost, the path's unknown time said, exit 1" {
	# as 10-ptt-record's discard test: the recorder stopped from before the first worker until the
	# program has exited, 4 threads x 20000 rounds into 4k rings: events must be lost
	record_stopped 20000
	wait "$rec"
	run -1 --separate-stderr ptt-critical "$BATS_TEST_TMPDIR/t.ptt"
	[ -z "$stderr" ]
	[[ "${lines[0]}" == "loss: "*" events known lost, in "*" stretch"* ]]
	[[ "$output" == *$'\n''  check: its stretches cover the window end to end, each once'$'\n'* ]]
	[ "$(unknown_ns)" -gt 0 ]
	# the folded lines add up to the path, their unknown time the report's
	run -1 --separate-stderr ptt-critical -F "$BATS_TEST_TMPDIR/t.ptt"
	[ -z "$stderr" ]
	[ "$(grep -c '^\[unknown\] [1-9]' <<<"$output")" -eq 1 ]
	run -1 --separate-stderr ptt-critical --what-if=hot_lock:-50% "$BATS_TEST_TMPDIR/t.ptt"
	[ -z "$stderr" ]
	[[ "${lines[-1]}" == "predicted: "* ]]
}

@test "a flight snapshot: each thread's time before its history begins is unknown, not running" {
	record_flight() {
		ptt-record -q --flight=64k -o "$BATS_TEST_TMPDIR/f.ptt" -- "$EXAMPLES/contention" -t 4 -n 20000 -u 0 \
			>/dev/null 2>&1 3>&-
	}
	record_flight
	run -0 ptt-dump --info "$BATS_TEST_TMPDIR/f.ptt"
	# the workers' histories were cut (overwritten before): the path through one of them is mostly unknown
	grep -q 'flight_thread .* cut' <<<"$(ptt-dump "$BATS_TEST_TMPDIR/f.ptt" | grep '^#')" || skip "no worker's history was cut"
	run -1 --separate-stderr ptt-critical "$BATS_TEST_TMPDIR/f.ptt"
	[ -z "$stderr" ]
	[[ "$output" == *"flight recording: overwritten before"* ]]
	[[ "$output" == *$'\n''  check: its stretches cover the window end to end, each once'$'\n'* ]]
	len=$(awk '/^critical path:/ { printf "%.0f\n", $3 * 1e6 }' <<<"$output")
	# the path ends where main ends, after joining the workers: all but their last events is unknown
	[ "$(unknown_ns)" -gt $((len / 2)) ] || { echo "unknown $(unknown_ns) of $len"; return 1; }
	run -1 --separate-stderr ptt-critical -F "$BATS_TEST_TMPDIR/f.ptt"
	[ "$(folded_sum)" -ge $((len - 1000)) ]
	[ "$(folded_sum)" -le $((len + 1000)) ]
}

@test "memory is bounded: a thread taking its own lock 4 times as often needs no more" {
	[ -x /usr/bin/time ] || skip "no /usr/bin/time"
	! ldd "$(command -v ptt-critical)" | grep -q libasan || skip "ASan build: freed memory is held in quarantine"
	for n in 50000 200000; do
		awk -v n=$n 'BEGIN { print "# ptt-trace 1"; print "0.000000000 10 10 pthread process_begin ppid=1 cmd=\"x\""
			for (i = 0; i < n; i++) {
				printf "0.%09d 10 10 pthread mutex_lock mutex=0x100 ret=0\n", 10 * i + 1
				printf "0.%09d 10 10 pthread mutex_unlock mutex=0x100 ret=0\n", 10 * i + 5 } }' >"$BATS_TEST_TMPDIR/loop$n.txt"
		/usr/bin/time -f %M -o "$BATS_TEST_TMPDIR/rss$n" ptt-critical "$BATS_TEST_TMPDIR/loop$n.txt" >/dev/null
	done
	# one node of the path per release had been kept (the object's last release held the one before):
	# 8 MiB at 100000 events, 24 MiB at 400000
	small=$(cat "$BATS_TEST_TMPDIR/rss50000") big=$(cat "$BATS_TEST_TMPDIR/rss200000")
	[ "$big" -lt $((small + 2048)) ] || { echo "peak RSS $small KiB at 100000 events, $big KiB at 400000"; return 1; }
}

@test "memory is bounded by what paths share, not by the path's length: 4 times the hand-offs on the path need no more" {
	[ -x /usr/bin/time ] || skip "no /usr/bin/time"
	! ldd "$(command -v ptt-critical)" | grep -q libasan || skip "ASan build: freed memory is held in quarantine"
	# threads 11 and 12 hand one mutex to each other N times: every take a hand-off on the path
	for n in 50000 200000; do
		awk -v n=$n 'function ev(ns, tid, what) { printf "0.%09d 10 %d pthread %s\n", ns, tid, what }
		BEGIN { print "# ptt-trace 1"; print "0.000000000 10 10 pthread process_begin ppid=1 cmd=\"x\""
			ev(100, 10, "thread_create handle=0x11 start=0x2 child=11 ret=0"); ev(101, 11, "thread_begin handle=0x11 start=0x2 parent=10")
			ev(102, 10, "thread_create handle=0x12 start=0x2 child=12 ret=0"); ev(103, 12, "thread_begin handle=0x12 start=0x2 parent=10")
			ev(104, 10, "thread_end retval=0x0 how=0"); ev(900, 11, "mutex_lock mutex=0x100 ret=0")
			for (i = 0; i < n; i++) { b = 1000 + 20 * i
				ev(b + 1, 12, "mutex_lock_req mutex=0x100"); ev(b + 5, 11, "mutex_unlock mutex=0x100 ret=0")
				ev(b + 6, 12, "mutex_lock mutex=0x100 ret=0"); ev(b + 7, 11, "mutex_lock_req mutex=0x100")
				ev(b + 10, 12, "mutex_unlock mutex=0x100 ret=0"); ev(b + 11, 11, "mutex_lock mutex=0x100 ret=0") }
			b = 1000 + 20 * n; ev(b, 11, "mutex_unlock mutex=0x100 ret=0"); ev(b + 1, 11, "thread_end retval=0x0 how=0")
			ev(b + 2, 12, "thread_end retval=0x0 how=0") }' >"$BATS_TEST_TMPDIR/pp$n.txt"
		/usr/bin/time -f %M -o "$BATS_TEST_TMPDIR/rss$n" ptt-critical "$BATS_TEST_TMPDIR/pp$n.txt" >"$BATS_TEST_TMPDIR/out$n"
		# the same report with every stretch kept (PTT_DEBUG lists them): folding changes no figure
		PTT_DEBUG=1 ptt-critical "$BATS_TEST_TMPDIR/pp$n.txt" >"$BATS_TEST_TMPDIR/keep$n" 2>/dev/null
		diff "$BATS_TEST_TMPDIR/keep$n" "$BATS_TEST_TMPDIR/out$n"
	done
	grep -q '^  check: its stretches cover the window end to end, each once$' "$BATS_TEST_TMPDIR/out200000"
	grep -q '^  waiting for a hand-off *0.400 ms' "$BATS_TEST_TMPDIR/out200000"
	# kept, the path's 400 000 stretches took 37 MiB more than its 100 000
	small=$(cat "$BATS_TEST_TMPDIR/rss50000") big=$(cat "$BATS_TEST_TMPDIR/rss200000")
	[ "$big" -lt $((small + 4096)) ] || { echo "peak RSS $small KiB at 100000 hand-offs, $big KiB at 400000"; return 1; }
}

@test "a window before the trace's first event is an error with one line, as one after its end" {
	ptt-record -q -o "$BATS_TEST_TMPDIR/t.ptt" -- "$EXAMPLES/prodcons" -n 200 >/dev/null
	first=$(ptt-dump -n "$BATS_TEST_TMPDIR/t.ptt" | awk 'NR == 1 { printf "%.3f", $1 * 1e3 }')
	run -1 --separate-stderr ptt-critical --to=1ns "$BATS_TEST_TMPDIR/t.ptt"
	[ "$stderr" = "ptt-critical: the window ends before the trace's first event ($first ms)" ]
	run -1 --separate-stderr ptt-critical --from=12s --to=13s "$BATS_TEST_TMPDIR/t.ptt"
	[[ "$stderr" == "ptt-critical: the window starts after the trace ends ("*" ms)" ]]
	[ -z "$output" ]
}

@test "read once: the program's lock wrappers learnt as the trace is read, a pipe the same as the file" {
	# wrapped_locks takes stats_lock through my_lock/my_unlock: the wrapper is learnt from the whole trace
	# before any site is named (at the end, the trace read once), the same from a file or a pipe (which
	# is not kept in a temporary file any more)
	record "$EXAMPLES/wrapped_locks"
	run -0 --separate-stderr ptt-critical --folded "$BATS_TEST_TMPDIR/t.ptt"
	[ -z "$stderr" ]
	file=$output
	run -0 --separate-stderr bash -c 'cat "$1" | ptt-critical --folded' _ "$BATS_TEST_TMPDIR/t.ptt"
	[ -z "$stderr" ]
	[ "$output" = "$file" ]
	run -0 --separate-stderr bash -c 'cat "$1" | ptt-critical' _ "$BATS_TEST_TMPDIR/t.ptt"
	[ "$output" = "$(ptt-critical "$BATS_TEST_TMPDIR/t.ptt")" ]
	[[ "$output" == *"stats_lock"* ]]
}

@test "the recorder's start, stamped before the program's under load, starts no path: no unknown time before the program" {
	# a loaded machine stamped rec_start 0.6 ms before the program's process_begin: that time was unknown on
	# the path (exit 1 on a clean trace of cp_rust_chain); the path starts at the program's first event
	printf '# ptt-trace 1\n0.000000000 9 9 recorder rec_start child=10 ring_bytes=1024\n0.001000000 10 10 pthread process_begin ppid=9 cmd="x"\n0.002000000 10 10 pthread thread_end retval=0x0 how=0\n' >"$BATS_TEST_TMPDIR/rs.txt"
	run -0 --separate-stderr ptt-critical "$BATS_TEST_TMPDIR/rs.txt"
	[ -z "$stderr" ]
	[ "${lines[0]}" = "critical path: 1.000 ms, from 1.000 to 2.000 ms, ending where x (10) ends" ]
	[[ "$output" == *$'\n  unknown                      0.000 ms   0.0 %\n'* ]]
}

#!/usr/bin/env bats
# ptt-critical --blame (issue 32 item 3): each group's waits, on whose behalf, cascaded along chains
# as wPerf does, and the knots of the wait-for graph; on a hand-written chain whose cascade is worked
# out here (exact: ns), then on the ground-truth examples: the pipeline's slow stage is the bound, the
# pool's idle workers are not.
bats_require_minimum_version 1.5.0
load helpers

# row GROUP: "THREADS LIFE WAITED-FOR KNOT RUNNING OWN UNKNOWN AT-END" of the BLAME table
row() { awk -v g="$1" '/^BLAME/ { on = 1; next } on && /^  \(/ { on = 0 } on && $1 == g { print $2, $3, $4, $5, $6, $7, $8, $9 }' <<<"$output"; }
# fors GROUP: what its waits were for, as printed
fors() { awk -v g="$1" '/^BLAME/ { on = 1; next } on && /^  \(/ { on = 0 } on && $1 == g { for (i = 1; i <= 9; i++) sub(/^[^ ]+ +/, ""); print }' <<<"$output"; }

@test "ptt-critical --blame: a wait for B while B waited for C goes on to C; the hand-off's latency stays on B" {
	# back holds m2 10-100; middle holds m1 from 15 and waits for m2 20-100; client waits for m1 30-125
	# (middle lets it go at 120): client's 95 us are 70 for back (30-100, while middle waited for back),
	# 20 for middle (100-120) and 5 of hand-off latency (120-125), middle's; middle's 80 are back's
	cat >"$BATS_TEST_TMPDIR/c.txt" <<-'E'
	# ptt-trace 1
	0.000000000 10 10 pthread process_begin ppid=1 cmd="x"
	0.000001000 10 10 pthread thread_create handle=0x11 start=0x2 child=11 ret=0
	0.000002000 10 11 pthread thread_begin handle=0x11 start=0x2 parent=10
	0.000003000 10 10 pthread thread_create handle=0x12 start=0x2 child=12 ret=0
	0.000004000 10 12 pthread thread_begin handle=0x12 start=0x2 parent=10
	0.000005000 10 10 pthread thread_create handle=0x13 start=0x2 child=13 ret=0
	0.000006000 10 13 pthread thread_begin handle=0x13 start=0x2 parent=10
	0.000006500 10 11 pthread thread_name target=11 name="client"
	0.000006600 10 12 pthread thread_name target=12 name="middle"
	0.000006700 10 13 pthread thread_name target=13 name="back"
	0.000007000 10 10 pthread thread_end retval=0x0 how=0
	0.000010000 10 13 pthread mutex_lock mutex=0x200 ret=0
	0.000015000 10 12 pthread mutex_lock mutex=0x100 ret=0
	0.000020000 10 12 pthread mutex_lock_req mutex=0x200
	0.000030000 10 11 pthread mutex_lock_req mutex=0x100
	0.000100000 10 13 pthread mutex_unlock mutex=0x200 ret=0
	0.000100000 10 12 pthread mutex_lock mutex=0x200 ret=0
	0.000110000 10 12 pthread mutex_unlock mutex=0x200 ret=0
	0.000120000 10 12 pthread mutex_unlock mutex=0x100 ret=0
	0.000125000 10 11 pthread mutex_lock mutex=0x100 ret=0
	0.000130000 10 11 pthread mutex_unlock mutex=0x100 ret=0
	0.000140000 10 11 pthread thread_end retval=0x0 how=0
	0.000140000 10 12 pthread thread_end retval=0x0 how=0
	0.000140000 10 13 pthread thread_end retval=0x0 how=0
	E
	run -0 --separate-stderr ptt-critical --blame "$BATS_TEST_TMPDIR/c.txt"
	[ -z "$stderr" ]
	[ "$(row client)" = "1 0.138 0.000 - 0.043 0.000 0.000 0.000" ]
	[ "$(fors client)" = "back 0.070 ms (51 %), middle 0.025 ms (18 %)" ]
	[ "$(row middle)" = "1 0.136 0.025 - 0.056 0.000 0.000 0.000" ]
	[ "$(fors middle)" = "back 0.080 ms (59 %)" ]
	[ "$(row back)" = "1 0.134 0.150 1 0.134 0.000 0.000 0.000" ]
	[[ "$output" == *$'\nbound: back, the knot the others\' waits end up on (0.150 ms)'* ]]
	# the knot's line lists its threads by tid
	[[ "$output" == *$'\n  1. 0.150 ms waited for by the others: back (1 knot of 1 thread, running 100.0 % of their life; tid 13)\n'* ]]
	# without the cascade client's wait would all be middle's: the first row is back, waited for most
	[ "$(awk '/^GROUP/ { getline; print $1; exit }' <<<"$output")" = back ]
}

@test "ptt-critical --blame: a timeout is the thread's own time, a wait open at the end is nobody's" {
	cat >"$BATS_TEST_TMPDIR/o.txt" <<-'E'
	# ptt-trace 1
	0.000000000 10 10 pthread process_begin ppid=1 cmd="x"
	0.000001000 10 10 pthread thread_create handle=0x11 start=0x2 child=11 ret=0
	0.000002000 10 11 pthread thread_begin handle=0x11 start=0x2 parent=10
	0.000003000 10 11 pthread thread_name target=11 name="sleeper"
	0.000004000 10 10 pthread thread_create handle=0x12 start=0x2 child=12 ret=0
	0.000005000 10 12 pthread thread_begin handle=0x12 start=0x2 parent=10
	0.000006000 10 12 pthread thread_name target=12 name="other"
	0.000010000 10 11 pthread mutex_lock mutex=0x100 ret=0
	0.000020000 10 11 pthread cond_timedwait_req cond=0x300 mutex=0x100
	0.000050000 10 11 pthread cond_wait cond=0x300 mutex=0x100 ret=110
	0.000060000 10 11 pthread cond_wait_req cond=0x300 mutex=0x100
	0.000100000 10 10 pthread mutex_lock_req mutex=0x400
	0.000200000 10 12 pthread thread_end retval=0x0 how=0
	E
	run -0 --separate-stderr ptt-critical --blame "$BATS_TEST_TMPDIR/o.txt"
	[ -z "$stderr" ]
	# sleeper: 30 us timed out (own), 140 us still waiting at the end (200 us), blamed on nobody
	[ "$(row sleeper | cut -d' ' -f1-3,5-)" = "1 0.198 0.000 0.028 0.030 0.000 0.140" ]
	[ "$(row x | cut -d' ' -f1-3,5-)" = "1 0.200 0.000 0.100 0.000 0.000 0.100" ]
	[[ "$output" == *$'\nbound: none named'* ]]
}

@test "ptt-critical --blame on cp_pipeline: the slow stage is the knot the others' waits end on" {
	record "$EXAMPLES/cp_pipeline"
	run -0 --separate-stderr ptt-critical --blame "$BATS_TEST_TMPDIR/t.ptt"
	[ -z "$stderr" ]
	[[ "$output" == *$'\nbound: pipe-stage, the knot the others\' waits end up on ('* ]]
	[ "$(row pipe-stage | cut -d' ' -f4)" = 1 ]
	# the consumer waits for the stage, in no knot; main only joins (cascaded: its join of the stage is the
	# stage's): idle (its start-up on a busy machine may take it past 1 % of its life: then in no knot)
	[ "$(row pipe-consumer | cut -d' ' -f4)" = - ]
	[[ "$(row cp_pipeline | cut -d' ' -f4)" == @(idle|-) ]]
	[[ "$(fors pipe-consumer)" == "pipe-stage "* ]]
	[[ "$(fors cp_pipeline)" == "pipe-stage "* ]]
}

@test "ptt-critical --blame on cp_pool: idle workers wait for main, and are not the knot" {
	record "$EXAMPLES/cp_pool"
	run -0 --separate-stderr ptt-critical --blame "$BATS_TEST_TMPDIR/t.ptt"
	[ -z "$stderr" ]
	[[ "$output" == *$'\nbound: cp_pool, the knot the others\' waits end up on ('* ]]
	[ "$(row pool-N | cut -d' ' -f1,4)" = "4 -" ]
	[[ "$(fors pool-N)" == "cp_pool "* ]]
	[ "$(awk '/^KNOTS/ { on = 1; next } on && /^  [0-9]+\./ { n++ } END { print n }' <<<"$output")" = 1 ]
}

@test "ptt-critical --blame: not with --what-if, --folded or --thread (exit 2)" {
	for o in --what-if=x:-50% --folded --thread=1; do
		run -2 --separate-stderr ptt-critical --blame "$o" /dev/null
		[ -z "$output" ]
		[[ "$stderr" == "ptt-critical: --blame is a view of its own"* ]]
	done
}

@test "ptt-critical --blame: a knot of idle threads (a timer the others wait for) is listed, not named as the bound" {
	# the worker waits 989 us for the timer's post; the timer spends its life in a timed wait (7 us running
	# of 993: idle), so its knot is what the worker's wait ends on, but it bounds no work
	cat >"$BATS_TEST_TMPDIR/t.txt" <<-'E'
	# ptt-trace 1
	0.000000000 10 10 pthread process_begin ppid=1 cmd="x"
	0.000001000 10 10 pthread thread_create handle=0x11 start=0x2 child=11 ret=0
	0.000002000 10 11 pthread thread_begin handle=0x11 start=0x2 parent=10
	0.000003000 10 11 pthread thread_name target=11 name="worker"
	0.000004000 10 10 pthread thread_create handle=0x12 start=0x2 child=12 ret=0
	0.000005000 10 12 pthread thread_begin handle=0x12 start=0x2 parent=10
	0.000006000 10 12 pthread thread_name target=12 name="timer"
	0.000007000 10 10 pthread thread_end retval=0x0 how=0
	0.000008000 10 12 pthread mutex_lock mutex=0x500 ret=0
	0.000009000 10 12 pthread cond_timedwait_req cond=0x600 mutex=0x500
	0.000010000 10 11 pthread sem_wait_req sem=0x300
	0.000995000 10 12 pthread cond_wait cond=0x600 mutex=0x500 ret=110
	0.000996000 10 12 pthread mutex_unlock mutex=0x500 ret=0
	0.000997000 10 12 pthread sem_post sem=0x300 ret=0
	0.000998000 10 12 pthread thread_end retval=0x0 how=0
	0.000999000 10 11 pthread sem_wait sem=0x300 ret=0
	0.005000000 10 11 pthread thread_end retval=0x0 how=0
	E
	run -0 --separate-stderr ptt-critical --blame "$BATS_TEST_TMPDIR/t.txt"
	[ -z "$stderr" ]
	[ "$(row timer | cut -d" " -f4,5,6)" = "1 0.007 0.986" ]
	[[ "$output" == *$'\n  1. 0.989 ms waited for by the others: timer '* ]]
	[[ "$output" == *$'\n  (knot 1: idle threads, running under 1 % of their life'* ]]
	[[ "$output" == *$'\nbound: none named: the knots the others\' waits end up on are idle threads'* ]]
}

@test "ptt-critical --blame: threads with no name are grouped by start routine; a group's threads waiting for each other in turn" {
	# 11, 12 and 13 (start routine 0x2, no name) take a lock in turn, each waiting 40 us of its ~995 us for
	# the one before (4 %: under the trim, no knot); 14 (start routine 0x3) never waits. The group 0x2()
	# waited 120 us for its own threads: WAITED FOR counts them (not 0 beside its own waits); the working
	# threads' section tells it, with where (12's wait at 0x5, the others' at no known site)
	cat >"$BATS_TEST_TMPDIR/r.txt" <<-'E'
	# ptt-trace 1
	0.000000000 10 10 pthread process_begin ppid=1 cmd="x"
	0.000001000 10 10 pthread thread_create handle=0x11 start=0x2 child=11 ret=0
	0.000002000 10 11 pthread thread_begin handle=0x11 start=0x2 parent=10
	0.000003000 10 10 pthread thread_create handle=0x12 start=0x2 child=12 ret=0
	0.000004000 10 12 pthread thread_begin handle=0x12 start=0x2 parent=10
	0.000005000 10 10 pthread thread_create handle=0x13 start=0x2 child=13 ret=0
	0.000006000 10 13 pthread thread_begin handle=0x13 start=0x2 parent=10
	0.000007000 10 10 pthread thread_create handle=0x14 start=0x3 child=14 ret=0
	0.000008000 10 14 pthread thread_begin handle=0x14 start=0x3 parent=10
	0.000009000 10 10 pthread thread_end retval=0x0 how=0
	0.000100000 10 11 pthread mutex_lock mutex=0x100 ret=0
	0.000110000 10 12 pthread mutex_lock_req mutex=0x100 site=0x5
	0.000150000 10 11 pthread mutex_unlock mutex=0x100 ret=0
	0.000150000 10 12 pthread mutex_lock mutex=0x100 ret=0
	0.000160000 10 13 pthread mutex_lock_req mutex=0x100
	0.000200000 10 12 pthread mutex_unlock mutex=0x100 ret=0
	0.000200000 10 13 pthread mutex_lock mutex=0x100 ret=0
	0.000210000 10 11 pthread mutex_lock_req mutex=0x100
	0.000250000 10 13 pthread mutex_unlock mutex=0x100 ret=0
	0.000250000 10 11 pthread mutex_lock mutex=0x100 ret=0
	0.000260000 10 11 pthread mutex_unlock mutex=0x100 ret=0
	0.001000000 10 11 pthread thread_end retval=0x0 how=0
	0.001000000 10 12 pthread thread_end retval=0x0 how=0
	0.001000000 10 13 pthread thread_end retval=0x0 how=0
	0.001000000 10 14 pthread thread_end retval=0x0 how=0
	E
	run -0 --separate-stderr ptt-critical --blame "$BATS_TEST_TMPDIR/r.txt"
	[ -z "$stderr" ]
	[ "$(row '0x2()')" = "3 2.988 0.120 - 2.868 0.000 0.000 0.000" ]
	[ "$(fors '0x2()')" = "its own group 0.120 ms (4 %)" ]
	[ "$(row '0x3()')" = "1 0.992 0.000 - 0.992 0.000 0.000 0.000" ]
	[[ "$output" != *"thread N"* ]]
	[[ "$output" == *$'\n  (none: no thread that works waits for another beyond 10 % of its life)\n'* ]]
	[[ "$output" == *$'\n  0x2(): running or in untraced calls 2.868 ms (96.0 % of its working threads\' life), waited 0.120 ms (4.0 %) for its own group 0.120 ms\n         0.080 ms waited at an unknown site\n         0.040 ms waited at 0x5\n  (2 more groups of working threads that waited for no other thread)\n'* ]]
	[[ "$output" == *$'\nbound: none named: no thread that works waits for another thread beyond 10 % of its life;'* ]]
	[[ "$output" == *$'\nthe busiest group, 0x2(), running 96.0 % of its working threads\' life, waited 4.0 % of it\n'* ]]
}

@test "ptt-critical --blame: a thread with no name, start routine or command is \"thread N\"" {
	# 11 begins before the trace (no thread_begin, no create): nothing names it
	cat >"$BATS_TEST_TMPDIR/n.txt" <<-'E'
	# ptt-trace 1
	0.000000000 10 10 pthread process_begin ppid=1 cmd="x"
	0.000010000 10 11 pthread mutex_lock mutex=0x100 ret=0
	0.000020000 10 11 pthread mutex_unlock mutex=0x100 ret=0
	0.000100000 10 11 pthread thread_end retval=0x0 how=0
	E
	run -0 --separate-stderr ptt-critical --blame "$BATS_TEST_TMPDIR/n.txt"
	[ -z "$stderr" ]
	[ "$(row 'thread')" = "N 1 0.090 0.000 - 0.090 0.000 0.000" ]
}

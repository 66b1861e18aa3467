#!/usr/bin/env bats
# The one frame cap (PTT_FRAMES_MAX, 1024 holds and waits in force a thread) is never silent:
# past it the oldest are forgotten, and a ptt-filter window whose context was cut by it carries
# a limit event (table 10) that every reader of the window alone reports (it was silent before:
# the window showed the newest 1024 holds as all there was).
bats_require_minimum_version 1.5.0
load helpers

# A window of $1 from 1 ms after its last mutex_lock (the program sleeps 50 ms there), in $2.
window_after_locks() {
	t=$(ptt-dump -n "$1" | awk '$5 == "mutex_lock" { t = $1 } END { print t }')
	ns=$(awk -v t="$t" 'BEGIN { split(t, a, "."); printf "%d", a[1] * 1000000000 + a[2] + 1000000 }')
	ptt-filter --from="${ns}ns" -- "$1" >"$2"
}

@test "a window whose start a thread holds 1100 locks at: its context says the 76 forgotten past the cap" {
	T=$BATS_TEST_TMPDIR
	run -0 --separate-stderr ptt-record -q -o "$T/d.ptt" -- "$EXAMPLES/deep_holds" 1100
	[ "$output" = "held 1100 at once" ]
	# the whole trace: the model forgot 76 (1100 - 1024), said once
	run -0 --separate-stderr ptt-stat "$T/d.ptt"
	[[ "$output" == *"limit: 76 holds and waits in force forgotten: a thread had more than the 1024 kept at once"* ]]
	window_after_locks "$T/d.ptt" "$T/w.ptt" 2>"$T/err"
	grep -q 'note: 76 holds and waits in force forgotten' "$T/err"
	# the window's context: the newest 1024 holds, then the limit event for the 76 it cannot carry
	[ "$(ptt-dump -n "$T/w.ptt" | grep -c ' mutex_lock ')" -eq 1024 ]
	[ "$(ptt-dump -n "$T/w.ptt" | grep -c ' limit table=10 count=76 limit=1024 ')" -eq 1 ]
	# read alone, the window says it like the trace it was cut from
	run -0 --separate-stderr ptt-stat "$T/w.ptt"
	[[ "$output" == *"limit: 76 holds and waits in force forgotten: a thread had more than the 1024 kept at once"* ]]
	run -0 --separate-stderr ptt-deadlock "$T/w.ptt"
	[ "$output" = "no lock-order inversion and no deadlock found" ]
	[[ "$stderr" == *"note: 76 holds and waits in force forgotten"* ]]
}

@test "a window below the cap carries no limit event" {
	T=$BATS_TEST_TMPDIR
	run -0 --separate-stderr ptt-record -q -o "$T/d.ptt" -- "$EXAMPLES/deep_holds" 1000
	window_after_locks "$T/d.ptt" "$T/w.ptt" 2>"$T/err"
	[ ! -s "$T/err" ]
	[ "$(ptt-dump -n "$T/w.ptt" | grep -c ' mutex_lock ')" -eq 1000 ]
	run -0 --separate-stderr ptt-dump -n "$T/w.ptt"
	[[ "$output" != *" limit "* ]]
	[ "$stderr" = "" ]
}

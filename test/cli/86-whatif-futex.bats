#!/usr/bin/env bats
# ptt-critical --what-if on a futex lock (issue 32): Rust's std Mutex, GLib's and InnoDB's locks are futex
# words no event takes or releases.  A thread that wakes the word lets it go; its hold is known from its
# own woken wait's end on the word, or (taken uncontended) from the first waiter's arrival, a lower bound;
# a hold let go with no waiter is not seen.  A hand-written trace (figures exact, ns), then
# examples/cp_rust_chain.
bats_require_minimum_version 1.5.0
load helpers

@test "--what-if on a futex word: holds from a woken wait's end to the wake, or from a waiter's arrival" {
	# 11 holds 0x300 (unseen) until its wake at 50; 12 waits from 20, is woken at 52, wakes it at 80;
	# 13 waits from 30, is woken at 82 and lets it go with nobody waiting (no wake), ends at 110;
	# 10 joins 13 and ends at 112.  Halved: 11's hold from 12's arrival (20-50) 15 -> its wake at 35;
	# 12 resumes at 37 (the latency, 2), its hold (52-80) 14 -> its wake at 51; 13 resumes at 53, runs
	# 28 as recorded (its hold's end is not seen) -> ends at 81; 10 returns at 82, ends at 83
	ctrace fx <<-'E'
	1 10 thread_create handle=0x11 start=0x2 child=11 ret=0
	2 11 thread_begin handle=0x11 start=0x2 parent=10
	3 10 thread_create handle=0x12 start=0x2 child=12 ret=0
	4 12 thread_begin handle=0x12 start=0x2 parent=10
	5 10 thread_create handle=0x13 start=0x2 child=13 ret=0
	6 13 thread_begin handle=0x13 start=0x2 parent=10
	7 10 thread_join_req handle=0x13 target=13
	20 12 futex_wait_req futex=0x300 val=2 op=0 timeout_ns=-1
	30 13 futex_wait_req futex=0x300 val=2 op=0 timeout_ns=-1
	50 11 futex_wake futex=0x300 count=1 op=1 woken=1
	52 12 futex_wait futex=0x300 ret=0
	60 11 thread_end retval=0x0 how=0
	80 12 futex_wake futex=0x300 count=1 op=1 woken=1
	82 13 futex_wait futex=0x300 ret=0
	90 12 thread_end retval=0x0 how=0
	110 13 thread_end retval=0x0 how=0
	111 10 thread_join handle=0x13 target=13 ret=0 retval=0x0
	112 10 thread_end retval=0x0 how=0
	E
	# the path itself: 12's hold (its woken wait's end at 52 to its wake at 80) is 0x300's HELD, said a
	# lower bound; 11's (unseen start) and 13's (no wake) are not
	run -0 --separate-stderr ptt-critical "$BATS_TEST_TMPDIR/fx.txt"
	[ -z "$stderr" ]
	[ "$(awk '$1 == "0x300" { print $2, $3, $5, $6 }' <<<"$output")" = "futex 0.032 0.028 0.004" ]
	[[ "$output" == *$'\n(a futex lock\'s HELD: from a woken wait on it to the wake that let it go, the holds taken after waiting; a hold taken without waiting is not seen: at least that)\n'* ]]
	run -0 --separate-stderr ptt-critical --what-if=0x300:-50% "$BATS_TEST_TMPDIR/fx.txt"
	[ -z "$stderr" ]
	[ "${lines[-2]}" = "  (a futex lock: 1 hold seen from a woken wait's end to the wake, 1 known only from a waiter's arrival, taken before it where no event says: the prediction is at most that shorter)" ]
	[ "${lines[-1]}" = "predicted: 0.083 ms (the run as recorded: 0.112 ms; -25.9 %)" ]
	# not named: no line, the run as recorded
	run -0 --separate-stderr ptt-critical --what-if=0x400:-50% "$BATS_TEST_TMPDIR/fx.txt"
	[[ "$output" != *"(a futex lock: "* ]]
	[ "${lines[-1]}" = "predicted: 0.112 ms (the run as recorded: 0.112 ms; +0.0 %)" ]
	# a wait that timed out is no hold: 12's wait ends with ETIMEDOUT (110), its wake at 80 is then
	# a hold known from 13's arrival (30-80) only
	sed -i 's/^0.000052000 10 12 pthread futex_wait futex=0x300 ret=0$/0.000052000 10 12 pthread futex_wait futex=0x300 ret=110/' "$BATS_TEST_TMPDIR/fx.txt"
	run -0 --separate-stderr ptt-critical --what-if=0x300:-50% "$BATS_TEST_TMPDIR/fx.txt"
	[ "${lines[-2]}" = "  (a futex lock: 0 holds seen from a woken wait's end to the wake, 2 known only from a waiter's arrival, taken before it where no event says: the prediction is at most that shorter)" ]
}

@test "cp_rust_chain: a Rust std Mutex's holds are shortened, each round's two waked holds counted" {
	[ -x "$EXAMPLES/cp_rust_chain" ] || skip "cp_rust_chain not built (no rustc)"
	record "$EXAMPLES/cp_rust_chain" -r 2
	run -0 --separate-stderr ptt-critical --what-if=cp_rust_chain::CHAIN_LOCK:-50% "$BATS_TEST_TMPDIR/t.ptt"
	# each round: rust-B's and rust-C's holds from their woken waits to their wakes (a woken Rust waiter
	# marks the word contended, so its unlock wakes even with nobody left); rust-A's, taken uncontended,
	# from rust-B's arrival
	[[ "${lines[-2]}" == "  (a futex lock: 4 holds seen from a woken wait's end to the wake, 2 known only from a waiter's arrival,"* ]]
	# the ground truth: 2 x 70 ms, 2 x 40 with the holds halved (-42.9 %); rust-A's hold is known from
	# rust-B's arrival only, so a little less
	pct=$(sed -n 's/^predicted: .*; \(-[0-9.]*\) %)$/\1/p' <<<"$output")
	[ -n "$pct" ]
	awk -v p="$pct" 'BEGIN { exit !(p < -25 && p > -48) }'
	# the path: the lock first, its holds after a wait (rust-B's and rust-C's, 40 of each round's 70 ms) as
	# HELD, not "holding no lock"
	run -0 --separate-stderr ptt-critical "$BATS_TEST_TMPDIR/t.ptt"
	[ "$(awk '/^OBJECT/ { getline; print $1, $2; exit }' <<<"$output")" = "cp_rust_chain::CHAIN_LOCK futex" ]
	# (at least the 80 ms asked of those holds, less 10 %; a loaded machine lengthens holds, never its
	# running time on the path)
	held=$(awk '$1 == "cp_rust_chain::CHAIN_LOCK" { print int($5) }' <<<"$output")
	running=$(awk '$1 == "running" { print int($2); exit }' <<<"$output")
	[ "$held" -ge 72 ]
	[ "$held" -le "$running" ]
	# the line on the holds' work is said where the locks' part of the hand-offs is under 1 % of the path: this
	# program's is (0.4 %), unless a loaded machine makes its wake-ups slow (2.6 % seen, 1.7 ms of it past 1 ms)
	share=$(awk '$1 == "critical" && $2 == "path:" { len = $3 } $1 == "waiting" && $4 == "hand-off" { h = $5 }
		/wake-ups past 1 ms:/ { for (i = 1; i <= NF; i++) if ($i == "ms:") s = $(i + 1) }
		END { printf "%.2f\n", 100 * (h - s) / len }' <<<"$output")
	if awk -v p="$share" 'BEGIN { exit !(p < 1) }'; then
		[[ "$output" == *"of the path is that work done holding cp_rust_chain::CHAIN_LOCK: shorter holds would shorten it, a faster lock would not)"* ]]
	else
		[[ "$output" != *"a faster lock would not)"* ]]
	fi
}

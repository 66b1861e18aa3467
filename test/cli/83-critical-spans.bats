#!/usr/bin/env bats
# ptt-critical --spans (issue 32 item 3): each span's critical path, from its end back to its begin (a
# request begun on one thread and ended on another included), aggregated per kind; on cp_spans, whose
# spans' critical time per object is known by construction (CP_TRUTH=1).  The machine is shared: a
# thread kept off its processor past the end of a timed spin lengthens that span (ptt sees it running),
# so lengths are checked from below, and medians (which a few such spans do not move) within a bucket.
bats_require_minimum_version 1.5.0
load helpers

# kind_line KIND: the "SPANS KIND: ..." line; obj KIND NAME: "CLASS ON-PATHS % p50 p99 HELD WAITED"
kind_line() { grep "^SPANS $1: " <<<"$output"; }
obj() { awk -v k="$1" -v o="$2" '/^SPANS / { on = $2 == k ":" } on && $1 == o { print $2, $3, $4, $5, $6, $7, $8 }' <<<"$output"; }
# near GOT WANT: GOT within 4 % (the histograms' bucket) + 0.2 ms of WANT, never below WANT less 4 %
near() { awk -v g="$1" -v w="$2" 'BEGIN { exit !(g >= w * 0.96 && g <= w * 1.04 + 0.2) }' || { echo "got $1, want $2"; return 1; }; }
# truth KEY WHAT: the program's ground truth (ms)
truth() { awk -v k="$1" -v w="$2" '$2 == k && $3 == w { print $4 }' "$BATS_TEST_TMPDIR/truth.txt"; }

@test "ptt-critical --spans on cp_spans: per kind, its spans' count, length and critical time per object" {
	[ -x "$EXAMPLES/cp_spans" ] || skip "cp_spans not built"
	CP_TRUTH=1 ptt-record -q -o "$BATS_TEST_TMPDIR/t.ptt" -- "$EXAMPLES/cp_spans" 2 3 1 20 2>"$BATS_TEST_TMPDIR/truth.txt"
	[ "$(truth spans request)" = 20.000 ]
	run -0 --separate-stderr ptt-critical --spans "$BATS_TEST_TMPDIR/t.ptt"
	[ -z "$stderr" ]
	[ "$(kind_line request)" = "SPANS request: 20 ended" ]
	[ "$(kind_line flush)" = "SPANS flush: 20 ended" ]
	# request: begun on main, ended on the worker; db_lock held d on each one's path (p50), by the worker
	set -- $(obj request db_lock)
	[ "$1" = mutex ]
	near "$4" "$(truth span-on-path request:db_lock)"
	[ "$7" = 0.000 ]
	[[ "$output" == *" in worker (db_lock)"* ]]
	# ... the begin's thread is on the path: main's hold of req_lock, where it queued the request
	[[ "$output" == *" in main (req_lock)"* ]]
	# flush: on main alone, log_lock all of it
	set -- $(obj flush log_lock)
	near "$4" "$(truth span-on-path flush:log_lock)"
	awk -v p="$3" 'BEGIN { exit !(p >= 99) }'
	# lengths: p50 at least the hand-computed length (less a bucket); total = count x length at least
	p50=$(grep -A1 "^SPANS request:" <<<"$output" | sed -n 's/.* p50 \([0-9.]*\) ms.*/\1/p')
	awk -v g="$p50" -v w="$(truth span-length request)" 'BEGIN { exit !(g >= w * 0.96) }'
	p50=$(grep -A1 "^SPANS flush:" <<<"$output" | sed -n 's/.* p50 \([0-9.]*\) ms.*/\1/p')
	near "$p50" "$(truth span-length flush)"
	# every span's path covers it: no unknown time
	[ "$(grep -c 'unknown 0.0 %$' <<<"$output")" = 2 ]
}

@test "ptt-critical --spans: an end without a begin, a span still open, none at all" {
	cat >"$BATS_TEST_TMPDIR/s.txt" <<-'E'
	# ptt-trace 1
	# type 1024 ptt.span.req user 1 program key:u64,end:u32
	0.000000000 10 10 pthread process_begin ppid=1 cmd="x"
	0.000010000 10 10 program ptt.span.req key=1 end=0
	0.000020000 10 10 pthread mutex_lock mutex=0x100 ret=0
	0.000050000 10 10 pthread mutex_unlock mutex=0x100 ret=0
	0.000060000 10 10 program ptt.span.req key=1 end=1
	0.000070000 10 10 program ptt.span.req key=2 end=1
	0.000080000 10 10 program ptt.span.req key=3 end=0
	0.000090000 10 10 pthread thread_end retval=0x0 how=0
	E
	run -0 --separate-stderr ptt-critical --spans "$BATS_TEST_TMPDIR/s.txt"
	[ -z "$stderr" ]
	[ "$(kind_line req)" = "SPANS req: 1 ended, 1 still open where the trace ends (left out)" ]
	[[ "$output" == *$'\n  length      total 0.050 ms, p50 0.050 ms, p99 0.050 ms\n'* ]]
	[ "$(obj req 0x100)" = "mutex 0.030 60.0 0.030 0.030 0.030 0.000" ]
	[[ "$output" == *$'\n1 span end without a begin in the trace (left out)\n'* ]]
	printf '# ptt-trace 1\n0.000000000 10 10 pthread process_begin ppid=1 cmd="x"\n' >"$BATS_TEST_TMPDIR/n.txt"
	run -0 --separate-stderr ptt-critical --spans "$BATS_TEST_TMPDIR/n.txt"
	[ "$output" = "spans: none in the trace (ptt_span_begin and ptt_span_end, ptt(3))" ]
	run -2 --separate-stderr ptt-critical --spans --blame "$BATS_TEST_TMPDIR/n.txt"
	[[ "$stderr" == "ptt-critical: --blame is a view of its own"* ]]
}

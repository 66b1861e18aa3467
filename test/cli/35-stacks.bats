#!/usr/bin/env bats
# Stacks (issue 19): the runtime records the caller's stack on blocking paths
# (ptt-record --stacks), the tools name the first frame past the lock layer
# (built-in wrappers and --skip-frames), ptt-stat --folded writes flame-graph
# input.  wrapped_locks takes every lock through my_lock(): its 3 waits are in
# flush_log (wrapped_locks.c:67), its holds in update_stats (:52); with -o,
# transfer_ab takes lock_a then lock_b (:107, :108), transfer_ba the reverse.
bats_require_minimum_version 1.5.0
load helpers

setup() {
	T="$BATS_TEST_TMPDIR/t.ptt"
}

rec() { # MODE ARGS...: wrapped_locks under --stacks=MODE into $T
	local mode=$1
	shift
	ptt-record -q --stacks="$mode" -o "$T" -- "$EXAMPLES/wrapped_locks" "$@" >"$BATS_TEST_TMPDIR/out.txt"
}

@test "ptt-record --stacks: a bad value is a usage error" {
	run -2 --separate-stderr ptt-record --stacks=some -- true
	[ -z "$output" ]
	[[ "$stderr" == *"ptt-record: --stacks: none, blocking or all: 'some'"* ]]
}

@test "blocking (the default): each wait has its stack, written once; uncontended acquisitions none" {
	ptt-record -q -o "$T" -- "$EXAMPLES/wrapped_locks" >/dev/null
	run -0 --separate-stderr ptt-dump -n "$T"
	[ -z "$stderr" ]
	# a stack record right before each of the 3 requests of stats_lock, none before its 3 free acquisitions
	before_req=$(awk '$5 == "stack" { s[$3] = 1; next } $5 == "mutex_lock_req" && s[$3] { n++ } { if ($5 != "object_name") s[$3] = 0 } END { print n + 0 }' <<<"$output")
	[ "$before_req" -eq 3 ]
	before_free=$(awk '$5 == "stack" { s[$3] = 1; next } $5 == "mutex_lock" && s[$3] { n++ } { if ($5 != "object_name") s[$3] = 0 } END { print n + 0 }' <<<"$output")
	[ "$before_free" -eq 0 ]
	# flush_log's waits share one stack: its frames are written once
	ids=$(awk '$5 == "stack_frames" && $7 == "at=0" { print $6 }' <<<"$output" | sort | uniq -d)
	[ -z "$ids" ]
	run -0 ptt-dump "$T"
	grep -qE ' stack_frames stack=[0-9]+ at=0 a=0x[0-9a-f]+ b=0x[0-9a-f]+ ' <<<"$output"
}

@test "none: no stack events, and the sites stay the pthread call sites" {
	rec none
	run -0 --separate-stderr ptt-dump -n "$T"
	run ! grep -qE ' stack(_frames)? ' <<<"$output"
	run -0 --separate-stderr ptt-stat -S 3 --skip-frames='^my_' "$T"
	[ -z "$stderr" ]
	stat=$output
	run ! grep -q 'flush_log' <<<"$stat"
	run ! grep -q 'WAITS BY SITE' <<<"$stat"
}

@test "ptt-stat: the waits are named past the lock layer; --skip-frames adds the program's own" {
	rec blocking
	run -0 --separate-stderr ptt-stat -S 3 "$T"
	[ -z "$stderr" ]
	# the program's wrapper found from the trace (my_lock's locks released in my_unlock, both called by
	# the same functions): the waits at its callers, said under the tables
	grep -qE '^  site 1 +3 +3 .* flush_log\+0x[0-9a-f]+ \(wrapped_locks\) at wrapped_locks.c:67$' <<<"$output"
	grep -q "^wrappers: my_lock/my_unlock taken as the program's lock wrapper" <<<"$output"
	# the user's exemption (--skip-frames='!REGEX'): the wrapper is the first frame past pthread, for
	# waits and free takes alike
	run -0 --separate-stderr ptt-stat -S 3 --skip-frames='!^my_' "$T"
	grep -qE '^  site 1 +6 +3 .* my_lock\+0x[0-9a-f]+ \(wrapped_locks\) at wrapped_locks.c:31$' <<<"$output"
	run ! grep -q '^wrappers:' <<<"$output"
	run -0 --separate-stderr ptt-stat -S 3 --skip-frames='^my_(lock|unlock)$' "$T"
	[ -z "$stderr" ]
	grep -qE '^  site 1 +3 +3 .* flush_log\+0x[0-9a-f]+ \(wrapped_locks\) at wrapped_locks.c:67$' <<<"$output"
	# where the program waited, over every object
	grep -qE '^ +3 +[0-9.]+ +[0-9.]+ +[0-9.]+  stats_lock +flush_log\+0x[0-9a-f]+ \(wrapped_locks\) at wrapped_locks.c:67$' <<<"$output"
	# the uncontended holds have no stack: their pthread call site
	grep -qE '^  site 2 +3 +0 .* my_lock\+0x[0-9a-f]+ \(wrapped_locks\) at wrapped_locks.c:31$' <<<"$output"
	run -2 --separate-stderr ptt-stat --skip-frames='my_(' "$T"
	[ -z "$output" ]
	[[ "$stderr" == "ptt-stat: --skip-frames: "*"'my_('"*"Try 'ptt-stat --help'"* ]]
}

@test "the text form keeps the stacks: it reads back byte for byte, and the tools read it the same" {
	rec all
	ptt-dump "$T" >"$BATS_TEST_TMPDIR/a.txt"
	ptt-dump "$BATS_TEST_TMPDIR/a.txt" >"$BATS_TEST_TMPDIR/b.txt"
	cmp "$BATS_TEST_TMPDIR/a.txt" "$BATS_TEST_TMPDIR/b.txt"
	grep -q ' stack_frames ' "$BATS_TEST_TMPDIR/a.txt"
	ptt-stat -S 3 --skip-frames='^my_' "$T" >"$BATS_TEST_TMPDIR/bin.stat"
	ptt-stat -S 3 --skip-frames='^my_' "$BATS_TEST_TMPDIR/a.txt" >"$BATS_TEST_TMPDIR/txt.stat"
	diff "$BATS_TEST_TMPDIR/bin.stat" "$BATS_TEST_TMPDIR/txt.stat"
	grep -q 'flush_log' "$BATS_TEST_TMPDIR/txt.stat"
}

@test "ptt-stat --folded: root first, the object as the leaf, ns; wait and hold" {
	rec all
	run -0 --separate-stderr ptt-stat --folded=wait "$T"
	[ -z "$stderr" ]
	bad=$(grep -cvE '^[^; ][^;]*(;[^;]+)*;\[[a-z]+ [^] ]+\] [0-9]+$' <<<"$output" || true)
	[ "$bad" -eq 0 ]
	# the 3 waits of at least 20 ms each, under flush_log's whole stack
	line=$(grep -E '(^|;)start_thread;logger_main;flush_log;my_lock;\[mutex stats_lock\] [0-9]+$' <<<"$output")
	[ "${line##* }" -ge 60000000 ]
	run -0 --separate-stderr ptt-stat --folded=hold "$T"
	line=$(grep -E '(^|;)main;contention;update_stats[^;]*;my_lock;\[mutex stats_lock\] [0-9]+$' <<<"$output")
	[ "${line##* }" -ge 60000000 ]
	run -2 --separate-stderr ptt-stat --folded=both "$T"
	[[ "$stderr" == *"ptt-stat: --folded: wait, hold or locks: 'both'"* ]]
}

@test "ptt-deadlock: each edge at the first frames past the lock layer, with the callers" {
	rec all -o
	run -1 --separate-stderr ptt-deadlock --skip-frames='^my_' "$T"
	[ -z "$stderr" ]
	[[ "$output" == *"lock_a taken at wrapped_locks.c:107 in transfer_ab, then lock_b at wrapped_locks.c:108 in transfer_ab"* ]]
	[[ "$output" == *"lock_b taken at wrapped_locks.c:116 in transfer_ba, then lock_a at wrapped_locks.c:117 in transfer_ba"* ]]
	[[ "$output" == *"      lock_a: transfer_ab <- ab_main <- start_thread"* ]]
	# without --skip-frames the wrapper is found from the trace: the same edges
	run -1 --separate-stderr ptt-deadlock "$T"
	[[ "$output" == *"lock_a taken at wrapped_locks.c:107 in transfer_ab, then lock_b at wrapped_locks.c:108 in transfer_ab"* ]]
	[[ "$output" == *"      lock_a: transfer_ab <- ab_main <- start_thread"* ]]
	# exempted by the user, the wrapper is the site, and the stack shows who called it
	run -1 --separate-stderr ptt-deadlock --skip-frames='!^my_' "$T"
	[[ "$output" == *"lock_a taken at wrapped_locks.c:31 in my_lock"* ]]
	[[ "$output" == *"      lock_b: my_lock <- transfer_ba <- ba_main <- start_thread"* ]]
	# blocking only: the edges never blocked, so they have no stack
	rec blocking -o
	run -1 --separate-stderr ptt-deadlock --skip-frames='^my_' "$T"
	[[ "$output" == *"lock_a taken at wrapped_locks.c:31 in my_lock"* ]]
	[[ "$output" != *"transfer_ab <-"* ]]
}

@test "ptt-dump --human and ptt-paje carry the frame past the lock layer" {
	rec blocking
	run -0 --separate-stderr ptt-dump --human --skip-frames='^my_' "$T"
	[ -z "$stderr" ]
	n=$(grep -cE 'waits for mutex stats_lock.* at wrapped_locks.c:67 in flush_log \(from flush_log <- logger_main <- start_thread' <<<"$output")
	[ "$n" -eq 3 ]
	run ! grep -qE ' stack(_frames)? ' <<<"$output"
	ptt-paje --skip-frames='^my_' "$T" >"$BATS_TEST_TMPDIR/t.paje"
	assert_paje_valid "$BATS_TEST_TMPDIR/t.paje"
	assert_vite_clean "$BATS_TEST_TMPDIR/t.paje"
	# the three waits (MW) and the holds after them (MH), their Site at flush_log
	n=$(grep -cE ' MW "flush_log\+0x[0-9a-f]+ \(wrapped_locks\) at wrapped_locks.c:67"$' "$BATS_TEST_TMPDIR/t.paje" || true)
	[ "$n" -eq 3 ]
	n=$(grep -cE ' MH "flush_log\+0x[0-9a-f]+ \(wrapped_locks\) at wrapped_locks.c:67"$' "$BATS_TEST_TMPDIR/t.paje" || true)
	[ "$n" -eq 3 ]
}

@test "stacks are taken safely in a signal handler, a fork child, new threads and dlopen'd code" {
	cat >"$BATS_TEST_TMPDIR/dso.c" <<'EOF'
#include <pthread.h>
#include <time.h>
static pthread_mutex_t dso_lock = PTHREAD_MUTEX_INITIALIZER;
static void *holder(void *arg)
{
	struct timespec ts = { 0, 50000000 };
	pthread_mutex_lock(&dso_lock);
	*(volatile int *)arg = 1;
	nanosleep(&ts, NULL);
	pthread_mutex_unlock(&dso_lock);
	return NULL;
}
__attribute__((noinline)) void dso_contend(void)
{
	pthread_t th;
	volatile int held = 0;
	pthread_create(&th, NULL, holder, (void *)&held);
	while (!held)
		sched_yield();
	pthread_mutex_lock(&dso_lock);
	pthread_mutex_unlock(&dso_lock);
	pthread_join(th, NULL);
}
EOF
	cc -O2 -g -shared -fPIC -pthread -o "$BATS_TEST_TMPDIR/libdso.so" "$BATS_TEST_TMPDIR/dso.c"
	WRAPPED_LOCKS_DSO="$BATS_TEST_TMPDIR/libdso.so" run -0 --separate-stderr timeout 120 \
		ptt-record -q -o "$T" -- "$EXAMPLES/wrapped_locks" -s
	[ -z "$stderr" ]
	[[ "$output" == *"signal handler 1, child 0"* ]]
	run -0 --separate-stderr ptt-stat --folded=wait "$T"
	[ -z "$stderr" ]
	# through the signal frame, into the handler's wait
	grep -qE ';raise;.*;in_signal_handler;my_lock;\[mutex handler_lock\] [0-9]+$' <<<"$output"
	# in the dlopen'd library, unloaded since
	grep -qE ';dso_contend;\[mutex dso_lock\] [0-9]+$' <<<"$output"
	# threads created while others wait: 20 one_flush threads, each waited with its stack
	grep -qE ';one_flush;flush_log;my_lock;\[mutex stats_lock\] [0-9]+$' <<<"$output"
	# the fork child wrote its own stacks, under its pid, from id 1
	run -0 ptt-dump -n "$T"
	pids=$(awk '$5 == "stack_frames" && $6 == "stack=1" && $7 == "at=0" { print $2 }' <<<"$output" | sort -u | wc -l)
	[ "$pids" -eq 2 ]
}

@test "ptt-filter keeps the stacks of what it keeps, and a window its stacks' frames" {
	rec blocking
	ptt-filter -o stats_lock "$T" >"$BATS_TEST_TMPDIR/o.ptt"
	run -0 --separate-stderr ptt-stat -S 1 --skip-frames='^my_' "$BATS_TEST_TMPDIR/o.ptt"
	grep -qE '^  site 1 +3 +3 .* flush_log\+0x[0-9a-f]+ \(wrapped_locks\) at wrapped_locks.c:67$' <<<"$output"
	run -0 ptt-dump -n "$BATS_TEST_TMPDIR/o.ptt"
	[ "$(grep -c ' stack stack=' <<<"$output")" -eq 3 ]
	# a window after the first wait: the frames defined before it come with its context
	from=$(ptt-dump -n "$T" | awk '$5 == "mutex_lock_req" { n++; if (n == 2) { print $1; exit } }')
	ptt-filter -f "$from" "$T" >"$BATS_TEST_TMPDIR/w.ptt"
	run -0 --separate-stderr ptt-stat -S 1 --skip-frames='^my_' "$BATS_TEST_TMPDIR/w.ptt"
	grep -qE '^  site 1 +2 +2 .* flush_log\+0x[0-9a-f]+ \(wrapped_locks\) at wrapped_locks.c:67$' <<<"$output"
}

@test "a text trace whose stack table was full says so" {
	ptt-record -q -o "$T" -- "$EXAMPLES/wrapped_locks" >/dev/null
	# the runtime's answer when its table is full: a stack event without frames
	ptt-dump "$T" | awk '$5 == "stack" { $6 = "stack=4294967295" } { print }' >"$BATS_TEST_TMPDIR/full.txt"
	run -0 --separate-stderr ptt-stat -S 1 --skip-frames='^my_' "$BATS_TEST_TMPDIR/full.txt"
	[[ "$output" == *"events have no stack: the runtime's stack table was full (named at their call sites)"* ]]
	grep -qE '^  site 1 +6 +3 .* my_lock\+0x[0-9a-f]+ \(wrapped_locks\) at wrapped_locks.c:31$' <<<"$output"
}

@test "after an exec (same pid, stacks numbered from 1 again) each wait is at its own site" {
	run -0 --separate-stderr ptt-record -q -o "$BATS_TEST_TMPDIR/t.ptt" -- "$EXAMPLES/exec_waits"
	[ "$output" = "waits 2" ]
	run -0 --separate-stderr ptt-stat "$BATS_TEST_TMPDIR/t.ptt"
	[ "$stderr" = "" ]
	sites=$(sed -n '/^WAITS BY SITE: locks/,/^$/p' <<<"$output")
	# each program's wait on its own row, named in its own image (the first's kept past the exec)
	[ "$(awk '$5 == "lock" && / wait_first\+/ { print $1 }' <<<"$sites")" = 1 ]
	[ "$(awk '$5 == "lock" && / wait_second\+/ { print $1 }' <<<"$sites")" = 1 ]
	[ "$(awk '$1 ~ /^[0-9]+$/ { n += $1; r++ } END { print n, r }' <<<"$sites")" = "2 2" ]
	# the folded stacks too (they named both waits in the second image: its stacks' numbers, read at the end)
	run -0 --separate-stderr ptt-stat --folded=locks "$BATS_TEST_TMPDIR/t.ptt"
	[ "$(grep -c ';contend;wait_first;\[mutex lock\] ' <<<"$output")" = 1 ]
	[ "$(grep -c ';contend;wait_second;\[mutex lock\] ' <<<"$output")" = 1 ]
	# and ptt-critical, which names its sites once the trace is read: the waits on the path (none, one or
	# both, as the run went) each in its own function, never both in wait_second (as the second image's
	# stack numbers named them)
	run -0 --separate-stderr ptt-critical --folded "$BATS_TEST_TMPDIR/t.ptt"
	first=$(grep -c ';contend;wait_first;\[waited lock\] ' <<<"$output" || true)
	second=$(grep -c ';contend;wait_second;\[waited lock\] ' <<<"$output" || true)
	echo "on the path: $first in wait_first, $second in wait_second"
	[ "$first" -le 1 ]
	[ "$second" -le 1 ]
	[ "$((first + second))" = "$(grep -c '\[waited lock\] ' <<<"$output" || true)" ]
}

# deep.c N: a wait for a held mutex at N calls of deep() below main
write_deep() {
	cat >"$BATS_TEST_TMPDIR/deep.c" <<'C'
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static void *holder(void *a) { (void)a; pthread_mutex_lock(&m); usleep(20000); pthread_mutex_unlock(&m); return NULL; }
__attribute__((noinline)) static int deep(int n)
{
	if (n == 0) {
		pthread_mutex_lock(&m);
		pthread_mutex_unlock(&m);
		return 0;
	}
	return deep(n - 1) + 1;
}
int main(int argc, char **argv)
{
	pthread_t t;
	pthread_create(&t, NULL, holder, NULL);
	usleep(5000);
	printf("depth %d\n", deep(argc > 1 ? atoi(argv[1]) : 40));
	pthread_join(t, NULL);
	return 0;
}
C
	cc -O0 -g -pthread -o "$BATS_TEST_TMPDIR/deep" "$BATS_TEST_TMPDIR/deep.c"
}

@test "a stack cut at its depth (24 frames) ends with a mark in every output, and a limit said once" {
	write_deep
	run -0 --separate-stderr ptt-record -q --stacks=all -o "$T" -- "$BATS_TEST_TMPDIR/deep" 40
	[ "$output" = "depth 40" ]
	note="1 stack cut at 24 frames: the frames past it are not known (shown as …(cut at 24 frames))"
	# the flame graph: the mark is the root of the hold's stack, the 24 frames kept below it
	# (--stacks=all: every acquisition has its stack, contended or not)
	run -0 --separate-stderr ptt-stat --folded=hold "$T"
	[ "$stderr" = "ptt-stat: $T: note: $note" ]
	grep -qE '^…\(cut at 24 frames\)(;deep){24};\[mutex m\] [0-9]+$' <<<"$output"
	run -0 --separate-stderr ptt-stat "$T"
	[[ "$output" == *"limit: $note"* ]]
	[ "$stderr" = "" ]
	run -0 --separate-stderr ptt-deadlock "$T"
	[ "$stderr" = "ptt-deadlock: $T: note: $note" ]
	# the stack's frames as written: 24 return addresses, then the mark (top byte 0xfd, the depth)
	run -0 --separate-stderr ptt-dump -n "$T"
	grep -qE " stack_frames stack=[0-9]+ at=24 a=0xfd00000000000018 " <<<"$output"
	# a stack within the depth: no mark, nothing said
	run -0 --separate-stderr ptt-record -q --stacks=all -o "$T" -- "$BATS_TEST_TMPDIR/deep" 10
	run -0 --separate-stderr ptt-stat --folded=hold "$T"
	[ "$stderr" = "" ]
	[[ "$output" != *"cut at"* ]]
	grep -qE ';main(;deep){11};\[mutex m\] [0-9]+$' <<<"$output"
}

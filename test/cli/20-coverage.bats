#!/usr/bin/env bats
# Every primitive: exact counts in the trace against the program's own, and a clean fidelity check.
bats_require_minimum_version 1.5.0
load helpers

# record primitives SCENARIO with every class; the program's counts in err.txt
prim() {
	ptt-record -q -e all -o "$BATS_TEST_TMPDIR/t.ptt" -- "$EXAMPLES/primitives" "$1" 2>"$BATS_TEST_TMPDIR/err.txt"
	ptt-dump -n "$BATS_TEST_TMPDIR/t.ptt" >"$BATS_TEST_TMPDIR/t.txt"
	run -0 ptt-dump --check "$BATS_TEST_TMPDIR/t.ptt"
	[[ "$output" == *" 0 violations: ok" ]]
}
count() { grep -c " $1 " "$BATS_TEST_TMPDIR/t.txt" || true; }
said() { sed -n "s/^$1 //p" "$BATS_TEST_TMPDIR/err.txt"; }

@test "rwlocks: read and write acquisitions and unlocks" {
	prim rwlock
	[ "$(( $(count rwlock_rdlock) + $(count rwlock_tryrdlock) ))" -eq "$(said rdlock)" ]
	[ "$(count rwlock_wrlock)" -eq "$(said wrlock)" ]
	[ "$(count rwlock_unlock)" -eq "$(said unlock)" ]
}

@test "barriers: arrivals, departures and the serial thread" {
	prim barrier
	[ "$(count barrier_wait_req)" -eq "$(said barrier_wait)" ]
	[ "$(count barrier_wait)" -eq "$(said barrier_wait)" ]
	[ "$(grep -c ' barrier_wait .*ret=-1' "$BATS_TEST_TMPDIR/t.txt")" -eq "$(said serial)" ]
	[ "$(count barrier_init)" -eq 0 ] # level 3 only
}

@test "semaphores, unnamed and named" {
	prim sem
	[ "$(count sem_post)" -eq "$(said sem_post)" ]
	[ "$(( $(count sem_wait) ))" -eq "$(said sem_wait)" ]
	run -0 ptt-record -q -l 3 -o "$BATS_TEST_TMPDIR/t3.ptt" -- "$EXAMPLES/primitives" sem
	run -0 ptt-dump -n "$BATS_TEST_TMPDIR/t3.ptt"
	[[ "$output" == *'sem_open sem=0x'*'name="/ptt-primitives"'* ]]
	[[ "$output" == *'sem_unlink ret=0 name="/ptt-primitives"'* ]]
}

@test "spinlocks are off by default and recorded with -e spin" {
	prim spin
	[ "$(count spin_lock)" -eq "$(said spin_lock)" ]
	[ "$(count spin_unlock)" -eq "$(said spin_lock)" ]
	run -0 ptt-record -q -o "$BATS_TEST_TMPDIR/d.ptt" -- "$EXAMPLES/primitives" spin
	run -0 ptt-dump -n "$BATS_TEST_TMPDIR/d.ptt"
	[[ "$output" != *spin_lock* ]]
}

@test "trylock: EBUSY is not an acquisition" {
	prim trylock
	[ "$(grep -c ' mutex_trylock .*ret=16 ' "$BATS_TEST_TMPDIR/t.txt")" -eq "$(said trylock_busy)" ]
	[ "$(grep -c ' mutex_trylock .*ret=0 ' "$BATS_TEST_TMPDIR/t.txt")" -eq "$(said trylock_ok)" ]
}

@test "a timed condition wait that times out" {
	prim timed
	[ "$(count cond_timedwait_req)" -eq 1 ]
	grep -q ' cond_wait .*ret=110 ' "$BATS_TEST_TMPDIR/t.txt"
}

@test "cancellation: the cancel precedes the end, which says how the thread ended" {
	prim cancel
	grep -q 'thread_name target=[0-9]* name="sleeper"' "$BATS_TEST_TMPDIR/t.txt"
	cancel=$(awk '$5=="thread_cancel" {print NR}' "$BATS_TEST_TMPDIR/t.txt")
	end=$(awk '$5=="thread_end" && /how=2/ {print NR}' "$BATS_TEST_TMPDIR/t.txt")
	[ -n "$cancel" ] && [ -n "$end" ] && [ "$cancel" -lt "$end" ]
}

@test "fork without exec: the child has its own stream and pid, the parent's is untouched" {
	prim fork
	pids=$(awk '$5=="process_begin" {print $2}' "$BATS_TEST_TMPDIR/t.txt" | sort -u | wc -l)
	[ "$pids" -eq 2 ]
	parent=$(awk '$5=="process_begin" {print $2; exit}' "$BATS_TEST_TMPDIR/t.txt")
	child=$(awk '$5=="process_fork" {sub("child=","",$6); print $6}' "$BATS_TEST_TMPDIR/t.txt")
	[ "$(awk -v p="$child" '$2==p && $5=="mutex_lock"' "$BATS_TEST_TMPDIR/t.txt" | wc -l)" -eq "$(said locks_per_process)" ]
	[ "$(awk -v p="$parent" '$2==p && $5=="mutex_lock"' "$BATS_TEST_TMPDIR/t.txt" | wc -l)" -eq $(( $(said locks_per_process) + 1 )) ]
}

@test "C++: std::thread, mutex, timed_mutex, condition_variable, shared_mutex" {
	ptt-record -q -o "$BATS_TEST_TMPDIR/t.ptt" -- "$EXAMPLES/cxx_threads" 2>"$BATS_TEST_TMPDIR/err.txt"
	ptt-dump -n "$BATS_TEST_TMPDIR/t.ptt" >"$BATS_TEST_TMPDIR/t.txt"
	run -0 ptt-dump --check "$BATS_TEST_TMPDIR/t.ptt"
	[[ "$output" == *" 0 violations: ok" ]]
	[ "$(count thread_create)" -eq "$(said threads)" ]
	[ "$(count mutex_timedlock)" -eq "$(said timedlock)" ]
	[ "$(count rwlock_rdlock)" -eq "$(said rdlock)" ]
	[ "$(count rwlock_wrlock)" -eq "$(said wrlock)" ]
	[ "$(count mutex_unlock)" -ge "$(said mutex_unlock_min)" ]
	# C++ statics named as written, not as mangled (_ZL1m): the object_name column of every event
	ptt-csv "$BATS_TEST_TMPDIR/t.ptt" | python3 -c 'import csv, sys
for r in csv.DictReader(sys.stdin): print(r["object_name"])' | sort -u >"$BATS_TEST_TMPDIR/names.txt"
	for name in m tm cv sm; do
		grep -qx "$name" "$BATS_TEST_TMPDIR/names.txt" || { echo "no object named $name"; cat "$BATS_TEST_TMPDIR/names.txt"; return 1; }
	done
	run -1 grep -q '^_Z' "$BATS_TEST_TMPDIR/names.txt"
}

# trace CMD... on the big input: output byte-identical to an untraced run, a clean fidelity
# check, and at least 2 worker threads, each with events of its own
real_program() {
	command -v "$1" >/dev/null || skip "$1 not installed"
	big_input
	"$@" "$BATS_TEST_TMPDIR/in.txt" >"$BATS_TEST_TMPDIR/plain"
	ptt-record -q -o "$BATS_TEST_TMPDIR/r.ptt" -- "$@" "$BATS_TEST_TMPDIR/in.txt" >"$BATS_TEST_TMPDIR/traced"
	cmp "$BATS_TEST_TMPDIR/plain" "$BATS_TEST_TMPDIR/traced"
	run -0 ptt-dump --check "$BATS_TEST_TMPDIR/r.ptt"
	[[ "$output" == *" 0 violations: ok" ]]
	assert_workers "$BATS_TEST_TMPDIR/r.ptt" 2
}

@test "real programs: pigz -p 2, output unchanged, clean check, events from every worker" {
	real_program pigz -p 2 -c
}

@test "real programs: xz -T2, output unchanged, clean check, events from every worker" {
	real_program xz -T2 -1 --block-size=256KiB -c
}

@test "real programs: zstd -T2, output unchanged, clean check, events from every worker" {
	real_program zstd -T2 -q -c
}

@test "real programs: sort --parallel=2, output unchanged, clean check, events from every worker" {
	# -S 12M: several buffers of more than 128k lines, the least sort sorts with threads
	real_program sort --parallel=2 -S 12M
}

# record one examples/prim_* program (its counts on stderr with -v) with OPTIONS...
prim_v() {
	local name=$1; shift
	ptt-record -q "$@" -o "$BATS_TEST_TMPDIR/t.ptt" -- "$EXAMPLES/$name" -v 2>"$BATS_TEST_TMPDIR/err.txt"
	ptt-dump -n "$BATS_TEST_TMPDIR/t.ptt" >"$BATS_TEST_TMPDIR/t.txt"
	run -0 ptt-dump --check "$BATS_TEST_TMPDIR/t.ptt"
	[[ "$output" == *" 0 lost, 0 out of order, 0 violations: ok" ]]
}
# events EVENT with ret=0
count_ok() { grep -c " $1 .*ret=0 " "$BATS_TEST_TMPDIR/t.txt" || true; }
# the Nth number after NAME in the program's counts
said_n() { awk -v k="$1" -v n="$2" '$1==k {print $(n+1)}' "$BATS_TEST_TMPDIR/err.txt"; }

@test "prim_cond: waits, timed waits, signals, broadcast, a wait ended by cancellation" {
	prim_v prim_cond -l 3
	[ "$(( $(count cond_wait_req) + $(count cond_timedwait_req) ))" -eq "$(said waits)" ]
	[ "$(count cond_timedwait_req)" -eq "$(said timed_waits)" ]
	[ "$(count cond_wait)" -eq "$(said waits)" ]
	[ "$(count cond_signal)" -eq "$(said signals)" ]
	[ "$(count cond_broadcast)" -eq "$(said broadcasts)" ]
	[ "$(grep -c ' cond_wait .*ret=110 ' "$BATS_TEST_TMPDIR/t.txt")" -eq "$(said timeouts)" ]
	[ "$(said cancelled)" -eq 1 ]
	[ "$(grep -c ' cond_wait .*ret=125 ' "$BATS_TEST_TMPDIR/t.txt")" -eq 1 ]
	# the cancelled waiter re-acquired the mutex, then its cleanup handler released it, then it ended
	tid=$(awk '$5=="cond_wait" && /ret=125 / {print $3}' "$BATS_TEST_TMPDIR/t.txt")
	run -0 awk -v t="$tid" '$3==t {print $5}' "$BATS_TEST_TMPDIR/t.txt"
	[[ "$output" == *$'cond_wait\nmutex_unlock\nthread_end' ]]
	[ "$(count cond_init)" -eq 1 ] && [ "$(count cond_destroy)" -eq 1 ]
}

@test "prim_rwlock: every kind of acquisition, free and contended, with exact outcomes" {
	prim_v prim_rwlock -l 3
	for kind in rdlock wrlock tryrdlock trywrlock timedrdlock timedwrlock; do
		[ "$(count rwlock_$kind)" -eq "$(said_n $kind 1)" ] || { echo "$kind calls"; return 1; }
		[ "$(count_ok rwlock_$kind)" -eq "$(said_n $kind 2)" ] || { echo "$kind acquired"; return 1; }
	done
	[ "$(count rwlock_rdlock_req)" -eq "$(said rdlock_req)" ]
	[ "$(count rwlock_wrlock_req)" -eq "$(said wrlock_req)" ]
	[ "$(count rwlock_unlock)" -eq "$(said unlock)" ]
	[ "$(grep -c ' rwlock_timed..lock .*ret=110 ' "$BATS_TEST_TMPDIR/t.txt")" -eq 4 ]
	[ "$(count rwlock_init)" -eq 1 ] && [ "$(count rwlock_destroy)" -eq 1 ]
}

@test "prim_sem: posts, waits, try and timed waits, named semaphores, errno kept" {
	prim_v prim_sem -l 3
	[ "$(said errno_bad)" -eq 0 ]
	[ "$(count sem_post)" -eq "$(said sem_post)" ]
	[ "$(count sem_wait)" -eq "$(said sem_wait)" ]
	[ "$(count sem_wait_req)" -eq "$(said sem_wait_req)" ]
	[ "$(count sem_trywait)" -eq "$(said_n sem_trywait 1)" ]
	[ "$(count_ok sem_trywait)" -eq "$(said_n sem_trywait 2)" ]
	grep -q ' sem_trywait .*ret=11 ' "$BATS_TEST_TMPDIR/t.txt"
	[ "$(count sem_timedwait)" -eq "$(said_n sem_timedwait 1)" ]
	[ "$(count_ok sem_timedwait)" -eq "$(said_n sem_timedwait 2)" ]
	[ "$(count sem_open)" -eq 2 ] && [ "$(count sem_close)" -eq 2 ]
	[ "$(grep -c ' sem_unlink ret=0 name="/ptt-prim-sem-[0-9]*"$' "$BATS_TEST_TMPDIR/t.txt")" -eq 1 ]
	grep -q ' sem_unlink ret=2 ' "$BATS_TEST_TMPDIR/t.txt"
}

@test "prim_sem: posts from signal handlers are written or counted as lost, never garbled" {
	ptt-record -q -e sem,mutex -o "$BATS_TEST_TMPDIR/t.ptt" -- "$EXAMPLES/prim_sem" -v signals 2>"$BATS_TEST_TMPDIR/err.txt"
	ptt-dump -n "$BATS_TEST_TMPDIR/t.ptt" >"$BATS_TEST_TMPDIR/t.txt"
	run -0 ptt-dump --check "$BATS_TEST_TMPDIR/t.ptt"
	[[ "$output" == *" 0 damaged, "*" 0 violations: ok" ]]
	[ "$(said errno_bad)" -eq 0 ]
	[ "$(said handler_posts)" -gt 0 ]
	lost=$(awk '$5=="rec_lost" {sub("count=","",$7); n+=$7} END {print n+0}' "$BATS_TEST_TMPDIR/t.txt")
	[ "$(( $(count sem_post) + lost ))" -eq "$(said sem_post)" ]
}

@test "prim_spin: locks, trylocks and unlocks with -e spin; none by default" {
	prim_v prim_spin -e spin,thread
	[ "$(count spin_lock)" -eq "$(said spin_lock)" ]
	[ "$(count spin_trylock)" -eq "$(said_n spin_trylock 1)" ]
	[ "$(count_ok spin_trylock)" -eq "$(said_n spin_trylock 2)" ]
	[ "$(count spin_unlock)" -eq "$(said spin_unlock)" ]
	[ "$(said busy)" -eq 1 ]
	prim_v prim_spin
	[ "$(count spin_lock)" -eq 0 ] && [ "$(count spin_unlock)" -eq 0 ]
}

@test "wrappers keep glibc's outcomes: bad timeouts are EINVAL untaken, pending cancels honoured" {
	run -0 "$EXAMPLES/wrapper_semantics"
	untraced=$output
	# the checks must have something to compare: glibc refuses these arguments
	[[ "$untraced" == *"mutex_clocklock, bad clock: EINVAL: yes"* ]]
	[[ "$untraced" == *"sem_wait on a free semaphore with a cancellation pending: cancelled: yes"* ]]
	run -0 ptt-record -q -e all -o "$BATS_TEST_TMPDIR/t.ptt" -- "$EXAMPLES/wrapper_semantics"
	[ "$output" = "$untraced" ]
	run -0 ptt-dump --check "$BATS_TEST_TMPDIR/t.ptt"
	[[ "$output" == *" 0 violations: ok" ]]
}

@test "a thread that cancels itself asynchronously: the cancel and the end are recorded, in order" {
	run -0 ptt-record -q -o "$BATS_TEST_TMPDIR/t.ptt" -- "$EXAMPLES/self_cancel"
	[ "$output" = "cancelled" ]
	run -0 ptt-dump --check "$BATS_TEST_TMPDIR/t.ptt"
	[[ "$output" == *" 0 lost, 0 out of order, 0 violations: ok" ]]
	run -0 ptt-dump "$BATS_TEST_TMPDIR/t.ptt"
	tid=$(echo "$output" | awk '$5 == "thread_cancel" {print $3}')
	[ -n "$tid" ]
	[ "$(echo "$output" | awk -v t="$tid" '$3 == t {print $5}' | tail -2 | tr '\n' ' ')" = "thread_cancel thread_end " ]
}

@test "an allocator that locks pthread mutexes inside pthread_create (jemalloc): nothing lost" {
	jemalloc=$(ls /usr/lib/*/libjemalloc.so.2 2>/dev/null | head -1)
	[ -n "$jemalloc" ] || skip "libjemalloc2 not installed"
	# preloaded in the program only (ptt-record may be built with ASan, which must come first)
	ptt-record -q -o "$BATS_TEST_TMPDIR/t.ptt" -- \
		sh -c "LD_PRELOAD=$jemalloc:\$LD_PRELOAD exec '$EXAMPLES/prodcons' -n 500" >/dev/null
	run -0 ptt-dump --check "$BATS_TEST_TMPDIR/t.ptt"
	[[ "$output" == *" 0 lost, 0 out of order, 0 violations: ok" ]]
	# jemalloc's own locking during the creations is in the trace, after each create
	run -0 ptt-dump -n "$BATS_TEST_TMPDIR/t.ptt"
	main=$(echo "$output" | awk '$5 == "thread_create" {print $3; exit}')
	[ "$(echo "$output" | awk -v t="$main" '$3 == t' | grep -A1 ' thread_create ' | grep -c ' mutex_')" -gt 0 ]
}

@test "the real functions answer in a library constructor that runs before libptt's (resolved on first use)" {
	cat >"$BATS_TEST_TMPDIR/early.c" <<'C'
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <time.h>
int early_bad = -1;
/* each answer is one only the real function gives (a stand-in answers 0) */
__attribute__((constructor)) static void early(void)
{
	pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
	pthread_cond_t c = PTHREAD_COND_INITIALIZER;
	pthread_rwlock_t l = PTHREAD_RWLOCK_INITIALIZER;
	struct timespec past = { 1, 0 };
	sem_t s;
	int bad = 0;
	bad |= pthread_mutex_lock(&m) != 0;
	bad |= (pthread_mutex_trylock(&m) != EBUSY) << 1;
	bad |= (pthread_cond_signal(&c) != 0) << 2;
	bad |= (pthread_cond_timedwait(&c, &m, &past) != ETIMEDOUT) << 3;
	bad |= (pthread_mutex_unlock(&m) != 0) << 4;
	bad |= (pthread_mutex_trylock(&m) != 0 || pthread_mutex_unlock(&m) != 0) << 5;
	bad |= (pthread_rwlock_wrlock(&l) != 0 || pthread_rwlock_tryrdlock(&l) != EBUSY) << 6;
	bad |= (pthread_rwlock_unlock(&l) != 0) << 7;
	bad |= (sem_init(&s, 0, 0) != 0 || sem_trywait(&s) != -1 || errno != EAGAIN) << 8;
	bad |= (sem_post(&s) != 0 || sem_trywait(&s) != 0) << 9;
	early_bad = bad;
}
C
	cat >"$BATS_TEST_TMPDIR/main.c" <<'C'
#include <stdio.h>
extern int early_bad;
int main(void)
{
	printf("early %s (%d)\n", early_bad == 0 ? "ok" : "WRONG", early_bad);
	return early_bad != 0;
}
C
	cc -shared -fPIC -o "$BATS_TEST_TMPDIR/libearly.so" "$BATS_TEST_TMPDIR/early.c" -pthread
	cc -o "$BATS_TEST_TMPDIR/main" "$BATS_TEST_TMPDIR/main.c" -L"$BATS_TEST_TMPDIR" -learly -Wl,-rpath,"$BATS_TEST_TMPDIR"
	# libearly's constructor runs before libptt's (the loader initialises it first)
	run -0 env LD_DEBUG=files LD_PRELOAD="$PTT_LIBPTT" "$BATS_TEST_TMPDIR/main"
	[[ "$output" == *"calling init: $BATS_TEST_TMPDIR/libearly.so"*"calling init: $PTT_LIBPTT"* ]]
	run -0 --separate-stderr ptt-record -q -o "$BATS_TEST_TMPDIR/t.ptt" -- "$BATS_TEST_TMPDIR/main"
	[ "$output" = "early ok (0)" ]
	[ -z "$stderr" ]
	run -0 ptt-dump --check "$BATS_TEST_TMPDIR/t.ptt"
	[[ "$output" == *" 0 violations: ok" ]]
}

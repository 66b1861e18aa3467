#!/usr/bin/env bats
# Python frames (issue 19): in a CPython 3.11-3.13 the runtime adds the calling
# thread's Python frames to each stack it takes on a blocking path, and every
# tool names the first Python frame past the interpreter and threading.py /
# queue.py: the program's function and .py line.  examples/py_locks.py marks
# its lock lines (LOCK-SITE, QUEUE-SITE, AB-SITE, BA-SITE).  Run with Debian's
# /usr/bin/python3.11 (a pyenv python3 may come first on PATH).
bats_require_minimum_version 1.5.0
load helpers

PY=/usr/bin/python3.11

setup() {
	T="$BATS_TEST_TMPDIR/t.ptt"
	SRC="$PTT_ROOT/examples/py_locks.py"
}

need_python() {
	[ -x "$PY" ] || skip "$PY not installed"
}

# the line of SRC holding MARK
marked() { grep -n "# $1\$" "$SRC" | cut -d: -f1; }

# the text of line N of SRC
src_line() { sed -n "${1}p" "$SRC"; }

# ptt-stat's most contended lock (the first object of LOCKS): its first site's row
top_lock_site() { grep -A2 '^OBJECT ' <<<"$output" | sed -n 3p; }

# WAITS BY SITE's rows of FUNCTION, in the table of waits for locks (the GIL's mutex may be waited for
# in it too, at another line: a row of its own)
site_row() { sed -n '/^WAITS BY SITE: locks/,/^$/p' <<<"$output" | grep " $1 (py_locks.py) at "; }

@test "contention on a threading.Lock: ptt-stat's top lock waits in the Python function, at the line that takes it" {
	need_python
	ptt-record -q -o "$T" -- "$PY" "$SRC" contend >"$BATS_TEST_TMPDIR/out.txt"
	[ "$(cat "$BATS_TEST_TMPDIR/out.txt")" = "counter 12 (expected 12)" ]
	run -0 --separate-stderr ptt-stat "$T"
	[ -z "$stderr" ]
	# the most contended lock's waits, named past the interpreter's PyThread_acquire_lock_timed
	top=$(top_lock_site)
	[[ "$top" == "  site 1 "*" update_stats (py_locks.py) at py_locks.py:"* ]]
	line=${top##*py_locks.py:}
	[ "$line" = "$(marked LOCK-SITE)" ]
	[[ "$(src_line "$line")" == *"with stats_lock:"* ]]
	# the same site over every object (the joins wait in contend, apart)
	row=$(site_row update_stats | grep " at py_locks.py:$line\$")
	[ "$(awk '{ print $1 }' <<<"$row")" -ge 2 ]
}

@test "Python frames deeper than 16 are cut with a mark in every output that shows them, and a limit said once" {
	need_python
	printf '%s\n' 'import threading, time' 'lock = threading.Lock()' 'def deep(n):' '    if n == 0:' \
		'        with lock:' '            pass' '        return' '    deep(n - 1)' 'lock.acquire()' \
		't = threading.Thread(target=deep, args=(30,))' 't.start()' 'time.sleep(0.3)' 'lock.release()' 't.join()' \
		'print("depth 30")' >"$BATS_TEST_TMPDIR/deep.py"
	run -0 --separate-stderr ptt-record -q -o "$T" -- "$PY" "$BATS_TEST_TMPDIR/deep.py"
	[ "$output" = "depth 30" ]
	note="stack* with Python frames cut at 16: the outer Python frames are not known (shown as …(cut at 16 frames))"
	run -0 --separate-stderr ptt-stat --folded=wait "$T"
	[[ "$stderr" == "ptt-stat: $T: note: "[0-9]" "$note ]]
	# the wait for the lock: the mark is the root, the 16 Python frames kept below it (deep's)
	grep -qE '^…\(cut at 16 frames\)(;deep){16};.*;\[mutex ' <<<"$output" ||
		grep -qE '^…\(cut at 16 frames\)(;deep){16};.*;\[(sem|lock) ' <<<"$output"
	run -0 --separate-stderr ptt-stat "$T"
	[[ "$output" == *"limit: "[0-9]" "$note* ]]
	[ -z "$stderr" ]
	# 10 deep: within the depth, no mark
	sed -i 's/args=(30,)/args=(10,)/' "$BATS_TEST_TMPDIR/deep.py"
	run -0 --separate-stderr ptt-record -q -o "$T" -- "$PY" "$BATS_TEST_TMPDIR/deep.py"
	run -0 --separate-stderr ptt-stat --folded=wait "$T"
	[ -z "$stderr" ]
	[[ "$output" != *"cut at"* ]]
	grep -qE '(;deep){11};' <<<"$output"
}

@test "py_code describes each code object once; the frames are tagged in stack_frames" {
	need_python
	ptt-record -q -o "$T" -- "$PY" "$SRC" contend >/dev/null
	run -0 --separate-stderr ptt-dump -n "$T"
	[ -z "$stderr" ]
	[ "$(grep -c ' py_runtime version=' <<<"$output")" -eq 1 ]
	grep -qE ' py_runtime version=[0-9]+ frames=1$' <<<"$output"
	grep -q ' py_code code=[0-9]* first=[0-9]* name="update_stats .*/examples/py_locks.py"$' <<<"$output"
	dups=$(awk '$5 == "py_code" { print $6 }' <<<"$output" | sort | uniq -d)
	[ -z "$dups" ]
	grep -qE ' stack_frames .*=0xfe[0-9a-f]{14}( |$)' <<<"$output"
	# the text form keeps them: it reads back byte for byte, and ptt-stat reads it the same
	ptt-dump "$T" >"$BATS_TEST_TMPDIR/a.txt"
	ptt-dump "$BATS_TEST_TMPDIR/a.txt" >"$BATS_TEST_TMPDIR/b.txt"
	cmp "$BATS_TEST_TMPDIR/a.txt" "$BATS_TEST_TMPDIR/b.txt"
	ptt-stat "$T" >"$BATS_TEST_TMPDIR/bin.stat"
	ptt-stat "$BATS_TEST_TMPDIR/a.txt" >"$BATS_TEST_TMPDIR/txt.stat"
	diff "$BATS_TEST_TMPDIR/bin.stat" "$BATS_TEST_TMPDIR/txt.stat"
	grep -q ' update_stats (py_locks.py) at py_locks.py:' "$BATS_TEST_TMPDIR/txt.stat"
}

@test "a Queue: the consumers' waits are named at their get(), past queue.py and threading.py" {
	need_python
	ptt-record -q -o "$T" -- "$PY" "$SRC" queue >"$BATS_TEST_TMPDIR/out.txt"
	[ "$(cat "$BATS_TEST_TMPDIR/out.txt")" = "consumed 6 (expected 6)" ]
	run -0 --separate-stderr ptt-stat "$T"
	[ -z "$stderr" ]
	# a Condition's wait is waiting for work (its waiter lock is released by the notifier: a signal)
	row=$(sed -n '/^WAITS BY SITE: waiting for work/,/^$/p' <<<"$output" | grep ' consume (py_locks.py) at ')
	line=${row##*py_locks.py:}
	[ "$line" = "$(marked QUEUE-SITE)" ]
	[[ "$(src_line "$line")" == *"q.get()"* ]]
	run ! grep -qE ' (Queue\.get|Condition\.wait) \((queue|threading)\.py\) at ' <<<"$output"
	# the folded stacks keep the whole Python path, root first, before the native frames
	run -0 --separate-stderr ptt-stat --folded=wait "$T"
	grep -qE '^Thread\._bootstrap;Thread\._bootstrap_inner;Thread\.run;consume;Queue\.get;Condition\.wait;.*;\[sem [^]]+\] [0-9]+$' <<<"$output"
	# the native part stops at the interpreter loop, right past the innermost Python frame: its older
	# calls are what the Python frames tell (unwound, 24 native frames reached a second one)
	grep -q 'Condition\.wait;_PyEval_EvalFrameDefault;' <<<"$output"
	awk -F';' '/Condition\.wait;/ { n = 0; for (i = 1; i <= NF; i++) n += $i == "_PyEval_EvalFrameDefault"; if (n != 1) bad++ }
		END { exit bad > 0 }' <<<"$output"
}

@test "a two-lock deadlock: ptt-deadlock names each edge and each blocked wait at its Python line" {
	need_python
	run timeout -k 20 -s INT 5 ptt-record -q --stacks=all -o "$T" -- "$PY" "$SRC" deadlock
	[ "$status" -eq 124 ]
	run -3 --separate-stderr ptt-deadlock "$T"
	# the interpreter's C stacks can be deeper than the runtime keeps: said once, as a limit
	[[ -z "$stderr" || "$stderr" =~ ^"ptt-deadlock: $T: note: "[0-9]+" stack"s?" cut at 24 frames" ]] || { echo "$stderr"; return 1; }
	ab=$(marked AB-SITE)
	ba=$(marked BA-SITE)
	[[ "$(src_line "$ab")" == *"with lock_b:"* ]]
	[[ "$(src_line "$ba")" == *"with lock_a:"* ]]
	[[ "$(src_line $((ab - 2)))" == *"with lock_a:"* ]]
	[[ "$(src_line $((ba - 2)))" == *"with lock_b:"* ]]
	[[ "$output" == *" taken at py_locks.py:$((ab - 2)) in transfer_ab, then "*" at py_locks.py:$ab in transfer_ab"* ]]
	[[ "$output" == *" taken at py_locks.py:$((ba - 2)) in transfer_ba, then "*" at py_locks.py:$ba in transfer_ba"* ]]
	[[ "$output" == *": transfer_ab <- Thread.run <- Thread._bootstrap_inner <- Thread._bootstrap"* ]]
	grep -q "^    waiting at py_locks.py:$ab in transfer_ab (from transfer_ab <- Thread.run" <<<"$output"
	grep -q "^    waiting at py_locks.py:$ba in transfer_ba (from transfer_ba <- Thread.run" <<<"$output"
}

@test "a fork child: its own py_runtime and code ids, its waits named in Python" {
	need_python
	ptt-record -q -o "$T" -- "$PY" "$SRC" queue fork >"$BATS_TEST_TMPDIR/out.txt"
	[ "$(tail -1 "$BATS_TEST_TMPDIR/out.txt")" = "counter 12 (expected 12)" ]
	run -0 --separate-stderr ptt-dump -n "$T"
	[ "$(awk '$5 == "py_runtime" { print $2 }' <<<"$output" | sort -u | wc -l)" -eq 2 ]
	child=$(awk '$5 == "process_fork" { sub("child=", "", $6); print $6 }' <<<"$output")
	[ -n "$child" ]
	# the child numbers its code objects from 1 again, under its pid
	[ "$(awk -v p="$child" '$2 == p && $5 == "py_code" { print $6; exit }' <<<"$output")" = "code=1" ]
	run -0 --separate-stderr ptt-stat "$T"
	site_row update_stats | grep -q " at py_locks.py:$(marked LOCK-SITE)\$"
	[[ "$(sed -n '/^WAITS BY SITE: waiting for work/,/^$/p' <<<"$output" | grep ' consume (py_locks.py) at ')" == \
		*" at py_locks.py:$(marked QUEUE-SITE)" ]]
}

@test "ptt-dump --human and ptt-paje carry the Python frame; the Paje is valid" {
	need_python
	ptt-record -q -o "$T" -- "$PY" "$SRC" contend >/dev/null
	site=$(marked LOCK-SITE)
	run -0 --separate-stderr ptt-dump --human "$T"
	[ -z "$stderr" ]
	grep -qE "waits on semaphore .* at py_locks.py:$site in update_stats \(from update_stats <- Thread.run <- " <<<"$output"
	run ! grep -qE ' (stack|stack_frames|py_code|py_runtime) ' <<<"$output"
	ptt-paje "$T" >"$BATS_TEST_TMPDIR/t.paje"
	grep -qE " \"update_stats \(py_locks.py\) at py_locks.py:$site\"$" "$BATS_TEST_TMPDIR/t.paje"
	assert_paje_valid "$BATS_TEST_TMPDIR/t.paje"
	assert_vite_clean "$BATS_TEST_TMPDIR/t.paje"
}

@test "--skip-frames reaches Python frames: with the function skipped, only threading.py's are left" {
	need_python
	ptt-record -q -o "$T" -- "$PY" "$SRC" contend >/dev/null
	run -0 --separate-stderr ptt-stat --skip-frames='^update_stats$' "$T"
	[ -z "$stderr" ]
	# every frame is then in the layer: the stack's last (outermost) frame is named
	[[ "$(top_lock_site)" == "  site 1 "*" Thread._bootstrap (threading.py) at threading.py:"* ]]
	run ! grep -q ' update_stats (py_locks.py) at ' <<<"$output"
}

@test "ptt-filter keeps the code objects with the stacks: a window after them still names Python" {
	need_python
	ptt-record -q -o "$T" -- "$PY" "$SRC" contend >/dev/null
	# from just after the last py_code: every wait in the window names code described before it
	from=$(ptt-dump -n "$T" | awk '$5 == "py_code" { t = $1 } END { printf "%.0f", t * 1e9 + 1000 }')
	ptt-filter --from="${from}ns" "$T" >"$BATS_TEST_TMPDIR/w.ptt"
	run -0 --separate-stderr ptt-dump -n "$BATS_TEST_TMPDIR/w.ptt"
	grep -q ' py_code ' <<<"$output"
	run -0 --separate-stderr ptt-stat "$BATS_TEST_TMPDIR/w.ptt"
	[ -z "$stderr" ]
	site_row update_stats | grep -q " at py_locks.py:$(marked LOCK-SITE)\$"
	run ! grep -q 'python code not described' <<<"$output"
}

@test "a window that begins inside a wait names it at its Python line, from ptt-filter and from a snapshot" {
	need_python
	ptt-record -q -o "$T" -- "$PY" "$SRC" contend >/dev/null
	site=$(marked LOCK-SITE)
	# the first wait at LOCK-SITE, as the whole trace names it (time, thread), and the stack record
	# just before its request: its position and time
	read -r t tid <<<"$(ptt-dump --human "$T" | awk -v at="at py_locks.py:$site in update_stats " '
		$2 == "thread" && index($0, "waits on semaphore") && index($0, at) { print $1, $3; exit }')"
	[ -n "$t" ]
	read -r pos ts <<<"$(ptt-dump -n "$T" | awk -v tid="$tid" -v t="$t" '
		$3 == tid && $5 == "stack" { s = NR; st = $1 } $3 == tid && $5 == "sem_wait_req" && $1 == t { print s, st; exit }')"
	[ -n "$pos" ]
	# a copy with a snapshot every 20 events, and one with a snapshot right after that stack record,
	# between it and the request it names
	ptt-index -i 20 "$T" >"$BATS_TEST_TMPDIR/i.ptt"
	ptt-index -i "$pos" "$T" >"$BATS_TEST_TMPDIR/j.ptt"
	waits_here() { grep -qE "^[0-9.]+ thread $tid( \([^)]*\))? waits on semaphore [^ ]+ at py_locks.py:$site in update_stats " <<<"$1"; }
	# 1 us into the wait (20 ms or more): told again at the window's start with its stack, so named
	# at its Python line, not in the wrapper, from the trace and from either copy's snapshot
	from=$(awk -v t="$t" 'BEGIN { printf "%.0f", t * 1e9 + 1000 }')
	for in in "$T" "$BATS_TEST_TMPDIR/i.ptt" "$BATS_TEST_TMPDIR/j.ptt"; do
		ptt-filter --from="${from}ns" "$in" >"$BATS_TEST_TMPDIR/w.ptt"
		run -0 --separate-stderr ptt-dump --human "$BATS_TEST_TMPDIR/w.ptt"
		[ -z "$stderr" ]
		waits_here "$output"
		run -0 --separate-stderr ptt-stat "$BATS_TEST_TMPDIR/w.ptt"
		[ -z "$stderr" ]
		site_row update_stats | grep -q " at py_locks.py:$site\$"
		run -0 --separate-stderr ptt-dump --check "$BATS_TEST_TMPDIR/w.ptt"
		[[ "$output" == *" 0 violations: ok" ]]
	done
	# a window that begins between the stack record and its request (when their times differ): the
	# request is the window's, with its stack, also when the snapshot came between the two
	mid=$(awk -v a="$ts" -v b="$t" 'BEGIN { if (b > a) printf "%.0f", (a + b) / 2 * 1e9 }')
	[ -z "$mid" ] && return
	for in in "$T" "$BATS_TEST_TMPDIR/j.ptt"; do
		ptt-filter --from="${mid}ns" "$in" >"$BATS_TEST_TMPDIR/w.ptt"
		run -0 --separate-stderr ptt-dump --human "$BATS_TEST_TMPDIR/w.ptt"
		waits_here "$output"
	done
}

@test "no stacks (--stacks=none): no Python frames and no py_ events" {
	need_python
	ptt-record -q --stacks=none -o "$T" -- "$PY" "$SRC" contend >/dev/null
	run -0 --separate-stderr ptt-dump -n "$T"
	run ! grep -qE ' (py_runtime|py_code|stack_frames) ' <<<"$output"
}

@test "other CPythons: 3.12 and 3.13 are read too; an older one is named and the tools say its frames are missing" {
	local found=0 py v
	for py in /root/.pyenv/versions/3.1[0-9]*/bin/python3.1[0-9]; do
		[ -x "$py" ] || continue
		v=$("$py" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
		"$py" -c 'import sys; sys.exit(sys.version_info >= (3, 14) or hasattr(sys, "_is_gil_enabled"))' || continue
		found=1
		ptt-record -q -o "$T" -- "$py" "$SRC" contend >/dev/null
		run -0 --separate-stderr ptt-stat "$T"
		if [ "${v#3.}" -ge 11 ]; then
			top=$(top_lock_site)
			[[ "$top" == "  site 1 "*" update_stats (py_locks.py) at py_locks.py:$(marked LOCK-SITE)" ]] || { echo "$v: $top"; return 1; }
		else
			grep -qxF "note: Python frames not recorded for CPython $v: its waits are named in the interpreter" <<<"$output" ||
				{ echo "$v: no note"; return 1; }
			run -0 --separate-stderr ptt-deadlock "$T"
			[ "${lines[-1]}" = "note: Python frames not recorded for CPython $v: its waits are named in the interpreter" ]
		fi
	done
	[ "$found" -eq 1 ] || skip "no other CPython (pyenv) on this machine"
}

@test "the runtime's CPython offsets match each CPython's headers" {
	local found=0 inc
	for inc in /usr/include/python3.1[1-9] /root/.pyenv/versions/3.1[1-9]*/include/python3.1[1-9]; do
		[ -f "$inc/internal/pycore_frame.h" ] || continue
		found=1
		cc -std=gnu11 -D_GNU_SOURCE -Wall -Wextra -Werror -DPTT_PY_HEADERS -I"$inc" -I"$inc/internal" \
			-o "$BATS_TEST_TMPDIR/test_pylayout" "$PTT_ROOT/test/unit/test_pylayout.c"
		run -0 "$BATS_TEST_TMPDIR/test_pylayout"
		grep -qE '^1\.\.[1-9][0-9]*$' <<<"$output" || grep -q '# SKIP no layout' <<<"$output"
		run ! grep -q '^not ok' <<<"$output"
	done
	[ "$found" -eq 1 ] || skip "no CPython headers (python3-dev) on this machine"
}

@test "CPython's GIL is a lock: ThreadPoolExecutor workers' waits for it are contention, named CPython GIL" {
	# the interpreter itself, not a wrapper such as pyenv's shim (a shell script: its processes would be traced too)
	py=$(python3 -c 'import sys; print(sys.executable)') || skip "python3 not installed"
	run -0 ptt-record -q -o "$BATS_TEST_TMPDIR/g.ptt" -- "$py" "$PTT_ROOT/examples/py_gil.py"
	[ "$output" = "sum 4799984" ]
	run -0 --separate-stderr ptt-stat --brief "$BATS_TEST_TMPDIR/g.ptt"
	[ -z "$stderr" ]
	# the GIL's condition (_PyRuntime+OFFSET: where the interpreter keeps it) is the top row of the locks
	[[ "${lines[1]}" =~ ^"  CPython GIL (_PyRuntime+0x"[0-9a-f]+") cond " ]]
	run ! grep -q '^waiting for work.* most on CPython GIL' <<<"$output"
	run -0 --separate-stderr ptt-stat "$BATS_TEST_TMPDIR/g.ptt"
	# in the LOCKS table, not under waiting for work
	awk '/^LOCKS/ { l = 1 } /^WAITING FOR WORK/ { l = 0 } l && /CPython GIL \(_PyRuntime\+0x[0-9a-f]+\)/ { n++ }
		!l && /^WAITING FOR WORK/ { w = 1 } END { exit !(n >= 1) }' <<<"$output"
}

# the GIL's rows in ptt-critical's WHAT TO FIX FIRST table: "CLASS" per row named CPython GIL
gil_classes() { sed -n '/^WHAT TO FIX FIRST/,/^$/p' <<<"$output" | awk '/^CPython GIL \(_PyRuntime\+0x[0-9a-f]+\) / { print $4 }' | sort -u; }

@test "ptt-critical: CPython's GIL is a lock on the path, named CPython GIL, never a condition" {
	# the interpreter itself, not a wrapper such as pyenv's shim (a shell script: its processes would be traced too)
	py=$(python3 -c 'import sys; print(sys.executable)') || skip "python3 not installed"
	run -0 ptt-record -q -o "$BATS_TEST_TMPDIR/g.ptt" -- "$py" "$PTT_ROOT/examples/py_gil.py"
	[ "$output" = "sum 4799984" ]
	run --separate-stderr ptt-critical -n 0 "$BATS_TEST_TMPDIR/g.ptt"
	[ "$status" -le 1 ] && [ -z "$stderr" ] # 1: part of the path unknown, as above
	classes=$(gil_classes)
	# its mutex (taken by take_gil and drop_gil), its condition when a wake is the edge: both locks
	[ -n "$classes" ]
	[[ "$classes" != *cond* ]]
	grep -qvxE 'mutex|lock' <<<"$classes" && { echo "GIL rows of class: $classes"; return 1; }
	return 0
}

@test "ptt-critical: a GIL whose drop signals after unlocking (the wake is the edge): the condition is a lock's" {
	# CPython's take_gil/drop_gil in miniature, inside a global named _PyRuntime; each drop signals after
	# its unlock, so a waiter's edge is the signal, on the condition itself (the case the mutex hides in
	# CPython 3.11, whose drop_gil signals before it unlocks)
	cat >"$BATS_TEST_TMPDIR/gil.c" <<'C'
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
struct { long pad[4]; pthread_mutex_t mutex; pthread_cond_t cond; int locked; } _PyRuntime = {
	.mutex = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER };
static long handoffs, waits;
static void *work(void *arg)
{
	volatile unsigned long x = 0;
	for (int i = 0; i < 200; i++) {
		pthread_mutex_lock(&_PyRuntime.mutex);
		while (_PyRuntime.locked) {
			waits++;
			pthread_cond_wait(&_PyRuntime.cond, &_PyRuntime.mutex);
		}
		_PyRuntime.locked = 1;
		pthread_mutex_unlock(&_PyRuntime.mutex);
		for (int k = 0; k < 20000; k++)
			x += (unsigned long)k * k % 7;
		pthread_mutex_lock(&_PyRuntime.mutex);
		_PyRuntime.locked = 0;
		handoffs++;
		pthread_mutex_unlock(&_PyRuntime.mutex);
		pthread_cond_signal(&_PyRuntime.cond);
	}
	return arg;
}
int main(void)
{
	pthread_t t[4];
	for (int i = 0; i < 4; i++)
		pthread_create(&t[i], NULL, work, NULL);
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	printf("handoffs %ld waits %ld cond +0x%zx\n", handoffs, waits, offsetof(__typeof__(_PyRuntime), cond));
	return 0;
}
C
	cc -g -O1 -pthread -o "$BATS_TEST_TMPDIR/gil" "$BATS_TEST_TMPDIR/gil.c"
	run -0 ptt-record -q -o "$BATS_TEST_TMPDIR/g.ptt" -- "$BATS_TEST_TMPDIR/gil"
	[[ "$output" =~ ^"handoffs 800 waits "([0-9]+)" cond +"(0x[0-9a-f]+)$ ]]
	waits=${BASH_REMATCH[1]} off=${BASH_REMATCH[2]}
	[ "$waits" -ge 1 ] || skip "no thread ever waited for the GIL in this run"
	# 1: part of the path unknown (events lost on a loaded machine); the classes are told all the same
	run --separate-stderr ptt-critical -n 0 "$BATS_TEST_TMPDIR/g.ptt"
	[ "$status" -le 1 ] && [ -z "$stderr" ]
	# the condition's row: class lock (it was cond), every wait the program counted
	cond=$(sed -n '/^WHAT TO FIX FIRST/,/^$/p' <<<"$output" | grep -F "CPython GIL (_PyRuntime+$off) ")
	[ -n "$cond" ] || skip "no wait on the condition lay on the path in this run"
	read -r _ _ _ class _ _ _ _ _ nwaits <<<"$cond"
	[ "$class" = lock ]
	[ "$nwaits" -eq "$waits" ]
	[[ "$(gil_classes)" != *cond* ]]
	# ptt-stat: the same object in LOCKS, by the same name
	run -0 --separate-stderr ptt-stat --brief "$BATS_TEST_TMPDIR/g.ptt"
	[[ "${lines[1]}" == "  CPython GIL (_PyRuntime+$off) cond   $waits of $waits acquisitions waited, "* ]]
}

@test "a full table of code objects is said once by every tool; the frames past it are not described" {
	need_python
	# 7000 functions, each taking a lock once: more code objects than the runtime describes (6144)
	cat >"$BATS_TEST_TMPDIR/many.py" <<'PY'
import threading
lock = threading.Lock()
ns = {"lock": lock}
for i in range(7000):
    exec("def f%d():\n    with lock:\n        pass\n" % i, ns)
for i in range(7000):
    ns["f%d" % i]()
print("called 7000")
PY
	run -0 --separate-stderr ptt-record -q --stacks=all -o "$T" -- "$PY" "$BATS_TEST_TMPDIR/many.py"
	[ "$output" = "called 7000" ]
	note="CPython code table full after 6144 code objects (in 1 process): the frames of later ones are shown as \"python code not described\""
	[ "$(ptt-dump -n "$T" | grep -c ' limit table=11 ')" -eq 1 ]
	# (the interpreter's start-up imports nest deeper than 16 Python frames: those stacks are cut, and said)
	deep="stacks with Python frames cut at 16: the outer Python frames are not known (shown as …(cut at 16 frames))"
	run -0 --separate-stderr ptt-deadlock "$T"
	[ "${stderr_lines[0]}" = "ptt-deadlock: $T: note: $note" ]
	[[ "${stderr_lines[1]}" == "ptt-deadlock: $T: note: "[0-9]*" $deep" ]]
	[ "${#stderr_lines[@]}" -eq 2 ]
	# the frames of the functions past the table's end: their stacks say they are not described
	run -0 --separate-stderr ptt-dump "$T"
	[[ "$output" == *"python code not described"* ]]
	[ "${stderr_lines[0]}" = "ptt-dump: $T: note: $note" ]
	[[ "${stderr_lines[1]}" == "ptt-dump: $T: note: "[0-9]*" $deep" ]]
}

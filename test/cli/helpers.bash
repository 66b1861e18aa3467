# Shared by the bats tests: tools from $PTT_BUILD (default: ./build), scratch in $BATS_TEST_TMPDIR.
PTT_ROOT="$(cd "$BATS_TEST_DIRNAME/../.." && pwd)"
PTT_BUILD="${PTT_BUILD:-$PTT_ROOT/build}"
PATH="$PTT_BUILD/bin:$PATH"
EXAMPLES="$PTT_BUILD/examples"
# the examples link libptt.so from the normal build (the runtime is never sanitized)
export PTT_LIBPTT="${PTT_LIBPTT:-$PTT_BUILD/lib/libptt.so}"

# record CMD... into $BATS_TEST_TMPDIR/t.ptt quietly; program output in out.txt/err.txt
record() {
	ptt-record -q -o "$BATS_TEST_TMPDIR/t.ptt" -- "$@" >"$BATS_TEST_TMPDIR/out.txt" 2>"$BATS_TEST_TMPDIR/err.txt"
}

# assert a Paje file is read whole by PajeNG: exit 0 and no diagnostic
assert_paje_valid() {
	command -v pj_dump >/dev/null || skip "pj_dump (pajeng) not installed"
	run pj_dump -q "$1"
	[ "$status" -eq 0 ] || { echo "pj_dump exit $status: $output"; return 1; }
	[ -z "$output" ] || { echo "pj_dump diagnostic: $output"; return 1; }
}

# assert ViTE loads a Paje file with 0 errors and 0 warnings (skipped with a reason without ViTE)
assert_vite_clean() {
	command -v vite >/dev/null || skip "vite not installed"
	local rt="$BATS_TEST_TMPDIR/xdg"; mkdir -p "$rt"; chmod 700 "$rt"
	run env QT_QPA_PLATFORM=offscreen XDG_RUNTIME_DIR="$rt" timeout 120 vite "$1" -e "$BATS_TEST_TMPDIR/vite.svg"
	echo "$output" | grep -qiE '(^|[^0-9])[1-9][0-9]* (error|warning)' && { echo "vite: $output"; return 1; }
	echo "$output" | grep -q '0 errors and 0 warnings' || { echo "vite did not report: $output"; return 1; }
}

# a 4 MB input (600000 lines in a fixed shuffled order), big enough that pigz -p 2, zstd -T2,
# xz -T2 -1 --block-size=256KiB and sort --parallel=2 -S 12M each run at least 2 worker threads
big_input() {
	[ -s "$BATS_TEST_TMPDIR/in.txt" ] ||
		awk 'BEGIN { for (i = 0; i < 600000; i++) print (i * 7919) % 600000 }' >"$BATS_TEST_TMPDIR/in.txt"
}

# assert the trace FILE shows at least N threads created, and events of their own
# (beyond thread_begin/thread_end/thread_name) from every one of them
assert_workers() {
	local got
	got=$(ptt-dump -n "$1" | awk '
		$5 == "thread_create" { for (i = 6; i <= NF; i++) if ($i ~ /^child=[1-9]/) { child[substr($i, 7)] = 1; n++ } }
		$5 != "thread_begin" && $5 != "thread_end" && $5 != "thread_name" { own[$3]++ }
		END { busy = 0; for (t in child) if (own[t] > 0) busy++; print n + 0, busy }')
	[ "${got% *}" -ge "$2" ] || { echo "$1: ${got% *} threads created, wanted at least $2"; return 1; }
	[ "${got#* }" -eq "${got% *}" ] || { echo "$1: only ${got#* } of ${got% *} created threads have events"; return 1; }
}

# "joined joiner" tids, one line per successful join in a trace, sorted
trace_join_pairs() {
	ptt-dump -n "$1" | awk '($5=="thread_join" || $5=="thread_tryjoin") && / ret=0 / {
		for (i = 6; i <= NF; i++) if ($i ~ /^target=/) { sub(/^target=/, "", $i); print $i, $3 } }' | sort
}

# "from to" tids of the join links in a Paje file (containers are named "TID [NAME]"), sorted
paje_join_pairs() {
	pj_dump "$1" | awk -F', ' '$1=="Link" && $3=="Thread join" { split($8, a, " "); split($9, b, " "); print a[1], b[1] }' | sort
}

# the join links of a Paje file are exactly the successful joins of its trace
assert_join_links() {
	trace_join_pairs "$1" >"$BATS_TEST_TMPDIR/joins.trace"
	paje_join_pairs "$2" >"$BATS_TEST_TMPDIR/joins.paje"
	diff "$BATS_TEST_TMPDIR/joins.trace" "$BATS_TEST_TMPDIR/joins.paje" || { echo "join links of $2 differ from the joins of $1"; return 1; }
}

# every holders variable of a Paje file (from ptt-paje --objects) is back to 0 in its last interval
assert_holders_end_at_zero() {
	pj_dump "$1" | awk -F', ' '$1=="Variable" && $3 ~ /holders$/ { k = $2 " / " $3; if (!(k in t) || $4 + 0 >= t[k]) { t[k] = $4 + 0; last[k] = $7 + 0 } }
		END { for (k in last) if (last[k] != 0) { print "still held at the end: " k " = " last[k]; bad = 1 }
		      exit bad }'
}

# trace NAME LINE...: a text trace of these events in $BATS_TEST_TMPDIR/NAME.txt (process 10, its main thread 10)
trace() {
	local f="$BATS_TEST_TMPDIR/$1.txt"
	shift
	{ echo '# ptt-trace 1'; echo '0.000000001 10 10 pthread process_begin ppid=1 cmd="x"'; printf '%s\n' "$@"; } >"$f"
}

# ---- waiting for a program under ptt-record: on a state it reached, never for a fixed time
# (a loaded machine or an ASan build may take seconds where a quiet one takes milliseconds);
# each gives up after 60 s with a message, and each sets the pid it found in $prog

# wait_program REC: the program the recorder REC (a background ptt-record) runs, in $prog.
# ptt-record installs its signal handlers before it forks: from then on a signal sent to
# it is passed on and noted in the trace.
wait_program() {
	local n=0
	prog=
	until prog=$(pgrep -o -P "$1") && [ -n "$prog" ]; do
		[ $((n += 1)) -le 600 ] || { echo "ptt-record $1 started no program in 60 s"; return 1; }
		kill -0 "$1" 2>/dev/null || { echo "ptt-record $1 ended before its program was seen"; return 1; }
		sleep 0.1
	done
}

# record_stopped ROUNDS [OPTION...]: ptt-record -q -d -b 4k OPTION... -o $BATS_TEST_TMPDIR/t.ptt of
# contention -t 4 -n ROUNDS -u 0 -v (stdout and stderr in out and err), the recorder stopped (SIGSTOP)
# from before the program's first worker until the program has exited, so that events must be lost
# however fast or slow either side runs (a loaded machine, an ASan build); then continued: its pid in
# $rec, for the caller's wait
record_stopped() {
	local rounds=$1 child
	shift
	rm -f "$BATS_TEST_TMPDIR/go"
	mkfifo "$BATS_TEST_TMPDIR/go"
	# shellcheck disable=SC2016 # expanded by the inner sh
	ptt-record -q -d -b 4k "$@" -o "$BATS_TEST_TMPDIR/t.ptt" -- \
		sh -c 'read -r _ <"$1"; exec "$2" -t 4 -n "$3" -u 0 -v' sh "$BATS_TEST_TMPDIR/go" "$EXAMPLES/contention" "$rounds" \
		>"$BATS_TEST_TMPDIR/out" 2>"$BATS_TEST_TMPDIR/err" 3>&- &
	rec=$!
	wait_program "$rec" || return 1
	child=$prog
	kill -STOP "$rec"
	echo go >"$BATS_TEST_TMPDIR/go"
	# the stopped recorder cannot reap its child: wait for the zombie (60 s at most)
	for _ in $(seq 600); do
		[ "$(awk '{ print $3 }' "/proc/$child/stat" 2>/dev/null)" = Z ] && break
		sleep 0.1
	done
	kill -CONT "$rec"
}

# wait_size REC FILE BYTES: until the trace FILE that REC writes holds BYTES: the recorder
# has written that much of the running program's events (a size, not a time, so that
# the trace is about as long on any machine and under any load); its program in $prog
wait_size() {
	local n=0
	wait_program "$1" || return 1
	while [ "$(stat -c %s "$2" 2>/dev/null || echo 0)" -lt "$3" ]; do
		[ $((n += 1)) -le 1200 ] || { echo "$2: less than $3 bytes after 60 s"; return 1; }
		sleep 0.05
	done
}

# assert_killed_trace REC FILE: ptt-record REC of prodcons, its program SIGKILLed, ends 137 and
# leaves FILE whole: a thread killed between reserving a record and committing it loses that one
# record, counted and said (rec_lost of its stream, count 1), at most one for each of prodcons'
# 5 threads; every other event is there
assert_killed_trace() {
	local st=0 lost
	wait "$1" || st=$?
	[ "$st" -eq 137 ]
	run -0 ptt-dump --check "$2"
	[[ "$output" =~ " 0 damaged, "([0-9]+)" lost, 0 out of order, 0 violations: ok"$ ]]
	lost=${BASH_REMATCH[1]}
	[ "$lost" -le 5 ]
	# some MB of text: grep it from a file, not through bats' run
	ptt-dump -n "$2" >"$BATS_TEST_TMPDIR/killed.txt"
	[ "$(grep -c ' mutex_lock ' "$BATS_TEST_TMPDIR/killed.txt")" -gt 1000 ]
	grep -q 'rec_stop status=0 signal=9' "$BATS_TEST_TMPDIR/killed.txt"
	[ "$(grep -c ' rec_lost stream=[1-9][0-9]* count=1 ' "$BATS_TEST_TMPDIR/killed.txt")" -eq "$lost" ]
}

# wait_cpu REC SECONDS: until the program of REC has run SECONDS of processor time, all its
# threads together (when nothing is written before the end: --flight); its pid in $prog
wait_cpu() {
	local n=0 hz ticks
	wait_program "$1" || return 1
	hz=$(getconf CLK_TCK)
	while :; do
		# utime and stime, fields 14 and 15: counted after the command's closing parenthesis
		ticks=$(sed 's/.*) //' "/proc/$prog/stat" 2>/dev/null | awk '{ print $12 + $13 }')
		[ -n "$ticks" ] || { echo "program $prog of ptt-record $1 is gone"; return 1; }
		awk -v t="$ticks" -v hz="$hz" -v s="$2" 'BEGIN { exit !(t >= s * hz) }' && return 0
		[ $((n += 1)) -le 600 ] || { echo "program $prog ran less than $2 s in 60 s"; return 1; }
		sleep 0.1
	done
}

# wait_blocked REC THREADS: until the program of REC has THREADS threads or more and every one
# sleeps in a futex wait (a lock, a join, a semaphore), seen 3 times 0.1 s apart: it can no
# longer move, so what the trace ends with is its deadlock; its pid in $prog
wait_blocked() {
	local n=0 seen=0 t count all
	wait_program "$1" || return 1
	while [ "$seen" -lt 3 ]; do
		[ $((n += 1)) -le 600 ] || { echo "program $prog not blocked after 60 s"; return 1; }
		[ -d "/proc/$prog" ] || { echo "program $prog ended instead of blocking"; return 1; }
		sleep 0.1
		count=0 all=1
		for t in /proc/"$prog"/task/*; do
			[[ "$(cat "$t/wchan" 2>/dev/null)" == *futex* ]] || all=0
			count=$((count + 1))
		done
		if [ "$all" = 1 ] && [ "$count" -ge "$2" ]; then seen=$((seen + 1)); else seen=0; fi
	done
}

# a failed test leaves no recorder $rec or program of it running behind it: a file whose
# tests start ptt-record in the background calls this from its teardown
stop_recorder_left() {
	[ -z "${BATS_TEST_COMPLETED:-}" ] && [ -n "${rec:-}" ] || return 0
	pkill -KILL -P "$rec" 2>/dev/null || true
	kill -KILL "$rec" 2>/dev/null || true
}

# record_deadlocked: $BATS_TEST_TMPDIR/t.ptt of examples/deadlock, stopped by SIGINT (through
# ptt-record) once the pair waits for each other's lock and main joins one of them
record_deadlocked() {
	ptt-record -q -o "$BATS_TEST_TMPDIR/t.ptt" -- "$EXAMPLES/deadlock" 2>/dev/null 3>&- &
	local rec=$!
	wait_blocked "$rec" 3
	kill -INT "$rec"
	wait "$rec" || true
}

# ctrace NAME: the lines of stdin, "US TID EVENT ARGS..." (US in microseconds), as the text trace
# $BATS_TEST_TMPDIR/NAME.txt of process 10, begun at 0 by its thread 10 (rec_* events: the recorder's);
# the hand-written traces of the critical path's tests (34, 81, 84)
ctrace() {
	awk 'BEGIN { print "# ptt-trace 1"; print "0.000000000 10 10 pthread process_begin ppid=1 cmd=\"x\"" }
	     NF { ns = $1 * 1000; src = $3 ~ /^rec_/ ? "recorder" : "pthread"
		  $1 = sprintf("%d.%09d 10", ns / 1e9, ns % 1e9); $2 = $2 " " src; print }' >"$BATS_TEST_TMPDIR/$1.txt"
}

# record_contended PROG ARGS...: record as record() does, again (up to 6 runs) until some thread waited
# for a lock: on a loaded machine a short run of prodcons can have its threads never meet at the lock
record_contended() {
	local try
	for try in 1 2 3 4 5 6; do
		record "$@"
		[ -n "$(ptt-stat --folded=locks "$BATS_TEST_TMPDIR/t.ptt")" ] && return 0
	done
	echo "no lock wait in 6 runs of $*" >&2
	return 1
}

#!/usr/bin/env bats
# Every rotated file (-m) and every flight snapshot stands alone: names in force at its head, no false "cut short".
bats_require_minimum_version 1.5.0
load helpers

teardown() {
	if [ -n "${rec:-}" ]; then
		pkill -KILL -P "$rec" 2>/dev/null || true
		kill -KILL "$rec" 2>/dev/null || true
	fi
}

# the names ptt-stat prints: objects, call sites, threads (one a line, sorted, without the * of a gap)
stat_names() {
	ptt-stat -n 0 -S 5 "$@" 2>/dev/null | awk '
		/^OBJECT / { o = 1; next } /^ +PID +TID / { o = 0; t = 1; next } NF == 0 { t = 0 }
		o && $2 ~ /^(mutex|cond|rwlock|sem|barrier|spin)$/ { sub(/\*$/, "", $1); print "object " $1 }
		o && /^  site / { sub(/.* - /, ""); print "site " $0 }
		t && $1 ~ /^[0-9]+$/ && $2 ~ /^[0-9]+$/ { print "thread " $3 }' | sort -u
}

@test "-m: any one rotated file, and the kept set, name locks, sites and threads as the unrotated trace does" {
	T=$BATS_TEST_TMPDIR
	ptt-record -q -o "$T/u.ptt" -- "$EXAMPLES/lossy_order" 40000 >/dev/null
	run -0 --separate-stderr ptt-record -m 256k -f 3 -o "$T/r.ptt" -- "$EXAMPLES/lossy_order" 40000
	files=("$T"/r.ptt.*)
	[ "${#files[@]}" -eq 3 ]
	# the summary keeps the kept files' figures apart from the whole run's
	[[ "${stderr_lines[0]}" == *" events and 0 lost in the kept files; in the whole run "*" events, 0 lost, "* ]]
	stat_names "$T/u.ptt" >"$T/u.names"
	grep -qx 'object lock_a' "$T/u.names"
	grep -qx 'thread sequential' "$T/u.names"
	for f in "${files[@]}" "${files[*]}"; do
		# shellcheck disable=SC2086
		stat_names $f >"$T/r.names"
		# the last file may hold nothing but the recorder's notes; the others thousands of rounds
		if [ "$f" != "${files[2]}" ]; then
			grep -qx 'object lock_a' "$T/r.names" || { echo "$f: lock_a not named"; cat "$T/r.names"; return 1; }
			grep -qx 'thread sequential' "$T/r.names" || { echo "$f: thread not named"; cat "$T/r.names"; return 1; }
		fi
		# no name the unrotated trace does not print (no bare address, no unnamed thread)
		comm -23 "$T/r.names" "$T/u.names" >"$T/extra"
		[ ! -s "$T/extra" ] || { echo "$f: names the unrotated trace does not print:"; cat "$T/extra"; return 1; }
	done
	# a middle file alone is a part, not a trace cut short; it checks clean, as does the set
	run -0 --separate-stderr ptt-dump --info "${files[1]}"
	[[ "$output" == *$'\nstart:      mid-run, part '*$'what came before is unknown\nlost:       0 in what was read (a part of a rotated recording, continued in '"${files[2]})"* ]]
	[ "$stderr" = "" ]
	run -0 --separate-stderr ptt-dump --check "${files[1]}"
	[[ "$output" == *" 0 violations: ok" ]]
	run -0 --separate-stderr ptt-stat "${files[1]}"
	[ "$stderr" = "" ]
	[[ "$output" == *"loss: events may be missing in 1 stretch where findings cannot be verified:"* ]]
	[[ "$output" == *"starts mid-run: the parts before are not read"* ]]
	# the set, in order: each head is skipped, nothing is lost, the states go on from file to file
	run -0 --separate-stderr ptt-dump --check "${files[@]}"
	[[ "$output" == *" 0 violations: ok" ]]
	[ "$(ptt-dump "${files[@]}" | grep -c ' pthread process_begin ')" -eq 1 ]
}

@test "-m: a file alone reads the stacks and Python code defined in the files before it, and the waits open at its start keep theirs" {
	[ -x /usr/bin/python3.11 ] || skip "/usr/bin/python3.11 not installed"
	T=$BATS_TEST_TMPDIR
	# four threads take one Lock in turn (its waits have the update_stats stack, met in the first file)
	# while a fifth fills the files with its own lock's events
	cat >"$T/rot.py" <<'PY'
import threading, time
stats_lock = threading.Lock()
def update_stats(rounds):
    for _ in range(rounds):
        with stats_lock:  # LOCK-SITE
            time.sleep(0.01)
def noise():
    l = threading.Lock()
    for i in range(30000):
        with l:
            pass
ts = [threading.Thread(target=update_stats, args=(6,)) for _ in range(4)] + [threading.Thread(target=noise)]
for t in ts: t.start()
for t in ts: t.join()
PY
	run -0 --separate-stderr ptt-record -q -m 64k -o "$T/r.ptt" -- /usr/bin/python3.11 "$T/rot.py"
	files=("$T"/r.ptt.*)
	[ "${#files[@]}" -ge 3 ]
	line=$(grep -n '# LOCK-SITE$' "$T/rot.py" | cut -d: -f1)
	named=0
	for f in "${files[@]:1}"; do
		run -0 --separate-stderr ptt-stat "$f"
		[ -z "$stderr" ]
		run ! grep -q 'python code not described' <<<"$output"
		# the waits open where a part ends go on in the next: not "blocked for ever"
		if [ "$f" != "${files[-1]}" ]; then
			run ! grep -q 'blocked for ever' <<<"$output"
			if grep -q ' still open ' <<<"$output"; then
				grep -q " still open where this part of a rotated recording ends (it continues in " <<<"$output"
			fi
		fi
		# every wait on the Lock in this file, those told at its head included, at its Python line
		run -0 --separate-stderr ptt-dump --human "$f"
		waits=$(grep -E ' waits on semaphore ' <<<"$output" | grep -vE 'at rot.py:[0-9]+ in <module>|python3.11\+0x' || true)
		if [ -n "$waits" ]; then
			run ! grep -v " at rot.py:$line in update_stats " <<<"$waits"
			named=$((named + 1))
		fi
	done
	[ "$named" -ge 1 ]
}

@test "-m: a part missing between the files read is said, its events counted as lost" {
	T=$BATS_TEST_TMPDIR
	ptt-record -q -m 256k -o "$T/r.ptt" -- "$EXAMPLES/lossy_order" 40000 >/dev/null
	[ -e "$T/r.ptt.0004" ]
	run -1 --separate-stderr ptt-stat "$T/r.ptt.0001" "$T/r.ptt.0003"
	[[ "$stderr" == *"ptt-stat: $T/r.ptt.0003: offset "*": part 3 follows part 1: the events of the parts between are lost"* ]]
	[[ "$output" == *"loss: events may be missing in 1 stretch"*"any thread, "*"damaged or missing input"* ]]
	# after the gap the names of the part are still taken: every lock is named
	! grep -q '^0x' <<<"$output"
}

@test "-m: a busy program's files end near their size, not a pass of the recorder past it" {
	T=$BATS_TEST_TMPDIR
	# two threads on one mutex, flat out for 1-2 s: the recorder's passes each take hundreds of KiB;
	# a file is cut at the first point after its size where the recorder gives the rings room
	# back (ptt-record(1): up to two 64 KiB blocks more), the last 4 files kept (-f)
	run -0 --separate-stderr ptt-record -q -m 64k -f 4 -o "$T/r.ptt" -- "$EXAMPLES/busy_pair" 2
	[ "$stderr" = "" ]
	files=("$T"/r.ptt.*)
	[ "${#files[@]}" -eq 4 ]
	[[ "${files[0]}" != *".0001" ]] # many more were written
	for f in "${files[@]:0:3}"; do
		size=$(stat -c %s "$f")
		[ "$size" -ge 65536 ] && [ "$size" -le $((65536 + 2 * 65536 + 4096)) ] || { echo "$f: $size bytes"; return 1; }
	done
	for f in "${files[@]}"; do # no block allocated ahead of the writes is left past a file's end
		read -r size blocks <<<"$(stat -c '%s %b' "$f")"
		[ "$((blocks * 512))" -le $((size + 4096)) ] || { echo "$f: $size bytes in $blocks blocks"; return 1; }
	done
	run -0 --separate-stderr ptt-dump --check "${files[@]}"
	[[ "$output" == *" 0 damaged, "*" 0 violations: ok" ]]
}

@test "-m: a file alone starts with the locks held and the waits open at its start, as the set has them" {
	T=$BATS_TEST_TMPDIR
	run -0 --separate-stderr ptt-record -q -m 64k -o "$T/r.ptt" -- "$EXAMPLES/held_across" 40000
	files=("$T"/r.ptt.*)
	[ "${#files[@]}" -ge 3 ]
	ptt-dump -n "${files[@]}" >"$T/all.txt"
	main=$(awk '$5 == "process_begin" { print $3; exit }' "$T/all.txt")
	outer=$(ptt-stat --csv "${files[@]}" | awk -F, '$2 == "outer" { print $1; exit }') # named when read
	# when the sleeper waits on its condition and the waiter for outer, in the whole set: the files
	# that start after both have both open (those before start within the program's setup)
	read -r slept sleeper < <(awk '$5 == "cond_wait_req" && $3 != "'"$main"'" { print $1, $3; exit }' "$T/all.txt")
	read -r asked waiter < <(awk '$5 == "mutex_lock_req" && $3 != "'"$main"'" && $6 == "mutex='"$outer"'" { print $1, $3; exit }' "$T/all.txt")
	[ -n "$main" ] && [ -n "$outer" ] && [ -n "$sleeper" ] && [ -n "$waiter" ]
	checked=0
	for f in "${files[@]:1:${#files[@]}-2}"; do
		ptt-dump -n "$f" >"$T/one.txt"
		start=$(awk '{ print $1; exit }' "$T/one.txt")
		awk -v a="$asked" -v b="$slept" -v s="$start" 'BEGIN { exit !(a < s && b < s) }' || continue
		! grep -q ' pthread cond_signal ' "$T/one.txt" || continue # the program's end: the waits end in it
		# at the file's start, stamped with it: main's hold of outer, sleeper's cond wait (its gate
		# given up), the waiter's request for outer; and main's hold of inner if it began within a round
		awk -v t="$start" '$1 == t && $5 ~ /^(mutex_lock|mutex_lock_req|cond_wait_req|cond_wait)$/ { print $3, $5, $6 }' \
			"$T/one.txt" >"$T/head.txt"
		grep -vx "$main mutex_lock mutex=0x[0-9a-f]*" "$T/head.txt" >"$T/head.rest" || true
		printf '%s\n' "$sleeper cond_wait_req cond=" "$waiter mutex_lock_req mutex=$outer" >"$T/want"
		sed 's/cond=.*/cond=/' "$T/head.rest" | diff - "$T/want" || { echo "$f: at its start:"; cat "$T/head.txt"; return 1; }
		grep -qx "$main mutex_lock mutex=$outer" "$T/head.txt" || { echo "$f: no hold of outer at its start"; return 1; }
		run -0 --separate-stderr ptt-dump --check "$f"
		[[ "$output" == *" 0 violations: ok" ]]
		run -0 --separate-stderr ptt-deadlock "$f"
		[[ "$output" == *"thread $waiter (waiter) waits since $start s for outer ($outer), held by thread $main"* ]]
		# the lock others waited for longest in this file: outer, though none of its own events is in it
		run -0 --separate-stderr ptt-stat -n 1 -S 0 "$f"
		[[ "${lines[2]}" == "outer"* ]] || { echo "$f: $output"; return 1; }
		if [ "$checked" -eq 0 ]; then # the timeline: from the file's start, the waiter blocked, main holding
			ptt-paje "$f" >"$T/one.paje"
			assert_paje_valid "$T/one.paje"
			assert_vite_clean "$T/one.paje"
			t0=$(printf '%.6f' "$start")
			pj_dump "$T/one.paje" >"$T/one.csv"
			grep -q "^State, $waiter waiter, Thread state, $t0, [0-9.]*, [0-9.]*, [0-9.]*, Blocked on mutex$" "$T/one.csv"
			grep -q "^State, $main held_across, Thread state, $t0, [0-9.]*, [0-9.]*, [0-9.]*, Holding mutex$" "$T/one.csv"
		fi
		checked=$((checked + 1))
	done
	[ "$checked" -ge 1 ]
	# the set in order skips every head: one acquisition of outer by main, and it checks clean
	[ "$(grep -c " $main pthread mutex_lock mutex=$outer " "$T/all.txt")" -eq 1 ]
	run -0 --separate-stderr ptt-dump --check "${files[@]}"
	[[ "$output" == *" 0 violations: ok" ]]
}

# A busy main thread overwrites its process, module and name events within microseconds; a thread
# whose whole ring is younger than the drain's slack was left out (issue 20).  100 snapshots.
@test "--flight: 100 snapshots of a busy 2-thread program each hold both threads, named, and the lock named" {
	T=$BATS_TEST_TMPDIR
	ptt-record -q --flight=64k -o "$T/f.ptt" -- "$EXAMPLES/busy_pair" 300 >/dev/null 2>"$T/rec.err" &
	rec=$!
	sleep 0.3
	# a 101st snapshot, so that the 100th is whole before the program is stopped: a snapshot
	# still being taken when the program dies can miss the threads that die with it
	for i in $(seq 1 101); do
		kill -USR1 "$rec"
		n=0
		while [ ! -e "$T/f.ptt.$i" ]; do
			[ $((n += 1)) -le 3000 ] || { echo "no snapshot $i after 30 s: $(cat "$T/rec.err")"; return 1; }
			sleep 0.01
		done
	done
	kill -INT "$rec"
	wait "$rec" || true
	rec=
	for i in $(seq 1 100); do
		names=$(ptt-dump --info "$T/f.ptt.$i" | awk '/^ +PID +TID/ { t = 1; next } t && NF == 0 { t = 0 } t { print $6 }' | sort | tr '\n' ' ')
		[ "$names" = "busy_pair worker " ] || { echo "snapshot $i: threads named '$names'"; return 1; }
	done
	for i in 1 50 100; do
		run -0 --separate-stderr ptt-stat -n 1 -S 0 "$T/f.ptt.$i"
		# the first row of the LOCKS table (after its title and heading): the lock, by its name
		[ "${lines[0]%%:*}" = "LOCKS" ] && [[ "${lines[2]}" == "hot"[*\ ]* ]] || { echo "snapshot $i: $output"; return 1; }
		run -0 ptt-dump --check "$T/f.ptt.$i"
	done
}

# A trace that starts mid-run without the state at its head (a flight snapshot, a file of an older
# recorder, a hand-written part): what it cannot know is said, never taken for a finding.
@test "a trace without the state at its start says the locks it saw released first, and claims no waiter is stuck" {
	f=$BATS_TEST_TMPDIR/mid.txt
	printf '%s\n' '# ptt-trace 1' '# part 2' \
		'0.000000002 10 11 pthread mutex_unlock mutex=0x10 ret=0' \
		'0.000000003 10 11 pthread mutex_unlock mutex=0x20 ret=0' \
		'0.000000004 10 12 pthread mutex_lock mutex=0x10 ret=0' \
		'0.000000005 10 12 pthread mutex_unlock mutex=0x10 ret=0' \
		'0.000000006 10 13 pthread mutex_lock_req mutex=0x30' >"$f"
	run -0 --separate-stderr ptt-stat -S 0 "$f"
	[ -z "$stderr" ]
	[[ "$output" == *$'\n'"2 locks were released before any acquisition in the trace (held at its start, or taken where events were lost): their holds before are not counted"* ]]
	# a wait for a lock nobody is seen holding: its holder may have taken it before the start, so the
	# thread blocked for ever is unverifiable (ptt-deadlock's exit status 5), not a finding (6)
	run -5 --separate-stderr ptt-deadlock "$f"
	[ -z "$stderr" ]
	[[ "$output" == *$'\n'"  (unverifiable: events were lost, where a holder may have taken the lock)"$'\n'"  thread 13 waits since 0.000000006 s for 0x30, which no thread the trace shows can end (events were lost: see loss)"$'\n'* ]]
	[[ "$output" != *"owners of futex-based locks"* ]] # a pthread mutex's owner would be in the trace
	[ "${lines[-1]}" = "no verified lock-order inversion and no verified deadlock: 1 thread was blocked for ever where events were lost" ]
	run -0 --separate-stderr ptt-dump --check "$f"
	[[ "$output" == *" 0 violations: ok" ]]
	# the same trace from its beginning: nothing was lost, the wait is for a lock nobody holds
	sed -i '/^# part 2$/d; 2i 0.000000001 10 10 pthread process_begin ppid=1 cmd="x"' "$f"
	# ... and the thread waiting for it at the trace's end is blocked for ever: exit status 6
	run -6 --separate-stderr ptt-deadlock "$f"
	[[ "$output" == *"thread 13 waits since 0.000000006 s for 0x30, which no live thread can end"* ]]
	[[ "$output" != *"owners of futex-based locks"* ]]
	run -0 --separate-stderr ptt-stat -S 0 "$f"
	[[ "$output" == *"2 locks were released before any acquisition in the trace"* ]]
}

#!/usr/bin/env bats
# ptt-record --flight: the last events of each thread, written at the end, on a kill, on SIGUSR1.
bats_require_minimum_version 1.5.0
load helpers

# wait for a file to appear, 60 s at most (a recorder that died never writes it)
wait_for_file() {
	local n=0
	while [ ! -e "$1" ]; do
		[ $((n += 1)) -le 600 ] || { echo "no $1 after 60 s; recorder: $(cat "$BATS_TEST_TMPDIR/rec.err" 2>/dev/null)"; return 1; }
		sleep 0.1
	done
}

# wait for a line in a file, 60 s at most
wait_for_line() {
	local n=0
	until grep -qx "$2" "$1" 2>/dev/null; do
		[ $((n += 1)) -le 600 ] || { echo "no '$2' in $1 after 60 s; recorder: $(cat "$BATS_TEST_TMPDIR/rec.err" 2>/dev/null)"; return 1; }
		sleep 0.1
	done
}

# a failed test leaves no recorder or program running behind it
teardown() {
	if [ -n "${rec:-}" ]; then
		pkill -KILL -P "$rec" 2>/dev/null || true
		kill -KILL "$rec" 2>/dev/null || true
	fi
}

# every thread of the flight recording t holds at most SIZE bytes of events (24 bytes each at least)
assert_bounded() {
	local file=$1 size=$2
	run -0 --separate-stderr ptt-dump --info "$file"
	echo "$output" | awk -v max=$((size / 24)) '
		/^ *PID +TID/ { t = 1; next } t && NF == 0 { t = 0 }
		t { n++; if ($3 > max) { print "thread " $2 ": " $3 " events > " max; bad = 1 } }
		END { exit bad || n == 0 }'
}

@test "--flight usage errors exit 2" {
	run -2 --separate-stderr ptt-record --flight=1000 -- true
	[[ "$stderr" == *"--flight: size must be a power of two"* ]]
	run -2 --separate-stderr ptt-record --flight -d -- true
	[[ "$stderr" == *"--flight: writes one file at the end"* ]]
	run -2 --separate-stderr ptt-record --flight -m 1M -- true
	[[ "$stderr" == *"--flight: writes one file at the end"* ]]
	run -2 --separate-stderr ptt-record --flight -o - -- true
	[[ "$stderr" == *"--flight: writes one file at the end"* ]]
}

@test "--flight: a program that ends keeps every event when they fit" {
	run -0 --separate-stderr ptt-record -q --flight -o "$BATS_TEST_TMPDIR/t.ptt" -- "$EXAMPLES/many_threads" 300 10
	[ "$output" = "threads 300 alive at once, locks 3000" ]
	[ "$stderr" = "" ]
	run -0 --separate-stderr ptt-dump --info "$BATS_TEST_TMPDIR/t.ptt"
	[[ "$output" == *"mode        flight"* ]]
	[ "$(echo "$output" | awk '$1 == "thread_begin" {print $2}')" -eq 301 ]
	[ "$(echo "$output" | awk '$1 == "mutex_lock" {print $2}')" -eq 3000 ]
	run -0 --separate-stderr ptt-dump "$BATS_TEST_TMPDIR/t.ptt"
	[ "$(echo "$output" | grep -c '^# flight_thread .* whole$')" -eq 301 ]
	run -0 --separate-stderr ptt-dump --check "$BATS_TEST_TMPDIR/t.ptt"
	[[ "$output" == *" 0 damaged, 0 lost, 0 out of order, 0 violations: ok" ]]
}

@test "--flight: a SIGKILLed program leaves its last events, bounded by SIZE, that pass --check" {
	ptt-record -q --flight=64k -o "$BATS_TEST_TMPDIR/t.ptt" -- "$EXAMPLES/prodcons" -n 100000000 >/dev/null 2>"$BATS_TEST_TMPDIR/rec.err" 3>&- &
	rec=$!
	# 0.3 s of the program's processor time: millions of events, each worker's 64k turned
	# over many times, on a loaded machine as on a quiet one (nothing is written before the end)
	wait_cpu "$rec" 0.3
	kill -KILL "$prog"
	st=0
	wait "$rec" || st=$?
	[ "$st" -eq 137 ]
	run -0 --separate-stderr ptt-dump --check "$BATS_TEST_TMPDIR/t.ptt"
	[[ "$output" == *" 0 damaged, 0 lost, 0 out of order, 0 violations: ok" ]]
	assert_bounded "$BATS_TEST_TMPDIR/t.ptt" 65536
	run -0 --separate-stderr ptt-dump "$BATS_TEST_TMPDIR/t.ptt"
	# the workers' oldest events were overwritten: their histories are cut, and the file says from when
	[ "$(echo "$output" | grep -c '^# flight_thread .* cut$')" -ge 2 ]
	[[ "$output" == *"# flight_from "* ]]
	[[ "$output" == *" mutex_lock "* ]]
	[[ "$output" == *"# exit_status 137"* ]]
	run -0 --separate-stderr ptt-paje "$BATS_TEST_TMPDIR/t.ptt"
	echo "$output" >"$BATS_TEST_TMPDIR/t.paje"
	assert_paje_valid "$BATS_TEST_TMPDIR/t.paje"
	assert_vite_clean "$BATS_TEST_TMPDIR/t.paje"
}

@test "--flight: SIGUSR1 writes a snapshot that passes --check while the program goes on" {
	ptt-record -q --flight=64k -o "$BATS_TEST_TMPDIR/t.ptt" -- "$EXAMPLES/prodcons" -n 100000000 >/dev/null 2>"$BATS_TEST_TMPDIR/rec.err" 3>&- &
	rec=$!
	wait_cpu "$rec" 0.3 # every worker past the start barrier, and busy
	kill -USR1 "$rec"
	wait_for_file "$BATS_TEST_TMPDIR/t.ptt.1"
	pkill -0 -P "$rec" # the program still runs
	run -0 --separate-stderr ptt-dump --check "$BATS_TEST_TMPDIR/t.ptt.1"
	[[ "$output" == *" 0 damaged, 0 lost, 0 out of order, 0 violations: ok" ]]
	# a snapshot of a live program holds what every ring kept at one instant: every
	# thread (main, 2 producers, 2 consumers) is in it, however slowly the recorder
	# copies (ASan) or however long it is preempted while 64k rings turn over in
	# milliseconds: the writers wait rather than overwrite until the copy is done
	assert_bounded "$BATS_TEST_TMPDIR/t.ptt.1" 65536
	run -0 --separate-stderr ptt-dump -n "$BATS_TEST_TMPDIR/t.ptt.1"
	[ "$(echo "$output" | awk '$4 != "recorder" {print $3}' | sort -u | wc -l)" -eq 5 ]
	[ "$(echo "$output" | awk '$5 == "mutex_lock"' | wc -l)" -gt 100 ]
	# the holds told where cut histories begin (no site): the queue's lock, once a thread at most
	# (its contended requests, its condition waits give up nothing held before)
	[ -z "$(echo "$output" | awk '$5 == "mutex_lock" && $NF == "site=0x0" { print $3 }' | sort | uniq -d)" ]
	run -0 --separate-stderr ptt-dump --info "$BATS_TEST_TMPDIR/t.ptt.1"
	[[ "$output" == *"mode        flight"* ]]
	[[ "$output" != *"exit_status"* ]]
	kill -USR1 "$rec"
	wait_for_file "$BATS_TEST_TMPDIR/t.ptt.2"
	kill -TERM "$rec"
	st=0
	wait "$rec" || st=$?
	[ "$st" -eq 143 ]
	run -0 --separate-stderr ptt-dump --check "$BATS_TEST_TMPDIR/t.ptt.2"
	[[ "$output" == *" 0 violations: ok" ]]
	run -0 --separate-stderr ptt-dump --check "$BATS_TEST_TMPDIR/t.ptt"
	[[ "$output" == *" 0 damaged, 0 lost, 0 out of order, 0 violations: ok" ]]
}

@test "--flight: churning threads get rings back and nothing hangs" {
	run -0 --separate-stderr ptt-record -q --flight=16k -o "$BATS_TEST_TMPDIR/t.ptt" -- "$EXAMPLES/churn" 2000 10
	[ "$output" = "threads 2000 locks 2000" ]
	run -0 --separate-stderr ptt-dump --check "$BATS_TEST_TMPDIR/t.ptt"
	[[ "$output" == *" 0 damaged, 0 lost, 0 out of order, 0 violations: ok" ]]
	run -0 --separate-stderr ptt-record -q -t 8 --flight=16k -o "$BATS_TEST_TMPDIR/t.ptt" -- "$EXAMPLES/churn" 500 10
	[ "$output" = "threads 500 locks 500" ]
	run -0 --separate-stderr ptt-dump --check "$BATS_TEST_TMPDIR/t.ptt"
	[[ "$output" == *" 0 violations: ok" ]]
}

@test "--flight: threads blocked since before the busy threads' histories begin are kept, waiting and deadlocked" {
	# the pair deadlocks first; then two threads turn their 16k rings over many times
	ptt-record -q --flight=16k -o "$BATS_TEST_TMPDIR/t.ptt" -- "$EXAMPLES/deadlock" 20000 >"$BATS_TEST_TMPDIR/out" 2>"$BATS_TEST_TMPDIR/rec.err" 3>&- &
	rec=$!
	wait_for_line "$BATS_TEST_TMPDIR/out" "busy rounds 40000"
	kill -INT "$rec" # forwarded to the program
	st=0
	wait "$rec" || st=$?
	[ "$st" -eq 130 ]
	run -0 --separate-stderr ptt-dump "$BATS_TEST_TMPDIR/t.ptt"
	[ "$stderr" = "" ]
	echo "$output" >"$BATS_TEST_TMPDIR/t.txt"
	# the busy threads' histories are cut and begin after the pair's last events; the pair and main are whole
	[ "$(grep -c '^# flight_thread .* cut$' "$BATS_TEST_TMPDIR/t.txt")" -eq 2 ]
	[ "$(grep -c '^# flight_thread .* whole$' "$BATS_TEST_TMPDIR/t.txt")" -eq 3 ]
	from=$(awk '$2 == "flight_from" { print $3 }' "$BATS_TEST_TMPDIR/t.txt")
	# the pair's two requests (the busy threads' own contended requests on busy_lock come after from)
	awk -v from="$from" '$5 == "mutex_lock_req" && / # worker\+/ { n++; split($1, t, "."); if (t[1] * 1e9 + t[2] >= from) bad = 1 }
		END { exit !(n == 2 && !bad) }' "$BATS_TEST_TMPDIR/t.txt"
	run -0 --separate-stderr ptt-dump --check "$BATS_TEST_TMPDIR/t.ptt"
	[[ "$output" == *" 0 damaged, 0 lost, 0 out of order, 0 violations: ok" ]]
	run -3 --separate-stderr ptt-deadlock "$BATS_TEST_TMPDIR/t.ptt"
	[ "$stderr" = "" ]
	[[ "$output" == *"deadlock: threads blocked in a cycle at the end of the trace"* ]]
	[[ "$output" == *"for left (0x"*"held by thread"* ]]
	[[ "$output" == *"for right (0x"*"held by thread"* ]]
	run -0 --separate-stderr ptt-stat "$BATS_TEST_TMPDIR/t.ptt"
	[[ "$output" == *"2 waits were still open at the end of the trace"* ]]
	# each taken once, and asked for once more, for ever (a call made: among ACQUIRED, contended)
	[ "$(echo "$output" | awk '$1 == "left" || $1 == "right" { print $2, $3, $4 }')" = "$(printf 'mutex 2 1\nmutex 2 1')" ]
	# ptt-paje: each of the pair holds its lock, then is blocked on the other's until the end
	run -0 --separate-stderr ptt-paje "$BATS_TEST_TMPDIR/t.ptt"
	echo "$output" >"$BATS_TEST_TMPDIR/t.paje"
	# (the busy threads may wait on busy_lock too, at deadlock.c:48: those are not the pair's)
	[ "$(grep -c '^15 [0-9.]* ST_Thread T[0-9]* MW .*deadlock.c:38' "$BATS_TEST_TMPDIR/t.paje")" -eq 2 ]
	[ "$(grep -c '^15 [0-9.]* ST_Thread T[0-9]* MH .*deadlock.c:' "$BATS_TEST_TMPDIR/t.paje")" -ge 2 ]
	assert_paje_valid "$BATS_TEST_TMPDIR/t.paje"
	assert_vite_clean "$BATS_TEST_TMPDIR/t.paje"
}

# A lock taken before a cut thread's retained history begins and released in it (issue 20): the
# recording tells the hold where that history begins, as a rotated file's head tells the holds in
# force, so that every reader shows the holder holding it there and the waiter waiting for it.
@test "--flight: a lock held since before a thread's history and released in it is held from its start" {
	T=$BATS_TEST_TMPDIR
	# holder takes held, turns its 16k ring over (20000 rounds of busy), waiter then blocks on
	# held, holder lets it go; the program waits for the snapshot before it ends
	ptt-record -q --flight=16k -o "$T/f.ptt" -- "$EXAMPLES/flight_held" 20000 "$T/f.ptt.1" >"$T/out" 2>"$T/rec.err" 3>&- &
	rec=$!
	wait_for_line "$T/out" "counter 20001"
	kill -USR1 "$rec"
	wait_for_file "$T/f.ptt.1"
	wait "$rec"
	rec=
	for f in "$T/f.ptt.1" "$T/f.ptt"; do # the snapshot, and the recording written at the end
		ptt-dump -n "$f" >"$T/t.txt"
		# holder: the one thread whose history is cut (its name may be gone with it: not looked for)
		read -r pid holder from < <(ptt-dump "$f" | awk '$2 == "flight_thread" && $6 == "cut" { n++; l = $3 " " $4 " " $5 }
			END { if (n == 1) print l }')
		waiter=$(awk '$5 == "thread_name" && $7 == "name=\"waiter\"" { print $3; exit }' "$T/t.txt")
		held=$(awk -v w="$waiter" '$3 == w && $5 == "mutex_lock_req" { sub(/^mutex=/, "", $6); print $6; exit }' "$T/t.txt")
		[ -n "$holder" ] && [ -n "$waiter" ] && [ -n "$held" ] || { echo "$f: $holder $waiter $held $from"; return 1; }
		x=$(printf '%d.%09d' $((from / 1000000000)) $((from % 1000000000)))
		# holder's first record where its history begins: the hold, by holder, stamped there; the only one
		first=$(awk -v t="$holder" -v x="$x" '$3 == t && $1 == x { print; exit }' "$T/t.txt")
		[ "$first" = "$x $pid $holder pthread mutex_lock mutex=$held ret=0 site=0x0" ] || { echo "$f: $first"; return 1; }
		[ "$(grep -c " $holder pthread mutex_lock mutex=$held " "$T/t.txt")" -eq 1 ]
		asked=$(awk -v w="$waiter" -v m="mutex=$held" '$3 == w && $5 == "mutex_lock_req" && $6 == m { print $1 }' "$T/t.txt")
		took=$(awk -v w="$waiter" -v m="mutex=$held" '$3 == w && $5 == "mutex_lock" && $6 == m { print $1 }' "$T/t.txt")
		gave=$(awk -v t="$holder" -v m="mutex=$held" '$3 == t && $5 == "mutex_unlock" && $6 == m { print $1 }' "$T/t.txt")
		awk -v x="$x" -v a="$asked" -v g="$gave" 'BEGIN { exit !(x < a && a < g) }' # waiter asked within the hold
		run -0 --separate-stderr ptt-dump --check "$f"
		[[ "$output" == *" 0 violations: ok" ]]
		# ptt-stat: held taken twice (holder's hold told, waiter's), once contended; its longest hold
		# is holder's, from where its history begins to its release; waiter waited for it most
		hold_us=$(awk -v d=$((10#${gave/./} - from)) 'BEGIN { printf "%.2f", d / 1000 }')
		run -0 --separate-stderr ptt-stat -S 0 "$f"
		[ "$stderr" = "" ]
		row=$(awk '$1 == "held*" { print $2, $3, $4, $13, $16, $17 }' <<<"$output")
		[ "$row" = "mutex 2 1 $hold_us $waiter (waiter)" ] || { echo "$f: held: $row, want hold $hold_us: $output"; return 1; }
		[[ "$output" != *"released before any acquisition"* ]]
		# ptt-paje: holder holds a mutex from where its history begins to its release (held, and
		# busy over it), runs before and after; waiter is blocked on held until holder hands it over
		ptt-paje "$f" >"$T/t.paje"
		assert_paje_valid "$T/t.paje"
		assert_vite_clean "$T/t.paje"
		pj_dump "$T/t.paje" >"$T/t.csv"
		x6=$(printf '%.6f' "$x") g6=$(printf '%.6f' "$gave") a6=$(printf '%.6f' "$asked") t6=$(printf '%.6f' "$took")
		awk -F', ' -v t="$holder" '$1 == "State" && ($2 == t || index($2, t " ") == 1) && $8 != "Holding mutex" { print $4, $5, $8 }' \
			"$T/t.csv" >"$T/not_held"
		[ "$(wc -l <"$T/not_held")" -eq 2 ] &&
			[[ "$(head -1 "$T/not_held")" == *" $x6 Running (outside traced waits)" ]] &&
			[[ "$(tail -1 "$T/not_held")" == "$g6 "*" Running (outside traced waits)" ]] ||
			{ echo "$f: holder not holding ($x6 to $g6):"; cat "$T/not_held"; return 1; }
		grep -q "^State, $waiter waiter, Thread state, $a6, $t6, [0-9.]*, [0-9.]*, Blocked on mutex$" "$T/t.csv"
		grep -q "^Link, flight_held $pid, Mutex hand-off, $t6, $t6, 0.000000, handoff, $holder[^,]*, $waiter waiter, " "$T/t.csv"
	done
	# ptt-deadlock: holder took busy while holding held, by the hold told where its history begins;
	# with waiter taking them the other way round (added as text), that cycle rests on holder's
	# overwritten events: unverifiable (exit 5), no finding
	busy=$(awk -v t="$holder" -v m="mutex=$held" '$3 == t && $5 == "mutex_lock" && $6 != m { sub(/^mutex=/, "", $6); print $6; exit }' "$T/t.txt")
	[ -n "$busy" ]
	ptt-dump "$T/f.ptt.1" | awk -v w="$waiter" -v b="$busy" -v h="$held" '
		$3 == w && $5 == "thread_end" && !done { done = 1
			printf "%s %s %s pthread mutex_lock mutex=%s ret=0 site=0x0\n", $1, $2, w, b
			printf "%s %s %s pthread mutex_lock mutex=%s ret=0 site=0x0\n", $1, $2, w, h
			printf "%s %s %s pthread mutex_unlock mutex=%s ret=0 site=0x0\n", $1, $2, w, h
			printf "%s %s %s pthread mutex_unlock mutex=%s ret=0 site=0x0\n", $1, $2, w, b }
		{ print }' >"$T/cycle.txt"
	run -5 --separate-stderr ptt-deadlock "$T/cycle.txt"
	[ "$stderr" = "" ]
	[[ "$output" == *"unverifiable cycle 1: lock-order cycle of 2 objects in process $pid, not reported as a potential deadlock: events of thread $holder "* ]]
	[[ "$output" == *"no verified lock-order inversion and no verified deadlock: 1 cycle lies where events were lost"* ]]
}

@test "--flight: a wait whose stack was written long before, its frames overwritten, is named past the wrapper" {
	T=$BATS_TEST_TMPDIR
	# the logger waits for stats_lock in flush_log (wrapped_locks.c:67) through my_lock, once a round;
	# before each wait it takes a lock of its own 20000 times, which turns its 64k ring over: its
	# last wait's stack was written, once, in the first round
	run -0 --separate-stderr ptt-record -q --flight=64k -o "$T/f.ptt" -- "$EXAMPLES/wrapped_locks" -c 20000
	[ "$output" = "counter 6" ]
	[ "$stderr" = "" ]
	run -0 --separate-stderr ptt-dump "$T/f.ptt"
	dump=$output
	# the logger's history is cut, and its one retained wait names a stack whose frames come from the head
	read -r logger from < <(awk '$2 == "flight_thread" && $6 == "cut" { n++; t = $4 " " $5 } END { if (n == 1) print t }' <<<"$dump")
	[ -n "$logger" ] && [ -n "$from" ]
	[[ "$dump" == *$'\n# head '[1-9]* ]]
	stack=$(awk -v t="$logger" '$3 == t && $5 == "stack" { sub(/^stack=/, "", $6); s = $6 } END { print s }' <<<"$dump")
	[ -n "$stack" ]
	defined=$(awk -v s="stack=$stack" '$5 == "stack_frames" && $6 == s && $7 == "at=0" { print $1; exit }' <<<"$dump")
	# told in the head (stamped at the snapshot's first record), before the logger's history begins
	[ -n "$defined" ] && awk -v d="$defined" -v f="$from" 'BEGIN { exit !(d * 1e9 < f - 1000) }' ||
		{ echo "stack $stack defined at '$defined', the logger's history from $from ns"; return 1; }
	run -0 --separate-stderr ptt-stat -S 3 --skip-frames='^my_(lock|unlock)$' "$T/f.ptt"
	[ "$stderr" = "" ]
	grep -qE '^ +1 +[0-9.]+ +[0-9.]+ +[0-9.]+  stats_lock +flush_log\+0x[0-9a-f]+ \(wrapped_locks\) at wrapped_locks.c:67$' <<<"$output"
	[[ "$output" != *"whose frames the trace does not hold"* ]]
	# without the head's frames (as the runtime wrote before it kept them) the wait falls back to
	# the wrapper, and ptt-stat says why
	grep -v " stack_frames stack=$stack " <<<"$dump" >"$T/nohead.txt"
	run -0 --separate-stderr ptt-stat -S 3 --skip-frames='^my_(lock|unlock)$' "$T/nohead.txt"
	[ "$stderr" = "" ]
	grep -qE '^ +1 +[0-9.]+ +[0-9.]+ +[0-9.]+  stats_lock +my_lock\+0x[0-9a-f]+ \(wrapped_locks\) at wrapped_locks.c:31$' <<<"$output"
	[[ "$output" == *$'\n1 event has a stack whose frames the trace does not hold (lost, or overwritten in a flight recording): named at its call site'* ]]
}

@test "--flight: the recording written when the program ends names its process, threads and lock, their histories long cut" {
	T=$BATS_TEST_TMPDIR
	# two threads on one mutex for 1-2 s: both 64k rings turn over long before the end, and the
	# process's exit comes before the recording is written
	run -0 --separate-stderr ptt-record -q --flight=64k -o "$T/f.ptt" -- "$EXAMPLES/busy_pair" 2
	[ "$stderr" = "" ]
	run -0 --separate-stderr ptt-dump "$T/f.ptt"
	[ "$(grep -c '^# flight_thread .* cut$' <<<"$output")" -eq 2 ]
	grep -qE '^[0-9.]+ [0-9]+ [0-9]+ pthread module ' <<<"$output"
	names=$(ptt-dump --info "$T/f.ptt" | awk '/^ +PID +TID/ { t = 1; next } t && NF == 0 { t = 0 } t { print $6 }' | sort | tr '\n' ' ')
	[ "$names" = "busy_pair worker " ]
	run -0 --separate-stderr ptt-stat -n 1 -S 0 "$T/f.ptt"
	[ "${lines[0]%%:*}" = "LOCKS" ]
	[[ "${lines[2]}" == "hot"[*\ ]* ]]
	run -0 --separate-stderr ptt-dump --check "$T/f.ptt"
	[[ "$output" == *" 0 damaged, 0 lost, 0 out of order, 0 violations: ok" ]]
}

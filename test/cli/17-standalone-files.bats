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
	[[ "$output" == *"lost:       0 (a part of a rotated recording, continued in ${files[2]})"* ]]
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

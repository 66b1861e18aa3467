#!/usr/bin/env bats
# ptt-record --streams -m (and --streams=coded -m): the parts, read in order, are the run's
# events; each part after the first ends with its state in force (META "head end": the keeper
# writes it once the part before is read back), which a reader of the part alone reads first.
bats_require_minimum_version 1.5.0
load helpers

# the records a part read alone starts with (its head, all stamped at its first time), of the
# program's class: the kinds of event, and the threads' names, one sorted line each (how many
# holds of the main thread's: outer always, inner too when the part began while it held it)
head_shape() {
	ptt-dump -n "$1" 2>/dev/null | awk 'NR == 1 { t = $1 } $1 != t { exit } $4 == "pthread" {
		line = $5; if ($5 == "thread_name") line = line " " $7; print line }' | sort -u
}

# rotated MODE: ptt-record MODE -m 256k of held_across 100000 into r.ptt.NNNN (at least 3 parts),
# the summary in $BATS_TEST_TMPDIR/sum
rotated() {
	ptt-record "$@" -m 256k -o "$BATS_TEST_TMPDIR/r.ptt" -- "$EXAMPLES/held_across" 100000 \
		>/dev/null 2>"$BATS_TEST_TMPDIR/sum"
	parts=("$BATS_TEST_TMPDIR"/r.ptt.*)
	[ "${#parts[@]}" -ge 3 ] || { echo "${#parts[@]} parts"; cat "$BATS_TEST_TMPDIR/sum"; return 1; }
}

@test "--streams -m and --streams=coded -m: the parts read in order are the run's events, nothing damaged, no head twice" {
	for mode in --streams --streams=coded; do
		rm -f "$BATS_TEST_TMPDIR"/r.ptt.*
		rotated "$mode"
		# the summary's count of events is what the parts hold, each once (the heads skipped)
		[[ "$(cat "$BATS_TEST_TMPDIR/sum")" =~ "files): "([0-9]+)" events, 0 lost" ]]
		n=${BASH_REMATCH[1]}
		run -0 --separate-stderr ptt-dump --check "${parts[@]}"
		[ "$output" = "${parts[0]} (and $((${#parts[@]} - 1)) more): $n events, 0 damaged, 0 lost, 0 out of order, 0 violations: ok" ]
		[ -z "$stderr" ]
		# the main thread's inner lock taken once an iteration, whatever the parts
		[ "$(ptt-dump -n "${parts[@]}" | grep -c 'pthread mutex_lock mutex=.* site=.*held_across.c:57')" -eq 100000 ]
		# part 2 says where its head is, and holds it after its events: a snapshot block, the index
		run -0 python3 "$BATS_TEST_DIRNAME/ptt_blocks.py" flags "${parts[1]}"
		[[ "$(printf '%s\n' "$output" | tail -n 2 | tr '\n' ' ')" =~ ^"2 "(8|24)" 2 8 "$ ]]
	done
}

@test "--streams -m: a part read alone starts with the names and holds in force, as in the default mode" {
	rotated
	default=$(head_shape "${parts[2]}")
	[[ "$default" == *"thread_name name=\"waiter\""* ]]
	[[ "$default" == *"mutex_lock_req"* && "$default" == *"cond_wait_req"* ]]
	for mode in --streams --streams=coded; do
		rm -f "$BATS_TEST_TMPDIR"/r.ptt.*
		rotated "$mode"
		# from part 3 on: the other threads' first records may all lie in part 2 (part 1 can be one
		# span of the main thread's ring), the last part follows the threads' end
		for ((p = 2; p + 1 < ${#parts[@]}; p++)); do
			[ "$(head_shape "${parts[p]}")" = "$default" ] || { echo "$mode part $((p + 1))"; head_shape "${parts[p]}"; return 1; }
		done
	done
	# read alone, a plain streams part is whole; the model takes its head as its start
	rm -f "$BATS_TEST_TMPDIR"/r.ptt.*
	rotated --streams
	run -0 --separate-stderr ptt-dump --check "${parts[2]}"
	[[ "$output" == "${parts[2]}: "*" events, 0 damaged, 0 lost, 0 out of order, 0 violations: ok" ]]
	[ -z "$stderr" ]
	# the threads named by ptt-stat of the part alone
	run -0 --separate-stderr ptt-stat -n 0 "${parts[2]}"
	[[ "$output" == *waiter* && "$output" == *sleeper* ]]
	# a copy of it (ptt-filter) has its head at its start: "head K", read alone as the part
	ptt-filter "${parts[2]}" >"$BATS_TEST_TMPDIR/copy.ptt"
	[ "$(head_shape "$BATS_TEST_TMPDIR/copy.ptt")" = "$default" ]
	run -0 --separate-stderr ptt-dump --check "$BATS_TEST_TMPDIR/copy.ptt"
	[ -z "$stderr" ]
}

@test "--streams=coded -m: a later part read alone says once when its streams start mid-history" {
	rotated --streams=coded
	said=0
	for f in "${parts[@]:1}"; do
		# a part whose every stream begins with a history reset (a ring claimed in it) reads whole
		run --separate-stderr ptt-dump --check "$f"
		[ "$status" -eq 0 ] && [ -z "$stderr" ] && continue
		[ "$status" -eq 1 ]
		[[ "$output" == "$f: "*" events, 1 damaged, 0 lost, 0 out of order, 0 violations: FAILED" ]]
		[[ "$stderr" =~ ^"ptt-dump: $f: block at offset "[0-9]+": part "[0-9]+" read without the part before it: the records of each thread's coded stream up to its next history reset (at most 128 KiB of its coded bytes) cannot be decoded, skipped"$ ]]
		said=$((said + 1))
	done
	[ "$said" -ge 1 ]
}

@test "--streams -m: a part read from a pipe says in one line that its head cannot be read, exit 1, the rest read" {
	rotated --streams
	run -1 --separate-stderr sh -c 'cat "$1" | ptt-dump --check' sh "${parts[1]}"
	[[ "$output" == "-: "*" events, 1 damaged, 0 lost, 0 out of order, 0 violations: FAILED" ]]
	[[ "$stderr" =~ ^"ptt-dump: -: offset "[0-9]+": part 2's state in force is at its end, which cannot be read from a pipe: the names and holds in force before it are unknown"$ ]]
	# read from a file on stdin (seekable), it is found
	run -0 --separate-stderr ptt-dump --check - <"${parts[1]}"
	[ -z "$stderr" ]
}

@test "--streams -m -f 2: the last two parts are kept, each readable alone" {
	run -0 --separate-stderr ptt-record --streams -m 256k -f 2 -o "$BATS_TEST_TMPDIR/r.ptt" -- "$EXAMPLES/held_across" 100000
	parts=("$BATS_TEST_TMPDIR"/r.ptt.*)
	[ "${#parts[@]}" -eq 2 ]
	[[ "$stderr" =~ "r.ptt."([0-9]+)" to ".*"r.ptt."([0-9]+)" (2 files; "([0-9]+)" older removed, as -f asks)" ]]
	[ "$((10#${BASH_REMATCH[2]}))" -eq "$((10#${BASH_REMATCH[1]} + 1))" ]
	[ "${BASH_REMATCH[3]}" -eq "$((10#${BASH_REMATCH[1]} - 1))" ]
	[ "${BASH_REMATCH[3]}" -ge 1 ]
	run --separate-stderr ptt-dump --check "${parts[0]}"
	[ "$status" -eq 0 ] && [[ "$output" == *" 0 damaged, 0 lost, 0 out of order, 0 violations: ok" ]] &&
		[ -z "$stderr" ] || { echo "$status $output $stderr"; return 1; }
	[[ "$(head_shape "${parts[0]}")" == *"thread_name name=\"waiter\""* ]]
	run -0 --separate-stderr ptt-dump --check "${parts[@]}"
	[ -z "$stderr" ]
}

@test "--streams -m: a SIGKILLed recorder leaves every part readable; a part without its head says so, read alone" {
	ptt-record -q --streams -m 8M -f 8 -o "$BATS_TEST_TMPDIR/r.ptt" -- "$EXAMPLES/prodcons" -n 100000000 >/dev/null 3>&- &
	rec=$!
	wait_size "$rec" "$BATS_TEST_TMPDIR/r.ptt.0004" 10000
	# killed well inside a part (one just begun may not have its first bytes on disk: nothing to say;
	# one about to end may be followed by the next before the kill)
	for ((k = 0; k < 1000; k++)); do
		last=$(ls "$BATS_TEST_TMPDIR"/r.ptt.* | tail -n 1)
		size=$(stat -c %s "$last")
		[ "$size" -lt 1000000 ] || [ "$size" -gt 6000000 ] || break
		sleep 0.01
	done
	kill -KILL "$rec"
	wait "$rec" || true
	kill -KILL "$prog"
	parts=("$BATS_TEST_TMPDIR"/r.ptt.*)
	# in order: every part read, nothing out of order; the last one cut short, said
	run -1 --separate-stderr ptt-dump --check "${parts[@]}"
	[[ "$output" =~ " (and "[0-9]+" more): "([0-9]+)" events, "[0-9]+" damaged, 0 lost, 0 out of order, " ]] ||
		{ echo "$output $stderr"; return 1; }
	[ "${BASH_REMATCH[1]}" -gt 100000 ]
	[[ "$stderr" == *"the trace ends without its end block (cut short)"* ]]
	# alone: each is read; one whose head the keeper had not written yet (the last, at least, once its
	# META is out) says that line, and nothing else is wrong with it but being cut short
	never=0
	for f in "${parts[@]:1}"; do
		[ "$(stat -c %s "$f")" -gt 6000 ] || continue
		run --separate-stderr ptt-dump --check "$f"
		[[ "$output" == *"$f: "*" events, "* ]]
		[ "$status" -eq 0 ] && continue
		# violations where the parts around it hold events it does not (set aside): 5; cut short: 1
		[ "$status" -eq 1 ] || [ "$status" -eq 5 ]
		[[ "$output" != *"FAILED"* || "$output" == *" damaged, "* ]]
		sed -e '/state in force was never written (the recorder did not finish): the names and holds in force before it are unknown$/d' \
			-e '/ends without its end block (cut short)$/d' -e '/truncated record/d' -e '/in all (the first/d' -e '/^$/d' <<<"$stderr" >"$BATS_TEST_TMPDIR/else"
		[ ! -s "$BATS_TEST_TMPDIR/else" ] || { cat "$BATS_TEST_TMPDIR/else"; return 1; }
		[[ "$stderr" != *"never written"* ]] || never=$((never + 1))
	done
	[ "$never" -ge 1 ] || {
		ls -l "${parts[@]}"
		for f in "${parts[@]}"; do ptt-dump --check "$f" 2>&1 | tail -n 3; done
		return 1
	}
}

@test "--streams -m: the recorder's summary is right and nothing else is said" {
	run -0 --separate-stderr ptt-record --streams=coded -m 256k -o "$BATS_TEST_TMPDIR/r.ptt" -- "$EXAMPLES/held_across" 100000
	[[ "$stderr" =~ "ptt-record: $BATS_TEST_TMPDIR/r.ptt.0001 to $BATS_TEST_TMPDIR/r.ptt."[0-9]+" ("[0-9]+" files): "[0-9]+" events, 0 lost, " ]]
	[[ "$stderr" != *"state in force"* ]]
}

@test "--streams -m: a part read alone is judged only where the parts around it cannot hold events it misses" {
	# prodcons hands a lock between threads many times a millisecond: each thread's stream is cut where
	# the recorder's copy stood, so a part alone misses the last events of the part before (up to its
	# latest time, which the head says) and the first of the part after (from its last mark on)
	ptt-record -q --streams -m 1M -o "$BATS_TEST_TMPDIR/r.ptt" -- "$EXAMPLES/prodcons" -n 200000 >/dev/null
	parts=("$BATS_TEST_TMPDIR"/r.ptt.*)
	[ "${#parts[@]}" -ge 4 ]
	for f in "${parts[@]}"; do
		run --separate-stderr ptt-dump --check "$f"
		[ -z "$stderr" ] || { echo "$f: $stderr"; return 1; }
		# never a violation the program did not commit: ok, or unverified where the stretches are
		[ "$status" -eq 0 ] || [ "$status" -eq 5 ] || { echo "$f: $status $output"; return 1; }
		[[ "$output" == *": ok" || "$output" == *": unverified" ]]
		[[ "$output" != *"violation: "* ]]
	done
	# a middle part names both stretches, the first none before it, the last none after it
	run -0 --separate-stderr ptt-stat "${parts[1]}"
	[[ "$output" == *"any thread, "*" s to "*" s: a --streams part read without the part before it, which may hold later events of any thread"* ]]
	[[ "$output" == *"any thread, "*" s to the end: a --streams part read without the part after it, which may hold earlier events of any thread"* ]]
	run -0 --separate-stderr ptt-stat "${parts[0]}"
	[[ "$output" != *"without the part before it"* && "$output" == *"without the part after it"* ]]
	last=$((${#parts[@]} - 1))
	run -0 --separate-stderr ptt-stat "${parts[last]}"
	[[ "$output" == *"without the part before it"* && "$output" != *"without the part after it"* ]]
	# in order: nothing set aside, nothing wrong
	run -0 --separate-stderr ptt-dump --check "${parts[@]}"
	[[ "$output" == *" 0 violations: ok" ]]
	run -0 --separate-stderr ptt-stat "${parts[@]}"
	[[ "$output" != *"a --streams part read without"* ]]
}

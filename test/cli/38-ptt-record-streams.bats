#!/usr/bin/env bats
# ptt-record --streams: the rings' spans written as they lie (format version 3), merged by the readers.
bats_require_minimum_version 1.5.0
load helpers

blocks() { python3 "$BATS_TEST_DIRNAME/ptt_blocks.py" "$@"; }

# every reading tool on the streams trace T, against the same tool on its merged copy (ptt-filter
# writes version 1, its records merged): the same events in the same order, for every tool
same_as_merged() {
	local t=$1 ref=$BATS_TEST_TMPDIR/merged.ptt tool
	ptt-filter "$t" >"$ref"
	[ "$(head -c 12 "$ref" | od -An -tu4 -j8 | tr -d ' ')" = 1 ]
	run -0 --separate-stderr ptt-dump --check "$t"
	[[ "$output" == *" 0 damaged, 0 lost, 0 out of order, 0 violations: ok" ]]
	[ -z "$stderr" ]
	cmp <(ptt-dump -n "$ref") <(ptt-dump -n "$t")
	for tool in "ptt-stat -n 0" "ptt-csv --states" "ptt-json" "ptt-deadlock" "ptt-paje --objects" "ptt-dump --info"; do
		# shellcheck disable=SC2086 # the tool's words
		cmp <($tool "$ref" 2>&1 | sed "s|$ref|TRACE|g") <($tool "$t" 2>&1 | sed "s|$t|TRACE|g") ||
			{ echo "$tool differs"; return 1; }
	done
}

@test "--streams writes version 3: one stream per thread, marks that no later record precedes, read merged by every tool" {
	run -0 --separate-stderr ptt-record -q --streams -o "$BATS_TEST_TMPDIR/t.ptt" -- "$EXAMPLES/prodcons" -n 20000
	[ -z "$stderr" ]
	run -0 blocks marks "$BATS_TEST_TMPDIR/t.ptt"
	# prodcons: main, 2 producers, 2 consumers, and the recorder's own stream
	[[ "$output" =~ ^"version 3 streams "([0-9]+)" marks "([0-9]+)" late 0 unordered 0"$ ]]
	[ "${BASH_REMATCH[1]}" -ge 5 ] && [ "${BASH_REMATCH[2]}" -ge 1 ]
	same_as_merged "$BATS_TEST_TMPDIR/t.ptt"
}

@test "--streams with -z, and to a pipe: read merged, nothing lost" {
	run -0 --separate-stderr ptt-record -q -z --streams -o "$BATS_TEST_TMPDIR/z.ptt" -- "$EXAMPLES/prodcons" -n 20000
	[ -z "$stderr" ]
	run -0 blocks marks "$BATS_TEST_TMPDIR/z.ptt"
	[[ "$output" == "version 3 streams "*" late 0 unordered 0" ]]
	same_as_merged "$BATS_TEST_TMPDIR/z.ptt"
	ptt-record -q --streams -o - -- "$EXAMPLES/prodcons" -n 20000 2>/dev/null >"$BATS_TEST_TMPDIR/p.ptt"
	same_as_merged "$BATS_TEST_TMPDIR/p.ptt"
}

@test "--streams: a thread idle for the whole run holds no mark back, and its late events fall in place" {
	# cp_idle_vs_path: a thread that sleeps while the others work; the marks go on all the same
	run -0 --separate-stderr ptt-record -q --streams -o "$BATS_TEST_TMPDIR/t.ptt" -- "$EXAMPLES/cp_idle_vs_path"
	run -0 blocks marks "$BATS_TEST_TMPDIR/t.ptt"
	[[ "$output" =~ ^"version 3 streams "[0-9]+" marks "([0-9]+)" late 0 unordered 0"$ ]]
	same_as_merged "$BATS_TEST_TMPDIR/t.ptt"
}

@test "--streams: a SIGKILLed program leaves every committed event readable" {
	ptt-record -q --streams -o "$BATS_TEST_TMPDIR/t.ptt" -- "$EXAMPLES/prodcons" -n 100000000 >/dev/null 3>&- &
	rec=$!
	wait_size "$rec" "$BATS_TEST_TMPDIR/t.ptt" 3000000
	kill -KILL "$prog"
	assert_killed_trace "$rec" "$BATS_TEST_TMPDIR/t.ptt"
	run -0 blocks marks "$BATS_TEST_TMPDIR/t.ptt"
	[[ "$output" == "version 3 streams "*" late 0 unordered 0" ]]
}

@test "--streams with --flight is a usage error, said in one line (with -m: test 45)" {
	run -2 --separate-stderr ptt-record --streams --flight -o "$BATS_TEST_TMPDIR/t.ptt" -- true
	[ -z "$output" ]
	[ "$stderr" = "ptt-record: --streams: not with --flight (its file begins with the state in force, which the merge keeps)" ]
	[ ! -e "$BATS_TEST_TMPDIR/t.ptt" ]
}

# --streams=coded: each thread codes its own records into its ring, the recorder copies the bytes

@test "--streams=coded: every tool reads the threads' coded streams as the merged trace" {
	run -0 --separate-stderr ptt-record -q --streams=coded -o "$BATS_TEST_TMPDIR/t.ptt" -- "$EXAMPLES/prodcons" -n 20000
	[ -z "$stderr" ]
	same_as_merged "$BATS_TEST_TMPDIR/t.ptt"
	# compact: fewer bytes than the raw records' 36-44 an event
	ev=$(ptt-dump --info "$BATS_TEST_TMPDIR/t.ptt" | awk '$1 == "events:" {print $2}')
	[ "$ev" -gt 100000 ]
	[ "$(stat -c %s "$BATS_TEST_TMPDIR/t.ptt")" -lt $((ev * 16)) ]
	ptt-record -q --streams=coded -o - -- "$EXAMPLES/prodcons" -n 20000 2>/dev/null >"$BATS_TEST_TMPDIR/p.ptt"
	same_as_merged "$BATS_TEST_TMPDIR/p.ptt"
}

@test "--streams=coded: streams that pass their ring's end many times, threads that come and go, an idle thread" {
	# -b 64k: a coded stream of 32 KiB wraps every few thousand events; churn reuses rings
	run -0 --separate-stderr ptt-record -q -b 64k --streams=coded -o "$BATS_TEST_TMPDIR/t.ptt" -- "$EXAMPLES/prodcons" -n 50000
	[ -z "$stderr" ]
	same_as_merged "$BATS_TEST_TMPDIR/t.ptt"
	run -0 --separate-stderr ptt-record -q -b 64k --streams=coded -o "$BATS_TEST_TMPDIR/c.ptt" -- "$EXAMPLES/churn"
	same_as_merged "$BATS_TEST_TMPDIR/c.ptt"
	run -0 --separate-stderr ptt-record -q --streams=coded -o "$BATS_TEST_TMPDIR/i.ptt" -- "$EXAMPLES/cp_idle_vs_path"
	same_as_merged "$BATS_TEST_TMPDIR/i.ptt"
}

@test "--streams=coded: the 2-thread lock loop flat out loses nothing, and its trace path is measured coded" {
	cc -O2 -pthread -o "$BATS_TEST_TMPDIR/lockloop" "$BATS_TEST_DIRNAME/../../bench/lockloop.c"
	run -0 --separate-stderr ptt-record --streams=coded -o "$BATS_TEST_TMPDIR/t.ptt" -- "$BATS_TEST_TMPDIR/lockloop" 2 300000 private
	[[ "$stderr" == *"ptt-record: $BATS_TEST_TMPDIR/t.ptt: "*" events, 0 lost, "* ]]
	run -0 --separate-stderr ptt-dump --check "$BATS_TEST_TMPDIR/t.ptt"
	[[ "$output" =~ ": "([0-9]+)" events, 0 damaged, 0 lost, 0 out of order, 0 violations: ok"$ ]]
	[ "${BASH_REMATCH[1]}" -ge 1200000 ]
	run -0 --separate-stderr ptt-stat "$BATS_TEST_TMPDIR/t.ptt"
	[[ "$output" == *"ptt's trace path took "*" ns per event"* ]]
}

@test "--streams=coded: a damaged byte costs its thread's stream up to its next history reset, not the rest of the run" {
	cc -O2 -pthread -o "$BATS_TEST_TMPDIR/lockloop" "$BATS_TEST_DIRNAME/../../bench/lockloop.c"
	run -0 --separate-stderr ptt-record -q --streams=coded -o "$BATS_TEST_TMPDIR/t.ptt" -- "$BATS_TEST_TMPDIR/lockloop" 1 300000 private
	total=$(ptt-dump --info "$BATS_TEST_TMPDIR/t.ptt" | awk '$1 == "events:" { print $2 }')
	[ "$total" -ge 600000 ]
	# the first block of the thread's coded stream with 10 000 records or more (flags 96: compact, coded)
	read -r at n < <(blocks counts "$BATS_TEST_TMPDIR/t.ptt" | awk '$2 >= 10000 && $3 == 96 { print $1, $2; exit }')
	[ -n "$at" ]
	# 12 bytes in a row, a kilobyte into it: some are a record's tag or lengths, whose damage
	# spoils the history (the whole rest of the run was lost to it: 147 of 600 035 events read)
	for off in 1000 1001 1002 1003 1004 1005 1006 1007 1008 1009 1010 1011; do
		cp "$BATS_TEST_TMPDIR/t.ptt" "$BATS_TEST_TMPDIR/d.ptt"
		blocks flip "$BATS_TEST_TMPDIR/d.ptt" $((at + 48 + off))
		run -1 --separate-stderr ptt-dump --check "$BATS_TEST_TMPDIR/d.ptt"
		[[ "$output" =~ ": "([0-9]+)" events, "[1-9][0-9]*" damaged" ]]
		echo "byte $off: ${BASH_REMATCH[1]} of $total events read"
		# a reset every 128 KiB of coded bytes, a block begun at the last one of each pass
		[ "${BASH_REMATCH[1]}" -ge $((total / 2)) ]
	done
}

@test "--streams=coded: a SIGKILLed program leaves every committed event readable" {
	ptt-record -q --streams=coded -o "$BATS_TEST_TMPDIR/t.ptt" -- "$EXAMPLES/prodcons" -n 100000000 >/dev/null 3>&- &
	rec=$!
	wait_size "$rec" "$BATS_TEST_TMPDIR/t.ptt" 1000000
	kill -KILL "$prog"
	assert_killed_trace "$rec" "$BATS_TEST_TMPDIR/t.ptt"
}

@test "--streams=coded with --flight or a ring under 64k, or --streams=other, is a usage error in one line" {
	for opt in "--flight" "-b 32k" "--streams=raw"; do
		# shellcheck disable=SC2086 # the option's words
		run -2 --separate-stderr ptt-record --streams=coded $opt -o "$BATS_TEST_TMPDIR/t.ptt" -- true
		[ -z "$output" ]
		case $opt in
		--flight) [ "$stderr" = "ptt-record: --streams: not with --flight (its file begins with the state in force, which the merge keeps)" ] ;;
		-b*) [ "$stderr" = "ptt-record: --streams=coded: rings of at least 64k (-b)" ] ;;
		*) [[ "$stderr" == "ptt-record: --streams: 'coded' or nothing: 'raw'"* ]] ;;
		esac
	done
	[ ! -e "$BATS_TEST_TMPDIR/t.ptt" ]
}

# --streams=coded -z: the coded blocks compressed by the writer's idle-priority thread (version 4)

# coded_blocks T: "coded C compressed Z other O" over T's EVENTS blocks of a stream flagged coded
# (64): C of them, Z with zlib or zstd (1, 16); O coded blocks that are not also compact (32)
# (bits by arithmetic: mawk, a fresh Debian's awk, has no and())
coded_blocks() {
	blocks flags "$1" | awk '$1 == 2 && int($2 / 64) % 2 { c++; z += $2 % 2 || int($2 / 16) % 2; o += !(int($2 / 32) % 2) }
		END { printf "coded %d compressed %d other %d\n", c, z, o }'
}

@test "--streams=coded -z: the threads' coded blocks compressed at idle priority, version 4, read as the merged trace" {
	run -0 --separate-stderr ptt-record -q --streams=coded -z -o "$BATS_TEST_TMPDIR/z.ptt" -- "$EXAMPLES/prodcons" -n 20000
	[ -z "$stderr" ]
	run -0 blocks marks "$BATS_TEST_TMPDIR/z.ptt"
	[[ "$output" == "version 4 streams "*" unordered 0" ]]
	run -0 coded_blocks "$BATS_TEST_TMPDIR/z.ptt"
	[[ "$output" =~ ^"coded "([0-9]+)" compressed "([0-9]+)" other 0"$ ]]
	[ "${BASH_REMATCH[1]}" -ge 5 ] && [ "${BASH_REMATCH[2]}" -ge 1 ]
	same_as_merged "$BATS_TEST_TMPDIR/z.ptt"
	# zlib, and rings of 64k whose streams wrap every few thousand events
	run -0 --separate-stderr ptt-record -q -b 64k --streams=coded -z9 -Z zlib -o "$BATS_TEST_TMPDIR/l.ptt" -- "$EXAMPLES/prodcons" -n 50000
	[ -z "$stderr" ]
	run -0 coded_blocks "$BATS_TEST_TMPDIR/l.ptt"
	[[ "$output" =~ ^"coded "[0-9]+" compressed "[1-9][0-9]*" other 0"$ ]]
	same_as_merged "$BATS_TEST_TMPDIR/l.ptt"
}

@test "--streams=coded -z to a pipe, threads that come and go: read as the merged trace" {
	ptt-record -q --streams=coded -z -o - -- "$EXAMPLES/prodcons" -n 20000 2>/dev/null >"$BATS_TEST_TMPDIR/p.ptt"
	run -0 coded_blocks "$BATS_TEST_TMPDIR/p.ptt"
	[[ "$output" =~ ^"coded "[0-9]+" compressed "[1-9][0-9]*" other 0"$ ]]
	same_as_merged "$BATS_TEST_TMPDIR/p.ptt"
	ptt-record -q -b 64k --streams=coded -z -o - -- "$EXAMPLES/churn" 2>/dev/null >"$BATS_TEST_TMPDIR/c.ptt"
	same_as_merged "$BATS_TEST_TMPDIR/c.ptt"
}

@test "--streams=coded -z: a SIGKILLed program leaves every committed event readable" {
	ptt-record -q --streams=coded -z -o "$BATS_TEST_TMPDIR/t.ptt" -- "$EXAMPLES/prodcons" -n 100000000 >/dev/null 3>&- &
	rec=$!
	wait_size "$rec" "$BATS_TEST_TMPDIR/t.ptt" 500000
	kill -KILL "$prog"
	assert_killed_trace "$rec" "$BATS_TEST_TMPDIR/t.ptt"
	run -0 coded_blocks "$BATS_TEST_TMPDIR/t.ptt"
	[[ "$output" =~ ^"coded "[0-9]+" compressed "[1-9][0-9]*" other 0"$ ]]
}

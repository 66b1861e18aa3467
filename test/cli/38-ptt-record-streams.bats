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

@test "--streams with -m or --flight is a usage error, said in one line" {
	for opt in "-m 1M" "--flight"; do
		# shellcheck disable=SC2086 # the option's words
		run -2 --separate-stderr ptt-record --streams $opt -o "$BATS_TEST_TMPDIR/t.ptt" -- true
		[ -z "$output" ]
		[ "$stderr" = "ptt-record: --streams: not with -m or --flight (their files begin with the state in force, which the merge keeps)" ]
	done
	[ ! -e "$BATS_TEST_TMPDIR/t.ptt" ]
}

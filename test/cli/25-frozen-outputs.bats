#!/usr/bin/env bats
# What the analyses say about recorded example traces, frozen as expected files
# (frozen/expected/TRACE.KIND: stdout, "--- stderr", stderr, "--- exit N").
# After a change of a rule on purpose: (cd test/cli/frozen && PATH=../../../build/bin:$PATH
# ./run.sh --update), review the diff, and say why in the commit message.
bats_require_minimum_version 1.5.0
load helpers

frozen() {
	cd "$BATS_TEST_DIRNAME/frozen"
	local t bad=0
	for t in *.txt; do
		run -0 --separate-stderr ./run.sh "$t" "$1"
		[ -z "$stderr" ] || { echo "run.sh $t $1: $stderr"; bad=1; }
		[ "$output" = "$(cat "expected/${t%.txt}.$1")" ] ||
			{ echo "$t: $1 differs:"; diff <(echo "$output") "expected/${t%.txt}.$1" | head -20; bad=1; }
	done
	[ "$bad" -eq 0 ]
}

@test "frozen: ptt-dump --check" { frozen check; }
@test "frozen: ptt-dump --human" { frozen human; }
@test "frozen: ptt-stat" { frozen stat; }
@test "frozen: ptt-deadlock" { frozen deadlock; }
@test "frozen: ptt-csv --states" { frozen states; }
@test "frozen: ptt-paje" { frozen paje; }
@test "frozen: ptt-paje --objects" { frozen objects; }
@test "frozen: ptt-filter of a time window, with its context" { frozen window; }
@test "frozen: ptt-csv --states after ptt-filter --object" { frozen select; }

#!/usr/bin/env bats
# What the analyses say about recorded example traces, frozen as expected files
# (frozen/expected/TRACE.KIND: stdout, "--- stderr", stderr, "--- exit N"): the text traces
# of frozen/, and the binary fixtures of every format version and block kind
# (fixtures/v[1234]-*.ptt, made once by fixtures/make-fixtures.sh, never again), read by every
# tool: a decoder that reads an old trace otherwise than it did fails here.
# After a change of a rule on purpose: (cd test/cli/frozen && PATH=../../../build/bin:$PATH
# ./run.sh --update), review the diff, and say why in the commit message.
bats_require_minimum_version 1.5.0
load helpers

frozen() {
	cd "$BATS_TEST_DIRNAME/frozen"
	local t k bad=0 n=0
	# the fixtures' modules lie there (fixtures/make-fixtures.sh): found, they would be symbolised
	[ ! -e /tmp/ptt-fixture-gone ] || { echo "/tmp/ptt-fixture-gone exists (make-fixtures.sh's, left over?): remove it"; return 1; }
	while read -r t k; do
		[ "$k" = "$1" ] || continue
		n=$((n + 1))
		run -0 --separate-stderr ./run.sh "$t" "$1"
		[ -z "$stderr" ] || { echo "run.sh $t $1: $stderr"; bad=1; }
		[ "$output" = "$(cat "expected/${t%.*}.$1")" ] ||
			{ echo "$t: $1 differs:"; diff <(echo "$output") "expected/${t%.*}.$1" | head -20; bad=1; }
	done < <(./run.sh --list)
	[ "$n" -gt 0 ] && [ "$bad" -eq 0 ]
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
# the binary fixtures only
@test "frozen: ptt-dump of every format version and block kind" { frozen dump; }
@test "frozen: ptt-dump --info" { frozen info; }
@test "frozen: ptt-csv" { frozen csv; }
@test "frozen: ptt-json" { frozen json; }
@test "frozen: ptt-critical" { frozen critical; }
@test "frozen: ptt-index, its copy checked and a window of it read from a snapshot" { frozen index; }

@test "frozen: every fixture of fixtures/ is read, and every expected file is one run.sh makes" {
	cd "$BATS_TEST_DIRNAME/frozen"
	run -0 --separate-stderr ./run.sh --list
	local f
	for f in ../fixtures/v[1234]-*.ptt; do
		case $f in */v1-prodcons*) continue ;; esac
		echo "$output" | grep -q "^${f#../fixtures/} dump$" || { echo "$f not read"; return 1; }
	done
	diff <(echo "$output" | awk '{ sub(/\.(txt|ptt)$/, "", $1); print $1 "." $2 }' | sort) <(ls expected | sort)
	[ -z "$stderr" ]
}

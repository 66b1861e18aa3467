#!/usr/bin/env bats
# Damage no checksum sees (ptt-trace(5), STRUCTURE): a block of a kind this version does not know,
# a snapshot block that counts events, events before the header, an EVENTS block repeated or out
# of order, a clock rate that is none, a header count the block contradicts.  The reader says each
# once, every tool exits non-zero with that one line on stderr, and nothing is built on the blocks
# out of place: a tool's output is its output on the trace without them.  The damaged traces are
# made here from a committed good one (ptt_damage.py: its EVENTS cut into blocks of 40 records).
bats_require_minimum_version 1.5.0
load helpers

GOOD="$PTT_ROOT/test/cli/fixtures/v1-prodcons.ptt"

# $BATS_TEST_TMPDIR/NAME/t.ptt: the good trace with the damage NAME (ptt_damage.py)
damaged() {
	mkdir -p "$BATS_TEST_TMPDIR/$1"
	python3 "$BATS_TEST_DIRNAME/ptt_damage.py" "$1" "$GOOD" "$BATS_TEST_TMPDIR/$1/t.ptt"
}

# the filters whose output is the events as read, and a file name for each one's output
FILTERS=("ptt-dump" "ptt-dump --human" "ptt-dump -n" "ptt-paje" "ptt-json" "ptt-csv" "ptt-filter" "ptt-index")
outname() { echo "out.${1// /_}"; }

# every_tool DAMAGE REF DIAG: on DAMAGE, each filter exits 1, says "PROG: t.ptt: DIAG" alone on
# stderr, and writes what it writes on REF (the trace without what the reader skipped); the
# analyses exit non-zero, say the same line, and mark the stretch as damaged
every_tool() {
	local d=$1 ref=$2 diag=$3 t
	damaged "$d"
	damaged "$ref"
	cd "$BATS_TEST_TMPDIR/$ref"
	for t in "${FILTERS[@]}"; do
		run -0 --separate-stderr sh -c "$t t.ptt >$(outname "$t")"
		[ "$stderr" = "" ]
	done
	cd "$BATS_TEST_TMPDIR/$d"
	for t in "${FILTERS[@]}"; do
		run -1 --separate-stderr sh -c "$t t.ptt >$(outname "$t")"
		[ "$output" = "" ]
		[ "$stderr" = "${t%% *}: t.ptt: $diag" ] || { echo "$t: $stderr"; return 1; }
		[ "${4:-}" = clock ] && [ "$t" != "ptt-paje" ] && [ "$t" != "ptt-json" ] && [ "$t" != "ptt-csv" ] &&
			[ "$t" != "ptt-dump --human" ] && continue # the header copied or shown as it is
		cmp "$(outname "$t")" "../$ref/$(outname "$t")" || { echo "$t: not its output on $ref"; return 1; }
	done
	run -1 --separate-stderr ptt-dump --check t.ptt
	[ "$stderr" = "ptt-dump: t.ptt: $diag" ]
	[[ "${lines[${#lines[@]} - 1]}" == "t.ptt: "*" events, 1 damaged, 0 lost, 0 out of order, "*": FAILED" ||
		"${lines[${#lines[@]} - 1]}" == "t.ptt: events were lost or damaged: violations next to them may come from the gaps" ]]
	for t in ptt-stat ptt-deadlock ptt-critical; do
		run --separate-stderr $t t.ptt
		[ "$status" -eq $([ $t = ptt-deadlock ] && echo 4 || echo 1) ] || { echo "$t: exit $status"; return 1; }
		[ "$stderr" = "$t: t.ptt: $diag" ] || { echo "$t: $stderr"; return 1; }
		[[ "$output" == *": damaged or missing input"* ]] || { echo "$t: no damaged stretch shown"; return 1; }
	done
}

@test "the good trace cut into blocks of 40 is read by every tool without a word" {
	damaged split
	cd "$BATS_TEST_TMPDIR/split"
	[ "$(python3 "$BATS_TEST_DIRNAME/ptt_blocks.py" counts t.ptt | awk '{ print $2 }' | tr '\n' ' ')" = "1 40 40 40 40 40 32 " ]
	run -0 --separate-stderr ptt-dump --check t.ptt
	[ "$output" = "t.ptt: 233 events, 0 damaged, 0 lost, 0 out of order, 0 violations: ok" ]
	[ "$stderr" = "" ]
	run -0 --separate-stderr ptt-deadlock t.ptt
	[ "$output" = "no lock-order inversion and no deadlock found" ]
	[ "$stderr" = "" ]
	# the same events as the trace it was cut from
	diff <(ptt-dump -n "$GOOD") <(ptt-dump -n t.ptt)
}

@test "a block of a kind this version does not know: skipped, said once, its records counted lost" {
	every_tool retag drop "offset 7450: block of kind 9, which this version does not know, skipped: 40 records lost"
}

@test "a snapshot block that counts events: skipped and said (a snapshot block counts none)" {
	every_tool snapshot drop "offset 7450: snapshot block that counts events, skipped: 40 events lost"
}

@test "events before the trace's header: skipped and said, the times after it right" {
	every_tool meta-after drop-first "offset 16: EVENTS block before the trace's header (META block), skipped: 1 event lost (no clock known yet)"
	# before: every time was ~484 000 s off; now the events read are timed as in the good trace
	[ "$(ptt-dump -n "$BATS_TEST_TMPDIR/meta-after/t.ptt" 2>/dev/null | head -1 | awk '{ print $1 }')" = \
	  "$(ptt-dump -n "$GOOD" | sed -n 2p | awk '{ print $1 }')" ]
}

@test "an EVENTS block repeated: read once, said; no mutex held by two threads" {
	every_tool duplicate split "offset 9278: EVENTS block repeated (the block before it again), skipped: its 40 events read once"
	run -4 --separate-stderr ptt-deadlock "$BATS_TEST_TMPDIR/duplicate/t.ptt"
	[ "${lines[${#lines[@]} - 1]}" = "no lock-order inversion and no deadlock found" ]
}

@test "two EVENTS blocks swapped: the one out of order skipped and said" {
	every_tool swap drop "offset 9258: EVENTS block out of order (it ends 28886 ticks before the block before it), skipped: 40 events lost"
}

@test "a clock rate of 0 or -1: said, the times are ticks taken as nanoseconds" {
	every_tool clock-zero clock-ns "offset 5291: clock_hz 0 is no clock rate: the times shown are its ticks taken as nanoseconds" clock
	every_tool clock-minus clock-ns "offset 5292: clock_hz -1 is no clock rate: the times shown are its ticks taken as nanoseconds" clock
	# ptt-dump shows the header as it is, the events as with a nanosecond clock
	cd "$BATS_TEST_TMPDIR"
	diff <(sed 's/^# clock_hz 0$/# clock_hz 1000000000/' clock-zero/out.ptt-dump) clock-ns/out.ptt-dump
	# a copy keeps the header as it was: read again, it is said again
	run -1 --separate-stderr ptt-dump -n clock-zero/out.ptt-filter
	[ "$stderr" = "ptt-dump: clock-zero/out.ptt-filter: offset 5291: clock_hz 0 is no clock rate: the times shown are its ticks taken as nanoseconds" ]
}

@test "a header count the block contradicts: said, every record read" {
	every_tool count split "block at offset 7450: EVENTS block counts 41 records in its header and holds 40 (each read: the header is wrong)"
}

@test "a block left out leaves no trace in the structure: read without a word (what checksums and structure cannot see)" {
	damaged drop
	run -0 --separate-stderr ptt-dump -n "$BATS_TEST_TMPDIR/drop/t.ptt"
	[ "${#lines[@]}" -eq 193 ]
	[ "$stderr" = "" ]
}

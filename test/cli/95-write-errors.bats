#!/usr/bin/env bats
# A full disk is an error every filter reports, in binary and text form, with exit 1.
bats_require_minimum_version 1.5.0
load helpers

@test "every filter reports a full output device once and exits 1" {
	[ -w /dev/full ] || skip "no /dev/full"
	record "$EXAMPLES/prodcons" -n 200
	ptt-dump "$BATS_TEST_TMPDIR/t.ptt" >"$BATS_TEST_TMPDIR/t.txt"
	for input in t.ptt t.txt; do
		for tool in ptt-dump ptt-filter ptt-paje ptt-csv ptt-stat ptt-deadlock; do
			run -1 --separate-stderr bash -c "$tool '$BATS_TEST_TMPDIR/$input' >/dev/full"
			[ "$stderr" = "$tool: write error: No space left on device" ] || { echo "$tool $input: $stderr"; return 1; }
		done
	done
}

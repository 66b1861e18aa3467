#!/usr/bin/env bats
# A full disk is an error every filter reports, in binary and text form, with exit 1.
bats_require_minimum_version 1.5.0
load helpers

@test "every filter reports a full output device once and exits 1" {
	[ -w /dev/full ] || skip "no /dev/full"
	# the filters: every program built but the recorder, ptt-picture (it writes a PNG file,
	# not stdout) and ptt-sqlite (a database: 52-ptt-sqlite.bats checks its errors), so that a new one is in the list; each convert/ptt-*.c must have been built,
	# so that none drops out of it unseen
	tools=()
	for prog in "$PTT_BUILD"/bin/ptt-*; do
		case ${prog##*/} in ptt-record | ptt-picture | ptt-sqlite) ;; *) tools+=("${prog##*/}") ;; esac
	done
	for src in "$PTT_ROOT"/convert/ptt-*.c; do
		[ "$src" != "$PTT_ROOT/convert/ptt-sqlite.c" ] || continue
		[[ " ${tools[*]} " == *" $(basename "$src" .c) "* ]] || { echo "$src: not built in $PTT_BUILD/bin"; return 1; }
	done
	echo "${tools[*]}"
	[ "${#tools[@]}" -ge 8 ]
	record "$EXAMPLES/prodcons" -n 200
	ptt-dump "$BATS_TEST_TMPDIR/t.ptt" >"$BATS_TEST_TMPDIR/t.txt"
	for input in t.ptt t.txt; do
		for tool in "${tools[@]}"; do
			# ptt-top follows a binary trace as it is written; a text one it refuses (66-ptt-top)
			[ "$tool $input" != "ptt-top t.txt" ] || continue
			run -1 --separate-stderr bash -c "$tool '$BATS_TEST_TMPDIR/$input' >/dev/full"
			[ "$stderr" = "$tool: write error: No space left on device" ] || { echo "$tool $input: $stderr"; return 1; }
		done
	done
}

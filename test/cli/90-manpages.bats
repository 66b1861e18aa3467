#!/usr/bin/env bats
# Every program has a man page that renders cleanly and documents every option of its --help.
bats_require_minimum_version 1.5.0
load helpers

@test "every man page renders without warnings" {
	command -v man >/dev/null || skip "man not installed"
	for page in "$PTT_ROOT"/man/*.[135]; do
		run -0 --separate-stderr env MANWIDTH=80 man --warnings -l "$page"
		[ -z "$stderr" ] || { echo "$page: $stderr"; return 1; }
	done
}

@test "every program has a man page listing each option of its --help" {
	for prog in "$PTT_BUILD"/bin/ptt-*; do
		name=$(basename "$prog")
		page="$PTT_ROOT/man/$name.1"
		[ -f "$page" ] || { echo "no man page for $name"; return 1; }
		"$prog" --help | grep -oE -- '--[a-z][a-z-]+' | sort -u | while read -r opt; do
			# mdoc writes --opt as "Fl -opt"
			grep -qE -- "Fl -${opt#--}([^a-z-]|$)" "$page" || { echo "$name: $opt missing from $page"; exit 1; }
		done
	done
}

@test "every program answers --version in one form: NAME (ptt) VERSION, the Makefile's" {
	version=$(sed -n 's/^VERSION *= *//p' "$PTT_ROOT/Makefile")
	[ -n "$version" ]
	n=0
	for prog in "$PTT_BUILD"/bin/ptt-*; do
		run -0 --separate-stderr "$prog" --version
		[ "$output" = "$(basename "$prog") (ptt) $version" ]
		[ -z "$stderr" ]
		n=$((n + 1))
	done
	[ "$n" -ge 7 ]
}

@test "the event table of ptt-trace(5) is events.def: ids, names, classes, levels, roles, arguments" {
	sh "$BATS_TEST_DIRNAME/events_table.sh" "$PTT_ROOT/formats/events.def" >"$BATS_TEST_TMPDIR/want"
	[ "$(wc -l <"$BATS_TEST_TMPDIR/want")" -ge 66 ]
	grep -E '^\.It [0-9]+ Ta ' "$PTT_ROOT/man/ptt-trace.5" >"$BATS_TEST_TMPDIR/got"
	run -0 diff "$BATS_TEST_TMPDIR/got" "$BATS_TEST_TMPDIR/want"
	# and the table of a fresh trace's header agrees with events.def (class, level, arguments)
	ptt-record -q -o "$BATS_TEST_TMPDIR/t.ptt" -- true
	ptt-dump "$BATS_TEST_TMPDIR/t.ptt" | awk '/^# type [0-9]+ / && $3 < 1024 {
		args = $8; gsub(/,/, ", ", args); printf "%s %s %s %s %s\n", $3, $4, $5, $6, args }' >"$BATS_TEST_TMPDIR/hdr"
	awk '{ print $2, $4, $6, $8, substr($0, index($0, $12)) }' "$BATS_TEST_TMPDIR/want" >"$BATS_TEST_TMPDIR/def"
	run -0 diff "$BATS_TEST_TMPDIR/hdr" "$BATS_TEST_TMPDIR/def"
}

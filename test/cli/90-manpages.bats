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

# kill_recorder MODE...: start ptt-record MODE... -o $BATS_TEST_TMPDIR/k.ptt on a program that writes its pid
# and waits, SIGKILL the recorder once the program runs (and, without --flight, once the trace
# holds the program's start), then kill the program it left behind
kill_recorder() {
	rm -f "$BATS_TEST_TMPDIR/pid" "$BATS_TEST_TMPDIR/k.ptt"
	ptt-record -q "$@" -o "$BATS_TEST_TMPDIR/k.ptt" -- sh -c 'echo $$ >"$1"; exec sleep 60' sh "$BATS_TEST_TMPDIR/pid" 3>&- &
	local rec=$! n=0
	for _ in $(seq 600); do [ -s "$BATS_TEST_TMPDIR/pid" ] && break; sleep 0.1; done
	if [ "${1:-}" != --flight ]; then
		until [ "$(ptt-dump -n "$BATS_TEST_TMPDIR/k.ptt" 2>/dev/null | grep -c ' process_begin ')" -gt 0 ]; do
			[ $((n += 1)) -le 600 ] || { echo "no process_begin in k.ptt after 60 s"; kill -KILL "$rec"; return 1; }
			sleep 0.1
		done
	fi
	kill -KILL "$rec"
	wait "$rec" || true
	local prog
	prog=$(cat "$BATS_TEST_TMPDIR/pid")
	kill -0 "$prog" # the program goes on, an orphan
	kill -KILL "$prog"
}

@test "ptt-record(1) says what SIGKILL of the recorder itself leaves, and it is so" {
	command -v man >/dev/null || skip "man not installed"
	run -0 --separate-stderr env MANWIDTH=200 man -l "$PTT_ROOT/man/ptt-record.1"
	[[ "$output" == *"SIGKILL sent to ptt-record itself (not to the program) cannot be caught"* ]]
	[[ "$output" == *"To stop a recording, send SIGTERM or SIGINT to ptt-record"* ]]
	kill_recorder
	run -1 --separate-stderr ptt-dump -n "$BATS_TEST_TMPDIR/k.ptt"
	[[ "$stderr" == *"the trace ends without its end block (cut short)" ]]
	[[ "$output" == *" process_begin "* ]]
	kill_recorder --flight
	[ ! -s "$BATS_TEST_TMPDIR/k.ptt" ]
	run -2 --separate-stderr ptt-dump "$BATS_TEST_TMPDIR/k.ptt"
	[[ "$stderr" == *"empty input, not a ptt trace" ]]
}

@test "the user event types ptt holds are stated as the source has them: ptt.h, ptt(3), ptt-record(1), ptt-trace(5), README" {
	base=$(sed -n 's/^#define PTT_USER_ID_BASE \([0-9][0-9]*\).*/\1/p' "$PTT_ROOT/formats/ptt_trace.h")
	max=$(sed -n 's/^#define PTT_MAX_TYPES \([0-9][0-9]*\).*/\1/p' "$PTT_ROOT/formats/ptt_trace.h")
	[ -n "$base" ] && [ -n "$max" ]
	n=$((max - base)) last=$((max - 1))
	[ "$n" -gt 0 ]
	# each file as one line, so that a reflowed paragraph still matches
	flat() { tr -s '\n\t ' '   ' <"$PTT_ROOT/$1"; }
	flat capture/ptt.h | grep -qF "table of user types ($n: ids $base to $last) is full"
	flat man/ptt.3 | grep -qF "or $n types (every id from $base to $last) are already registered"
	flat man/ptt-record.1 | grep -qF "at most $n user event types"
	flat man/ptt-trace.5 | grep -qF "every id from $base to $last is taken .Pq Sy limit No is $n"
	flat README.md | grep -qF "$n user event types"
	# and no other figure for it in any of them
	run -0 sh -c 'cd "$1" && for f in capture/ptt.h man/ptt.3 man/ptt-record.1 man/ptt-trace.5 README.md doc/design.md; do
		tr -s "\n\t " "   " <"$f" | grep -oE "[0-9][0-9 ]* user (event )?types|user types \([0-9]+"; done' sh "$PTT_ROOT"
	[ "${#lines[@]}" -ge 3 ]
	for l in "${lines[@]}"; do
		[ "$(echo "$l" | tr -cd '0-9')" = "$n" ] || { echo "stated otherwise: $l"; return 1; }
	done
}

@test "every file and folder the README names exists: pictures, links, paths" {
	cd "$PTT_ROOT"
	# links and pictures ](path), and paths under the tree's top folders, in backquotes or not;
	# demo/ is what make demo writes; examples/NAME is the program built from examples/NAME.c
	{ grep -oE '\]\([^)]+\)' README.md | sed 's/^](//; s/)$//' | grep -v '^[a-z]*://'
	  grep -oE '(^|[^A-Za-z0-9_./-])(\.ci|bench|capture|convert|doc|examples|formats|fuzz|man|test)/[A-Za-z0-9_./-]*' README.md |
		sed -E 's/^[^.A-Za-z]//; s/[.,]$//'; } | sort -u >"$BATS_TEST_TMPDIR/paths"
	[ "$(wc -l <"$BATS_TEST_TMPDIR/paths")" -ge 10 ]
	grep -qx 'doc/demo.png' "$BATS_TEST_TMPDIR/paths"
	grep -qx 'bench/README.md' "$BATS_TEST_TMPDIR/paths"
	while read -r p; do
		[ -e "$p" ] || [ -e "$p.c" ] || { echo "README names $p: not in the tree"; return 1; }
	done <"$BATS_TEST_TMPDIR/paths"
}

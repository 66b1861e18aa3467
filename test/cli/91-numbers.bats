#!/usr/bin/env bats
# Every number ptt.h, the man pages and the README state that can drift from the code: table sizes,
# caps, limits and exit statuses, each compared with the code's constant or with what the program does.
bats_require_minimum_version 1.5.0
load helpers

# the code's constants, as the compiler sees them (the public headers), into $BATS_TEST_TMPDIR/code
setup() {
	command -v cc >/dev/null || skip "no C compiler"
	cat >"$BATS_TEST_TMPDIR/consts.c" <<'EOF'
#include <stdio.h>
#include "formats/ptt_trace.h"
#include "formats/compact.h"
#include "capture/shm.h"
int main(void)
{
	printf("user_types %d\n", PTT_MAX_USER_TYPES);
	printf("user_id_base %d\n", PTT_USER_ID_BASE);
	printf("user_id_last %d\n", PTT_MAX_TYPES - 1);
	printf("type_name_max %zu\n", sizeof(((struct ptt_type *)0)->name) - 1);
	printf("string_max %d\n", PTT_MAX_STR - 1);
	printf("max_args %d\n", PTT_MAX_ARGS);
	printf("max_rings %d\n", PTT_MAX_RINGS);
	printf("seg_rings %d\n", PTT_SEG_RINGS);
	printf("block_header %zu\n", sizeof(struct ptt_block_header));
	printf("compact_refs %d\n", CPT_REFS);
	return 0;
}
EOF
	cc -std=gnu11 -D_GNU_SOURCE -I"$PTT_ROOT" -o "$BATS_TEST_TMPDIR/consts" "$BATS_TEST_TMPDIR/consts.c"
	"$BATS_TEST_TMPDIR/consts" >"$BATS_TEST_TMPDIR/code"
}

# code NAME: the constant NAME of the code
code() { awk -v n="$1" '$1 == n { print $2 }' "$BATS_TEST_TMPDIR/code"; }

# private DEFINE FILE: a #define of a source file, its value evaluated ("(512ull << 20)" is 536870912)
private() {
	local v
	v=$(awk -v n="$1" '$1 == "#define" && $2 == n { $1 = ""; $2 = ""; sub(/\/\*.*/, ""); print; exit }' "$PTT_ROOT/$2" |
		sed -E 's/([0-9]+)[uUlL]+/\1/g')
	[ -n "$v" ] || { echo "no #define $1 in $2" >&2; return 1; }
	echo $((v))
}

# says FILE EXTENDED-REGEX: the one number captured by the regex's first group, in FILE (man pages rendered)
says() {
	local text
	case $1 in
	man/*) text=$(MANWIDTH=10000 man -l "$PTT_ROOT/$1" 2>/dev/null | sed -E 's/\x1b\[[0-9;]*m//g; s/.\x08//g' | tr -s ' ') ;;
	*) text=$(tr -s ' \t\n' ' ' <"$PTT_ROOT/$1") ;;
	esac
	local found
	found=$(grep -oE "$2" <<<"$text" | sed -E "s/$2/\\1/" | sort -u)
	[ -n "$found" ] || { echo "$1: nothing matches /$2/" >&2; return 1; }
	[ "$(wc -l <<<"$found")" -eq 1 ] || { echo "$1: /$2/ says several numbers: $found" >&2; return 1; }
	echo "$found"
}

# same WHAT A B: A and B agree, else say which
same() { [ "$2" = "$3" ] || { echo "$1: the text says $2, the code $3"; return 1; }; }

@test "the user event type table: ptt.h, ptt(3), ptt-record(1), ptt-trace(5) and the README say the code's size, and the runtime takes that many" {
	command -v man >/dev/null || skip "man not installed"
	n=$(code user_types) base=$(code user_id_base) last=$(code user_id_last)
	same "ptt.h: table of user types" "$(says capture/ptt.h 'table of user types \(([0-9]+)')" "$n"
	same "ptt.h: ids from" "$(says capture/ptt.h 'ids ([0-9]+) to [0-9]+')" "$base"
	same "ptt.h: ids to" "$(says capture/ptt.h 'ids [0-9]+ to ([0-9]+)')" "$last"
	same "ptt.h: the event id" "$(says capture/ptt.h 'event id \(>= ([0-9]+)\)')" "$base"
	same "README: user event types" "$(says README.md '([0-9]+) user event types')" "$n"
	same "ptt.3: types" "$(says man/ptt.3 '([0-9]+) types \(every id')" "$n"
	same "ptt.3: id from" "$(says man/ptt.3 'every id from ([0-9]+) to')" "$base"
	same "ptt.3: id to" "$(says man/ptt.3 'every id from [0-9]+ to ([0-9]+)')" "$last"
	same "ptt.3: its id" "$(says man/ptt.3 'returns its id \(([0-9]+) or more\)')" "$base"
	same "ptt-record.1" "$(says man/ptt-record.1 'at most ([0-9]+) user event types')" "$n"
	same "ptt-trace.5: built in below" "$(says man/ptt-trace.5 'Ids below ([0-9]+) are built in')" "$base"
	same "ptt-trace.5: ids from" "$(says man/ptt-trace.5 'every id from ([0-9]+) to [0-9]+ is taken')" "$base"
	same "ptt-trace.5: ids to" "$(says man/ptt-trace.5 'every id from [0-9]+ to ([0-9]+) is taken')" "$last"
	same "ptt-trace.5: limit" "$(says man/ptt-trace.5 'limit is ([0-9]+)')" "$n"
	# what the runtime does: the one past the table is refused, and the limit event says the table's size
	ptt-record -q -o "$BATS_TEST_TMPDIR/t.ptt" -- "$EXAMPLES/many_types" $((n + 5)) 10 >"$BATS_TEST_TMPDIR/out"
	# (many_types registers one type of its own besides the N asked: n - 1 of them fit)
	[ "$(cat "$BATS_TEST_TMPDIR/out")" = "types $((n - 1)) registered, 6 refused, longest argument list registered, strings of 10 bytes" ]
	run -0 --separate-stderr ptt-dump --info "$BATS_TEST_TMPDIR/t.ptt"
	[[ "$output" == *"limit:      user event type table full after $n types: 6 registrations refused"* ]]
}

@test "names and strings: ptt.h, ptt(3), ptt-record(1), ptt-trace(5) and the README give the code's lengths" {
	command -v man >/dev/null || skip "man not installed"
	name=$(code type_name_max) str=$(code string_max)
	same "ptt.h: a type's name" "$(says capture/ptt.h 'at most ([0-9]+) bytes\), detail')" "$name"
	same "ptt.3: a type's name" "$(says man/ptt.3 '\(at most ([0-9]+) bytes\);')" "$name"
	same "README: strings cut" "$(says README.md 'strings cut at ([0-9]+) bytes')" "$str"
	same "ptt.3: strings cut" "$(says man/ptt.3 'longer than ([0-9]+) bytes is recorded')" "$str"
	same "ptt.3: first bytes" "$(says man/ptt.3 'cut to its first ([0-9]+) bytes')" "$str"
	same "ptt-record.1: strings" "$(says man/ptt-record.1 'are cut to ([0-9]+) bytes')" "$str"
	same "ptt-trace.5: strings" "$(says man/ptt-trace.5 'bytes \(([0-9]+), what every reader holds\)')" "$str"
	# the runtime: a name one byte too long is refused, the longest allowed is taken
	printf '#include "ptt.h"\n#include <stdio.h>\n#include <string.h>\nint main(void) { char n[128]; memset(n, 0x61, sizeof n); n[%d] = 0; int ok = ptt_register_event(n, 1, ""); n[%d] = 0x61; n[%d] = 0; printf("%%d %%d\\n", ok >= 0, ptt_register_event(n, 1, "") >= 0); return 0; }\n' \
		"$name" "$name" $((name + 1)) >"$BATS_TEST_TMPDIR/n.c"
	cc -I"$PTT_ROOT/capture" -o "$BATS_TEST_TMPDIR/n" "$BATS_TEST_TMPDIR/n.c" -L"$PTT_BUILD/lib" -lptt -Wl,-rpath,"$PTT_BUILD/lib"
	run -0 --separate-stderr ptt-record -q -o "$BATS_TEST_TMPDIR/n.ptt" -- "$BATS_TEST_TMPDIR/n"
	[ "$output" = "1 0" ]
}

@test "rings, frames, the summary's size limit and the format's sizes: ptt-record(1) and ptt-trace(5) give the code's" {
	command -v man >/dev/null || skip "man not installed"
	same "ptt-record.1: -t" "$(says man/ptt-record.1 '\(default and most ([0-9]+)\)')" "$(code max_rings)"
	same "ptt-record.1: rings at most" "$(says man/ptt-record.1 'have a ring \(([0-9]+) at most\)')" "$(code max_rings)"
	same "ptt-record.1: a segment" "$(says man/ptt-record.1 'segment of ([0-9]+) rings')" "$(code seg_rings)"
	same "ptt-record.1: frames" "$(says man/ptt-record.1 'Readers hold at most ([0-9]+) frames')" \
		"$(private PTT_FRAMES_MAX formats/ptt_trace.h)"
	same "ptt-filter.1: frames" "$(says man/ptt-filter.1 'more than ([0-9]+) at once')" \
		"$(private PTT_FRAMES_MAX formats/ptt_trace.h)"
	mb=$(( $(private SUMMARY_READ_MAX capture/recorder/ptt-record.c) >> 20 ))
	same "ptt-record.1: no summary for a trace larger than" "$(says man/ptt-record.1 'larger than ([0-9]+) MB')" "$mb"
	same "ptt-record.1: limits said past" "$(says man/ptt-record.1 'past ([0-9]+) MB\)')" "$mb"
	same "ptt-trace.5: the block header" "$(says man/ptt-trace.5 'starts with a ([0-9]+)-byte header')" "$(code block_header)"
	same "ptt-trace.5: the references" "$(says man/ptt-trace.5 'a table of ([0-9]+) entries')" "$(code compact_refs)"
	same "ptt-trace.5: their hash" "$(says man/ptt-trace.5 '\) mod ([0-9]+)')" "$(code compact_refs)"
}

# statuses N: the exit statuses a text lists, one a line (numbers that open a clause: "0 on success, 1 when ...")
statuses() {
	grep -oE '(^|[,;:.]) ?[0-9]{1,3} [a-z(]' | grep -oE '[0-9]+' | sort -un | tr '\n' ' '
}

# page_statuses PAGE: the statuses of the EXIT STATUS section of an mdoc page: its ".It N" items, or its prose
page_statuses() {
	awk '/^\.Sh EXIT STATUS/ { f = 1; next } /^\.Sh/ { f = 0 } f' "$1" >"$BATS_TEST_TMPDIR/section"
	{ awk '$1 == ".It" && $2 ~ /^[0-9]+$/ { print "; " $2 " x" }' "$BATS_TEST_TMPDIR/section"
	  grep -v '^\.It [0-9]' "$BATS_TEST_TMPDIR/section" | grep -v '^\.' ; } | tr -s ' \n' ' ' | statuses
}

@test "every program's exit statuses: its man page lists those of its --help, and a usage error is the 2 both give" {
	command -v man >/dev/null || skip "man not installed"
	for prog in "$PTT_BUILD"/bin/ptt-*; do
		name=$(basename "$prog")
		[ "$name" != ptt-record ] || continue # the program's own status, below
		help=$("$prog" --help | awk '/^Exit status:/ { f = 1 } f' | tr -s ' \n' ' ' | statuses)
		page=$(page_statuses "$PTT_ROOT/man/$name.1")
		[ -n "$help" ] || { echo "$name: --help lists no exit status"; return 1; }
		[ "$help" = "$page" ] || { echo "$name: --help lists statuses $help, the man page $page"; return 1; }
		[[ " $help" == *" 2 "* ]] || { echo "$name: no usage status 2"; return 1; }
		run -2 --separate-stderr "$prog" --no-such-option
	done
	# ptt-record: the program's status, 1 when recording cannot start, 2 usage, 126/127 a program not run
	help=$(ptt-record --help | awk '/^Exit status:/ { f = 1 } f' | tr -s ' \n' ' ')
	[[ "$help" == *"128+N"*"1 when recording cannot start, 2 on a usage error, 126/127 when PROGRAM cannot be run"* ]]
	page=$(MANWIDTH=10000 man -l "$PTT_ROOT/man/ptt-record.1" 2>/dev/null | sed -E 's/.\x08//g' | tr -s ' \n' ' ')
	[[ "$page" == *"or 128+N when it was killed by signal N"* ]]
	[[ "$page" == *"exits 1, the program is not run"* ]]
	[[ "$page" == *"On a usage error it exits 2; when program cannot be run, 126 or 127"* ]]
	run -2 --separate-stderr ptt-record --no-such-option
	run -127 --separate-stderr ptt-record -o "$BATS_TEST_TMPDIR/x.ptt" -- /no/such/program
	run -126 --separate-stderr ptt-record -o "$BATS_TEST_TMPDIR/x.ptt" -- "$BATS_TEST_TMPDIR"
	run -3 --separate-stderr ptt-record -q -o "$BATS_TEST_TMPDIR/x.ptt" -- sh -c 'exit 3'
}

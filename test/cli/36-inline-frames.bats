#!/usr/bin/env bats
# Inline levels (issue 19, attribution past wrappers): a frame of an optimised
# program holds functions the compiler inlined; the tools expand it with DWARF
# and name the first function, inlined or not, past the lock layer, at its own
# line.  inlined_locks (-O2): my_lock (always_inline) inside flush_log inside
# logger_main, one physical frame; the wait's line in flush_log is marked LOCK-SITE.
bats_require_minimum_version 1.5.0
load helpers

setup() {
	T="$BATS_TEST_TMPDIR/t.ptt"
	ptt-record -q -o "$T" -- "$EXAMPLES/inlined_locks" >"$BATS_TEST_TMPDIR/out.txt"
	[ "$(cat "$BATS_TEST_TMPDIR/out.txt")" = "counter 6 (expected 6)" ]
	site_line=$(grep -n 'LOCK-SITE \*/' "$PTT_ROOT/examples/inlined_locks.c" | cut -d: -f1)
}

by_site() { grep -A2 '^WAITS BY SITE' <<<"$output" | grep ' stats_lock '; }

@test "the wrapper inlined: its inline level is named, not the physical function with the wrapper's line" {
	run -0 --separate-stderr ptt-stat "$T"
	[ -z "$stderr" ]
	row=$(by_site)
	[[ "$row" == "        3 "*" my_lock inlined in logger_main+0x"*" (inlined_locks) at inlined_locks.c:"* ]]
	# the line inside my_lock: the pthread call
	[[ "$(sed -n "${row##*inlined_locks.c:}p" "$PTT_ROOT/examples/inlined_locks.c")" == *"pthread_mutex_lock(m)"* ]]
}

@test "--skip-frames over inline levels: the user's inlined function, at the line that takes the lock" {
	run -0 --separate-stderr ptt-stat --skip-frames='^my_lock' "$T"
	[ -z "$stderr" ]
	[ "$(by_site)" != "" ]
	[[ "$(by_site)" == *" flush_log inlined in logger_main+0x"*" (inlined_locks) at inlined_locks.c:$site_line" ]]
	# the object's site row says the same
	[[ "$output" == *"  site 1 "*" flush_log inlined in logger_main+0x"*" at inlined_locks.c:$site_line"* ]]
}

@test "--folded: inline levels are frames, root first" {
	run -0 --separate-stderr ptt-stat --folded=wait "$T"
	[ -z "$stderr" ]
	grep -qE '^([^;]*;)*start_thread;logger_main;flush_log;my_lock;\[mutex stats_lock\] [0-9]+$' <<<"$output"
}

@test "ptt-dump --human names the inline level and the inline levels past it" {
	run -0 --separate-stderr ptt-dump --human --skip-frames='^my_lock' "$T"
	[ -z "$stderr" ]
	grep -q "at inlined_locks.c:$site_line in flush_log (from flush_log <- logger_main <- " <<<"$output"
}

@test "ptt-paje carries the inline level as the wait's site, and its Paje is valid" {
	ptt-paje --skip-frames='^my_lock' "$T" >"$BATS_TEST_TMPDIR/t.paje" 2>"$BATS_TEST_TMPDIR/err.txt"
	[ ! -s "$BATS_TEST_TMPDIR/err.txt" ]
	grep -q " MW \"flush_log inlined in logger_main+0x[0-9a-f]* (inlined_locks) at inlined_locks.c:$site_line\"" "$BATS_TEST_TMPDIR/t.paje"
	assert_paje_valid "$BATS_TEST_TMPDIR/t.paje"
	assert_vite_clean "$BATS_TEST_TMPDIR/t.paje"
}

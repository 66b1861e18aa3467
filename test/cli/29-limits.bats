#!/usr/bin/env bats
# No silent limits: past every table the runtime and the recorder once had a fixed size for,
# the trace is whole, or says what it could not hold in a limit event that every tool reports once.
bats_require_minimum_version 1.5.0
load helpers

# "join HANDLE TID" for each thread_join of trace $1, in order
trace_joins() {
	ptt-dump -n "$1" | awk '$5 == "thread_join" { h = $6; t = $7; sub("handle=", "", h); sub("target=", "", t); print "join", h, t }'
}

# join_all N ORDER [ROUNDS]: every thread_join names the tid the joined thread saw itself run as
joins_named() {
	local t="$BATS_TEST_TMPDIR/t.ptt"
	run -0 --separate-stderr ptt-record -q -e thread,barrier -o "$t" -- "$EXAMPLES/join_all" -v "$@"
	[ "${lines[${#lines[@]} - 1]}" = "threads $1 alive at once, ${3:-1} rounds, $(($1 * ${3:-1})) joined ($2)" ]
	[ "$stderr" = "" ]
	echo "$output" | grep '^join ' >"$BATS_TEST_TMPDIR/truth"
	trace_joins "$t" >"$BATS_TEST_TMPDIR/joins"
	[ "$(wc -l <"$BATS_TEST_TMPDIR/joins")" -eq $(($1 * ${3:-1})) ]
	diff "$BATS_TEST_TMPDIR/truth" "$BATS_TEST_TMPDIR/joins"
	run -0 --separate-stderr ptt-dump --check "$t"
	[ "$output" = "$t: $(ptt-dump -n "$t" | wc -l) events, 0 damaged, 0 lost, 0 out of order, 0 violations: ok" ]
	[ "$stderr" = "" ]
}

@test "10000 threads alive, then joined: every thread_join names its target; ptt-stat and ptt-paje show every join" {
	joins_named 10000 stride
	local t="$BATS_TEST_TMPDIR/t.ptt"
	# the ptt-stat of the joiner: no limit met, and its time joining counted
	run -0 --separate-stderr ptt-stat -n 0 -S 0 "$t"
	[ "$stderr" = "" ]
	[[ "$output" != *"limit:"* ]]
	# the JOIN(ms) column, found by its heading (the threads' table's columns may move)
	[ "$(echo "$output" | awk '$1 == "PID" { for (i = 1; i <= NF; i++) if ($i == "JOIN(ms)") c = i }
		c && $3 == "join_all" { print ($c > 0) }')" = 1 ]
	[ "$(echo "$output" | awk '$3 == "work"' | wc -l)" -eq 10000 ]
	# a join link from each joined thread to its joiner
	ptt-paje "$t" >"$BATS_TEST_TMPDIR/t.paje"
	assert_paje_valid "$BATS_TEST_TMPDIR/t.paje"
	assert_join_links "$t" "$BATS_TEST_TMPDIR/t.paje"
	[ "$(paje_join_pairs "$BATS_TEST_TMPDIR/t.paje" | wc -l)" -eq 10000 ]
	[ "$(paje_join_pairs "$BATS_TEST_TMPDIR/t.paje" | awk '$1 == 0' | wc -l)" -eq 0 ]
}

@test "joined in reverse, long after their end: every target named" {
	joins_named 5000 reverse
}

@test "handles reused by glibc (rounds of create-all, join-all): every target is the new thread" {
	joins_named 500 forward 6
	# the same handles come back round after round
	[ "$(awk '{ print $2 }' "$BATS_TEST_TMPDIR/truth" | sort | uniq -d | wc -l)" -gt 0 ]
}

@test "a join whose target is not known is said: a limit event, reported once by each tool" {
	trace lim \
		'0.000000002 10 10 pthread thread_join handle=0x2 target=0 ret=0 retval=0x0' \
		'0.000000003 10 10 recorder limit table=1 count=1 limit=0 need=0' \
		'0.000000004 10 10 pthread thread_join handle=0x4 target=0 ret=0 retval=0x0' \
		'0.000000005 10 10 recorder limit table=1 count=1 limit=0 need=0'
	local f="$BATS_TEST_TMPDIR/lim.txt" say="2 joins, detaches, cancels or names of a thread whose tid was not known (target 0)"
	run -0 --separate-stderr ptt-dump --info "$f"
	[ "$(echo "$output" | grep -c '^limit:')" -eq 1 ]
	[ "$(echo "$output" | grep -cx "limit:      $say")" -eq 1 ]
	[ "$stderr" = "" ]
	run -0 --separate-stderr ptt-dump --check "$f"
	[ "${lines[1]}" = "$f: limit: $say" ]
	[ "$stderr" = "" ]
	run -0 --separate-stderr ptt-stat "$f"
	[ "$(echo "$output" | grep -c "limit: $say")" -eq 1 ]
	[ "$stderr" = "" ]
	run -0 --separate-stderr ptt-paje "$f"
	[ "$stderr" = "ptt-paje: $f: note: $say" ]
	run -0 --separate-stderr ptt-csv "$f"
	[ "$stderr" = "ptt-csv: $f: note: $say" ]
	# a filtered trace keeps the limit events: what it could not record stays said
	run -0 --separate-stderr ptt-filter -e mutex "$f"
	[ "$stderr" = "ptt-filter: $f: note: $say" ]
	[ "$(echo "$output" | grep -c ' limit table=1 ')" -eq 2 ]
}

@test "more objects loaded than the module table held: each announced once" {
	local d="$BATS_TEST_TMPDIR"
	echo 'int tiny(void) { return 1; }' >"$d/tiny.c"
	cc -shared -fPIC -nostdlib -s -o "$d/tiny.so" "$d/tiny.c"
	mkdir "$d/mods"
	# 2.4 times the old table (2048); glibc's dlopen slows down by the square of the objects loaded
	run -0 --separate-stderr ptt-record -q -e thread -o "$d/t.ptt" -- "$EXAMPLES/many_modules" "$d/tiny.so" "$d/mods" 5000 500
	[ "$output" = "modules 5000 loaded, 10 threads" ]
	[ "$stderr" = "" ]
	ptt-dump -n "$d/t.ptt" | awk '$5 == "module" && $7 ~ /\/mods\/m[0-9]+\.so"$/ { print $7 }' >"$d/mods.txt"
	[ "$(wc -l <"$d/mods.txt")" -eq 5000 ]
	[ "$(sort -u "$d/mods.txt" | wc -l)" -eq 5000 ]
	run -0 --separate-stderr ptt-dump --info "$d/t.ptt"
	[[ "$output" != *"limit:"* ]]
}

@test "more user event types than the old table, the longest argument list, strings longer than a record" {
	local t="$BATS_TEST_TMPDIR/t.ptt"
	# 2600: ten times the old table of 256
	run -0 --separate-stderr ptt-record -q -o "$t" -- "$EXAMPLES/many_types" 2600 300
	[ "$output" = "types 2600 registered, 0 refused, longest argument list registered, strings of 300 bytes" ]
	run -0 --separate-stderr ptt-dump --info "$t"
	[[ "$output" != *"limit:"* ]]
	[ "$(echo "$output" | grep -c '^type_[0-9]* *1$')" -eq 2600 ]
	run -0 --separate-stderr ptt-dump -n "$t"
	# the whole of it: 300 bytes of the alphabet
	[ "$(echo "$output" | grep -c ' longest_argument_list argument_number_one_abc=1 .* argument_number_eig_abc="abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghijklmn"$')" -eq 1 ]
}

@test "past every user type id and past a record's string: refusals and cuts are said, once per tool" {
	local t="$BATS_TEST_TMPDIR/t.ptt" long
	long=$(printf 'x%.0s' $(seq 700))
	run -0 --separate-stderr ptt-record -q -o "$t" -- "$EXAMPLES/many_types" 3100 2000 "$long"
	[ "$output" = "types 3071 registered, 29 refused, longest argument list registered, strings of 2000 bytes" ]
	local types="user event type table full after 3072 types: 29 registrations refused"
	local cut="4 strings (names, paths, commands) cut to 511 bytes, the longest was 2000"
	run -0 --separate-stderr ptt-dump --info "$t"
	[ "$(echo "$output" | grep '^limit:')" = "limit:      $types
limit:      $cut" ]
	run -0 --separate-stderr ptt-dump --check "$t"
	[ "${lines[1]}" = "$t: limit: $types" ]
	[ "${lines[2]}" = "$t: limit: $cut" ]
	# the cut strings are the first 511 bytes of the whole
	run -0 --separate-stderr ptt-dump -n "$t"
	[ "$(echo "$output" | awk '$5 == "process_begin"' | grep -o 'x*"$' | tr -d '"' | wc -c)" -le 511 ]
	[ "$(echo "$output" | awk '$5 == "thread_name"' | grep -o '"[a-z]*"' | tr -d '"' | tr -d '\n' | wc -c)" -eq 511 ]
	# and the closing summary of ptt-record says it too, through ptt-stat --brief
	run -0 --separate-stderr ptt-record -o "$t" -- "$EXAMPLES/many_types" 3100 2000
	[[ "$stderr" == *"limit: $types"* ]]
	[ "$(echo "$stderr" | grep -c 'limit:')" -eq 2 ]
	# down a pipe there is no file for ptt-stat to read back: the recorder says them itself
	run -0 --separate-stderr bash -c "ptt-record -o - -- '$EXAMPLES/many_types' 3100 2000 '$long' >/dev/null"
	[ "$(echo "$stderr" | grep -cx "ptt-record: limit: $types")" -eq 1 ]
	[ "$(echo "$stderr" | grep -cx "ptt-record: limit: $cut")" -eq 1 ]
	# the same from a recorder that reads no record (the runtime sums its limits in the shared
	# memory) and from one that reads only each record's first word
	local mode
	for mode in --streams=coded --streams; do
		run -0 --separate-stderr bash -c "ptt-record $mode -o - -- '$EXAMPLES/many_types' 3100 2000 '$long' >/dev/null"
		[ "$(echo "$stderr" | grep -c "limit:")" -eq 2 ]
		[ "$(echo "$stderr" | grep -cx "ptt-record: limit: $types")" -eq 1 ]
		[ "$(echo "$stderr" | grep -cx "ptt-record: limit: $cut")" -eq 1 ]
	done
}

@test "a command line of any length is in the header whole; the process_begin record says its cut" {
	local t="$BATS_TEST_TMPDIR/t.ptt" long
	long=$(printf 'y%.0s' $(seq 5000))
	run -0 --separate-stderr ptt-record -q -o "$t" -- "$EXAMPLES/many_types" 0 1 "$long" "$long"
	run -0 --separate-stderr ptt-dump --info "$t"
	[ "$(echo "$output" | grep '^cmdline ')" = "cmdline     \"$EXAMPLES/many_types\" \"0\" \"1\" \"$long\" \"$long\"" ]
	[ "$(echo "$output" | grep -cx "limit:      1 string (names, paths, commands) cut to 511 bytes, the longest was $((${#EXAMPLES} + 11 + 2 * 5000 + 6))")" -eq 1 ]
}

@test "a thread holding more than the 1024 frames kept: the oldest forgotten is said once by each tool" {
	{ echo '# ptt-trace 1'; echo '0.000000001 10 10 pthread process_begin ppid=1 cmd="x"'
	  awk 'BEGIN { for (i = 1; i <= 1030; i++) printf "0.%09d 10 10 pthread mutex_lock mutex=0x%x ret=0\n", i + 1, 4096 + 64 * i }'
	} >"$BATS_TEST_TMPDIR/deep.txt"
	local f="$BATS_TEST_TMPDIR/deep.txt" say="6 holds and waits in force forgotten: a thread had more than the 1024 kept at once (the oldest forgotten)"
	run -0 --separate-stderr ptt-stat "$f"
	[ "$(echo "$output" | grep -c "limit: $say")" -eq 1 ]
	[ "$stderr" = "" ]
	run -0 --separate-stderr ptt-dump --check "$f"
	[ "${lines[1]}" = "$f: limit: $say" ]
	[ "$stderr" = "" ]
	run -0 --separate-stderr ptt-paje "$f"
	[ "$stderr" = "ptt-paje: $f: note: $say" ]
	run -0 --separate-stderr ptt-deadlock "$f"
	[ "$stderr" = "ptt-deadlock: $f: note: $say" ]
	# 1024 held: nothing forgotten, nothing said
	head -n 1026 "$f" >"$BATS_TEST_TMPDIR/kept.txt"
	run -0 --separate-stderr ptt-stat "$BATS_TEST_TMPDIR/kept.txt"
	[[ "$output" != *"limit:"* ]]
	[ "$stderr" = "" ]
}

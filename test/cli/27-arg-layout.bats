#!/usr/bin/env bats
# Arguments are read where the trace's own type table puts them (ptt-trace(5):
# a header defines its types), not where events.def does: the same trace with
# every type given another layout (relayout_args.awk: an argument of no known
# name after the first, the rest reversed) reads the same in every tool.
bats_require_minimum_version 1.5.0
load helpers

# record PROGRAM ARGS into t.txt (text form) and its relaid copy r.txt
relaid() {
	record "$@"
	ptt-dump "$BATS_TEST_TMPDIR/t.ptt" >"$BATS_TEST_TMPDIR/t.txt"
	awk -f "$BATS_TEST_DIRNAME/relayout_args.awk" "$BATS_TEST_TMPDIR/t.txt" >"$BATS_TEST_TMPDIR/r.txt"
}

# every tool says the same of t.txt and r.txt (r.txt named t.txt in diagnostics)
assert_same_reading() {
	local tool
	cd "$BATS_TEST_TMPDIR"
	for tool in "ptt-stat" "ptt-dump --human" "ptt-deadlock" "ptt-csv --states" "ptt-paje --objects" "ptt-json"; do
		# shellcheck disable=SC2086
		run -0 --separate-stderr $tool t.txt
		printf '%s\n--- stderr\n%s\n' "$output" "$stderr" >want
		# shellcheck disable=SC2086
		run -0 --separate-stderr $tool r.txt
		printf '%s\n--- stderr\n%s\n' "$output" "${stderr//r.txt/t.txt}" >got
		diff -u want got || { echo "$tool reads the relaid trace otherwise"; return 1; }
	done
}

@test "threads and mutexes: the relaid trace reads the same" {
	relaid "$EXAMPLES/contention" -t 3 -n 20
	# the layouts differ: thread_create's start, child and ret moved, its site last
	grep -q '^# type [0-9]* thread_create thread 1 pthread handle:ptr,extra_field:u32,ret:i32,child:tid,start:ptr,site:ptr$' \
		"$BATS_TEST_TMPDIR/r.txt"
	grep -q ' thread_create handle=0x[0-9a-f]* extra_field=7 ret=0 child=[0-9]* start=0x[0-9a-f]* site=' "$BATS_TEST_TMPDIR/r.txt"
	assert_same_reading
	# and what is read is right: the workers named by their start function, the lock by its name
	run -0 --separate-stderr ptt-dump --human r.txt
	grep -q 'creates thread [0-9]* (worker) at contention.c:[0-9]* in main$' <<<"$output"
	grep -q 'holds mutex hot_lock' <<<"$output"
}

@test "conditions, barriers and semaphores: the relaid trace reads the same" {
	relaid "$EXAMPLES/prodcons" -n 50
	grep -q '^# type [0-9]* cond_wait cond 1 pthread cond:ptr,extra_field:u32,ret:i32,mutex:ptr,site:ptr$' "$BATS_TEST_TMPDIR/r.txt"
	assert_same_reading
	relaid "$EXAMPLES/prim_sem"
	grep -q '^# type [0-9]* sem_init sem 2 pthread sem:ptr,extra_field:u32,ret:i32,value:u32,site:ptr$' "$BATS_TEST_TMPDIR/r.txt"
	assert_same_reading
}

#!/usr/bin/env bats
# ptt-deadlock: an inversion that did not deadlock, a real deadlock stopped by SIGINT, and silence on clean programs.
bats_require_minimum_version 1.5.0
load helpers

@test "ptt-deadlock --help, --version and usage errors" {
	run -0 ptt-deadlock --help
	[[ "$output" == *"Usage: ptt-deadlock"* ]]
	run -0 ptt-deadlock --version
	run -2 --separate-stderr ptt-deadlock --bogus
	run -2 --separate-stderr ptt-deadlock a b
	run -2 --separate-stderr ptt-deadlock "$BATS_TEST_TMPDIR/nope"
}

@test "a lock-order inversion that did not deadlock is reported, exit 1" {
	ptt-record -q -o "$BATS_TEST_TMPDIR/t.ptt" -- "$EXAMPLES/inversion" >/dev/null
	run -1 ptt-deadlock "$BATS_TEST_TMPDIR/t.ptt"
	[[ "$output" == *"potential deadlock 1: lock-order cycle of 2 objects"* ]]
	[[ "$output" == *"lock_b (0x"*"taken while holding lock_a"*"(first)"* ]]
	[[ "$output" == *"lock_a (0x"*"taken while holding lock_b"*"(second)"* ]]
	run -1 ptt-deadlock -q "$BATS_TEST_TMPDIR/t.ptt"
	[ -z "$output" ]
	run -1 bash -c "ptt-dump '$BATS_TEST_TMPDIR/t.ptt' | ptt-deadlock"
}

@test "a real deadlock, stopped by SIGINT through ptt-record, is reported, exit 3" {
	run timeout -s INT 3 ptt-record -q -o "$BATS_TEST_TMPDIR/t.ptt" -- "$EXAMPLES/deadlock"
	run -3 ptt-deadlock "$BATS_TEST_TMPDIR/t.ptt"
	[[ "$output" == *"deadlock: threads blocked in a cycle at the end of the trace"* ]]
	[[ "$output" == *"for left (0x"*"held by thread"* ]]
	[[ "$output" == *"for right (0x"*"held by thread"* ]]
	[[ "$output" == *"potential deadlock 1"* ]]
}

@test "nothing is reported on clean programs" {
	ptt-record -q -o "$BATS_TEST_TMPDIR/p.ptt" -- "$EXAMPLES/prodcons" -n 2000 >/dev/null
	run -0 ptt-deadlock "$BATS_TEST_TMPDIR/p.ptt"
	[ "$output" = "no lock-order inversion and no deadlock found" ]
	ptt-record -q -o "$BATS_TEST_TMPDIR/c.ptt" -- "$EXAMPLES/contention" -n 100 >/dev/null
	run -0 ptt-deadlock "$BATS_TEST_TMPDIR/c.ptt"
	seq 1 200000 >"$BATS_TEST_TMPDIR/in.txt"
	for cmd in "pigz -p 2 -c" "xz -T2 -c" "zstd -T2 -q -c" "sort --parallel=2 -S 1M"; do
		command -v ${cmd%% *} >/dev/null || continue
		ptt-record -q -o "$BATS_TEST_TMPDIR/r.ptt" -- $cmd "$BATS_TEST_TMPDIR/in.txt" >/dev/null
		run ptt-deadlock "$BATS_TEST_TMPDIR/r.ptt"
		[ "$status" -eq 0 ] || { echo "$cmd: $output"; return 1; }
	done
}

#!/usr/bin/env bats
# ptt-record: rings on demand for any number of live threads, the cap (-t), churn without loss.
bats_require_minimum_version 1.5.0
load helpers

# ptt-record and ptt-dump --check on many_threads N: nothing lost, counts equal to the program's own
live_threads() {
	local n=$1
	run -0 --separate-stderr ptt-record -q -o "$BATS_TEST_TMPDIR/t.ptt" -- "$EXAMPLES/many_threads" "$n" 10
	[ "$output" = "threads $n alive at once, locks $((n * 10))" ]
	[ "$stderr" = "" ]
	run -0 --separate-stderr ptt-dump --check "$BATS_TEST_TMPDIR/t.ptt"
	[[ "$output" == *" 0 damaged, 0 lost, 0 out of order, 0 violations: ok" ]]
	[ "$stderr" = "" ]
	run -0 --separate-stderr ptt-dump --info "$BATS_TEST_TMPDIR/t.ptt"
	[ "$(echo "$output" | awk '$1 == "thread_begin" {print $2}')" -eq "$((n + 1))" ]
	[ "$(echo "$output" | awk '$1 == "thread_end" {print $2}')" -eq "$((n + 1))" ]
	[ "$(echo "$output" | awk '$1 == "mutex_lock" {print $2}')" -eq "$((n * 10))" ]
	[ "$(echo "$output" | awk '$1 == "barrier_wait" {print $2}')" -eq "$((n + 1))" ]
}

@test "300 threads alive at once: every thread has a ring, nothing lost" {
	live_threads 300
}

@test "2000 threads alive at once: every thread has a ring, nothing lost" {
	live_threads 2000
}

@test "-t caps the rings; with -d the threads left without one are counted exactly" {
	run -0 --separate-stderr ptt-record -q -e thread -o "$BATS_TEST_TMPDIR/all.ptt" -- "$EXAMPLES/many_threads" 300 1
	run -0 --separate-stderr ptt-dump -n "$BATS_TEST_TMPDIR/all.ptt"
	all=$(echo "$output" | awk '$4 != "recorder"' | wc -l)
	run -0 --separate-stderr ptt-record -q -d -t 100 -e thread -o "$BATS_TEST_TMPDIR/cap.ptt" -- "$EXAMPLES/many_threads" 300 1
	[ "$output" = "threads 300 alive at once, locks 300" ]
	run -0 --separate-stderr ptt-dump -n "$BATS_TEST_TMPDIR/cap.ptt"
	kept=$(echo "$output" | awk '$4 != "recorder"' | wc -l)
	lost=$(echo "$output" | awk '$5 == "rec_lost" { sub("count=", "", $7); n += $7 } END { print n + 0 }')
	echo "all=$all kept=$kept lost=$lost"
	[ "$lost" -gt 0 ]
	[ "$((kept + lost))" -eq "$all" ]
	run -0 --separate-stderr ptt-dump --check "$BATS_TEST_TMPDIR/cap.ptt"
	[[ "${lines[0]}" == *" 0 damaged, $lost lost, 0 out of order, 0 violations: ok" ]]
	# and why, once: the limit the trace met
	[ "${lines[1]}" = "$BATS_TEST_TMPDIR/cap.ptt: limit: every one of the 100 rings was taken: $lost events of threads without a ring lost (ptt-record -t)" ]
	[ "${#lines[@]}" -eq 2 ]
	[ "$stderr" = "" ]
}

@test "churn in rounds of 10 loses nothing, with and without a cap below a round" {
	for cap in "" "-t 8"; do
		# shellcheck disable=SC2086
		run -0 --separate-stderr ptt-record -q $cap -o "$BATS_TEST_TMPDIR/t.ptt" -- "$EXAMPLES/churn" 1000 10
		[ "$output" = "threads 1000 locks 1000" ]
		run -0 --separate-stderr ptt-dump --check "$BATS_TEST_TMPDIR/t.ptt"
		[[ "$output" == *" 0 damaged, 0 lost, 0 out of order, 0 violations: ok" ]]
		run -0 --separate-stderr ptt-dump --info "$BATS_TEST_TMPDIR/t.ptt"
		[ "$(echo "$output" | awk '$1 == "thread_begin" {print $2}')" -eq 1001 ]
		[ "$(echo "$output" | awk '$1 == "mutex_lock" {print $2}')" -eq 1000 ]
	done
}

@test "a ring left free gives its memory back: a pool that shrank does not keep its peak's rings" {
	# 64 threads write through 20000 lock pairs each (~1.7 MB of records, the
	# 1 MiB rings wrap), then end; the program watches the rings' memfd for up to 30 s
	run -0 --separate-stderr ptt-record -q -o "$BATS_TEST_TMPDIR/t.ptt" -- "$EXAMPLES/ring_memory" 64 20000
	[ "${lines[0]}" = "threads 64 pairs 20000" ]
	[ "$stderr" = "" ]
	at_end=$(echo "$output" | sed -n 's/^ring memory when the threads had ended: \([0-9]*\) KiB$/\1/p')
	after=$(echo "$output" | sed -n 's/^ring memory after the watch: \([0-9]*\) KiB$/\1/p')
	echo "at the end: $at_end KiB, after: $after KiB"
	[ "$at_end" -ge $((64 * 1024)) ] # every thread's ring was resident
	[ "$after" -le $((at_end / 10)) ]
	run -0 --separate-stderr ptt-dump --check "$BATS_TEST_TMPDIR/t.ptt"
	[[ "$output" == *" 0 damaged, 0 lost, 0 out of order, 0 violations: ok" ]]
	[ "$stderr" = "" ]
	run -0 --separate-stderr ptt-dump --info "$BATS_TEST_TMPDIR/t.ptt"
	[ "$(echo "$output" | awk '$1 == "mutex_lock" {print $2}')" -eq $((64 * 20000)) ]
}

@test "the rings' default size is twice the L2 cache, from 1M to 8M; -b and --flight=SIZE set it" {
	l2=$(getconf LEVEL2_CACHE_SIZE 2>/dev/null || true)
	[[ "$l2" =~ ^[0-9]+$ ]] && [ "$l2" -gt 0 ] || l2=$((1 << 20)) # not told: 2M
	want=$((1 << 20))
	while [ "$want" -lt $((2 * l2)) ] && [ "$want" -lt $((8 << 20)) ]; do want=$((want * 2)); done
	run -0 --separate-stderr ptt-record --help
	[[ "$output" == *"(default twice the L2"*"cache, 1M to 8M: $((want >> 20))M here)"* ]]
	run -0 --separate-stderr ptt-record -q -o "$BATS_TEST_TMPDIR/t.ptt" -- true
	[ "$stderr" = "" ]
	run -0 --separate-stderr ptt-dump --info "$BATS_TEST_TMPDIR/t.ptt"
	[ "$(echo "$output" | awk '$1 == "ring_bytes" { print $2 }')" -eq "$want" ]
	run -0 --separate-stderr ptt-record -q -b 64k -o "$BATS_TEST_TMPDIR/b.ptt" -- true
	run -0 --separate-stderr ptt-dump --info "$BATS_TEST_TMPDIR/b.ptt"
	[ "$(echo "$output" | awk '$1 == "ring_bytes" { print $2 }')" -eq 65536 ]
	run -0 --separate-stderr ptt-record -q --flight -o "$BATS_TEST_TMPDIR/f.ptt" -- true
	run -0 --separate-stderr ptt-dump --info "$BATS_TEST_TMPDIR/f.ptt"
	[ "$(echo "$output" | awk '$1 == "ring_bytes" { print $2 }')" -eq "$want" ]
}

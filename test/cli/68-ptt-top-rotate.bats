#!/usr/bin/env bats
# ptt-top on a rotated recording (ptt-record -m): followed from file to file as the recorder moves on.
bats_require_minimum_version 1.5.0
load helpers

# a rotated recording of contention in the background, files of SIZE bytes: 4 threads, each taking
# hot_lock ROUNDS times for 50 us (some 0.4 MB of trace a second); sets REC (ptt-record's pid)
record_rotated() {
	ptt-record -q -m "$1" -o "$BATS_TEST_TMPDIR/r.ptt" -- "$EXAMPLES/contention" -t 4 -n "$2" -u 50 \
		>"$BATS_TEST_TMPDIR/out.txt" 2>"$BATS_TEST_TMPDIR/err.txt" 3>&- &
	REC=$!
	for _ in $(seq 200); do
		tr '\0' ' ' <"/proc/$REC/cmdline" | grep -q '^[^ ]*ptt-record ' && pgrep -P "$REC" >/dev/null &&
			[ -s "$BATS_TEST_TMPDIR/r.ptt.0001" ] && return 0
		sleep 0.05
	done
	return 1
}

# ptt-stat's CONTENDED, WAIT(ms) and HOLD(ms) of hot_lock on the files given
stat_of() {
	ptt-stat "$@" | awk '$1 ~ /^hot_lock\*?$/ { print $4, $6, $11; exit }'
}

# the last frame's since-the-start WAITS, WAIT(ms) and HOLD(ms) of hot_lock; the sum of the interval WAITS
top_of() {
	awk '$2 == "hot_lock" { last = $11 " " $12 " " $15; n += $4 } END { print last, n }' <<<"$1"
}

@test "ptt-top -a PID on a rotated recording: every file followed, its sums ptt-stat's on the whole set" {
	record_rotated 150000 12000
	run -0 --separate-stderr timeout 120 ptt-top -b -a -d 0.3 "$REC"
	[ -z "$stderr" ]
	wait "$REC"
	nfiles=$(ls "$BATS_TEST_TMPDIR"/r.ptt.* | wc -l)
	[ "$nfiles" -ge 4 ]
	# the frames name the file being read, part after part, the last one to the recording's end
	[ "$(grep -o '^ptt-top [^ ]*' <<<"$output" | sort -u | wc -l)" -ge 2 ]
	[ "$(grep -c '^ptt-top .*  recording ended$' <<<"$output")" -eq 1 ]
	last=$(printf '%04d' "$nfiles")
	grep -q "^ptt-top $BATS_TEST_TMPDIR/r.ptt.$last (part $nfiles of a rotated recording)  recording ended$" <<<"$output"
	# no hold or wait counted twice across the files (each later file's head repeats those in force),
	# none left out: the totals are ptt-stat's on the set, and the intervals add up to them
	read -r waits wait_ms hold_ms sum <<<"$(top_of "$output")"
	[ "$(stat_of "$BATS_TEST_TMPDIR"/r.ptt.*)" = "$waits $wait_ms $hold_ms" ]
	[ "$sum" = "$waits" ] && [ "$waits" -gt 100 ]
	grep -q 'mutex_lock 48000' <(ptt-dump -n "$BATS_TEST_TMPDIR"/r.ptt.* | awk '{ n[$5]++ } END { for (e in n) print e, n[e] }')
	run -0 ptt-dump --check "$BATS_TEST_TMPDIR"/r.ptt.*
}

@test "ptt-top on a rotated recording's first file, complete: goes on to the file being written, to the end" {
	record_rotated 150000 12000
	for _ in $(seq 200); do [ -s "$BATS_TEST_TMPDIR/r.ptt.0002" ] && break; sleep 0.05; done
	run -0 --separate-stderr timeout 120 ptt-top -b -d 0.3 "$BATS_TEST_TMPDIR/r.ptt.0001"
	[ -z "$stderr" ]
	wait "$REC"
	[ "$(grep -c '^ptt-top .*  recording ended$' <<<"$output")" -eq 1 ]
	read -r waits wait_ms hold_ms sum <<<"$(top_of "$output")"
	[ "$(stat_of "$BATS_TEST_TMPDIR"/r.ptt.*)" = "$waits $wait_ms $hold_ms" ]
}

@test "ptt-top on a later part, complete: read from its head (holds and names in force), followed to the end" {
	record_rotated 150000 12000
	for _ in $(seq 200); do [ -s "$BATS_TEST_TMPDIR/r.ptt.0003" ] && break; sleep 0.05; done
	# the part as a complete file: what ptt-stat says of it alone
	run -0 --separate-stderr timeout 120 ptt-top -b -n 1 -d 0.3 "$BATS_TEST_TMPDIR/r.ptt.0002"
	wait "$REC"
	[ -z "$stderr" ]
	grep -qE '^read from the start of part 2 of a rotated recording at [0-9.]+ s: the names, holds and waits in force then are known from its head, the events before are not read$' <<<"$output"
	at=$(sed -n 's/^read from the start of part 2 of a rotated recording at \([0-9.]*\) s.*/\1/p' <<<"$output")
	grep -q "^(sort: wait) .* | -- since $at s --$" <<<"$output"
	grep -qE '^    waited  [0-9]+ \(worker\) ' <<<"$output"
	# from part 2 to the end: ptt-stat's on those files, read in order from a part mid-run
	run -0 --separate-stderr ptt-top -b "$BATS_TEST_TMPDIR/r.ptt.0002"
	[ -z "$stderr" ]
	grep -q 'recording ended$' <<<"$output"
	grep -q "^read from the start of part 2 of a rotated recording at $at s" <<<"$output"
	read -r waits wait_ms hold_ms sum <<<"$(top_of "$output")"
	[ "$(stat_of $(ls "$BATS_TEST_TMPDIR"/r.ptt.* | tail -n +2))" = "$waits $wait_ms $hold_ms" ]
}

@test "ptt-top on a rotated recording whose next file is gone (ptt-record -f): said, exit status 1" {
	record_rotated 150000 4000
	wait "$REC"
	[ -s "$BATS_TEST_TMPDIR/r.ptt.0003" ]
	rm "$BATS_TEST_TMPDIR/r.ptt.0002"
	run -1 --separate-stderr ptt-top -b "$BATS_TEST_TMPDIR/r.ptt.0001"
	[ "$stderr" = "ptt-top: $BATS_TEST_TMPDIR/r.ptt.0002: the recording's next file: No such file or directory; the view ends at the end of $BATS_TEST_TMPDIR/r.ptt.0001" ]
	grep -q "^ptt-top $BATS_TEST_TMPDIR/r.ptt.0001  recording ended$" <<<"$output"
}

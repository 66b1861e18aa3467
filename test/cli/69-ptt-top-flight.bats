#!/usr/bin/env bats
# ptt-top on a flight recording (ptt-record --flight): the rings read in place, nothing asked of the recorder.
bats_require_minimum_version 1.5.0
load helpers

# a flight recording of contention in the background: 4 threads, each holding hot_lock HOLD_US ROUNDS
# times; sets REC (ptt-record's pid)
record_flight() {
	ptt-record -q --flight -o "$BATS_TEST_TMPDIR/f.ptt" -- "$EXAMPLES/contention" -t 4 -n "$1" -u "$2" \
		>"$BATS_TEST_TMPDIR/out.txt" 2>"$BATS_TEST_TMPDIR/err.txt" 3>&- &
	REC=$!
	for _ in $(seq 200); do
		tr '\0' ' ' <"/proc/$REC/cmdline" | grep -q '^[^ ]*ptt-record ' && pgrep -P "$REC" >/dev/null && return 0
		sleep 0.05
	done
	return 1
}

# what the recording and the program said: the program's output, the trace checked, the stalls it records
after_recording() {
	wait "$REC"
	[ "$(cat "$BATS_TEST_TMPDIR/out.txt")" = "done" ]
	[ ! -s "$BATS_TEST_TMPDIR/err.txt" ]
	run -0 ptt-dump --check "$BATS_TEST_TMPDIR/f.ptt"
	# no thread waited for room in its ring (a snapshot makes them wait; ptt-top does not)
	[ "$(ptt-dump -n "$BATS_TEST_TMPDIR/f.ptt" | awk '$5 ~ /^tracer_stall/' | wc -l)" -eq 0 ]
}

@test "ptt-top PID on a flight recording: the hot lock, its holder and waiters, from the rings read in place" {
	record_flight 12 200000
	run -0 --separate-stderr timeout 60 ptt-top -b -n 2 -d 0.5 "$REC"
	[ -z "$stderr" ]
	[ "$(grep -c "^ptt-top the flight rings of ptt-record $REC  recording$" <<<"$output")" -eq 2 ]
	grep -qE '^flight rings read in place from [0-9.]+ s: [0-9]+ records; not seen: 0 words overwritten before ptt-top read them, 0 torn, [0-9]+ late$' <<<"$output"
	grep -qE '^1 hot_lock +mutex +[0-9]+ ' <<<"$output"
	grep -qE '^    holder  [0-9]+ \(worker\) for [0-9.]+ ms at worker$' <<<"$output"
	[ "$(grep -cE '^    waiter  [0-9]+ \(worker\) for [0-9.]+ ms at worker$' <<<"$output")" -ge 2 ]
	[ "$(grep -cE '^    waited  [0-9]+ \(worker\) [0-9.]+ ms in [0-9]+ waits? ended in the last interval, at worker$' <<<"$output")" -ge 2 ]
	after_recording
}

@test "ptt-top -a on a flight recording its rings hold whole: every record seen once, totals ptt-stat's on the file" {
	# 4 x 400 acquisitions: some 10 000 records, well within the rings (nothing overwritten)
	record_flight 400 2000
	sleep 0.5
	run -0 --separate-stderr timeout 120 ptt-top -b -a -d 0.3 "$REC"
	[ -z "$stderr" ]
	frames=$output
	after_recording
	[ "$(grep -c '^ptt-top .*  recording ended$' <<<"$frames")" -eq 1 ]
	grep -qE '^flight rings read in place from 0.000 s: [0-9]+ records; not seen: 0 words overwritten' <<<"$frames"
	[ "$(ptt-dump -n "$BATS_TEST_TMPDIR/f.ptt" | awk '$5 == "mutex_lock"' | wc -l)" -eq 1600 ]
	# the waits: ptt-stat's count to the unit (a record read twice would count twice), its times to
	# within 0.1 % (ptt-top times the rings' clock by its own calibration)
	stat=$(ptt-stat "$BATS_TEST_TMPDIR/f.ptt" | awk '$1 ~ /^hot_lock\*?$/ { print $4, $6, $11; exit }')
	top=$(awk '$2 == "hot_lock" { last = $11 " " $12 " " $15; n += $4 } END { print last, n }' <<<"$frames")
	read -r sw sms shold <<<"$stat"
	read -r tw tms thold tsum <<<"$top"
	[ "$sw" = "$tw" ] && [ "$tsum" = "$tw" ] && [ "$tw" -gt 100 ]
	awk -v a="$sms" -v b="$tms" -v c="$shold" -v d="$thold" \
		'BEGIN { exit !(a > 0 && (a - b) / a < 0.001 && (b - a) / a < 0.001 && (c - d) / c < 0.001 && (d - c) / c < 0.001) }'
}

@test "ptt-top on a flight recording in a terminal (tmux): the hot lock and its waiters, q leaves, the recording goes on" {
	command -v tmux >/dev/null || skip "tmux not installed"
	record_flight 20 200000
	sock="$BATS_TEST_TMPDIR/tmux.sock"
	tmux -S "$sock" new-session -d -x 160 -y 40 "ptt-top -d 0.5 $REC; echo status=\$? >$BATS_TEST_TMPDIR/status; sleep 30"
	pane() { tmux -S "$sock" capture-pane -p; }
	until_pane() { for _ in $(seq 100); do pane | grep -qE "$1" && return 0; sleep 0.1; done; pane; return 1; }
	until_pane '^1 hot_lock +mutex'
	until_pane '^    waiter  [0-9]+ \(worker\)'
	tmux -S "$sock" send-keys q
	for _ in $(seq 100); do [ -s "$BATS_TEST_TMPDIR/status" ] && break; sleep 0.1; done
	tmux -S "$sock" kill-server || true
	[ "$(cat "$BATS_TEST_TMPDIR/status")" = "status=0" ]
	kill -0 "$REC"
	after_recording
}

@test "ptt-top on a flight recording whose rings it cannot read: said, exit status 3" {
	ptt-record -q --flight -o "$BATS_TEST_TMPDIR/f.ptt" -- sleep 30 3>&- &
	rec=$!
	for _ in $(seq 200); do pgrep -P "$rec" >/dev/null && break; sleep 0.05; done
	# another user's recorder: its /proc fd cannot be opened
	command -v setpriv >/dev/null || skip "setpriv not installed"
	[ "$(id -u)" -eq 0 ] || skip "needs root to become another user"
	run -3 --separate-stderr setpriv --reuid=65534 --regid=65534 --clear-groups "$PTT_BUILD/bin/ptt-top" -b "$rec"
	pkill -INT -P "$rec" sleep || true
	wait "$rec" || true
	[ -z "$output" ]
	[[ "$stderr" == "ptt-top: $rec: /proc/$rec/fd: Permission denied" ]]
}

@test "ptt-top on a flight recording whose rings turn over faster than it reads: the words not seen are counted, no damage" {
	# rings of 4 KiB (some 100 records) and holds of 0 us: each ring turns over many times between sweeps
	ptt-record -q --flight=4k -o "$BATS_TEST_TMPDIR/f.ptt" -- "$EXAMPLES/contention" -t 4 -n 100000 -u 0 \
		>"$BATS_TEST_TMPDIR/out.txt" 2>"$BATS_TEST_TMPDIR/err.txt" 3>&- &
	REC=$!
	for _ in $(seq 200); do pgrep -P "$REC" >/dev/null && break; sleep 0.05; done
	run -0 --separate-stderr timeout 60 ptt-top -b -n 2 -d 0.5 "$REC"
	[ -z "$stderr" ]
	frames=$output
	after_recording
	# the last frame: records read, and the overwritten words said, not guessed into events
	line=$(grep '^flight rings read in place' <<<"$frames" | tail -1)
	[[ "$line" =~ ": "([0-9]+)" records; not seen: "([0-9]+)" words overwritten before ptt-top read them, 0 torn, "[0-9]+" late"$ ]]
	[ "${BASH_REMATCH[1]}" -gt 0 ] && [ "${BASH_REMATCH[2]}" -gt 0 ]
	[ "$(grep -c ', damaged stretches 0$' <<<"$frames")" -eq 2 ]
}

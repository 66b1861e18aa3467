# bench/stacks.sh - what the callers' stacks (issue 19, ptt-record --stacks) cost:
# the uncontended fast path with stacks off, on blocking paths (the default) and
# on every acquisition (all), paired run by run; the cost of one acquisition
# with its stack (unwinding, the table's lookup and the stack record: what a
# contended acquisition adds to its request); the same seen directly on a
# contended mutex; bytes per event.  Sourced by bench/run.sh (its helpers and
# $BIN, $OUT, $TMP, $REPS); `PTT_BENCH_ONLY=stacks make bench` runs the floor
# and this section alone.  Knobs: PTT_BENCH_STACKS_REPS (runs of each mode,
# default 2 x REPS), PTT_BENCH_STACKS_ITER (pairs per trial, 20 trials a run,
# default 50000).  Timing as bench/site.sh: the trace path alone (a warmed -b
# ring that holds the timed loop), the thread's CPU time, fastest trial; the
# modes interleaved so a load change on a shared machine hits all alike.

stacks_bench() {
	local sl=$OUT/siteloop ll=$OUT/lockloop n iter hold warm r m v none blk all d lo hi req
	section "stacks (issue 19): fast path, cost of an acquisition with its stack, size"
	n=${PTT_BENCH_STACKS_REPS:-$((2 * REPS))}
	iter=${PTT_BENCH_STACKS_ITER:-50000}
	$CC -O2 -pthread -o "$sl" "$SRC/siteloop.c" || return
	# a ring holding the timed trials' records (lock, stack, unlock: 44 + 28 + 44 bytes a pair)
	hold=1048576
	while [ $hold -lt $((iter * 20 * 116)) ] && [ $hold -lt 1073741824 ]; do hold=$((hold * 2)); done
	warm=$((hold / 116 * 6 / 5))
	: >"$TMP/stk-none" && : >"$TMP/stk-blocking" && : >"$TMP/stk-all"
	for r in $(seq "$n"); do
		for m in none blocking all; do
			v=$("$BIN/ptt-record" -q --stacks=$m -b $hold -o "$TMP/stk-$m.ptt" -- "$sl" "$iter" 20 $warm 2>>"$TMP/err")
			pos "$v" && echo "$v" >>"$TMP/stk-$m"
		done
	done
	if ! [ -s "$TMP/stk-none" ] || ! [ -s "$TMP/stk-all" ] || ! [ -s "$TMP/stk-blocking" ]; then
		note "stacks: a run failed: $(tail -1 "$TMP/err")"
		return
	fi
	# a pair is 2 events (lock, unlock) in every mode; with all, the lock also has its stack record
	none=$(median <"$TMP/stk-none") blk=$(median <"$TMP/stk-blocking") all=$(median <"$TMP/stk-all")
	say "trace path, --stacks=none (thread CPU time)" "$(calc "$none / 2")" "ns/event" "median of $n runs' fastest trials; private mutex"
	say "trace path, --stacks=blocking (the default)" "$(calc "$blk / 2")" "ns/event" "uncontended: no stack is taken"
	say "trace path, --stacks=all" "$(calc "$all / 2")" "ns/event" "every acquisition unwinds"
	paste "$TMP/stk-all" "$TMP/stk-none" | awk '{printf "%.2f\n", $1 - $2}' | sort -g >"$TMP/stk-diff"
	d=$(median <"$TMP/stk-diff")
	lo=$(awk '{v[NR] = $1} END {print v[int((NR + 3) / 4)]}' "$TMP/stk-diff")
	hi=$(awk '{v[NR] = $1} END {print v[NR + 1 - int((NR + 3) / 4)]}' "$TMP/stk-diff")
	say "an acquisition's stack: unwind, lookup, record" "$d" "ns" "all - none per pair; middle half $lo to $hi; $(count_of "$TMP/stk-all.ptt" '^stack$') stacks, depth 4"
	STACK_NS=$d
	# for scale: what a contended acquisition waits anyway (2 threads on one mutex, --stacks=blocking)
	"$BIN/ptt-record" -q -o "$TMP/stk-cb.ptt" -- "$ll" 2 200000 shared >/dev/null 2>>"$TMP/err"
	req=$("$BIN/ptt-stat" -c -n 1 "$TMP/stk-cb.ptt" 2>>"$TMP/err" | awk -F, 'NR == 2 && $6 > 0 { printf "%.0f", $8 / $6 }')
	pos "$req" && say "for scale: a contended acquisition's mean wait" "$req" "ns" \
		"2 threads, one mutex, with stacks: the stack adds $(calc "100 * $d / $req")% to it"
	for m in none blocking all; do
		"$BIN/ptt-record" -q --stacks=$m -o "$TMP/stk-sz-$m.ptt" -- "$ll" 2 100000 shared >/dev/null 2>>"$TMP/err"
		say "bytes/event, 2 threads one mutex, --stacks=$m" \
			"$(calc "$(stat -c %s "$TMP/stk-sz-$m.ptt") / $(info "$TMP/stk-sz-$m.ptt" events)")" "bytes" \
			"$(count_of "$TMP/stk-sz-$m.ptt" '^stack$') stack events of $(info "$TMP/stk-sz-$m.ptt" events)"
	done
	if command -v sqlite3 >/dev/null; then
		for m in none blocking; do
			"$BIN/ptt-record" -q --stacks=$m -o "$TMP/stk-sq-$m.ptt" -- sqlite3 :memory: -init "$SRC/sqlite_index.sql" .quit \
				>/dev/null 2>>"$TMP/err"
			say "bytes/event, sqlite3 (PRAGMA threads), --stacks=$m" \
				"$(calc "$(stat -c %s "$TMP/stk-sq-$m.ptt") / $(info "$TMP/stk-sq-$m.ptt" events)")" "bytes" \
				"$(count_of "$TMP/stk-sq-$m.ptt" '^stack$') stack events, $(count_of "$TMP/stk-sq-$m.ptt" '^stack_frames$') frame records"
		done
	fi
	rm -f "$TMP"/stk-*.ptt
}
stacks_bench

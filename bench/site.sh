# bench/site.sh - what the call site (issue 15: every lock, wait, post, signal,
# create and join event carries its caller's address, site:ptr) costs: ns and
# instructions per event on the trace path, and trace bytes per event, raw and
# -z, with and without it.  Sourced by bench/run.sh (its helpers and $BIN,
# $OUT, $TMP, $REPS); `PTT_BENCH_ONLY=site make bench` runs the floor and this
# section alone.  Knobs: PTT_BENCH_SITE_REPS (pairs of runs, default 2 x REPS),
# PTT_BENCH_SITE_ITER (lock/unlock pairs per trial, 20 trials a run, default 50000).
# Sizes: the lock loop (every event has a site) and sqlite3 (bench/sqlite_index.sql).
#
# Why a second build rather than a harness timing ptt_emit with and without
# two more words: the site is taken in the exported wrapper (a load of the
# return address), passed down through the helpers, stored and added to the
# checksum; a harness would see the last two only, and not the register the
# site occupies across the real call.  So make bench builds BUILD/nosite
# (make bench-nosite: the same sources with PTT_NO_SITE, capture/runtime/runtime.h,
# and a recorder whose type table lacks the argument, so its traces read as
# older traces do) and this section runs the real pthread_mutex_lock/unlock
# under each, interleaved run by run so that a load change on a shared
# machine hits both alike.  Each run is the trace path alone (-b with a ring
# that holds the timed loop, warmed up first: see README.md, "trace path"),
# timed in the thread's CPU time, fastest of 20 trials (siteloop.c: about
# 1 ns in ~20 cannot be seen in wall time while others load the machine).
# The figure is the median of the per-pair differences; the middle half of
# those differences is printed beside it, as the noise to read it by.
# Instructions (callgrind) are exact and printed too.

site_bench() {
	local ns=$BUILD/nosite ll=$OUT/lockloop sl=$OUT/siteloop n iter hold warm r a b epp d lo hi
	section "call site (issue 15): added cost per event, trace path; trace size"
	if [ ! -x "$ns/bin/ptt-record" ] || [ ! -f "$ns/lib/libptt.so" ]; then
		note "no build without the site ($ns): run make bench-nosite (make bench does)"
		return
	fi
	n=${PTT_BENCH_SITE_REPS:-$((2 * REPS))}
	iter=${PTT_BENCH_SITE_ITER:-50000}
	$CC -O2 -pthread -o "$sl" "$SRC/siteloop.c" || return
	# a ring holding the timed trials' records (2 per pair, 44 bytes each with the site)
	hold=1048576
	while [ $hold -lt $((iter * 20 * 2 * 44)) ] && [ $hold -lt 1073741824 ]; do hold=$((hold * 2)); done
	warm=$((hold / 88 * 6 / 5)) # pairs that fill it once, site or not
	site_rec() { "$BIN/ptt-record" "$@"; }
	nosite_rec() { PTT_LIBPTT=$ns/lib/libptt.so "$ns/bin/ptt-record" "$@"; }
	: >"$TMP/site-pairs"
	for r in $(seq "$n"); do
		# alternate which goes first, so neither always follows the other
		if [ $((r % 2)) = 1 ]; then
			a=$(site_rec -q -b $hold -o "$TMP/site.ptt" -- "$sl" "$iter" 20 $warm 2>>"$TMP/site-trials")
			b=$(nosite_rec -q -b $hold -o "$TMP/nosite.ptt" -- "$sl" "$iter" 20 $warm 2>>"$TMP/site-trials")
		else
			b=$(nosite_rec -q -b $hold -o "$TMP/nosite.ptt" -- "$sl" "$iter" 20 $warm 2>>"$TMP/site-trials")
			a=$(site_rec -q -b $hold -o "$TMP/site.ptt" -- "$sl" "$iter" 20 $warm 2>>"$TMP/site-trials")
		fi
		pos "$a" && pos "$b" && echo "$a $b" >>"$TMP/site-pairs"
	done
	epp=$(calc "$(count_of "$TMP/site.ptt" '^mutex_(lock|unlock)$') / ($iter * 20 + $warm)")
	if ! [ -s "$TMP/site-pairs" ] || ! pos "$epp" ||
		[ "$(count_of "$TMP/nosite.ptt" '^mutex_(lock|unlock)$')" != "$(count_of "$TMP/site.ptt" '^mutex_(lock|unlock)$')" ]; then
		note "call site: a run failed or the two builds recorded different events: $(tail -1 "$TMP/site-trials")"
		return
	fi
	rm -f "$TMP/site.ptt" "$TMP/nosite.ptt"
	a=$(awk '{print $1}' "$TMP/site-pairs" | median)
	b=$(awk '{print $2}' "$TMP/site-pairs" | median)
	awk -v e="$epp" '{printf "%.4f\n", ($1 - $2) / e}' "$TMP/site-pairs" | sort -g >"$TMP/site-diff"
	d=$(median <"$TMP/site-diff")
	lo=$(awk '{v[NR] = $1} END {print v[int((NR + 3) / 4)]}' "$TMP/site-diff")
	hi=$(awk '{v[NR] = $1} END {print v[NR + 1 - int((NR + 3) / 4)]}' "$TMP/site-diff")
	say "trace path with the site (thread CPU time)" "$(calc "$a / $epp")" "ns/event" "median of $(wc -l <"$TMP/site-pairs") runs' fastest trials; private mutex, -b warmed ring"
	say "trace path without it (BUILD/nosite, interleaved)" "$(calc "$b / $epp")" "ns/event" "fastest trials, as above"
	say "the site's added cost, trace path" "$(calc "$d")" "ns/event" "median of per-pair differences; middle half $(calc "$lo") to $(calc "$hi")"
	say "with / without, per event" "$(calc "$a / $b")" "ratio"
	SITE_NS=$(calc "$d")
	site_instructions "$ll"
	site_sizes "lock loop" "$ll" 1 $((iter * 20)) private
	if command -v sqlite3 >/dev/null; then
		site_sizes "sqlite3" sqlite3 :memory: -init "$SRC/sqlite_index.sql" .quit
	else
		note "sqlite3 not installed: the real program's trace size skipped"
	fi
	say "call site: added ns/event, trace path" "$SITE_NS" "<= 1" \
		"$(awk -v v="$SITE_NS" 'BEGIN { print v <= 1 ? "met" : "MISSED" }')"
}

# Instructions per event inside pthread_mutex_lock/unlock (the wrappers and what
# they call, glibc's lock included), callgrind, 100 000 pairs: exact, unlike the
# times on a shared machine.
site_instructions() { # LOCKLOOP
	local ll=$1 v w ev k
	if ! command -v valgrind >/dev/null; then
		note "valgrind not installed: no instruction counts (apt-get install valgrind)"
		return
	fi
	for k in site nosite; do
		${k}_rec -q -o "$TMP/cg-$k.ptt" -- valgrind --tool=callgrind --callgrind-out-file="$TMP/cg-$k.out" \
			--toggle-collect=pthread_mutex_lock --toggle-collect=pthread_mutex_unlock "$ll" 1 100000 private \
			>/dev/null 2>"$TMP/cg-$k.err"
		ev=$(count_of "$TMP/cg-$k.ptt" '^mutex_(lock|unlock)$')
		v=$(sed -n 's/^summary: *//p; s/^totals: *//p' "$TMP/cg-$k.out" | head -1)
		pos "$v" && pos "$ev" && calc "$v / $ev" >"$TMP/cg-$k"
	done
	v=$(cat "$TMP/cg-site" 2>/dev/null) w=$(cat "$TMP/cg-nosite" 2>/dev/null)
	if ! pos "$v" || ! pos "$w"; then
		note "callgrind run failed: $(tail -1 "$TMP/cg-site.err")"
		return
	fi
	say "instructions/event with the site (callgrind)" "$v" "instr" "inside pthread_mutex_lock/unlock, glibc's included"
	say "instructions/event without it" "$w" "instr"
	say "the site's added instructions/event" "$(calc "$v - $w")" "instr"
}

# Trace bytes per event (lossless default), raw and -z, with and without the site, of CMD.
site_sizes() { # LABEL CMD...
	local label=$1 k z f s e
	shift
	for k in site nosite; do
		for z in raw z; do
			f=$TMP/size-$k-$z.ptt
			if [ $z = z ]; then ${k}_rec -q -z -o "$f" -- "$@" >/dev/null 2>>"$TMP/err"
			else ${k}_rec -q -o "$f" -- "$@" >/dev/null 2>>"$TMP/err"; fi
			s=$(stat -c %s "$f" 2>/dev/null) e=$(info "$f" events)
			rm -f "$TMP/size-$k-$z"
			pos "$s" && pos "$e" && calc "$s / $e" >"$TMP/size-$k-$z"
			rm -f "$f"
		done
	done
	for z in raw z; do
		s=$(cat "$TMP/size-site-$z" 2>/dev/null) e=$(cat "$TMP/size-nosite-$z" 2>/dev/null)
		if ! pos "$s" || ! pos "$e"; then
			note "call site: $label, the $z size runs failed: $(tail -1 "$TMP/err")"
			continue
		fi
		say "$label bytes/event $([ $z = z ] && echo "-z" || echo "raw"), with the site" "$s" "bytes" \
			"$e without: +$(calc "100 * ($s - $e) / $e")%"
	done
}

site_bench

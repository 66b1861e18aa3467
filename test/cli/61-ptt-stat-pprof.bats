#!/usr/bin/env bats
# ptt-stat --pprof: go tool pprof reads the profile, and its totals are ptt-stat's wait and hold totals.
bats_require_minimum_version 1.5.0
load helpers

# pprof_total FILE [OPTION...]: the total go tool pprof -top gives ("... of 17765359ns total": the number)
pprof_total() {
	local f=$1
	shift
	go tool pprof -top "$@" "$f" 2>/dev/null | sed -n 's/^Showing nodes accounting for .* of \([0-9]*\)\(ns\)\{0,1\} total$/\1/p'
}

# column N of ptt-stat --csv's object table for FILE, summed (awk condition COND on the row, default all)
stat_sum() {
	ptt-stat --csv "$1" | awk -F, -v n="$2" "NR > 1 && !NF { exit } NR > 1 && (${3:-1}) { s += \$n } END { print s + 0 }"
}

need_go() {
	command -v go >/dev/null || skip "go (Debian's golang-go) not installed: go tool pprof reads the profiles"
	export GOCACHE="$BATS_TEST_TMPDIR/gocache" HOME="$BATS_TEST_TMPDIR"
}

@test "ptt-stat --pprof: usage errors" {
	run -2 --separate-stderr ptt-stat --pprof=size
	[[ "$stderr" == "ptt-stat: --pprof: wait, hold or locks: 'size'"* ]]
	run -2 --separate-stderr ptt-stat --pprof=wait --folded=wait
	[[ "$stderr" == "ptt-stat: --folded and --pprof: one or the other"* ]]
	run -0 ptt-stat --help
	[[ "$output" == *"-p, --pprof=WHAT"* ]]
}

@test "go tool pprof reads the wait profile: its total and count are ptt-stat's; stacks, file:line and labels" {
	need_go
	ptt-record -q -o "$BATS_TEST_TMPDIR/c.ptt" -- "$EXAMPLES/contention" -t 4 -n 300 -u 20 >/dev/null 2>&1
	run -0 --separate-stderr ptt-stat --pprof=wait "$BATS_TEST_TMPDIR/c.ptt"
	[ -z "$stderr" ]
	ptt-stat --pprof=wait "$BATS_TEST_TMPDIR/c.ptt" >"$BATS_TEST_TMPDIR/w.pb.gz"
	gzip -t "$BATS_TEST_TMPDIR/w.pb.gz"
	want=$(stat_sum "$BATS_TEST_TMPDIR/c.ptt" 8)
	[ "$want" -gt 0 ]
	[ "$(pprof_total "$BATS_TEST_TMPDIR/w.pb.gz" -unit=ns)" = "$want" ]
	# the count: the contended acquisitions
	[ "$(pprof_total "$BATS_TEST_TMPDIR/w.pb.gz" -sample_index=contentions)" = "$(stat_sum "$BATS_TEST_TMPDIR/c.ptt" 6)" ]
	# every leaf is the example's worker() at a line of it, under start_thread (one line quiet; the waits
	# of a loaded machine may come at two of its lines)
	run -0 go tool pprof -top -lines "$BATS_TEST_TMPDIR/w.pb.gz"
	leaves=$(echo "$output" | awk '$1 ~ /^[0-9.]+[mun]?s$/ && $2 != "0%" { print $6, $7 }' | sort -u)
	echo "leaves: $leaves"
	[ -n "$leaves" ]
	run ! grep -v '^worker contention\.c:[0-9]*$' <<<"$leaves"
	run -0 go tool pprof -top -lines "$BATS_TEST_TMPDIR/w.pb.gz"
	[[ "$output" == *" start_thread pthread_create.c:"* ]]
	# labels: the object (all of it hot_lock), its four waiting threads by tid
	run -0 go tool pprof -tags "$BATS_TEST_TMPDIR/w.pb.gz"
	[[ "$output" == *"object: Total"*"(  100%): hot_lock"* ]]
	[ "$(echo "$output" | awk '/^ tid:/ { t = 1; next } t && /%\): [0-9]+$/ { n++ } END { print n + 0 }')" -eq 4 ]
}

@test "hold and locks profiles: totals are ptt-stat's hold totals and its locks' waits" {
	need_go
	ptt-record -q -o "$BATS_TEST_TMPDIR/p.ptt" -- "$EXAMPLES/prodcons" -n 2000 >/dev/null
	ptt-stat --pprof=hold "$BATS_TEST_TMPDIR/p.ptt" >"$BATS_TEST_TMPDIR/h.pb.gz"
	[ "$(pprof_total "$BATS_TEST_TMPDIR/h.pb.gz" -unit=ns)" = "$(stat_sum "$BATS_TEST_TMPDIR/p.ptt" 13)" ]
	# waits for work (the condition variables) and for the lock, then the lock's alone (the use column: lock)
	ptt-stat --pprof=wait "$BATS_TEST_TMPDIR/p.ptt" >"$BATS_TEST_TMPDIR/w.pb.gz"
	ptt-stat --pprof=locks "$BATS_TEST_TMPDIR/p.ptt" >"$BATS_TEST_TMPDIR/l.pb.gz"
	all=$(stat_sum "$BATS_TEST_TMPDIR/p.ptt" 8)
	locks=$(stat_sum "$BATS_TEST_TMPDIR/p.ptt" 8 '$18 == "lock"')
	[ "$locks" -gt 0 ] && [ "$locks" -lt "$all" ]
	[ "$(pprof_total "$BATS_TEST_TMPDIR/w.pb.gz" -unit=ns)" = "$all" ]
	[ "$(pprof_total "$BATS_TEST_TMPDIR/l.pb.gz" -unit=ns)" = "$locks" ]
	run -0 go tool pprof -tags "$BATS_TEST_TMPDIR/l.pb.gz"
	# the lock waited for most is queue_lock (on a loaded machine another lock can have some too)
	[ "$(awk '$1 == "object:" { getline; print $NF; exit }' <<<"$output")" = queue_lock ]
	# from a pipe too, and the text form gives the same profile's totals
	ptt-dump "$BATS_TEST_TMPDIR/p.ptt" | ptt-stat --pprof=locks >"$BATS_TEST_TMPDIR/t.pb.gz"
	[ "$(pprof_total "$BATS_TEST_TMPDIR/t.pb.gz" -unit=ns)" = "$locks" ]
}

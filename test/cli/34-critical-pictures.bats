#!/usr/bin/env bats
# The critical path (ptt-critical) where people look: ptt-paje --critical's row and hand-off links, read
# back by pj_dump and ViTE and compared with the path; ptt-picture --critical and --flame=critical.
bats_require_minimum_version 1.5.0
load helpers

teardown() { stop_recorder_left; }


# A relay: 10 creates 11 at 10 and 12 at 12 (each begins 1 us later); 12 waits on a semaphore from 20,
# which 11 posts at 40; 12 gets it at 42 and ends at 60; 10, joining 12 from 25, returns at 63 and ends
# at 70.  The path back from 10's end: 10 60-70 (the join's hand-off 60-63), 12 40-60 (the post's
# hand-off 40-42), 11 10-40 (its creation at 10, its start-up 10-11), 10 0-10: the path leaves thread 10
# and comes back to it.
relay() {
	ctrace relay <<-'E'
	1 10 sem_init sem=0x400 value=0 ret=0
	10 10 thread_create handle=0x11 start=0x2 child=11 ret=0
	11 11 thread_begin handle=0x11 start=0x2 parent=10
	12 10 thread_create handle=0x12 start=0x2 child=12 ret=0
	13 12 thread_begin handle=0x12 start=0x2 parent=10
	20 12 sem_wait_req sem=0x400
	25 10 thread_join_req handle=0x12 target=12
	40 11 sem_post sem=0x400 ret=0
	42 12 sem_wait sem=0x400 ret=0
	45 11 thread_end retval=0x0 how=0
	60 12 thread_end retval=0x0 how=0
	63 10 thread_join handle=0x12 target=12 ret=0 retval=0x0
	70 10 thread_end retval=0x0 how=0
	E
}

# "START END TID" of the row's states (pj_dump's seconds; a value is named as the thread's row, "TID NAME")
row_states() {
	pj_dump "$1" | awk -F', ' '$1 == "State" && $3 == "Thread on the critical path" { split($8, v, " "); print $4, $5, v[1] }'
}

# "TIME FROM-TID TO-TID" of the row's hand-off links
row_links() {
	pj_dump "$1" | awk -F', ' '$1 == "Link" && $3 == "Critical path hand-off" { split($8, a, " "); split($9, b, " "); print $4, a[1], b[1] }'
}

@test "ptt-paje --critical: the row is the path of a hand-written trace, its hand-offs links" {
	relay
	R="$BATS_TEST_TMPDIR/r.paje"
	run -0 --separate-stderr ptt-paje --critical "$BATS_TEST_TMPDIR/relay.txt"
	[ -z "$stderr" ]
	printf '%s\n' "$output" >"$R"
	assert_paje_valid "$R"
	[ "$(row_states "$R")" = "0.000000 0.000010 10
0.000010 0.000040 11
0.000040 0.000060 12
0.000060 0.000070 10" ]
	# 10 -> 11: its creation, drawn when 11 begins (11 us), as creation links are; 11 -> 12: the post;
	# 12 -> 10: 12's end, which the join waited for (12 still has its row)
	[ "$(row_links "$R")" = "0.000011 10 11
0.000040 11 12
0.000060 12 10" ]
	# the row comes first under the program, and lives as long as the path
	[ "$(grep -m1 '^6 [^ ]* [^ ]* [^ ]* C_prog ' "$R")" = '6 0.000000000 C_crit CT_Critical C_prog "critical path"' ]
	[ "$(pj_dump "$R" | awk -F', ' '$1 == "Container" && $3 == "Critical path" { print $4, $5 }')" = "0 7e-05" ]
	# one value per thread on the path, each of its own colour
	[ "$(grep '^5 C10_[0-9]* ST_Critical ' "$R" | awk '{ print $2 }' | tr '\n' ' ')" = "C10_10 C10_11 C10_12 " ]
	[ "$(grep '^5 C10_[0-9]* ST_Critical ' "$R" | awk '{ print $(NF-2), $(NF-1), $NF }' | sort -u | wc -l)" -eq 3 ]
	# without --critical: no row, no type of it, and the rest the same
	ptt-paje "$BATS_TEST_TMPDIR/relay.txt" >"$BATS_TEST_TMPDIR/plain.paje"
	run ! grep -q -i critical "$BATS_TEST_TMPDIR/plain.paje"
	[ "$(grep -v -e Critical -e C_crit -e L_critical -e '^5 C10_' "$R")" = "$(cat "$BATS_TEST_TMPDIR/plain.paje")" ]
	assert_vite_clean "$R"
}

@test "ptt-paje --critical: a path that never leaves one thread is one state, no link" {
	ctrace solo <<-'E'
	5 10 mutex_lock mutex=0x100 ret=0
	8 10 mutex_unlock mutex=0x100 ret=0
	50 10 thread_end retval=0x0 how=0
	E
	run -0 --separate-stderr ptt-paje --critical "$BATS_TEST_TMPDIR/solo.txt"
	printf '%s\n' "$output" >"$BATS_TEST_TMPDIR/s.paje"
	assert_paje_valid "$BATS_TEST_TMPDIR/s.paje"
	[ "$(row_states "$BATS_TEST_TMPDIR/s.paje")" = "0.000000 0.000050 10" ]
	[ -z "$(row_links "$BATS_TEST_TMPDIR/s.paje")" ]
	assert_vite_clean "$BATS_TEST_TMPDIR/s.paje"
}

@test "ptt-paje --critical on prodcons: the row's threads and length are ptt-critical's path" {
	record "$EXAMPLES/prodcons" -p 2 -c 2 -n 500
	T="$BATS_TEST_TMPDIR/t.ptt"
	ptt-paje --critical "$T" >"$BATS_TEST_TMPDIR/c.paje"
	ptt-paje --critical --objects "$T" >"$BATS_TEST_TMPDIR/co.paje"
	assert_paje_valid "$BATS_TEST_TMPDIR/c.paje"
	assert_paje_valid "$BATS_TEST_TMPDIR/co.paje"
	# exit 1 when part of the path is unknown (a waker out of sight): the path is drawn all the same
	run --separate-stderr ptt-critical "$T"
	[ "$status" -le 1 ]
	report=$output
	# the threads the row passes through are THREADS ON THE PATH (which lists those that ran on it)
	want=$(awk '/^THREADS ON THE PATH/ { on = 1; getline; next } on && NF { t = $NF; gsub(/[()]/, "", t); print t }' <<<"$report" | sort -n)
	[ -n "$want" ]
	[ "$(row_states "$BATS_TEST_TMPDIR/c.paje" | awk '{ print $3 }' | sort -nu | join - <(echo "$want"))" = "$want" ]
	# from the path's start to its end, without a gap, and as long as it (ms, as printed)
	read -r len from to < <(sed -n 's/^critical path: \([0-9.]*\) ms, from \([0-9.]*\) to \([0-9.]*\) ms,.*/\1 \2 \3/p' <<<"$report")
	row_states "$BATS_TEST_TMPDIR/c.paje" | awk -v len="$len" -v from="$from" -v to="$to" '
		function near(a, b) { return a - b < 0.0015 && b - a < 0.0015 }
		NR == 1 { if (!near($1 * 1000, from)) { print "starts at " $1; exit 1 } }
		NR > 1 && $1 != end { print "a gap at " end; exit 1 }
		{ end = $2; sum += $2 - $1; if ($3 == last) { print "the same thread twice in a row: " $3; exit 1 } last = $3 }
		END { if (!near(end * 1000, to) || !near(sum * 1000, len)) { print "ends at " end ", " sum " s"; exit 1 } }'
	# each link goes from the thread the row leaves to the one it enters
	row_links "$BATS_TEST_TMPDIR/c.paje" >"$BATS_TEST_TMPDIR/links"
	[ -s "$BATS_TEST_TMPDIR/links" ]
	row_states "$BATS_TEST_TMPDIR/c.paje" | awk 'NR > 1 { print prev, $3 } { prev = $3 }' | sort >"$BATS_TEST_TMPDIR/changes"
	awk '{ print $2, $3 }' "$BATS_TEST_TMPDIR/links" | sort | comm -23 - "$BATS_TEST_TMPDIR/changes" >"$BATS_TEST_TMPDIR/stray"
	[ ! -s "$BATS_TEST_TMPDIR/stray" ] || { cat "$BATS_TEST_TMPDIR/stray"; false; }
	# a pipe gives the same Paje as the file
	[ "$(ptt-paje --critical <"$T" | md5sum)" = "$(md5sum <"$BATS_TEST_TMPDIR/c.paje")" ]
	assert_vite_clean "$BATS_TEST_TMPDIR/c.paje"
	assert_vite_clean "$BATS_TEST_TMPDIR/co.paje"
}

@test "ptt-paje --critical on traces cut, windowed and with lost events is still valid" {
	record "$EXAMPLES/prodcons" -p 2 -c 2 -n 300
	T="$BATS_TEST_TMPDIR/t.ptt"
	# a window inside the trace (fixed times may fall before its first event on a loaded machine)
	w=$(ptt-dump -n "$T" | awk 'NR == 100 { f = $1 } NR == 1000 { printf "--from=%ss --to=%ss", f, $1; exit }')
	ptt-filter $w "$T" >"$BATS_TEST_TMPDIR/w.ptt"
	ptt-dump "$T" | head -n 400 >"$BATS_TEST_TMPDIR/cut.txt"
	for f in w.ptt cut.txt; do
		run --separate-stderr ptt-paje --critical "$BATS_TEST_TMPDIR/$f"
		[ "$status" -le 1 ] || { echo "$f: $status $stderr"; false; }
		printf '%s\n' "$output" >"$BATS_TEST_TMPDIR/$f.paje"
		assert_paje_valid "$BATS_TEST_TMPDIR/$f.paje"
	done
	# a row wherever ptt-critical finds a path (the cut trace's ends where its last thread is cut off)
	for f in w.ptt cut.txt; do
		path=$(ptt-critical "$BATS_TEST_TMPDIR/$f" 2>/dev/null | grep -c '^critical path: [0-9]') || true
		[ "$(grep -c '^8 .* ST_Critical C_crit ' "$BATS_TEST_TMPDIR/$f.paje" | sed 's/^[1-9][0-9]*$/1/')" = "$path" ]
	done
	ptt-record -q -d -b 4096 -o "$BATS_TEST_TMPDIR/d.ptt" -- "$EXAMPLES/prodcons" -p 2 -c 2 -n 3000 >/dev/null 2>&1
	run --separate-stderr ptt-paje --critical "$BATS_TEST_TMPDIR/d.ptt"
	printf '%s\n' "$output" >"$BATS_TEST_TMPDIR/d.paje"
	assert_paje_valid "$BATS_TEST_TMPDIR/d.paje"
	assert_vite_clean "$BATS_TEST_TMPDIR/w.ptt.paje"
	assert_vite_clean "$BATS_TEST_TMPDIR/d.paje"
}

# the PNG signature (as in 33-picture.bats)
is_png() {
	[ "$(head -c 8 "$1" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ]
}

need_r() {
	command -v pj_dump >/dev/null || skip "pj_dump (pajeng) not installed"
	command -v Rscript >/dev/null || skip "R not installed"
}

@test "ptt-picture --critical: the path drawn is the relay's, stretch by stretch" {
	need_r
	relay
	run -0 --separate-stderr ptt-picture --critical -l "$BATS_TEST_TMPDIR/relay.txt" "$BATS_TEST_TMPDIR/r.png"
	[ -z "$stderr" ]
	is_png "$BATS_TEST_TMPDIR/r.png"
	[ "$(grep '^critical' <<<"$output")" = "$(printf 'critical\t%s\t%s\t%s\n' 0.000 0.010 "10 x" 0.010 0.040 11 0.040 0.060 12 \
		0.060 0.070 "10 x")" ]
	# the rows as without --critical
	[ "$(grep -v '^critical' <<<"$output")" = "$(ptt-picture -l "$BATS_TEST_TMPDIR/relay.txt" "$BATS_TEST_TMPDIR/p.png")" ]
	# --critical with --flame: the flame graph of the path is --flame=critical
	run -2 --separate-stderr ptt-picture --critical --flame "$BATS_TEST_TMPDIR/relay.txt" "$BATS_TEST_TMPDIR/x.png"
	[[ "$stderr" == "ptt-picture: --critical draws on the Gantt chart: for the path's flame graph, --flame=critical"$'\n'* ]]
}

@test "ptt-picture --critical on prodcons: a stretch drawn for each of ptt-paje's, as long as the path" {
	need_r
	record "$EXAMPLES/prodcons" -p 2 -c 2 -n 200
	T="$BATS_TEST_TMPDIR/t.ptt"
	run -0 --separate-stderr ptt-picture --critical -l -t "prodcons: its critical path" "$T" "$BATS_TEST_TMPDIR/c.png"
	[ -z "$stderr" ]
	is_png "$BATS_TEST_TMPDIR/c.png"
	ptt-paje --critical "$T" >"$BATS_TEST_TMPDIR/c.paje"
	[ "$(grep -c '^critical' <<<"$output")" -eq "$(row_states "$BATS_TEST_TMPDIR/c.paje" | wc -l)" ]
	len=$(ptt-critical "$T" | sed -n 's/^critical path: \([0-9.]*\) ms,.*/\1/p') || true
	awk -F'\t' -v len="$len" '$1 == "critical" { n += $3 - $2 } END { d = n - len; exit !(d < 0.01 && d > -0.01) }' <<<"$output"
}

@test "ptt-picture --flame=critical: the frames add up to the path, as ptt-critical --folded says" {
	command -v Rscript >/dev/null || skip "R not installed"
	relay
	run -0 --separate-stderr ptt-picture --flame=critical -l "$BATS_TEST_TMPDIR/relay.txt" "$BATS_TEST_TMPDIR/f.png"
	[ -z "$stderr" ]
	is_png "$BATS_TEST_TMPDIR/f.png"
	# the outermost frames span the path's 70 us end to end; its leaves by use: waits for the post and the
	# join red (lock), the three threads' running blue (run), the start-up grey (other)
	[ "$(awk -F'\t' '$1 == 1 { if ($2 != at) exit 1; at = $3 } END { print at }' <<<"$output")" = 70000 ]
	[ "$(awk -F'\t' '$5 != "" { print $5, $3 - $2 }' <<<"$output" | sort | tr '\n' ,)" = \
		"lock 2000,lock 3000,other 1000,run 17000,run 18000,run 29000," ]
	record "$EXAMPLES/prodcons" -p 2 -c 2 -n 200
	run -0 --separate-stderr ptt-picture --flame=critical -l -t "prodcons: the critical path by stack" "$BATS_TEST_TMPDIR/t.ptt" \
		"$BATS_TEST_TMPDIR/p.png"
	is_png "$BATS_TEST_TMPDIR/p.png"
	total=$(ptt-critical --folded "$BATS_TEST_TMPDIR/t.ptt" | awk '{ n += $NF } END { print n }')
	[ "$(awk -F'\t' '$1 == 1 { n += $3 - $2 } END { print n }' <<<"$output")" = "$total" ]
	# the holds of queue_lock on the path are there, purple
	grep -q $'\t\\[held queue_lock\\]\theld$' <<<"$output"
}

#!/usr/bin/env bats
# ptt-filter: selections, windows with context, text/binary agreement, valid Paje of any selection.
bats_require_minimum_version 1.5.0
load helpers

setup() {
	T="$BATS_TEST_TMPDIR/t.ptt"
	ptt-record -q -o "$T" -- "$EXAMPLES/prodcons" -p 2 -c 2 -n 3000 >/dev/null
}

@test "ptt-filter --help, --version and usage errors" {
	run -0 ptt-filter --help
	[[ "$output" == *"Usage: ptt-filter"* ]]
	run -0 ptt-filter --version
	run -2 --separate-stderr ptt-filter --from=soon "$T"
	[[ "$stderr" == *"--from: not a time: 'soon'"* ]]
	run -2 --separate-stderr ptt-filter --pid=abc "$T"
	run -2 --separate-stderr ptt-filter --count=-1 "$T"
	for opt in --pid --thread --mutex --object --event; do
		run -2 --separate-stderr ptt-filter "$opt=" "$T"
		[[ "$stderr" == *": empty value in list"* ]]
		[ -z "$output" ]
	done
	run -2 --separate-stderr ptt-filter --bogus
	# several inputs are one trace; none of these can be read
	run -2 --separate-stderr ptt-filter a b
	[[ "$stderr" == *"ptt-filter: a: No such file or directory"*"ptt-filter: b: No such file or directory"* ]]
}

@test "--mutex by name keeps that object's events and the definitions" {
	ptt-filter --mutex=queue_lock "$T" | ptt-dump -n >"$BATS_TEST_TMPDIR/q.txt"
	[ "$(grep -c ' mutex_lock ' "$BATS_TEST_TMPDIR/q.txt")" -eq "$(ptt-dump -n "$T" | grep -c ' mutex_lock ')" ]
	[ "$(grep -c ' cond_signal ' "$BATS_TEST_TMPDIR/q.txt")" -eq 0 ]
	[ "$(grep -c ' thread_begin ' "$BATS_TEST_TMPDIR/q.txt")" -eq 5 ]
	run -0 ptt-filter --mutex=queue_lock --no-context "$T"
	run -0 bash -c "ptt-filter --mutex=queue_lock --no-context '$T' | ptt-dump -n | grep -vc 'queue_lock\| mutex_\| cond_wait' || true"
	[ "$output" -eq 0 ]
}

@test "--event by class and prefix, --thread by name, --pid, --invert" {
	run -0 bash -c "ptt-filter --event=cond --no-context '$T' | ptt-dump -n | awk '{print \$5}' | sort -u | tr '\n' ' '"
	[ "$output" = "cond_broadcast cond_signal cond_timedwait_req cond_wait cond_wait_req " ] || [ "$output" = "cond_broadcast cond_signal cond_wait cond_wait_req " ]
	run -0 bash -c "ptt-filter --event=mutex_un --no-context '$T' | ptt-dump -n | awk '{print \$5}' | sort -u"
	[ "$output" = "mutex_unlock" ]
	tid=$(ptt-dump -n "$T" | awk '$5=="thread_name" && /producer-1/ {print $3; exit}')
	run -0 bash -c "ptt-filter --thread=producer-1 --no-context '$T' | ptt-dump -n | awk '{print \$3}' | sort -u"
	[ "$output" = "$tid" ]
	all=$(ptt-dump -n "$T" | wc -l)
	some=$(ptt-filter --event=mutex --no-context "$T" | ptt-dump -n | wc -l)
	rest=$(ptt-filter --event=mutex --invert --no-context "$T" | ptt-dump -n | wc -l)
	[ $((some + rest)) -eq "$all" ]
	pid=$(ptt-dump -n "$T" | awk '$5=="thread_begin" {print $2; exit}')
	[ "$(ptt-filter --pid=1 --no-context "$T" | ptt-dump -n | wc -l)" -eq 0 ]
	[ "$(ptt-filter --pid="$pid" --no-context "$T" | ptt-dump -n | wc -l)" -gt 1000 ]
}

@test "--first/--count select positions; --from/--to select time" {
	run -0 bash -c "ptt-filter --first=100 --count=50 --no-context '$T' | ptt-dump -n | wc -l"
	[ "$output" -eq 50 ]
	# --no-context drops the module events: compare without the symbolised sites
	diff <(ptt-filter --first=100 --count=50 --no-context "$T" | ptt-dump -n | sed 's/  # .*//') <(ptt-dump -n "$T" | sed -n '101,150p' | sed 's/  # .*//')
	ptt-filter --from=5ms --to=6ms --no-context "$T" | ptt-dump -n >"$BATS_TEST_TMPDIR/w.txt"
	awk '{ if ($1 < 0.005 || $1 > 0.006) bad++ } END { exit bad > 0 }' "$BATS_TEST_TMPDIR/w.txt"
	[ "$(wc -l <"$BATS_TEST_TMPDIR/w.txt")" -eq "$(ptt-dump -n "$T" | awk '$1 >= 0.005 && $1 <= 0.006' | wc -l)" ]
}

@test "--count counts from the window's start, in one file and in a rotated set; --first over a set counts as it is read" {
	R=$BATS_TEST_TMPDIR/r.ptt
	ptt-record -q -m 200k -o "$R" -- "$EXAMPLES/prodcons" -p 2 -c 2 -n 20000 >/dev/null
	[ -e "$R.0003" ] # rotated: at least three files
	from=$(ptt-dump -n "$R".* | awk 'NR == 150000 { print $1 * 1000 "ms"; exit }')
	# --from in a later file, with --count: that many events from there (it said the window began after
	# the trace's last event: the count ran from position 0 of the first file)
	run -0 --separate-stderr bash -c "ptt-filter -n --from=$from --count=700 $R.* | ptt-dump -n | sed 's/  # .*//'"
	[ -z "$stderr" ]
	[ "${#lines[@]}" -eq 700 ]
	# the last event (a stack record is the next event's: when the 700th record is one, -n keeps it
	# and a window with its context leaves it with the event it belongs to, outside the window)
	last=$(printf '%s\n' "${lines[@]}" | awk '$5 != "stack"' | tail -1)
	# with the context (the state in force first): the same last event
	run -0 --separate-stderr bash -c "ptt-filter --from=$from --count=700 $R.* | ptt-dump -n | sed 's/  # .*//'"
	[ -z "$stderr" ]
	[ "$(printf '%s\n' "${lines[@]}" | awk '$5 != "stack"' | tail -1)" = "$last" ]
	[ "${#lines[@]}" -gt 700 ]
	# the 120001st to 120003rd events of the set, as ptt-dump lists them
	run -0 --separate-stderr bash -c "ptt-filter -n --first=120000 --count=3 $R.* | ptt-dump -n | sed 's/  # .*//'"
	[ -z "$stderr" ]
	[ "$output" = "$(ptt-dump -n "$R".* | sed -n '120001,120003p' | sed 's/  # .*//')" ]
	# one file: --from with --count past position --count
	run -0 --separate-stderr bash -c "ptt-filter -n --from=5ms --count=10 '$T' | ptt-dump -n | wc -l"
	[ -z "$stderr" ]
	[ "$output" -eq 10 ]
}

@test "--from over a rotated set, at a block's first event: the window's first events are all there" {
	# a part's head (the names in force at its start) is skipped when the part is read after the one
	# before; its block passed over unread, the head was skipped from the first block read instead:
	# the window lost its first 18 events when --from fell at that block's start
	R=$BATS_TEST_TMPDIR/r.ptt
	ptt-record -q -m 200k -o "$R" -- "$EXAMPLES/prodcons" -p 2 -c 2 -n 20000 >/dev/null
	set -- "$R".*
	[ "$#" -ge 3 ]
	ptt-dump -n "$@" | sed 's/  # .*//' >"$BATS_TEST_TMPDIR/all.txt"
	tried=0
	for part in "${@:2}"; do
		# the first event of the part's 2nd and 3rd EVENTS blocks (read alone, a part numbers its head too)
		ptt-dump -n "$part" | sed 's/  # .*//' >"$BATS_TEST_TMPDIR/part.txt"
		for at in $(python3 "$BATS_TEST_DIRNAME/ptt_blocks.py" counts "$part" | awk '{ n += $2; if (NR == 1 || NR == 2) print n + 1 }'); do
			t=$(sed -n "${at}p" "$BATS_TEST_TMPDIR/part.txt" | awk '{ print $1 }')
			[ -n "$t" ] || continue
			ns=$(awk -v t="$t" 'BEGIN { split(t, a, "."); printf "%d%s", a[1], a[2] }' | sed 's/^0*//')
			run -0 --separate-stderr bash -c "ptt-filter -n --from=${ns}ns --count=20 $* | ptt-dump -n | sed 's/  # .*//'"
			[ "$output" = "$(awk -v t="$t" '$1 + 0 >= t + 0' "$BATS_TEST_TMPDIR/all.txt" | head -n 20)" ] ||
				{ echo "--from=${ns}ns ($part, event $at): $output"; return 1; }
			tried=$((tried + 1))
		done
	done
	[ "$tried" -ge 4 ]
}

@test "a window starts with the locks and waits in force" {
	# 11 holds 0x10 and 12 waits for it; 13 waits on cond 0x30 (its mutex 0x20 released);
	# 14 took and released 0x40 (nothing in force) and holds 0x50
	cat >"$BATS_TEST_TMPDIR/s.txt" <<'Y'
# ptt-trace 1
0.000001000 10 11 pthread mutex_lock mutex=0x10 ret=0
0.000001500 10 13 pthread mutex_lock mutex=0x20 ret=0
0.000002000 10 12 pthread mutex_lock_req mutex=0x10
0.000003000 10 13 pthread cond_wait_req cond=0x30 mutex=0x20
0.000003500 10 14 pthread mutex_lock mutex=0x40 ret=0
0.000003600 10 14 pthread mutex_unlock mutex=0x40 ret=0
0.000003700 10 14 pthread mutex_lock mutex=0x50 ret=0
0.000005000 10 11 pthread mutex_unlock mutex=0x10 ret=0
0.000005100 10 12 pthread mutex_lock mutex=0x10 ret=0
0.000005200 10 14 pthread cond_signal cond=0x30 ret=0
0.000005300 10 14 pthread mutex_unlock mutex=0x50 ret=0
0.000005400 10 13 pthread cond_wait cond=0x30 mutex=0x20 ret=0
Y
	# what is in force comes first, as the events that began it, in their order, stamped
	# at the window's start (--from); then the window
	ptt-dump -n "$BATS_TEST_TMPDIR/s.txt" | sed -n '8,$p' >"$BATS_TEST_TMPDIR/window.txt"
	diff <(ptt-filter --from=4us "$BATS_TEST_TMPDIR/s.txt" | ptt-dump -n) - <<Y
0.000004000 10 11 pthread mutex_lock mutex=0x10 ret=0 site=0x0
0.000004000 10 12 pthread mutex_lock_req mutex=0x10 site=0x0
0.000004000 10 13 pthread cond_wait_req cond=0x30 mutex=0x20 site=0x0
0.000004000 10 14 pthread mutex_lock mutex=0x50 ret=0 site=0x0
$(cat "$BATS_TEST_TMPDIR/window.txt")
Y
	# a selection applies to the replayed state too; a wait it leaves out is a wait_other
	diff <(ptt-filter --from=4us --mutex=0x10 "$BATS_TEST_TMPDIR/s.txt" | ptt-dump -n) - <<'Y'
0.000004000 10 11 pthread mutex_lock mutex=0x10 ret=0 site=0x0
0.000004000 10 12 pthread mutex_lock_req mutex=0x10 site=0x0
0.000004000 10 13 pthread wait_other object=0x30 event=24
0.000005000 10 11 pthread mutex_unlock mutex=0x10 ret=0 site=0x0
0.000005100 10 12 pthread mutex_lock mutex=0x10 ret=0 site=0x0
0.000005400 10 13 pthread wait_other_end object=0x30 event=24
Y
	# so that thread 13 is not taken for running while it waits on the condition
	run -0 --separate-stderr bash -c "ptt-filter --mutex=0x10 '$BATS_TEST_TMPDIR/s.txt' | ptt-csv --states"
	[[ "$output" == *"10,13,,other_wait,0x30,,3000,5400,2400,1"* ]]
	[[ "$output" != *"10,13,,running,,,3000,5400,"* ]]
	[ -z "$stderr" ]
	# without context, only the window
	diff <(ptt-filter --no-context --from=4us "$BATS_TEST_TMPDIR/s.txt" | ptt-dump -n) "$BATS_TEST_TMPDIR/window.txt"

	# a recorded run: a window opened just after a thread took a mutex that it releases
	# only later starts with that acquisition, stamped at the window's start
	ptt-dump -n "$T" >"$BATS_TEST_TMPDIR/all.txt"
	n=$(wc -l <"$BATS_TEST_TMPDIR/all.txt")
	read -r from tid mutex < <(awk -v n="$n" '
		NR > n / 2 && !t && $5 == "mutex_lock" && $7 == "ret=0" { t = $1; tid = $3; m = $6; next }
		t && $3 == tid && $5 == "mutex_unlock" && $6 == m {
			if ($1 > t + 0.0000000015) { printf "%.9f %s %s\n", t + 0.000000001, tid, m; exit }
			t = 0 }' "$BATS_TEST_TMPDIR/all.txt")
	[ -n "$mutex" ]
	to=$(awk -v f="$from" 'BEGIN { printf "%.9f", f + 0.001 }')
	first=$(awk -v f="$from" '$1 >= f { print $1; exit }' "$BATS_TEST_TMPDIR/all.txt")
	ptt-filter --from="${from}s" --to="${to}s" "$T" | ptt-dump -n >"$BATS_TEST_TMPDIR/w.txt"
	[ -n "$(awk -v f="$from" -v l="$first" -v t="$tid" -v m="$mutex" \
		'$1 >= f && $1 < l && $3 == t && $5 == "mutex_lock" && $6 == m' "$BATS_TEST_TMPDIR/w.txt")" ]
	# nothing before the window's start, definitions neither
	[ -z "$(awk -v f="$from" '$1 < f' "$BATS_TEST_TMPDIR/w.txt")" ]
	ptt-filter --no-context --from="${from}s" --to="${to}s" "$T" | ptt-dump -n >"$BATS_TEST_TMPDIR/nc.txt"
	run -1 grep -q "^$first [0-9]* $tid pthread mutex_lock $mutex ret=0 " "$BATS_TEST_TMPDIR/nc.txt"
	ptt-filter --from="${from}s" --to="${to}s" "$T" | ptt-paje >"$BATS_TEST_TMPDIR/w.paje"
	assert_paje_valid "$BATS_TEST_TMPDIR/w.paje"
	assert_vite_clean "$BATS_TEST_TMPDIR/w.paje"
}

@test "the text path and the binary path agree byte for byte" {
	ptt-dump "$T" | ptt-filter --mutex=queue_lock >"$BATS_TEST_TMPDIR/a.txt"
	ptt-filter --mutex=queue_lock "$T" | ptt-dump >"$BATS_TEST_TMPDIR/b.txt"
	cmp "$BATS_TEST_TMPDIR/a.txt" "$BATS_TEST_TMPDIR/b.txt"
	ptt-dump "$T" | ptt-filter --mutex=queue_lock | ptt-paje >"$BATS_TEST_TMPDIR/a.paje"
	ptt-filter --mutex=queue_lock "$T" | ptt-paje >"$BATS_TEST_TMPDIR/b.paje"
	cmp "$BATS_TEST_TMPDIR/a.paje" "$BATS_TEST_TMPDIR/b.paje"
	# a window inside the trace (fixed times may fall before its first event on a loaded machine)
	w=$(ptt-dump -n "$T" | awk 'NR == 100 { f = $1 } NR == 3000 { printf "--from=%ss --to=%ss", f, $1; exit }')
	ptt-dump "$T" | ptt-filter $w | ptt-paje >"$BATS_TEST_TMPDIR/c.paje"
	ptt-filter $w "$T" | ptt-paje >"$BATS_TEST_TMPDIR/d.paje"
	cmp "$BATS_TEST_TMPDIR/c.paje" "$BATS_TEST_TMPDIR/d.paje"
}

@test "binary output is a valid trace; every selection converts to valid Paje" {
	run -0 bash -c "ptt-filter --event=mutex '$T' | ptt-dump --check - | tail -1"
	[[ "$output" == *"0 damaged"* ]]
	w=$(ptt-dump -n "$T" | awk 'NR == 100 { f = $1 } NR == 3000 { printf "--from=%ss --to=%ss", f, $1; exit }')
	for sel in "--mutex=queue_lock" "--event=cond" "--thread=consumer-0" "--first=1000 --count=500" "$w --event=mutex"; do
		ptt-filter $sel "$T" | ptt-paje >"$BATS_TEST_TMPDIR/s.paje"
		assert_paje_valid "$BATS_TEST_TMPDIR/s.paje"
	done
}

@test "--no-context windows read only the blocks they need" {
	[ -r /proc/self/io ] || skip "no /proc/PID/io (kernel without task I/O accounting)"
	B="$BATS_TEST_TMPDIR/big.ptt"
	ptt-record -q -o "$B" -- "$EXAMPLES/prodcons" -n 100000 >/dev/null
	size=$(stat -c %s "$B")
	events=$(ptt-dump --info "$B" | sed -n 's/^events: *//p')
	first=$((events * 4 / 5))
	# bytes read by CMD...: a subshell's I/O counters include those of the children it reaped
	read_by() { ( "$@" >"$BATS_TEST_TMPDIR/win.out"; awk '$1 == "rchar:" { print $2 }' /proc/$BASHPID/io ); }
	# with the context the filter replays everything before the window: the measure sees it
	all=$(read_by ptt-filter --first=$first --count=10 "$B")
	[ "$all" -gt $((size * 3 / 4)) ]
	# without, only block headers up to the window (then one read-ahead buffer)
	part=$(read_by ptt-filter --first=$first --count=10 --no-context "$B")
	echo "size $size, read $all with the context, $part without"
	[ "$part" -lt $((size / 4)) ]
	diff <(ptt-dump -n "$BATS_TEST_TMPDIR/win.out" | sed "s/  # .*//") <(ptt-dump -n "$B" | sed -n "$((first + 1)),$((first + 10))p" | sed "s/  # .*//")
	# a time window likewise
	from=$(ptt-dump -n "$B" | sed -n "${first}p" | awk '{ print $1 }')
	part=$(read_by ptt-filter --from="${from}s" --to="${from}s" --no-context "$B")
	[ "$part" -lt $((size / 4)) ]
	diff <(ptt-dump -n "$BATS_TEST_TMPDIR/win.out" | sed 's/  # .*//') <(ptt-dump -n "$B" | awk -v f="$from" '$1 == f' | sed 's/  # .*//')
}

@test "an --event that names nothing in the trace is reported, exit 1" {
	record "$EXAMPLES/prodcons" -n 100
	run -1 --separate-stderr ptt-filter --event=mutex,mutx_lock "$BATS_TEST_TMPDIR/t.ptt"
	[ "$stderr" = "ptt-filter: --event: 'mutx_lock' is no event class and begins no event name of this trace" ]
	run -0 --separate-stderr ptt-filter --event=mutex,cond_w,consumer_progress "$BATS_TEST_TMPDIR/t.ptt"
	[ -z "$stderr" ]
}

@test "a selection that names nothing in the trace, or an empty window: one line each, exit 1, nothing written" {
	for sel in --mutex=nosuchname --object=0xdead --thread=nosuchthread --thread=1 --pid=1; do
		run -1 --separate-stderr ptt-filter "$sel" "$T"
		[ "$(echo "$stderr" | wc -l)" -eq 1 ]
		[[ "$stderr" == "ptt-filter: ${sel%%=*}: "*"${sel#*=}"* ]]
		[[ "$stderr" == *"no process"* || "$stderr" == *"names no "* ]]
		[[ "$stderr" == *"(ptt-stat lists them all)" || "$stderr" == *"(ptt-dump --info lists them all)" ]]
		# nothing is written: the next tool of a pipe fails on its empty input instead of drawing nothing
		[ -z "$output" ]
		run -2 --separate-stderr bash -c "ptt-filter '$sel' '$T' 2>/dev/null | ptt-paje"
		[ "$stderr" = "ptt-paje: -: empty input, not a ptt trace" ]
		[ -z "$output" ]
	done
	# one line per value that names nothing; the ones that name something are fine
	run -1 --separate-stderr ptt-filter --mutex=queue_lock,nosuch,alsonot "$T"
	[ "$(echo "$stderr" | wc -l)" -eq 2 ]
	[[ "$stderr" == *"'nosuch' names no object"*"'alsonot' names no object"* ]]
	run -0 --separate-stderr ptt-filter --mutex=queue_lock --thread=consumer-0 "$T"
	[ -z "$stderr" ]
	run -1 --separate-stderr ptt-filter --from=2s --to=1s "$T"
	[ "$stderr" = "ptt-filter: the window ends (--to) before it begins (--from): it selects nothing" ]
	[ -z "$output" ]
}

@test "a refused name offers the nearest names the trace has (prefix, substring, a few edits), from a pipe too" {
	run -1 --separate-stderr ptt-filter --mutex=queue_lck "$T"
	[ "$stderr" = "ptt-filter: --mutex: 'queue_lck' names no object of the trace; nearest in the trace: queue_lock (ptt-stat lists them all)" ]
	run -1 --separate-stderr bash -c "cat '$T' | ptt-filter --thread=consumr"
	[ "$stderr" = "ptt-filter: --thread: 'consumr' names no thread of the trace; nearest in the trace: consumer-0, consumer-1 (ptt-dump --info lists them all)" ]
	[ -z "$output" ]
	# nothing near: no list, still where they all are
	run -1 --separate-stderr ptt-filter --object=zzzzzzzzzzzz "$T"
	[ "$stderr" = "ptt-filter: --object: 'zzzzzzzzzzzz' names no object of the trace (ptt-stat lists them all)" ]
	# every name offered is one the trace has: each selects something
	run -0 --separate-stderr ptt-filter --object=queue_lock "$T"
	run -0 --separate-stderr ptt-filter --thread=consumer-1 "$T"
}

@test "the README's pipeline with a wrong name fails: ptt-paje exits 2 on the empty input, no Paje written" {
	run -2 --separate-stderr bash -c "ptt-filter --mutex=queue_lockk '$T' | ptt-paje > '$BATS_TEST_TMPDIR/q.paje' && echo opened"
	[ -z "$output" ]
	[[ "$stderr" == "ptt-filter: --mutex: 'queue_lockk' names no object of the trace; nearest in the trace: queue_lock "* ]]
	[[ "$stderr" == *$'\nptt-paje: -: empty input, not a ptt trace' ]]
	[ ! -s "$BATS_TEST_TMPDIR/q.paje" ]
}

@test "binary output is not written to a terminal unless --force; text output is" {
	command -v script >/dev/null || skip "script (util-linux) not installed"
	run -2 --separate-stderr script -qec "ptt-filter '$T'" /dev/null
	[[ "$output" == *"ptt-filter: refusing to write a binary trace to a terminal: redirect it, pipe it, or use --force"* ]]
	run -0 --separate-stderr script -qec "ptt-filter --force -e mutex '$T' >/dev/null && ptt-dump '$T' | ptt-filter -c 3 -n" /dev/null
	[[ "$output" == "# ptt-trace "* ]]
}

# One naming: what ptt-stat and ptt-deadlock print, ptt-filter takes back.
@test "every object and thread name ptt-stat prints selects it in ptt-filter (symbol, module+0xoff, command)" {
	strip -o "$BATS_TEST_TMPDIR/inv_s" "$EXAMPLES/inversion"
	ptt-record -q -o "$BATS_TEST_TMPDIR/s.ptt" -- "$BATS_TEST_TMPDIR/inv_s" >/dev/null
	ptt-record -q -o "$BATS_TEST_TMPDIR/p.ptt" -- "$EXAMPLES/prim_cond" >/dev/null
	for t in s p; do
		T="$BATS_TEST_TMPDIR/$t.ptt"
		objs=$(ptt-stat -n 0 -S 0 "$T" | awk '/^OBJECT/ { o = 1; next } /^$/ { o = 0 } o && !/^\(/ { print $1 }')
		[ -n "$objs" ]
		for n in $objs; do
			run -0 --separate-stderr ptt-filter --object="$n" "$T"
			[ -z "$stderr" ]
			# the selection holds events whose object arguments ptt-stat names so
			got=$(ptt-filter --object="$n" "$T" | ptt-stat -n 0 -S 0 | awk '/^OBJECT/ { o = 1; next } /^$/ { o = 0 } o && !/^\(/ { print $1 }')
			grep -qxF -- "$n" <<<"$got"
		done
		threads=$(ptt-stat -n 0 -S 0 "$T" | awk '/^ +PID +TID/ { o = 1; n = NF; next } /^NO-WAIT/ { o = 0 } o && NF == n { print $3 }')
		[ -n "$threads" ]
		for n in $threads; do
			run -0 --separate-stderr ptt-filter --thread="$n" "$T"
			[ -z "$stderr" ]
		done
	done
	# the stripped program's locks are module+0xoff, and its main thread is its command
	grep -qE '^inv_s\+0x[0-9a-f]+ ' <<<"$(ptt-stat -S 0 "$BATS_TEST_TMPDIR/s.ptt")"
	run -0 --separate-stderr ptt-filter --thread=inv_s "$BATS_TEST_TMPDIR/s.ptt"
	# the Paje containers' labels ("mutex NAME", "TID NAME") select the same events as the bare names
	ptt-paje -o "$BATS_TEST_TMPDIR/s.ptt" >"$BATS_TEST_TMPDIR/s.paje"
	labels=$(awk -F'"' '$1 ~ /^6 .* CT_(Mutex|Thread) / { print $2 }' "$BATS_TEST_TMPDIR/s.paje")
	[ "$(wc -l <<<"$labels")" -eq 5 ]
	while read -r label; do
		case $label in
		[0-9]*) opt=--thread; bare=${label%% *} ;;
		*) opt=--object; bare=${label#* } ;;
		esac
		[ "$(ptt-filter "$opt=$label" "$BATS_TEST_TMPDIR/s.ptt" | ptt-dump -n | md5sum)" = \
			"$(ptt-filter "$opt=$bare" "$BATS_TEST_TMPDIR/s.ptt" | ptt-dump -n | md5sum)" ]
	done <<<"$labels"
	# ptt-deadlock's "NAME (0xADDR)" and ptt-stat's "TID (NAME)"
	ptt-record -q -o "$BATS_TEST_TMPDIR/i.ptt" -- "$EXAMPLES/inversion" >/dev/null
	named=$(ptt-deadlock "$BATS_TEST_TMPDIR/i.ptt" | grep -oE 'lock_a \(0x[0-9a-f]+\)' | head -1)
	[ -n "$named" ]
	[ "$(ptt-filter --object="$named" "$BATS_TEST_TMPDIR/i.ptt" | ptt-dump -n | md5sum)" = \
		"$(ptt-filter --object=lock_a "$BATS_TEST_TMPDIR/i.ptt" | ptt-dump -n | md5sum)" ]
	tid=$(ptt-dump -n "$BATS_TEST_TMPDIR/i.ptt" | awk '$5 == "thread_name" && $7 == "name=\"first\"" { print $3; exit }')
	[ "$(ptt-filter --thread="$tid (first)" "$BATS_TEST_TMPDIR/i.ptt" | ptt-dump -n | md5sum)" = \
		"$(ptt-filter --thread=first "$BATS_TEST_TMPDIR/i.ptt" | ptt-dump -n | md5sum)" ]
}

@test "every tool reading an empty pipe or one without a trace's header exits 2 with one line" {
	for tool in ptt-dump ptt-stat ptt-paje ptt-csv ptt-json ptt-filter ptt-deadlock ptt-critical ptt-index; do
		run -2 --separate-stderr bash -c ": | $tool"
		[ -z "$output" ] || { echo "$tool wrote on an empty pipe: $output"; return 1; }
		[ "$stderr" = "$tool: -: empty input, not a ptt trace" ]
		run -2 --separate-stderr bash -c "echo 'no trace here' | $tool"
		[ -z "$output" ]
		[ "$stderr" = "$tool: -: offset 0: not a ptt trace (bad magic)" ]
	done
}

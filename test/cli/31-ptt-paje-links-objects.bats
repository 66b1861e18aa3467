#!/usr/bin/env bats
# ptt-paje: join links and, with --objects, per-object containers with holders and waiters,
# on every example program and on cut, windowed, killed and hostile traces.
bats_require_minimum_version 1.5.0
load helpers

teardown() { stop_recorder_left; }

setup() {
	T="$BATS_TEST_TMPDIR/t.ptt"
	P="$BATS_TEST_TMPDIR/plain.paje"
	O="$BATS_TEST_TMPDIR/objects.paje"
}

# $T converted without and with --objects: both read whole by pj_dump, one join link per successful
# join (from the joined thread to the joiner), every holders variable back to 0 at the end
convert_both() {
	ptt-paje "$T" >"$P"
	ptt-paje --objects "$T" >"$O"
	assert_paje_valid "$P"
	assert_paje_valid "$O"
	assert_join_links "$T" "$P"
	assert_join_links "$T" "$O"
	assert_holders_end_at_zero "$O"
}

# ViTE last: without it the test is skipped with that reason, after the pj_dump checks ran
vite_both() {
	assert_vite_clean "$P"
	assert_vite_clean "$O"
}

# the number of "Mutex holders" intervals at 1 equals the acquisitions (locks, trylocks and
# re-acquisitions after condition waits), and no mutex ever has two holders
assert_mutex_holders_match() {
	local acq held max
	acq=$(ptt-dump -n "$T" | awk '($5=="mutex_lock" || $5=="mutex_trylock" || $5=="mutex_timedlock") && / ret=0 / || $5=="cond_wait"' | wc -l)
	held=$(pj_dump "$O" | awk -F', ' '$1=="Variable" && $3=="Mutex holders" && $7+0 == 1' | wc -l)
	max=$(pj_dump "$O" | awk -F', ' '$1=="Variable" && $3=="Mutex holders" && $7+0 > m {m = $7+0} END {print m+0}')
	[ "$acq" -gt 0 ]
	[ "$held" -eq "$acq" ] || { echo "holding intervals $held, acquisitions $acq"; return 1; }
	[ "$max" -eq 1 ] || { echo "a mutex had $max holders"; return 1; }
}

@test "ptt-paje --objects is in --help" {
	run -0 --separate-stderr ptt-paje --help
	[[ "$output" == *"-o, --objects"* ]]
	[ -z "$stderr" ]
}

@test "prodcons: join links, object containers named from the trace, holders equal acquisitions" {
	record "$EXAMPLES/prodcons" -p 2 -c 2 -n 2000
	convert_both
	[ "$(paje_join_pairs "$P" | wc -l)" -eq 4 ]
	assert_mutex_holders_match
	for c in "Mutex/mutex queue_lock" "Condition variable/cond not_empty" "Condition variable/cond not_full" "Barrier/barrier start"; do
		pj_dump "$O" | grep -qE "^Container, (mutexes|condition variables|barriers), ${c%/*}, .*, ${c#*/}\$" || { echo "no container $c"; return 1; }
	done
	# the producers end long after main starts joining them: those links start at the thread's end
	pj_dump "$P" | awk -F', ' '$1=="Link" && $3=="Thread join" && $6+0 > 0 {n++} END {exit !n}'
	# the default output has no object containers
	[ "$(pj_dump "$P" | grep -c '^Container, [a-z_]* [0-9]*, Mutex')" -eq 0 ]
	vite_both
}

@test "primitives: every scenario, with and without --objects" {
	for s in rwlock barrier sem spin trylock timed cancel fork; do
		ptt-record -q -e all -o "$T" -- "$EXAMPLES/primitives" "$s" >/dev/null 2>&1
		convert_both
		vite_both
	done
}

@test "prim_cond: join links and objects" {
	record "$EXAMPLES/prim_cond"
	convert_both
	[ "$(paje_join_pairs "$P" | wc -l)" -gt 0 ]
	pj_dump "$O" | grep -q '^Variable, cond [^,]*, Condition waiters, .*, 1.000000$'
	vite_both
}

@test "prim_rwlock: readers and writers counted as holders" {
	record "$EXAMPLES/prim_rwlock"
	convert_both
	pj_dump "$O" | grep -q '^Variable, rwlock [^,]*, Read-write lock holders, .*, 1.000000$'
	pj_dump "$O" | grep -q '^Variable, rwlock [^,]*, Read-write lock waiters, .*, 1.000000$'
	vite_both
}

@test "prim_sem: join links and semaphore waiters" {
	record "$EXAMPLES/prim_sem"
	convert_both
	pj_dump "$O" | grep -q '^Container, semaphores, Semaphore, '
	vite_both
}

@test "prim_spin (-e spin,thread,mutex): spinlock containers with holders" {
	ptt-record -q -e spin,thread,mutex -o "$T" -- "$EXAMPLES/prim_spin" >/dev/null 2>&1
	convert_both
	pj_dump "$O" | grep -q '^Variable, spinlock [^,]*, Spinlock holders, .*, 1.000000$'
	vite_both
}

@test "contention: waiters above 0 while the lock is contended, holders equal acquisitions" {
	record "$EXAMPLES/contention"
	ptt-dump -n "$T" | grep -q ' mutex_lock_req '
	convert_both
	assert_mutex_holders_match
	max=$(pj_dump "$O" | awk -F', ' '$1=="Variable" && $3=="Mutex waiters" && $7+0 > m {m = $7+0} END {print m+0}')
	[ "$max" -gt 0 ]
	# waiters fall back to 0 as well
	pj_dump "$O" | awk -F', ' '$1=="Variable" && $3=="Mutex waiters" { if ($4+0 >= t) { t = $4+0; v = $7+0 } } END {exit v != 0}'
	vite_both
}

@test "cxx_threads: join links and objects" {
	record "$EXAMPLES/cxx_threads"
	convert_both
	[ "$(paje_join_pairs "$P" | wc -l)" -gt 0 ]
	vite_both
}

@test "a join link: at the return, from the end while the joiner waits, never to an unknown thread" {
	record "$EXAMPLES/prodcons" -p 1 -c 1 -n 10
	{ ptt-dump "$T" | grep '^#'
	  cat <<-EOF
	0.000001000 100 100 pthread process_begin ppid=1 cmd="x"
	0.000001000 100 100 pthread thread_begin handle=0x1 start=0x0 parent=0
	0.000002000 100 101 pthread thread_begin handle=0x2 start=0x3 parent=100
	0.000002500 100 102 pthread thread_begin handle=0x4 start=0x3 parent=100
	0.000002600 100 103 pthread thread_begin handle=0x5 start=0x3 parent=100
	0.000003000 100 101 pthread thread_end retval=0x0 how=0
	0.000004000 100 100 pthread thread_join_req handle=0x2 target=101
	0.000005000 100 100 pthread thread_join handle=0x2 target=101 ret=0 retval=0x0
	0.000006000 100 100 pthread thread_join_req handle=0x4 target=102
	0.000007000 100 102 pthread thread_end retval=0x0 how=0
	0.000008000 100 100 pthread thread_join handle=0x4 target=102 ret=0 retval=0x0
	0.000009000 100 100 pthread thread_join handle=0x9 target=999 ret=0 retval=0x0
	0.000009500 100 100 pthread thread_join handle=0x4 target=102 ret=3 retval=0x0
	0.000010000 100 100 pthread thread_join handle=0x5 target=103 ret=0 retval=0x0
	0.000011000 100 100 pthread thread_join_req handle=0x6 target=104
	0.000011500 100 104 pthread thread_begin handle=0x6 start=0x3 parent=100
	0.000012000 100 104 pthread thread_end retval=0x0 how=0
	0.000013000 100 100 pthread thread_exit retval=0x0
	EOF
	} >"$BATS_TEST_TMPDIR/j.txt"
	run -0 --separate-stderr ptt-paje "$BATS_TEST_TMPDIR/j.txt"
	echo "$output" >"$P"
	assert_paje_valid "$P"
	pj_dump "$P" | awk -F', ' '$1=="Link" && $3=="Thread join" {print $4, $5, $8, $9}' >"$BATS_TEST_TMPDIR/links.txt"
	cat >"$BATS_TEST_TMPDIR/expected.txt" <<-EOF
	0.000005 0.000005 101 100 x
	0.000007 0.000008 102 100 x
	0.000010 0.000010 103 100 x
	0.000012 0.000013 104 100 x
	EOF
	diff "$BATS_TEST_TMPDIR/expected.txt" "$BATS_TEST_TMPDIR/links.txt"
	# 103's end is not in the trace: it ends when it is joined
	pj_dump "$P" | grep -q '^Container, x 100, Thread, 2.6e-06, 1e-05, '
	assert_vite_clean "$P"
}

@test "--objects on cut, windowed, sparse, killed and hostile traces is still valid" {
	record "$EXAMPLES/prodcons" -p 2 -c 2 -n 2000
	size=$(stat -c %s "$T")
	for part in 3 2; do
		head -c $((size / part)) "$T" >"$BATS_TEST_TMPDIR/cut.ptt"
		run -1 --separate-stderr ptt-paje --objects "$BATS_TEST_TMPDIR/cut.ptt"
		echo "$output" >"$BATS_TEST_TMPDIR/cut.paje"
		assert_paje_valid "$BATS_TEST_TMPDIR/cut.paje"
	done
	# threads still blocked and holding at the end of a text trace cut short
	ptt-dump "$T" | head -n 3000 | ptt-paje --objects >"$BATS_TEST_TMPDIR/cut2.paje"
	assert_paje_valid "$BATS_TEST_TMPDIR/cut2.paje"
	assert_holders_end_at_zero "$BATS_TEST_TMPDIR/cut2.paje"
	ptt-dump "$T" | awk '/^#/ || NR % 3 == 0' | ptt-paje --objects >"$BATS_TEST_TMPDIR/sparse.paje"
	assert_paje_valid "$BATS_TEST_TMPDIR/sparse.paje"
	# a time window (the state in force at its start comes with it) and one object only
	# (its bounds by event count, the second third: a share of the duration may fall in a slow start-up)
	read -r a b < <(ptt-dump -n "$T" | awk '{ t[NR] = $1 } END { print t[int(NR / 3)], t[int(NR * 2 / 3)] }')
	ptt-filter --from="${a}s" --to="${b}s" "$T" | ptt-paje --objects >"$BATS_TEST_TMPDIR/window.paje"
	assert_paje_valid "$BATS_TEST_TMPDIR/window.paje"
	pj_dump "$BATS_TEST_TMPDIR/window.paje" | grep -q '^Container, mutexes, Mutex, .*, mutex queue_lock$'
	ptt-filter --mutex=queue_lock "$T" | ptt-paje --objects >"$BATS_TEST_TMPDIR/mutex.paje"
	assert_paje_valid "$BATS_TEST_TMPDIR/mutex.paje"
	# a killed program
	ptt-record -q -o "$BATS_TEST_TMPDIR/k.ptt" -- "$EXAMPLES/prodcons" -n 100000000 >/dev/null 3>&- &
	rec=$!
	wait_size "$rec" "$BATS_TEST_TMPDIR/k.ptt" 2000000 # killed after some 50000 events, on any machine
	kill -KILL "$prog"
	wait "$rec" || true
	ptt-paje --objects "$BATS_TEST_TMPDIR/k.ptt" >"$BATS_TEST_TMPDIR/k.paje"
	assert_paje_valid "$BATS_TEST_TMPDIR/k.paje"
	# an object name that would break the file if written as is
	ptt-dump "$T" | sed 's/name="queue_lock"/name="q\\"u#e'"'"'u e\\n\\x01"/' >"$BATS_TEST_TMPDIR/hostile.txt"
	run -0 --separate-stderr ptt-paje --objects "$BATS_TEST_TMPDIR/hostile.txt"
	echo "$output" >"$BATS_TEST_TMPDIR/hostile.paje"
	grep -q '"mutex q_u_e_u e__"' "$BATS_TEST_TMPDIR/hostile.paje"
	assert_paje_valid "$BATS_TEST_TMPDIR/hostile.paje"
	assert_vite_clean "$BATS_TEST_TMPDIR/window.paje"
	assert_vite_clean "$BATS_TEST_TMPDIR/cut2.paje"
	assert_vite_clean "$BATS_TEST_TMPDIR/hostile.paje"
}

@test "text and binary input give the same Paje with --objects; times never go back" {
	record "$EXAMPLES/prodcons" -p 2 -c 2 -n 500
	ptt-paje --objects "$T" >"$BATS_TEST_TMPDIR/a.paje"
	ptt-dump "$T" | ptt-paje --objects >"$BATS_TEST_TMPDIR/b.paje"
	cmp "$BATS_TEST_TMPDIR/a.paje" "$BATS_TEST_TMPDIR/b.paje"
	# an event out of order in a text trace is written at the time already reached
	{ ptt-dump "$T" | grep '^#'; ptt-dump -n "$T" | awk 'NR == 40 {print; $1 = "0.000000001"} {print}'; } \
		>"$BATS_TEST_TMPDIR/c.txt"
	run -1 --separate-stderr ptt-paje --objects "$BATS_TEST_TMPDIR/c.txt"
	[[ "$stderr" == *"time goes back"*"events moved forward"* ]]
	echo "$output" >"$BATS_TEST_TMPDIR/c.paje"
	awk '$1 >= 6 && $1 <= 14 { if ($2 + 0 < t) { print "time goes back at line " NR; exit 1 } t = $2 + 0 }' "$BATS_TEST_TMPDIR/c.paje"
	assert_paje_valid "$BATS_TEST_TMPDIR/c.paje"
}

@test "--objects: threads first, then one container of objects by kind, locks first; ViTE draws them in that order" {
	record "$EXAMPLES/prodcons" -p 2 -c 2 -n 2000
	ptt-paje --objects "$T" >"$BATS_TEST_TMPDIR/o.paje"
	assert_paje_valid "$BATS_TEST_TMPDIR/o.paje"
	pj_dump "$BATS_TEST_TMPDIR/o.paje" | awk -F', ' '$1=="Container" {print $2 " > " $3 " " $7}' | sort >"$BATS_TEST_TMPDIR/tree.txt"
	grep -E ' > (Objects|Mutexes|Condition variables|Barriers)' "$BATS_TEST_TMPDIR/tree.txt" | sed 's/^prodcons [0-9]* >/process >/' >"$BATS_TEST_TMPDIR/groups.txt"
	printf '%s\n' "objects > Barriers barriers" "objects > Condition variables condition variables" \
		"objects > Mutexes mutexes" "process > Objects objects" | diff - "$BATS_TEST_TMPDIR/groups.txt"
	# creation order is drawing order: every thread, then the objects' containers, mutexes before condition variables
	awk '$1 == 6 {print $4}' "$BATS_TEST_TMPDIR/o.paje" | grep -vE '^(0|CT_Program|CT_Process)$' | uniq >"$BATS_TEST_TMPDIR/order.txt"
	printf '%s\n' CT_Thread CT_Objects CT_Mutexes CT_Conds CT_Barriers | diff - <(awk '!seen[$0]++' "$BATS_TEST_TMPDIR/order.txt" | head -n 5)
	# ViTE's picture lists the five threads above the objects
	command -v vite >/dev/null || skip "vite not installed"
	assert_vite_clean "$BATS_TEST_TMPDIR/o.paje"
	grep -o '<text[^>]*>[^<]*' "$BATS_TEST_TMPDIR/vite.svg" | sed -n 's/.* y="\([0-9.]*\)"[^>]*>\(.*\)/\1 \2/p' | sort -n |
		awk '{sub(/^[0-9.]+ /, "")} /^[0-9]+( |$)|^(mutex|cond|barrier) / {print ($0 ~ /^[0-9]/) ? "thread" : "object"}' | uniq >"$BATS_TEST_TMPDIR/drawn.txt"
	printf '%s\n' thread object | diff - "$BATS_TEST_TMPDIR/drawn.txt"
}

# a text trace: threads 100 and 101 of process 100; mutex i (at 0x1000 + 64 i, i = 1..14) waited on i times
many_mutexes() {
	ptt-dump "$T" | grep '^#'
	awk 'BEGIN {
		t = 1000
		print "0.000001000 100 100 pthread thread_begin handle=0x0 start=0x0 parent=0"
		print "0.000001000 100 101 pthread thread_begin handle=0x0 start=0x0 parent=100"
		for (i = 1; i <= 14; i++)
			for (k = 0; k < i; k++) {
				m = sprintf("mutex=0x%x", 4096 + 64 * i)
				printf "0.%09d 100 100 pthread mutex_lock %s ret=0\n", t++, m
				printf "0.%09d 100 101 pthread mutex_lock_req %s\n", t++, m
				printf "0.%09d 100 100 pthread mutex_unlock %s ret=0\n", t++, m
				printf "0.%09d 100 101 pthread mutex_lock %s ret=0\n", t++, m
				printf "0.%09d 100 101 pthread mutex_unlock %s ret=0\n", t++, m
			}
	}'
}

# the mutex containers of a Paje file, by address, sorted
paje_mutexes() {
	pj_dump "$1" | awk -F', ' '$1=="Container" && $3=="Mutex" {print $7}' | sort
}

@test "--objects shows the 10 objects waited on most; --max-objects=N the N most; --all-objects every one" {
	command -v pj_dump >/dev/null || skip "pj_dump (pajeng) not installed"
	record "$EXAMPLES/prodcons" -p 2 -c 2 -n 10
	many_mutexes >"$BATS_TEST_TMPDIR/many.txt"
	ptt-paje --objects "$BATS_TEST_TMPDIR/many.txt" >"$BATS_TEST_TMPDIR/d.paje"
	assert_paje_valid "$BATS_TEST_TMPDIR/d.paje"
	for i in 5 6 7 8 9 10 11 12 13 14; do printf 'mutex 0x%x\n' $((4096 + 64 * i)); done | sort >"$BATS_TEST_TMPDIR/want.txt"
	paje_mutexes "$BATS_TEST_TMPDIR/d.paje" | diff "$BATS_TEST_TMPDIR/want.txt" -
	ptt-paje --max-objects=3 "$BATS_TEST_TMPDIR/many.txt" >"$BATS_TEST_TMPDIR/3.paje"
	assert_paje_valid "$BATS_TEST_TMPDIR/3.paje"
	printf 'mutex 0x%x\n' 4864 4928 4992 | diff - <(paje_mutexes "$BATS_TEST_TMPDIR/3.paje")
	for all in --all-objects -O --max-objects=0; do
		ptt-paje "$all" "$BATS_TEST_TMPDIR/many.txt" >"$BATS_TEST_TMPDIR/all.paje"
		assert_paje_valid "$BATS_TEST_TMPDIR/all.paje"
		[ "$(paje_mutexes "$BATS_TEST_TMPDIR/all.paje" | wc -l)" -eq 14 ]
	done
	assert_vite_clean "$BATS_TEST_TMPDIR/d.paje"
	run -2 --separate-stderr ptt-paje --max-objects=ten "$T"
	[ -z "$output" ]
	[[ "$stderr" == "ptt-paje: --max-objects: not a count: ten"* ]]
}

@test "--objects: one row per object, its lifetimes on it (a semaphore re-initialised at one address, as CPython does)" {
	trace reinit \
		'0.002000000 10 10 pthread thread_begin handle=0x1 start=0x0 parent=0' \
		'0.010000000 10 10 pthread sem_init sem=0x50 value=1 ret=0 site=0x0' \
		'0.011000000 10 10 pthread sem_wait sem=0x50 ret=0 site=0x0' \
		'0.012000000 10 10 pthread sem_post sem=0x50 ret=0 site=0x0' \
		'0.013000000 10 10 pthread sem_destroy sem=0x50 ret=0 site=0x0' \
		'0.020000000 10 10 pthread sem_init sem=0x50 value=1 ret=0 site=0x0' \
		'0.021000000 10 10 pthread sem_destroy sem=0x50 ret=0 site=0x0' \
		'0.030000000 10 10 pthread sem_init sem=0x50 value=0 ret=0 site=0x0' \
		'0.031000000 10 10 pthread object_name object=0x60 name="m"' \
		'0.032000000 10 10 pthread mutex_lock mutex=0x60 ret=0 site=0x0' \
		'0.033000000 10 10 pthread mutex_unlock mutex=0x60 ret=0 site=0x0' \
		'0.040000000 10 10 pthread process_exit status=0'
	run -0 --separate-stderr ptt-paje -O "$BATS_TEST_TMPDIR/reinit.txt"
	[ -z "$stderr" ]
	echo "$output" >"$BATS_TEST_TMPDIR/r.paje"
	assert_paje_valid "$BATS_TEST_TMPDIR/r.paje"
	run -0 pj_dump "$BATS_TEST_TMPDIR/r.paje"
	# one container for the address, its three lifetimes as "live" states on it, and the mutex's row
	[ "$(echo "$output" | grep -c '^Container, semaphores, Semaphore, .*, semaphore 0x50$')" -eq 1 ]
	[ "$(echo "$output" | grep -c '^Container, mutexes, Mutex, .*, mutex m$')" -eq 1 ]
	[ "$(echo "$output" | awk -F', ' '$1 == "State" && $3 == "Semaphore lifetime" && $8 == "live" { print $4, $5 }' | tr '\n' ' ')" = \
		"0.010000 0.013000 0.020000 0.021000 0.030000 0.040000 " ]
	assert_vite_clean "$BATS_TEST_TMPDIR/r.paje"
}

@test "state colours are the same in every trace and distinct; legend names come from the state model" {
	record "$EXAMPLES/prodcons" -p 2 -c 2 -n 10
	ptt-paje "$T" | awk '$1 == 5 && $3 == "ST_Thread"' >"$BATS_TEST_TMPDIR/a.txt"
	record "$EXAMPLES/prim_rwlock"
	ptt-paje --objects "$T" | awk '$1 == 5 && $3 == "ST_Thread"' >"$BATS_TEST_TMPDIR/b.txt"
	diff "$BATS_TEST_TMPDIR/a.txt" "$BATS_TEST_TMPDIR/b.txt"
	[ "$(wc -l <"$BATS_TEST_TMPDIR/a.txt")" -ge 12 ]
	# no two states share a colour, every name is quoted
	[ "$(awk -F'"' '{print $4}' "$BATS_TEST_TMPDIR/a.txt" | sort | uniq -d | wc -l)" -eq 0 ]
	[ "$(awk -F'"' 'NF != 5' "$BATS_TEST_TMPDIR/a.txt" | wc -l)" -eq 0 ]
}

@test "names with & < > keep ViTE's SVG export well-formed XML" {
	command -v xmllint >/dev/null || skip "xmllint (libxml2-utils) not installed"
	record "$EXAMPLES/prodcons" -p 2 -c 2 -n 100
	ptt-dump "$T" | sed -e 's/name="queue_lock"/name="std::map<int, q>\&"/' -e 's/name="producer-0"/name="p \& <0>"/' >"$BATS_TEST_TMPDIR/amp.txt"
	ptt-paje --objects "$BATS_TEST_TMPDIR/amp.txt" >"$BATS_TEST_TMPDIR/amp.paje"
	assert_paje_valid "$BATS_TEST_TMPDIR/amp.paje"
	grep -q '"mutex std::map\[int, q\]+"' "$BATS_TEST_TMPDIR/amp.paje"
	grep -q '"[0-9]* p + \[0\]"' "$BATS_TEST_TMPDIR/amp.paje"
	assert_vite_clean "$BATS_TEST_TMPDIR/amp.paje"
	run -0 --separate-stderr xmllint --noout "$BATS_TEST_TMPDIR/vite.svg"
	[ -z "$stderr" ]
}

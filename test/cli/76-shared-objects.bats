#!/usr/bin/env bats
# Objects in shared memory (ptt-trace(5), SHARED OBJECTS): a process-shared mutex used by two processes
# is one object, with its hand-offs across them as the program counted them; a deadlock across two
# processes is found (exit 3), each thread named with its process; one process's objects carry their pid
# where several processes are traced.
bats_require_minimum_version 1.5.0
load helpers

teardown() { stop_recorder_left; }

said() { sed -n "s/^$1 //p" "$BATS_TEST_TMPDIR/out.txt"; }

@test "shm_contend: one mutex in shm_open'd memory, mapped by each process, hand-offs both ways as counted" {
	record "$EXAMPLES/shm_contend" 2000
	parent=$(sed -n 's/^parent \([0-9]*\): .*/\1/p' "$BATS_TEST_TMPDIR/out.txt")
	child=$(sed -n 's/^child \([0-9]*\): .*/\1/p' "$BATS_TEST_TMPDIR/out.txt")
	to_parent=$(sed -n 's/^parent .*taken from the child //p' "$BATS_TEST_TMPDIR/out.txt")
	to_child=$(sed -n 's/^child .*taken from the parent //p' "$BATS_TEST_TMPDIR/out.txt")
	[ "$to_parent" -gt 0 ] && [ "$to_child" -gt 0 ]
	# the trace: each process told its own mapping of the same file, and the hand-offs are in it both ways
	ptt-dump "$BATS_TEST_TMPDIR/t.ptt" >"$BATS_TEST_TMPDIR/t.txt"
	[ "$(grep -c " $child $child pthread map_shared .*path=\"/dev/shm/ptt_shm_contend.$parent\"" "$BATS_TEST_TMPDIR/t.txt")" -ge 1 ]
	[ "$(grep -c " $parent $parent pthread map_shared .*path=\"/dev/shm/ptt_shm_contend.$parent\"" "$BATS_TEST_TMPDIR/t.txt")" -ge 2 ]
	run -0 awk -v p="$parent" -v c="$child" '$5 == "mutex_lock" { if (last == c && $2 == p) pc++; if (last == p && $2 == c) cp++; last = $2 }
		END { print pc + 0, cp + 0 }' "$BATS_TEST_TMPDIR/t.txt"
	[ "$output" = "$to_parent $to_child" ]
	# ptt-stat: one row for the mutex, named by its file, 4000 acquisitions, the owner changing as counted
	run -0 --separate-stderr ptt-stat "$BATS_TEST_TMPDIR/t.ptt"
	[ "$(grep -c ' mutex ' <<<"$output")" -eq 1 ]
	row=$(grep "^/dev/shm/ptt_shm_contend.$parent+0x0 *mutex " <<<"$output")
	[ "$(awk '{ print $3 }' <<<"$row")" -eq 4000 ]
	[ "$(awk '{ print $15 }' <<<"$row")" -eq $((to_parent + to_child)) ]
	# the threads' table and the summary name both processes
	grep -q "^ *$parent  *$parent shm_contend" <<<"$output"
	grep -q "^ *$child  *$child shm_contend" <<<"$output"
	[ -z "$stderr" ]
	# ptt-deadlock: nothing to say; a Paje file PajeNG reads whole
	run -0 ptt-deadlock "$BATS_TEST_TMPDIR/t.ptt"
	ptt-paje "$BATS_TEST_TMPDIR/t.ptt" >"$BATS_TEST_TMPDIR/t.paje"
	assert_paje_valid "$BATS_TEST_TMPDIR/t.paje"
}

@test "shm_deadlock: two processes, two shared mutexes taken in opposite orders: exit 3, threads named with their processes" {
	ptt-record -q -o "$BATS_TEST_TMPDIR/t.ptt" -- "$EXAMPLES/shm_deadlock" 2>"$BATS_TEST_TMPDIR/err.txt" 3>&- &
	rec=$!
	wait_blocked "$rec" 1
	parent=$prog
	child=$(sed -n 's/.*child \([0-9]*\) takes A$/\1/p' "$BATS_TEST_TMPDIR/err.txt")
	[ -n "$child" ]
	kill -INT "$child" "$rec"
	wait "$rec" || true
	run -3 --separate-stderr ptt-deadlock "$BATS_TEST_TMPDIR/t.ptt"
	[[ "$output" == *"potential deadlock 1: lock-order cycle of 2 objects in processes "* ]]
	[[ "$output" == *"deadlock: threads blocked in a cycle at the end of the trace (processes "* ]]
	a="shared-anon.$parent."
	[[ "$output" == *"thread $parent (shm_deadlock, pid $parent) waits since "*" for $a"*"+0x28, held by thread $child (shm_deadlock, pid $child)"* ]]
	[[ "$output" == *"thread $child (shm_deadlock, pid $child) waits since "*" for $a"*"+0x0, held by thread $parent (shm_deadlock, pid $parent)"* ]]
	[ -z "$stderr" ]
	# ptt-stat: two mutexes (and the barrier) in the one mapping, not four
	run -0 --separate-stderr ptt-stat "$BATS_TEST_TMPDIR/t.ptt"
	[ "$(grep -c "^$a[0-9a-f]*+0x[0-9a-f]* *mutex " <<<"$output")" -eq 2 ]
	[ "$(grep -c "^$a[0-9a-f]*+0x50 *barrier " <<<"$output")" -eq 1 ]
}

@test "sem_named: a named semaphore (libc maps it, not the program) is one object across processes, hand-offs as counted" {
	for how in inherit each; do
		record "$EXAMPLES/sem_named" "$how" 2000
		parent=$(sed -n 's/^parent \([0-9]*\): .*/\1/p' "$BATS_TEST_TMPDIR/out.txt")
		child=$(sed -n 's/^child \([0-9]*\): .*/\1/p' "$BATS_TEST_TMPDIR/out.txt")
		handoffs=$(sed -n 's/^hand-offs across processes //p' "$BATS_TEST_TMPDIR/out.txt")
		[ "$handoffs" -gt 0 ]
		# each process told the semaphore's file as a shared mapping, and its unmapping at its sem_close
		ptt-dump "$BATS_TEST_TMPDIR/t.ptt" >"$BATS_TEST_TMPDIR/t.txt"
		for p in "$parent" "$child"; do
			[ "$(grep -c " $p $p pthread map_shared .*path=\"/dev/shm/sem.ptt_sem_named.$parent\"" "$BATS_TEST_TMPDIR/t.txt")" -eq 1 ]
			[ "$(grep -c " $p $p pthread unmap_shared .*len=32" "$BATS_TEST_TMPDIR/t.txt")" -eq 1 ]
		done
		# ptt-stat: one row, named by the file, 4000 acquisitions, the owner changing as the program counted
		run -0 --separate-stderr ptt-stat "$BATS_TEST_TMPDIR/t.ptt"
		[ -z "$stderr" ]
		[ "$(sed -n '/^LOCKS/,/^$/p' <<<"$output" | grep -c ' sem ')" -eq 1 ]
		row=$(grep "^/dev/shm/sem.ptt_sem_named.$parent+0x0 *sem " <<<"$output")
		[ "$(awk '{ print $3 }' <<<"$row")" -eq 4000 ]
		[ "$(awk '{ print $15 }' <<<"$row")" -eq "$handoffs" ]
	done
}

@test "sem_named deadlock: two named semaphores never posted, taken in opposite orders by two processes: exit 3" {
	ptt-record -q -o "$BATS_TEST_TMPDIR/t.ptt" -- "$EXAMPLES/sem_named" deadlock 2>"$BATS_TEST_TMPDIR/err.txt" 3>&- &
	rec=$!
	wait_blocked "$rec" 1
	parent=$prog
	child=$(sed -n 's/.*child \([0-9]*\) takes .*/\1/p' "$BATS_TEST_TMPDIR/err.txt")
	[ -n "$child" ]
	kill -INT "$child" "$rec"
	wait "$rec" || true
	run -3 --separate-stderr ptt-deadlock "$BATS_TEST_TMPDIR/t.ptt"
	[[ "$output" == *"deadlock: threads blocked in a cycle at the end of the trace (processes "* ]]
	s=/dev/shm/sem.ptt_sem_named.$parent
	[[ "$output" == *"thread $parent (sem_named, pid $parent) waits since "*" for $s.b+0x0, a semaphore never posted, taken by thread $child (sem_named, pid $child)"* ]]
	[[ "$output" == *"thread $child (sem_named, pid $child) waits since "*" for $s.a+0x0, a semaphore never posted, taken by thread $parent (sem_named, pid $parent)"* ]]
	[ -z "$stderr" ]
}

@test "ptt-paje -o: an object in shared memory has one row under \"shared memory\", living on after the process that used it first" {
	record "$EXAMPLES/sem_named" early 200
	parent=$(sed -n 's/.*after its parent \([0-9]*\) exited$/\1/p' "$BATS_TEST_TMPDIR/out.txt")
	[ -n "$parent" ]
	run -0 --separate-stderr ptt-paje -o "$BATS_TEST_TMPDIR/t.ptt"
	[ -z "$stderr" ]
	printf '%s\n' "$output" >"$BATS_TEST_TMPDIR/t.paje"
	assert_paje_valid "$BATS_TEST_TMPDIR/t.paje"
	assert_vite_clean "$BATS_TEST_TMPDIR/t.paje"
	pj_dump "$BATS_TEST_TMPDIR/t.paje" | grep '^Container' >"$BATS_TEST_TMPDIR/c.txt"
	# one semaphore row, in "shared memory"'s objects; no objects container left empty in either process
	[ "$(grep -c ', Semaphore, ' "$BATS_TEST_TMPDIR/c.txt")" -eq 1 ]
	[ "$(grep -c '^Container, Program, Process, .*, shared memory$' "$BATS_TEST_TMPDIR/c.txt")" -eq 1 ]
	[ "$(grep -c '^Container, shared memory, Objects, ' "$BATS_TEST_TMPDIR/c.txt")" -eq 1 ]
	[ "$(grep -c ', Objects, ' "$BATS_TEST_TMPDIR/c.txt")" -eq 1 ]
	# the row ends with the program, after the parent's process ended
	row_end=$(awk -F', ' '$3 == "Semaphore" { print $5 }' "$BATS_TEST_TMPDIR/c.txt")
	prog_end=$(awk -F', ' '$3 == "Program" { print $5 }' "$BATS_TEST_TMPDIR/c.txt")
	parent_end=$(awk -F', ' -v p="sem_named $parent" '$3 == "Process" && $7 == p { print $5 }' "$BATS_TEST_TMPDIR/c.txt")
	[ "$row_end" = "$prog_end" ]
	awk -v r="$row_end" -v p="$parent_end" 'BEGIN { exit !(p != "" && r > p) }'
}

@test "ptt-top: a named semaphore shared by two processes is one row, its waiters of both processes under it" {
	for _ in 1 2 3 4 5; do
		record "$EXAMPLES/sem_named" each 20000
		run -0 --separate-stderr ptt-top -b -n 1 "$BATS_TEST_TMPDIR/t.ptt"
		grep -qE '^1 /dev/shm/sem\.ptt_sem_n +sem +[1-9]' <<<"$output" && break
	done
	grep -qE '^1 /dev/shm/sem\.ptt_sem_n +sem +[1-9]' <<<"$output" || skip "the semaphore never waited for in 5 runs"
	[ -z "$stderr" ]
	parent=$(sed -n 's/^parent \([0-9]*\): .*/\1/p' "$BATS_TEST_TMPDIR/out.txt")
	child=$(sed -n 's/^child \([0-9]*\): .*/\1/p' "$BATS_TEST_TMPDIR/out.txt")
	[ "$(grep -cE '^[0-9]+ ' <<<"$output")" -eq 1 ]
	waits=$(awk '$1 == "1" { print $4 }' <<<"$output")
	# the waited lines: threads of either process, their waits adding up to the row's
	run -0 awk -v p="$parent" -v c="$child" '$1 == "waited" { if ($2 != p && $2 != c) bad++; match($0, / in [0-9]+ waits? ended/); n += substr($0, RSTART + 4) + 0 }
		END { print n + 0, bad + 0 }' <<<"$output"
	[ "$output" = "$waits 0" ]
}

@test "objects of one process carry their pid where several processes are traced, and only there" {
	record "$EXAMPLES/fork_contend"
	run -0 --separate-stderr ptt-stat "$BATS_TEST_TMPDIR/t.ptt"
	rows=$(sed -n '/^LOCKS/,/^$/p' <<<"$output" | grep -v '^ *site \|^OBJECT\|^LOCKS\|^$')
	[ -n "$rows" ]
	[ -z "$(grep -v ' (pid [0-9]*) ' <<<"$rows")" ]
	record "$EXAMPLES/contention" -t 2 -n 100
	run -0 --separate-stderr ptt-stat "$BATS_TEST_TMPDIR/t.ptt"
	[[ "$output" != *"(pid "* ]]
}

@test "a later file of a rotated recording still knows the shared mappings (its head repeats them)" {
	ptt-record -q -m 64k -o "$BATS_TEST_TMPDIR/r.ptt" -- "$EXAMPLES/shm_contend" 3000 >"$BATS_TEST_TMPDIR/out.txt"
	parent=$(sed -n 's/^parent \([0-9]*\): .*/\1/p' "$BATS_TEST_TMPDIR/out.txt")
	last=$(ls "$BATS_TEST_TMPDIR"/r.ptt.* | tail -1)
	[ "$last" != "$BATS_TEST_TMPDIR/r.ptt.0001" ]
	run -0 --separate-stderr ptt-stat "$last"
	[ "$(grep -c ' mutex ' <<<"$output")" -eq 1 ]
	grep -q "^/dev/shm/ptt_shm_contend.$parent+0x0\*\? *mutex " <<<"$output"
}

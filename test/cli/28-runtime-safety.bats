#!/usr/bin/env bats
# The runtime never hangs the traced program, never loses its events without a word and never
# slows it for long, whatever the program does: it closes every descriptor, takes locks while its
# threads end (key and thread_local destructors), loses its recorder, starts children with vfork
# or posix_spawn.  The programs print their own counts; the trace is checked against them.
bats_require_minimum_version 1.5.0
load helpers

teardown() {
	stop_recorder_left
	[ -z "${prog:-}" ] || kill -KILL "$prog" 2>/dev/null || true
}

@test "a program that closes descriptors 3-1023 and then runs 300 threads at once: every event" {
	# the runtime mapped its rings' later segments from a descriptor the program had closed:
	# the threads past the first segment's 256 rings spun for ever, nothing lost, nothing said
	run -0 --separate-stderr timeout 120 ptt-record -q -o "$BATS_TEST_TMPDIR/t.ptt" -- "$EXAMPLES/many_threads" -c 300 10
	[ "$output" = "threads 300 alive at once, locks 3000" ]
	[ "$stderr" = "" ]
	run -0 --separate-stderr ptt-dump --check "$BATS_TEST_TMPDIR/t.ptt"
	[[ "$output" == *" 0 damaged, 0 lost, 0 out of order, 0 violations: ok" ]]
	[ "$stderr" = "" ]
	run -0 --separate-stderr ptt-dump --info "$BATS_TEST_TMPDIR/t.ptt"
	[ "$(awk '$1 == "thread_begin" {print $2}' <<<"$output")" -eq 301 ]
	[ "$(awk '$1 == "thread_end" {print $2}' <<<"$output")" -eq 301 ]
	[ "$(awk '$1 == "mutex_lock" {print $2}' <<<"$output")" -eq 3000 ]
	[ "$(awk '$1 == "barrier_wait" {print $2}' <<<"$output")" -eq 301 ]
	[ "$(awk '$1 == "lost:" {print $2}' <<<"$output")" = 0 ]
}

@test "a process whose rings the kernel refuses to map (ulimit -v): counted lost and said why, no wait" {
	# 600 threads with 1 MiB rings need 3 segments of 256 MiB; the program's 683 MiB of address space
	# hold the first mapping and maybe one more: the rest of the threads have no ring.  That loss was
	# said as 'every one of the 65536 rings was taken' (the cap, which it was not).
	run -0 --separate-stderr timeout 120 ptt-record -q -b 1M -o "$BATS_TEST_TMPDIR/t.ptt" -- \
		sh -c 'ulimit -v 700000 && exec "$0" 600 3' "$EXAMPLES/many_threads"
	[ "$output" = "threads 600 alive at once, locks 1800" ]
	run -0 --separate-stderr ptt-dump --check "$BATS_TEST_TMPDIR/t.ptt"
	echo "$output"
	lost=$(sed -n 's/.* 0 damaged, \([0-9]*\) lost, 0 out of order, 0 violations: ok$/\1/p' <<<"${lines[0]}")
	[ "$lost" -gt 0 ]
	[ "${lines[1]}" = "$BATS_TEST_TMPDIR/t.ptt: limit: the kernel refused to map a ring (no address space: ulimit -v?): $lost events of threads without a ring lost" ]
	[ "${#lines[@]}" -eq 2 ]
}

@test "an image exec'd after the program closed the ring's descriptor is traced; one whose number it reused is said untraced" {
	# bash closes PTT_SHM_FD's descriptor, runs ls (fork and exec) and execs many_threads: every image
	# attached again (they were not traced, and nothing said so)
	run -0 --separate-stderr ptt-record -q -o "$BATS_TEST_TMPDIR/t.ptt" -- \
		bash -c 'eval "exec $PTT_SHM_FD>&-"; ls /proc/$$/fd/$PTT_SHM_FD; exec "$0" 3 1' "$EXAMPLES/many_threads"
	[ "$output" = "threads 3 alive at once, locks 3" ]
	[[ "$stderr" == *"No such file or directory" ]] # what ls saw: the program's own descriptors are as it left them
	run -0 --separate-stderr ptt-dump --check "$BATS_TEST_TMPDIR/t.ptt"
	[ "${#lines[@]}" -eq 1 ]
	[[ "$output" == *" 0 damaged, 0 lost, 0 out of order, 0 violations: ok" ]]
	run -0 --separate-stderr ptt-dump -n "$BATS_TEST_TMPDIR/t.ptt"
	[ "$(grep -c ' process_begin .* cmd="ls /proc/' <<<"$output")" -eq 1 ]
	[ "$(grep -c ' process_begin .* cmd=".*/many_threads 3 1"$' <<<"$output")" -eq 1 ]
	[ "$(grep -c ' mutex_lock ' <<<"$output")" -eq 3 ]
	# the number used for a file of the program's own: left alone, and said
	run -0 --separate-stderr ptt-record -q -o "$BATS_TEST_TMPDIR/t.ptt" -- \
		bash -c 'eval "exec $PTT_SHM_FD</dev/null"; exec "$0" 3 1' "$EXAMPLES/many_threads"
	[ "$output" = "threads 3 alive at once, locks 3" ]
	run -0 --separate-stderr ptt-dump --check "$BATS_TEST_TMPDIR/t.ptt"
	[ "${lines[1]}" = "$BATS_TEST_TMPDIR/t.ptt: limit: 1 exec of a new image not traced: the program had closed the shared ring's descriptor, or used its number" ]
	run -0 --separate-stderr ptt-dump -n "$BATS_TEST_TMPDIR/t.ptt"
	[ "$(grep -c ' process_begin ' <<<"$output")" -eq 1 ]
}

# now in nanoseconds
now_ns() { date +%s%N; }

@test "a recorder killed under its program costs the program one short wait, not one per thread" {
	# churn 80 4 2000 50: 20 rounds of 4 threads, 50 ms apart, each thread filling its 16 KiB ring
	# several times over.  Every thread that met a full ring once waited ~2 s for the dead recorder
	# (80 threads: 279 s on a 1 s program); now the first to find it silent says so for all.
	local args=(80 4 2000 50) t0 untraced bound
	t0=$(now_ns)
	run -0 --separate-stderr "$EXAMPLES/churn" "${args[@]}"
	untraced=$(($(now_ns) - t0))
	[ "$output" = "threads 80 locks 160000" ]
	bound=$((untraced * 3 / 2 + 5000000000))
	t0=$(now_ns)
	ptt-record -q -b 16k -o "$BATS_TEST_TMPDIR/t.ptt" -- "$EXAMPLES/churn" "${args[@]}" \
		>"$BATS_TEST_TMPDIR/out" 2>"$BATS_TEST_TMPDIR/err" 3>&- &
	rec=$!
	wait_size "$rec" "$BATS_TEST_TMPDIR/t.ptt" 100000 # the recorder has written some of it: kill it
	kill -KILL "$rec"
	wait "$rec" || true
	# the program, its recorder gone, ends (a zombie nobody may reap: state Z) within the bound
	until [ "$(awk '{ print $3 }' "/proc/$prog/stat" 2>/dev/null || echo gone)" = Z ] || [ ! -e "/proc/$prog" ]; do
		[ "$(($(now_ns) - t0))" -lt "$bound" ] || {
			echo "the program still runs $((($(now_ns) - t0) / 1000000)) ms after its start (untraced $((untraced / 1000000)) ms)"
			false
		}
		sleep 0.05
	done
	echo "untraced $((untraced / 1000000)) ms, with the recorder killed $((($(now_ns) - t0) / 1000000)) ms"
	prog=
	[ "$(cat "$BATS_TEST_TMPDIR/out")" = "threads 80 locks 160000" ]
	# what the recorder wrote before it died is read, and said to be cut short
	run -1 --separate-stderr ptt-dump --info "$BATS_TEST_TMPDIR/t.ptt"
	locks=$(awk '$1 == "mutex_lock" {print $2}' <<<"$output")
	echo "mutex_lock: $locks"
	[ "$locks" -gt 0 ] && [ "$locks" -le 160000 ]
	[[ "$output" == *"(the trace has no end: the recorder did not finish it)"* ]]
	[[ "$stderr" == *": the trace ends without its end block (cut short)" ]]
}

# the program's count of EXIT_LOCKS locks taken while its threads end, against the trace: every
# one recorded, each before its thread's end, nothing lost and nothing late
exit_locks_recorded() {
	local prog=$1 n=$2 want=$3
	run -0 --separate-stderr ptt-record -o "$BATS_TEST_TMPDIR/t.ptt" -- "$EXAMPLES/$prog" "$n"
	[ "$output" = "threads $n exit_locks $want" ]
	# the END block's count of events after their thread's end (an uncompressed trace: its text)
	[ "$(grep -a -o '^late [0-9]*' "$BATS_TEST_TMPDIR/t.ptt")" = "late 0" ]
	run -0 --separate-stderr ptt-dump --check "$BATS_TEST_TMPDIR/t.ptt"
	[[ "$output" == *" 0 damaged, 0 lost, 0 out of order, 0 violations: ok" ]]
	run -0 --separate-stderr ptt-dump "$BATS_TEST_TMPDIR/t.ptt"
	# per thread: its locks, and whether one came after its end
	awk -v want="$want" -v n="$n" '
		$4 != "pthread" { next }
		$5 == "mutex_lock" { locks++; if (ended[$3]) late++ }
		$5 == "thread_end" { ended[$3] = 1; ends++ }
		END {
			printf "mutex_lock %d (program %d), thread_end %d, after an end %d\n", locks, want, ends, late
			exit !(locks == want && ends == n + 1 && late == 0)
		}' <<<"$output"
}

@test "locks taken in pthread_key destructors, in two rounds and after pthread_exit, come before the thread's end" {
	# 0 of 12 were recorded, lost: 0 (thread_end was written before glibc ran the destructors)
	exit_locks_recorded exit_locks 4 12
	run -0 --separate-stderr ptt-dump "$BATS_TEST_TMPDIR/t.ptt"
	# the threads that returned end with how=0, those that called pthread_exit with how=1
	[ "$(grep -c ' thread_end retval=0x0 how=0$' <<<"$output")" -eq 2 ]
	[ "$(grep -c ' thread_end retval=0x0 how=1$' <<<"$output")" -eq 2 ]
}

@test "locks taken in C++ thread_local destructors come before the thread's end" {
	exit_locks_recorded cxx_exit_locks 4 4
}

@test "vfork and posix_spawn(p) children get their process_fork in the parent, as fork's do" {
	# the children were traced but the parent had no process_fork for them: only fork's was seen
	run -0 --separate-stderr ptt-record -q -o "$BATS_TEST_TMPDIR/t.ptt" -- "$EXAMPLES/spawn_children" 3
	[ "$stderr" = "" ]
	[ "${#lines[@]}" -eq 5 ]
	[ "${lines[4]}" = "posix_spawn /nonexistent: No such file or directory" ]
	local parent how pid ways=("${lines[@]:0:4}")
	[ "${ways[*]% *}" = "fork vfork posix_spawn posix_spawnp" ]
	run -0 --separate-stderr ptt-dump --check "$BATS_TEST_TMPDIR/t.ptt"
	[[ "$output" == *" 0 damaged, 0 lost, 0 out of order, 0 violations: ok" ]]
	run -0 --separate-stderr ptt-dump -n "$BATS_TEST_TMPDIR/t.ptt"
	local dump=$output
	parent=$(awk '$5 == "process_begin" { print $2; exit }' <<<"$dump")
	# one process_fork per child started, in the parent, in order, naming the pid the program got;
	# none for the spawn that failed
	[ "$(awk -v p="$parent" '$5 == "process_fork" && $2 == p { sub("child=", "", $6); printf "%s ", $6 }' <<<"$dump")" = \
		"$(for w in "${ways[@]}"; do printf '%s ' "${w#* }"; done)" ]
	[ "$(grep -c ' process_fork ' <<<"$dump")" -eq 4 ]
	for w in "${ways[@]}"; do
		how=${w% *} pid=${w#* }
		echo "$how $pid"
		# the child's image that ran -child begins with the parent as its parent, after the
		# process_fork but for fork's, written when fork returns (ptt-record(1))
		awk -v p="$parent" -v c="$pid" -v how="$how" '
			$5 == "process_fork" && $6 == "child=" c { forked = NR }
			$5 == "process_begin" && $2 == c && $6 == "ppid=" p && /-child 3"$/ { begun = NR }
			END { exit !(forked && begun && (how == "fork" || begun > forked)) }' <<<"$dump"
		# its locks are its own
		[ "$(awk -v c="$pid" '$2 == c && $5 == "mutex_lock"' <<<"$dump" | wc -l)" -eq 3 ]
	done
	# said the same way for every way a child was started
	run -0 --separate-stderr ptt-dump -H "$BATS_TEST_TMPDIR/t.ptt"
	for w in "${ways[@]}"; do
		[[ "$output" == *"thread $parent (spawn_children) forks process ${w#* }"* ]]
	done
	run -0 --separate-stderr ptt-stat "$BATS_TEST_TMPDIR/t.ptt"
	for w in "${ways[@]}"; do
		grep -qE "^ +${w#* } +${w#* } spawn_children " <<<"$output"
	done
}

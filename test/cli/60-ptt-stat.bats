#!/usr/bin/env bats
# ptt-stat: counts and times against the program's own measurements; sorting, CSV, pipes.
bats_require_minimum_version 1.5.0
load helpers

@test "ptt-stat --help, --version and usage errors" {
	run -0 ptt-stat --help
	[[ "$output" == *"Usage: ptt-stat"* ]]
	run -0 ptt-stat --version
	run -2 --separate-stderr ptt-stat --sort=size
	[[ "$stderr" == *"--sort: one of wait, hold, count, contended"* ]]
	run -2 --separate-stderr ptt-stat --top=x
	# several inputs are one trace; none of these can be read
	run -2 --separate-stderr ptt-stat a b
	[[ "$stderr" == *"ptt-stat: a: No such file or directory"*"ptt-stat: b: No such file or directory"* ]]
}

@test "acquisitions equal the program's count; wait and hold agree with its clocks" {
	ptt-record -q -o "$BATS_TEST_TMPDIR/t.ptt" -- "$EXAMPLES/contention" -t 4 -n 300 -u 20 -v 2>"$BATS_TEST_TMPDIR/err.txt" >/dev/null
	said() { sed -n "s/^$1 //p" "$BATS_TEST_TMPDIR/err.txt"; }
	run -0 ptt-stat --csv "$BATS_TEST_TMPDIR/t.ptt"
	row=$(echo "$output" | grep ',hot_lock,mutex,')
	IFS=, read -r _ _ _ _ acq cont _ wait _ _ _ _ hold _ <<<"$row"
	[ "$acq" -eq "$(said acquisitions)" ]
	[ "$cont" -gt 0 ]
	# the program's clock reads sit around its calls, ours inside them: our waits are no longer than
	# its own (5 % and 2 ms for the clocks), and shorter by what a preemption between its clock and
	# its call adds, which a loaded machine makes 10-15 % (a quarter allowed: a wait missed shows more)
	awk -v a="$wait" -v b="$(said wait_ns)" 'BEGIN { exit !(a <= 1.05 * b + 2e6 && a >= 0.75 * b - 2e6) }'
	awk -v a="$hold" -v b="$(said hold_ns)" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= 0.05 * b + 2e6) }'
}

@test "a table sorted as asked, by name, in a pipe after a filter" {
	ptt-record -q -o "$BATS_TEST_TMPDIR/p.ptt" -- "$EXAMPLES/prodcons" -n 2000 >/dev/null
	run -0 ptt-stat "$BATS_TEST_TMPDIR/p.ptt"
	[[ "$output" == *"queue_lock"* ]]
	[[ "$output" == *"producer-0"* ]]
	[[ "$output" == *"contention: "* ]]
	run -0 ptt-stat --sort=count --top=1 "$BATS_TEST_TMPDIR/p.ptt"
	[ "$(echo "$output" | sed -n 3p | awk '{print $1}')" = "queue_lock" ]
	n=$(ptt-dump -n "$BATS_TEST_TMPDIR/p.ptt" | wc -l)
	from=$(ptt-dump -n "$BATS_TEST_TMPDIR/p.ptt" | sed -n "$((n / 3))p" | awk '{print $1}')
	to=$(ptt-dump -n "$BATS_TEST_TMPDIR/p.ptt" | sed -n "$((2 * n / 3))p" | awk '{print $1}')
	run -0 bash -c "ptt-dump '$BATS_TEST_TMPDIR/p.ptt' | ptt-filter --from=${from}s --to=${to}s | ptt-stat --csv"
	[[ "$output" == *",queue_lock,mutex,"* ]]
}

@test "rwlocks, semaphores by their sem_open name, spinlocks; damaged text still counted" {
	printf '# ptt-trace 1\n%s\n' \
		'0.000000001 10 11 pthread sem_open sem=0x50 name="/jobs"' \
		'0.000000002 10 11 pthread sem_wait_req sem=0x50' \
		'0.000001002 10 11 pthread sem_wait sem=0x50 ret=0' \
		'0.000001003 10 12 pthread rwlock_wrlock rwlock=0x20 ret=0' \
		'0.000001004 10 11 pthread rwlock_rdlock_req rwlock=0x20' \
		'0.000003004 10 12 pthread rwlock_unlock rwlock=0x20 ret=0' \
		'0.000003005 10 11 pthread rwlock_rdlock rwlock=0x20 ret=0' \
		'garbage' \
		'0.000003006 10 12 pthread spin_lock spin=0x30 ret=0' \
		'0.000003106 10 12 pthread spin_unlock spin=0x30 ret=0' >"$BATS_TEST_TMPDIR/t.txt"
	run -1 --separate-stderr ptt-stat --csv "$BATS_TEST_TMPDIR/t.txt"
	[[ "$stderr" == *"malformed"* ]]
	[[ "$output" == *"0x50,/jobs,sem,10,1,1,100.00,1000,"* ]]
	[[ "$output" == *"0x20,0x20,rwlock,10,2,1,50.00,2001,"*",2001,2001,2001,1,11"* ]]
	[[ "$output" == *"0x30,0x30,spin,10,1,0,0.00,0,0,0,0,0,100,100,100,0,0"* ]]
}

@test "a trace without any sync object gives empty tables, exit 0 (clean under UBSan)" {
	record true
	run -0 --separate-stderr ptt-stat "$BATS_TEST_TMPDIR/t.ptt"
	[ -z "$stderr" ]
	[[ "${lines[0]}" == "LOCKS: "* ]]
	[[ "${lines[1]}" == "OBJECT "* ]]
	[[ "$output" == *"contention: 0.000 ms"* ]]
	run -0 --separate-stderr ptt-stat --csv "$BATS_TEST_TMPDIR/t.ptt"
	[ -z "$stderr" ]
	[[ "${lines[0]}" == "object,name,kind,"* ]]
}

@test "--brief: the contended locks of the full table, most waited-for first, a line each" {
	T="$BATS_TEST_TMPDIR/t.ptt"
	ptt-record -q -o "$T" -- "$EXAMPLES/prodcons" -p 3 -c 3 -n 3000 >/dev/null
	run -0 --separate-stderr ptt-stat --brief --top=2 "$T"
	[ -z "$stderr" ]
	# the same rows from the CSV table: locks (no cond, barrier or semaphore used as a signal), contended > 0, by wait, the first 2
	want=$(ptt-stat --csv --top=0 "$T" | awk -F, 'NR > 1 && $1 == "" { exit } NR > 1 && $18 == "lock" && $6 > 0 { print $8, $2, $3, $6, $5 }' |
		sort -k1,1nr -k2 | head -2 | awk '{ print $2, $3, $4 " of " $5 }')
	got=$(printf '%s\n' "${lines[@]:1}" | grep -v -e '^  (' -e '^waiting for work' -e '^on the critical path' | awk '{ print $1, $2, $3 " of " $5 }')
	[ "$got" = "$want" ]
	# the condition variables, apart; then the lock on the critical path (the one lock of the program)
	[[ "${lines[-2]}" =~ ^waiting\ for\ work\ \(no\ contention\):\ [0-9.]+\ ms\ .*,\ most\ on\ not_(empty|full)\ \(cond\)$ ]]
	# ptt-critical's first row (queue_lock on a quiet machine; on a loaded one the main thread's
	# wake-up after a join can outweigh it): its name, class and share, as ptt-critical prints them
	top=$(ptt-critical "$T" | awk '/^OBJECT/ { getline; print; exit }')
	read -r -a f <<<"$top"
	n=${#f[@]}
	name="${f[*]:0:n-7}"
	kind=" (${f[n-7]})"
	[ "${f[n-7]}" != join ] || kind="" # a join's name says it
	[[ "${lines[-1]}" == "on the critical path: $name$kind ${f[n-5]} % of the run (ptt-critical $T for what to fix first)" ]] ||
		{ echo "brief: ${lines[-1]}"; echo "ptt-critical: $top"; return 1; }
	if [ -z "$want" ]; then
		[ "${lines[0]}" = "no thread waited for a lock" ]
	else
		[[ "${lines[0]}" =~ ^[0-9]+\.[0-9]{3}\ ms\ waited\ for\ locks\ over\ [0-9]+\.[0-9]{3}\ ms\;\ most\ contended:$ ]]
	fi
}

# What a person wants first: the locks others lost time on, not the idle waits for work.
@test "locks (mutual exclusion) apart from waiting for work; a semaphore is a lock only when used as one" {
	printf '# ptt-trace 1\n%s\n' \
		'0.000000001 10 10 pthread process_begin ppid=1 cmd="t"' \
		'0.000000002 10 10 pthread sem_init sem=0x50 value=0 ret=0' \
		'0.000000003 10 10 pthread sem_init sem=0x60 value=1 ret=0' \
		'0.000000004 10 11 pthread thread_begin handle=0x1 start=0x0 parent=0' \
		'0.000000005 10 12 pthread thread_begin handle=0x2 start=0x0 parent=0' \
		'0.000000010 10 11 pthread sem_wait_req sem=0x50' \
		'0.000000010 10 12 pthread mutex_lock mutex=0x20 ret=0' \
		'0.000000011 10 10 pthread mutex_lock_req mutex=0x20' \
		'0.000002011 10 12 pthread mutex_unlock mutex=0x20 ret=0' \
		'0.000002012 10 10 pthread mutex_lock mutex=0x20 ret=0' \
		'0.000002013 10 10 pthread mutex_unlock mutex=0x20 ret=0' \
		'0.000002020 10 12 pthread sem_wait sem=0x60 ret=0' \
		'0.000002021 10 10 pthread sem_wait_req sem=0x60' \
		'0.000003021 10 12 pthread sem_post sem=0x60 ret=0' \
		'0.000003022 10 10 pthread sem_wait sem=0x60 ret=0' \
		'0.000003023 10 10 pthread sem_post sem=0x60 ret=0' \
		'0.000003024 10 12 pthread cond_wait_req cond=0x30 mutex=0x40' \
		'0.000900000 10 10 pthread cond_signal cond=0x30 ret=0' \
		'0.000900001 10 12 pthread cond_wait cond=0x30 mutex=0x40 ret=0' \
		'0.000900002 10 12 pthread mutex_unlock mutex=0x40 ret=0' \
		'0.001000000 10 10 pthread sem_post sem=0x50 ret=0' \
		'0.001000001 10 11 pthread sem_wait sem=0x50 ret=0' >"$BATS_TEST_TMPDIR/t.txt"
	# --brief (ptt-record's summary): the mutex and the semaphore used as a lock, by time lost;
	# the semaphore used as a signal (1 ms) and the condition variable only on the last line
	run -0 --separate-stderr ptt-stat --brief "$BATS_TEST_TMPDIR/t.txt"
	[ -z "$stderr" ]
	[ "${#lines[@]}" -eq 5 ]
	[ "${lines[0]}" = "0.003 ms waited for locks over 1.000 ms; most contended:" ]
	[[ "${lines[1]}" =~ ^\ \ 0x20\ +mutex\ +1\ of\ 2\ acquisitions\ waited,\ 0.002\ ms ]]
	[[ "${lines[2]}" =~ ^\ \ 0x60\ +sem\ +1\ of\ 2\ acquisitions\ waited,\ 0.001\ ms ]]
	[ "${lines[3]}" = "waiting for work (no contention): 1.897 ms in condition variables, semaphores used as signals and barriers, most on 0x50 (sem)" ]
	# the path ends where thread 10 does (1 ms); 10 waited for 0x20 until 12 released it: the path runs
	# through 12's hold of it (2.001 us), then 12's of 0x60 (1.001 us), then 10: 0x20 has 0.2 % of the run
	[ "${lines[4]}" = "on the critical path: 0x20 (mutex) 0.2 % of the run, the work done holding it: never waited for on the path (ptt-critical $BATS_TEST_TMPDIR/t.txt for what to fix first)" ]
	# the full table: two sections, the locks first; CSV: the use of each object
	run -0 --separate-stderr ptt-stat -S 0 "$BATS_TEST_TMPDIR/t.txt"
	[[ "${lines[0]}" == "LOCKS: mutual exclusion (mutexes, rwlocks, spinlocks, semaphores used as locks), most time others lost waiting first" ]]
	[ "$(sed -n '3,5p' <<<"$output" | awk '{ print $1 }' | tr '\n' ' ')" = "0x20 0x60 0x40 " ]
	[[ "${lines[5]}" == "WAITING FOR WORK: condition variables, semaphores used as signals, barriers (idle, not contention), most time waited first" ]]
	[ "$(sed -n '9,10p' <<<"$output" | awk '{ print $1 }' | tr '\n' ' ')" = "0x50 0x30 " ]
	[[ "$output" == *"contention: 0.003 ms waited for locks (mutual exclusion), summed over threads, in 1.000 ms of trace"* ]]
	[[ "$output" == *"waiting for work: 1.897 ms in condition variables, semaphores used as signals and barriers, 0.000 ms in joins"* ]]
	run -0 --separate-stderr ptt-stat --csv -S 0 "$BATS_TEST_TMPDIR/t.txt"
	[ "$(awk -F, 'NR > 1 && $1 == "" { exit } NR > 1 { print $1, $18 }' <<<"$output" | tr '\n' ' ')" = "0x20 lock 0x60 lock 0x40 lock 0x50 work 0x30 work " ]
	# per thread: the main thread's waits for the semaphore used as a lock (SEMLOCK), thread 11's for the signal (SEM)
	[ "$(awk -F, '/^pid,tid,/ { s = 1; next } s && $2 == 10 { print $10, $13 }' <<<"$output")" = "1001 1001" ]
	[ "$(awk -F, '/^pid,tid,/ { s = 1; next } s && $2 == 11 { print $10, $13 }' <<<"$output")" = "999991 0" ]
}

# two_sites: fast_path takes shared_lock 3 times for each slow_path (two_sites.c:17 and :24).
@test "ptt-stat names each object's call sites with file:line, their acquisitions, waits and holds adding up" {
	ptt-record -q -o "$BATS_TEST_TMPDIR/t.ptt" -- "$EXAMPLES/two_sites" -n 500 >/dev/null
	run -0 --separate-stderr ptt-stat "$BATS_TEST_TMPDIR/t.ptt"
	[ "$stderr" = "" ]
	grep -qE '^  site [12] +3000 .* fast_path\+0x[0-9a-f]+ \(two_sites\) at two_sites\.c:17$' <<<"$output"
	grep -qE '^  site [12] +1000 .* slow_path\+0x[0-9a-f]+ \(two_sites\) at two_sites\.c:24$' <<<"$output"
	run -0 --separate-stderr ptt-stat --csv "$BATS_TEST_TMPDIR/t.ptt"
	[ "$stderr" = "" ]
	# the sites table: each site's acquisitions; their waits and holds sum to the object's
	sites=$(awk -F, '/^object,name,pid,rank,site,/ { s = 1; next } s && $2 == "shared_lock" { print $7, $8 }' <<<"$output" | sort)
	[ "$sites" = "fast_path 3000
slow_path 1000" ]
	obj=$(awk -F, 'NR > 1 && $2 == "shared_lock" { print $5, $6, $8, $13; exit }' <<<"$output")
	sum=$(awk -F, '/^object,name,pid,rank,site,/ { s = 1; next } s && $2 == "shared_lock" { a += $8; c += $9; w += $10; h += $14 }
		END { print a, c, w, h }' <<<"$output")
	[ "$obj" = "$sum" ]
	# -S 1: the one site with most waits; -S 0: no site rows, no sites table
	run -0 ptt-stat -S 1 "$BATS_TEST_TMPDIR/t.ptt"
	[ "$(grep -c '^  site ' <<<"$output")" -eq 1 ]
	grep -q '^ *(1 more sites; ' <<<"$output"
	run -0 ptt-stat --sites=0 --csv "$BATS_TEST_TMPDIR/t.ptt"
	[ "$(grep -c '^object,name,pid,rank,site,' <<<"$output")" -eq 0 ]
	run -2 --separate-stderr ptt-stat --sites=x "$BATS_TEST_TMPDIR/t.ptt"
	[[ "$stderr" == "ptt-stat: --sites: not a count: 'x'"* ]]
}

@test "ptt-stat on a stripped program: sites read module+0x..., never a bare address" {
	strip -o "$BATS_TEST_TMPDIR/two_sites_stripped" "$EXAMPLES/two_sites"
	ptt-record -q -o "$BATS_TEST_TMPDIR/s.ptt" -- "$BATS_TEST_TMPDIR/two_sites_stripped" -n 10 >/dev/null
	run -0 --separate-stderr ptt-stat "$BATS_TEST_TMPDIR/s.ptt"
	[ "$stderr" = "" ]
	[ "$(grep -cE '^  site [12] +(60|20) .* two_sites_stripped\+0x[0-9a-f]+$' <<<"$output")" -eq 2 ]
	# and it says why, and what would name them, once
	[ "$(grep -c '^names: two_sites_stripped has no symbol table and no debug information here' <<<"$output")" -eq 1 ]
	run -1 grep -E '^  site .* 0x[0-9a-f]+$' <<<"$(grep -v 'two_sites_stripped+0x' <<<"$output")"
	# a stripped program whose locks are taken in a stripped library too: both named, the program first
	# (the library's sites met first: the line named the library only, "and one other file")
	d=$BATS_TEST_TMPDIR
	printf '#include <pthread.h>\nstatic pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;\nstatic int n;\n__attribute__((noinline)) static void take(void) { pthread_mutex_lock(&m); n++; pthread_mutex_unlock(&m); }\nvoid lib_take(void) { take(); __asm__ volatile(""); }\n' >"$d/lk.c"
	printf '#include <pthread.h>\nvoid lib_take(void);\nstatic pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;\nstatic void *w(void *a) { for (int i = 0; i < 1000; i++) { lib_take(); pthread_mutex_lock(&m); pthread_mutex_unlock(&m); } return a; }\nint main(void) { pthread_t t[2]; for (int i = 0; i < 2; i++) pthread_create(&t[i], 0, w, 0); for (int i = 0; i < 2; i++) pthread_join(t[i], 0); return 0; }\n' >"$d/lkmain.c"
	cc -O1 -shared -fPIC -s -o "$d/liblk.so" "$d/lk.c" -pthread
	cc -s -o "$d/lkmain" "$d/lkmain.c" -L"$d" -llk -Wl,-rpath,"$d" -pthread
	ptt-record -q -o "$d/lk.ptt" -- "$d/lkmain" >/dev/null
	run -0 --separate-stderr ptt-stat "$d/lk.ptt"
	[ "$(grep '^names:' <<<"$output")" = "names: lkmain and liblk.so have no symbol table and no debug information here, so their sites read" ]
	# a program with its symbols says nothing of the kind
	ptt-record -q -o "$BATS_TEST_TMPDIR/n.ptt" -- "$EXAMPLES/two_sites" -n 10 >/dev/null
	run -0 --separate-stderr ptt-stat "$BATS_TEST_TMPDIR/n.ptt"
	run -1 grep -q '^names:' <<<"$output"
}

# A wait its process's exit cut counts as contended, as one a window's end cuts.
@test "a wait open when its process exits counts as in a window that ends before the exit" {
	printf '# ptt-trace 1\n%s\n' \
		'0.000000001 10 10 pthread process_begin ppid=1 cmd="t"' \
		'0.000000002 10 11 pthread thread_begin handle=0x1 start=0x0 parent=0' \
		'0.000000003 10 12 pthread thread_begin handle=0x2 start=0x0 parent=0' \
		'0.000000010 10 11 pthread mutex_lock mutex=0x20 ret=0' \
		'0.000000020 10 12 pthread mutex_lock_req mutex=0x20' \
		'0.000001000 10 10 pthread mutex_lock mutex=0x30 ret=0' \
		'0.000001001 10 10 pthread mutex_unlock mutex=0x30 ret=0' \
		'0.000002020 10 10 pthread process_exit status=0' \
		'0.000002021 10 10 pthread thread_end retval=0x0 how=3' >"$BATS_TEST_TMPDIR/t.txt"
	row() { ptt-stat --csv -S 0 "$1" | awk -F, '$1 == "0x20" { print $5, $6, $8 }'; }
	# acquisitions, contended, wait: the wait of thread 12, up to the exit (a call made: among the
	# acquisitions, so that contended never exceeds them)
	[ "$(row "$BATS_TEST_TMPDIR/t.txt")" = "2 1 2000" ]
	run -0 --separate-stderr ptt-stat "$BATS_TEST_TMPDIR/t.txt"
	[[ "$output" == *"1 wait was still open at the end of the trace (or when its thread ended)"* ]]
	# a window that ends at 1.5 us: the same wait, cut there
	ptt-filter --from=0ns --to=1500ns "$BATS_TEST_TMPDIR/t.txt" >"$BATS_TEST_TMPDIR/w.txt"
	[ "$(row "$BATS_TEST_TMPDIR/w.txt")" = "2 1 1480" ]
}

@test "objects in use while events were lost are marked *, and the loss said: how many, which thread, when" {
	cat >"$BATS_TEST_TMPDIR/lost.txt" <<'Y'
# ptt-trace 1
0.000000001 10 11 pthread mutex_lock mutex=0x10 ret=0
0.000000003 10 11 pthread mutex_unlock mutex=0x10 ret=0
0.000000005 10 12 pthread mutex_lock mutex=0x20 ret=0
0.000000006 10 12 pthread mutex_unlock mutex=0x20 ret=0
0.000000009 10 99 recorder rec_lost stream=11 count=3 from_ns=2 to_ns=2
Y
	run -0 --separate-stderr ptt-stat -S 0 "$BATS_TEST_TMPDIR/lost.txt"
	[ "$stderr" = "" ]
	grep -q '^0x10\* ' <<<"$output"
	grep -q '^0x20 ' <<<"$output"
	[[ "$output" == *"loss: 3 events known lost, in 1 stretch where findings cannot be verified:"$'\n'"  thread 11, 0.000000002 s to 0.000000002 s: 3 events, lost by the recorder"$'\n'"1 of the objects shown (marked *) were in use while events of their threads were lost: their figures may be short"* ]]
	run -0 ptt-stat -b "$BATS_TEST_TMPDIR/lost.txt"
	[ "${lines[-1]}" = "  3 events were lost, in 1 stretch (ptt-stat tells where); 0 of these figures (marked *) cover them" ]
	grep -v rec_lost "$BATS_TEST_TMPDIR/lost.txt" >"$BATS_TEST_TMPDIR/whole.txt"
	run -0 ptt-stat -S 0 "$BATS_TEST_TMPDIR/whole.txt"
	[[ "$output" != *"*"* ]]
	[[ "$output" != *"loss:"* ]]
}

@test "a hold or a wait whose thread lost events in it is not counted: figures get short, never long" {
	# 11 takes 0x10 at 1 us; its unlock (and more) at 3-4 us is lost (-d), the note comes later, as
	# the recorder's pass does; 11 takes 0x10 again at 6 us and frees it at 7 us, and waits for 0x20
	# from 2 us (its outcome lost too); 12 holds 0x20 from 0 to 8 us, 0x30 taken at 9 us by 11
	cat >"$BATS_TEST_TMPDIR/lost.txt" <<'Y'
# ptt-trace 1
0.000000000 10 12 pthread mutex_lock mutex=0x20 ret=0
0.000001000 10 11 pthread mutex_lock mutex=0x10 ret=0
0.000002000 10 11 pthread mutex_lock_req mutex=0x20
0.000006000 10 11 pthread mutex_lock mutex=0x10 ret=0
0.000007000 10 11 pthread mutex_unlock mutex=0x10 ret=0
0.000008000 10 12 pthread mutex_unlock mutex=0x20 ret=0
0.000009000 10 11 pthread mutex_lock mutex=0x30 ret=0
0.000010000 10 99 recorder rec_lost stream=11 count=5 from_ns=3000 to_ns=4000
0.000011000 10 11 pthread mutex_unlock mutex=0x30 ret=0
Y
	run -0 --separate-stderr ptt-stat --csv -S 0 "$BATS_TEST_TMPDIR/lost.txt"
	[ "$stderr" = "" ]
	# object, acquisitions, contended, wait (ns), hold (ns): 0x10 held 1 us (6 to 7), not 6 us (1 to 7);
	# 0x20's wait by 11 is not counted; 0x30, taken after the stretch, is held whole (9 to 11)
	row() { awk -F, -v o="$1" '$1 == o || $1 == o "*" { print $5, $6, $8, $13 }' <<<"$output"; }
	[ "$(row 0x10)" = "2 0 0 1000" ] || { echo "$output"; return 1; }
	[ "$(row 0x20)" = "1 0 0 8000" ] || { echo "$output"; return 1; }
	[ "$(row 0x30)" = "1 0 0 2000" ] || { echo "$output"; return 1; }
	# without the note, 11's wait for 0x20 runs on to the end of the trace, 9 us, and is counted
	grep -v rec_lost "$BATS_TEST_TMPDIR/lost.txt" >"$BATS_TEST_TMPDIR/whole.txt"
	run -0 --separate-stderr ptt-stat --csv -S 0 "$BATS_TEST_TMPDIR/whole.txt"
	[ "$(row 0x20)" = "2 1 9000 8000" ] || { echo "$output"; return 1; }
	# the note where ptt-record puts it, at the stretch's start: the same figures, and 11's taking
	# 0x10 again ends its lost hold (its unlock was lost) rather than nest in it: no violation
	{
		echo '# ptt-trace 1'
		echo '0.000000000 10 10 pthread process_begin ppid=1 cmd="x"'
		for t in 11 12; do
			echo "0.000000000 10 10 pthread thread_create handle=0x$t start=0x2 child=$t ret=0 site=0x0"
			echo "0.000000000 10 $t pthread thread_begin handle=0x$t start=0x2 parent=10"
		done
		grep -v rec_lost "$BATS_TEST_TMPDIR/lost.txt" | sed -n '2,4p'
		echo '0.000003000 10 99 recorder rec_lost stream=11 count=5 from_ns=3000 to_ns=4000'
		grep -v rec_lost "$BATS_TEST_TMPDIR/lost.txt" | sed -n '5,$p'
	} >"$BATS_TEST_TMPDIR/inplace.txt"
	run -0 --separate-stderr ptt-stat --csv -S 0 "$BATS_TEST_TMPDIR/inplace.txt"
	[ "$(row 0x10)" = "2 0 0 1000" ] || { echo "$output"; return 1; }
	[ "$(row 0x20)" = "1 0 0 8000" ] || { echo "$output"; return 1; }
	[ "$(row 0x30)" = "1 0 0 2000" ] || { echo "$output"; return 1; }
	run -0 --separate-stderr ptt-dump --check "$BATS_TEST_TMPDIR/inplace.txt"
	[ "$output" = "$BATS_TEST_TMPDIR/inplace.txt: 14 events, 0 damaged, 5 lost, 0 out of order, 0 violations: ok" ]
}

@test "ptt-stat says what processor time ptt-record took beside the program; a trace without it says nothing" {
	ptt-record -q -o "$BATS_TEST_TMPDIR/t.ptt" -- "$EXAMPLES/contention" -t 2 -n 2000 >/dev/null
	cpu=$(ptt-dump "$BATS_TEST_TMPDIR/t.ptt" | sed -n 's/^# recorder_cpu_ns //p')
	[ -n "$cpu" ] && [ "$cpu" -gt 0 ]
	[ "$(ptt-dump "$BATS_TEST_TMPDIR/t.ptt" | sed -n 's/^# cpus //p')" = "$(nproc)" ]
	run -0 --separate-stderr ptt-stat "$BATS_TEST_TMPDIR/t.ptt"
	[ "$stderr" = "" ]
	line=$(grep '^recorder: ptt-record took ' <<<"$output")
	[ "$line" = "recorder: ptt-record took $(awk -v c="$cpu" 'BEGIN { printf "%.1f", c / 1e6 }') ms of processor time beside the program ($(sed -n 's/.*(\([0-9.]*\) % of .*/\1/p' <<<"$line") % of $(nproc) processor$([ "$(nproc)" -gt 1 ] && echo s) over the trace):" ]
	# the text form of the same trace keeps it; a made-up trace has none
	ptt-dump "$BATS_TEST_TMPDIR/t.ptt" >"$BATS_TEST_TMPDIR/t.txt"
	run -0 --separate-stderr ptt-stat "$BATS_TEST_TMPDIR/t.txt"
	grep -q '^recorder: ptt-record took ' <<<"$output"
	trace bare '0.000000002 10 10 pthread mutex_lock mutex=0x10 ret=0'
	run -0 --separate-stderr ptt-stat "$BATS_TEST_TMPDIR/bare.txt"
	run -1 grep -q '^recorder:' <<<"$output"
}

@test "ptt-stat tells how much of the locks' hold time is ptt's own recording, from the cost the trace states" {
	# A held by 11 from 1 us to 20 us around B (1 us..12 us): 4 events in A's hold, 2 in B's;
	# 12 asks for A at 3 us and holds it from 20 to 21 us: 2 more; at 2 us per event:
	# 8 x 2 = 16 us of ptt's own in 19 + 10 + 1 + 3 x 2 (each release's record) = 36 us held
	trace obs \
		'0.000001000 10 11 pthread mutex_lock mutex=0xa0 ret=0' \
		'0.000002000 10 11 pthread mutex_lock mutex=0xb0 ret=0' \
		'0.000003000 10 12 pthread mutex_lock_req mutex=0xa0' \
		'0.000012000 10 11 pthread mutex_unlock mutex=0xb0 ret=0' \
		'0.000020000 10 11 pthread mutex_unlock mutex=0xa0 ret=0' \
		'0.000020000 10 12 pthread mutex_lock mutex=0xa0 ret=0' \
		'0.000021000 10 12 pthread mutex_unlock mutex=0xa0 ret=0'
	run -0 --separate-stderr ptt-stat "$BATS_TEST_TMPDIR/obs.txt"
	[ "$stderr" = "" ]
	[[ "$output" != *"observer:"* ]] # no cost stated: nothing said
	sed '1a # trace_path_ps 2000000' "$BATS_TEST_TMPDIR/obs.txt" >"$BATS_TEST_TMPDIR/obs2.txt"
	run -0 --separate-stderr ptt-stat "$BATS_TEST_TMPDIR/obs2.txt"
	[ "$stderr" = "" ]
	[ "$(grep -A2 '^observer:' <<<"$output")" = "observer: ptt's trace path took 2000.0 ns per event (measured at the run's start); inside the 3 holds of locks
their holders recorded 8 events: 0.016 ms of the 0.036 ms held (44 %) is ptt's own, so untraced these locks are
held shorter and waited for less" ]
	run -0 --separate-stderr ptt-stat --brief "$BATS_TEST_TMPDIR/obs2.txt"
	[ "$stderr" = "" ]
	[ "$(grep '^note:' <<<"$output")" = "note: 44 % of the time these locks were held is ptt's own recording (ptt-stat: observer): untraced they are held shorter and waited for less" ]
}

@test "ptt-record measures its trace path's cost; every hold of a recorded lock counts its holder's own events" {
	ptt-record -q -o "$BATS_TEST_TMPDIR/t.ptt" -- "$EXAMPLES/contention" -t 2 -n 2000 >/dev/null
	ps=$(ptt-dump "$BATS_TEST_TMPDIR/t.ptt" | sed -n 's/^# trace_path_ps //p')
	[ -n "$ps" ] && [ "$ps" -gt 1000 ] && [ "$ps" -lt 10000000 ] # more than 1 ns, less than 10 us per event
	holds=$(ptt-stat -c -n 0 -S 0 "$BATS_TEST_TMPDIR/t.ptt" | awk -F, '$18 == "lock" { n += $5 } END { print n }')
	[ "$holds" -gt 0 ]
	run -0 --separate-stderr ptt-stat "$BATS_TEST_TMPDIR/t.ptt"
	[ "$stderr" = "" ]
	# contention's workers take one lock and make no traced call inside it: two events per hold
	[[ "$output" == *"observer: ptt's trace path took $(awk -v p="$ps" 'BEGIN { printf "%.1f", p / 1e3 }') ns per event (measured at the run's start); inside the $holds holds of locks
their holders recorded $((2 * holds)) events: "* ]]
}

@test "waits open where a rotated part ends or a window ends are not said to be blocked for ever" {
	recs=('0.000001000 10 11 pthread mutex_lock mutex=0xa0 ret=0' '0.000002000 10 12 pthread mutex_lock_req mutex=0xa0')
	trace whole "${recs[@]}"
	run -0 --separate-stderr ptt-stat "$BATS_TEST_TMPDIR/whole.txt"
	[ "$stderr" = "" ]
	[[ "$output" == *$'\n'"1 wait was still open at the end of the trace (or when its thread ended), counted as contended up to then (threads blocked for ever? see ptt-deadlock)"* ]]
	# a part of a rotated recording, continued in another file (its "continued" line)
	sed '1a # continued r.ptt.0002' "$BATS_TEST_TMPDIR/whole.txt" >"$BATS_TEST_TMPDIR/part.txt"
	run -0 --separate-stderr ptt-stat "$BATS_TEST_TMPDIR/part.txt"
	[ "$stderr" = "" ]
	[[ "$output" == *$'\n'"1 wait was still open where this part of a rotated recording ends (it continues in r.ptt.0002), counted as contended up to then"* ]]
	run ! grep -q 'blocked for ever' <<<"$output"
	run -0 --separate-stderr ptt-stat --brief "$BATS_TEST_TMPDIR/part.txt"
	[[ "$output" == *$'\n'"1 wait was still open where this part of a rotated recording ends (it continues in r.ptt.0002)"* ]]
	# a window that ends before the trace does
	trace longer "${recs[@]}" '0.000009000 10 11 pthread mutex_unlock mutex=0xa0 ret=0' '0.000009000 10 12 pthread mutex_lock mutex=0xa0 ret=0'
	ptt-filter --to=5us "$BATS_TEST_TMPDIR/longer.txt" >"$BATS_TEST_TMPDIR/w.ptt"
	run -0 --separate-stderr ptt-stat "$BATS_TEST_TMPDIR/w.ptt"
	[ "$stderr" = "" ]
	[[ "$output" == *$'\n'"1 wait was still open at the window's end, counted as contended up to then"* ]]
}

@test "waits open at the end: idle workers are said apart from lock waits, after the list of contended locks" {
	# threads 11-13 wait on the pool's condition at the end (a normal shutdown); 14 is blocked on a mutex 11 holds
	trace open \
		'0.000000002 10 11 pthread thread_begin handle=0x1 start=0x0 parent=0' \
		'0.000000003 10 12 pthread thread_begin handle=0x2 start=0x0 parent=0' \
		'0.000000004 10 13 pthread thread_begin handle=0x3 start=0x0 parent=0' \
		'0.000000005 10 14 pthread thread_begin handle=0x4 start=0x0 parent=0' \
		'0.000000010 10 11 pthread mutex_lock mutex=0x20 ret=0' \
		'0.000000011 10 14 pthread mutex_lock_req mutex=0x20' \
		'0.000000012 10 12 pthread mutex_lock mutex=0x40 ret=0' \
		'0.000000013 10 12 pthread cond_wait_req cond=0x30 mutex=0x40' \
		'0.000000014 10 13 pthread mutex_lock mutex=0x40 ret=0' \
		'0.000000015 10 13 pthread cond_wait_req cond=0x30 mutex=0x40' \
		'0.000000016 10 10 pthread mutex_lock_req mutex=0x50' \
		'0.000000017 10 10 pthread mutex_lock mutex=0x50 ret=0' \
		'0.000000018 10 10 pthread mutex_unlock mutex=0x50 ret=0' \
		'0.000001000 10 10 pthread process_exit status=0'
	run -0 --separate-stderr ptt-stat --brief "$BATS_TEST_TMPDIR/open.txt"
	[ "$stderr" = "" ]
	[[ "${lines[0]}" == *"ms waited for locks over "*" ms; most contended:" ]]
	[[ "${lines[1]}" == "  0x20 "* ]]
	[[ "${lines[2]}" == "  0x50 "* ]]
	[ "${lines[3]}" = "1 wait was still open at the end (threads blocked for ever? see ptt-deadlock)" ]
	[ "${lines[4]}" = "2 threads were waiting for work when the program ended (condition variables, semaphores used as signals, barriers: idle, not blocked)" ]
	# only idle workers: nothing is said to be blocked for ever
	trace idle \
		'0.000000003 10 12 pthread thread_begin handle=0x2 start=0x0 parent=0' \
		'0.000000012 10 12 pthread mutex_lock mutex=0x40 ret=0' \
		'0.000000013 10 12 pthread cond_wait_req cond=0x30 mutex=0x40' \
		'0.000001000 10 10 pthread process_exit status=0'
	run -0 --separate-stderr ptt-stat --brief "$BATS_TEST_TMPDIR/idle.txt"
	[[ "$output" == *$'\n'"1 thread was waiting for work when the program ended (condition variables, semaphores used as signals, barriers: idle, not blocked)"* ]]
	[[ "$output" != *"blocked for ever"* ]]
	run -0 --separate-stderr ptt-stat "$BATS_TEST_TMPDIR/idle.txt"
	[[ "$output" == *$'\n'"1 thread was waiting for work when the program ended (condition variables, semaphores used as signals, barriers: idle, not blocked; counted up to then)"* ]]
	[[ "$output" != *"blocked for ever"* ]]
}

@test "ptt-stat --from/--to: each wait, hold and life for its part inside the window, ptt-critical's rule" {
	# 11, 12, 13 take 0x100 in turn: 11 holds 100-150; 12 waits 110-150, holds 150-200; 13 waits 160-200,
	# holds 200-250; 11 waits 210-250. Window 150-220 us: 12's wait ends at its start (0 inside), 13's
	# 40 us, 11's 10 us still open at 220 (counted up to it); holds 11's 0 inside, 12's 50, 13's open at
	# the end (not counted); main (10) ended at 9 us: no row; every other thread lives 70 us
	cat >"$BATS_TEST_TMPDIR/r.txt" <<-'E'
	# ptt-trace 1
	0.000000000 10 10 pthread process_begin ppid=1 cmd="x"
	0.000001000 10 10 pthread thread_create handle=0x11 start=0x2 child=11 ret=0
	0.000002000 10 11 pthread thread_begin handle=0x11 start=0x2 parent=10
	0.000003000 10 10 pthread thread_create handle=0x12 start=0x2 child=12 ret=0
	0.000004000 10 12 pthread thread_begin handle=0x12 start=0x2 parent=10
	0.000005000 10 10 pthread thread_create handle=0x13 start=0x2 child=13 ret=0
	0.000006000 10 13 pthread thread_begin handle=0x13 start=0x2 parent=10
	0.000009000 10 10 pthread thread_end retval=0x0 how=0
	0.000100000 10 11 pthread mutex_lock mutex=0x100 ret=0
	0.000110000 10 12 pthread mutex_lock_req mutex=0x100
	0.000150000 10 11 pthread mutex_unlock mutex=0x100 ret=0
	0.000150000 10 12 pthread mutex_lock mutex=0x100 ret=0
	0.000160000 10 13 pthread mutex_lock_req mutex=0x100
	0.000200000 10 12 pthread mutex_unlock mutex=0x100 ret=0
	0.000200000 10 13 pthread mutex_lock mutex=0x100 ret=0
	0.000210000 10 11 pthread mutex_lock_req mutex=0x100
	0.000250000 10 13 pthread mutex_unlock mutex=0x100 ret=0
	0.000250000 10 11 pthread mutex_lock mutex=0x100 ret=0
	0.000260000 10 11 pthread mutex_unlock mutex=0x100 ret=0
	0.001000000 10 11 pthread thread_end retval=0x0 how=0
	0.001000000 10 12 pthread thread_end retval=0x0 how=0
	0.001000000 10 13 pthread thread_end retval=0x0 how=0
	E
	csvrow() { awk -F, '$1 == "0x100" { print $5, $6, $8, $13 }' <<<"$output"; }
	life() { awk -F, -v t="$1" '$2 == t { print $4 }' <<<"$output"; }
	run -0 --separate-stderr ptt-stat --csv "$BATS_TEST_TMPDIR/r.txt"
	[ "$(csvrow)" = "4 3 120000 160000" ]
	run -0 --separate-stderr ptt-stat --csv --from=150us --to=220us "$BATS_TEST_TMPDIR/r.txt"
	[ -z "$stderr" ]
	# acquired 3 (12 at 150, 13 at 200, 11's open wait), contended 3, waited 0 + 40 + 10 us, held 0 + 50 us
	[ "$(csvrow)" = "3 3 50000 50000" ]
	[ -z "$(life 10)" ]
	[ "$(life 11) $(life 12) $(life 13)" = "70000 70000 70000" ]
	run -0 --separate-stderr ptt-stat --from=150us --to=220us "$BATS_TEST_TMPDIR/r.txt"
	[[ "$output" == *$'\ncontention: 0.050 ms waited for locks (mutual exclusion), summed over threads, in 0.070 ms of trace\n'* ]]
	[[ "$output" == *$'\n1 wait was still open at the window\'s end (--to), counted as contended up to then'* ]]
	# a window over the whole trace counts what no window does
	run -0 --separate-stderr ptt-stat --csv --from=1ns --to=1s "$BATS_TEST_TMPDIR/r.txt"
	[ "$(csvrow)" = "4 3 120000 160000" ]
	# outside the trace: status 1; the wrong way round: 2
	run -1 --separate-stderr ptt-stat --from=2ms "$BATS_TEST_TMPDIR/r.txt"
	[ -z "$output" ]
	[ "$stderr" = "ptt-stat: the window starts after the trace ends (1.000 ms)" ]
	run -2 --separate-stderr ptt-stat --from=2ms --to=1ms "$BATS_TEST_TMPDIR/r.txt"
	[ -z "$output" ]
	[[ "$stderr" == "ptt-stat: --from must come before --to"* ]]
	run -2 --separate-stderr ptt-stat --from=soon "$BATS_TEST_TMPDIR/r.txt"
	[[ "$stderr" == "ptt-stat: --from: not a time"* ]]
}

@test "ptt-stat: a condition waited on by a thread that works is told as not idle; an idle worker's is not" {
	# 11 works (waits 30 us of its 990) on 0x300 until 12 signals it; 12 waits on 0x400 from 10 to 990 us
	# (idle: 20 us outside waits) until 11 signals it; both are in WAITING FOR WORK by their kind
	cat >"$BATS_TEST_TMPDIR/c.txt" <<-'E'
	# ptt-trace 1
	0.000000000 10 10 pthread process_begin ppid=1 cmd="x"
	0.000001000 10 10 pthread thread_create handle=0x11 start=0x2 child=11 ret=0
	0.000002000 10 11 pthread thread_begin handle=0x11 start=0x2 parent=10
	0.000003000 10 10 pthread thread_create handle=0x12 start=0x2 child=12 ret=0
	0.000004000 10 12 pthread thread_begin handle=0x12 start=0x2 parent=10
	0.000005000 10 10 pthread thread_end retval=0x0 how=0
	0.000009000 10 12 pthread mutex_lock mutex=0x200 ret=0
	0.000010000 10 12 pthread cond_wait_req cond=0x400 mutex=0x200
	0.000099000 10 11 pthread mutex_lock mutex=0x100 ret=0
	0.000100000 10 11 pthread cond_wait_req cond=0x300 mutex=0x100
	0.000130000 10 11 pthread cond_wait cond=0x300 mutex=0x100 ret=0
	0.000131000 10 11 pthread mutex_unlock mutex=0x100 ret=0
	0.000990000 10 11 pthread cond_signal cond=0x400 ret=0
	0.000990000 10 12 pthread cond_wait cond=0x400 mutex=0x200 ret=0
	0.000991000 10 12 pthread mutex_unlock mutex=0x200 ret=0
	0.000992000 10 11 pthread thread_end retval=0x0 how=0
	0.000992000 10 12 pthread thread_end retval=0x0 how=0
	E
	run -0 --separate-stderr ptt-stat "$BATS_TEST_TMPDIR/c.txt"
	[ -z "$stderr" ]
	[[ "$output" == *$'\nnot idle: 1 of the objects of WAITING FOR WORK (1 wait, 0.030 ms) was waited on mostly by\n'* ]]
	[[ "$output" == *$'whose:\n  0x300: 1 wait, 0.030 ms'* ]]
	[[ "$output" != *$'\n  0x400: '* ]]
	# without the working thread's wait, no such line
	grep -v 'cond=0x300' "$BATS_TEST_TMPDIR/c.txt" >"$BATS_TEST_TMPDIR/i.txt"
	run -0 --separate-stderr ptt-stat "$BATS_TEST_TMPDIR/i.txt"
	[[ "$output" != *"not idle:"* ]]
}

@test "an object taken at more than 64 call sites: the rest in one 'other sites' row, at once (it looped for ever)" {
	local t="$BATS_TEST_TMPDIR/sites.txt"
	{
		printf '# ptt-trace 1\n# clock ns\n# clock_hz 1000000000\n# start_ticks 0\n'
		echo '0.000001000 100 100 pthread process_begin ppid=1 cmd="sites"'
		echo '0.000001100 100 100 pthread thread_begin handle=0x1 start=0x0 parent=0'
		awk 'BEGIN { for (i = 0; i < 100; i++) printf "0.%09d 100 100 pthread mutex_lock mutex=0x10 ret=0 site=0x%x\n0.%09d 100 100 pthread mutex_unlock mutex=0x10 ret=0\n", 2000 + 2 * i, 4096 + 16 * i, 2001 + 2 * i }'
		echo '0.000009000 100 100 pthread process_exit status=0'
		echo '0.000009100 100 100 pthread thread_end retval=0x0 how=3'
	} >"$t"
	run -0 --separate-stderr timeout 60 ptt-stat --top=0 -S 64 "$t"
	[ -z "$stderr" ]
	# 63 sites of their own and one row for the 37 others: 100 acquisitions in all
	[ "$(printf '%s\n' "${lines[@]}" | awk '/^  site / { n++; s += $3 } END { print n, s }')" = "64 100" ]
	[ "$(printf '%s\n' "${lines[@]}" | awk '/^  site .*\(other sites\)$/ { print $3 }')" = 37 ]
}

#!/usr/bin/env bats
# Locks taken through a library's or the program's own functions are named at the program's own
# function and line: GLib's GMutex and GCond (futexes of its own, in a library stripped to its
# exported symbols), a wrapper of the program's found from the trace, C++ headers inlined into the
# program; and the rows of two processes never read the same.
bats_require_minimum_version 1.5.0
load helpers

said() { sed -n "s/^$1: //p" "$BATS_TEST_TMPDIR/out.txt"; }

glib() {
	[ -x "$EXAMPLES/glib_pool" ] || skip "glib_pool not built: pkg-config glib-2.0 missing (Debian: apt-get install libglib2.0-dev)"
	record "$EXAMPLES/glib_pool" "$@"
}

@test "GLib: GMutex waits sited at the program's line, GCond under waiting for work, no libglib offsets" {
	glib
	[ "$(said 'tasks run')" = "400 (expected 400)" ]
	[ "$(said 'nest_lock passes')" = "400 (expected 400)" ]
	run -0 --separate-stderr ptt-stat -S 3 "$BATS_TEST_TMPDIR/t.ptt"
	[ -z "$stderr" ]
	stat=$output
	locks=$(sed -n '/^LOCKS:/,/^WAITING FOR WORK:/p' <<<"$stat")
	work=$(sed -n '/^WAITING FOR WORK:/,/^WAITS BY SITE/p' <<<"$stat")
	# the main thread's g_cond_wait: the GCond's counter (all_done+0x8), waiting for work, at wait_all's line
	if [ "$(said 'condition waits')" -gt 0 ]; then
		grep -qE '^all_done\+0x8 +futex +[1-9]' <<<"$work"
		grep -qE '^  site 1 .* wait_all\+0x[0-9a-f]+ \(glib_pool\) at glib_pool\.c:[0-9]+$' <<<"$work"
		run ! grep -q '^all_done' <<<"$locks"
		run -0 grep -E '^waiting for work: [0-9.]+ ms' <<<"$stat"
		[[ "$output" != "waiting for work: 0.000 ms"* ]]
	fi
	# the program's GMutex waits: tally_add's line, never inside libglib
	if grep -q '^tally_lock ' <<<"$locks"; then
		[ "$(said 'tally_lock found taken')" -gt 0 ]
		sites=$(awk '/^tally_lock / { on = 1; next } on && /^  site / { print; next } { on = 0 }' <<<"$locks")
		[ "$(wc -l <<<"$sites")" -eq 1 ]
		grep -qE '^  site 1 .* tally_add\+0x[0-9a-f]+ \(glib_pool\) at glib_pool\.c:[0-9]+$' <<<"$sites"
	fi
	run ! grep -E '(tally_lock|done_lock|all_done).*libglib-2\.0\.so\.0\+0x' <<<"$stat"
	# GRWLock and GRecMutex (pthread's, inside GLib): their waits at table_visit's lines, past g_rw_lock_*
	run ! grep -E '^  site [0-9]+ +[0-9]+ +[1-9][0-9]* .*(g_rw_lock_|g_rec_mutex_)' <<<"$stat"
	grep -qE '^  site [0-9]+ +400 +0 .* table_visit\+0x[0-9a-f]+ \(glib_pool\) at glib_pool\.c:[0-9]+$' <<<"$stat"
	# no row says more contended than acquired
	run -0 awk '$2 ~ /^(futex|mutex|cond|park|sem|rwlock)$/ && $4 > $3 { print; bad = 1 } END { exit bad }' <<<"$stat"
}

@test "GLib: a pool thread that ends after its process's exit is one row of the thread table" {
	glib
	run -0 --separate-stderr ptt-stat "$BATS_TEST_TMPDIR/t.ptt"
	rows=$(awk '/^ +PID +TID NAME/ { on = 1; next } on && /^ +[0-9]+ +[0-9]+ / { print $1, $2 } on && !/^ +[0-9]/ { on = 0 }' <<<"$output")
	[ "$(wc -l <<<"$rows")" -eq 5 ] # the main thread and the pool's 4
	[ -z "$(sort <<<"$rows" | uniq -d)" ]
}

@test "a wrapper of the program's (app_lock/app_unlock) is found from the trace: its callers are the sites" {
	record "$EXAMPLES/app_lock" 1000
	[ "$(said 'hot_path calls')" -eq 3000 ]
	[ "$(said 'use_slot calls')" -eq 3000 ]
	run -0 --separate-stderr ptt-stat -S 5 "$BATS_TEST_TMPDIR/t.ptt"
	[ -z "$stderr" ]
	stat=$output
	state=$(awk '/^state_lock / { on = 1; next } on && /^  site / { print; next } { on = 0 }' <<<"$stat")
	# the waits (the events with a stack) at hot_path's and cold_path's lines, never inside app_lock
	run ! grep -E '^  site [0-9]+ +[0-9]+ +[1-9][0-9]* .* app_lock[.a-z0-9]*\+0x' <<<"$state"
	if grep -qE '^state_lock +mutex +[0-9]+ +[1-9]' <<<"$stat"; then
		grep -qE '^  site [0-9]+ +[0-9]+ +[1-9][0-9]* .* (hot|cold)_path\+0x[0-9a-f]+ \(app_lock\) at app_lock\.c:[0-9]+$' <<<"$state"
		# two unlockers (app_unlock, and app_unlock_wake as yarn's twist beside its release): one wrapper
		grep -qE "^wrappers: app_lock[.a-z0-9]*/app_unlock[.a-z0-9]*\+app_unlock_wake[.a-z0-9]* taken as the program's lock wrapper|^wrappers: app_lock[.a-z0-9]*/app_unlock_wake[.a-z0-9]*\+app_unlock[.a-z0-9]* taken as the program's lock wrapper" <<<"$stat"
	fi
	# lock_slot hands its lock to its caller, who unlocks it (a tail call): no wrapper, its waits its own
	slot=$(awk '/^slot_lock / { on = 1; next } on && /^  site / { print; next } { on = 0 }' <<<"$stat")
	grep -qE '^  site [0-9]+ +3000 .* lock_slot\+0x[0-9a-f]+ \(app_lock\) at app_lock\.c:[0-9]+$' <<<"$slot"
	run ! grep -E 'use_slot|worker' <<<"$slot"
	run ! grep -E '^wrappers: .*lock_slot' <<<"$stat"
	# every tool names the same sites: ptt-dump --human's waits for state_lock
	run -0 --separate-stderr ptt-dump --human "$BATS_TEST_TMPDIR/t.ptt"
	run ! grep -E 'waits for mutex state_lock.* in app_lock' <<<"$output"
	# the user's exemption: --skip-frames='!NAME'
	run -0 --separate-stderr ptt-stat -S 5 --skip-frames='!^app_' "$BATS_TEST_TMPDIR/t.ptt"
	run ! grep -E '^wrappers:|(hot|cold)_path' <<<"$output"
}

@test "a stripped program's wrapper is found too: its functions told apart by the unwind tables, its waits at the callers" {
	command -v strip >/dev/null || skip "strip (binutils) not installed"
	cp "$EXAMPLES/app_lock" "$BATS_TEST_TMPDIR/al_s"
	strip "$BATS_TEST_TMPDIR/al_s"
	# the functions' addresses from the unstripped program (strip moves no code)
	syms=$(nm -S "$EXAMPLES/app_lock")
	addr() { printf '%x' "0x$(awk -v f="$1" '$4 ~ "^" f "([.]|$)" && $3 ~ /^[tT]$/ { print $1; exit }' <<<"$syms")"; }
	lock=$(addr app_lock) unlock=$(addr app_unlock) wake=$(addr app_unlock_wake)
	# a wait is the evidence (a stack): recorded again until the lock was waited for (at most 5 runs)
	for _ in 1 2 3 4 5; do
		ptt-record -q -o "$BATS_TEST_TMPDIR/s.ptt" -- "$BATS_TEST_TMPDIR/al_s" 1000 >/dev/null
		run -0 --separate-stderr ptt-stat -S 5 "$BATS_TEST_TMPDIR/s.ptt"
		grep -qE '^al_s\+0x[0-9a-f]+ +mutex +3750 +[1-9]' <<<"$output" && break
	done
	grep -qE '^al_s\+0x[0-9a-f]+ +mutex +3750 +[1-9]' <<<"$output" || skip "state_lock never waited for in 5 runs"
	[ -z "$stderr" ]
	grep -qE "^wrappers: al_s\+0x$lock/al_s\+0x($unlock\+al_s\+0x$wake|$wake\+al_s\+0x$unlock) taken as the program's lock wrapper" <<<"$output"
	# the waited sites are in hot_path or cold_path, none in the wrapper
	range() { # START END of function $1, in decimal (mawk has no strtonum: bash's arithmetic)
		local a z
		read -r a z < <(awk -v f="$1" '$4 == f && $3 ~ /^[tT]$/ { print $1, $2; exit }' <<<"$syms")
		echo $((0x$a)) $((0x$a + 0x$z))
	}
	read -r hlo hhi < <(range hot_path)
	read -r clo chi < <(range cold_path)
	sites=$(awk '/^al_s\+0x[0-9a-f]+ +mutex +3750 / { on = 1; next } on && /^  site / { if ($4 > 0) print $NF; next } { on = 0 }' <<<"$output")
	[ -n "$sites" ]
	for s in $sites; do
		a=$(( ${s#al_s+} ))
		(( (a >= hlo && a < hhi) || (a >= clo && a < chi) ))
	done
}

@test "C++: std::shared_mutex and std::mutex at the program's own lines, contended or not, never a libstdc++ header" {
	record "$EXAMPLES/cxx_shared" 5000
	[ "$(said reads)" = "15000 (expected 15000)" ]
	[ "$(said writes)" = "5000 (expected 5000)" ]
	run -0 --separate-stderr ptt-stat -S 5 "$BATS_TEST_TMPDIR/t.ptt"
	[ -z "$stderr" ]
	# one row per site: the writer's and the readers' loops at their lines, and the log at its own
	grep -qE '^  site [0-9]+ +5000 .* writer_loop\(int\)\+0x[0-9a-f]+ \(cxx_shared\) at cxx_shared\.cc:33$' <<<"$output"
	grep -qE '^  site [0-9]+ +15000 .* reader_loop\(int\)\+0x[0-9a-f]+ \(cxx_shared\) at cxx_shared\.cc:21$' <<<"$output"
	grep -qE '^  site [0-9]+ +3 .* reader_loop\(int\)\+0x[0-9a-f]+ \(cxx_shared\) at cxx_shared\.cc:26$' <<<"$output"
	run ! grep -E 'shared_mutex:[0-9]|gthr-default\.h|std_mutex\.h|inlined in' <<<"$output"
	# the pictures name the same lines
	ptt-paje "$BATS_TEST_TMPDIR/t.ptt" >"$BATS_TEST_TMPDIR/t.paje"
	grep -q 'cxx_shared\.cc:33' "$BATS_TEST_TMPDIR/t.paje"
	run ! grep -E 'shared_mutex:[0-9]|gthr-default\.h' "$BATS_TEST_TMPDIR/t.paje"
}

@test "two processes' locks at one address: every row of ptt-stat and of the closing summary carries its pid" {
	record "$EXAMPLES/fork_contend" 1000
	parent=$(sed -n 's/^parent \([0-9]*\): 2000 acquisitions of shared_lock$/\1/p' "$BATS_TEST_TMPDIR/out.txt")
	child=$(sed -n 's/^child \([0-9]*\): 2000 acquisitions of shared_lock$/\1/p' "$BATS_TEST_TMPDIR/out.txt")
	[ -n "$parent" ] && [ -n "$child" ]
	run -0 --separate-stderr ptt-stat "$BATS_TEST_TMPDIR/t.ptt"
	[ -z "$stderr" ]
	grep -qE "^shared_lock \(pid $parent\) +mutex +2000 " <<<"$output"
	grep -qE "^shared_lock \(pid $child\) +mutex +2000 " <<<"$output"
	# no two object rows, nor two site rows, read the same object
	[ -z "$(grep -E '^shared_lock' <<<"$output" | awk '{ print $1, $2, $3 }' | sort | uniq -d)" ]
	sites=$(sed -n '/^WAITS BY SITE/,/^$/p' <<<"$output" | grep -E '^ +[0-9]+ ' || true)
	[ -z "$(cut -c46- <<<"$sites" | sort | uniq -d)" ]
	run -0 --separate-stderr ptt-stat --brief "$BATS_TEST_TMPDIR/t.ptt"
	run ! grep -E '^  shared_lock +mutex' <<<"$output"
	# the child's events alone: its lock, once; the parent is still in the trace (its fork), so the pid is said
	ptt-filter --pid="$child" "$BATS_TEST_TMPDIR/t.ptt" >"$BATS_TEST_TMPDIR/child.ptt"
	run -0 --separate-stderr ptt-stat "$BATS_TEST_TMPDIR/child.ptt"
	grep -qE "^shared_lock \(pid $child\) +mutex +2000 " <<<"$output"
	[ "$(grep -cE '^shared_lock' <<<"$output")" -eq 1 ]
}

@test "a condition variable with waits still open at the end: never more contended than acquired (varnish's 200 %)" {
	printf '# ptt-trace 1\n%s\n' \
		'0.000000001 10 10 pthread process_begin ppid=1 cmd="t"' \
		'0.000000002 10 11 pthread thread_begin handle=0x1 start=0x0 parent=0' \
		'0.000000003 10 12 pthread thread_begin handle=0x2 start=0x0 parent=0' \
		'0.000000010 10 11 pthread mutex_lock mutex=0x40 ret=0' \
		'0.000000011 10 11 pthread cond_wait_req cond=0x30 mutex=0x40' \
		'0.000000020 10 12 pthread mutex_lock mutex=0x40 ret=0' \
		'0.000000021 10 12 pthread cond_wait_req cond=0x30 mutex=0x40' \
		'0.000001000 10 10 pthread cond_signal cond=0x30 ret=0' \
		'0.000001001 10 11 pthread cond_wait cond=0x30 mutex=0x40 ret=0' \
		'0.000001002 10 11 pthread mutex_unlock mutex=0x40 ret=0' \
		'0.000001003 10 11 pthread mutex_lock mutex=0x40 ret=0' \
		'0.000001004 10 11 pthread cond_wait_req cond=0x30 mutex=0x40' \
		'0.000002000 10 10 pthread mutex_lock mutex=0x50 ret=0' >"$BATS_TEST_TMPDIR/t.txt"
	run -0 --separate-stderr ptt-stat --csv -S 0 "$BATS_TEST_TMPDIR/t.txt"
	# the condition: one passage and two waits open at the end: 3 calls, 3 waited (was 1 and 3, 300 %)
	[ "$(awk -F, '$1 == "0x30" { print $3, $5, $6, $7 }' <<<"$output")" = "cond 3 3 100.00" ]
	run -0 --separate-stderr ptt-stat "$BATS_TEST_TMPDIR/t.txt"
	run -0 awk '$2 ~ /^(mutex|cond)$/ && ($4 > $3 || $5 > 100) { print; bad = 1 } END { exit bad }' <<<"$output"
}

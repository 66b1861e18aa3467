#!/usr/bin/env bats
# C11 <threads.h> programs and pthread_clockjoin_np: exact counts against the program's own,
# and every lock and thread entry point of the machine's glibc traced or listed as ignored.
bats_require_minimum_version 1.5.0
load helpers

count() { grep -c " $1 " "$BATS_TEST_TMPDIR/t.txt" || true; }
count_ok() { grep -c " $1 .*ret=0" "$BATS_TEST_TMPDIR/t.txt" || true; }
said() { sed -n "s/^$1 //p" "$BATS_TEST_TMPDIR/err.txt"; }
said_n() { sed -n "s/^$1 //p" "$BATS_TEST_TMPDIR/err.txt" | cut -d' ' -f"$2"; }

@test "prim_c11: C11 threads, mutexes and conds and pthread_clockjoin_np, counted exactly" {
	ptt-record -q -l 3 -o "$BATS_TEST_TMPDIR/t.ptt" -- "$EXAMPLES/prim_c11" -v 2>"$BATS_TEST_TMPDIR/err.txt"
	ptt-dump -n "$BATS_TEST_TMPDIR/t.ptt" >"$BATS_TEST_TMPDIR/t.txt"
	run -0 --separate-stderr ptt-dump --check "$BATS_TEST_TMPDIR/t.ptt"
	[[ "$output" == *" 0 damaged, 0 lost, "*" 0 violations: ok" ]]
	[ "$stderr" = "" ]
	[ "$(said bad)" -eq 0 ]
	# threads: C11 and the pthreads joined with pthread_clockjoin_np
	[ "$(count thread_create)" -eq "$(( $(said thrd_create) + $(said pthread_create) ))" ]
	[ "$(count thread_begin)" -eq "$(( $(said thrd_create) + $(said pthread_create) + 1 ))" ]
	[ "$(count thread_join)" -eq "$(( $(said thrd_join) + $(said clockjoin) ))" ]
	[ "$(count thread_join_req)" -eq "$(( $(said thrd_join) + $(said clockjoin) ))" ]
	[ "$(grep -c ' thread_join .*ret=110 ' "$BATS_TEST_TMPDIR/t.txt")" -eq 1 ] # the clockjoin that timed out
	[ "$(count thread_detach)" -eq "$(said thrd_detach)" ]
	[ "$(count thread_exit)" -eq "$(said thrd_exit)" ]
	grep -q ' thread_end retval=0x2a how=1$' "$BATS_TEST_TMPDIR/t.txt" # thrd_exit(42)
	grep -q ' thread_end retval=0x65 how=0$' "$BATS_TEST_TMPDIR/t.txt" # returned 101
	# mutexes: C11 ones plus two pthread locks of the clockjoin part
	[ "$(count mutex_lock)" -eq "$(( $(said mtx_lock) + $(said pthread_mutex_lock) ))" ]
	[ "$(count mutex_unlock)" -eq "$(( $(said mtx_unlock) + $(said pthread_mutex_lock) ))" ]
	[ "$(count mutex_trylock)" -eq "$(said_n mtx_trylock 1)" ]
	[ "$(count_ok mutex_trylock)" -eq "$(said_n mtx_trylock 2)" ]
	[ "$(count mutex_timedlock)" -eq "$(said_n mtx_timedlock 1)" ]
	[ "$(count_ok mutex_timedlock)" -eq "$(said_n mtx_timedlock 2)" ]
	[ "$(count mutex_init)" -eq 3 ] && [ "$(count mutex_destroy)" -eq 3 ]
	grep -qE ' mutex_init .*type=1 ret=0( |$)' "$BATS_TEST_TMPDIR/t.txt" # mtx_recursive
	# condition variables
	[ "$(count cond_wait_req)" -eq "$(said cnd_wait)" ]
	[ "$(count cond_timedwait_req)" -eq "$(said cnd_timedwait)" ]
	[ "$(count cond_wait)" -eq "$(( $(said cnd_wait) + $(said cnd_timedwait) ))" ]
	[ "$(count cond_signal)" -eq "$(said cnd_signal)" ]
	[ "$(count cond_broadcast)" -eq "$(said cnd_broadcast)" ]
	[ "$(count cond_init)" -eq 1 ] && [ "$(count cond_destroy)" -eq 1 ]
}

# The C11 wrappers pass their own caller's address: a site inside libptt (its mtx_lock calling
# pthread_mutex_lock) would name libptt.so, not the program.
@test "prim_c11: the call sites of C11 calls are in the program's own functions" {
	ptt-record -q -o "$BATS_TEST_TMPDIR/t.ptt" -- "$EXAMPLES/prim_c11"
	ptt-dump -n "$BATS_TEST_TMPDIR/t.ptt" >"$BATS_TEST_TMPDIR/t.txt"
	grep -E ' (mutex|cond)_[a-z_]+ | thread_(join|join_req|detach) ' "$BATS_TEST_TMPDIR/t.txt" >"$BATS_TEST_TMPDIR/sites.txt"
	[ "$(wc -l <"$BATS_TEST_TMPDIR/sites.txt")" -gt 1600 ]
	run -1 grep -vE '  # [a-z_0-9]+\+0x[0-9a-f]+ \(prim_c11\) at prim_c11\.c:[0-9]+$' "$BATS_TEST_TMPDIR/sites.txt"
	# mtx_lock and mtx_unlock in worker(), line for line; cnd_signal in waiter(); thrd_join in main()
	[ "$(grep -c ' mutex_lock .*  # worker+0x[0-9a-f]* (prim_c11) at prim_c11.c:43$' "$BATS_TEST_TMPDIR/sites.txt")" -eq 800 ]
	[ "$(grep -c ' mutex_unlock .*  # worker+0x[0-9a-f]* (prim_c11) at prim_c11.c:47$' "$BATS_TEST_TMPDIR/sites.txt")" -eq 800 ]
	grep -q ' cond_signal .*  # waiter+0x[0-9a-f]* (prim_c11) at prim_c11.c:' "$BATS_TEST_TMPDIR/sites.txt"
	grep -q ' thread_join .*  # main+0x[0-9a-f]* (prim_c11) at prim_c11.c:' "$BATS_TEST_TMPDIR/sites.txt"
}

@test "prim_c11: the program's results and output are the same traced and untraced" {
	run -0 --separate-stderr "$EXAMPLES/prim_c11" -v
	untraced=$(grep -c . <<<"$stderr")
	[[ "$stderr" == *"bad 0"* ]]
	run -0 --separate-stderr ptt-record -q -o "$BATS_TEST_TMPDIR/t.ptt" -- "$EXAMPLES/prim_c11" -v
	[[ "$stderr" == *"bad 0"* ]]
	[ "$(grep -c . <<<"$stderr")" -eq "$untraced" ]
	[ "$output" = "" ]
}

# Every exported name of glibc that is about threads, locks, condition variables,
# semaphores or C11 threads is either exported (interposed) by libptt.so or listed in
# glibc-untraced.txt with its reason (a pattern may cover a family).  A new glibc that
# adds such a function fails here until it is traced or listed.
@test "glibc export audit: every thread and lock entry point is traced or ignored with a reason" {
	libc=$(ldd "$PTT_BUILD/examples/prim_c11" | awk '/libc\.so/ {print $3}')
	[ -r "$libc" ]
	nm -D --defined-only "$libc" | awk '{print $3}' | sed 's/@.*//' |
		grep -E '^(pthread_|sem_|thrd_|mtx_|cnd_|call_once$|tss_)' | sort -u >"$BATS_TEST_TMPDIR/glibc.txt"
	[ "$(wc -l <"$BATS_TEST_TMPDIR/glibc.txt")" -gt 100 ]
	nm -D --defined-only "$PTT_BUILD/lib/libptt.so" | awk '{print $3}' | sed 's/@.*//' | sort -u >"$BATS_TEST_TMPDIR/ptt.txt"
	list="$BATS_TEST_DIRNAME/glibc-untraced.txt"
	# every entry of the list has a reason
	run -0 awk '!/^#/ && NF && NF < 2 {print "no reason: " $0}' "$list"
	[ "$output" = "" ]
	missing=
	while read -r name; do
		grep -qx "$name" "$BATS_TEST_TMPDIR/ptt.txt" && continue
		listed=
		while read -r pattern reason; do
			case $pattern in ''|'#'*) continue ;; esac
			# shellcheck disable=SC2254
			case $name in $pattern) listed=1; break ;; esac
		done <"$list"
		[ -n "$listed" ] || missing="$missing $name"
	done <"$BATS_TEST_TMPDIR/glibc.txt"
	[ "$missing" = "" ] || { echo "untraced and not listed:$missing"; false; }
	# what must be traced is: a listed name that libptt.so exports is a stale entry
	stale=
	while read -r pattern reason; do
		case $pattern in ''|'#'*|*'*'*) continue ;; esac
		grep -qx "$pattern" "$BATS_TEST_TMPDIR/ptt.txt" && stale="$stale $pattern"
	done <"$list"
	[ "$stale" = "" ] || { echo "listed as untraced but traced:$stale"; false; }
}

#!/usr/bin/env bats
# ptt-stat reads its input once (sites named at the end, the lock layer's wrappers learnt as it reads):
# the same rows as naming them as they come, the first 63 sites of an object by their first calls.
bats_require_minimum_version 1.5.0
load helpers

# sites80: one mutex taken through a wrapper (app_lock/app_unlock) from 80 functions, first f79 ... f0
# through a helper, then f0 ... f79 from main (two stacks per site); prints the order of first calls.
# With an argument, 300 ms later, main takes the lock through app_lock and releases it itself: app_lock
# is then no wrapper (its locks are not all released in app_unlock).
sites80() {
	cat >"$BATS_TEST_TMPDIR/s.c" <<'C'
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static volatile int counter;
__attribute__((noinline)) static void app_lock(pthread_mutex_t *x) { pthread_mutex_lock(x); }
__attribute__((noinline)) static void app_unlock(pthread_mutex_t *x) { pthread_mutex_unlock(x); }
#define F(i) __attribute__((noinline)) static void f##i(void) { app_lock(&m); counter++; app_unlock(&m); }
#define F10(d) F(d##0) F(d##1) F(d##2) F(d##3) F(d##4) F(d##5) F(d##6) F(d##7) F(d##8) F(d##9)
F(0) F(1) F(2) F(3) F(4) F(5) F(6) F(7) F(8) F(9) F10(1) F10(2) F10(3) F10(4) F10(5) F10(6) F10(7)
#define P(i) f##i,
#define P10(d) P(d##0) P(d##1) P(d##2) P(d##3) P(d##4) P(d##5) P(d##6) P(d##7) P(d##8) P(d##9)
static void (*const fs[80])(void) = { P(0) P(1) P(2) P(3) P(4) P(5) P(6) P(7) P(8) P(9)
				      P10(1) P10(2) P10(3) P10(4) P10(5) P10(6) P10(7) };
__attribute__((noinline)) static void through(int i) { fs[i](); }
int main(int argc, char **argv)
{
	(void)argv;
	for (int i = 79; i >= 0; i--) {
		through(i);
		printf("f%d\n", i);
	}
	for (int i = 0; i < 80; i++)
		fs[i]();
	if (argc > 1) {
		usleep(300000);
		app_lock(&m);
		pthread_mutex_unlock(&m);
	}
	return counter != 160;
}
C
	cc -g -O1 -fno-omit-frame-pointer -o "$BATS_TEST_TMPDIR/sites80" "$BATS_TEST_TMPDIR/s.c" -pthread
	ptt-record -q --stacks=all -o "$BATS_TEST_TMPDIR/t.ptt" -- "$BATS_TEST_TMPDIR/sites80" "$@" >"$BATS_TEST_TMPDIR/first.txt"
}

@test "80 sites of one lock behind a learnt wrapper: the first 63 called have rows, the rest one (other sites) row" {
	sites80
	run -0 --separate-stderr ptt-stat -S 100 "$BATS_TEST_TMPDIR/t.ptt"
	[ -z "$stderr" ]
	[[ "$output" == *"wrappers: app_lock/app_unlock taken as the program's lock wrapper"* ]]
	# the sites named: the callers past the wrapper, each once, as many as the program's first 63 calls
	echo "$output" | sed -n 's/^  site [0-9]* .* \(f[0-9]*\)+0x[0-9a-f]* (sites80).*/\1/p' | sort >"$BATS_TEST_TMPDIR/named"
	head -63 "$BATS_TEST_TMPDIR/first.txt" | sort >"$BATS_TEST_TMPDIR/want"
	diff "$BATS_TEST_TMPDIR/want" "$BATS_TEST_TMPDIR/named"
	# each named site took the lock twice (two stacks, one site); the 17 called last, 34 times, are one row
	[ "$(echo "$output" | grep -c '^  site [0-9]* *2 .* f[0-9]*+0x')" -eq 63 ]
	echo "$output" | grep -q '^  site 64 *34 .*(other sites)$'
	# CSV says the same sites
	run -0 --separate-stderr ptt-stat --csv -S 100 "$BATS_TEST_TMPDIR/t.ptt"
	[ "$(echo "$output" | grep -c ',f[0-9]*,2,0,')" -eq 63 ]
	[ "$(echo "$output" | grep -c ',other,,,34,0,')" -eq 1 ]
}

@test "one read: a pipe gives what the file gives, in every mode" {
	sites80
	for mode in "" "--brief" "--csv" "--folded=hold" "-S 100 -n 0" "--sort=critical"; do
		# shellcheck disable=SC2086
		ptt-stat $mode "$BATS_TEST_TMPDIR/t.ptt" >"$BATS_TEST_TMPDIR/file.txt" 2>"$BATS_TEST_TMPDIR/file.err"
		# shellcheck disable=SC2086
		cat "$BATS_TEST_TMPDIR/t.ptt" | ptt-stat $mode >"$BATS_TEST_TMPDIR/pipe.txt" 2>"$BATS_TEST_TMPDIR/pipe.err"
		sed -i 's|'"$BATS_TEST_TMPDIR"'/t.ptt|FILE|g' "$BATS_TEST_TMPDIR/file.txt" "$BATS_TEST_TMPDIR/file.err"
		diff "$BATS_TEST_TMPDIR/file.txt" "$BATS_TEST_TMPDIR/pipe.txt"
		diff "$BATS_TEST_TMPDIR/file.err" "$BATS_TEST_TMPDIR/pipe.err"
	done
	# the folded stacks: a line of held time per stack, 2 for each of the 80 functions
	run -0 --separate-stderr ptt-stat --folded=hold "$BATS_TEST_TMPDIR/t.ptt"
	[ "$(echo "$output" | grep -c ';main;\(through;\)\{0,1\}f[0-9]*;app_lock;\[mutex m\] [0-9]*$')" -eq 160 ]
}

@test "a window that ends early (--to): the wrappers are learnt from the whole trace, as without it" {
	sites80 late-unlock
	run -0 --separate-stderr ptt-stat -S 100 "$BATS_TEST_TMPDIR/t.ptt"
	[[ "$output" != *"wrappers:"* ]]
	[[ "$output" == *"site 1 "*"app_lock+0x"* ]]
	# the window holds the 160 calls through app_lock/app_unlock, not the release after them
	run -0 --separate-stderr ptt-stat -S 100 --to=200ms "$BATS_TEST_TMPDIR/t.ptt"
	[[ "$output" == *" mutex "*" 160 "* ]]
	[[ "$output" != *"wrappers:"* ]]
	[[ "$output" == *"site 1 "*"app_lock+0x"* ]]
	[[ "$output" != *"f79+0x"* ]]
}

@test "a pipe is read as it comes: no temporary copy of it (--pprof and --to keep one, for their first pass)" {
	command -v strace >/dev/null || skip "strace not installed"
	export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" # LeakSanitizer does not work under ptrace
	sites80
	# shellcheck disable=SC2002
	cat "$BATS_TEST_TMPDIR/t.ptt" | strace -o "$BATS_TEST_TMPDIR/st.txt" -e trace=openat ptt-stat >/dev/null
	run ! grep -q O_TMPFILE "$BATS_TEST_TMPDIR/st.txt"
	# shellcheck disable=SC2002
	cat "$BATS_TEST_TMPDIR/t.ptt" | strace -o "$BATS_TEST_TMPDIR/st.txt" -e trace=openat ptt-stat --to=200ms >/dev/null
	grep -q O_TMPFILE "$BATS_TEST_TMPDIR/st.txt"
}

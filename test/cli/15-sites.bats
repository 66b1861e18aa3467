#!/usr/bin/env bats
# Call sites: recorded in every lock, wait, post, create and join event,
# symbolised by the readers (function+offset (module), file:line), module+offset
# when stripped.  two_sites takes one mutex from fast_path (3x) and slow_path (1x).
bats_require_minimum_version 1.5.0
load helpers

setup() {
	T="$BATS_TEST_TMPDIR/t.ptt"
	ptt-record -q -o "$T" -- "$EXAMPLES/two_sites" -n 50 >/dev/null
}

@test "ptt-dump's text form names both functions with file:line, in the right split" {
	run -0 --separate-stderr ptt-dump -n "$T"
	[ -z "$stderr" ]
	fast=$(grep -c ' mutex_lock mutex=0x[0-9a-f]* ret=0 site=0x[0-9a-f]*  # fast_path+0x[0-9a-f]* (two_sites) at two_sites.c:17$' <<<"$output")
	slow=$(grep -c ' mutex_lock mutex=0x[0-9a-f]* ret=0 site=0x[0-9a-f]*  # slow_path+0x[0-9a-f]* (two_sites) at two_sites.c:24$' <<<"$output")
	[ "$fast" -eq 300 ]
	[ "$slow" -eq 100 ]
	grep -q ' thread_create .* # main+0x[0-9a-f]* (two_sites) at two_sites.c:[0-9]*$' <<<"$output"
	grep -q ' thread_join_req .* # main+0x[0-9a-f]* (two_sites) at two_sites.c:[0-9]*$' <<<"$output"
}

@test "the text form with its site comments reads back as the same trace" {
	ptt-dump "$T" >"$BATS_TEST_TMPDIR/t.txt"
	run -0 --separate-stderr ptt-dump "$BATS_TEST_TMPDIR/t.txt"
	[ -z "$stderr" ]
	[ "$output" = "$(cat "$BATS_TEST_TMPDIR/t.txt")" ]
}

@test "ptt-dump --human says where" {
	run -0 --separate-stderr ptt-dump --human "$T"
	[ -z "$stderr" ]
	grep -q 'holds mutex shared_lock at two_sites.c:17 in fast_path$' <<<"$output"
	# the unlock is fast_path's tail call: its return address is in the caller (no unwinding)
	grep -q 'releases mutex shared_lock at two_sites.c:3[0-9] in worker_main$' <<<"$output"
	grep -q 'creates thread [0-9]* (worker_main) at two_sites.c:[0-9]* in main$' <<<"$output"
}

@test "ptt-csv has the site and its file:line" {
	run -0 --separate-stderr ptt-csv "$T"
	[ -z "$stderr" ]
	[ "$(grep -c ',mutex_lock,.*,slow_path+0x[0-9a-f]* (two_sites),two_sites.c:24$' <<<"$output")" -eq 100 ]
	grep -q ',thread_begin,thread,,,[^,]*,,$' <<<"$output"
}

@test "ptt-filter --site selects by function, by file:line and by the whole site" {
	run -0 --separate-stderr ptt-filter -n --site=slow_path "$T"
	[ -z "$stderr" ]
	[ "$(ptt-filter -n --site=slow_path "$T" | ptt-dump -n | grep -c ' mutex_lock ')" -eq 100 ]
	[ "$(ptt-filter -n --site='two_sites.c:1?' "$T" | ptt-dump -n | grep -c ' mutex_lock ')" -eq 300 ]
	[ "$(ptt-filter -n --site='fast_path+0x* (two_sites) at *' "$T" | ptt-dump -n | grep -c ' mutex_lock ')" -eq 300 ]
	# with context (the module events), the selection still reads symbolised
	[ "$(ptt-filter --site=fast_path "$T" | ptt-dump -n | grep -c ' mutex_lock .* # fast_path+')" -eq 300 ]
	[ "$(ptt-filter -n -v --site='*_path*' "$T" | ptt-dump -n | grep -c ' mutex_lock ')" -eq 0 ]
	ptt-filter -n --site=no_such_function "$T" >"$BATS_TEST_TMPDIR/none.ptt"
	run -0 --separate-stderr ptt-dump -n "$BATS_TEST_TMPDIR/none.ptt"
	[ -z "$output" ]
	[ -z "$stderr" ]
}

@test "a stripped program's sites read module+0x..., never a bare address" {
	strip -o "$BATS_TEST_TMPDIR/two_sites_stripped" "$EXAMPLES/two_sites"
	ptt-record -q -o "$BATS_TEST_TMPDIR/s.ptt" -- "$BATS_TEST_TMPDIR/two_sites_stripped" -n 10 >/dev/null
	run -0 --separate-stderr ptt-dump -n "$BATS_TEST_TMPDIR/s.ptt"
	[ -z "$stderr" ]
	[ "$(grep -c ' mutex_lock .*  # two_sites_stripped+0x[0-9a-f]*$' <<<"$output")" -eq 80 ]
	run -1 grep ' site=0x[0-9a-f]*  # 0x' <<<"$output"
	run -0 ptt-dump --human "$BATS_TEST_TMPDIR/s.ptt"
	grep -q 'holds mutex .* at two_sites_stripped+0x[0-9a-f]*$' <<<"$output"
}

@test "a trace of the older layout (no sites) still reads, without site comments" {
	run -0 --separate-stderr ptt-dump -n "$BATS_TEST_DIRNAME/frozen/contention.txt"
	[ -z "$stderr" ]
	grep -q ' mutex_lock mutex=0x[0-9a-f]* ret=0$' <<<"$output"
	run -1 grep -c ' # ' <<<"$output"
}

@test "a library loaded by dlopen after the start: its sites and its static mutex are named" {
	d=$BATS_TEST_TMPDIR
	cat >"$d/lib.c" <<'SRC'
#include <pthread.h>
static pthread_mutex_t lib_mutex = PTHREAD_MUTEX_INITIALIZER;
int lib_locker(int n)
{
	int s = 0;
	for (int i = 0; i < n; i++) {
		pthread_mutex_lock(&lib_mutex);
		s++;
		pthread_mutex_unlock(&lib_mutex);
	}
	return s;
}
SRC
	cat >"$d/main.c" <<'SRC'
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
static int (*locker)(int);
static void *work(void *arg) { return (void *)(long)locker(3); }
int main(int argc, char **argv)
{
	void *h = dlopen(argv[1], RTLD_NOW);
	if (!h || !(locker = (int (*)(int))dlsym(h, "lib_locker")))
		return 1;
	pthread_t t;
	void *r;
	pthread_create(&t, NULL, work, NULL);
	pthread_join(t, &r);
	printf("locks %ld\n", (long)r + locker(2));
	return 0;
}
SRC
	cc -g -shared -fPIC -o "$d/libdlx.so" "$d/lib.c"
	cc -g -o "$d/main" "$d/main.c" -pthread -ldl
	run -0 --separate-stderr ptt-record -q -o "$d/t.ptt" -- "$d/main" "$d/libdlx.so"
	[ "$output" = "locks 5" ]
	[ "$stderr" = "" ]
	run -0 --separate-stderr ptt-dump -n "$d/t.ptt"
	[ "$stderr" = "" ]
	# the module comes before the first lock in it, and every lock names its function
	first_module=$(grep -n " module base=0x[0-9a-f]* path=\"$d/libdlx.so\"$" <<<"$output" | head -1 | cut -d: -f1)
	first_lock=$(grep -n " mutex_lock " <<<"$output" | head -1 | cut -d: -f1)
	[ -n "$first_module" ] && [ "$first_module" -lt "$first_lock" ]
	[ "$(grep -c ' mutex_lock .* # lib_locker+0x[0-9a-f]* (libdlx.so) at lib.c:7$' <<<"$output")" -eq 5 ]
	run -0 --separate-stderr ptt-stat "$d/t.ptt"
	[[ "$output" == *$'\nlib_mutex '*' mutex '*'5 '* ]]
	[ "$stderr" = "" ]
}

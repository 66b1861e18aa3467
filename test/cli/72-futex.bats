#!/usr/bin/env bats
# Futex-based locks (syscall(SYS_futex)): a hand-made C futex mutex against its own counts, Rust's
# std Mutex and a Rust deadlock, every tool's output; and the notes on what a trace cannot show.
bats_require_minimum_version 1.5.0
load helpers

said() { sed -n "s/^$1 //p" "$BATS_TEST_TMPDIR/out.txt"; }
count() { grep -c " pthread $1 " "$BATS_TEST_TMPDIR/t.txt" || true; }

futex_c() {
	record "$EXAMPLES/futex_mutex" 1000
	ptt-dump "$BATS_TEST_TMPDIR/t.ptt" >"$BATS_TEST_TMPDIR/t.txt"
}

rust() {
	[ -x "$EXAMPLES/$1" ] || skip "rustc not installed: $1 not built (Debian: apt-get install rustc)"
}

@test "a C futex mutex: waits and wakes as the program counted them, syscall's results and errno kept" {
	futex_c
	[ "$(said syscall)" = ok ]
	[ "$(said counter)" = "4000 (expected 4000)" ]
	# the program's own waits, plus its two checks of syscall() (EAGAIN, ETIMEDOUT)
	[ "$(count futex_wait_req)" -eq "$(( $(said 'futex waits') + 2 ))" ]
	[ "$(count futex_wait)" -eq "$(( $(said 'futex waits') + 2 ))" ]
	[ "$(count futex_wake)" -eq "$(said 'futex wakes')" ]
	woken=$(awk '/ pthread futex_wake / { for (i = 1; i <= NF; i++) if ($i ~ /^woken=/) { sub(/woken=/, "", $i); n += $i } } END { print n + 0 }' \
		"$BATS_TEST_TMPDIR/t.txt")
	[ "$woken" -eq "$(said 'threads woken')" ]
	grep -q ' futex_wait_req .* val=8 op=0 timeout_ns=-1 ' "$BATS_TEST_TMPDIR/t.txt"
	grep -q ' futex_wait_req .* val=7 op=0 timeout_ns=1000000 ' "$BATS_TEST_TMPDIR/t.txt"
	grep -q ' futex_wait .* ret=11 ' "$BATS_TEST_TMPDIR/t.txt"  # EAGAIN
	grep -q ' futex_wait .* ret=110 ' "$BATS_TEST_TMPDIR/t.txt" # ETIMEDOUT
	run -0 ptt-dump --check "$BATS_TEST_TMPDIR/t.ptt"
	[[ "$output" == *" 0 violations: ok" ]]
	# the readers name the futex by its symbol, and a filter finds it by that name
	run -0 ptt-stat -n 0 "$BATS_TEST_TMPDIR/t.ptt"
	[[ "$output" == *$'\nfutex_lock_word '*futex* ]]
	ptt-filter --object=futex_lock_word "$BATS_TEST_TMPDIR/t.ptt" | ptt-dump >"$BATS_TEST_TMPDIR/sel.txt"
	[ "$(grep -c ' pthread futex_wait_req ' "$BATS_TEST_TMPDIR/sel.txt")" -eq "$(said 'futex waits')" ]
}

@test "the futex class can be left out (-e), and other system calls are untouched then too" {
	ptt-record -q -e mutex -o "$BATS_TEST_TMPDIR/t.ptt" -- "$EXAMPLES/futex_mutex" 200 >"$BATS_TEST_TMPDIR/out.txt"
	[ "$(said syscall)" = ok ]
	ptt-dump "$BATS_TEST_TMPDIR/t.ptt" >"$BATS_TEST_TMPDIR/t.txt"
	[ "$(count futex_wait_req)" -eq 0 ]
	[ "$(count futex_wake)" -eq 0 ]
}

@test "ptt-stat: the futex by its symbol, its waits contended, the FUTEX column; --brief" {
	futex_c
	run -0 --separate-stderr ptt-stat "$BATS_TEST_TMPDIR/t.ptt"
	[ -z "$stderr" ]
	waits=$(( $(said 'futex waits') ))
	row=$(grep '^futex_lock_word ' <<<"$output")
	read -r name kind acq cont _ <<<"$row"
	[ "$kind" = futex ]
	[ "$acq" -eq "$waits" ]
	[ "$cont" -eq "$waits" ]
	[[ "$output" == *"FUTEX(ms)"* ]]
	# each worker spent time in futex waits: its FUTEX column is not 0
	[ "$(awk '$3 == "worker" && $NF > 0' <<<"$output" | wc -l)" -ge 1 ]
	[[ "$output" != *"note:"* ]]
	run -0 --separate-stderr ptt-stat --brief "$BATS_TEST_TMPDIR/t.ptt"
	[[ "$output" == *"futex_lock_word      futex  $waits futex waits, "* ]]
	run -0 --separate-stderr ptt-stat --csv "$BATS_TEST_TMPDIR/t.ptt"
	grep -q ',futex_lock_word,futex,' <<<"$output"
	grep -q ',futex_wait_ns$' <<<"$output"
}

@test "ptt-csv, ptt-json, ptt-dump --human and Paje show futex waits" {
	futex_c
	run -0 --separate-stderr ptt-csv --states "$BATS_TEST_TMPDIR/t.ptt"
	grep -q ',futex_wait,' <<<"$output"
	run -0 --separate-stderr ptt-json "$BATS_TEST_TMPDIR/t.ptt"
	[[ "$output" == *'"Blocked on futex"'* ]]
	run -0 --separate-stderr ptt-dump --human "$BATS_TEST_TMPDIR/t.ptt"
	[[ "$output" == *"waits on futex futex_lock_word (if it still reads 2)"* ]]
	[[ "$output" == *"wakes futex futex_lock_word: 1 woken (1 asked)"* ]]
	ptt-paje "$BATS_TEST_TMPDIR/t.ptt" >"$BATS_TEST_TMPDIR/t.paje"
	grep -q '^5 FW ST_Thread "Blocked on futex"' "$BATS_TEST_TMPDIR/t.paje"
	grep -q ' ST_Thread T[0-9]* FW' "$BATS_TEST_TMPDIR/t.paje"
	assert_paje_valid "$BATS_TEST_TMPDIR/t.paje"
	assert_vite_clean "$BATS_TEST_TMPDIR/t.paje"
	ptt-paje --objects "$BATS_TEST_TMPDIR/t.ptt" >"$BATS_TEST_TMPDIR/o.paje"
	grep -q ' CT_Futex ' "$BATS_TEST_TMPDIR/o.paje"
	assert_paje_valid "$BATS_TEST_TMPDIR/o.paje"
	assert_vite_clean "$BATS_TEST_TMPDIR/o.paje"
}

@test "Rust's std Mutex: ptt-stat shows it by name, with its futex waits and their time" {
	rust rust_mutex
	record "$EXAMPLES/rust_mutex" 2000
	[ "$(said acquisitions)" = "8000 (expected 8000)" ]
	run -0 --separate-stderr ptt-stat "$BATS_TEST_TMPDIR/t.ptt"
	# a lock: its waiters wake it at their unlock (the model's futex rule), so it is in the LOCKS table
	row=$(sed -n '/^LOCKS/,/^$/p' <<<"$output" | grep '^rust_mutex::RUST_LOCK')
	read -r name kind acq cont pct wait _ <<<"$row"
	[ "$name" = rust_mutex::RUST_LOCK ] # Rust's legacy mangling, its hash left out
	[ "$kind" = futex ]
	[ "$acq" -gt 0 ]
	[ "$cont" -eq "$acq" ]
	awk -v w="$wait" 'BEGIN { exit !(w > 0) }'
	# the site is the program's own closure, which rustc inlined with std's Mutex::lock into a std
	# frame: its inline level (DWARF), at the line of rust_mutex.rs that takes the lock
	site=$(grep -A2 '^WAITS BY SITE' <<<"$output" | grep 'RUST_LOCK')
	[[ "$site" == *" rust_mutex::main::"*" (rust_mutex) at rust_mutex.rs:"* ]]
	line=${site##*rust_mutex.rs:}
	[[ "$(sed -n "${line}p" "$PTT_ROOT/examples/rust_mutex.rs")" == *"RUST_LOCK.lock()"* ]]
	# folded stacks show the inline levels as frames, root first: the closure, then the std Mutex
	run -0 --separate-stderr ptt-stat --folded=wait "$BATS_TEST_TMPDIR/t.ptt"
	[[ "$output" == *";rust_mutex::main::"*";"*"Mutex"*"::lock;"*"[futex rust_mutex::RUST_LOCK] "* ]]
	run -0 --separate-stderr ptt-stat --brief "$BATS_TEST_TMPDIR/t.ptt"
	[[ "$output" == *"rust_mutex::RUST_LOCK"*" futex  "*" futex waits, "* ]]
}

@test "Rust's Condvar: a futex whose waiters never wake it is waiting for work, not a contended lock" {
	rust rust_queue
	record "$EXAMPLES/rust_queue" 100
	[ "$(said items)" = "100 sum 5050 (expected 5050)" ]
	run -0 --separate-stderr ptt-stat "$BATS_TEST_TMPDIR/t.ptt"
	[ "$stderr" = "" ]
	# NOT_EMPTY's row is in the second table (waiting for work), with every worker's wait
	stat=$output
	work=$(sed -n '/^WAITING FOR WORK/,/^$/p' <<<"$stat")
	locks=$(sed -n '/^LOCKS/,/^$/p' <<<"$stat")
	read -r name kind acq _ <<<"$(grep '^rust_queue::NOT_EMPTY ' <<<"$work")"
	[ "$kind" = futex ]
	# a wait for most items (an item every 2 ms; a worker preempted under load finds one queued and waits
	# not: 100 of 100 quiet, fewer on a busy machine)
	[ "$acq" -ge 50 ]
	run ! grep -q 'NOT_EMPTY' <<<"$locks"
	# its wait time is counted as waiting for work, not as contention
	wait=$(awk '$1 == "rust_queue::NOT_EMPTY" { print $6 }' <<<"$work")
	idle=$(sed -n 's/^waiting for work: \([0-9.]*\) ms .*/\1/p' <<<"$stat")
	contention=$(sed -n 's/^contention: \([0-9.]*\) ms .*/\1/p' <<<"$stat")
	awk -v w="$wait" -v i="$idle" -v c="$contention" 'BEGIN { exit !(w > 0 && i >= w && c < w) }'
	run -0 --separate-stderr ptt-stat --brief "$BATS_TEST_TMPDIR/t.ptt"
	[ "$stderr" = "" ]
	[[ "$output" == *"waiting for work (no contention): "*"most on rust_queue::NOT_EMPTY (futex)"* ]]
	brief=$output
	run ! grep -q 'NOT_EMPTY.*futex waits' <<<"$brief"
}

@test "a Rust deadlock through two Mutexes: ptt-deadlock lists both threads blocked for ever in futex waits, says why no cycle, exit 6" {
	rust rust_deadlock
	run timeout -k 20 -s INT 3 ptt-record -q -o "$BATS_TEST_TMPDIR/t.ptt" -- "$EXAMPLES/rust_deadlock" # -k: never hang the suite (LeakSanitizer at exit, seen once)
	run -6 --separate-stderr ptt-deadlock "$BATS_TEST_TMPDIR/t.ptt"
	[ -z "$stderr" ]
	[[ "$output" == *"blocked for ever: waiting for locks at the end of the trace (process "* ]]
	[ "$(grep -c ' waits since .* for futex rust_deadlock::LOCK_[AB]' <<<"$output")" -eq 2 ]
	grep -q 'for futex rust_deadlock::LOCK_A (owner unknown) at ' <<<"$output"
	grep -q 'for futex rust_deadlock::LOCK_B (owner unknown) at ' <<<"$output"
	# each wait is named at the program's closure (inlined into std), at the line taking that lock
	for l in A B; do
		w=$(grep " for futex rust_deadlock::LOCK_$l (owner unknown) at " <<<"$output")
		[[ "$w" == *" at rust_deadlock::main::"*" at rust_deadlock.rs:"* ]]
		[[ "$(sed -n "${w##*rust_deadlock.rs:}p" "$PTT_ROOT/examples/rust_deadlock.rs")" == *"LOCK_$l.lock()"* ]]
	done
	# the main thread's join is named in main, past std's join
	[[ "$output" == *"to end"$'\n'"    waiting at rust_deadlock.rs:"*" in rust_deadlock::main (from "* ]]
	[[ "$output" == *"the owners of futex-based locks (Rust's std Mutex, parking_lot, InnoDB) and of Java monitors are not in the trace"* ]]
	[ "${lines[-1]}" = "no lock-order inversion and no deadlock ptt can prove, but 2 threads were blocked for ever waiting for locks, owners unknown" ]
	# ptt-stat counts the two waits as open at the end
	run -0 --separate-stderr ptt-stat --brief "$BATS_TEST_TMPDIR/t.ptt"
	[[ "$output" == *"2 waits were still open at the end"* ]]
}

# the same note from ptt-stat, ptt-stat --brief, ptt-deadlock and ptt-record's summary; ptt-stat
# measured nothing of the program's locks: exit 7, said last (on stderr for CSV and folded stacks)
assert_note() {
	local measured="not measured: this program's locks are out of ptt's sight (exit status 7)"
	run -7 --separate-stderr ptt-stat --brief "$BATS_TEST_TMPDIR/t.ptt"
	grep -qxF "$1" <<<"$output"
	[ "${lines[-1]}" = "$measured" ]
	[ -z "$stderr" ]
	run -7 --separate-stderr ptt-stat "$BATS_TEST_TMPDIR/t.ptt"
	grep -qxF "$1" <<<"$output"
	[ "${lines[-1]}" = "$measured" ]
	[ -z "$stderr" ]
	run -7 --separate-stderr ptt-stat --csv "$BATS_TEST_TMPDIR/t.ptt"
	[[ "$output" == "object,name,kind,"* ]]
	[[ "$output" != *"not measured"* ]]
	[ "${stderr_lines[-1]}" = "ptt-stat: not measured: ${1#note: } (exit status 7)" ]
	run -7 --separate-stderr ptt-stat --folded=locks "$BATS_TEST_TMPDIR/t.ptt"
	[[ "$output" != *"not measured"* ]]
	[ "${stderr_lines[-1]}" = "ptt-stat: not measured: ${1#note: } (exit status 7)" ]
	# ptt-dump --check checks the file, which it could: 0 (ptt-dump(1) says why)
	run -0 --separate-stderr ptt-dump --check "$BATS_TEST_TMPDIR/t.ptt"
	[[ "${lines[-1]}" == *" 0 violations: ok" ]]
	# nothing found where the locks are out of sight is no verdict: exit 7, said last
	run -7 --separate-stderr ptt-deadlock "$BATS_TEST_TMPDIR/t.ptt"
	[ "${lines[-2]}" = "$1" ]
	[ "${lines[-1]}" = "not checked: this program's locks are out of ptt's sight (exit status 7)" ]
}

@test "a JVM: every tool says Java's locks are out of sight" {
	command -v java >/dev/null || skip "java not installed"
	ptt-record -o "$BATS_TEST_TMPDIR/t.ptt" -- java -version 2>"$BATS_TEST_TMPDIR/err.txt"
	note="note: a JVM ran here (libjvm.so): who holds a Java monitor or a java.util.concurrent lock is out of ptt's sight (taken inside the JVM); only a thread parking to enter a monitor is seen"
	grep -qxF "$note" "$BATS_TEST_TMPDIR/err.txt"
	assert_note "$note"
}

@test "a Go program (a .note.go.buildid section): the note says goroutines are out of sight" {
	command -v objcopy >/dev/null || skip "objcopy (binutils) not installed"
	printf 'Go\0\0' >"$BATS_TEST_TMPDIR/note"
	objcopy --add-section .note.go.buildid="$BATS_TEST_TMPDIR/note" "$EXAMPLES/futex_mutex" "$BATS_TEST_TMPDIR/gofutex"
	ptt-record -o "$BATS_TEST_TMPDIR/t.ptt" -- "$BATS_TEST_TMPDIR/gofutex" 50 2>"$BATS_TEST_TMPDIR/err.txt" >/dev/null
	note="note: a Go program ran here: goroutines synchronise in Go's runtime with futex calls of its own, which ptt does not see"
	grep -qxF "$note" "$BATS_TEST_TMPDIR/err.txt"
	assert_note "$note"
	# the same program without the section: no note, and measured (exit 0, no "not measured" line)
	record "$EXAMPLES/futex_mutex" 50
	run -0 --separate-stderr ptt-stat --brief "$BATS_TEST_TMPDIR/t.ptt"
	[[ "$output" != *"note:"* ]]
	[[ "$output" != *"not measured"* ]]
	run -0 --separate-stderr ptt-stat --csv "$BATS_TEST_TMPDIR/t.ptt"
	[ -z "$stderr" ]
	run -0 --separate-stderr ptt-deadlock "$BATS_TEST_TMPDIR/t.ptt"
	[[ "$output" != *"note:"* ]]
}

@test "a static program (libptt.so never loaded): the note says nothing was seen" {
	printf 'int main(void) { return 0; }\n' >"$BATS_TEST_TMPDIR/s.c"
	cc -static -o "$BATS_TEST_TMPDIR/static" "$BATS_TEST_TMPDIR/s.c" 2>/dev/null || skip "no static libc to link with"
	ptt-record -q -o "$BATS_TEST_TMPDIR/t.ptt" -- "$BATS_TEST_TMPDIR/static" 2>/dev/null
	assert_note "note: no traced process: the program never loaded libptt.so (statically linked, as Go programs without cgo are), so none of its synchronisation was seen"
}

@test "model: a futex wait is a Blocked on futex frame; a wake that woke someone links to the woken, EAGAIN does not" {
	trace ft \
		'0.000000002 10 10 pthread thread_create handle=0x1 start=0x2 child=11 ret=0' \
		'0.000000003 10 11 pthread thread_begin handle=0x1 start=0x2 parent=10' \
		'0.000000004 10 11 pthread futex_wait_req futex=0x40 val=2 op=0 timeout_ns=-1' \
		'0.000000006 10 10 pthread futex_wake futex=0x40 count=1 op=1 woken=1' \
		'0.000000007 10 11 pthread futex_wait futex=0x40 ret=0' \
		'0.000000008 10 11 pthread futex_wait_req futex=0x40 val=2 op=0 timeout_ns=-1' \
		'0.000000010 10 11 pthread futex_wait futex=0x40 ret=11'
	run -0 --separate-stderr ptt-dump --check "$BATS_TEST_TMPDIR/ft.txt"
	[[ "$output" == *" 0 violations: ok" ]]
	run -0 --separate-stderr ptt-csv --states "$BATS_TEST_TMPDIR/ft.txt"
	grep -qx '10,11,,futex_wait,0x40,,4,7,3,1' <<<"$output"
	grep -qx '10,11,,futex_wait,0x40,,8,10,2,1' <<<"$output"
	ptt-paje "$BATS_TEST_TMPDIR/ft.txt" >"$BATS_TEST_TMPDIR/ft.paje"
	[ "$(grep -c '^13 [0-9.]* L_wake ' "$BATS_TEST_TMPDIR/ft.paje")" -eq 1 ]
	grep -q '^13 0.000000007 L_wake P1 T2 wake ' "$BATS_TEST_TMPDIR/ft.paje"
	assert_paje_valid "$BATS_TEST_TMPDIR/ft.paje"
	run -0 --separate-stderr ptt-stat "$BATS_TEST_TMPDIR/ft.txt"
	# one waiter, always expecting 2, never waking it: a parking word (the futex rule), counted as a lock
	grep -q '^0x40 *park *2 *2 ' <<<"$output"
}

@test "model: the futex rule tells a lock's word, a Condvar's counter and a thread's parking word apart" {
	# 0x40: tid 11 returns from its wait and wakes it at its unlock (a lock); 0x80: waits expecting
	# 1, then 2, woken by another (a counter); 0x100: two waiters expecting 0, never woken by them;
	# 0x200 and 0x300: waits that never return (a deadlock: they stay locks); 0x80's last wait expects
	# 1 again and finds the word changed (EAGAIN: read before a notification, still a counter);
	# 0x400: expects 1, 3, then sleeps on 2 (a word that goes down: a lock)
	trace fr \
		'0.000000002 10 10 pthread thread_create handle=0x1 start=0x2 child=11 ret=0' \
		'0.000000003 10 11 pthread thread_begin handle=0x1 start=0x2 parent=10' \
		'0.000000004 10 11 pthread futex_wait_req futex=0x40 val=2 op=0 timeout_ns=-1' \
		'0.000000006 10 10 pthread futex_wake futex=0x40 count=1 op=1 woken=1' \
		'0.000000007 10 11 pthread futex_wait futex=0x40 ret=0' \
		'0.000000008 10 11 pthread futex_wake futex=0x40 count=1 op=1 woken=0' \
		'0.000000010 10 11 pthread futex_wait_req futex=0x80 val=1 op=0 timeout_ns=-1' \
		'0.000000012 10 10 pthread futex_wake futex=0x80 count=1 op=1 woken=1' \
		'0.000000013 10 11 pthread futex_wait futex=0x80 ret=0' \
		'0.000000014 10 11 pthread futex_wait_req futex=0x80 val=2 op=0 timeout_ns=-1' \
		'0.000000016 10 10 pthread futex_wake futex=0x80 count=2147483647 op=1 woken=1' \
		'0.000000017 10 11 pthread futex_wait futex=0x80 ret=0' \
		'0.000000017 10 11 pthread futex_wait_req futex=0x80 val=1 op=0 timeout_ns=-1' \
		'0.000000017 10 11 pthread futex_wait futex=0x80 ret=11' \
		'0.000000017 10 11 pthread futex_wait_req futex=0x400 val=1 op=0 timeout_ns=-1' \
		'0.000000017 10 10 pthread futex_wake futex=0x400 count=1 op=1 woken=1' \
		'0.000000017 10 11 pthread futex_wait futex=0x400 ret=0' \
		'0.000000017 10 11 pthread futex_wait_req futex=0x400 val=3 op=0 timeout_ns=-1' \
		'0.000000017 10 10 pthread futex_wake futex=0x400 count=1 op=1 woken=1' \
		'0.000000017 10 11 pthread futex_wait futex=0x400 ret=0' \
		'0.000000017 10 11 pthread futex_wait_req futex=0x400 val=2 op=0 timeout_ns=-1' \
		'0.000000017 10 10 pthread futex_wake futex=0x400 count=1 op=1 woken=1' \
		'0.000000017 10 11 pthread futex_wait futex=0x400 ret=0' \
		'0.000000018 10 11 pthread futex_wait_req futex=0x100 val=0 op=0 timeout_ns=-1' \
		'0.000000019 10 10 pthread futex_wait_req futex=0x100 val=0 op=0 timeout_ns=-1' \
		'0.000000020 10 11 pthread futex_wait futex=0x100 ret=11' \
		'0.000000021 10 10 pthread futex_wait futex=0x100 ret=11' \
		'0.000000022 10 11 pthread futex_wait_req futex=0x200 val=2 op=0 timeout_ns=-1' \
		'0.000000030 10 10 pthread futex_wait_req futex=0x300 val=0 op=0 timeout_ns=-1'
	run -0 --separate-stderr ptt-stat "$BATS_TEST_TMPDIR/fr.txt"
	[ "$stderr" = "" ]
	locks=$(sed -n '/^LOCKS/,/^$/p' <<<"$output")
	work=$(sed -n '/^WAITING FOR WORK/,/^$/p' <<<"$output")
	[ "$(awk '$1 ~ /^0x/ { print $1, $2 }' <<<"$locks" | sort)" = "$(printf '0x100 futex\n0x200 futex\n0x300 futex\n0x40 futex\n0x400 futex')" ]
	[ "$(awk '$1 ~ /^0x/ { print $1, $2 }' <<<"$work")" = "0x80 futex" ]
}

@test "syscall() answers in a library constructor that runs before libptt's (the bootstrap before resolution)" {
	cat >"$BATS_TEST_TMPDIR/early.c" <<'C'
#include <errno.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>
static unsigned w = 1;
long early_pid, early_wait, early_errno;
__attribute__((constructor)) static void early(void)
{
	early_pid = syscall(SYS_getpid);
	early_wait = syscall(SYS_futex, &w, FUTEX_WAIT_PRIVATE, 0, NULL, NULL, 0); /* w is 1: EAGAIN */
	early_errno = errno;
}
C
	cat >"$BATS_TEST_TMPDIR/main.c" <<'C'
#include <errno.h>
#include <stdio.h>
#include <unistd.h>
extern long early_pid, early_wait, early_errno;
int main(void)
{
	int ok = early_pid == getpid() && early_wait == -1 && early_errno == EAGAIN;
	printf("%s\n", ok ? "early ok" : "early WRONG");
	return !ok;
}
C
	cc -shared -fPIC -o "$BATS_TEST_TMPDIR/libearly.so" "$BATS_TEST_TMPDIR/early.c"
	cc -o "$BATS_TEST_TMPDIR/main" "$BATS_TEST_TMPDIR/main.c" -L"$BATS_TEST_TMPDIR" -learly -Wl,-rpath,"$BATS_TEST_TMPDIR"
	# libearly's constructor runs before libptt's (the loader initialises it first)
	run -0 env LD_DEBUG=files LD_PRELOAD="$PTT_LIBPTT" "$BATS_TEST_TMPDIR/main"
	[[ "$output" == *"calling init: $BATS_TEST_TMPDIR/libearly.so"*"calling init: $PTT_LIBPTT"* ]]
	run -0 --separate-stderr ptt-record -q -o "$BATS_TEST_TMPDIR/t.ptt" -- "$BATS_TEST_TMPDIR/main"
	[ "$output" = "early ok" ]
	[ -z "$stderr" ]
}

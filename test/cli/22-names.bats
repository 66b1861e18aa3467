#!/usr/bin/env bats
# One naming (ptt-trace(5), NAMES): every tool names an object the same way, names are resolved
# when the trace is read, and a trace read where its program is gone or changed names what it can.
bats_require_minimum_version 1.5.0
load helpers

# inv.c: two static mutexes (one inside a struct, at offset 8) taken in both orders, one after
# the other; the first worker named by the program
write_inv() {
	cat >"$1" <<C
#define _GNU_SOURCE
#include <pthread.h>
static pthread_mutex_t ${2:-global_lock} = PTHREAD_MUTEX_INITIALIZER;
struct { int x; pthread_mutex_t inner; } ${3:-wrapped} = { 0, PTHREAD_MUTEX_INITIALIZER };
static void *ab(void *a) { pthread_setname_np(pthread_self(), "first"); pthread_mutex_lock(&${2:-global_lock}); pthread_mutex_lock(&${3:-wrapped}.inner);
	pthread_mutex_unlock(&${3:-wrapped}.inner); pthread_mutex_unlock(&${2:-global_lock}); return a; }
static void *ba(void *a) { pthread_mutex_lock(&${3:-wrapped}.inner); pthread_mutex_lock(&${2:-global_lock});
	pthread_mutex_unlock(&${2:-global_lock}); pthread_mutex_unlock(&${3:-wrapped}.inner); return a; }
int main(void) { pthread_t t; pthread_create(&t, 0, ab, 0); pthread_join(t, 0);
	pthread_create(&t, 0, ba, 0); pthread_join(t, 0); return 0; }
C
}

# what a tool exits with on inv's trace: ptt-deadlock has found the potential deadlock
exit_of() {
	[ "$1" = ptt-deadlock ] && echo 1 || echo 0
}

# the words of stdin that name one of the two objects, each once, sorted
object_words() {
	grep -oE '(global|other)_lock[^] ,"()]*|wrapped[^] ,"()]*' | sort -u
}

@test "a static mutex has one name in every tool, and ptt-filter takes the name ptt-stat prints" {
	T=$BATS_TEST_TMPDIR
	write_inv "$T/inv.c"
	cc -O2 -o "$T/inv" "$T/inv.c" -pthread
	run -0 ptt-record -q -o "$T/t.ptt" -- "$T/inv"
	want=$'global_lock\nwrapped+0x8'
	for tool in "ptt-stat -n 0" "ptt-dump --human" ptt-csv "ptt-csv --states" ptt-json "ptt-paje --objects" ptt-deadlock; do
		# shellcheck disable=SC2086
		run --separate-stderr $tool "$T/t.ptt"
		[ "$status" -eq "$(exit_of "$tool")" ]
		[ -z "$stderr" ] || { echo "$tool: $stderr"; return 1; }
		got=$(object_words <<<"$output")
		[ "$got" = "$want" ] || { echo "$tool names them: $got"; return 1; }
	done
	# the Paje file is still valid with those names in it
	ptt-paje --objects "$T/t.ptt" >"$T/t.paje"
	assert_paje_valid "$T/t.paje"
	assert_vite_clean "$T/t.paje"
	# ptt-deadlock's cycle names both
	run -1 --separate-stderr ptt-deadlock "$T/t.ptt"
	[[ "$output" == *"wrapped+0x8 (0x"*") taken while holding global_lock (0x"* ]]
	# the name ptt-stat prints selects the object's events
	run -0 ptt-stat -n 0 "$T/t.ptt"
	name=$(awk '$2 == "mutex" && $1 ~ /^wrapped/ { print $1; exit }' <<<"$output")
	[ "$name" = "wrapped+0x8" ]
	run -0 --separate-stderr ptt-filter -n --mutex="$name" "$T/t.ptt"
	ptt-filter -n --mutex="$name" "$T/t.ptt" | ptt-dump >"$T/sel.txt"
	[ "$(grep -c ' mutex_lock mutex=' "$T/sel.txt")" -eq 2 ]
	[ "$(grep -c ' mutex_unlock mutex=' "$T/sel.txt")" -eq 2 ]
	[ "$(awk '$5 ~ /^mutex_/ { print $6 }' "$T/sel.txt" | sort -u | wc -l)" -eq 1 ]
}

@test "a trace read where its program is gone or rebuilt names what it can and says once what it cannot" {
	T=$BATS_TEST_TMPDIR
	mkdir "$T/bin"
	write_inv "$T/inv.c"
	cc -O2 -o "$T/bin/inv" "$T/inv.c" -pthread
	cp "$T/bin/inv" "$T/inv.orig"
	run -0 ptt-record -q -o "$T/t.ptt" -- "$T/bin/inv"
	run -0 --separate-stderr ptt-stat -n 0 "$T/t.ptt"
	[ -z "$stderr" ]
	[[ "$output" == *$'\nglobal_lock '* ]]
	# gone: the objects are named by their offset in the program, the program's thread names
	# (an event) and its command stay; one line says why, once, with the file's path
	rm "$T/bin/inv"
	for tool in "ptt-stat -n 0" "ptt-dump --human" ptt-csv ptt-json "ptt-paje --objects" ptt-deadlock; do
		# shellcheck disable=SC2086
		run --separate-stderr $tool "$T/t.ptt"
		[ "$status" -eq "$(exit_of "$tool")" ]
		tname=${tool%% *}
		[ "$stderr" = "$tname: $T/bin/inv: No such file or directory; its addresses are named by offset" ] ||
			{ echo "$tool said: $stderr"; return 1; }
		[[ "$output" == *"inv+0x"* ]] || { echo "$tool: no inv+0x name"; return 1; }
		[[ "$output" != *global_lock* ]]
	done
	run -1 --separate-stderr ptt-deadlock "$T/t.ptt"
	[[ "$output" == *" by thread "*" (first) at "* ]]
	run -0 --separate-stderr ptt-stat -n 0 "$T/t.ptt"
	[[ "$output" == *" inv "* ]]
	gone=$(awk '$2 == "mutex" { print $1 }' <<<"$output" | sort)
	[ "$(wc -l <<<"$gone")" -eq 2 ]
	# rebuilt with other names at the same places: not the file recorded, so nothing is named from it
	write_inv "$T/inv2.c" other_lock other_struct
	cc -O2 -o "$T/bin/inv" "$T/inv2.c" -pthread
	run -0 --separate-stderr ptt-stat -n 0 "$T/t.ptt"
	[ "$stderr" = "ptt-stat: $T/bin/inv: not the file recorded (its build-id differs); its addresses are named by offset" ]
	[[ "$output" != *other_* ]]
	[ "$(awk '$2 == "mutex" { print $1 }' <<<"$output" | sort)" = "$gone" ]
	# the file recorded, back where it was: named again, silently
	cp "$T/inv.orig" "$T/bin/inv"
	run -0 --separate-stderr ptt-stat -n 0 "$T/t.ptt"
	[ -z "$stderr" ]
	[[ "$output" == *$'\nglobal_lock '* ]]
	[[ "$output" == *$'\nwrapped+0x8 '* ]]
}

@test "a rotated file alone carries its modules' build-ids: read without the program, it says so" {
	T=$BATS_TEST_TMPDIR
	mkdir "$T/bin"
	cp "$EXAMPLES/lossy_order" "$T/bin/"
	ln -s "$PTT_BUILD/lib" "$T/lib" # its libptt.so, where its run path looks
	run -0 --separate-stderr ptt-record -m 256k -f 3 -o "$T/r.ptt" -- "$T/bin/lossy_order" 40000
	files=("$T"/r.ptt.*)
	[ "${#files[@]}" -eq 3 ]
	# the middle file begins mid-run: its head repeats each module with its build-id
	ptt-dump "${files[1]}" >"$T/mid.txt"
	[ "$(grep -c ' module_build_id base=' "$T/mid.txt")" -eq "$(grep -c ' module base=' "$T/mid.txt")" ]
	grep -q " module_build_id .* build_id=\"[0-9a-f]\{16,\}\"\$" "$T/mid.txt"
	run -0 --separate-stderr ptt-stat -n 0 "${files[1]}"
	[ -z "$stderr" ]
	rm "$T/bin/lossy_order"
	run -0 --separate-stderr ptt-stat -n 0 "${files[1]}"
	[ "$stderr" = "ptt-stat: $T/bin/lossy_order: No such file or directory; its addresses are named by offset" ]
	[[ "$output" == *"lossy_order+0x"* ]]
}

@test "a name too long for its place is cut one way by every tool, with a visible mark" {
	# the inversion's lock_a and thread "first" given names of 281 and 211 characters
	local a b t="$BATS_TEST_TMPDIR/long.txt"
	a=$(printf 'lock_a_%.0s' $(seq 40))x
	b=$(printf 'worker_%.0s' $(seq 30))y
	sed -e "s/name=\"lock_a\"/name=\"$a\"/" -e "s/name=\"first\"/name=\"$b\"/" \
		"$BATS_TEST_DIRNAME/frozen/inversion.txt" >"$t"
	# ptt-deadlock: the object cut keeps its address, the thread cut its parenthesis
	run -1 --separate-stderr ptt-deadlock "$t"
	[ "$stderr" = "" ]
	[ "${lines[1]}" = "  lock_b (0x5560609e3080) taken while holding ${a:0:139}… (0x5560609e30c0): first by thread 4127 (${b:0:85}…) at 0.008189490 s" ]
	[ "${lines[2]}" = "  ${a:0:139}… (0x5560609e30c0) taken while holding lock_b (0x5560609e3080): first by thread 4128 (second) at 0.008510235 s" ]
	# ptt-stat: the object in its table, the thread in its 16 columns
	run -0 --separate-stderr ptt-stat "$t"
	[ "$stderr" = "" ]
	[[ "$output" == *$'\n'"${a:0:92}… mutex "* ]]
	[[ "$output" == *" 4127 ${b:0:15}…       0.092 "* ]]
	# a name that fits is never cut, nor marked
	[[ "$output" != *"lock_b…"* ]]
	run -0 --separate-stderr ptt-csv "$t"
	[[ "$output" == *",\"$b\""* || "$output" == *",$b,"* || "$output" == *",$b"* ]]
	[[ "$output" != *"…"* ]]
}

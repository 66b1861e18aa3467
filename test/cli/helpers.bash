# Shared by the bats tests: tools from $PTT_BUILD (default: ./build), scratch in $BATS_TEST_TMPDIR.
PTT_ROOT="$(cd "$BATS_TEST_DIRNAME/../.." && pwd)"
PTT_BUILD="${PTT_BUILD:-$PTT_ROOT/build}"
PATH="$PTT_BUILD/bin:$PATH"
EXAMPLES="$PTT_BUILD/examples"
# the examples link libptt.so from the normal build (the runtime is never sanitized)
export PTT_LIBPTT="${PTT_LIBPTT:-$PTT_BUILD/lib/libptt.so}"

# record CMD... into $BATS_TEST_TMPDIR/t.ptt quietly; program output in out.txt/err.txt
record() {
	ptt-record -q -o "$BATS_TEST_TMPDIR/t.ptt" -- "$@" >"$BATS_TEST_TMPDIR/out.txt" 2>"$BATS_TEST_TMPDIR/err.txt"
}

# assert a Paje file is read whole by PajeNG: exit 0 and no diagnostic
assert_paje_valid() {
	command -v pj_dump >/dev/null || skip "pj_dump (pajeng) not installed"
	run pj_dump -q "$1"
	[ "$status" -eq 0 ] || { echo "pj_dump exit $status: $output"; return 1; }
	[ -z "$output" ] || { echo "pj_dump diagnostic: $output"; return 1; }
}

# assert ViTE loads a Paje file with 0 errors and 0 warnings (skipped with a reason without ViTE)
assert_vite_clean() {
	command -v vite >/dev/null || skip "vite not installed"
	local rt="$BATS_TEST_TMPDIR/xdg"; mkdir -p "$rt"; chmod 700 "$rt"
	run env QT_QPA_PLATFORM=offscreen XDG_RUNTIME_DIR="$rt" timeout 120 vite "$1" -e "$BATS_TEST_TMPDIR/vite.svg"
	echo "$output" | grep -qiE '(^|[^0-9])[1-9][0-9]* (error|warning)' && { echo "vite: $output"; return 1; }
	echo "$output" | grep -q '0 errors and 0 warnings' || { echo "vite did not report: $output"; return 1; }
}

# a 4 MB input (600000 lines in a fixed shuffled order), big enough that pigz -p 2, zstd -T2,
# xz -T2 -1 --block-size=256KiB and sort --parallel=2 -S 12M each run at least 2 worker threads
big_input() {
	[ -s "$BATS_TEST_TMPDIR/in.txt" ] ||
		awk 'BEGIN { for (i = 0; i < 600000; i++) print (i * 7919) % 600000 }' >"$BATS_TEST_TMPDIR/in.txt"
}

# assert the trace FILE shows at least N threads created, and events of their own
# (beyond thread_begin/thread_end/thread_name) from every one of them
assert_workers() {
	local got
	got=$(ptt-dump -n "$1" | awk '
		$5 == "thread_create" { for (i = 6; i <= NF; i++) if ($i ~ /^child=[1-9]/) { child[substr($i, 7)] = 1; n++ } }
		$5 != "thread_begin" && $5 != "thread_end" && $5 != "thread_name" { own[$3]++ }
		END { busy = 0; for (t in child) if (own[t] > 0) busy++; print n + 0, busy }')
	[ "${got% *}" -ge "$2" ] || { echo "$1: ${got% *} threads created, wanted at least $2"; return 1; }
	[ "${got#* }" -eq "${got% *}" ] || { echo "$1: only ${got#* } of ${got% *} created threads have events"; return 1; }
}

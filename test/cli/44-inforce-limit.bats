#!/usr/bin/env bats
# The frames forgotten past the one cap (PTT_FRAMES_MAX) are said wherever the state in force is
# told again, by the one module that keeps it (formats/inforce.h): a ptt-index snapshot taken
# after a thread held more than 1024 locks carries the limit event (it wrote none before: a
# window read from the snapshot showed the newest 1024 holds as all there was, while the same
# window read from the start said 76 were forgotten), and a rotated file's head says it too.
bats_require_minimum_version 1.5.0
load helpers

# 1 ms after the last mutex_lock of $1 (the program sleeps 50 ms there), in ns.
after_locks() {
	t=$(ptt-dump -n "$1" | awk '$5 == "mutex_lock" { t = $1 } END { print t }')
	awk -v t="$t" 'BEGIN { split(t, a, "."); printf "%d", a[1] * 1000000000 + a[2] + 1000000 }'
}

@test "a snapshot after 1100 locks held at once carries the limit: a window read from it is the one read from the start" {
	T=$BATS_TEST_TMPDIR
	run -0 --separate-stderr ptt-record -q -o "$T/d.ptt" -- "$EXAMPLES/deep_holds" 1100
	[ "$output" = "held 1100 at once" ]
	# a snapshot right after the last lock (its events counted as ptt-index counts them), and none
	n=$(ptt-dump -n "$T/d.ptt" | awk '$5 == "mutex_lock" { n = NR } END { print n }')
	ptt-index -i "$n" "$T/d.ptt" >"$T/i.ptt" 2>/dev/null
	ptt-index -i 100000000 "$T/d.ptt" >"$T/n.ptt" 2>/dev/null
	ns=$(after_locks "$T/d.ptt")
	# from the snapshot (the file is seekable: read from the last snapshot before the window)
	run -0 --separate-stderr ptt-filter --from="${ns}ns" "$T/i.ptt"
	[[ "$stderr" == *"note: 76 holds and waits in force forgotten"* ]]
	ptt-filter --from="${ns}ns" "$T/i.ptt" >"$T/wi.ptt" 2>/dev/null
	ptt-filter --from="${ns}ns" "$T/n.ptt" >"$T/wn.ptt" 2>/dev/null
	cmp "$T/wi.ptt" "$T/wn.ptt"
	[ "$(ptt-dump -n "$T/wi.ptt" | grep -c ' mutex_lock ')" -eq 1024 ]
	[ "$(ptt-dump -n "$T/wi.ptt" | grep -c ' limit table=10 count=76 limit=1024 ')" -eq 1 ]
	run -0 --separate-stderr ptt-stat "$T/wi.ptt"
	[[ "$output" == *"limit: 76 holds and waits in force forgotten: a thread had more than the 1024 kept at once"* ]]
}

@test "below the cap a snapshot carries no limit" {
	T=$BATS_TEST_TMPDIR
	run -0 --separate-stderr ptt-record -q -o "$T/d.ptt" -- "$EXAMPLES/deep_holds" 1000
	n=$(ptt-dump -n "$T/d.ptt" | awk '$5 == "mutex_lock" { n = NR } END { print n }')
	ptt-index -i "$n" "$T/d.ptt" >"$T/i.ptt"
	run -0 --separate-stderr ptt-filter --from="$(after_locks "$T/d.ptt")ns" "$T/i.ptt"
	[ "$stderr" = "" ]
	ptt-filter --from="$(after_locks "$T/d.ptt")ns" "$T/i.ptt" | ptt-dump -n - >"$T/w.txt"
	[ "$(grep -c ' mutex_lock ' "$T/w.txt")" -eq 1000 ]
	run ! grep -q ' limit ' "$T/w.txt"
}

@test "rotated files: each head says all frames forgotten so far, each file read alone all forgotten by its end" {
	T=$BATS_TEST_TMPDIR
	# 12000 locks held at once: the locks, the sleep and the unlocks make several 64 KiB files
	run -0 --separate-stderr ptt-record -q -m 64k -o "$T/r.ptt" -- "$EXAMPLES/deep_holds" 12000
	[ "$output" = "held 12000 at once" ]
	files=("$T"/r.ptt.*)
	[ "${#files[@]}" -ge 3 ]
	before=0 most=0
	# the whole set read in order (each head skipped): the model forgot 12000 - 1024
	run -0 --separate-stderr ptt-stat -- "${files[@]}"
	[[ "$output" == *"limit: 10976 holds and waits in force forgotten"* ]]
	for f in "${files[@]:1}"; do
		ptt-dump -n "$f" >"$T/d.txt" 2>/dev/null
		t=$(head -n 1 "$T/d.txt" | awk '{ print $1 }')
		awk -v t="$t" '$1 != t { exit } { print }' "$T/d.txt" >"$T/head"
		held=$(grep -c ' mutex_lock ' "$T/head" || true)
		[ "$held" -le 1024 ]
		[ "$held" -gt "$most" ] && most=$held
		count=$(awk '$5 == "limit" && $6 == "table=10" { sub(/count=/, "", $7); n += $7 } END { print n + 0 }' "$T/head")
		# never fewer than the head before said (they are not told again: all so far)
		[ "$count" -ge "$before" ]
		before=$count
		# read alone: those its head says and those forgotten while it was written, never more than all
		run -0 --separate-stderr ptt-stat "$f"
		said=$(printf '%s\n' "$output" | sed -n 's/^limit: \([0-9]*\) holds and waits in force forgotten.*/\1/p')
		echo "$f: head $held holds, limit $count, read alone ${said:-0}"
		[ "${said:-0}" -ge "$count" ]
		[ "${said:-0}" -le 10976 ]
	done
	# the last head (the locks over) says every one; a head told the 1024 kept
	[ "$before" -eq 10976 ]
	[ "$most" -eq 1024 ]
}

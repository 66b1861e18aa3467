#!/usr/bin/env bats
# ptt-picture: the PNG Gantt chart of make demo and of the README, from any directory, with the
# threads' names as they are, grouped and with a capped height at 100+ threads.
bats_require_minimum_version 1.5.0
load helpers

# the PNG signature (file(1) is not on a fresh Debian)
is_png() {
	[ "$(head -c 8 "$1" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ]
}

# the PNG's height in pixels (IHDR: width and height, big-endian, at bytes 16 and 20)
png_height() {
	od -An -tu1 -j 20 -N 4 "$1" | awk '{ print (($1 * 256 + $2) * 256 + $3) * 256 + $4 }'
}

need_r() {
	command -v pj_dump >/dev/null || skip "pj_dump (pajeng) not installed"
	command -v Rscript >/dev/null || skip "R not installed"
}

@test "ptt-picture --help, --version and usage errors" {
	run -0 --separate-stderr ptt-picture --help
	[[ "$output" == "Usage: ptt-picture [OPTION]... TRACE OUT.png"* ]]
	[ -z "$stderr" ]
	run -2 --separate-stderr ptt-picture
	[ -z "$output" ]
	[ "$stderr" = "ptt-picture: a TRACE and an OUT.png are needed"$'\n'"Try 'ptt-picture --help' for more information." ]
	run -2 --separate-stderr ptt-picture --group=tid t.ptt t.png
	[[ "$stderr" == "ptt-picture: --group: 'tid' is not name, none or auto"$'\n'* ]]
	run -2 --separate-stderr ptt-picture -H 10 t.ptt t.png
	[[ "$stderr" == "ptt-picture: --max-height: 10 is under 300 pixels"$'\n'* ]]
	run -2 --separate-stderr ptt-picture --flame=cpu t.ptt t.png
	[[ "$stderr" == "ptt-picture: --flame: 'cpu' is not wait, locks, hold or critical"$'\n'* ]]
	run -2 --separate-stderr ptt-picture "$BATS_TEST_TMPDIR/none.ptt" "$BATS_TEST_TMPDIR/t.png"
	[ "$stderr" = "ptt-picture: $BATS_TEST_TMPDIR/none.ptt: cannot read it" ]
}

@test "ptt-picture draws a PNG with a row per thread, from any directory" {
	need_r
	record "$EXAMPLES/prodcons" -p 2 -c 2 -n 200
	cd "$BATS_TEST_TMPDIR"
	run -0 --separate-stderr ptt-picture -l -t "a title" t.ptt t.png
	[ -z "$stderr" ]
	is_png t.png
	# a row per thread, in the order they began, none grouped
	[ "$(wc -l <<<"$output")" -eq 5 ]
	[ "$(cut -f1 <<<"$output" | sort -u)" = "" ]
	# the rows' tids are the threads' in the order their thread_begin is in the trace
	[ "$(cut -f2 <<<"$output" | cut -d' ' -f1)" = "$(ptt-dump -n t.ptt | awk '$5 == "thread_begin" { print $3 }')" ]
	# 5 rows of 54 pixels and the title, axis and legend: far from the cap
	h=$(png_height t.png)
	[ "$h" -gt 300 ] && [ "$h" -lt 800 ]
	# the committed picture is a PNG too
	is_png "$PTT_ROOT/doc/demo.png"
}

@test "threads that began within one microsecond (pj_dump's precision) are drawn in the trace's order" {
	need_r
	T=$BATS_TEST_TMPDIR
	# three threads whose first states start at the same microsecond; the trace began 30, then 9, then 200
	printf '%s\t0.000001\t0.000002\tRunning\n' "9 b" "30 a" "200 c" >"$T/states.tsv"
	printf 'Running\t0 0 1\n' >"$T/legend.tsv"
	printf '%s\n' "time_ns,time_s,pid,tid,thread_name,event" "1,0,30,30,a,thread_begin" "1,0,30,9,b,thread_begin" \
		"1,0,30,200,c,thread_begin" >"$T/names.csv"
	run -0 --separate-stderr Rscript "$PTT_ROOT/picture/gantt.R" "$T/states.tsv" "$T/legend.tsv" "$T/t.png" x "$T/names.csv" \
		none 2400 list
	[ "$(cut -f2 <<<"$output")" = "$(printf '30 a\n9 b\n200 c')" ]
	is_png "$T/t.png"
	# without the names: by tid, as numbers
	run -0 --separate-stderr Rscript "$PTT_ROOT/picture/gantt.R" "$T/states.tsv" "$T/legend.tsv" "$T/t.png" x "$T/none.csv" \
		none 2400 list
	[ "$(cut -f2 <<<"$output")" = "$(printf '9 b\n30 a\n200 c')" ]
}

@test "ptt-picture draws names as the trace has them ('#', quotes), which Paje cannot carry" {
	need_r
	trace names '0.000001000 10 11 pthread thread_begin handle=0x2 start=0x0 parent=10' \
		'0.000002000 10 11 pthread thread_name target=11 name="queue#1 \"fast\""' \
		'0.000003000 10 12 pthread thread_begin handle=0x3 start=0x0 parent=10' \
		"0.000004000 10 12 pthread thread_name target=12 name=\"a'b#c\"" \
		'0.000010000 10 11 pthread mutex_lock mutex=0x1000 ret=0' \
		'0.000020000 10 11 pthread mutex_unlock mutex=0x1000 ret=0' \
		'0.000030000 10 12 pthread thread_end retval=0x0 how=0'
	# Paje replaces them
	ptt-paje "$BATS_TEST_TMPDIR/names.txt" | grep -q '"11 queue_1 _fast_"'
	run -0 --separate-stderr ptt-picture --list "$BATS_TEST_TMPDIR/names.txt" "$BATS_TEST_TMPDIR/n.png"
	[ -z "$stderr" ]
	[ "$output" = $'\t'"10 x"$'\n\t'"11 queue#1 \"fast\""$'\n\t'"12 a'b#c" ]
	# through a pipe the same
	run -0 --separate-stderr sh -c 'ptt-picture -l - "$1" <"$2"' sh "$BATS_TEST_TMPDIR/m.png" "$BATS_TEST_TMPDIR/names.txt"
	[ "$output" = $'\t'"10 x"$'\n\t'"11 queue#1 \"fast\""$'\n\t'"12 a'b#c" ]
}

@test "ptt-picture at 120 threads: grouped by name, its height capped" {
	need_r
	record "$EXAMPLES/many_threads" 120
	run -0 --separate-stderr ptt-picture -l "$BATS_TEST_TMPDIR/t.ptt" "$BATS_TEST_TMPDIR/t.png"
	[ -z "$stderr" ]
	# the main thread, then the 120 workers (unnamed: named by their start routine, work)
	[ "$(cut -f1 <<<"$output" | uniq -c | awk '{ print $1 " " $2 }' | tr '\n' ,)" = "1 many_threads,120 work," ]
	[ "$(png_height "$BATS_TEST_TMPDIR/t.png")" -eq 2400 ]
	run -0 --separate-stderr ptt-picture -H 900 --group=none -l "$BATS_TEST_TMPDIR/t.ptt" "$BATS_TEST_TMPDIR/t.png"
	[ "$(png_height "$BATS_TEST_TMPDIR/t.png")" -eq 900 ]
	[ "$(cut -f1 <<<"$output" | sort -u)" = "" ]
	[ "$(wc -l <<<"$output")" -eq 121 ]
}

@test "ptt-picture installed under a PREFIX finds its R script there, run from elsewhere" {
	need_r
	local prefix="$BATS_TEST_TMPDIR/prefix"
	run -0 make -s -C "$PTT_ROOT" BUILD="$PTT_BUILD" PREFIX="$prefix" install
	[ -f "$prefix/share/ptt/gantt.R" ]
	record "$EXAMPLES/prodcons" -p 1 -c 1 -n 50
	cd "$BATS_TEST_TMPDIR"
	run -0 --separate-stderr env PATH=/usr/bin:/bin "$prefix/bin/ptt-picture" t.ptt i.png
	[ -z "$stderr" ]
	is_png i.png
	run -0 make -s -C "$PTT_ROOT" BUILD="$PTT_BUILD" PREFIX="$prefix" uninstall
	[ ! -e "$prefix/bin/ptt-picture" ] && [ ! -e "$prefix/share/ptt" ]
}

@test "ptt-picture without R says why on one line and exits 3; make demo goes on without the PNG" {
	record "$EXAMPLES/prodcons" -p 1 -c 1 -n 10
	run -3 --separate-stderr env RSCRIPT=/nonexistent/Rscript ptt-picture "$BATS_TEST_TMPDIR/t.ptt" "$BATS_TEST_TMPDIR/t.png"
	[ -z "$output" ]
	[ "$stderr" = "ptt-picture: no PNG picture: /nonexistent/Rscript is not installed (apt-get install pajeng r-cran-ggplot2)" ]
	[ ! -e "$BATS_TEST_TMPDIR/t.png" ]
	cd "$BATS_TEST_TMPDIR"
	run -0 --separate-stderr env RSCRIPT=/nonexistent/Rscript sh "$PTT_ROOT/examples/demo.sh" "$PTT_BUILD"
	[ "$(grep -c 'no PNG picture' <<<"$stderr")" -eq 1 ]
	[ -s demo/prodcons.paje ] && [ -s demo/prodcons.json ] && [ ! -e demo/prodcons.png ]
}

# the sum of the values of folded lines
folded_sum() { awk '{ n += $NF } END { print n + 0 }'; }

@test "ptt-picture --flame: a flame graph of waiting, its frames spanning what ptt-stat --folded says" {
	command -v Rscript >/dev/null || skip "R not installed"
	record_contended "$EXAMPLES/prodcons" -p 2 -c 2 -n 2000
	run -0 --separate-stderr ptt-picture --flame -l "$BATS_TEST_TMPDIR/t.ptt" "$BATS_TEST_TMPDIR/f.png"
	# prodcons waits for work far more than for its lock: said, with where the locks are
	[[ "$stderr" =~ ^"ptt-picture: $BATS_TEST_TMPDIR/t.ptt: "[0-9]+" % of the time drawn is idle waiting for work (condition variables, semaphores used as signals, barriers): --flame=locks draws the waits for locks alone"$ ]]
	is_png "$BATS_TEST_TMPDIR/f.png"
	frames=$output
	total=$(ptt-stat --folded=wait "$BATS_TEST_TMPDIR/t.ptt" | folded_sum)
	[ "$total" -gt 0 ]
	# the outermost frames span all the time waited, end to end, and each frame lies within the one below it
	awk -F'\t' -v total="$total" '
		$1 == 1 { if ($2 != at) exit 1; at = $3 }
		END { exit !(at == total) }' <<<"$frames"
	awk -F'\t' '{ d[NR] = $1; s[NR] = $2; e[NR] = $3 }
		END { for (i = 1; i <= NR; i++) if (d[i] > 1) { ok = 0
			for (j = 1; j <= NR; j++) if (d[j] == d[i] - 1 && s[j] <= s[i] && e[i] <= e[j]) ok = 1
			if (!ok) exit 1 } }' <<<"$frames"
	# the objects are the leaves: the lock (a mutex) apart from the waits for work (condition variables)
	grep -q $'\t\\[mutex [^\t]*\\]\tlock$' <<<"$frames"
	grep -q $'\t\\[cond [^\t]*\\]\twork$' <<<"$frames"
	# the locks alone: what ptt-stat calls contention
	run -0 --separate-stderr ptt-picture --flame=locks -l "$BATS_TEST_TMPDIR/t.ptt" "$BATS_TEST_TMPDIR/l.png"
	is_png "$BATS_TEST_TMPDIR/l.png"
	locks=$(ptt-stat --folded=locks "$BATS_TEST_TMPDIR/t.ptt" | folded_sum)
	[ "$(awk -F'\t' '$1 == 1 { n += $3 - $2 } END { print n }' <<<"$output")" = "$locks" ]
	run ! grep -q $'\twork$' <<<"$output"
	contention=$(ptt-stat "$BATS_TEST_TMPDIR/t.ptt" | sed -n 's/^contention: \([0-9.]*\) ms .*/\1/p')
	awk -v a="$locks" -v c="$contention" 'BEGIN { d = a / 1e6 - c; exit !(d < 0.002 && d > -0.002) }'
}

@test "ptt-picture --flame on a trace where no thread waited says so and exits 1" {
	command -v Rscript >/dev/null || skip "R not installed"
	trace idle '0.000000002 10 10 pthread thread_create handle=0x1 start=0x2 child=11 ret=0'
	run -1 --separate-stderr ptt-picture --flame "$BATS_TEST_TMPDIR/idle.txt" "$BATS_TEST_TMPDIR/f.png"
	[ "$output" = "" ]
	[ "$stderr" = "ptt-picture: $BATS_TEST_TMPDIR/idle.txt: no time waited to draw" ]
	[ ! -e "$BATS_TEST_TMPDIR/f.png" ]
}

@test "ptt-picture --flame: the title says what is drawn, and where idle waits are most of it, that --flame=locks shows the locks" {
	# R replaced by a script that keeps the title and the unit it is given (the PNG's text is not read back)
	printf '#!/bin/sh\n[ "$1" = -e ] && exit 0\nprintf "%%s\\n" "$4" >"%s/title"\n: >"$3"\n' "$BATS_TEST_TMPDIR" >"$BATS_TEST_TMPDIR/fakeR"
	chmod +x "$BATS_TEST_TMPDIR/fakeR"
	T=$BATS_TEST_TMPDIR/t.ptt
	record_contended "$EXAMPLES/prodcons" -p 2 -c 2 -n 2000
	locks=$(ptt-stat --folded=locks "$T" | awk '{ n += $NF } END { print n + 0 }')
	[ "$locks" -gt 0 ]
	idle=$(ptt-stat --folded=wait "$T" | awk '{ n += $NF } END { print n }')
	pct=$(awk -v a="$idle" -v l="$locks" 'BEGIN { printf "%d", (a - l) * 100 / a }')
	[ "$pct" -gt 50 ]
	run -0 --separate-stderr env RSCRIPT="$BATS_TEST_TMPDIR/fakeR" ptt-picture --flame "$T" "$BATS_TEST_TMPDIR/f.png"
	# the line, and nothing else but what the trace's own notes say (a loaded machine's tracer stalls)
	[ "$(grep -v "^ptt-stat: $T: note: " <<<"$stderr")" = "ptt-picture: $T: $pct % of the time drawn is idle waiting for work (condition variables, semaphores used as signals, barriers): --flame=locks draws the waits for locks alone" ]
	[ "$(cat "$BATS_TEST_TMPDIR/title")" = "$T: where threads waited, by stack: locks (red) and waiting for work (blue)
$pct % of it is idle waiting for work (no contention): --flame=locks draws the waits for locks alone" ]
	# the locks alone: their title, nothing on stderr
	run -0 --separate-stderr env RSCRIPT="$BATS_TEST_TMPDIR/fakeR" ptt-picture --flame=locks -t run "$T" "$BATS_TEST_TMPDIR/l.png"
	[ "$stderr" = "" ]
	[ "$(cat "$BATS_TEST_TMPDIR/title")" = "run: where threads waited for locks (contention), by stack" ]
	# a program that waits for its lock most: no note
	record "$EXAMPLES/contention" -t 4 -n 2000
	run -0 --separate-stderr env RSCRIPT="$BATS_TEST_TMPDIR/fakeR" ptt-picture --flame "$T" "$BATS_TEST_TMPDIR/c.png"
	[ "$stderr" = "" ]
	[ "$(cat "$BATS_TEST_TMPDIR/title")" = "$T: where threads waited, by stack: locks (red) and waiting for work (blue)" ]
	# only idle waits: nothing points to a --flame=locks that would draw nothing
	trace idle '0.000000002 10 11 pthread thread_begin handle=0x1 start=0x0 parent=0' \
		'0.000000010 10 11 pthread mutex_lock mutex=0x40 ret=0' \
		'0.000000011 10 11 pthread cond_wait_req cond=0x30 mutex=0x40' \
		'0.000001000 10 10 pthread cond_signal cond=0x30 ret=0' \
		'0.000001001 10 11 pthread cond_wait cond=0x30 mutex=0x40 ret=0'
	run -0 --separate-stderr env RSCRIPT="$BATS_TEST_TMPDIR/fakeR" ptt-picture --flame "$BATS_TEST_TMPDIR/idle.txt" "$BATS_TEST_TMPDIR/i.png"
	[ "$stderr" = "ptt-picture: $BATS_TEST_TMPDIR/idle.txt: 100 % of the time drawn is idle waiting for work (condition variables, semaphores used as signals, barriers): no thread waited for a lock" ]
}

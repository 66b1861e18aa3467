#!/bin/sh
# ptt-picture - a Gantt chart (PNG) of what each thread of a ptt trace did, with a legend of the
# states: ptt-paje's states as PajeNG's pj_dump reads them, the threads' names as ptt-csv writes
# them (whole: Paje's names have '#', quotes and control characters replaced), drawn by gantt.R
# (R with ggplot2).  Installed as PREFIX/bin/ptt-picture, gantt.R as PREFIX/share/ptt/gantt.R;
# in the build tree, build/bin/ptt-picture and build/share/ptt/gantt.R.  See ptt-picture(1).
set -u
prog=ptt-picture
usage() {
	cat <<'USAGE'
Usage: ptt-picture [OPTION]... TRACE OUT.png
Draw a Gantt chart (PNG) of what each thread of TRACE did: a row per thread,
coloured by state (running, blocked, holding, waiting ...), with a legend.
Needs PajeNG's pj_dump and R with ggplot2.  With --flame, draw instead a
flame graph (PNG) of where threads waited (ptt-stat --folded): needs R only.

  -t, --title=TEXT     the picture's title (default: the trace's file name)
  -g, --group=HOW      rows grouped by thread name (start routine for unnamed
                       threads, digits as N): name, none, or auto (default:
                       by name when there are more than 40 threads)
  -H, --max-height=PX  the picture's height at most (default 2400 pixels)
  -c, --critical       draw the critical path (ptt-critical) over the chart:
                       the threads' states along it in full colour, the rest
                       faded, a line along it from thread to thread
  -f, --flame[=WHAT]   a flame graph of the time threads waited (wait, the
                       default), waited for locks alone (locks), held locks
                       (hold: recorded with --stacks=all), or the critical
                       path's time by stack (critical: ptt-critical --folded)
  -l, --list           also print the rows, top to bottom, as GROUP<TAB>TID NAME
                       (with --critical, then the path's stretches drawn as
                       critical<TAB>START<TAB>END<TAB>TID NAME, in ms; with --flame:
                       the frames, DEPTH<TAB>START<TAB>END<TAB>FRAME<TAB>USE, USE
                       lock, work or held for an object, run or other for the
                       path's time outside locks, else empty)
  -h, --help           show this help and exit
      --version        show the version and exit

Exit status: 0 success, 1 a trace with no thread states or a tool failed,
2 usage error, 3 pj_dump or R with ggplot2 not installed (no picture).
USAGE
}
die_usage() {
	[ -n "${1:-}" ] && echo "$prog: $1" >&2
	echo "Try '$prog --help' for more information." >&2
	exit 2
}
title="" group=auto max_height=2400 list="" flame="" critical=""
while [ $# -gt 0 ]; do
	case $1 in
	-h | --help) usage; exit 0 ;;
	--version) echo "$prog (ptt) @VERSION@"; exit 0 ;;
	-l | --list) list=list; shift; continue ;;
	-c | --critical) critical=critical; shift; continue ;;
	-f | --flame) flame=wait; shift; continue ;;
	--flame=*)
		flame=${1#*=}
		case $flame in wait | locks | hold | critical) ;; *) die_usage "--flame: '$flame' is not wait, locks, hold or critical" ;; esac
		shift; continue ;;
	-t | --title | -g | --group | -H | --max-height)
		[ $# -ge 2 ] || die_usage "option '$1' requires an argument"
		opt=$1 val=$2
		shift 2 ;;
	-t* | -g* | -H*) opt=$(printf '%s' "$1" | cut -c1-2) val=${1#??}; shift ;;
	--title=* | --group=* | --max-height=*) opt=${1%%=*} val=${1#*=}; shift ;;
	--) shift; break ;;
	-?*) die_usage "unrecognized option '$1'" ;;
	*) break ;;
	esac
	case $opt in
	-t | --title) title=$val ;;
	-g | --group)
		case $val in name | none | auto) group=$val ;; *) die_usage "--group: '$val' is not name, none or auto" ;; esac ;;
	-H | --max-height)
		case $val in '' | *[!0-9]*) die_usage "--max-height: '$val' is not a number of pixels" ;; esac
		[ "$val" -ge 300 ] || die_usage "--max-height: $val is under 300 pixels"
		max_height=$val ;;
	esac
done
[ $# -eq 2 ] || die_usage "a TRACE and an OUT.png are needed"
[ -z "$critical" ] || [ -z "$flame" ] || die_usage "--critical draws on the Gantt chart: for the path's flame graph, --flame=critical"
trace=$1 out=$2
[ -n "$title" ] || title=$trace
if [ "$trace" != - ] && [ ! -r "$trace" ]; then
	echo "$prog: $trace: cannot read it" >&2
	exit 2
fi
# the other tools beside this one (the build tree, or PREFIX/bin), else on PATH; gantt.R in ../share/ptt
self=$(readlink -f "$0" 2>/dev/null || echo "$0")
bindir=$(dirname "$self")
tool() { if [ -x "$bindir/$1" ]; then echo "$bindir/$1"; else echo "$1"; fi; }
gantt=$bindir/../share/ptt/gantt.R
[ -z "$flame" ] || gantt=$bindir/../share/ptt/flame.R
if [ ! -r "$gantt" ]; then
	echo "$prog: $gantt: not found (ptt-picture is run from its install or build tree)" >&2
	exit 1
fi
RSCRIPT=${RSCRIPT:-Rscript}
needs="pj_dump $RSCRIPT"
[ -z "$flame" ] || needs=$RSCRIPT
for t in $needs; do
	if ! command -v "$t" >/dev/null; then
		echo "$prog: no PNG picture: $t is not installed (apt-get install pajeng r-cran-ggplot2)" >&2
		exit 3
	fi
done
if ! "$RSCRIPT" -e 'library(ggplot2)' >/dev/null 2>&1; then
	echo "$prog: no PNG picture: R has no ggplot2 (apt-get install r-cran-ggplot2)" >&2
	exit 3
fi
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM
if [ "$trace" = - ]; then # read twice below: keep stdin
	cat >"$tmp/in.ptt" || exit 1
	trace=$tmp/in.ptt
fi
if [ "$flame" = critical ]; then
	# the path's time per stack; exit 1: part of the path is unknown (its own line in the graph)
	what="on the critical path"
	"$(tool ptt-critical)" --folded "$trace" >"$tmp/folded"
	[ $? -le 1 ] || { echo "$prog: $trace: ptt-critical failed" >&2; exit 1; }
elif [ -n "$flame" ]; then
	stat=$(tool ptt-stat) what=waited
	[ "$flame" = hold ] && what=held
	[ "$flame" = locks ] && what="waited for locks"
	"$stat" --folded="$flame" "$trace" >"$tmp/folded" || { echo "$prog: $trace: ptt-stat failed" >&2; exit 1; }
fi
if [ -n "$flame" ]; then
	if [ ! -s "$tmp/folded" ]; then
		echo "$prog: $trace: no time $what to draw" >&2
		exit 1
	fi
	# the waits for locks (contention), to colour the objects apart from waiting for work
	: >"$tmp/locks"
	[ "$flame" = wait ] && { "$stat" --folded=locks "$trace" >"$tmp/locks" || exit 1; }
	# the critical path's leaves: [held OBJ], [waited OBJ], running outside locks, the rest (unknown,
	# own waits and start-up)
	# flamegraph.pl's layout: the stacks sorted, each frame a rectangle spanning the stacks that
	# share it and all the frames below it; the value is the last field, frames may hold spaces.
	# FRAMES.tsv: depth, start, end, frame, and for an object (the leaf) lock, work or held
	LC_ALL=C sort "$tmp/folded" | awk -v OFS='\t' -v flame="$flame" -v locks="$tmp/locks" '
		BEGIN { x = 0; pn = 0; while ((getline l < locks) > 0) lock[l] = 1 }
		function close_to(i,   j) { for (j = pn; j >= i; j--) print j, start[j], x, pf[j], j == pn ? use : "" }
		{ v = $NF; s = substr($0, 1, length($0) - length($NF) - 1); n = split(s, f, ";")
		  for (i = 1; i <= n && i <= pn && f[i] == pf[i]; i++) ;
		  if (i <= pn || n > pn) { close_to(i); for (j = i; j <= n; j++) start[j] = x }
		  use = flame == "hold" ? "held" : flame == "locks" || ($0 in lock) ? "lock" : "work"
		  if (flame == "critical")
			use = f[n] ~ /^\[held / ? "held" : f[n] ~ /^\[waited / ? "lock" : f[n] ~ /^\[running/ ? "run" : "other"
		  x += v; for (j = 1; j <= n; j++) pf[j] = f[j]; pn = n }
		END { close_to(1) }' >"$tmp/frames.tsv"
	[ -z "$list" ] || cat "$tmp/frames.tsv"
	# the title says what is drawn; where waiting for work (idle, no contention) is most of the
	# waiting drawn, the title and one line on stderr say so, and where the locks are
	case $flame in
	wait) shows="where threads waited, by stack: locks (red) and waiting for work (blue)" ;;
	locks) shows="where threads waited for locks (contention), by stack" ;;
	hold) shows="where threads held locks, by stack" ;;
	critical) shows="the critical path's time, by stack" ;;
	esac
	title="$title: $shows"
	if [ "$flame" = wait ]; then
		idle=$(awk -v locks="$tmp/locks" 'BEGIN { while ((getline l < locks) > 0) { n = split(l, f, " "); lk += f[n] } }
			{ all += $NF } END { if (all > 0 && (all - lk) * 2 > all) printf "%d %d", (all - lk) * 100 / all, (lk > 0) }' "$tmp/folded")
		if [ -n "$idle" ]; then
			pct=${idle% *}
			if [ "${idle#* }" = 1 ]; then
				where="--flame=locks draws the waits for locks alone"
			else
				where="no thread waited for a lock"
			fi
			title="$title
$pct % of it is idle waiting for work (no contention): $where"
			echo "$prog: $trace: $pct % of the time drawn is idle waiting for work (condition variables, semaphores used as signals, barriers): $where" >&2
		fi
	fi
	"$RSCRIPT" "$gantt" "$tmp/frames.tsv" "$out" "$title" "$what" ||
		{ echo "$prog: $out: R failed to draw the picture" >&2; exit 1; }
	exit 0
fi
"$(tool ptt-paje)" ${critical:+--critical} "$trace" >"$tmp/t.paje" || { echo "$prog: $trace: ptt-paje failed" >&2; exit 1; }
# State, CONTAINER, TYPE, START, END, DURATION, DEPTH, VALUE: the container name may hold ", "
pj_dump "$tmp/t.paje" >"$tmp/t.dump" || { echo "$prog: $trace: pj_dump failed on ptt-paje's output" >&2; exit 1; }
awk -F', ' -v OFS='\t' '$1 == "State" && $(NF-5) == "Thread state" {
	name = $2; for (i = 3; i <= NF - 6; i++) name = name ", " $i
	print name, $(NF-4), $(NF-3), $NF }' "$tmp/t.dump" >"$tmp/states.tsv"
if [ ! -s "$tmp/states.tsv" ]; then
	echo "$prog: $trace: no thread states to draw" >&2
	exit 1
fi
# the critical path (ptt-paje --critical): its row's states, "TID NAME" (the thread's row) START END, in
# time order, each entered by a hand-off from the one before
: >"$tmp/path.tsv"
if [ -n "$critical" ]; then
	awk -F', ' -v OFS='\t' '$1 == "State" && $3 == "Thread on the critical path" {
		v = $8; for (i = 9; i <= NF; i++) v = v ", " $i
		print v, $4, $5 }' "$tmp/t.dump" | sort -s -t "$(printf '\t')" -k2,2g >"$tmp/path.tsv"
	if [ ! -s "$tmp/path.tsv" ]; then
		echo "$prog: $trace: no critical path to draw (ptt-critical says why)" >&2
		exit 1
	fi
fi
# the legend: the thread states ptt-paje declares (5 ALIAS ST_Thread "NAME" "R G B"), in that order
awk -F'"' -v OFS='\t' '$1 ~ /^5 [^ ]+ ST_Thread $/ { print $2, $4 }' "$tmp/t.paje" >"$tmp/legend.tsv"
# the threads' names as they are (CSV-quoted), from the thread and process events alone
"$(tool ptt-filter)" -n -e thread,process "$trace" 2>/dev/null | "$(tool ptt-csv)" >"$tmp/names.csv" 2>/dev/null
"$RSCRIPT" "$gantt" "$tmp/states.tsv" "$tmp/legend.tsv" "$out" "$title" "$tmp/names.csv" "$group" "$max_height" "$list" \
	"$tmp/path.tsv" ||
	{ echo "$prog: $out: R failed to draw the picture" >&2; exit 1; }

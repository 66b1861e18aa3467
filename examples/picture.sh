#!/bin/sh
# picture.sh TRACE OUT.png [TITLE]: a Gantt chart (PNG) of what each thread of TRACE did, with a
# legend of the states, drawn from ptt-paje's output as PajeNG's pj_dump reads it, by doc/gantt.R
# (R with ggplot2: Debian's r-base-core and r-cran-ggplot2, which pajeng's pj_gantt also needs).
# Without them it says why on one line and exits 3.  The tools are taken from $PTT_BIN (default build/bin),
# R from $RSCRIPT (default Rscript).
set -eu
if [ $# -lt 2 ]; then
	echo "usage: picture.sh TRACE OUT.png [TITLE]" >&2
	exit 2
fi
trace=$1 out=$2 title=${3:-$1}
here=$(dirname "$0")
BIN=${PTT_BIN:-build/bin}
RSCRIPT=${RSCRIPT:-Rscript}
for tool in pj_dump "$RSCRIPT"; do
	if ! command -v "$tool" >/dev/null; then
		echo "picture.sh: no PNG picture: $tool is not installed (apt-get install pajeng r-cran-ggplot2)" >&2
		exit 3
	fi
done
if ! "$RSCRIPT" -e 'library(ggplot2)' >/dev/null 2>&1; then
	echo "picture.sh: no PNG picture: R has no ggplot2 (apt-get install r-cran-ggplot2)" >&2
	exit 3
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$BIN/ptt-paje" "$trace" >"$tmp/t.paje"
# State, CONTAINER, TYPE, START, END, DURATION, DEPTH, VALUE: the container name may hold ", "
pj_dump "$tmp/t.paje" | awk -F', ' -v OFS='\t' '$1 == "State" && $(NF-5) == "Thread state" {
	name = $2; for (i = 3; i <= NF - 6; i++) name = name ", " $i
	print name, $(NF-4), $(NF-3), $NF }' >"$tmp/states.tsv"
# the legend: the thread states ptt-paje declares (5 ALIAS ST_Thread "NAME" "R G B"), in that order
awk -F'"' -v OFS='\t' '$1 ~ /^5 [^ ]+ ST_Thread $/ { print $2, $4 }' "$tmp/t.paje" >"$tmp/legend.tsv"
if [ ! -s "$tmp/states.tsv" ]; then
	echo "picture.sh: $trace: no thread states to draw" >&2
	exit 1
fi
"$RSCRIPT" "$here/../doc/gantt.R" "$tmp/states.tsv" "$tmp/legend.tsv" "$out" "$title"

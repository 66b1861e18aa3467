#!/bin/sh
# Frozen outputs of the analyses on recorded example traces (test/cli/70-frozen... reads them).
#   run.sh TRACE.txt KIND    print what the tools say about TRACE for KIND: stdout,
#                            then "--- stderr" and stderr, then "--- exit N"
#   run.sh --update          rewrite every expected file (review the diff: an expected
#                            file changes only where a rule changes on purpose)
# Run in this directory, with the tools on PATH.
set -u
KINDS="check human stat deadlock states paje objects window select"

# the times of the events at 1/3 and 2/3 of the trace: a window well inside it
window() {
	grep -v '^#' "$1" | awk '{ t[NR] = $1 } END { printf "--from=%ss --to=%ss", t[int(NR / 3)], t[int(2 * NR / 3)] }'
}
# the first mutex (or other object) locked in the trace
first_object() {
	grep -v '^#' "$1" | awk '$5 ~ /_lock$|_wait$|_rdlock$|_wrlock$/ { split($6, a, "="); print a[2]; exit }'
}

one() {
	t=$1
	case $2 in
	check) ptt-dump --check "$t" ;;
	human) ptt-dump --human -n "$t" ;;
	stat) ptt-stat -n 0 "$t" ;;
	deadlock) ptt-deadlock "$t" ;;
	states) ptt-csv --states "$t" ;;
	paje) ptt-paje "$t" ;;
	objects) ptt-paje --objects "$t" ;;
	window) ptt-filter $(window "$t") "$t" ;;
	select) o=$(first_object "$t"); [ -n "$o" ] || return 0
		ptt-filter --object="$o" "$t" | ptt-csv --states ;;
	esac
}

run() {
	one "$1" "$2" >out.$$ 2>err.$$
	st=$?
	cat out.$$
	echo "--- stderr"
	cat err.$$
	echo "--- exit $st"
	rm -f out.$$ err.$$
}

if [ "${1:-}" = --update ]; then
	for t in *.txt; do
		for k in $KINDS; do
			run "$t" "$k" >"expected/${t%.txt}.$k"
		done
	done
	exit 0
fi
run "$1" "$2"

#!/bin/sh
# Frozen outputs of the analyses on recorded example traces (test/cli/25-frozen-outputs.bats
# reads them): the text traces here (*.txt), and the binary fixtures of every format version
# and block kind (../fixtures/v[1234]-*.ptt, see ../fixtures/README), whose outputs are what
# keeps old traces readable: a decoder that reads them otherwise fails here.
#   run.sh TRACE KIND        print what the tools say about TRACE for KIND: stdout,
#                            then "--- stderr" and stderr, then "--- exit N"
#   run.sh --list            print "TRACE KIND" for every expected file
#   run.sh --update          rewrite every expected file (review the diff: an expected
#                            file changes only where a rule changes on purpose)
# Run in this directory, with the tools on PATH.
set -u
export LC_ALL=C TZ=UTC # ptt-dump --info prints the recording's date in local time
KINDS="check human stat deadlock states paje objects window select"
# every tool on the binary fixtures, the decoders' own outputs (dump) first
FIXTURE_KINDS="dump human check info stat deadlock states csv paje json critical window index"
HERE=$(pwd)
FIXTURES=$(cd ../fixtures && ls v[1234]-*.ptt | grep -v '^v1-prodcons')

# the events of a trace, text form (a binary fixture decoded; the damaged ones as far as they read)
events() {
	case $1 in
	*.ptt) ptt-dump -n "$1" 2>/dev/null ;;
	*) grep -v '^#' "$1" ;;
	esac
}
# the times of the events at 1/3 and 2/3 of the trace: a window well inside it
window() {
	events "$1" | awk '{ t[NR] = $1 } END { if (NR == 0) { printf "--from=0s --to=1s"; exit } a = NR < 3 ? 1 : int(NR / 3); b = NR < 3 ? NR : int(2 * NR / 3); printf "--from=%ss --to=%ss", t[a], t[b] }'
}
# the first mutex (or other object) locked in the trace
first_object() {
	grep -v '^#' "$1" | awk '$5 ~ /_lock$|_wait$|_rdlock$|_wrlock$/ { split($6, a, "="); print a[2]; exit }'
}

one() {
	t=$1
	case $2 in
	dump) ptt-dump "$t" ;;
	info) ptt-dump --info "$t" ;;
	csv) ptt-csv "$t" ;;
	json) ptt-json "$t" ;;
	critical) ptt-critical -n 0 "$t" ;;
	index) # a copy with snapshots, checked, then a window of it read from its last snapshot before
		ptt-index -i 40 "$t" >"$HERE/idx.$$"
		echo "--- ptt-index exit $?"
		ptt-dump --check - <"$HERE/idx.$$"
		echo "--- ptt-dump --check exit $?"
		ptt-filter $(window "$t") - <"$HERE/idx.$$" | ptt-dump -n -
		st=$?
		rm -f "$HERE/idx.$$"
		return $st ;;
	check) ptt-dump --check "$t" ;;
	human) ptt-dump --human -n "$t" ;;
	stat) ptt-stat -n 0 "$t" ;;
	deadlock) ptt-deadlock "$t" ;;
	states) ptt-csv --states "$t" ;;
	paje) ptt-paje "$t" ;;
	objects) ptt-paje --objects "$t" ;;
	window) case $t in
		*.ptt) # the window is a binary trace: what ptt-filter said, then the window decoded
			ptt-filter $(window "$t") "$t" >"$HERE/win.$$"
			echo "--- ptt-filter exit $?"
			ptt-dump -n - <"$HERE/win.$$"
			st=$?
			rm -f "$HERE/win.$$"
			return $st ;;
		*) ptt-filter $(window "$t") "$t" ;;
		esac ;;
	select) o=$(first_object "$t"); [ -n "$o" ] || return 0
		ptt-filter --object="$o" "$t" | ptt-csv --states ;;
	esac
}

# a fixture's output of more than 300 lines (the rotated file's 9 606 events): its first 200
# lines, then its length and checksum, which any change further on still changes
shorten() {
	n=$(wc -l <"$1")
	if [ "$n" -le 300 ]; then
		cat "$1"
	else
		head -n 200 "$1"
		echo "--- $n lines, cksum $(cksum <"$1")"
	fi
}

run() {
	case $1 in
	*.ptt) (cd ../fixtures && one "$1" "$2") >out.$$ 2>err.$$ ;;
	*) one "$1" "$2" >out.$$ 2>err.$$ ;;
	esac
	st=$?
	case $1 in
	*.ptt) shorten out.$$ ;;
	*) cat out.$$ ;;
	esac
	echo "--- stderr"
	cat err.$$
	echo "--- exit $st"
	rm -f out.$$ err.$$
}

list() {
	for t in *.txt; do
		for k in $KINDS; do
			echo "$t $k"
		done
	done
	for t in $FIXTURES; do
		for k in $FIXTURE_KINDS; do
			echo "$t $k"
		done
	done
}

case ${1:-} in
--list) list; exit 0 ;;
--update)
	list | while read -r t k; do
		run "$t" "$k" >"expected/${t%.*}.$k"
	done
	exit 0 ;;
esac
run "$1" "$2"

#!/bin/bash
# bench/streams.sh BUILD [REPS]: the recorder's CPU per recorded event and the
# traced/untraced ratio, ptt-record's default drain against --streams (the
# rings' spans written as they lie, merged by the readers) and --streams=coded
# (cod: each thread codes its own records, the recorder copies the bytes;
# "path" is the trace path's own cost per event as ptt-stat measured it), run by run
# interleaved on the lock loop, sqlite3, CPython and node.  The load average
# is printed with each figure: on a shared machine it says what they are worth.
# Recorder CPU: its threads' schedstat run time when the program ends (as run.sh), its
# compressor's thread apart (in parentheses, not in the figure before it).
# MODES="cod czd" bench/streams.sh ...: czd is --streams=coded -z (the coded blocks compressed
# at idle priority), with its wall time against the mode before it run by run ("pair": the
# median of czd/cod), the recorder's ring waits and the blocks written raw behind the compressor.
BUILD=${1:-build}; REPS=${2:-3}
SRC=$(cd "$(dirname "$0")" && pwd); BIN=$BUILD/bin
TMP=$(mktemp -d); trap 'rm -rf "$TMP"' EXIT
cc -O2 -pthread -o "$TMP/lockloop" "$SRC/lockloop.c" || exit 1
# the recorder's threads' run time, and its compressor's (-z: the writer's thread, ptt-compress) apart
wrap='"$@"; r=$?; for t in /proc/$PPID/task/*; do echo "$(cat $t/comm) $(cut -d" " -f1 $t/schedstat)"; done 2>/dev/null |
	awk '"'"'{ s += $2; if ($1 == "ptt-compress") z += $2 } END { print s + 0, z + 0 }'"'"' >"$PTT_BENCH_CPU"; exit $r'
if [ -z "${MODES:-}" ]; then
	MODES="def str cod"; "$BIN/ptt-record" --help | grep -q -- --streams || MODES=def
	"$BIN/ptt-record" --help | grep -q -- 'streams\[=coded\]' || MODES=${MODES% cod}
fi
now() { date +%s%N; }
med() { sort -n | awk '{a[NR] = $1} END {print NR ? a[int((NR + 1) / 2)] : 0}'; }
run() { # KEY LABEL CMD...
	local key=$1 label=$2 m s e f ev
	shift 2
	for m in base $MODES; do : >"$TMP/$m"; done
	for _ in $(seq "$REPS"); do
		sync; s=$(now); PTT_BENCH_CPU=$TMP/cpu sh -c "$wrap" sh "$@" >/dev/null 2>&1; e=$(now); echo $((e - s)) >>"$TMP/base"
		for m in $MODES; do
			rm -f "$TMP/$m.ptt"; sync
			local opt=; [ $m = str ] && opt=--streams; [ $m = cod ] && opt=--streams=coded; [ $m = czd ] && opt="--streams=coded -z"
			s=$(now); PTT_BENCH_CPU=$TMP/cpu "$BIN/ptt-record" $opt -o "$TMP/$m.ptt" -- sh -c "$wrap" sh "$@" >/dev/null 2>"$TMP/err"; e=$(now)
			# the summary's ring waits, and with -z the blocks written raw behind the compressor
			echo "$((e - s)) $(cat "$TMP/cpu") $(sed -n 's/.* \([0-9]*\) ring waits,.*/\1/p' "$TMP/err" | tail -1) $(sed -n 's/^ptt-record: \([0-9]*\) of \([0-9]*\) blocks written raw.*/\1\/\2/p' "$TMP/err")" >>"$TMP/$m"
		done
	done
	local prev=
	for m in $MODES; do
		ev=$("$BIN/ptt-dump" --info "$TMP/$m.ptt" 2>/dev/null | awk '$1 == "events:" {print $2}')
		local cpu=$(awk '{print $2 - $3}' "$TMP/$m" | med) t=$(awk '{print $1}' "$TMP/$m" | med)
		local ratio=$(paste "$TMP/base" "$TMP/$m" | awk '{printf "%.4f\n", $2 / $1}' | med)
		local path=$("$BIN/ptt-stat" "$TMP/$m.ptt" 2>/dev/null | sed -n "s/.*ptt's trace path took \([0-9.]*\) ns per event.*/\1/p" | head -1)
		local waits=$(awk '{print $4}' "$TMP/$m" | tr '\n' ',') raw=$(awk '{print $5 ? $5 : 0}' "$TMP/$m" | tr '\n' ',') pair=
		local zcpu=$(awk '{print $3}' "$TMP/$m" | med)
		[ "$m" = czd ] && [ -n "$prev" ] && pair="  pair $(paste -d'|' "$TMP/$prev" "$TMP/$m" | awk -F'|' '{split($1, a, " "); split($2, b, " "); printf "%.3f\n", b[1] / a[1]}' | med)"
		printf '%-8s %-3s recorder %6.2f ns/event (compressor %.2f)  ratio %.3f  %9d events  %6.2f bytes/event  path %s ns  waits %s%s%s  load %s\n' "$key" "$m" \
			"$(echo "$cpu / $ev" | bc -l)" "$(echo "$zcpu / $ev" | bc -l)" "$ratio" "$ev" "$(echo "$(stat -c %s "$TMP/$m.ptt") / $ev" | bc -l)" \
			"${path:-?}" "${waits%,}" "${raw:+  raw behind ${raw%,}}" "$pair" "$(cut -d' ' -f1-3 /proc/loadavg)"
		prev=$m
	done
}
# PROGS="sqlite py": only these of lock1 lock2 sqlite py node
want() { case " ${PROGS:-lock1 lock2 sqlite py node} " in *" $1 "*) ;; *) return 1 ;; esac; }
want lock1 && run lock1 "lock loop, 1 thread" "$TMP/lockloop" 1 1000000 private
want lock2 && run lock2 "lock loop, 2 threads" "$TMP/lockloop" 2 1000000 private
want sqlite && command -v sqlite3 >/dev/null && run sqlite "sqlite3 PRAGMA threads=2" sqlite3 :memory: -init "$SRC/sqlite_index.sql" .quit
want py && run py "CPython" /usr/bin/python3 "$SRC/lockpy.py" 100000
want node && command -v node >/dev/null && run node "node" node "$SRC/lockjs.js" 400
exit 0

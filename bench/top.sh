#!/bin/sh
# bench/top.sh - what ptt-top attached costs the recorded program (issue 35 item 1): the program's
# wall time under ptt-record alone, and with ptt-top -b following the trace (its frames to /dev/null),
# runs alternated, the median of each; with the load average, as the machine is shared.  Then a real
# server: memcached -t 4 under ptt-record, loaded on loopback by bench/mcload.c (8 clients, one request
# in flight each, PTT_BENCH_TOP_SECONDS s), its requests/s alone and with ptt-top -b -d 1 attached.
#
#   sh bench/top.sh [BUILD]     knobs: PTT_BENCH_TOP_REPS (runs per mode, default 5),
#                               PTT_BENCH_TOP_ARGS (contention's arguments, default -t 4 -n 20000 -u 20),
#                               PTT_BENCH_TOP_SECONDS (each memcached load, default 3)
set -eu
BUILD=$(cd "${1:-build}" && pwd)
BIN=$BUILD/bin
REPS=${PTT_BENCH_TOP_REPS:-5}
ARGS=${PTT_BENCH_TOP_ARGS:--t 4 -n 20000 -u 20}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

# one run: the program's wall time in ms (ptt-record's start and end not counted: the program's own
# start-to-exit, from its process_begin to process_exit in the trace); $1: "alone" or "top"
run() {
	rm -f "$TMP/t.ptt"
	"$BIN/ptt-record" -q -o "$TMP/t.ptt" -- "$BUILD/examples/contention" $ARGS >/dev/null 2>&1 &
	rec=$!
	if [ "$1" = top ]; then
		for _ in $(seq 200); do [ -s "$TMP/t.ptt" ] && break; sleep 0.01; done
		"$BIN/ptt-top" -b -d 0.5 "$TMP/t.ptt" >/dev/null 2>&1 &
		top=$!
	fi
	wait "$rec"
	[ "$1" = top ] && wait "$top"
	"$BIN/ptt-dump" "$TMP/t.ptt" | awk '$5 == "process_begin" && !b { b = $1 } $5 == "process_exit" { e = $1 }
		END { printf "%.1f\n", (e - b) * 1000 }'
}

median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

# alternated: FUNCTION's figure alone and with ptt-top, REPS runs each; the medians into $a and $t
alternated() {
	: >"$TMP/alone"
	: >"$TMP/top"
	for _ in $(seq "$REPS"); do
		"$1" alone >>"$TMP/alone"
		"$1" top >>"$TMP/top"
	done
	a=$(median <"$TMP/alone")
	t=$(median <"$TMP/top")
}

alternated run
echo "ptt-top attached: contention $ARGS under ptt-record, median of $REPS runs each (ms):" \
	"alone $a, with ptt-top -b -d 0.5 following the trace $t ($(awk -v a="$a" -v t="$t" 'BEGIN { printf "%+.1f %%", 100 * (t - a) / a }'))," \
	"load average $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) processors"

# memcached: requests/s of one load; $1: "alone" or "top"
MCPORT=11433
mc() {
	rm -f "$TMP/mc.ptt"
	"$BIN/ptt-record" -q -o "$TMP/mc.ptt" -- memcached -u root -t 4 -p $MCPORT -l 127.0.0.1 -U 0 >/dev/null 2>&1 &
	rec=$!
	listen=$(printf '0100007F:%04X 00000000:0000 0A' $MCPORT) # listening (a closed run's TIME_WAIT is not)
	for _ in $(seq 200); do grep -q "$listen" /proc/net/tcp && break; sleep 0.05; done
	if [ "$1" = top ]; then
		"$BIN/ptt-top" -b -d 1 "$TMP/mc.ptt" >"$TMP/frames" 2>&1 &
		top=$!
	fi
	"$TMP/mcload" $MCPORT 8 "$MCSECONDS" | awk '{ print $(NF - 3) }'
	kill -INT "$rec"
	wait "$rec" || true
	if [ "$1" = top ]; then wait "$top" || true; fi
}

if ! command -v memcached >/dev/null; then
	echo "ptt-top attached to memcached: not measured, memcached not installed (apt-get install memcached)"
	exit 0
fi
MCSECONDS=${PTT_BENCH_TOP_SECONDS:-3}
cc -O2 -pthread -o "$TMP/mcload" "$(dirname "$0")/mcload.c"
alternated mc
frames=$(grep -c '^ptt-top ' "$TMP/frames" || true)
echo "ptt-top attached: memcached -t 4 under ptt-record, mcload 8 clients for $MCSECONDS s, median of $REPS runs each" \
	"(requests/s): alone $a, with ptt-top -b -d 1 following the trace $t (ratio $(awk -v a="$a" -v t="$t" 'BEGIN { printf "%.3f", t / a }');" \
	"$frames frames in the last run), load average $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) processors"

#!/bin/bash
# make bench: capture cost against an untraced run and LTTng-UST, real programs,
# sustained rate, decode speed, sizes and memory.  Prints a table and writes CSV.
# Usage: bench/run.sh BUILD_DIR
set -u
BUILD=$(cd "${1:-build}" && pwd)
BIN=$BUILD/bin
OUT=$BUILD/bench
mkdir -p "$OUT"
CSV=$BUILD/bench-results.csv
REPS=${PTT_BENCH_REPS:-5}
ITER=${PTT_BENCH_ITER:-2000000}
CC=${CC:-cc}
echo "metric,value,unit,note" >"$CSV"
say() { printf '%-58s %12s %s\n' "$1" "$2" "$3"; echo "\"$1\",$2,$3,\"${4:-}\"" >>"$CSV"; }
median() { sort -g | awk '{v[NR]=$1} END {if (NR) print v[int((NR+1)/2)]; else print "nan"}'; }
calc() { awk "BEGIN { printf \"%.2f\", $1 }"; }

$CC -O2 -pthread -o "$OUT/lockloop" "$(dirname "$0")/lockloop.c" || exit 1
$CC -O2 -o "$OUT/floor" "$(dirname "$0")/floor.c" || exit 1
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

echo "== ptt bench ($(nproc) CPUs, $REPS runs each, medians; $(date -u +%Y-%m-%dT%H:%MZ))"
say "floor: clock read + 36-byte record store" "$("$OUT/floor" 20000000)" "ns/event"

# LTTng-UST, if it can run here (installed from Debian when missing and we may)
LTTNG_OK=0
if ! command -v lttng >/dev/null && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
	echo "(installing LTTng: apt-get install lttng-tools liblttng-ust-dev babeltrace2)"
	DEBIAN_FRONTEND=noninteractive apt-get install -y lttng-tools liblttng-ust-dev babeltrace2 >/dev/null 2>&1 ||
		echo "(apt-get could not install LTTng)"
fi
WRAP=$(ls /usr/lib/x86_64-linux-gnu/liblttng-ust-pthread-wrapper.so* 2>/dev/null | head -1)
if ! command -v lttng >/dev/null || [ -z "$WRAP" ]; then
	echo "(LTTng-UST not installed: apt-get install lttng-tools liblttng-ust-dev babeltrace2; comparison skipped)"
else
	export LTTNG_HOME=$TMP/lttng-home
	mkdir -p "$LTTNG_HOME"
	if lttng-sessiond --daemonize --no-kernel >/dev/null 2>&1 && sleep 1 && lttng list >/dev/null 2>&1; then
		LTTNG_OK=1
		STARTED_SESSIOND=1
	else
		echo "(lttng-sessiond did not start; LTTng comparison skipped)"
	fi
fi
lttng_run() { # case threads: prints median ns/pair and sets LT_EVENTS_PER_PAIR
	local sess=pttbench$$ dir=$TMP/lt-$1
	lttng create $sess --output="$dir" >/dev/null 2>&1 || return 1
	lttng enable-event -u 'lttng_ust_pthread:*' >/dev/null 2>&1
	lttng add-context -u -t vpid -t vtid >/dev/null 2>&1
	lttng start >/dev/null 2>&1
	local r
	for r in $(seq "$REPS"); do LD_PRELOAD="$WRAP" "$OUT/lockloop" "$1" "$2" "$3"; done >"$TMP/lt.txt"
	lttng stop >/dev/null 2>&1
	lttng destroy >/dev/null 2>&1
	babeltrace2 "$dir" 2>/dev/null | wc -l >"$TMP/lt-events"
	median <"$TMP/lt.txt"
}

for case in "private 1" "private 2" "shared 2" "pingpong 2"; do
	set -- $case
	mode=$1 threads=$2
	it=$ITER
	[ "$mode" = pingpong ] && it=$((ITER / 100)) # a round trip costs two context switches
	label="$mode mutex, $threads thread(s)"
	[ "$mode" = pingpong ] && label="cond-var ping-pong, 2 threads"
	base=$(for r in $(seq "$REPS"); do "$OUT/lockloop" "$mode" "$threads" "$it"; done | median)
	ptt=$(for r in $(seq "$REPS"); do "$BIN/ptt-record" -q -o "$TMP/l.ptt" -- "$OUT/lockloop" "$mode" "$threads" "$it"; done | median)
	events=$("$BIN/ptt-dump" -n "$TMP/l.ptt" | grep -c ' pthread \(mutex\|cond\)_')
	if [ "$mode" = pingpong ]; then pairs=$((it * 2)); else pairs=$((it * threads)); fi
	epp=$(calc "$events / $pairs")
	ptt_d=$(for r in $(seq "$REPS"); do "$BIN/ptt-record" -q -d -o "$TMP/d.ptt" -- "$OUT/lockloop" "$mode" "$threads" "$it"; done | median)
	lost=$("$BIN/ptt-dump" --info "$TMP/d.ptt" | sed -n 's/^lost: *\([0-9]*\).*/\1/p')
	say "$label: untraced" "$base" "ns/pair"
	say "$label: ptt (lossless)" "$ptt" "ns/pair" "$epp events/pair"
	say "$label: ptt per event (lossless)" "$(calc "($ptt - $base) / $epp")" "ns/event"
	say "$label: ptt --discard" "$ptt_d" "ns/pair" "$lost lost"
	say "$label: ptt per event (--discard)" "$(calc "($ptt_d - $base) / $epp")" "ns/event"
	if [ $LTTNG_OK = 1 ]; then
		lt=$(lttng_run "$mode" "$threads" "$it")
		LT_EVENTS=$(cat "$TMP/lt-events" 2>/dev/null || echo 0)
		if [ -n "$lt" ] && [ "${LT_EVENTS:-0}" -gt 0 ]; then
			lepp=$(calc "$LT_EVENTS / ($pairs * $REPS)")
			say "$label: LTTng-UST pthread wrapper + vpid/vtid" "$lt" "ns/pair" "$lepp events/pair recorded"
			say "$label: LTTng-UST per event" "$(calc "($lt - $base) / $lepp")" "ns/event"
			say "$label: ptt/LTTng per event (lossless)" "$(calc "(($ptt - $base) / $epp) / (($lt - $base) / $lepp)")" "ratio"
		fi
	fi
done
# stop the daemon we started (it runs with our LTTNG_HOME)
[ "${STARTED_SESSIOND:-0}" = 1 ] && pkill -f "lttng-sessiond --daemonize --no-kernel" 2>/dev/null

# real programs
seq 1 1500000 | awk '{print $1, $1 * 7919 % 104729, "some compressible text"}' >"$TMP/input.txt"
for cmd in "pigz -p 2 -c" "xz -T2 -c -1" "sort --parallel=2 -S 20M"; do
	command -v ${cmd%% *} >/dev/null || { echo "(${cmd%% *} not installed)"; continue; }
	plain=$(for r in $(seq "$REPS"); do s=$(date +%s%N); $cmd "$TMP/input.txt" >/dev/null; echo $(( $(date +%s%N) - s )); done | median)
	traced=$(for r in $(seq "$REPS"); do s=$(date +%s%N); "$BIN/ptt-record" -q -o "$TMP/r.ptt" -- $cmd "$TMP/input.txt" >/dev/null; echo $(( $(date +%s%N) - s )); done | median)
	say "${cmd%% *}: traced / untraced wall time" "$(calc "$traced / $plain")" "ratio" "$(calc "$plain / 1e6") ms untraced"
done

# sustained rate, lossless, and the exact lost count above it
s=$(date +%s%N)
"$BIN/ptt-record" -q -o "$TMP/big.ptt" -- "$OUT/lockloop" private 2 5000000 >/dev/null
e=$(( $(date +%s%N) - s ))
n=$("$BIN/ptt-dump" --info "$TMP/big.ptt" | sed -n 's/^events: *//p')
lost=$("$BIN/ptt-dump" --info "$TMP/big.ptt" | sed -n 's/^lost: *\([0-9]*\).*/\1/p')
say "sustained: events/s recorded by default (2 threads)" "$(calc "$n / ($e / 1e9)")" "events/s" "$lost lost"
"$BIN/ptt-record" -q -d -b 64k -o "$TMP/disc.ptt" -- "$OUT/lockloop" private 2 5000000 >/dev/null
say "discard mode, 64 KiB rings: exact lost count" "$("$BIN/ptt-dump" --info "$TMP/disc.ptt" | sed -n 's/^lost: *\([0-9]*\).*/\1/p')" "events" "2 threads x 10M events"

# decode speed and memory on the big trace
size=$(stat -c %s "$TMP/big.ptt")
say "trace size, raw" "$(calc "$size / $n")" "bytes/event" "$n events"
"$BIN/ptt-record" -q -z -o "$TMP/bigz.ptt" -- "$OUT/lockloop" private 2 5000000 >/dev/null
nz=$("$BIN/ptt-dump" --info "$TMP/bigz.ptt" | sed -n 's/^events: *//p')
say "trace size, -z (zlib level 1)" "$(calc "$(stat -c %s "$TMP/bigz.ptt") / $nz")" "bytes/event"
timed() { /usr/bin/time -f "%e %M" -o "$TMP/time" "$@" >/dev/null 2>&1; cat "$TMP/time"; }
for tool in "ptt-dump" "ptt-dump --check" "ptt-filter --event=mutex_unlock" "ptt-paje" "ptt-csv" "ptt-stat" "ptt-deadlock"; do
	read -r secs rss <<<"$(timed $BIN/$tool "$TMP/big.ptt")"
	say "$tool: decode speed" "$(calc "$n / $secs")" "events/s" "peak RSS $((rss / 1024)) MB"
done
read -r secs rss <<<"$(timed "$BIN/ptt-paje" "$TMP/big.ptt")"
"$BIN/ptt-paje" "$TMP/big.ptt" | wc -l >"$TMP/lines"
say "ptt-paje: Paje lines written" "$(calc "$(cat "$TMP/lines") / $secs")" "lines/s"
if command -v pj_dump >/dev/null; then
	"$BIN/ptt-filter" -n --first=0 --count=1000000 "$TMP/big.ptt" | "$BIN/ptt-paje" >"$TMP/m.paje"
	lines=$(wc -l <"$TMP/m.paje")
	read -r secs rss <<<"$(timed pj_dump -q "$TMP/m.paje")"
	say "pj_dump -q on ptt-paje's output (1 M events)" "$secs" "s" "$lines lines, $(calc "$lines / $secs") lines/s, peak RSS $((rss / 1024)) MB"
fi
read -r secs rss <<<"$(timed "$BIN/ptt-record" -q -o "$TMP/m.ptt" -- "$OUT/lockloop" private 2 2000000)"
say "ptt-record peak RSS (1 MiB rings, 3 threads)" "$((rss / 1024))" "MB"
# a window by time: blocks read by headers only
read -r full _ <<<"$(timed "$BIN/ptt-filter" -n --event=none "$TMP/big.ptt")"
read -r win _ <<<"$(timed "$BIN/ptt-filter" -n --from=0.2s --to=0.203s "$TMP/big.ptt")"
say "window of ~1% by time / full scan (ptt-filter -n)" "$(calc "$win / ($full + 0.0001)")" "ratio"
echo "CSV: $CSV"

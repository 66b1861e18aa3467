#!/bin/sh
# bench/whatif_coz.sh - Coz's answer to the what-if on the critical-path
# ground-truth examples (issue 32, item 5: "Coz side by side").
#
# Coz (Debian coz-profiler: /usr/bin/coz, /usr/include/coz.h) predicts what
# speeding up one source line would buy by experiment: while the line runs, it
# delays every other thread (a "virtual speedup") and measures the rate of the
# program's progress points.  Each example is built here with -DPTT_COZ, which
# puts a progress point at its unit of work (cp_work.h: CP_PROGRESS), into a
# build directory of its own (no libptt: Coz alone is preloaded), with DWARF 4
# and no location views (Coz 0.2.2's libelfin reads nothing newer).  Then runs
# alternate between `coz run --fixed-line LINE --fixed-speedup 0` (the
# baseline) and `--fixed-speedup 50`, LINE being the critical section's work
# (the main lock's hold), until both have MIN_UNITS progress points and at
# least 2 runs each (MAX_RUNS at most).  profile.coz is read as Coz's viewer
# reads it (viewer/ts/profile.ts): per speedup, the experiments' durations
# (virtual time: Coz's inserted delays are taken out) and progress deltas are
# summed; time per unit = duration / delta; the predicted program speedup is
# (t0 - t50) / t0, printed as a change of run time, -X %.
# Beside it: the same arguments run without Coz, base and with the hold halved
# (the real change), RUNS each interleaved, medians: the measured change.
# (cp_rust_chain has no progress point: Coz's is a C macro, and Rust's needs the coz crate.)
#
#   bench/whatif_coz.sh [BUILD]      (the Coz build goes to BUILD-coz; default build)
#   RUNS=5 MIN_UNITS=100 MAX_RUNS=12 ONLY=REGEX (examples to run, grep -E)
# Output, one line an example:
#   PROG  LINE  coz -X.X % (RUNS runs, UNITS units)  measured -Y.Y %  formula -Z.Z %
set -u
BUILD=${1:-build}
RUNS=${RUNS:-5}
MIN_UNITS=${MIN_UNITS:-100}
MAX_RUNS=${MAX_RUNS:-12}
ONLY=${ONLY:-.}
CC=${CC:-cc}
NICE=${NICE:-}
SRC=$(cd "$(dirname "$0")/.." && pwd)
OUT=$BUILD-coz
# shellcheck source=bench/whatif_runs.sh
. "$SRC/bench/whatif_runs.sh"
command -v coz >/dev/null || { echo "whatif_coz.sh: coz not installed (Debian: apt-get install coz-profiler)" >&2; exit 1; }
mkdir -p "$OUT" || exit 1

# PROG|the critical section's source line (a pattern that finds it)|base arguments|hold halved
# The arguments are the defaults scaled down (the same path's shape), repeated for enough units.
EXAMPLES='cp_chain|CP_WORK(l->hold);|-r 30 8 12 4 4|-r 30 4 6 2 4
cp_pipeline|CP_WORK(s_ms);|-r 30 0.5 4 1 4|-r 30 0.5 2 1 4
cp_pool|CP_WORK(h);|-r 5 4 2 2 20|-r 5 4 1 2 20
cp_forkjoin|CP_WORK(merge_ms);|-r 60 1.25 5 2|-r 60 1.25 5 1
cp_condchain|CP_WORK(work_ms\[i\]);|-r 40 0.5 1.5 2.5 3.5 5|-r 40 0.5 0.75 1.25 1.75 2.5'



# sums PROFILE SPEEDUP: "duration_ns delta experiments" summed over PROFILE's experiments at SPEEDUP (0.00, 0.50)
sums() {
	awk -v s="$2" -F'\t' '
		$1 == "experiment" { sel = 0; for (i = 2; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] }
			if (f["speedup"] + 0 == s + 0) { sel = 1; dur = f["duration"]; n++ } }
		($1 == "throughput-point" || $1 == "progress-point") && sel { split($3, kv, "="); d += kv[2]; t += dur }
		END { print t + 0, d + 0, n + 0 }' "$1"
}

echo "Coz (coz-profiler $(dpkg-query -W -f='${Version}' coz-profiler 2>/dev/null)) beside the real change: the main lock's hold halved"
printf '%-13s %-18s %-34s %9s %9s\n' PROG LINE "COZ: 50 % LINE SPEEDUP" MEASURED FORMULA
echo "$EXAMPLES" | while IFS='|' read -r prog pat base half; do
	echo "$prog" | grep -Eq "$ONLY" || continue
	$CC -std=gnu11 -D_GNU_SOURCE -DPTT_COZ -O2 -gdwarf-4 -gstrict-dwarf -gno-variable-location-views -pthread \
		-I"$SRC/examples" -o "$OUT/$prog" "$SRC/examples/$prog.c" -ldl || continue
	line=$(grep -n "$pat" "$SRC/examples/$prog.c" | head -1 | cut -d: -f1)
	prof=$OUT/$prog.coz
	rm -f "$prof"
	runs=0
	while [ $runs -lt "$MAX_RUNS" ]; do
		for sp in 0 50; do
			# shellcheck disable=SC2086
			coz run -o "$prof" --fixed-line "$prog.c:$line" --fixed-speedup $sp --- "$OUT/$prog" $base \
				>/dev/null 2>>"$OUT/$prog.log"
			runs=$((runs + 1))
		done
		# shellcheck disable=SC2046
		set -- $(sums "$prof" 0) $(sums "$prof" 0.5)
		[ $runs -ge 4 ] && [ "$2" -ge "$MIN_UNITS" ] && [ "$5" -ge "$MIN_UNITS" ] && break
	done
	# shellcheck disable=SC2046
	set -- $(sums "$prof" 0) $(sums "$prof" 0.5)
	coz=$(awk -v t0="$1" -v d0="$2" -v t5="$4" -v d5="$5" -v r="$runs" 'BEGIN {
		if (d0 == 0 || d5 == 0) { printf "no figure (%d runs)", r; exit }
		b = t0 / d0; v = t5 / d5
		printf "%+.1f %% (%d runs, %d+%d units)", (v / b - 1) * 100, r, d0, d5 }')
	interleaved "$OUT/$prog" "$base" "$half" "$OUT/b" "$OUT/h"
	# shellcheck disable=SC2086
	form=$(CP_TRUTH=1 "$OUT/$prog" $base 2>&1 >/dev/null |
		awk '$2 == "path" { p = $3 } $2 == "what-if" { w = $(NF - 1) } END { printf "%+.1f %%", (w / p - 1) * 100 }')
	meas=$(awk -v b="$(median "$OUT/b")" -v h="$(median "$OUT/h")" 'BEGIN { printf "%+.1f %%", (h / b - 1) * 100 }')
	printf '%-13s %-18s %-34s %9s %9s\n' "$prog" "$prog.c:$line" "$coz" "$meas" "$form"
done

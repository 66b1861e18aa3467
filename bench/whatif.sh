#!/bin/sh
# bench/whatif.sh - what-if checked against reality (issue 32, item 5) on the
# critical-path ground-truth examples (examples/cp_*): each is run untraced
# RUNS times with its base arguments and RUNS times with its main lock's hold
# halved (the real change: a different argument), the two interleaved so that a
# load change on this shared machine hits both alike; the medians of the wall
# time each run prints (CP_TRUTH=1: main's start to end) give the measured
# speedup, printed beside the ground truth's formulas.  Then, where
# $BUILD/bin/ptt-critical is built, one base run is recorded with ptt-record and
# `ptt-critical --what-if=LOCK:-50%` predicts the halved run from it (see
# predict() below); its error against the measured halved median is printed.
#
#   bench/whatif.sh [BUILD]          (default build; make BUILD=... all first)
#   RUNS=5        runs of each variant
#   ONLY=cp_chain only the examples whose name matches this (grep -E)
#   NICE="nice -n -10"  a prefix for every run of an example (root: less noise
#                 from the other users of the CPUs); default none
# Output, one line an example:
#   PROG  base MS  halved MS  measured -X.X %  formula BASE -> HALVED
#         predicted MS of MS recorded: -Z.Z % (err +E.E points)
# Run times are in ms; "measured" is halved/base - 1, a median of RUNS each; the
# prediction is the one recorded run's, and its speedup (predicted/recorded - 1)
# is compared with the measured one: err is the difference, in percentage points
# (the recorded run's own length varies with the load as any run's does).
set -u
BUILD=${1:-build}
RUNS=${RUNS:-5}
ONLY=${ONLY:-.}
NICE=${NICE:-}
EX=$BUILD/examples
TMP=$(mktemp -d "${TMPDIR:-/tmp}/whatif.XXXXXX") || exit 1
trap 'rm -rf "$TMP"' EXIT INT TERM
# shellcheck source=bench/whatif_runs.sh
. "$(dirname "$0")/whatif_runs.sh"

# PROG|LOCK (as ptt names it)|base arguments|arguments with LOCK's holds halved
EXAMPLES='cp_chain|chain_lock|20 30 10 10|10 15 5 10
cp_pipeline|stage_lock|1 20 5 8|1 10 5 8
cp_pool|pool_lock|4 2 2 20|4 1 2 20
cp_forkjoin|merge_lock|-r 2 5 20 8|-r 2 5 20 4
cp_condchain|work_lock|2 6 10 14 20|2 3 5 7 10
cp_rust_chain|cp_rust_chain::CHAIN_LOCK|20 30 10 10|10 15 5 10'

# the line KEY WHAT of the ground truth PROG ARGS... prints (ms)
truth() {
	key=$1 what=$2
	shift 2
	CP_TRUTH=1 "$@" 2>&1 >/dev/null | awk -v k="$key" -v w="$what" '$2 == k && (w == "" || $3 == w) { print $(NF - 1) }'
}


# ---- the prediction from a trace (issue 32 item 4: ptt-critical --what-if) ----
# predict NAME LOCK COMMAND...: record one base run of COMMAND, and print the run time
# ptt-critical predicts with LOCK's holds halved and the recorded run's (ms), from
# its line "predicted: MS ms (the run as recorded: MS ms; ...)"; nothing when
# ptt-critical is not built or fails.
predict() {
	prog=$1 lock=$2
	shift 2
	[ -x "$BUILD/bin/ptt-critical" ] || return 0
	# shellcheck disable=SC2086
	$NICE "$BUILD/bin/ptt-record" -q -o "$TMP/$prog.ptt" -- "$@" >/dev/null 2>&1 || return 0
	"$BUILD/bin/ptt-critical" --what-if="$lock:-50%" "$TMP/$prog.ptt" 2>/dev/null |
		awk '$1 == "predicted:" && $3 == "ms" { r = $0; sub(/.*recorded: /, "", r); print $2, r + 0; exit }'
}

echo "what-if on the ground-truth examples: $RUNS untraced runs of each variant, medians (ms)"
printf '%-14s %9s %9s %10s   %-22s %s\n' PROG BASE HALVED MEASURED "FORMULA BASE->HALVED" "PREDICTED (ptt-critical)"
echo "$EXAMPLES" | while IFS='|' read -r prog lock base half; do
	echo "$prog" | grep -Eq "$ONLY" || continue
	[ -x "$EX/$prog" ] || { printf '%-14s not built (%s)\n' "$prog" "$EX/$prog"; continue; }
	interleaved "$EX/$prog" "$base" "$half" "$TMP/b" "$TMP/h"
	b=$(median "$TMP/b") h=$(median "$TMP/h")
	if [ -z "$b" ] || [ -z "$h" ]; then
		printf '%-14s failed to run\n' "$prog"
		continue
	fi
	# shellcheck disable=SC2086
	fb=$(truth path "" "$EX/$prog" $base)
	# shellcheck disable=SC2086
	fh=$(truth what-if "" "$EX/$prog" $base)
	# shellcheck disable=SC2086
	p=$(predict "$prog" "$lock" "$EX/$prog" $base)
	pr=-
	[ -n "$p" ] && pr=$(echo "$p" | awk -v b="$b" -v h="$h" '{
		printf "%.1f of %.1f recorded: %+.1f %% (err %+.1f points)", $1, $2, ($1 / $2 - 1) * 100,
			(($1 / $2) - (h / b)) * 100 }')
	awk -v prog="$prog" -v b="$b" -v h="$h" -v fb="$fb" -v fh="$fh" -v pr="$pr" 'BEGIN {
		printf "%-14s %9.1f %9.1f %+9.1f %%   %-22s %s\n", prog, b, h, (h / b - 1) * 100,
			sprintf("%.1f -> %.1f", fb, fh), pr }'
done

# ---- a program we did not write (issue 32 item 5) ----
# CPython: examples/cp_py_lock.py holds a threading.Lock (a semaphore inside the
# interpreter) over a sleep; the real change is its HOLD_MS argument, the
# prediction names the holds by their site's function (worker).  The program
# prints no time: the whole process is timed, start-up included, as the
# prediction covers the whole recorded run.
# NAME|COMMAND|LOCK (a name ptt-critical's --what-if takes)|base arguments|halved arguments
FOREIGN="cpython|python3|worker|$(dirname "$0")/../examples/cp_py_lock.py 5 1|$(dirname "$0")/../examples/cp_py_lock.py 2.5 1"
echo
echo "what-if on a program we did not write: $RUNS untraced runs of each variant, whole-process medians (ms)"
printf '%-14s %9s %9s %10s   %s\n' PROG BASE HALVED MEASURED "PREDICTED (ptt-critical)"
echo "$FOREIGN" | while IFS='|' read -r name cmd lock base half; do
	echo "$name" | grep -Eq "$ONLY" || continue
	command -v "$cmd" >/dev/null || { printf '%-14s skipped: %s is not installed\n' "$name" "$cmd"; continue; }
	interleaved "$cmd" "$base" "$half" "$TMP/b" "$TMP/h" procwall
	b=$(median "$TMP/b") h=$(median "$TMP/h")
	if [ -z "$b" ] || [ -z "$h" ]; then
		printf '%-14s failed to run\n' "$name"
		continue
	fi
	# shellcheck disable=SC2086
	p=$(predict "$name" "$lock" "$cmd" $base)
	pr=-
	[ -n "$p" ] && pr=$(echo "$p" | awk -v b="$b" -v h="$h" '{
		printf "%.1f of %.1f recorded: %+.1f %% (err %+.1f points)", $1, $2, ($1 / $2 - 1) * 100,
			(($1 / $2) - (h / b)) * 100 }')
	awk -v n="$name" -v b="$b" -v h="$h" -v pr="$pr" 'BEGIN {
		printf "%-14s %9.1f %9.1f %+9.1f %%   %s\n", n, b, h, (h / b - 1) * 100, pr }'
done

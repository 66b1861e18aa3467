# bench/whatif_runs.sh - what bench/whatif.sh and bench/whatif_coz.sh share, sourced by both:
# running a ground-truth example (examples/cp_*) and reading its own wall time.
# Uses $RUNS (runs of each variant) and $NICE (a prefix for every run; may be empty).

# wall PROG ARGS...: the wall time (ms) the example prints of its own run (CP_TRUTH=1)
wall() {
	# shellcheck disable=SC2086 # NICE is words
	CP_TRUTH=1 $NICE "$@" 2>&1 >/dev/null | awk '$2 == "wall" { print $3 }'
}

# median FILE: the median of its lines' numbers
median() {
	sort -n "$1" | awk '{ v[NR] = $1 } END { if (NR) print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'
}

# interleaved PROG "BASE ARGS" "HALVED ARGS" BFILE HFILE: RUNS runs of each, one of each in turn (a
# load change on the machine hits both alike), their wall times into BFILE and HFILE
interleaved() {
	: >"$4" && : >"$5"
	i=0
	while [ $i -lt "$RUNS" ]; do
		# shellcheck disable=SC2086 # the arguments are words
		wall "$1" $2 >>"$4"
		# shellcheck disable=SC2086
		wall "$1" $3 >>"$5"
		i=$((i + 1))
	done
}

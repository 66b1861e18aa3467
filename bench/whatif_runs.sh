# bench/whatif_runs.sh - what bench/whatif.sh and bench/whatif_coz.sh share, sourced by both:
# running a ground-truth example (examples/cp_*) and reading its own wall time.
# Uses $RUNS (runs of each variant) and $NICE (a prefix for every run; may be empty).

# wall PROG ARGS...: the wall time (ms) the example prints of its own run (CP_TRUTH=1)
wall() {
	# shellcheck disable=SC2086 # NICE is words
	CP_TRUTH=1 $NICE "$@" 2>&1 >/dev/null | awk '$2 == "wall" { print $3 }'
}

# procwall PROG ARGS...: the wall time (ms) of the whole process, start-up included (for
# programs that print no time of their own: ptt-critical's prediction covers the whole run)
procwall() {
	s=$(date +%s%N)
	# shellcheck disable=SC2086 # NICE is words
	$NICE "$@" >/dev/null 2>&1 || return 0
	e=$(date +%s%N)
	echo $(((e - s) / 1000)) | awk '{ printf "%.1f\n", $1 / 1000 }'
}

# median FILE: the median of its lines' numbers
median() {
	sort -n "$1" | awk '{ v[NR] = $1 } END { if (NR) print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'
}

# interleaved PROG "BASE ARGS" "HALVED ARGS" BFILE HFILE [TIMER]: RUNS runs of each, one of each in
# turn (a load change on the machine hits both alike), their wall times into BFILE and HFILE;
# TIMER is wall (the example's own, the default) or procwall (the whole process)
interleaved() {
	timer=${6:-wall}
	: >"$4" && : >"$5"
	i=0
	while [ $i -lt "$RUNS" ]; do
		# shellcheck disable=SC2086 # the arguments are words
		$timer "$1" $2 >>"$4"
		# shellcheck disable=SC2086
		$timer "$1" $3 >>"$5"
		i=$((i + 1))
	done
}

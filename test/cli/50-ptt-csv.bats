#!/usr/bin/env bats
# ptt-csv: one row per event, RFC 4180 quoting, state intervals.
bats_require_minimum_version 1.5.0
load helpers

setup() {
	T="$BATS_TEST_TMPDIR/t.ptt"
	ptt-record -q -o "$T" -- "$EXAMPLES/prodcons" -p 2 -c 2 -n 2000 >/dev/null
}

@test "ptt-csv --help, --version and usage errors" {
	run -0 ptt-csv --help
	[[ "$output" == *"Usage: ptt-csv"* ]]
	run -0 ptt-csv --version
	run -2 --separate-stderr ptt-csv --bogus
}

@test "one row per event under a header row; text and binary input agree" {
	ptt-csv "$T" >"$BATS_TEST_TMPDIR/e.csv"
	[ "$(head -1 "$BATS_TEST_TMPDIR/e.csv")" = "time_ns,time_s,pid,tid,thread_name,source,event,class,object,object_name,args,site,site_line" ]
	[ $(($(wc -l <"$BATS_TEST_TMPDIR/e.csv") - 1)) -eq "$(ptt-dump -n "$T" | wc -l)" ]
	ptt-dump "$T" | ptt-csv | cmp - "$BATS_TEST_TMPDIR/e.csv"
	grep -q ',pthread,mutex_lock,mutex,0x[0-9a-f]*,queue_lock,mutex=0x[0-9a-f]*;ret=0;site=0x[0-9a-f]*,[^,]* (prodcons),prodcons.c:[0-9]*$' "$BATS_TEST_TMPDIR/e.csv"
}

@test "fields with commas and quotes are quoted as RFC 4180 says" {
	{ ptt-dump "$T" | grep '^#'
	  printf '0.000000001 1 1 pthread thread_name target=1 name="a,b \\"c\\""\n'
	  printf '0.000000002 1 1 pthread object_name object=0x10 name="x"\n'; } | ptt-csv >"$BATS_TEST_TMPDIR/q.csv"
	grep -qF '1,1,"a,b ""c""",pthread,thread_name,thread,,,"target=1;name=a,b ""c"""' "$BATS_TEST_TMPDIR/q.csv"
	if command -v python3 >/dev/null; then
		python3 -c 'import csv,sys; rows=list(csv.reader(open(sys.argv[1]))); assert all(len(r)==13 for r in rows), rows' "$BATS_TEST_TMPDIR/q.csv"
	fi
}

@test "--states: holding intervals equal acquisitions; durations add up" {
	ptt-csv --states "$T" >"$BATS_TEST_TMPDIR/s.csv"
	[ "$(head -1 "$BATS_TEST_TMPDIR/s.csv")" = "pid,tid,thread_name,state,object,object_name,start_ns,end_ns,duration_ns,complete" ]
	holds=$(awk -F, '$4=="holding_mutex"' "$BATS_TEST_TMPDIR/s.csv" | wc -l)
	acq=$(ptt-dump -n "$T" | awk '$5=="mutex_lock" || $5=="cond_wait"' | wc -l)
	[ "$holds" -eq "$acq" ]
	awk -F, 'NR>1 && $9 != $8 - $7 {bad++} END {exit bad>0}' "$BATS_TEST_TMPDIR/s.csv"
}

@test "--states on a cut trace marks the intervals the end cut short" {
	ptt-dump "$T" | head -n 2000 | ptt-csv --states >"$BATS_TEST_TMPDIR/c.csv"
	[ "$(awk -F, 'NR>1 && $10==0' "$BATS_TEST_TMPDIR/c.csv" | wc -l)" -ge 1 ]
}

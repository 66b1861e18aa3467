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

@test "thread_name is the symboliser's: the start routine of an unnamed thread, the command for the main thread" {
	ptt-record -q -o "$BATS_TEST_TMPDIR/w.ptt" -- "$EXAMPLES/two_sites" >/dev/null
	run -0 --separate-stderr ptt-csv "$BATS_TEST_TMPDIR/w.ptt"
	[ -z "$stderr" ]
	# the worker threads never name themselves: worker_main is their start routine
	names=$(echo "$output" | awk -F, 'NR == 1 || $6 != "pthread" { next } $3 == $4 { m[$5]++ } $3 != $4 { w[$5]++ }
		END { for (n in m) print "main", n; for (n in w) print "worker", n }' | sort)
	[ "$names" = "main two_sites
worker worker_main" ]
	run -0 --separate-stderr ptt-csv --states "$BATS_TEST_TMPDIR/w.ptt"
	[ "$(echo "$output" | awk -F, 'NR > 1 && $3 == "" { n++ } END { print n + 0 }')" -eq 0 ]
	[[ "$output" == *",worker_main,holding_mutex,"* ]]
}

@test "a named semaphore is called by its name in every tool, as sem_open gave it" {
	ptt-record -q -l 3 -o "$BATS_TEST_TMPDIR/n.ptt" -- "$EXAMPLES/primitives" sem >/dev/null
	run -0 --separate-stderr ptt-csv "$BATS_TEST_TMPDIR/n.ptt"
	[[ "$output" == *",pthread,sem_wait,sem,0x"*",/ptt-primitives,sem=0x"* ]]
	run -0 --separate-stderr ptt-dump --human "$BATS_TEST_TMPDIR/n.ptt"
	[[ "$output" == *" takes semaphore /ptt-primitives"* ]]
	[[ "$output" == *' opens semaphore "/ptt-primitives" at 0x'* ]]
	run -0 --separate-stderr ptt-stat -n 0 "$BATS_TEST_TMPDIR/n.ptt"
	[[ "$output" == *"/ptt-primitives"* ]]
	ptt-paje -O "$BATS_TEST_TMPDIR/n.ptt" >"$BATS_TEST_TMPDIR/n.paje"
	grep -q ' CT_Sem .* "semaphore /ptt-primitives"$' "$BATS_TEST_TMPDIR/n.paje"
	ptt-filter --object=/ptt-primitives "$BATS_TEST_TMPDIR/n.ptt" >"$BATS_TEST_TMPDIR/f.ptt"
	run -0 --separate-stderr ptt-dump -n "$BATS_TEST_TMPDIR/f.ptt"
	[ "$(echo "$output" | awk '$5 ~ /^sem_(wait|post)$/' | wc -l)" -eq 2 ]
	assert_paje_valid "$BATS_TEST_TMPDIR/n.paje"
	assert_vite_clean "$BATS_TEST_TMPDIR/n.paje"
}

# One naming: the object names ptt-json shows are in the CSV, rows and states.
@test "CSV names every object ptt-json names (module+0xoff of a stripped program), joins by thread" {
	command -v python3 >/dev/null || skip "python3 not installed"
	strip -o "$BATS_TEST_TMPDIR/inv_s" "$EXAMPLES/inversion"
	ptt-record -q -o "$BATS_TEST_TMPDIR/s.ptt" -- "$BATS_TEST_TMPDIR/inv_s" >/dev/null
	json=$(ptt-json "$BATS_TEST_TMPDIR/s.ptt" | python3 -c '
import json, sys
for e in json.load(sys.stdin)["traceEvents"]:
    a = e.get("args", {})
    if "object_name" in a and not a["object_name"].startswith("0x"):
        print(a["object"], a["object_name"])' | sort -u)
	[ "$(wc -l <<<"$json")" -eq 2 ]
	grep -qE '^0x[0-9a-f]+ inv_s\+0x[0-9a-f]+$' <<<"$json"
	[ "$(ptt-csv --states "$BATS_TEST_TMPDIR/s.ptt" | awk -F, '$4 == "holding_mutex" { print $5, $6 }' | sort -u)" = "$json" ]
	[ "$(ptt-csv "$BATS_TEST_TMPDIR/s.ptt" | awk -F, '$7 == "mutex_lock" { print $9, $10 }' | sort -u)" = "$json" ]
	# a join names the thread it waits for
	[ "$(ptt-csv --states "$BATS_TEST_TMPDIR/s.ptt" | awk -F, '$4 == "join" { print $6 }' | tr '\n' ' ')" = "first second " ]
}

@test "a selection's left-out waits make no phantom meta row in ptt-stat" {
	ptt-record -q -o "$BATS_TEST_TMPDIR/p.ptt" -- "$EXAMPLES/prodcons" -n 500 >/dev/null
	ptt-filter --mutex=queue_lock "$BATS_TEST_TMPDIR/p.ptt" >"$BATS_TEST_TMPDIR/f.ptt"
	# the barrier's waits were left out: the threads show them as OTHER, no object row
	[ "$(ptt-dump -n "$BATS_TEST_TMPDIR/f.ptt" | grep -c ' wait_other ')" -gt 0 ]
	run -0 --separate-stderr ptt-stat -n 0 -S 0 "$BATS_TEST_TMPDIR/f.ptt"
	[ "$(awk '/^OBJECT/ { o = 1; next } /^$/ { o = 0 } o { print $2 }' <<<"$output" | sort -u | tr '\n' ' ')" = "cond mutex " ]
	run -0 --separate-stderr ptt-stat --csv -S 0 "$BATS_TEST_TMPDIR/f.ptt"
	[ "$(awk -F, 'NR > 1 && $1 == "" { exit } NR > 1 && $3 == "meta"' <<<"$output" | wc -l)" -eq 0 ]
}

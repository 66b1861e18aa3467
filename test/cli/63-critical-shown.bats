#!/usr/bin/env bats
# The critical path where people look (issue 32, item 6): ptt-stat's CRIT column and --sort=critical,
# the closing summary's line (ptt-stat --brief, ptt-record), ptt-json --critical's track and flows.
# Ground truth: examples/cp_idle_vs_path, one lock on the path, another waited for more by idle threads.
bats_require_minimum_version 1.5.0
load helpers

# One recording for the file: two workers take path_lock in turn 40 x 500 us each (at least 40 ms held,
# all of it on the path); an idle thread sleeps 20 ms in idle_lock while 4 others wait (about 80 ms), done first.
setup_file() {
	export CP="$BATS_FILE_TMPDIR/cp.ptt"
	ptt-record -o "$CP" -- "$EXAMPLES/cp_idle_vs_path" -n 40 -h 500 >"$BATS_FILE_TMPDIR/out.txt" 2>"$BATS_FILE_TMPDIR/err.txt"
}

# field N (CSV) of the object row named NAME
csv_field() { ptt-stat --csv -S 0 "$CP" | awk -F, -v n="$1" -v f="$2" '$2 == n && $18 != "" { print $f; exit }'; }

@test "cp_idle_vs_path prints its ground truth" {
	[ "$(sed -n 1p "$BATS_FILE_TMPDIR/out.txt")" = "path_lock: held 2 x 40 x 500 us = 40.0 ms in turn by two workers, the run's length: on the critical path" ]
	[ "$(sed -n 2p "$BATS_FILE_TMPDIR/out.txt")" = "idle_lock: held 20 ms asleep by an idle thread while 4 others waited for it (about 80 ms in all), done before the workers: not on the path" ]
}

@test "ptt-stat's CRIT: the lock on the path has its holds there, the idle lock waited for most has none" {
	run -0 --separate-stderr ptt-stat --csv -S 0 "$CP"
	[ -z "$stderr" ]
	[[ "${lines[0]}" == *",use,critical_ns" ]]
	path_wait=$(csv_field path_lock 8) path_hold=$(csv_field path_lock 13) path_crit=$(csv_field path_lock 19)
	idle_wait=$(csv_field idle_lock 8) idle_crit=$(csv_field idle_lock 19)
	echo "path_lock wait $path_wait hold $path_hold crit $path_crit; idle_lock wait $idle_wait crit $idle_crit"
	# off the path: nothing, however long it was waited for (more than path_lock)
	[ "$idle_crit" -eq 0 ]
	[ "$idle_wait" -gt "$path_wait" ]
	# on it: every hold (80 x at least 500 us asleep holding it), never more than its holds and waits
	[ "$path_crit" -ge $((2 * 40 * 500 * 1000 * 95 / 100)) ]
	[ "$path_crit" -le $((path_hold + path_wait + 1000)) ]
	# the text table: the same figure in ms, beside the hold columns, and the legend says what it is
	run -0 --separate-stderr ptt-stat -S 0 "$CP"
	[[ "${lines[1]}" == *" MAX(us)    CRIT(ms)  OWNERS TOP WAITER" ]]
	[ "$(awk '$1 == "path_lock" { print $14; exit }' <<<"$output")" = "$(awk -v c="$path_crit" 'BEGIN { printf "%.3f", c / 1e6 }')" ]
	[ "$(awk '$1 == "idle_lock" { print $14; exit }' <<<"$output")" = "0.000" ]
	[[ "$output" == *$'\n'"CRIT: an object's time on the critical path, held or waited for by the thread the path runs"$'\n'* ]]
}

@test "ptt-stat --sort=critical puts the lock on the path first; by wait, the idle one is first" {
	run -0 --separate-stderr ptt-stat -S 0 "$CP"
	[ "$(sed -n 3p <<<"$output" | awk '{ print $1 }')" = "idle_lock" ]
	run -0 --separate-stderr ptt-stat -S 0 --sort=critical "$CP"
	[ -z "$stderr" ]
	[ "${lines[0]}" = "LOCKS: mutual exclusion (mutexes, rwlocks, spinlocks, semaphores used as locks), most time on the critical path first" ]
	[ "$(sed -n '3,4p' <<<"$output" | awk '{ print $1 }' | tr '\n' ' ')" = "path_lock idle_lock " ]
	run -0 --separate-stderr ptt-stat --csv -S 0 --sort=critical "$CP"
	[ "$(sed -n '2,3p' <<<"$output" | cut -d, -f2 | tr '\n' ' ')" = "path_lock idle_lock " ]
	run -2 --separate-stderr ptt-stat --sort=nope "$CP"
	[ "$stderr" = "ptt-stat: --sort: one of wait, hold, count, contended, critical: 'nope'"$'\n'"Try 'ptt-stat --help' for more information." ]
}

@test "the closing summary names the lock on the path, its share of the run, and ptt-critical" {
	# ptt-record's summary ends with ptt-stat --brief's lines
	run -0 --separate-stderr ptt-stat --brief --top=3 "$CP"
	[ -z "$stderr" ]
	[[ "${lines[-1]}" =~ ^on\ the\ critical\ path:\ path_lock\ \(mutex\)\ ([0-9.]+)\ %\ of\ the\ run\ \(ptt-critical\ (.*)\ for\ what\ to\ fix\ first\)$ ]]
	[ "${BASH_REMATCH[2]}" = "$CP" ]
	pct=${BASH_REMATCH[1]}
	# the share is path_lock's CRIT over the path's length (ptt-critical's first line)
	len=$(ptt-critical "$CP" | sed -n 's/^critical path: \([0-9.]*\) ms,.*/\1/p')
	[ "$pct" = "$(awk -v c="$(csv_field path_lock 19)" -v l="$len" 'BEGIN { printf "%.1f", c / 1e4 / l }')" ] ||
		awk -v p="$pct" -v c="$(csv_field path_lock 19)" -v l="$len" 'BEGIN { d = p - c / 1e4 / l; exit !(d < 0.11 && d > -0.11) }'
	awk -v p="$pct" 'BEGIN { exit !(p >= 50) }'
	[ "$(tail -1 "$BATS_FILE_TMPDIR/err.txt")" = "${lines[-1]}" ]
	# stdin: FILE
	run -0 --separate-stderr ptt-stat --brief - <"$CP"
	[[ "${lines[-1]}" == *"(ptt-critical FILE for what to fix first)" ]]
}

@test "no line when nothing but running is on the path, or less than 0.1 % of it" {
	# a lock held 1 ns of a 100 us run; then 20 us of it
	printf '# ptt-trace 1\n%s\n' \
		'0.000000001 10 10 pthread process_begin ppid=1 cmd="t"' \
		'0.000000002 10 10 pthread mutex_lock mutex=0x20 ret=0' \
		'0.000000003 10 10 pthread mutex_unlock mutex=0x20 ret=0' \
		'0.000100001 10 10 pthread process_exit status=0' >"$BATS_TEST_TMPDIR/t.txt"
	run -0 --separate-stderr ptt-stat --brief "$BATS_TEST_TMPDIR/t.txt"
	[ -z "$stderr" ]
	[ "$output" = "no thread waited for a lock" ]
	sed -i 's/^0.000000003 /0.000020002 /' "$BATS_TEST_TMPDIR/t.txt"
	run -0 --separate-stderr ptt-stat --brief "$BATS_TEST_TMPDIR/t.txt"
	[ "$output" = "no thread waited for a lock"$'\n'"on the critical path: 0x20 (mutex) 20.0 % of the run, the work done holding it: never waited for on the path (ptt-critical $BATS_TEST_TMPDIR/t.txt for what to fix first)" ]
	# the same trace in two files read as one: both named, in order
	{ echo '# ptt-trace 1'; grep -v '^#' "$BATS_TEST_TMPDIR/t.txt" | head -2; } >"$BATS_TEST_TMPDIR/a.txt"
	{ echo '# ptt-trace 1'; grep -v '^#' "$BATS_TEST_TMPDIR/t.txt" | tail -2; } >"$BATS_TEST_TMPDIR/b.txt"
	run -0 --separate-stderr ptt-stat --brief "$BATS_TEST_TMPDIR/a.txt" "$BATS_TEST_TMPDIR/b.txt"
	[ -z "$stderr" ]
	[ "${lines[-1]}" = "on the critical path: 0x20 (mutex) 20.0 % of the run, the work done holding it: never waited for on the path (ptt-critical $BATS_TEST_TMPDIR/a.txt $BATS_TEST_TMPDIR/b.txt for what to fix first)" ]
	printf '# ptt-trace 1\n%s\n' \
		'0.000000001 10 10 pthread process_begin ppid=1 cmd="t"' \
		'0.000100001 10 10 pthread process_exit status=0' >"$BATS_TEST_TMPDIR/t.txt"
	run -0 --separate-stderr ptt-stat --brief "$BATS_TEST_TMPDIR/t.txt"
	[ "$output" = "no thread waited for a lock" ]
}

@test "ptt-json --critical: a critical path track of stretches end to end, flows along its hand-offs; without it, nothing changes" {
	ptt-json "$CP" >"$BATS_TEST_TMPDIR/plain.json"
	run -0 --separate-stderr ptt-json --critical "$CP"
	[ -z "$stderr" ]
	printf '%s\n' "$output" >"$BATS_TEST_TMPDIR/c.json"
	run -0 python3 "$BATS_TEST_DIRNAME/chrome_json_check.py" "$BATS_TEST_TMPDIR/c.json"
	len=$(ptt-critical "$CP" | sed -n 's/^critical path: \([0-9.]*\) ms,.*/\1/p')
	python3 - "$BATS_TEST_TMPDIR/c.json" "$BATS_TEST_TMPDIR/plain.json" "$len" <<'PY'
import json, sys
doc, plain = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
ev, meta = doc["traceEvents"], doc["metadata"]
cp = meta["critical_path"]
track = [e for e in ev if e.get("tid") == 2147483647]
names = [e for e in track if e["ph"] == "M"]
assert [e["args"]["name"] for e in names] == ["critical path"], names
slices = sorted((e for e in track if e["ph"] == "X"), key=lambda e: e["ts"])
assert slices and all(e["cat"] == "critical" for e in slices)
assert len(slices) == cp["stretches"], (len(slices), cp)
# end to end, no gap, no overlap (microseconds, 3 decimals: exact ns)
ns = lambda us: round(us * 1000)
for a, b in zip(slices, slices[1:]):
    assert ns(a["ts"] + a["dur"]) == ns(b["ts"]), (a, b)
assert ns(slices[-1]["ts"] + slices[-1]["dur"]) == cp["to_ns"], (slices[-1], cp)
assert cp["checked"] is True and cp["length_ns"] == cp["to_ns"] - cp["from_ns"]
assert abs(cp["length_ns"] / 1e6 - float(sys.argv[3])) < 0.0011, (cp, sys.argv[3])
assert ns(slices[0]["ts"]) - cp["from_ns"] <= cp["unknown_ns"], (slices[0], cp)
# the workers' running on it: their 80 holds of at least 500 us
workers = {e["tid"] for e in ev if e["ph"] == "M" and e["name"] == "thread_name" and e["args"]["name"].endswith(" worker")}
assert len(workers) == 2, workers
run = sum(e["args"]["running_ns"] for e in slices if e["args"]["tid"] in workers)
assert run >= 0.95 * 2 * 40 * 500e3, run
assert slices[-1]["args"]["tid"] == cp["end_tid"]
# each stretch entered by a hand-off has its flow: from from_tid to tid at its start
flows = {}
for e in ev:
    if e["ph"] in "sf" and e["cat"] == "critical":
        flows.setdefault(e["id"], {})[e["ph"]] = e
entered = {(e["args"]["from_tid"], e["args"]["tid"], ns(e["ts"])) for e in slices if e["args"]["from_tid"]}
drawn = {(f["s"]["tid"], f["f"]["tid"], ns(f["s"]["ts"])) for f in flows.values()}
assert entered and entered == drawn, (entered, drawn)
# the rest is ptt-json's output without --critical, event for event
rest = [e for e in ev if e.get("cat") != "critical" and e.get("tid") != 2147483647]
assert rest == plain["traceEvents"], "events differ"
assert {k: v for k, v in meta.items() if k != "critical_path"} == plain["metadata"]
assert "critical_path" not in plain["metadata"] and not any(e.get("cat") == "critical" for e in plain["traceEvents"])
PY
}

@test "ptt-json --critical on a window and a cut trace stays valid JSON" {
	n=$(ptt-dump -n "$CP" | wc -l)
	from=$(ptt-dump -n "$CP" | sed -n "$((n / 3))p" | awk '{ print $1 }')
	to=$(ptt-dump -n "$CP" | sed -n "$((2 * n / 3))p" | awk '{ print $1 }')
	ptt-filter --from="${from}s" --to="${to}s" "$CP" >"$BATS_TEST_TMPDIR/w.ptt"
	ptt-json --critical "$BATS_TEST_TMPDIR/w.ptt" >"$BATS_TEST_TMPDIR/w.json"
	run -0 python3 "$BATS_TEST_DIRNAME/chrome_json_check.py" "$BATS_TEST_TMPDIR/w.json"
	head -c $(($(stat -c %s "$CP") / 2)) "$CP" >"$BATS_TEST_TMPDIR/cut.ptt"
	run -1 --separate-stderr ptt-json --critical "$BATS_TEST_TMPDIR/cut.ptt"
	printf '%s\n' "$output" >"$BATS_TEST_TMPDIR/cut.json"
	run -0 python3 "$BATS_TEST_DIRNAME/chrome_json_check.py" "$BATS_TEST_TMPDIR/cut.json"
}

@test "--help says what ptt-stat's critical sort and ptt-json's --critical do" {
	run -0 --separate-stderr ptt-stat --help
	[[ "$output" == *"order objects by wait (default), hold, count, contended or critical"* ]]
	run -0 --separate-stderr ptt-json --help
	[[ "$output" == *"  -C, --critical    also the critical path"* ]]
}

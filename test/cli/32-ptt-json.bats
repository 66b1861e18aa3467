#!/usr/bin/env bats
# ptt-json: Chrome Trace Event Format that python3's json module parses, with the fields ptt-json(1) documents.
bats_require_minimum_version 1.5.0
load helpers

teardown() { stop_recorder_left; }

# ptt-json FILE into $BATS_TEST_TMPDIR/t.json, checked; the summary ("threads=N states=N flows=N counters=N") in $summary
json_checked() {
	ptt-json "$@" >"$BATS_TEST_TMPDIR/t.json"
	summary=$(python3 "$BATS_TEST_DIRNAME/chrome_json_check.py" "$BATS_TEST_TMPDIR/t.json") || { echo "$summary"; return 1; }
}

# the count called NAME in $summary
count() {
	local v=${summary#*"$1="}
	echo "${v%% *}"
}

@test "ptt-json --help, --version and usage errors" {
	run -0 --separate-stderr ptt-json --help
	[[ "$output" == *"Usage: ptt-json"* ]]
	[ -z "$stderr" ]
	run -0 --separate-stderr ptt-json --version
	[[ "$output" == "ptt-json "* ]]
	run -2 --separate-stderr ptt-json --bogus
	[ -z "$output" ]
	[[ "$stderr" == *"Try 'ptt-json --help'"* ]]
	run -2 --separate-stderr ptt-json "$BATS_TEST_TMPDIR/nope"
	[ -z "$output" ]
	[[ "$stderr" == "ptt-json: $BATS_TEST_TMPDIR/nope: No such file or directory"* ]]
}

@test "the demo trace: thread tracks, hand-off and join flows, lock counters, names" {
	record "$EXAMPLES/prodcons" -p 2 -c 2 -n 2000
	json_checked -p "$BATS_TEST_TMPDIR/t.ptt"
	[ "$(count threads)" -eq 5 ]
	[ "$(count counters)" -ge 3 ]
	python3 - "$BATS_TEST_TMPDIR/t.json" "$BATS_TEST_TMPDIR/t.ptt" <<'PY'
import json, subprocess, sys, collections
ev = json.load(open(sys.argv[1]))["traceEvents"]
kinds = collections.Counter(e["cat"] for e in ev if e["ph"] == "s")
assert kinds["create"] == 4 and kinds["join"] == 4 and kinds["handoff"] > 0, kinds
names = {e["args"]["name"] for e in ev if e["ph"] == "M" and e["name"] == "thread_name"}
assert {n.split(" ", 1)[-1] for n in names} >= {"producer-0", "producer-1", "consumer-0", "consumer-1"}, names
# a holding interval per acquisition (mutex_lock and the re-acquisition of cond_wait), per thread
held = collections.Counter(e["tid"] for e in ev if e["ph"] == "X" and e["name"].lower() == "holding mutex")
dump = subprocess.run(["ptt-dump", "-n", sys.argv[2]], capture_output=True, text=True, check=True).stdout
acq = collections.Counter(int(l.split()[2]) for l in dump.splitlines() if l.split()[4:5] in (["mutex_lock"], ["cond_wait"]))
assert held == acq, (held, acq)
assert any(e["ph"] == "i" and e["name"] == "mutex_unlock" for e in ev)
assert any(e["ph"] == "C" and e["name"] == "mutex queue_lock" for e in ev)
PY
}

@test "every example converts to JSON with the documented fields" {
	for ex in addr_reuse churn contention cxx_threads inversion prim_cond prim_rwlock prim_sem prim_spin prodcons \
		self_cancel wrapper_semantics "primitives rwlock" "primitives barrier" "primitives sem" "primitives spin" \
		"primitives trylock" "primitives timed" "primitives cancel" "primitives fork"; do
		# shellcheck disable=SC2086 # the example's arguments
		ptt-record -q -e all -o "$BATS_TEST_TMPDIR/t.ptt" -- "$EXAMPLES/"$ex >/dev/null 2>&1
		json_checked "$BATS_TEST_TMPDIR/t.ptt" || { echo "example: $ex"; return 1; }
		[ "$(count counters)" -ge 1 ] || { echo "$ex: $summary"; return 1; }
		# a track per thread; a program that starts threads shows each creation as a flow
		created=$(ptt-dump -n "$BATS_TEST_TMPDIR/t.ptt" | grep -c ' thread_create .* ret=0' || true)
		[ "$(count threads)" -ge $((created + 1)) ] || { echo "$ex: $summary, $created created"; return 1; }
		[ "$created" -eq 0 ] || [ "$(count flows)" -ge "$created" ] || { echo "$ex: $summary, $created created"; return 1; }
	done
}

@test "a deadlocked program stopped by SIGINT, and a cut trace, still give valid JSON" {
	record_deadlocked
	json_checked "$BATS_TEST_TMPDIR/t.ptt"
	python3 -c '
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
assert sum(1 for e in ev if e["ph"] == "X" and "mutex" in e["name"].lower() and "block" in e["name"].lower()) >= 2' "$BATS_TEST_TMPDIR/t.json"
	record "$EXAMPLES/prodcons" -p 2 -c 2 -n 2000
	head -c 20000 "$BATS_TEST_TMPDIR/t.ptt" >"$BATS_TEST_TMPDIR/cut.ptt"
	run -1 --separate-stderr ptt-json "$BATS_TEST_TMPDIR/cut.ptt"
	[[ "$stderr" == "ptt-json: $BATS_TEST_TMPDIR/cut.ptt: "* ]]
	echo "$output" >"$BATS_TEST_TMPDIR/t.json"
	run -0 python3 "$BATS_TEST_DIRNAME/chrome_json_check.py" "$BATS_TEST_TMPDIR/t.json"
}

@test "names with & < > quotes, backslashes and bad UTF-8 are escaped" {
	record "$EXAMPLES/prodcons" -p 2 -c 2 -n 200
	ptt-dump "$BATS_TEST_TMPDIR/t.ptt" |
		sed -e 's/name="queue_lock"/name="q<\&>\\"x\\\\y'"'"'\xff"/' -e 's/name="producer-0"/name="p \& <0> \\"q\\""/' \
		>"$BATS_TEST_TMPDIR/t.txt"
	json_checked "$BATS_TEST_TMPDIR/t.txt"
	run -1 grep -q '[<>&]' "$BATS_TEST_TMPDIR/t.json"
	python3 - "$BATS_TEST_TMPDIR/t.json" <<'PY'
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
names = {e["args"]["name"] for e in ev if e["ph"] == "M"} | {e["name"] for e in ev if e["ph"] == "C"}
assert any(n.endswith(' p & <0> "q"') for n in names), names
assert 'mutex q<&>"x\\y\'?' in names, names
PY
}

@test "the same trace from a pipe and from a file, text or binary, gives the same JSON" {
	record "$EXAMPLES/prodcons" -p 2 -c 2 -n 500
	ptt-json "$BATS_TEST_TMPDIR/t.ptt" >"$BATS_TEST_TMPDIR/a.json"
	ptt-dump "$BATS_TEST_TMPDIR/t.ptt" | ptt-json >"$BATS_TEST_TMPDIR/b.json"
	cmp "$BATS_TEST_TMPDIR/a.json" "$BATS_TEST_TMPDIR/b.json"
}

@test "states and instant events have their call site in args" {
	ptt-record -q -o "$BATS_TEST_TMPDIR/t.ptt" -- "$EXAMPLES/two_sites" -n 20 >/dev/null
	ptt-json -p "$BATS_TEST_TMPDIR/t.ptt" >"$BATS_TEST_TMPDIR/t.json"
	run -0 python3 "$BATS_TEST_DIRNAME/chrome_json_check.py" "$BATS_TEST_TMPDIR/t.json"
	run -0 python3 -c '
import collections, json, sys
d = json.load(open(sys.argv[1]))
ev = d["traceEvents"] if isinstance(d, dict) else d
c = collections.Counter((e["ph"], e["name"], e["args"]["site"].split("+")[0], e["args"]["site"].split(" at ")[-1])
                        for e in ev if "site" in e.get("args", {}))
print(c[("X", "Holding mutex", "fast_path", "two_sites.c:17")], c[("X", "Holding mutex", "slow_path", "two_sites.c:24")])
print(sum(n for k, n in c.items() if k[0] == "i" and k[1] == "thread_create"))' "$BATS_TEST_TMPDIR/t.json"
	[ "${lines[0]}" = "120 40" ]
	[ "${lines[1]}" -eq 2 ]
}

@test "a process that execs is renamed after its new command" {
	record sh -c "exec \"$EXAMPLES/prim_cond\""
	json_checked "$BATS_TEST_TMPDIR/t.ptt"
	run -0 --separate-stderr python3 -c '
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
print([e["args"]["name"].split(" ")[0] for e in ev if e["ph"] == "M" and e["name"] == "process_name"])' "$BATS_TEST_TMPDIR/t.json"
	[ "$output" = "['sh', 'prim_cond']" ]
	[ -z "$stderr" ]
}

# 100 mutexes, the Nth locked N times: the most active objects are the last ones
many_mutexes() {
	local i k t=10 lines=()
	for ((i = 1; i <= 100; i++)); do
		for ((k = 0; k < i; k++)); do
			lines+=("$(printf '0.%09d 10 10 pthread mutex_lock mutex=0x%x ret=0' $((t += 10)) $((4096 + i * 64)))")
			lines+=("$(printf '0.%09d 10 10 pthread mutex_unlock mutex=0x%x ret=0' $((t += 10)) $((4096 + i * 64)))")
		done
	done
	trace many "${lines[@]}"
}

@test "counter tracks only for the most active objects, all with --counters=all" {
	many_mutexes
	json_checked --counters=3 "$BATS_TEST_TMPDIR/many.txt"
	[ "$(count counters)" -eq 3 ]
	cp "$BATS_TEST_TMPDIR/t.json" "$BATS_TEST_TMPDIR/three.json"
	json_checked "$BATS_TEST_TMPDIR/many.txt"
	[ "$(count counters)" -eq 64 ]
	json_checked --counters=all "$BATS_TEST_TMPDIR/many.txt"
	[ "$(count counters)" -eq 100 ]
	python3 - "$BATS_TEST_TMPDIR/three.json" "$BATS_TEST_TMPDIR/t.json" <<'PY'
import json, sys
three, every = (json.load(open(f)) for f in sys.argv[1:])
names = {e["name"] for e in three["traceEvents"] if e["ph"] == "C"}
assert names == {"mutex 0x%x" % (4096 + i * 64) for i in (98, 99, 100)}, names
assert three["metadata"] == {"counter_limit": 3, "counter_objects": 100, "counter_tracks": 3}, three["metadata"]
assert every["metadata"] == {"counter_limit": "all"}, every["metadata"]
# the same events but the other objects' counters, each track's in time order
key = lambda e: json.dumps(e, sort_keys=True)
kept = [e for e in every["traceEvents"] if e["ph"] != "C" or e["name"] in names]
assert sorted(map(key, kept)) == sorted(map(key, three["traceEvents"])), "events differ"
for n in names:
    ts = [e["ts"] for e in three["traceEvents"] if e["ph"] == "C" and e["name"] == n]
    assert ts == sorted(ts) and len(ts) > 190, (n, len(ts))
PY
	run -2 --separate-stderr ptt-json --counters=some "$BATS_TEST_TMPDIR/many.txt"
	[ -z "$output" ]
	[[ "$stderr" == "ptt-json: --counters: 'some' is not a count or 'all'"$'\n'"Try 'ptt-json --help'"* ]]
}

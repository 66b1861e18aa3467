#!/usr/bin/env python3
"""Check a ptt-json output against the fields ptt-json(1) documents.

Usage: chrome_json_check.py FILE.json
Prints "threads=N states=N flows=N counters=N" and exits 0, or prints
every problem found on stdout and exits 1.
"""
import collections
import json
import sys

STATE_KEYS = {"ph", "pid", "tid", "name", "ts", "dur", "cname", "args"}  # a state has no "cat"
CRITICAL_KEYS = STATE_KEYS | {"cat"}
COLOURS = {"thread_state_running", "good", "terrible", "black"}  # black: a tracer stall
FLOW_KINDS = {"create", "handoff", "wake", "barrier", "post", "join", "critical"}  # critical: --critical's hand-offs


def number(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool) and v >= 0


def check(path):
    bad = []
    with open(path, "rb") as f:
        doc = json.load(f)  # strict: fails on invalid JSON or invalid UTF-8
    if doc.get("displayTimeUnit") != "ns" or not isinstance(doc.get("traceEvents"), list):
        return ["no displayTimeUnit ns or no traceEvents list"], None
    if not str(doc.get("otherData", {}).get("generator", "")).startswith("ptt-json "):
        bad.append("otherData.generator is not 'ptt-json VERSION'")
    procs, threads = set(), set()
    states = collections.defaultdict(list)
    flows = collections.defaultdict(list)
    counters = set()
    for i, e in enumerate(doc["traceEvents"]):
        where = f"event {i}"
        ph = e.get("ph")
        # a counter is its process's: no tid (Perfetto puts it on the process, not on a thread 0)
        if not isinstance(e.get("pid"), int) or (ph != "C" and not isinstance(e.get("tid"), int)):
            bad.append(f"{where}: pid/tid not integers: {e}")
            continue
        if ph == "C" and "tid" in e:
            bad.append(f"{where}: a counter with a tid: {e}")
            continue
        if ph == "M":
            name = e.get("args", {}).get("name")
            if not isinstance(name, str) or not name:
                bad.append(f"{where}: metadata without args.name")
            if e.get("name") == "process_name" and e["tid"] == 0:
                procs.add(e["pid"])
            elif e.get("name") == "thread_name":
                threads.add((e["pid"], e["tid"]))
            else:
                bad.append(f"{where}: unknown metadata {e.get('name')}")
        elif ph == "X" and e.get("cat") == "critical":  # --critical: a stretch of the path on its own track
            args = e.get("args", {})
            if set(e) - CRITICAL_KEYS or not isinstance(e.get("name"), str) or not e["name"] \
                    or not number(e.get("ts")) or not number(e.get("dur")) \
                    or not all(isinstance(args.get(k), int) and args[k] >= 0
                               for k in ("tid", "from_tid", "running_ns", "waiting_ns")):
                bad.append(f"{where}: bad critical path slice {e}")
            else:
                states[(e["pid"], e["tid"])].append((e["ts"], e["dur"]))
        elif ph == "X":
            if set(e) - STATE_KEYS or not isinstance(e.get("name"), str) or not e["name"]:
                bad.append(f"{where}: bad state event {e}")
            elif not number(e.get("ts")) or not number(e.get("dur")):
                bad.append(f"{where}: bad ts/dur {e}")
            elif e.get("cname") not in COLOURS:
                bad.append(f"{where}: bad cname {e}")
            elif "args" in e and not str(e["args"].get("object", "")).startswith("0x"):
                bad.append(f"{where}: bad args.object {e}")
            elif "args" in e and e["args"].get("object_name") == e["args"]["object"]:
                bad.append(f"{where}: args.object_name repeats the address {e}")
            else:
                states[(e["pid"], e["tid"])].append((e["ts"], e["dur"]))
        elif ph in ("s", "f"):
            if e.get("cat") not in FLOW_KINDS or e.get("name") != e.get("cat") or not isinstance(e.get("id"), int) \
                    or not number(e.get("ts")) or (ph == "f") != (e.get("bp") == "e"):
                bad.append(f"{where}: bad flow event {e}")
            else:
                flows[e["id"]].append(e)
        elif ph == "C":
            args = e.get("args", {})
            if not isinstance(e.get("name"), str) or not number(e.get("ts")) or "waiters" not in args \
                    or set(args) - {"holders", "waiters"} or not all(isinstance(v, int) and v >= 0 for v in args.values()):
                bad.append(f"{where}: bad counter {e}")
            counters.add((e["pid"], e.get("name")))
        elif ph == "i":
            if e.get("s") != "t" or not number(e.get("ts")) or not isinstance(e.get("name"), str):
                bad.append(f"{where}: bad instant {e}")
        else:
            bad.append(f"{where}: unexpected ph {ph!r}")
    for key, spans in states.items():
        if key not in threads:
            bad.append(f"thread {key}: states without a thread_name")
        if key[0] not in procs:
            bad.append(f"thread {key}: no process_name for its pid")
        spans.sort()
        for (t0, d0), (t1, _) in zip(spans, spans[1:]):
            if t1 + 1e-6 < t0 + d0:
                bad.append(f"thread {key}: state at {t1} overlaps the one at {t0} (+{d0})")
                break
    for fid, ends in flows.items():
        kinds = sorted(x["ph"] for x in ends)
        if kinds != ["f", "s"]:
            bad.append(f"flow {fid}: ends {kinds}")
        elif ends[0]["cat"] != ends[1]["cat"] or ends[0]["pid"] != ends[1]["pid"]:
            bad.append(f"flow {fid}: ends disagree")
        else:
            s = ends[0] if ends[0]["ph"] == "s" else ends[1]
            f = ends[1] if s is ends[0] else ends[0]
            if f["ts"] < s["ts"]:
                bad.append(f"flow {fid}: ends before it starts")
    summary = f"threads={len(states)} states={sum(len(v) for v in states.values())} flows={len(flows)} counters={len(counters)}"
    return bad, summary


def main():
    if len(sys.argv) != 2:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    try:
        bad, summary = check(sys.argv[1])
    except (OSError, ValueError) as exc:
        print(f"{sys.argv[1]}: {exc}")
        return 1
    for b in bad[:20]:
        print(b)
    if bad:
        return 1
    print(summary)
    return 0


if __name__ == "__main__":
    sys.exit(main())

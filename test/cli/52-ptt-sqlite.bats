#!/usr/bin/env bats
# ptt-sqlite: the README's three queries, run with the sqlite3 shell on a recorded trace, give
# ptt-stat's figures for it; several traces in one database; errors.
bats_require_minimum_version 1.5.0
load helpers

setup() {
	command -v sqlite3 >/dev/null || skip "sqlite3 (Debian's sqlite3) not installed"
}

# readme_query N [TID]: the README's Nth query (of its "Queries: SQL" section), thread 4243 made TID
readme_query() {
	awk '/^### Queries: SQL/ { s = 1 } s && /^```sql/ { q = 1; next } q && /^```/ { exit } q' "$PTT_ROOT/README.md" |
		awk -v n="$1" 'BEGIN { RS = ""; } NR == n' | sed "s/4243/${2:-4243}/g"
}

# record contention once into c.ptt, and its ptt-stat CSV into stat.csv
contention_trace() {
	ptt-record -q -o "$BATS_TEST_TMPDIR/c.ptt" -- "$EXAMPLES/contention" -t 4 -n 300 -u 20 >/dev/null 2>&1
	ptt-stat --csv "$BATS_TEST_TMPDIR/c.ptt" >"$BATS_TEST_TMPDIR/stat.csv"
}

@test "ptt-sqlite --help, --version and usage errors" {
	run -0 --separate-stderr ptt-sqlite --help
	[[ "$output" == "Usage: ptt-sqlite [OPTION]... TRACE... DB"* ]]
	[ -z "$stderr" ]
	run -0 ptt-sqlite --version
	run -2 --separate-stderr ptt-sqlite "$BATS_TEST_TMPDIR/x.db"
	[[ "$stderr" == "ptt-sqlite: a TRACE and the DB to write are needed"* ]]
	[ ! -e "$BATS_TEST_TMPDIR/x.db" ]
	run -2 --separate-stderr ptt-sqlite --bogus a b
	run -2 --separate-stderr ptt-sqlite "$BATS_TEST_TMPDIR/none.ptt" "$BATS_TEST_TMPDIR/x.db"
	[ "$stderr" = "ptt-sqlite: $BATS_TEST_TMPDIR/none.ptt: No such file or directory" ]
	[ ! -s "$BATS_TEST_TMPDIR/x.db" ]
}

@test "the README's top 5 locks by wait: the top lock's name, waits and wait total are ptt-stat's" {
	contention_trace
	run -0 --separate-stderr ptt-sqlite "$BATS_TEST_TMPDIR/c.ptt" "$BATS_TEST_TMPDIR/c.db"
	[[ "$stderr" =~ ^"ptt-sqlite: $BATS_TEST_TMPDIR/c.db: "[0-9]+" rows in "[0-9.]+" s ("[0-9]+" rows/s)"$ ]]
	[ -z "$output" ]
	readme_query 1 >"$BATS_TEST_TMPDIR/q1.sql"
	grep -q "LIMIT 5" "$BATS_TEST_TMPDIR/q1.sql"
	run -0 --separate-stderr sqlite3 "$BATS_TEST_TMPDIR/c.db" <"$BATS_TEST_TMPDIR/q1.sql"
	[ -z "$stderr" ]
	IFS="|" read -r name class process host waits wait_ns <<<"${lines[0]}"
	# ptt-stat's first row is its top lock by wait (the LOCKS table comes first, sorted by wait)
	IFS=, read -r _ sname _ _ _ scont _ swait _ <<<"$(sed -n 2p "$BATS_TEST_TMPDIR/stat.csv")"
	[ "$name" = hot_lock ] && [ "$sname" = hot_lock ]
	[ "$class" = mutex ]
	[ "$waits" -eq "$scont" ] && [ "$waits" -gt 0 ]
	[ "$wait_ns" -eq "$swait" ]
	[ "$host" = "$(hostname)" ]
	[[ "$process" == "contention "[0-9]* ]]
}

@test "the README's waits of a thread over time add up to ptt-stat's time blocked on mutexes for it" {
	contention_trace
	ptt-sqlite -q "$BATS_TEST_TMPDIR/c.ptt" "$BATS_TEST_TMPDIR/c.db"
	# the workers' rows of ptt-stat's thread table: tid and blocked_mutex_ns
	awk -F, '/^pid,tid,/ { t = 1; next } t && NF > 5 && $3 == "worker" { print $2, $6 }' "$BATS_TEST_TMPDIR/stat.csv" \
		>"$BATS_TEST_TMPDIR/threads"
	[ "$(wc -l <"$BATS_TEST_TMPDIR/threads")" -eq 4 ]
	while read -r tid blocked; do
		readme_query 2 "$tid" >"$BATS_TEST_TMPDIR/q2.sql"
		grep -q "t.tid = $tid " "$BATS_TEST_TMPDIR/q2.sql"
		run -0 --separate-stderr sqlite3 "$BATS_TEST_TMPDIR/c.db" <"$BATS_TEST_TMPDIR/q2.sql"
		[ -z "$stderr" ]
		# buckets of 10 ms in time order, each of hot_lock, let in by workers
		sum=$(printf '%s\n' "${lines[@]}" | awk -F"|" 'NR > 1 && $1 + 0 <= prev { exit 1 } { prev = $1; s += $3 } END { print s + 0 }')
		[ "$sum" -eq "$blocked" ] || { echo "thread $tid: $sum ns in the waits, ptt-stat: $blocked"; return 1; }
		[[ "${lines[0]}" == *"|hot_lock|worker" ]] || { echo "thread $tid: ${lines[0]}"; return 1; }
	done <"$BATS_TEST_TMPDIR/threads"
}

@test "the README's stacks of the longest waits: the longest is ptt-stat's maximum, named at the worker" {
	contention_trace
	ptt-sqlite -q "$BATS_TEST_TMPDIR/c.ptt" "$BATS_TEST_TMPDIR/c.db"
	readme_query 3 >"$BATS_TEST_TMPDIR/q3.sql"
	run -0 --separate-stderr sqlite3 "$BATS_TEST_TMPDIR/c.db" <"$BATS_TEST_TMPDIR/q3.sql"
	[ -z "$stderr" ]
	[ "${#lines[@]}" -eq 5 ]
	IFS="|" read -r longest object _ thread stack <<<"${lines[0]}"
	# ptt-stat's hot_lock row: wait_max_ns is its 12th column
	[ "$longest" -eq "$(awk -F, '$2 == "hot_lock" { print $12; exit }' "$BATS_TEST_TMPDIR/stat.csv")" ]
	[ "$object" = hot_lock ] && [ "$thread" = worker ]
	# the first frame past the lock layer is the example's worker(), then its callers
	[[ "$stack" == "worker <- start_thread"* ]]
	run -0 sqlite3 "$BATS_TEST_TMPDIR/c.db" "SELECT f.name, f.location FROM frames f JOIN stacks s USING (stack_id)
		WHERE s.site = 'worker' AND f.depth = 0 LIMIT 1"
	[[ "$output" == "worker|contention.c:"[0-9]* ]]
}

@test "several traces in one database: each keyed by its process, figures apart; holds as ptt-stat's" {
	contention_trace
	ptt-record -q -o "$BATS_TEST_TMPDIR/p.ptt" -- "$EXAMPLES/prodcons" -n 2000 >/dev/null
	ptt-sqlite -q "$BATS_TEST_TMPDIR/c.ptt" "$BATS_TEST_TMPDIR/f.db"
	# added to the same database by a second run, with ptt-dump's text form from stdin
	ptt-dump "$BATS_TEST_TMPDIR/p.ptt" | ptt-sqlite -q - "$BATS_TEST_TMPDIR/f.db"
	run -0 sqlite3 "$BATS_TEST_TMPDIR/f.db" "SELECT count(*) FROM hosts; SELECT count(*) FROM traces;
		SELECT count(*) FROM processes; SELECT count(DISTINCT thread_id) = count(*) FROM threads"
	[ "${lines[*]}" = "1 2 2 1" ]
	for t in c p; do
		pid=$(ptt-dump --info "$BATS_TEST_TMPDIR/$t.ptt" | awk '$1 == "pid" { print $2 }')
		ptt-stat --csv "$BATS_TEST_TMPDIR/$t.ptt" | awk -F, 'NR > 1 && !NF { exit } NR > 1 { print $2, $8, $13 }' | sort \
			>"$BATS_TEST_TMPDIR/want"
		sqlite3 -separator ' ' "$BATS_TEST_TMPDIR/f.db" "SELECT o.name,
			(SELECT coalesce(sum(duration_ns), 0) FROM waits w WHERE w.object_id = o.object_id),
			(SELECT coalesce(sum(duration_ns), 0) FROM holds h WHERE h.object_id = o.object_id)
			FROM objects o JOIN processes p USING (process_id) WHERE p.pid = $pid" | sort >"$BATS_TEST_TMPDIR/got"
		[ -s "$BATS_TEST_TMPDIR/want" ]
		run -0 diff "$BATS_TEST_TMPDIR/want" "$BATS_TEST_TMPDIR/got"
	done
	run -0 sqlite3 "$BATS_TEST_TMPDIR/f.db" "SELECT name FROM objects WHERE use = 'lock' ORDER BY name"
	[ "${lines[*]}" = "hot_lock queue_lock" ]
}

@test "a merged trace of two hosts: each process under its host, with the pid its host gave it; the README's top locks per host" {
	ptt-record -q -o "$BATS_TEST_TMPDIR/a.ptt" -- "$EXAMPLES/contention" -t 4 -n 300 -u 20 >/dev/null 2>&1
	ptt-record -q -o "$BATS_TEST_TMPDIR/b.ptt" -- "$EXAMPLES/contention" -t 4 -n 300 -u 20 >/dev/null 2>&1
	ptt-merge "$BATS_TEST_TMPDIR/a.ptt" "$BATS_TEST_TMPDIR/b.ptt" >"$BATS_TEST_TMPDIR/m.ptt"
	pa=$(ptt-dump --info "$BATS_TEST_TMPDIR/a.ptt" | awk '$1 == "pid" { print $2 }')
	pb=$(ptt-dump --info "$BATS_TEST_TMPDIR/b.ptt" | awk '$1 == "pid" { print $2 }')
	h=$(hostname)
	run -0 --separate-stderr ptt-sqlite "$BATS_TEST_TMPDIR/m.ptt" "$BATS_TEST_TMPDIR/m.db"
	# two hosts (two runs of this one: NAME and NAME#2, as ptt-merge names them), one process each
	run -0 sqlite3 "$BATS_TEST_TMPDIR/m.db" "SELECT h.hostname, p.pid FROM processes p JOIN hosts h USING (host_id) ORDER BY h.hostname"
	[ "$output" = "$h|$pa
$h#2|$pb" ]
	# threads keep their own pids and tids, not the merged numbers
	run -0 sqlite3 "$BATS_TEST_TMPDIR/m.db" "SELECT count(*) FROM threads WHERE pid NOT IN ($pa, $pb) OR tid >= 4194304"
	[ "$output" = 0 ]
	# the README's top 5 locks: hot_lock on each host, with each run's own waits
	readme_query 1 >"$BATS_TEST_TMPDIR/q1.sql"
	run -0 --separate-stderr sqlite3 "$BATS_TEST_TMPDIR/m.db" <"$BATS_TEST_TMPDIR/q1.sql"
	[ -z "$stderr" ]
	wa=$(ptt-stat --csv "$BATS_TEST_TMPDIR/a.ptt" | awk -F, 'NR > 1 && $2 == "hot_lock" { print $6; exit }')
	wb=$(ptt-stat --csv "$BATS_TEST_TMPDIR/b.ptt" | awk -F, 'NR > 1 && $2 == "hot_lock" { print $6; exit }')
	[ "$(grep -c '^hot_lock|mutex|' <<<"$output")" -eq 2 ]
	grep -q "^hot_lock|mutex|contention $pa|$h|$wa|" <<<"$output"
	grep -q "^hot_lock|mutex|contention $pb|$h#2|$wb|" <<<"$output"
}

@test "--one: the parts of a rotated recording are one trace, with ptt-stat's figures for them" {
	ptt-record -q -m 100K -o "$BATS_TEST_TMPDIR/rot.ptt" -- "$EXAMPLES/prodcons" -n 20000 >/dev/null
	[ -e "$BATS_TEST_TMPDIR/rot.ptt.0003" ]
	run -0 --separate-stderr ptt-sqlite -q --one "$BATS_TEST_TMPDIR"/rot.ptt.* "$BATS_TEST_TMPDIR/r.db"
	[ -z "$stderr" ]
	ptt-stat --csv "$BATS_TEST_TMPDIR"/rot.ptt.* | awk -F, 'NR > 1 && !NF { exit } NR > 1 { print $2, $6, $8 }' | sort \
		>"$BATS_TEST_TMPDIR/want"
	sqlite3 -separator ' ' "$BATS_TEST_TMPDIR/r.db" "SELECT o.name, count(*), sum(w.duration_ns) FROM waits w
		JOIN objects o USING (object_id) GROUP BY w.object_id" | sort >"$BATS_TEST_TMPDIR/got"
	run -0 diff "$BATS_TEST_TMPDIR/want" "$BATS_TEST_TMPDIR/got"
	run -0 sqlite3 "$BATS_TEST_TMPDIR/r.db" "SELECT count(*), path FROM traces"
	[[ "$output" == "1|$BATS_TEST_TMPDIR/rot.ptt.0001 (and "[0-9]*" more)" ]]
}

@test "--events: a row per event; a database error writes nothing and exits 1; damage is said, exit 1" {
	contention_trace
	ptt-sqlite -q -e "$BATS_TEST_TMPDIR/c.ptt" "$BATS_TEST_TMPDIR/e.db"
	run -0 sqlite3 "$BATS_TEST_TMPDIR/e.db" "SELECT count(*) FROM events;
		SELECT count(*) FROM events WHERE event = 'mutex_lock' AND object_id = (SELECT object_id FROM objects WHERE name = 'hot_lock')"
	[ "${lines[0]}" -eq "$(ptt-dump -n "$BATS_TEST_TMPDIR/c.ptt" | wc -l)" ]
	[ "${lines[1]}" -eq "$(ptt-dump -n "$BATS_TEST_TMPDIR/c.ptt" | grep -c ' mutex_lock mutex=')" ]
	# not a database
	echo hello >"$BATS_TEST_TMPDIR/text.db"
	run -1 --separate-stderr ptt-sqlite "$BATS_TEST_TMPDIR/c.ptt" "$BATS_TEST_TMPDIR/text.db"
	[[ "$stderr" == "ptt-sqlite: $BATS_TEST_TMPDIR/text.db: file is not a database" ]]
	[ "$(cat "$BATS_TEST_TMPDIR/text.db")" = hello ]
	# a table of the same name that is not ours: nothing written
	sqlite3 "$BATS_TEST_TMPDIR/other.db" "CREATE TABLE waits(x)"
	run -1 --separate-stderr ptt-sqlite "$BATS_TEST_TMPDIR/c.ptt" "$BATS_TEST_TMPDIR/other.db"
	[[ "$stderr" == "ptt-sqlite: $BATS_TEST_TMPDIR/other.db: "*"(not a database ptt-sqlite wrote?)" ]]
	run -0 sqlite3 "$BATS_TEST_TMPDIR/other.db" ".tables"
	[ "$output" = waits ]
	# one trace unreadable among others: said, the others written, exit 1
	run -1 --separate-stderr ptt-sqlite -q "$BATS_TEST_TMPDIR/none.ptt" "$BATS_TEST_TMPDIR/c.ptt" "$BATS_TEST_TMPDIR/n.db"
	[ "$stderr" = "ptt-sqlite: $BATS_TEST_TMPDIR/none.ptt: No such file or directory" ]
	run -0 sqlite3 "$BATS_TEST_TMPDIR/n.db" "SELECT count(*) FROM traces"
	[ "$output" = 1 ]
	# a damaged text trace: what can be read is written, exit 1
	ptt-dump "$BATS_TEST_TMPDIR/c.ptt" | sed '40s/.*/garbage/' >"$BATS_TEST_TMPDIR/d.txt"
	run -1 --separate-stderr ptt-sqlite -q "$BATS_TEST_TMPDIR/d.txt" "$BATS_TEST_TMPDIR/d.db"
	[[ "$stderr" == "ptt-sqlite: $BATS_TEST_TMPDIR/d.txt: line "* ]]
	run -0 sqlite3 "$BATS_TEST_TMPDIR/d.db" "SELECT damaged, count(*) > 0 FROM traces, waits"
	[ "$output" = "1|1" ]
}

#!/bin/sh
# bench/servers_mariadb.sh - mariadbd (Debian's 10.11, one thread per connection) under sysbench oltp_read_write,
# recorded by ptt-record, and what ptt-critical --blame and ptt-stat name (issue 32 item 3).
#
#   bench/servers_mariadb.sh [BUILD] [FLUSH]   (needs mariadb-server and sysbench: apt-get install; not in .ci/packages)
#
# A private datadir under a temporary directory, a socket there and port 3307 on 127.0.0.1: the system's
# service is not touched. The tables (4 x 10000 rows) are made by a mariadbd run untraced; then mariadbd is
# recorded from its start to mariadb-admin shutdown, with 8 sysbench clients for 20 s in between.
# FLUSH is innodb_flush_log_at_trx_commit (default 1: each commit waits for the redo log's write and fsync,
# in InnoDB's group_commit_lock; 0: no commit waits for it). The window of --from/--to is the clients'
# (the first and last event of the connection threads, less 0.5 s), so the start and the shutdown do not count.
set -eu
BUILD=${1:-build}
FLUSH=${2:-1}
BIN=$(cd "$BUILD/bin" && pwd)
for c in mariadbd mariadb-install-db mariadb-admin sysbench; do
	command -v "$c" >/dev/null || { echo "servers_mariadb.sh: $c not installed (apt-get install mariadb-server sysbench)" >&2; exit 2; }
done
TMP=$(mktemp -d)
trap 'mariadb-admin --socket="$TMP/sock" shutdown >/dev/null 2>&1 || true; rm -rf "$TMP"' EXIT
M="mariadbd --no-defaults --datadir=$TMP/data --socket=$TMP/sock --port=3307 --bind-address=127.0.0.1 --user=root
	--skip-grant-tables --pid-file=$TMP/pid --log-error=$TMP/err.log --innodb-flush-log-at-trx-commit=$FLUSH"
SB="sysbench oltp_read_write --mysql-socket=$TMP/sock --mysql-user=root --mysql-db=test --tables=4 --table-size=10000"
up() {
	for _ in $(seq 1 60); do
		mariadb-admin --socket="$TMP/sock" ping >/dev/null 2>&1 && return 0
		sleep 1
	done
	echo "servers_mariadb.sh: mariadbd did not start ($TMP/err.log):" >&2
	tail -5 "$TMP/err.log" >&2
	exit 1
}
mariadb-install-db --no-defaults --datadir="$TMP/data" --user=root >/dev/null 2>&1
$M &
up
$SB prepare >/dev/null
mariadb-admin --socket="$TMP/sock" shutdown
wait

echo "== mariadbd, innodb_flush_log_at_trx_commit=$FLUSH, sysbench oltp_read_write --threads=8 --time=20"
"$BIN/ptt-record" -q -o "$TMP/m.ptt" -- $M &
up
MP=$(cat "$TMP/pid")
t0=$(awk '{ print $14 + $15 }' "/proc/$MP/stat")
s0=$(awk '/^cpu / { print $2 + $3 + $4 + $5 + $6 + $7 + $8, $5 }' /proc/stat)
$SB --threads=8 --time=20 run | grep -E 'transactions:|95th'
t1=$(awk '{ print $14 + $15 }' "/proc/$MP/stat")
s1=$(awk '/^cpu / { print $2 + $3 + $4 + $5 + $6 + $7 + $8, $5 }' /proc/stat)
echo "$t0 $t1 $s0 $s1" | awk '{ printf "mariadbd used %.2f CPUs of %d; the machine was idle %.0f %% of the run\n",
	($2 - $1) / ($5 - $3) * n, n, ($6 - $4) / ($5 - $3) * 100 }' n="$(grep -c '^cpu[0-9]' /proc/stat)"
mariadb-admin --socket="$TMP/sock" shutdown
wait
# the connection threads are the ones started after the load began: the threads whose first event is past 0.5 s
win=$("$BIN/ptt-dump" --info "$TMP/m.ptt" | awk '$1 ~ /^[0-9]+$/ && $2 ~ /^[0-9]+$/ && $4 > 0.5 && $3 > 10000 {
	if (!f || $4 < f) f = $4; if ($5 > l) l = $5 } END { printf "--from=%.0fms --to=%.0fms", f * 1000 + 500, l * 1000 - 500 }')
echo "window: $win"
"$BIN/ptt-critical" $win "$TMP/m.ptt" | sed -n '/^critical path/,/^  unknown/p; /^WHAT TO FIX FIRST/,/^SITES/p'
"$BIN/ptt-critical" --blame $win "$TMP/m.ptt" | sed -n '/^GROUP/,$p'
# the connection threads are one group, their start routine (performance schema's pfs_spawn_thread, stripped:
# mariadbd+0xc7f450() in Debian's 10.11.19 build); with FLUSH=1 they wait ~11 % of their life for each other:
# the commit's wait for the redo log's group commit, whose leader (another connection thread) writes and
# fsyncs the log and runs the others' callbacks (trx_flush_log_if_needed: log_write_up_to with
# thd_decrement_pending_ops; the waiter in thd_async_state::wait_for_pending_ops, inlined at net_real_write),
# and the group_commit_lock's per-thread park (log0sync.cc, at mariadbd+0xd5e38d); the leader changes every
# round, so each thread-to-thread edge is under the graph's trim and no knot is named
"$BIN/ptt-stat" -n 6 -S 1 $win "$TMP/m.ptt" | sed -n '/^LOCKS/,/more locks;/p; /^not idle:/,/^  \.\.\./p'

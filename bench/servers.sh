#!/bin/sh
# bench/servers.sh - servers ptt did not write (memcached, apache2, varnish, and mariadbd by servers_mariadb.sh), recorded under a load made here (loopback only), and
# what ptt-critical --blame names as the bound of their throughput (issue 32 item 3).
#
#   bench/servers.sh [BUILD]        (default build; needs memcached, apache2, apache2-utils, varnish: apt-get install)
#
# memcached: 4 worker threads, 8 clients of bench/mcload.c (one request in flight each) for 4 s.
# apache2:   one child (-X), the event MPM of Debian's configuration on port 8089, ab -k -c 8.
# Each is recorded until stopped (timeout -s INT), and the blame view is read over the load's window
# (--from/--to: the first and last request's events), so that the start and the shutdown do not count.
# Not part of make check: the servers are not in .ci/packages.
set -eu
BUILD=${1:-build}
BIN=$(cd "$BUILD/bin" && pwd)
TMP=$(mktemp -d)
chmod 755 "$TMP" # varnish's child runs as its own user, in a directory under it
trap 'rm -rf "$TMP"' EXIT
for c in memcached apache2 ab; do
	command -v "$c" >/dev/null || { echo "servers.sh: $c not installed (apt-get install memcached apache2 apache2-utils)" >&2; exit 2; }
done
cc -O2 -pthread -o "$TMP/mcload" "$(dirname "$0")/mcload.c"

# window FILE EVENT: --from/--to around the first and last EVENT of the trace
window() {
	"$BIN/ptt-dump" "$1" | awk -v e="$2" '$5 == e { if (!f) f = $1; l = $1 } END { printf "--from=%.3fms --to=%.3fms", f * 1000 + 100, l * 1000 - 100 }'
}

# busy_window FILE: --from/--to over the time every busy thread (over 10000 events) works: from the latest
# end of such a thread's first condition wait (its first task handed over) to the earliest last event of
# one. varnish's window from its first and last cond_signal was a different stretch each run (the signals
# come from its acceptor tasks, in bursts: 174 ms of a 2.1 s load once), and took in the workers' wait for
# the clients' first connection, which put 10 % of their life on the acceptor tasks (in accept(), untraced):
# a knot of two cache-workers one run, none the next
busy_window() {
	busy=$("$BIN/ptt-dump" --info "$1" 2>/dev/null | awk '$1 ~ /^[0-9]+$/ && $3 > 10000 { printf "%s ", $2 }')
	"$BIN/ptt-dump" "$1" 2>/dev/null | awk -v busy="$busy" 'BEGIN { n = split(busy, b, " "); for (i = 1; i <= n; i++) B[b[i]] = 1 }
		($3 in B) { if ($5 == "cond_wait" && !($3 in s)) s[$3] = $1; l[$3] = $1 }
		END { for (t in B) { if (s[t] > f) f = s[t]; if (!e || l[t] < e) e = l[t] }
			printf "--from=%.0fms --to=%.0fms", f * 1000 + 100, e * 1000 - 100 }'
}

echo "== memcached -t 4, mcload 8 clients"
timeout -s INT 8 "$BIN/ptt-record" -q -o "$TMP/mc.ptt" -- memcached -u root -t 4 -p 11411 -l 127.0.0.1 -U 0 &
sleep 1.5
"$TMP/mcload" 11411 8 4
wait || true
# memcached's workers take an item lock for each request
"$BIN/ptt-critical" --blame $(window "$TMP/mc.ptt" mutex_lock) "$TMP/mc.ptt" | sed -n '/^GROUP/,$p'

echo "== apache2 -X (event MPM), ab -k -c 8"
mkdir -p "$TMP/ap/run" "$TMP/ap/lock" "$TMP/ap/log"
cp -r /etc/apache2 "$TMP/ap/conf"
echo "Listen 127.0.0.1:8089" >"$TMP/ap/conf/ports.conf"
sed -i 's/<VirtualHost \*:80>/<VirtualHost *:8089>/' "$TMP/ap/conf/sites-available/000-default.conf"
export APACHE_RUN_USER=www-data APACHE_RUN_GROUP=www-data APACHE_PID_FILE="$TMP/ap/run/apache2.pid" \
	APACHE_RUN_DIR="$TMP/ap/run" APACHE_LOCK_DIR="$TMP/ap/lock" APACHE_LOG_DIR="$TMP/ap/log" LANG=C
timeout -s INT 10 "$BIN/ptt-record" -q -o "$TMP/ap.ptt" -- apache2 -X -d "$TMP/ap/conf" -f "$TMP/ap/conf/apache2.conf" &
sleep 2
ab -q -n 20000 -c 8 -k http://127.0.0.1:8089/ | grep -E 'Requests per second|Failed' || true
wait || true
# every request is handed to a worker by a cond_signal of the listener
"$BIN/ptt-critical" --blame $(window "$TMP/ap.ptt" cond_signal) "$TMP/ap.ptt" | sed -n '/^GROUP/,$p'

echo "== varnishd (a synthetic answer, no backend), ab -k -c 8"
if command -v varnishd >/dev/null; then
	printf 'vcl 4.1;\nbackend default none;\nsub vcl_recv { return (synth(200, "ok")); }\n' >"$TMP/synth.vcl"
	timeout -s INT 20 "$BIN/ptt-record" -q -o "$TMP/vn.ptt" -- varnishd -F -a 127.0.0.1:6089 -f "$TMP/synth.vcl" \
		-n "$TMP/vn" -s malloc,32m >/dev/null 2>&1 &
	for i in $(seq 1 15); do # its VCL is compiled first
		sleep 1
		[ "$(curl -s -o /dev/null -w '%{http_code}' http://127.0.0.1:6089/ 2>/dev/null)" = 200 ] && break
	done
	ab -q -n 30000 -c 8 -k http://127.0.0.1:6089/ | grep -E 'Requests per second' || true
	wait || true
	"$BIN/ptt-critical" --blame $(busy_window "$TMP/vn.ptt") "$TMP/vn.ptt" | sed -n '/^GROUP/,$p'
else
	echo "(varnishd not installed: apt-get install varnish)"
fi

echo "== mariadbd under sysbench: bench/servers_mariadb.sh"
if command -v mariadbd >/dev/null && command -v sysbench >/dev/null; then
	"$(dirname "$0")/servers_mariadb.sh" "$BUILD"
else
	echo "(mariadbd or sysbench not installed: apt-get install mariadb-server sysbench)"
fi

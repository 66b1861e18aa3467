#!/usr/bin/env bats
# ptt-merge: traces of several hosts on one timeline, by their clock anchors and offsets;
# the host above the process; every tool reads the result.
bats_require_minimum_version 1.5.0
load helpers

# two recordings one after the other; b.ptt as if recorded on host "hostb" whose clock reads 2 s behind
setup() {
	T=$BATS_TEST_TMPDIR
	ptt-record -q -o "$T/a.ptt" -- "$EXAMPLES/contention" >/dev/null 2>&1
	ptt-record -q -o "$T/b0.ptt" -- "$EXAMPLES/prodcons" >/dev/null 2>&1
	python3 "$BATS_TEST_DIRNAME/ptt_blocks.py" anchor "$T/b0.ptt" "$T/b.ptt" -2000000000 hostb
}

# the hosts (0: a.ptt's, 1: hostb) of the merged trace's events, in file order, runs collapsed: "0 1", "1 0" ...
host_order() {
	ptt-dump -n "$1" | awk '!/^#/ { h = $2 >= 4194304 ? 1 : 0; if (h != last) { printf "%s%d", sep, h; sep = " "; last = h } }
		BEGIN { last = -1 } END { print "" }'
}

meta() { ptt-dump "$1" | sed -n "s/^# $2 //p" | head -1; }

@test "the recorder writes a host identity and a clock anchor; --info prints them" {
	run -0 --separate-stderr ptt-dump --info "$T/a.ptt"
	[[ "$output" == *"hostname    $(hostname)"* ]]
	# /etc/machine-id where there is one (a bare chroot has none: no line then)
	if [ -r /etc/machine-id ]; then
		[[ "$output" == *"machine_id  $(cat /etc/machine-id)"* ]]
	else
		[[ "$output" != *"machine_id"* ]]
	fi
	echo "$output" | grep -qE '^boot_id +[0-9a-f-]{36}$'
	[ -n "$(meta "$T/a.ptt" realtime_ns)" ] && [ -n "$(meta "$T/a.ptt" start_ticks)" ] && [ -n "$(meta "$T/a.ptt" clock_hz)" ]
}

@test "merged with the offset the events are in their true order; without it, 2 s off; --check clean" {
	run --separate-stderr sh -c 'ptt-merge --offset=hostb:2000000000 "$1" "$2" >"$3"' - "$T/a.ptt" "$T/b.ptt" "$T/m.ptt"
	[ "$status" -eq 0 ] && [ -z "$stderr" ] && [ -z "$output" ] || { echo "exit $status: $stderr"; return 1; }
	# b was recorded after a ended: with its clock put right, all of a's events, then all of b's
	[ "$(host_order "$T/m.ptt")" = "0 1" ]
	run -0 --separate-stderr ptt-dump --check "$T/m.ptt"
	[[ "$output" == *"0 damaged, 0 lost, 0 out of order, 0 violations: ok"* ]]
	# the merged clock: nanoseconds from the earliest anchor, each host's events where its anchor puts them
	ra=$(meta "$T/a.ptt" realtime_ns) rb=$(meta "$T/b.ptt" realtime_ns)
	[ "$(meta "$T/m.ptt" realtime_ns)" = "$ra" ]
	[ "$(meta "$T/m.ptt" clock)" = monotonic ]
	first_b=$(ptt-dump -n "$T/b.ptt" | awk '!/^#/ { print $1; exit }')
	first_mb=$(ptt-dump -n "$T/m.ptt" | awk '!/^#/ && $2 >= 4194304 { print $1; exit }')
	want=$(python3 -c "print('%.9f' % (($rb + 2000000000 - $ra) / 1e9 + $first_b))")
	python3 -c "import sys; sys.exit(abs($first_mb - $want) > 2e-9)"

	ptt-merge "$T/a.ptt" "$T/b.ptt" >"$T/m0.ptt"
	run -0 --separate-stderr ptt-dump --check "$T/m0.ptt"
	[ "$(meta "$T/m0.ptt" realtime_ns)" = "$rb" ] # b's anchor, 2 s early, is now the earliest
	end_b=$(ptt-dump --info "$T/b.ptt" | awk '/^duration:/ { print $2 }')
	# unless the runs were more than 2 s apart (a stalled machine), b's whole run now lies before a's start
	if python3 -c "import sys; sys.exit(not ($rb + $end_b * 1e9 < $ra))"; then
		[ "$(host_order "$T/m0.ptt")" = "1 0" ]
	fi
}

@test "hosts and their processes stay apart: --info names the host of each thread, pids as each host gave them" {
	ptt-merge -O hostb:2000000000 "$T/a.ptt" "$T/b.ptt" >"$T/m.ptt"
	run -0 --separate-stderr ptt-dump --info "$T/m.ptt"
	pa=$(meta "$T/a.ptt" pid) pb=$(meta "$T/b.ptt" pid)
	echo "$output" | grep -qE "^host +0 $(hostname) ([0-9a-f]{32}|-) [0-9a-f-]{36} 0 \"$T/a.ptt\"$"
	echo "$output" | grep -qE "^host +1 hostb ([0-9a-f]{32}|-) ([0-9a-f]{32}|[0-9a-f-]{36}) 2000000000 \"$T/b.ptt\"$"
	echo "$output" | grep -qE "^hostb +$pb +$pb .* prodcons$"
	echo "$output" | grep -qE "^$(hostname) +$pa +$pa .* contention$"
	# every event of each input is in the merged trace
	na=$(ptt-dump --info "$T/a.ptt" | awk '/^events:/ { print $2 }') nb=$(ptt-dump --info "$T/b.ptt" | awk '/^events:/ { print $2 }')
	[[ "$output" == *"events:     $((na + nb))"* ]]
}

@test "two runs of the same host are two hosts, NAME and NAME#2; an offset for NAME#2 is that run's" {
	ptt-merge --offset="$(hostname)#2:5" "$T/a.ptt" "$T/b0.ptt" >"$T/m.ptt"
	run -0 --separate-stderr ptt-dump --info "$T/m.ptt"
	echo "$output" | grep -qE "^host +0 $(hostname) .* 0 \"$T/a.ptt\"$"
	echo "$output" | grep -qE "^host +1 $(hostname)#2 .* 5 \"$T/b0.ptt\"$"
	run -0 --separate-stderr ptt-dump --check "$T/m.ptt"
}

@test "every tool reads the merged trace" {
	printf '# the measured skew\nhostb 2000000000\n' >"$T/offsets"
	ptt-merge --offsets="$T/offsets" "$T/a.ptt" "$T/b.ptt" >"$T/m.ptt"
	for tool in ptt-stat ptt-deadlock ptt-csv ptt-json; do
		run -0 --separate-stderr "$tool" "$T/m.ptt"
		[ -n "$output" ] && [ -z "$stderr" ] || { echo "$tool: $stderr"; return 1; }
	done
	# hostb's process, by the pid the merged trace gives it (host 1: 2^22 + its own)
	ptt-filter -n --pid=$((4194304 + $(meta "$T/b.ptt" pid))) "$T/m.ptt" >"$T/f.ptt"
	run -0 --separate-stderr ptt-dump --check "$T/f.ptt"
	[ "$(host_order "$T/f.ptt")" = 1 ]
	# ... and by its own pid, as every output names it ("pid N on hostb"): the same events
	ptt-filter -n --pid="$(meta "$T/b.ptt" pid)" "$T/m.ptt" >"$T/g.ptt"
	cmp "$T/f.ptt" "$T/g.ptt"
	# host a's process by its own pid: only host a's events
	ptt-filter -n --pid="$(meta "$T/a.ptt" pid)" "$T/m.ptt" >"$T/h.ptt"
	[ "$(host_order "$T/h.ptt")" = 0 ]
	ptt-paje "$T/m.ptt" >"$T/m.paje"
	assert_paje_valid "$T/m.paje"
	# the two runs are apart on the timeline: the path between them is unknown, and ptt-critical says so (exit 1)
	run -1 --separate-stderr ptt-critical "$T/m.ptt"
	[[ "$output" == *"unknown"* ]]
}

@test "--pid=N@HOST: one host's process where two hosts have the same pid; a host the trace lacks is named, exit 1" {
	# the same run twice: hosts NAME and NAME#2, each with a process of the same pid
	ptt-merge "$T/a.ptt" "$T/a.ptt" >"$T/m.ptt"
	pa=$(meta "$T/a.ptt" pid)
	ptt-filter -n --pid="$pa" "$T/m.ptt" >"$T/both.ptt"
	[[ "$(host_order "$T/both.ptt")" == "0 1"* ]]
	run -0 --separate-stderr bash -c "ptt-filter -n --pid='$pa@$(hostname)#2' '$T/m.ptt' >'$T/two.ptt'"
	[ -z "$output$stderr" ]
	[ "$(host_order "$T/two.ptt")" = 1 ]
	# the same events as by the merged number (host 1: 2^22 + the pid)
	ptt-filter -n --pid=$((4194304 + pa)) "$T/m.ptt" | cmp - "$T/two.ptt"
	ptt-filter -n --pid="$pa@$(hostname)" "$T/m.ptt" >"$T/one.ptt"
	[ "$(host_order "$T/one.ptt")" = 0 ]
	# a host the trace does not have: said with the hosts it has, nothing written
	run -1 --separate-stderr ptt-filter -n --pid="$pa@nohost" "$T/m.ptt"
	[ -z "$output" ]
	[ "$stderr" = "ptt-filter: --pid: no host 'nohost' in the trace; its hosts: $(hostname), $(hostname)#2" ]
	# a trace of one host has no host names to select by
	run -1 --separate-stderr ptt-filter -n --pid="$pa@$(hostname)" "$T/a.ptt"
	[ -z "$output" ]
	[ "$stderr" = "ptt-filter: --pid: no host '$(hostname)' in the trace (one host: ptt-merge did not make it; give the pid alone)" ]
	# a pid of the right host that is not there: the usual refusal
	run -1 --separate-stderr ptt-filter -n --pid="1@$(hostname)#2" "$T/m.ptt"
	[ -z "$output" ]
	[[ "$stderr" == "ptt-filter: --pid: no process 4194305 in the trace"* ]]
	run -2 --separate-stderr ptt-filter -n --pid="$pa@" "$T/m.ptt"
	[ "${stderr_lines[0]}" = "ptt-filter: --pid: not a process id (N, or N@HOST): '$pa@'" ]
}

@test "bad input: not a trace, an offset for an unknown host, a malformed offset, no file: one line, exit 1 or 2" {
	echo "hello" >"$T/no.ptt"
	run -1 --separate-stderr ptt-merge "$T/a.ptt" "$T/no.ptt"
	[ "${#lines[@]}" -eq 0 ] && [ "$(echo "$stderr" | wc -l)" -eq 1 ]
	[[ "$stderr" == "ptt-merge: $T/no.ptt: "* ]]
	run -2 --separate-stderr ptt-merge --offset=nosuchhost:5 "$T/a.ptt" "$T/b.ptt"
	[ -z "$output" ]
	[ "$stderr" = "ptt-merge: --offset: no FILE was recorded on host nosuchhost" ]
	run -2 --separate-stderr ptt-merge --offset=hostb:2s "$T/a.ptt" "$T/b.ptt"
	[[ "$stderr" == "ptt-merge: --offset: expected HOST:NS (NS an integer of nanoseconds)"* ]]
	run -2 --separate-stderr ptt-merge
	[[ "$stderr" == "ptt-merge: no FILE to merge"* ]]
	printf 'hostb 5\nhostb 7 extra\n' >"$T/offsets"
	run -2 --separate-stderr ptt-merge --offsets="$T/offsets" "$T/a.ptt" "$T/b.ptt"
	[[ "$stderr" == "ptt-merge: $T/offsets:2: expected HOST NS"* ]] && [ -z "$output" ]
	ptt-merge "$T/a.ptt" "$T/b.ptt" >"$T/m.ptt"
	run -1 --separate-stderr ptt-merge "$T/m.ptt" "$T/a.ptt"
	[ "$stderr" = "ptt-merge: $T/m.ptt: already a merged trace: merge the traces it was made of" ]
}

@test "ptt-merge --help: stdout, exit 0" {
	run -0 --separate-stderr ptt-merge --help
	[[ "$output" == "Usage: ptt-merge "* ]] && [ -z "$stderr" ]
}

@test "Paje: host above process above thread; PajeNG and ViTE read it cleanly" {
	ptt-merge -O hostb:2000000000 "$T/a.ptt" "$T/b.ptt" >"$T/m.ptt"
	ptt-paje --objects --critical "$T/m.ptt" >"$T/m.paje"
	grep -qx '0 CT_Host CT_Program "Host"' "$T/m.paje"
	grep -qx '0 CT_Process CT_Host "Process"' "$T/m.paje"
	pb=$(meta "$T/b.ptt" pid)
	grep -qE "^6 [0-9.]+ H1 CT_Host C_prog \"hostb\"$" "$T/m.paje"
	# hostb's process under hostb's container, named by the pid hostb gave it
	grep -qE "^6 [0-9.]+ P[0-9]+ CT_Process H1 \"prodcons $pb\"$" "$T/m.paje"
	grep -qE "^6 [0-9.]+ P[0-9]+ CT_Process H0 \"contention $(meta "$T/a.ptt" pid)\"$" "$T/m.paje"
	assert_paje_valid "$T/m.paje"
	run -0 pj_dump "$T/m.paje"
	echo "$output" | grep -qE "^Container, Program, Host, .*, hostb$"
	echo "$output" | grep -qE "^Container, hostb, Process, .*, prodcons $pb$"
	assert_vite_clean "$T/m.paje"
	# a trace of one host keeps Program > Process > Thread
	ptt-paje "$T/a.ptt" >"$T/a.paje"
	run ! grep -q CT_Host "$T/a.paje"
}

@test "ptt-stat: each row of a merged trace says its host; threads with a HOST column, ids as their host gave them" {
	ptt-merge -O hostb:2000000000 "$T/a.ptt" "$T/b.ptt" >"$T/m.ptt"
	run -0 --separate-stderr ptt-stat "$T/m.ptt"
	pb=$(meta "$T/b.ptt" pid)
	# several processes: "(pid N on HOST)", the pid as its host gave it
	pa=$(meta "$T/a.ptt" pid)
	echo "$output" | grep -qE "^hot_lock \(pid $pa on $(hostname)\) +mutex "
	echo "$output" | grep -qE "^queue_lock \(pid $pb on hostb\) +mutex .* ([0-9]+ on hostb \((producer|consumer)-[01], pid $pb\)|-)$" ||
		{ echo "$output" | grep "^queue_lock"; return 1; } # "-": not contended in this run
	echo "$output" | grep -qE "^HOST +PID +TID NAME"
	echo "$output" | grep -qE "^hostb +$pb +$pb prodcons "
	# a trace of one host: no HOST column, no host in the rows
	run -0 --separate-stderr ptt-stat "$T/a.ptt"
	run ! grep -qE "HOST|\(on " <<<"$output"
}

@test "ptt-csv: a merged trace's rows start with their host, ids as their host gave them; piped in too" {
	ptt-merge -O hostb:2000000000 "$T/a.ptt" "$T/b.ptt" >"$T/m.ptt"
	pb=$(meta "$T/b.ptt" pid)
	run -0 --separate-stderr ptt-csv "$T/m.ptt"
	[ "${lines[0]}" = "host,time_ns,time_s,pid,tid,thread_name,source,event,class,object,object_name,args,site,site_line" ]
	echo "$output" | grep -qE "^hostb,[0-9]+,[0-9.]+,$pb,$pb,prodcons,pthread,process_begin,"
	[ "$(echo "$output" | sed 1d | cut -d, -f1 | sort -u | tr '\n' ' ')" = "$(printf '%s\n' hostb "$(hostname)" | sort | tr '\n' ' ')" ]
	run -0 --separate-stderr sh -c "cat '$T/m.ptt' | ptt-csv --states"
	[ "${lines[0]}" = "host,pid,tid,thread_name,state,object,object_name,start_ns,end_ns,duration_ns,complete" ]
	echo "$output" | grep -qE "^hostb,$pb,[0-9]+,(producer|consumer)-[01],"
	run -0 --separate-stderr ptt-csv "$T/a.ptt"
	[[ "${lines[0]}" == time_ns,* ]]
}

@test "ptt-json: a merged trace's processes are named with their host; the file is valid Chrome JSON" {
	ptt-merge -O hostb:2000000000 "$T/a.ptt" "$T/b.ptt" >"$T/m.ptt"
	ptt-json "$T/m.ptt" >"$T/m.json"
	python3 "$BATS_TEST_DIRNAME/chrome_json_check.py" "$T/m.json"
	grep -q "\"process_name\",\"args\":{\"name\":\"prodcons $(meta "$T/b.ptt" pid) on hostb\"}" "$T/m.json"
	grep -q "\"process_name\",\"args\":{\"name\":\"contention $(meta "$T/a.ptt" pid) on $(hostname)\"}" "$T/m.json"
	ptt-json "$T/a.ptt" >"$T/a.json"
	run ! grep -qE '"process_name","args":\{"name":"[^"]* on ' "$T/a.json"
}

@test "ptt-dump --human: each sentence of a merged trace says its host, pids and tids as their host gave them" {
	ptt-merge -O hostb:2000000000 "$T/a.ptt" "$T/b.ptt" >"$T/m.ptt"
	pb=$(meta "$T/b.ptt" pid)
	run -0 --separate-stderr ptt-dump --human "$T/m.ptt"
	echo "$output" | grep -qE "^[0-9.]+ \[hostb\] process $pb starts \(parent [0-9]+\): \".*prodcons\"$"
	echo "$output" | grep -qE "^[0-9.]+ \[$(hostname)\] thread $(meta "$T/a.ptt" pid) \(contention\) begins"
	run ! grep -qE "(process|thread|parent) 4[0-9]{6}" <<<"$output"
	run -0 --separate-stderr ptt-dump --human "$T/a.ptt"
	run ! grep -q "\[$(hostname)\]" <<<"$output"
}

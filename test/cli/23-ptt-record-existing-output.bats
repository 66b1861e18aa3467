#!/usr/bin/env bats
# What ptt-record does to an output that is already there (ptt-record(1), FILES): nothing
# before the program runs (a failed start leaves it byte for byte, and never removes it);
# once the program runs, a regular file is emptied and holds the trace (written in place:
# a symlink still points at it), a FIFO or a device is written into and stays what it was.
# Only a regular file the run made itself, or filled itself, is ever removed.
bats_require_minimum_version 1.5.0
load helpers

# A recorder that removes /dev/null (as the one before this test did, as root) breaks every
# later test on the machine: put it back, after the test has failed on it.
teardown() {
	if [ ! -c /dev/null ] && [ "$(id -u)" -eq 0 ]; then
		rm -f /dev/null
		mknod -m 666 /dev/null c 1 3
	fi
}

# $BATS_TEST_TMPDIR/out as KIND: file, link (to target), fifo (its reader started, reading
# into fifo.read), dev (a char device 1,3, as /dev/null; skipped unless root and openable)
make_output() {
	local d=$BATS_TEST_TMPDIR
	head -c 5000 /dev/urandom >"$d/orig"
	case $1 in
	file) cp "$d/orig" "$d/out" ;;
	link)
		cp "$d/orig" "$d/target"
		ln -s target "$d/out"
		;;
	fifo)
		mkfifo "$d/out"
		cat "$d/out" >"$d/fifo.read" 3>&- &
		reader=$!
		;;
	dev)
		[ "$(id -u)" -eq 0 ] || skip "mknod needs root"
		mknod "$d/out" c 1 3
		echo x 2>/dev/null >"$d/out" || skip "device nodes cannot be opened here (a nodev mount)"
		;;
	esac
}

# OUT is still what make_output made, its content untouched
assert_untouched() {
	local d=$BATS_TEST_TMPDIR
	case $1 in
	file)
		[ -f "$d/out" ]
		[ ! -L "$d/out" ]
		cmp "$d/orig" "$d/out"
		;;
	link)
		[ -L "$d/out" ]
		[ "$(readlink "$d/out")" = target ]
		cmp "$d/orig" "$d/target"
		;;
	fifo)
		wait "$reader"
		[ -p "$d/out" ]
		[ ! -s "$d/fifo.read" ]
		;;
	dev)
		[ -c "$d/out" ]
		[ "$(stat -c %t,%T "$d/out")" = 1,3 ]
		;;
	esac
}

# ptt-record -o out -- /nonexistent: 127, out untouched
fails_to_start() {
	make_output "$1"
	run -127 --separate-stderr ptt-record -o "$BATS_TEST_TMPDIR/out" -- "$BATS_TEST_TMPDIR/no-such-program"
	[ -z "$output" ]
	[ "$stderr" = "ptt-record: $BATS_TEST_TMPDIR/no-such-program: No such file or directory" ]
	assert_untouched "$1"
}

# a setup failure once the output is open: the shared ring cannot be made (a file size
# limit of 1 KiB, its signal ignored, makes the ring's memfd too large); exit 1, out untouched
fails_in_setup() {
	make_output "$1"
	run -1 --separate-stderr bash -c 'trap "" XFSZ; ulimit -f 1; exec ptt-record -o "$1/out" -- sh -c "echo ran >\"$1/ran\""' _ "$BATS_TEST_TMPDIR"
	[ -z "$output" ]
	[[ "$stderr" =~ ^"ptt-record: cannot create the shared ring ("[0-9]+" bytes): File too large"$ ]]
	[ ! -e "$BATS_TEST_TMPDIR/ran" ]
	assert_untouched "$1"
}

# a run of prodcons: exit 0, the trace where out leads, out still of its kind
records() {
	local d=$BATS_TEST_TMPDIR ino
	make_output "$1"
	ino=$(stat -L -c %i "$d/out")
	run -0 --separate-stderr ptt-record -q -o "$d/out" -- "$EXAMPLES/prodcons" -n 200
	[ -z "$stderr" ]
	case $1 in
	file)
		[ -f "$d/out" ]
		[ ! -L "$d/out" ]
		[ "$(stat -c %i "$d/out")" = "$ino" ] # written in place, not replaced
		trace=$d/out
		;;
	link)
		[ -L "$d/out" ]
		[ "$(readlink "$d/out")" = target ]
		[ "$(stat -c %i "$d/target")" = "$ino" ]
		trace=$d/target
		;;
	fifo)
		wait "$reader"
		[ -p "$d/out" ]
		trace=$d/fifo.read
		;;
	dev)
		[ -c "$d/out" ]
		[ "$(stat -c %t,%T "$d/out")" = 1,3 ]
		return
		;;
	esac
	# the trace whole, and nothing of the old bytes past its end
	run -0 --separate-stderr ptt-dump --check "$trace"
	[[ "$output" == *" 0 damaged, 0 lost, 0 out of order, 0 violations: ok" ]]
	run -0 --separate-stderr ptt-dump "$trace"
	[ -z "$stderr" ]
	run ! cmp -s "$d/orig" "$trace"
}

@test "a regular file: kept byte for byte when the program cannot start or setup fails; the trace, in place, when it runs" {
	fails_to_start file
	rm -f "$BATS_TEST_TMPDIR/out"
	fails_in_setup file
	rm -f "$BATS_TEST_TMPDIR/out"
	records file
}

@test "a symlink: the link and its target kept on a failed start or setup; the target holds the trace" {
	fails_to_start link
	rm -f "$BATS_TEST_TMPDIR/out"
	fails_in_setup link
	rm -f "$BATS_TEST_TMPDIR/out"
	records link
}

@test "a FIFO: still a FIFO after a failed start or setup (nothing written), and after a run (the trace went through it)" {
	fails_to_start fifo
	rm -f "$BATS_TEST_TMPDIR/out"
	fails_in_setup fifo
	rm -f "$BATS_TEST_TMPDIR/out"
	records fifo
}

@test "a character device (mknod c 1 3): still that device after a failed start, a failed setup and a run" {
	fails_to_start dev
	rm -f "$BATS_TEST_TMPDIR/out"
	fails_in_setup dev
	rm -f "$BATS_TEST_TMPDIR/out"
	records dev
}

@test "/dev/null survives every ptt-record failure" {
	[ -c /dev/null ]
	run -127 --separate-stderr ptt-record -o /dev/null -- /nonexistent
	[ "$stderr" = "ptt-record: /nonexistent: No such file or directory" ]
	test -c /dev/null
	run -126 --separate-stderr ptt-record -o /dev/null -- /dev/null
	test -c /dev/null
	run -127 --separate-stderr ptt-record --flight -o /dev/null -- /nonexistent
	test -c /dev/null
	run -1 --separate-stderr bash -c 'trap "" XFSZ; ulimit -f 1; exec ptt-record -o /dev/null -- true'
	test -c /dev/null
	run -0 --separate-stderr ptt-record -q -o /dev/null -- true
	test -c /dev/null
	[ "$(stat -c %t,%T /dev/null)" = 1,3 ]
}

@test "a file the run made for a program that never started is removed, and only that" {
	run -127 --separate-stderr ptt-record -o "$BATS_TEST_TMPDIR/new.ptt" -- "$BATS_TEST_TMPDIR/no-such-program"
	[ ! -e "$BATS_TEST_TMPDIR/new.ptt" ]
	# an empty file there before is no file of the run's
	: >"$BATS_TEST_TMPDIR/empty.ptt"
	run -127 --separate-stderr ptt-record -o "$BATS_TEST_TMPDIR/empty.ptt" -- "$BATS_TEST_TMPDIR/no-such-program"
	[ -f "$BATS_TEST_TMPDIR/empty.ptt" ]
	# through a symlink to nowhere the target is made, as by a shell's '>', and left (empty)
	ln -s dangling.ptt "$BATS_TEST_TMPDIR/dl.ptt"
	run -127 --separate-stderr ptt-record -o "$BATS_TEST_TMPDIR/dl.ptt" -- "$BATS_TEST_TMPDIR/no-such-program"
	[ -L "$BATS_TEST_TMPDIR/dl.ptt" ]
	[ -f "$BATS_TEST_TMPDIR/dangling.ptt" ]
	[ ! -s "$BATS_TEST_TMPDIR/dangling.ptt" ]
}

@test "-m: a first part already there is kept on a failed start; -f removes only parts this run wrote" {
	local d=$BATS_TEST_TMPDIR
	head -c 5000 /dev/urandom >"$d/orig"
	cp "$d/orig" "$d/t.ptt.0001"
	run -127 --separate-stderr ptt-record -m 64k -o "$d/t.ptt" -- "$d/no-such-program"
	cmp "$d/orig" "$d/t.ptt.0001"
	# part 1 a symlink to a file of the user's, part 2 a file of an older run: both
	# written over once the program runs; -f 1 removes part 2 (a regular file this run
	# filled) but not the symlink, and says so
	rm "$d/t.ptt.0001"
	cp "$d/orig" "$d/mine"
	ln -s mine "$d/t.ptt.0001"
	cp "$d/orig" "$d/t.ptt.0002"
	run -0 --separate-stderr ptt-record -m 64k -f 1 -o "$d/t.ptt" -- "$EXAMPLES/prodcons" -n 2000
	[ -L "$d/t.ptt.0001" ]
	[ "$(readlink "$d/t.ptt.0001")" = mine ]
	[ ! -e "$d/t.ptt.0002" ]
	[ "$(ls "$d" | grep -c '^t\.ptt\.0')" -eq 2 ] # the link, and the last part
	[[ "$stderr" == *" older removed, as -f asks, 1 left (not regular files of this run)): "* ]]
	run -0 --separate-stderr ptt-dump -n "$d/mine" # the run's first part, through the link
	[[ "$stderr" == "" ]]
}

@test "--flight: a file there before is kept on a failed start; a snapshot is written through a symlink, never over it" {
	local d=$BATS_TEST_TMPDIR
	head -c 5000 /dev/urandom >"$d/orig"
	cp "$d/orig" "$d/t.ptt"
	run -127 --separate-stderr ptt-record --flight -o "$d/t.ptt" -- "$d/no-such-program"
	cmp "$d/orig" "$d/t.ptt"
	cp "$d/orig" "$d/snap"
	ln -s snap "$d/t.ptt.1"
	# a file of the user's at the second snapshot's name: replaced whole, by rename
	cp "$d/orig" "$d/t.ptt.2"
	cat >"$d/prog" <<-EOS
		kill -USR1 \$PPID
		for i in \$(seq 1200); do grep -q 't.ptt.1: flight snapshot' '$d/err' && break; sleep 0.05; done
		kill -USR1 \$PPID
		for i in \$(seq 1200); do grep -q 't.ptt.2: flight snapshot' '$d/err' && break; sleep 0.05; done
	EOS
	run -0 --separate-stderr bash -c 'ptt-record --flight -o "$1/t.ptt" -- sh "$1/prog" 2>"$1/err"' _ "$d"
	[ -L "$d/t.ptt.1" ]
	[ "$(readlink "$d/t.ptt.1")" = snap ]
	run -0 --separate-stderr ptt-dump --check "$d/snap"
	[[ "$output" == *" 0 violations: ok" ]]
	[ -f "$d/t.ptt.2" ]
	run -0 --separate-stderr ptt-dump --check "$d/t.ptt.2"
	[[ "$output" == *" 0 violations: ok" ]]
	[ -z "$(find "$d" -name 't.ptt.*.tmp*')" ]
}

@test "the program named as its own output: Text file busy (126), the program left whole" {
	cp "$EXAMPLES/prodcons" "$BATS_TEST_TMPDIR/prog"
	cp "$EXAMPLES/prodcons" "$BATS_TEST_TMPDIR/prog.orig"
	run -126 --separate-stderr ptt-record -o "$BATS_TEST_TMPDIR/prog" -- "$BATS_TEST_TMPDIR/prog" -n 10
	[ -z "$output" ]
	[ "$stderr" = "ptt-record: $BATS_TEST_TMPDIR/prog: Text file busy" ]
	cmp "$BATS_TEST_TMPDIR/prog.orig" "$BATS_TEST_TMPDIR/prog"
	[ -x "$BATS_TEST_TMPDIR/prog" ]
}

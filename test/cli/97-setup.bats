#!/usr/bin/env bats
# The set-up behind the README's two commands: .ci/deps (the missing Debian packages of
# .ci/packages) and make check's closing count (test/tally.sh).
bats_require_minimum_version 1.5.0
load helpers

@test ".ci/deps: nothing to do when every check holds; else the one command to run, exit 1" {
	cat >"$BATS_TEST_TMPDIR/packages" <<'LIST'
# a comment, then a blank line

build  coreutils        cmd:ls cmd:cat
check  ptt-test-nopkg-a cmd:ptt-no-such-command
build  ptt-test-nopkg-b lib:libptt-no-such.so.9
check  libc6            lib:libc.so.6
LIST
	export PTT_PACKAGES="$BATS_TEST_TMPDIR/packages"
	run -1 --separate-stderr sh "$PTT_ROOT/.ci/deps" build --print
	[ -z "$output" ]
	[ "${stderr_lines[0]}" = "ptt: missing Debian packages: ptt-test-nopkg-b" ]
	[ "${stderr_lines[2]}" = "    sudo apt-get install -y --no-install-recommends ptt-test-nopkg-b" ]
	run -1 --separate-stderr sh "$PTT_ROOT/.ci/deps" check --print
	[ "${stderr_lines[2]}" = "    sudo apt-get install -y --no-install-recommends ptt-test-nopkg-a ptt-test-nopkg-b" ]
	run -0 --separate-stderr env PTT_NO_DEPS=1 sh "$PTT_ROOT/.ci/deps" check --print
	[ -z "$output$stderr" ]
	run -2 --separate-stderr sh "$PTT_ROOT/.ci/deps" all
	[ "$stderr" = "usage: .ci/deps build|check [--print]" ]
	# the project's own list: everything this machine ran the tests with is there
	unset PTT_PACKAGES
	run -0 --separate-stderr sh "$PTT_ROOT/.ci/deps" build --print
	[ -z "$output$stderr" ]
}

@test ".ci/run and the Makefile go through .ci/deps, the one list" {
	# the Makefile and .ci/ copied alone (nothing to build, so nothing runs long if a target
	# skipped the check), a list with one missing package of each kind, and stand-ins for
	# id (not root: .ci/deps prints the command instead of installing) and apt-get (never called)
	w="$BATS_TEST_TMPDIR/w"
	mkdir -p "$w/tree" "$w/bin" "$w/fakemake"
	cp -R "$PTT_ROOT/Makefile" "$PTT_ROOT/.ci" "$w/tree/"
	printf '#!/bin/sh\necho 1000\n' >"$w/bin/id"
	printf '#!/bin/sh\necho "apt-get $*" >>"%s/calls"\nexit 1\n' "$w" >"$w/bin/apt-get"
	printf '#!/bin/sh\necho "$PWD: make $*" >>"%s/calls"\n' "$w" >"$w/fakemake/make"
	chmod +x "$w/bin/id" "$w/bin/apt-get" "$w/fakemake/make"
	cat >"$w/packages" <<'LIST'
check  ptt-test-nopkg-a cmd:ptt-no-such-command
build  ptt-test-nopkg-b cmd:ptt-no-such-command-b
LIST
	export PTT_PACKAGES="$w/packages"
	unset MAKEFLAGS MFLAGS MAKELEVEL # under make check: not its jobs, flags or variables
	# make check and make check-quick stop at the check and test packages' message, before any test
	for target in check check-quick; do
		run -2 --separate-stderr env PATH="$w/bin:$PATH" make --no-print-directory -C "$w/tree" "$target"
		[ "${stderr_lines[0]}" = "ptt: missing Debian packages: ptt-test-nopkg-a ptt-test-nopkg-b" ] || { echo "$target: $stderr"; return 1; }
		[ "${stderr_lines[2]}" = "    sudo apt-get install -y --no-install-recommends ptt-test-nopkg-a ptt-test-nopkg-b" ]
		[[ "${stderr_lines[3]}" == "make: *** [Makefile:"*": deps-check] Error 1" ]]
		[ -z "$output" ]
	done
	# make demo and make deps: the build packages only
	for target in demo deps; do
		run -2 --separate-stderr env PATH="$w/bin:$PATH" make --no-print-directory -C "$w/tree" "$target"
		[ "${stderr_lines[0]}" = "ptt: missing Debian packages: ptt-test-nopkg-b" ] || { echo "$target: $stderr"; return 1; }
		[[ "${stderr_lines[3]}" == "make: *** [Makefile:"*": deps] Error 1" ]]
	done
	[ ! -e "$w/tree/build" ]
	[ ! -e "$w/calls" ]
	# .ci/run, from anywhere: the same command as a developer at the top of the tree
	cd "$BATS_TEST_TMPDIR"
	run -0 --separate-stderr env PATH="$w/fakemake:$w/bin:$PATH" sh "$w/tree/.ci/run"
	[ "$(cat "$w/calls")" = "$w/tree: make -j2 check" ]
}

@test "test/tally.sh: one closing line over the TAP of both passes; a pass without results is named" {
	mkdir -p "$BATS_TEST_TMPDIR/a" "$BATS_TEST_TMPDIR/b" "$BATS_TEST_TMPDIR/c"
	printf '1..3\nok 1 x\nnot ok 2 y\nok 3 z # skip no tool\n' >"$BATS_TEST_TMPDIR/a/report.tap"
	printf '1..2\nok 1 - u\nok 2 - v\n# not ok in a comment\n' >"$BATS_TEST_TMPDIR/a/test_x.tap"
	printf 'ok 1 w\nnot ok - ./t exited with status 134\n' >"$BATS_TEST_TMPDIR/b/report.tap"
	run -0 --separate-stderr sh "$PTT_ROOT/test/tally.sh" "$BATS_TEST_TMPDIR/a" "$BATS_TEST_TMPDIR/b" "$BATS_TEST_TMPDIR/c"
	[ "${lines[0]}" = "# $BATS_TEST_TMPDIR/c: no test results (the pass did not run to its tests)" ]
	[ "${lines[1]}" = "4 passed, 2 failed, 1 skipped" ]
	[ "${#lines[@]}" -eq 2 ]
}

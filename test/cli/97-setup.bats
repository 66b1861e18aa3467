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
check  ptt-test-nopkg-c debug:libptt-no-such.so.9
LIST
	export PTT_PACKAGES="$BATS_TEST_TMPDIR/packages"
	run -1 --separate-stderr sh "$PTT_ROOT/.ci/deps" build --print
	[ -z "$output" ]
	[ "${stderr_lines[0]}" = "ptt: missing Debian packages: ptt-test-nopkg-b" ]
	[ "${stderr_lines[2]}" = "    sudo apt-get install -y --no-install-recommends ptt-test-nopkg-b" ]
	run -1 --separate-stderr sh "$PTT_ROOT/.ci/deps" check --print
	[ "${stderr_lines[2]}" = "    sudo apt-get install -y --no-install-recommends ptt-test-nopkg-a ptt-test-nopkg-b ptt-test-nopkg-c" ]
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
	unset MAKEFLAGS MFLAGS MAKELEVEL BUILD TESTS QUICK SANITIZE # under make check: not its jobs, flags or variables
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

@test "test/tally.sh: one closing line over the TAP of both passes; a pass without results is named and failed" {
	mkdir -p "$BATS_TEST_TMPDIR/a" "$BATS_TEST_TMPDIR/b" "$BATS_TEST_TMPDIR/c"
	printf '1..3\nok 1 x\nnot ok 2 y\nok 3 z # skip no tool\n' >"$BATS_TEST_TMPDIR/a/report.tap"
	printf '1..2\nok 1 - u\nok 2 - v\n# not ok in a comment\n' >"$BATS_TEST_TMPDIR/a/test_x.tap"
	printf 'ok 1 w\nnot ok - ./t exited with status 134\n' >"$BATS_TEST_TMPDIR/b/report.tap"
	run -1 --separate-stderr sh "$PTT_ROOT/test/tally.sh" "$BATS_TEST_TMPDIR/a" "$BATS_TEST_TMPDIR/b" "$BATS_TEST_TMPDIR/c"
	# every failed test is named before the closing line, with what it printed
	[ "${lines[0]}" = "# failed in $BATS_TEST_TMPDIR/a: 2 y" ]
	[ "${lines[1]}" = "# failed in $BATS_TEST_TMPDIR/b: - ./t exited with status 134" ]
	[ "${lines[2]}" = "# $BATS_TEST_TMPDIR/c: no test results (the pass did not run to its tests): counted as failed" ]
	[ "${lines[3]}" = "4 passed, 3 failed, 1 skipped" ]
	[ "${#lines[@]}" -eq 4 ]
	printf 'not ok 1 t\n# (in test file f, line 9)\n#   `false` failed\nok 2 u\n# not this\n' >"$BATS_TEST_TMPDIR/c/report.tap"
	run -1 --separate-stderr sh "$PTT_ROOT/test/tally.sh" "$BATS_TEST_TMPDIR/c"
	[ "$output" = "$(printf '# failed in %s: 1 t\n#   # (in test file f, line 9)\n#   #   `false` failed\n1 passed, 1 failed, 0 skipped' "$BATS_TEST_TMPDIR/c")" ]
	rm "$BATS_TEST_TMPDIR/c/report.tap"
	[ -z "$stderr" ]
	# a results directory that is missing altogether is the same; all passed is exit 0
	run -1 --separate-stderr sh "$PTT_ROOT/test/tally.sh" "$BATS_TEST_TMPDIR/a" "$BATS_TEST_TMPDIR/none"
	[ "${lines[1]}" = "# $BATS_TEST_TMPDIR/none: no test results (the pass did not run to its tests): counted as failed" ]
	[ "${lines[2]}" = "3 passed, 2 failed, 1 skipped" ]
	rm "$BATS_TEST_TMPDIR/a/report.tap"
	run -0 --separate-stderr sh "$PTT_ROOT/test/tally.sh" "$BATS_TEST_TMPDIR/a"
	[ "$output" = "2 passed, 0 failed, 0 skipped" ]
}

@test "test/part.sh: a part that fails with no failed test of its own leaves one failure naming it" {
	d="$BATS_TEST_TMPDIR/build/results"
	run -3 --separate-stderr sh "$PTT_ROOT/test/part.sh" "$d" check-cli sh -c 'exit 3'
	[ "$(cat "$d/check-cli.stopped.tap")" = "not ok - make check-cli in $BATS_TEST_TMPDIR/build stopped with status 3 before any test failed (a build or a run failed: see above)" ]
	# a part whose own tests failed is counted by them alone; one that passed leaves nothing
	run -1 --separate-stderr sh "$PTT_ROOT/test/part.sh" "$d" check-unit sh -c "printf 'not ok 1 x\n' >'$d/test_x.tap'; exit 1"
	run -0 --separate-stderr sh "$PTT_ROOT/test/part.sh" "$d" check-fuzz true
	[ "$(ls "$d")" = "$(printf 'check-cli.stopped.tap\ntest_x.tap')" ]
	run -1 --separate-stderr sh "$PTT_ROOT/test/tally.sh" "$d"
	[ "${lines[0]}" = "# make check-cli in $BATS_TEST_TMPDIR/build stopped with status 3 before any test failed (a build or a run failed: see above)" ]
	[ "${lines[1]}" = "# failed in $d: 1 x" ]
	[ "${lines[2]}" = "0 passed, 2 failed, 0 skipped" ]
}

@test "make check: a part whose build fails is counted failed in the closing line, and the status is not 0" {
	# the Makefile and its scripts in a tree of one unit test and no other source: the unit
	# tests build and pass in both passes; make all (under check-cli) cannot build, so the
	# CLI tests never run, as when an example does not compile
	w="$BATS_TEST_TMPDIR/w"
	mkdir -p "$w/test/unit"
	cp -R "$PTT_ROOT/Makefile" "$PTT_ROOT/.ci" "$w/"
	cp "$PTT_ROOT/test/part.sh" "$PTT_ROOT/test/tally.sh" "$w/test/"
	printf '#include <stdio.h>\nint main(void)\n{\n\tputs("ok 1 - fine");\n\treturn 0;\n}\n' >"$w/test/unit/test_fine.c"
	unset MAKEFLAGS MFLAGS MAKELEVEL BUILD TESTS QUICK SANITIZE # under make check: not its jobs, flags or variables
	run -2 --separate-stderr env PTT_NO_DEPS=1 make --no-print-directory -C "$w" TESTS=test_fine check
	[ "${lines[-1]}" = "2 passed, 2 failed, 0 skipped" ]
	[ "$(grep -c '^# make check-cli in build\(-asan\)\? stopped with status 2 before any test failed' <<<"$output")" -eq 2 ]
	[ -f "$w/build-asan/test/test_fine" ]
	# a pass that left nothing (the ASan pass's results removed): failed too
	run -1 --separate-stderr sh "$w/test/tally.sh" "$w/build/results" "$w/build-asan/nothing"
	[ "${lines[-1]}" = "1 passed, 2 failed, 0 skipped" ]
}

@test "every Rust example compiles with every rustc on this machine (Debian 12's 1.63, rustup's newer one)" {
	# type-checked only (--emit=metadata: seconds, not a build); make all builds them with $RUSTC
	local seen="" r v f
	for r in $(type -ap rustc) /usr/bin/rustc; do
		[ -x "$r" ] && v=$("$r" --version 2>/dev/null) || continue
		[[ "$seen" == *"[$v]"* ]] && continue
		seen="$seen[$v]"
		for f in "$PTT_ROOT"/examples/*.rs; do
			run -0 --separate-stderr "$r" --edition 2021 --crate-type bin --emit=metadata -o "$BATS_TEST_TMPDIR/x.rmeta" "$f"
			[ -z "$stderr" ] || { echo "$v: $f: $stderr"; return 1; }
		done
	done
	[ -n "$seen" ] || skip "rustc not installed (Debian: apt-get install rustc)"
	echo "# checked with $seen" >&3
}

@test "test files are numbered once each, and convert/ holds only programs (the shared analyses in convert/lib)" {
	cd "$PTT_ROOT"
	run -0 --separate-stderr sh -c 'ls test/cli/*.bats | sed "s|.*/||; s|-.*||" | sort | uniq -d'
	[ "$output" = "" ]
	[ "$stderr" = "" ]
	run -0 --separate-stderr find convert -maxdepth 1 -type f ! -name 'ptt-*.c'
	[ "$output" = "" ]
	[ "$stderr" = "" ]
}

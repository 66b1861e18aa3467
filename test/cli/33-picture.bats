#!/usr/bin/env bats
# examples/picture.sh: the PNG Gantt chart of make demo and of the README.
bats_require_minimum_version 1.5.0
load helpers

# the PNG signature (file(1) is not on a fresh Debian)
is_png() {
	[ "$(head -c 8 "$1" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ]
}

@test "picture.sh draws a PNG with a row per thread; legend from ptt-paje's state types" {
	command -v pj_dump >/dev/null || skip "pj_dump (pajeng) not installed"
	command -v Rscript >/dev/null || skip "R not installed"
	record "$EXAMPLES/prodcons" -p 2 -c 2 -n 200
	run -0 --separate-stderr env PTT_BIN="$PTT_BUILD/bin" sh "$PTT_ROOT/examples/picture.sh" "$BATS_TEST_TMPDIR/t.ptt" \
		"$BATS_TEST_TMPDIR/t.png" "a title"
	[ -z "$output" ]
	[ -z "$stderr" ]
	is_png "$BATS_TEST_TMPDIR/t.png"
	# the committed picture is a PNG too
	is_png "$PTT_ROOT/doc/demo.png"
}

@test "picture.sh without R says why on one line and exits 3; make demo goes on without the PNG" {
	record "$EXAMPLES/prodcons" -p 1 -c 1 -n 10
	run -3 --separate-stderr env PTT_BIN="$PTT_BUILD/bin" RSCRIPT=/nonexistent/Rscript sh "$PTT_ROOT/examples/picture.sh" \
		"$BATS_TEST_TMPDIR/t.ptt" "$BATS_TEST_TMPDIR/t.png"
	[ -z "$output" ]
	[ "$stderr" = "picture.sh: no PNG picture: /nonexistent/Rscript is not installed (apt-get install pajeng r-cran-ggplot2)" ]
	[ ! -e "$BATS_TEST_TMPDIR/t.png" ]
	run -2 --separate-stderr sh "$PTT_ROOT/examples/picture.sh"
	[[ "$stderr" == "usage: picture.sh TRACE OUT.png [TITLE]" ]]
	cd "$BATS_TEST_TMPDIR"
	run -0 --separate-stderr env RSCRIPT=/nonexistent/Rscript sh "$PTT_ROOT/examples/demo.sh" "$PTT_BUILD"
	[ "$(grep -c 'no PNG picture' <<<"$stderr")" -eq 1 ]
	[ -s demo/prodcons.paje ] && [ -s demo/prodcons.json ] && [ ! -e demo/prodcons.png ]
}

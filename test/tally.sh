#!/bin/sh
# test/tally.sh DIR...: the closing line of make check, counted from the TAP
# files (*.tap) that the unit tests and bats left in each DIR.  A pass that
# left no results (its build failed) is named.
passed=0 failed=0 skipped=0
for d in "$@"; do
	if ! ls "$d"/*.tap >/dev/null 2>&1; then
		echo "# $d: no test results (the pass did not run to its tests)"
		continue
	fi
	set -- $(cat "$d"/*.tap | awk '
		/^ok .*# *[Ss][Kk][Ii][Pp]/ { s++; next }
		/^ok / { p++ } /^not ok / { f++ }
		END { print p + 0, f + 0, s + 0 }')
	passed=$((passed + $1)) failed=$((failed + $2)) skipped=$((skipped + $3))
done
echo "$passed passed, $failed failed, $skipped skipped"

#!/bin/sh
# test/tally.sh DIR...: the closing line of make check, counted from the TAP
# files (*.tap) that the unit tests and bats left in each DIR, and from the
# lines test/part.sh leaves for a part that stopped (its build failed).  A pass
# that left no results at all counts as one failure.  Every failure that is not
# a test's own (a part stopped, a pass without results) is named before the
# line, and so is every failed test with the first lines of what it printed
# (a log cut to its tail still says what failed).  Exit status: 0 when nothing
# failed, else 1.
passed=0 failed=0 skipped=0
for d in "$@"; do
	if ! ls "$d"/*.tap >/dev/null 2>&1; then
		echo "# $d: no test results (the pass did not run to its tests): counted as failed"
		failed=$((failed + 1))
		continue
	fi
	for s in "$d"/*.stopped.tap; do
		[ -f "$s" ] && sed 's/^not ok - /# /' "$s"
	done
	for t in "$d"/*.tap; do
		case $t in *.stopped.tap) continue ;; esac
		awk -v d="$d" '
			/^not ok / { n = 0; print "# failed in " d ": " substr($0, 8); on = 1; next }
			/^(ok|not ok) / { on = 0 }
			on && /^#/ && n < 12 { print "#   " $0; n++ }' "$t"
	done
	set -- $(cat "$d"/*.tap | awk '
		/^ok .*# *[Ss][Kk][Ii][Pp]/ { s++; next }
		/^ok / { p++ } /^not ok / { f++ }
		END { print p + 0, f + 0, s + 0 }')
	passed=$((passed + $1)) failed=$((failed + $2)) skipped=$((skipped + $3))
done
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]

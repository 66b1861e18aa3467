#!/bin/sh
# test/part.sh DIR PART CMD...: run one part of make check (CMD, a make of that
# part) and, when it fails without a failed test to show for it in DIR's TAP (a
# build that stopped before its tests, a fuzz replay that crashed), leave one
# "not ok" line naming it in DIR/PART.stopped.tap, which test/tally.sh counts as
# failed.  Exit status: CMD's.
dir=$1 part=$2
shift 2
notok() { cat "$dir"/*.tap 2>/dev/null | grep -c '^not ok'; }
before=$(notok)
"$@"
rc=$?
if [ "$rc" -ne 0 ] && [ "$(notok)" -le "$before" ]; then
	mkdir -p "$dir"
	echo "not ok - make $part in $(dirname "$dir") stopped with status $rc before any test failed (a build or a run failed: see above)" \
		>"$dir/$part.stopped.tap"
fi
exit $rc

#!/bin/sh
# make demo: record the producer/consumer example and convert its trace.
set -eu
BUILD=${1:-build}
BIN=$BUILD/bin
mkdir -p demo
echo "== recording: ptt-record -o demo/prodcons.ptt -- prodcons -p 2 -c 2 -n 2000 -v"
"$BIN/ptt-record" -o demo/prodcons.ptt -- "$BUILD/examples/prodcons" -p 2 -c 2 -n 2000 -v
"$BIN/ptt-dump" demo/prodcons.ptt >demo/prodcons.txt
"$BIN/ptt-dump" --human demo/prodcons.ptt >demo/prodcons.human.txt
"$BIN/ptt-dump" --check demo/prodcons.ptt
echo
"$BIN/ptt-dump" --info demo/prodcons.ptt | sed '/^EVENT/,$d'
for tool in paje csv; do
	if [ -x "$BIN/ptt-$tool" ]; then
		"$BIN/ptt-$tool" demo/prodcons.ptt >"demo/prodcons.$tool"
	fi
done
if [ -x "$BIN/ptt-csv" ]; then "$BIN/ptt-csv" --states demo/prodcons.ptt >demo/prodcons.states.csv; fi
if [ -x "$BIN/ptt-paje" ]; then "$BIN/ptt-paje" --objects demo/prodcons.ptt >demo/prodcons.objects.paje; fi
if [ -x "$BIN/ptt-json" ]; then "$BIN/ptt-json" demo/prodcons.ptt >demo/prodcons.json; fi
# the picture (README's doc/demo.png is this one, by make picture); skipped with a reason without R
rc=0
"$BIN/ptt-picture" -t "make demo: prodcons -p 2 -c 2 -n 2000 (2 producers, 2 consumers, one queue)" \
	demo/prodcons.ptt demo/prodcons.png || rc=$?
[ "$rc" -eq 0 ] || [ "$rc" -eq 3 ]
echo
echo "== contention: ptt-stat demo/prodcons.ptt"
"$BIN/ptt-stat" --top=5 demo/prodcons.ptt
# a flame graph's input: the time waited, per stack, and its picture (R, as the Gantt chart)
"$BIN/ptt-stat" --folded=wait demo/prodcons.ptt >demo/prodcons.wait.folded
if [ "$rc" -eq 0 ]; then
	"$BIN/ptt-picture" --flame -t "make demo: prodcons, where threads waited" demo/prodcons.ptt demo/prodcons.flame.png
fi
if command -v flamegraph.pl >/dev/null; then
	flamegraph.pl --countname=ns --title "prodcons: time waited" demo/prodcons.wait.folded >demo/prodcons.wait.svg
elif command -v inferno-flamegraph >/dev/null; then
	inferno-flamegraph --countname=ns --title "prodcons: time waited" demo/prodcons.wait.folded >demo/prodcons.wait.svg
fi
echo
echo "== a lock-order inversion that did not deadlock: ptt-deadlock demo/inversion.ptt"
"$BIN/ptt-record" -q -o demo/inversion.ptt -- "$BUILD/examples/inversion" >/dev/null
"$BIN/ptt-deadlock" demo/inversion.ptt || true
echo
echo "== the demo files are in demo/:"
ls -l demo
cat <<MSG

Look at them:
  ptt-dump --human demo/prodcons.ptt | less     # one sentence per event
  less demo/prodcons.txt                        # the lossless text form
MSG
if [ -f demo/prodcons.png ]; then
	echo "  xdg-open demo/prodcons.png                    # each thread's states as a Gantt chart (PNG)"
fi
if [ -f demo/prodcons.json ]; then
	echo "  demo/prodcons.json                            # open in ui.perfetto.dev or chrome://tracing"
fi
if [ -f demo/prodcons.flame.png ]; then
	echo "  xdg-open demo/prodcons.flame.png              # flame graph of the time threads waited (PNG)"
fi
if [ -f demo/prodcons.wait.svg ]; then
	echo "  xdg-open demo/prodcons.wait.svg               # flame graph of the time threads waited"
else
	echo "  demo/prodcons.wait.folded                     # time waited per stack: flamegraph.pl, inferno or speedscope.app draw it"
fi
if [ -f demo/prodcons.paje ]; then
	cat <<MSG
  vite demo/prodcons.paje                       # timeline in ViTE (or: QT_QPA_PLATFORM=offscreen vite demo/prodcons.paje -e shot.svg)
  vite demo/prodcons.objects.paje               # the same, plus a row per lock: holders and waiters
  pj_dump demo/prodcons.paje | head             # PajeNG's view as CSV
MSG
fi
echo "(the tools are in $BIN; add it to PATH or run 'make install')"

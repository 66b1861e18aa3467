"""cp_py_lock.py - a what-if check on a program we did not write (CPython):

    python3 cp_py_lock.py HOLD_MS OUT_MS [THREADS [ROUNDS]]     (defaults 4 40)

THREADS threads each take one threading.Lock ROUNDS times, holding it HOLD_MS
(a sleep: I/O under the lock), then sleep OUT_MS outside it.  CPython's lock
is a semaphore and its GIL a condition/mutex pair, neither written by ptt's
authors; the hold is the parameter, so halving HOLD_MS is the real change
that bench/whatif.sh compares with ptt-critical --what-if=worker:-50% (the
holds whose site is this file's worker()).  Nothing is printed: the bench
times the whole process, interpreter start-up included, as ptt-critical's
prediction covers the whole recorded run.
"""
import sys
import threading
import time

hold = float(sys.argv[1]) / 1e3
out = float(sys.argv[2]) / 1e3
nthreads = int(sys.argv[3]) if len(sys.argv) > 3 else 4
rounds = int(sys.argv[4]) if len(sys.argv) > 4 else 40
io_lock = threading.Lock()


def worker():
    for _ in range(rounds):
        with io_lock:
            time.sleep(hold)
        time.sleep(out)


threads = [threading.Thread(target=worker) for _ in range(nthreads)]
for t in threads:
    t.start()
for t in threads:
    t.join()

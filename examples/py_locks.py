"""py_locks.py - a Python program's locks, for ptt's Python frames (test/cli/37-python-frames.bats).

py_locks.py [contend|queue|deadlock]...   (default: contend queue)
  contend   four threads take one threading.Lock in turn, each holding it 20 ms
            (the line that waits is marked LOCK-SITE)
  queue     a producer feeds a queue.Queue to two consumers that wait for work
            (the get is marked QUEUE-SITE)
  deadlock  two threads take lock_a and lock_b in opposite orders and block for
            ever (ptt-record is stopped by a timeout)
  fork      contend in a fork child (its Python frames are its own)
"""
import os
import queue
import sys
import threading
import time

stats_lock = threading.Lock()
counter = 0


def update_stats(rounds):
    global counter
    for _ in range(rounds):
        with stats_lock:  # LOCK-SITE
            counter += 1
            time.sleep(0.02)


def contend():
    ts = [threading.Thread(target=update_stats, args=(3,)) for _ in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    print(f"counter {counter} (expected 12)")


def consume(q, got):
    while True:
        item = q.get()  # QUEUE-SITE
        if item is None:
            return
        got.append(item)


def produce():
    q = queue.Queue()
    got = []
    ts = [threading.Thread(target=consume, args=(q, got)) for _ in range(2)]
    for t in ts:
        t.start()
    for i in range(6):
        time.sleep(0.01)
        q.put(i)
    for _ in ts:
        q.put(None)
    for t in ts:
        t.join()
    print(f"consumed {len(got)} (expected 6)")


lock_a = threading.Lock()
lock_b = threading.Lock()
both_hold = threading.Barrier(2)


def transfer_ab():
    with lock_a:
        both_hold.wait()
        with lock_b:  # AB-SITE
            pass


def transfer_ba():
    with lock_b:
        both_hold.wait()
        with lock_a:  # BA-SITE
            pass


def deadlock():
    # daemon threads: once the main thread is interrupted (SIGINT), the process can end
    ts = [threading.Thread(target=transfer_ab, daemon=True), threading.Thread(target=transfer_ba, daemon=True)]
    for t in ts:
        t.start()
    print("deadlocked", flush=True)
    for t in ts:
        t.join()


def in_child():
    sys.stdout.flush()  # else the child prints the parent's buffered lines again (stdout to a file)
    pid = os.fork()
    if pid == 0:
        contend()
        sys.stdout.flush()
        os._exit(0)
    os.waitpid(pid, 0)


if __name__ == "__main__":
    for what in sys.argv[1:] or ["contend", "queue"]:
        {"contend": contend, "queue": produce, "deadlock": deadlock, "fork": in_child}[what]()

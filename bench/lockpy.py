# bench: CPython threads handing work through a queue.Queue and counting under a Lock
import sys, threading, queue
N = int(sys.argv[1]) if len(sys.argv) > 1 else 100000
W = 4
q = queue.Queue(maxsize=256)
lock = threading.Lock()
total = [0]
def worker():
    while True:
        x = q.get()
        if x is None:
            return
        with lock:
            total[0] += x
ts = [threading.Thread(target=worker) for _ in range(W)]
for t in ts: t.start()
for i in range(N): q.put(i)
for _ in ts: q.put(None)
for t in ts: t.join()
print(total[0])

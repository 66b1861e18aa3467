"""py_gil - four ThreadPoolExecutor workers doing pure-Python work: they take
turns at CPython's GIL, the one contention this program has (no lock of its
own).  Prints "sum N" (the same whatever the interleaving)."""
from concurrent.futures import ThreadPoolExecutor


def work(n):
    total = 0
    for i in range(n):
        total += i * i % 7
    return total


with ThreadPoolExecutor(max_workers=4) as pool:
    print("sum", sum(pool.map(work, [300000] * 8)))

// rust_queue - a work queue in Rust's std: three workers wait on a Condvar
// (a futex counter, notify_one per item) for items a producer pushes under a
// Mutex every 2 ms, so the workers are idle most of the time: waiting for
// work, not contention.  It prints its ground truth: the items and their sum.
//
// Usage: rust_queue [ITEMS]   (default 200)
//
// The queue is a Vec taken from the front: Debian 12's rustc 1.63 has no const
// VecDeque::new() for a static (E0015); it never holds more than a few items.
use std::sync::{Condvar, Mutex};
use std::thread;
use std::time::Duration;

static QUEUE: Mutex<Vec<u64>> = Mutex::new(Vec::new());
static NOT_EMPTY: Condvar = Condvar::new();

fn main() {
    let items: u64 = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(200);
    let workers = 3;
    let handles: Vec<_> = (0..workers)
        .map(|_| {
            thread::spawn(|| {
                let mut sum = 0u64;
                loop {
                    let mut q = QUEUE.lock().unwrap();
                    while q.is_empty() {
                        q = NOT_EMPTY.wait(q).unwrap();
                    }
                    let v = q.remove(0);
                    drop(q);
                    if v == 0 {
                        return sum;
                    }
                    sum += v;
                }
            })
        })
        .collect();
    for i in 1..=items {
        QUEUE.lock().unwrap().push(i);
        NOT_EMPTY.notify_one();
        thread::sleep(Duration::from_millis(2));
    }
    {
        let mut q = QUEUE.lock().unwrap();
        for _ in 0..workers {
            q.push(0);
        }
    }
    NOT_EMPTY.notify_all();
    let sum: u64 = handles.into_iter().map(|h| h.join().unwrap()).sum();
    println!("items {} sum {} (expected {})", items, sum, items * (items + 1) / 2);
}

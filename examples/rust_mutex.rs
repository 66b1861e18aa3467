// rust_mutex - four threads contend on one std::sync::Mutex, which waits and
// wakes through libc::syscall(SYS_futex) (Rust >= 1.62): no pthread lock at
// all.  It prints its own ground truth: the acquisitions made and how many
// found the lock taken (try_lock failed first, then lock waited).
//
// Usage: rust_mutex [ITERATIONS]   (default 2000 per thread)
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::thread;
use std::time::Duration;

static RUST_LOCK: Mutex<u64> = Mutex::new(0);
static CONTENDED: AtomicU64 = AtomicU64::new(0);

fn main() {
    let iterations: u64 = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(2000);
    let threads = 4;
    let handles: Vec<_> = (0..threads)
        .map(|_| {
            thread::spawn(move || {
                for i in 0..iterations {
                    let mut g = match RUST_LOCK.try_lock() {
                        Ok(g) => g,
                        Err(_) => {
                            CONTENDED.fetch_add(1, Ordering::Relaxed);
                            RUST_LOCK.lock().unwrap()
                        }
                    };
                    *g += 1;
                    if i % 64 == 0 {
                        thread::sleep(Duration::from_micros(50));
                    }
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    let total = *RUST_LOCK.lock().unwrap();
    println!("acquisitions {} (expected {})", total, iterations * threads);
    println!("contended {}", CONTENDED.load(Ordering::Relaxed));
    std::process::exit(if total == iterations * threads { 0 } else { 1 });
}

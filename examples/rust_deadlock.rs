// rust_deadlock - two threads take two std::sync::Mutexes in opposite orders
// and block for ever in futex waits (a barrier makes sure each holds its
// first lock before it asks for the second).  Stop it with a signal.
use std::sync::{Arc, Barrier, Mutex};
use std::thread;

static LOCK_A: Mutex<u32> = Mutex::new(0);
static LOCK_B: Mutex<u32> = Mutex::new(0);

fn main() {
    let barrier = Arc::new(Barrier::new(2));
    let b1 = Arc::clone(&barrier);
    let t1 = thread::spawn(move || {
        let _a = LOCK_A.lock().unwrap();
        b1.wait();
        let _b = LOCK_B.lock().unwrap();
    });
    let t2 = thread::spawn(move || {
        let _b = LOCK_B.lock().unwrap();
        barrier.wait();
        let _a = LOCK_A.lock().unwrap();
    });
    t1.join().unwrap();
    t2.join().unwrap();
    println!("not deadlocked");
}

// rust_deadlock - two threads take two std::sync::Mutexes in opposite orders
// and block for ever in futex waits (a barrier makes sure each holds its
// first lock before it asks for the second).  Stop it with a signal.
//
// rust_deadlock exit: once both threads sleep on the other's lock (each in a
// futex wait on a word of LOCK_A or LOCK_B, as /proc says), the main thread
// ends the process with std::process::exit(0), the threads still blocked:
// prints "both blocked, exiting" first.
use std::sync::{Arc, Barrier, Mutex};
use std::{env, fs, mem, process, thread, time};

static LOCK_A: Mutex<u32> = Mutex::new(0);
static LOCK_B: Mutex<u32> = Mutex::new(0);

// Is a thread of this process inside a futex wait on a word of obj?  (/proc/self/task/TID/syscall:
// the call's number, then its first argument; x86_64's SYS_futex is 202.)  None: /proc cannot tell.
fn blocked_on(tid: &str, obj: usize, size: usize) -> Option<bool> {
    let s = fs::read_to_string(format!("/proc/self/task/{}/syscall", tid)).ok()?;
    let mut f = s.split_whitespace();
    let nr: u64 = f.next()?.parse().ok()?;
    let a0 = usize::from_str_radix(f.next()?.trim_start_matches("0x"), 16).ok()?;
    Some(nr == 202 && a0 >= obj && a0 < obj + size)
}

// Wait until two threads sleep on LOCK_A and LOCK_B: 10 s at most, 200 ms when /proc cannot tell.
fn wait_both_blocked() {
    let size = mem::size_of::<Mutex<u32>>();
    let (a, b) = (&LOCK_A as *const _ as usize, &LOCK_B as *const _ as usize);
    for i in 0..10000 {
        let mut seen = (false, false);
        let mut unknown = false;
        if let Ok(dir) = fs::read_dir("/proc/self/task") {
            for e in dir.flatten() {
                let tid = e.file_name().to_string_lossy().into_owned();
                match (blocked_on(&tid, a, size), blocked_on(&tid, b, size)) {
                    (Some(x), Some(y)) => {
                        seen.0 |= x;
                        seen.1 |= y;
                    }
                    _ => unknown = true,
                }
            }
        } else {
            unknown = true;
        }
        if (seen.0 && seen.1) || (unknown && i >= 200) {
            return;
        }
        thread::sleep(time::Duration::from_millis(1));
    }
}

fn main() {
    let exit = env::args().nth(1).map_or(false, |a| a == "exit");
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
    if exit {
        wait_both_blocked();
        println!("both blocked, exiting");
        process::exit(0);
    }
    t1.join().unwrap();
    t2.join().unwrap();
    println!("not deadlocked");
}

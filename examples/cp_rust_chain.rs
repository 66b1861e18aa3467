// cp_rust_chain - critical-path ground truth: cp_chain's three-thread lock chain
// on a Rust std::sync::Mutex, which waits and wakes through futex(2) itself
// (Rust >= 1.62): no pthread lock at all.  Builds with rustc 1.63 and newer.
//
//   cp_rust_chain [-r ROUNDS] [A_MS [B_MS [C_MS [T_MS]]]]     (defaults 20 30 10 10)
//
// Each round: thread rust-A takes the static Mutex CHAIN_LOCK and works A_MS
// holding it.  While it does, rust-B asks for CHAIN_LOCK and sleeps in it (the
// program waits until a thread sleeps in futex(2) on the lock's word), then
// rust-C asks and sleeps too.  A's unlock wakes one sleeper (FUTEX_WAKE, first
// come first woken in practice), who works its hold, and its unlock wakes the
// other.  The last acquirer then works T_MS more outside the lock.  main joins
// the three, and the next round starts.  "PROG: order X Y Z" in the ground
// truth names the last round's acquirers in order.
// At most 2 threads are runnable at once (main polling, and the one holder):
// the machine has 2 CPUs.  A_MS must exceed ~5 ms, for B and C to ask while A
// holds the lock.  Work is a busy loop on Instant::now() (CLOCK_MONOTONIC).
//
// Expected critical path (hand-computed; R = ROUNDS, a b c t = the arguments),
// with the order rust-A rust-B rust-C:
//   path     = R * (a + b + c + t)
//              main -> spawn A -> A's hold a -> A's FUTEX_WAKE ends B's wait ->
//              B's hold b -> B's FUTEX_WAKE ends C's wait -> C's hold c -> C's
//              work t -> C's exit ends main's join
//   on path: CHAIN_LOCK  R * (a + b + c)   (rust-A a, rust-B b, rust-C c)
//            running     R * t
//   C waits a + b per round, begun while rust-A held the lock: its real blocker
//   is rust-B (the wake just before its acquisition), not rust-A.
//   what-if CHAIN_LOCK:-50% = R * ((a + b + c) / 2 + t)
//   (the real change: cp_rust_chain a/2 b/2 c/2 t)
//
// The ground truth goes to stderr when CP_TRUTH=1 is set, as cp_work.h says.
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

// the acquirers' names this round, in order
static CHAIN_LOCK: Mutex<Vec<&'static str>> = Mutex::new(Vec::new());

#[cfg(target_arch = "x86_64")]
const SYS_FUTEX: Option<u64> = Some(202);
#[cfg(target_arch = "aarch64")]
const SYS_FUTEX: Option<u64> = Some(98);
#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
const SYS_FUTEX: Option<u64> = None;

fn work(ms: f64) {
    let end = Instant::now() + Duration::from_secs_f64(ms / 1e3);
    let mut x: u64 = 0;
    while Instant::now() < end {
        for i in 0..200u64 {
            // volatile: the loop is work, not something to fold away
            unsafe { std::ptr::write_volatile(&mut x, x.wrapping_add(i)) };
        }
    }
}

// How many of this process's threads sleep in futex(2) on CHAIN_LOCK's words;
// None when /proc or the system call's number is not known here.
fn sleepers() -> Option<usize> {
    let nr = SYS_FUTEX?;
    let lo = &CHAIN_LOCK as *const _ as u64;
    let hi = lo + std::mem::size_of_val(&CHAIN_LOCK) as u64;
    let mut n = 0;
    for task in std::fs::read_dir("/proc/self/task").ok()? {
        let path = task.ok()?.path().join("syscall");
        let text = match std::fs::read_to_string(path) {
            Ok(t) => t,
            Err(_) => continue, // the thread is gone
        };
        let mut f = text.split_whitespace();
        let call = f.next().and_then(|s| s.parse::<u64>().ok());
        let a0 = f.next().and_then(|s| u64::from_str_radix(s.trim_start_matches("0x"), 16).ok());
        if let (Some(c), Some(a)) = (call, a0) {
            if c == nr && a >= lo && a < hi {
                n += 1;
            }
        }
    }
    Some(n)
}

// Wait until N threads sleep on CHAIN_LOCK: 10 s at most, 20 ms when that cannot be known.
fn until_sleepers(n: usize) {
    for i in 0..10000 {
        match sleepers() {
            Some(k) if k >= n => return,
            None if i >= 20 => return,
            _ => thread::sleep(Duration::from_millis(1)),
        }
    }
}

fn arg(args: &[String], i: usize, def: f64) -> f64 {
    match args.get(i) {
        None => def,
        Some(s) => match s.parse::<f64>() {
            Ok(v) if (0.0..=1e6).contains(&v) => v,
            _ => {
                eprintln!("cp_rust_chain: {}: not a duration in ms", s);
                std::process::exit(2);
            }
        },
    }
}

fn truth(key: &str, what: &str, ms: f64) {
    let sep = if what.is_empty() { "" } else { " " };
    eprintln!("cp_rust_chain: {}{}{} {:.3} ms", key, sep, what, ms);
}

fn main() {
    let t0 = Instant::now();
    let mut args: Vec<String> = std::env::args().collect();
    let mut rounds: u64 = 1;
    if args.len() >= 3 && args[1] == "-r" {
        rounds = match args[2].parse() {
            Ok(r) if r >= 1 => r,
            _ => {
                eprintln!("cp_rust_chain: -r {}: not a number of rounds", args[2]);
                std::process::exit(2);
            }
        };
        args.drain(1..3);
    }
    if args.len() > 5 {
        eprintln!("usage: cp_rust_chain [-r ROUNDS] [A_MS [B_MS [C_MS [T_MS]]]]");
        std::process::exit(2);
    }
    let (a, b, c, t) = (arg(&args, 1, 20.0), arg(&args, 2, 30.0), arg(&args, 3, 10.0), arg(&args, 4, 10.0));
    let mut order: Vec<&'static str> = Vec::new();
    for _ in 0..rounds {
        CHAIN_LOCK.lock().unwrap().clear();
        let holding = Arc::new(AtomicBool::new(false));
        let spawn = |name: &'static str, hold: f64, holding: Arc<AtomicBool>| {
            thread::Builder::new()
                .name(name.to_string())
                .spawn(move || {
                    let mut g = CHAIN_LOCK.lock().unwrap();
                    g.push(name);
                    let last = g.len() == 3;
                    holding.store(true, Ordering::SeqCst);
                    work(hold);
                    drop(g);
                    if last {
                        work(t);
                    }
                })
                .expect("cp_rust_chain: spawn")
        };
        let ha = spawn("rust-A", a, holding.clone());
        while !holding.load(Ordering::SeqCst) {
            thread::sleep(Duration::from_micros(100));
        }
        let hb = spawn("rust-B", b, Arc::new(AtomicBool::new(false)));
        until_sleepers(1);
        let hc = spawn("rust-C", c, Arc::new(AtomicBool::new(false)));
        until_sleepers(2);
        for h in [ha, hb, hc] {
            h.join().unwrap();
        }
        order = CHAIN_LOCK.lock().unwrap().clone();
    }
    let wall = t0.elapsed().as_secs_f64() * 1e3;
    let want = std::env::var("CP_TRUTH").map(|v| !v.is_empty() && v != "0").unwrap_or(false);
    if want {
        let r = rounds as f64;
        truth("wall", "", wall);
        eprintln!("cp_rust_chain: order {}", order.join(" "));
        truth("path", "", r * (a + b + c + t));
        truth("on-path", "CHAIN_LOCK", r * (a + b + c));
        truth("on-path", "running", r * t);
        truth("what-if", "CHAIN_LOCK:-50%", r * ((a + b + c) / 2.0 + t));
    }
}

/*
 * pace.c - how long the recorder sleeps between two passes: long enough
 * that a recorder waking up does not steal the processor from the program
 * (on a busy 2-CPU machine every wake-up preempts it) and that a pass has
 * enough to do to be worth its own cost, short enough that no ring fills
 * before the next pass.  The rate is in ring bytes per second of the
 * fullest ring (drain_stats' pace_bytes; a mutex's record takes 44 bytes, a
 * signal's 28), the peak the recent passes saw, falling to nothing over
 * PACE_HOLD_NS of the program's time after it was seen: a pass that follows
 * a long one finds few records (the writers were waiting for the long one),
 * and a rate taken from it alone slept the recorder for 30-50 ms while a
 * ring filled in a few.  The fall was a factor per pass before (1 - its
 * time over half a second), which still held a third of a burst's peak half
 * a second later: node's recorder woke every 4-20 ms for a second after its
 * burst to drain a few hundred bytes a pass (100 of its 143 passes);
 * held 200 ms and falling linearly, 63-82 passes (coded, 15 runs).
 *
 * A pass's rate is its bytes over the stretch of the program's time they
 * were written in: from what the previous pass covered to what this one
 * covers (the merge's watermark), or the time since the previous pass
 * began, whichever is longer.  Not the recorder's wake-ups alone: they are
 * what the pacing decides, so measuring by them fed its errors back: the
 * first pass drains what the program wrote while the recorder started (10
 * ms and more), and divided by the 0.1 ms since the loop began it read
 * 20-40 times the true rate, which the peak then held for seconds.  A
 * cond-var ping-pong (660 K events/s) had the recorder preempting it every
 * 0.4-1.3 ms instead of every 10, a third slower per turn in the runs where
 * that happened.  Not the program's time alone either: a mark held back by
 * a thread inside a write moves a few nanoseconds a pass while other rings'
 * bytes come, which read as gigabytes a second and drained at once, again
 * and again (node coded: 1088-3226 passes, most of 2 events 10 us apart,
 * and 3-5 times the recorder's usual CPU, in 3 of 12 runs; none in 45 since, coded and
 * default).
 *
 * Two regimes (doc/recorder.md, section 5).  A writer flat out, filling
 * PACE_FAST of a ring in under PACE_SLOW_NS, keeps its ring's lines in its
 * own cache as long as the drain keeps the ring under about half full (the
 * lock loop writing 2.5 GB/s of records: draining at half a ring made it
 * 7 % slower): its ring is drained every PACE_FAST of it.  Any slower writer's
 * lines are long gone from its cache when the drain reads them, and there
 * each pass's own cost (its wake-up, the rings' and the coder's lines
 * brought back) is what to save: its ring is drained half full, the sleep
 * being the time to half a ring less the pass's own, since the writers go
 * on writing while a pass runs.  Against the pacing before (every ring at
 * about 0.3 of itself, a quarter of its size counted in 36-byte records):
 * sqlite3's, node's and CPython's recorders took 0.82, 0.88 and 0.88 of
 * their processor time (8-10 paired runs each), the lock loops ran as fast.
 */
#include "pace.h"

uint64_t pace_next(struct pace *p, uint64_t bytes, uint64_t upto_ns, uint64_t wall_ns, uint64_t ring_bytes,
		   uint64_t pass_ns, uint64_t max_ns)
{
	uint64_t dt = upto_ns > p->upto ? upto_ns - p->upto : 0, got = bytes - p->bytes;
	/* bytes are drained no faster than they were written since the last pass began: a mark
	 * held back (a thread inside a write) moves a few ns while other rings' bytes come */
	uint64_t wall = p->wall && wall_ns > p->wall ? wall_ns - p->wall : 0;
	if (wall > dt)
		dt = wall;
	p->wall = wall_ns;
	if (upto_ns > p->upto)
		p->upto = upto_ns;
	p->bytes = bytes;
	double measured = got > 0 && dt ? (double)got / ((double)dt / 1e9) : 0;
	/* the peak, falling to nothing in PACE_HOLD_NS of the program's time after it was seen */
	double since = (double)(p->upto - p->peak_upto), hold = PACE_HOLD_NS;
	double held = since >= hold ? 0 : p->peak * (1 - since / hold);
	if (measured >= held) {
		p->peak = measured;
		p->peak_upto = p->upto;
	}
	double rate = measured >= held ? measured : held;
	if (rate < PACE_QUIET) /* quiet: a writer with a full ring wakes us */
		return max_ns / 5 > 10000000u ? 10000000u : max_ns / 5;
	/* a writer flat out: drained every PACE_FAST of its ring (its lines in its cache); any
	 * other at half its ring, less the pass's own time */
	double target = ring_bytes * PACE_FAST, ns = target / rate * 1e9;
	if (ns >= PACE_SLOW_NS) {
		target = (double)(ring_bytes / 2);
		ns = target / rate * 1e9 - (double)pass_ns;
	}
	if ((double)got >= target || ns < 50000)
		return 0;
	return ns > (double)max_ns ? max_ns : (uint64_t)ns;
}

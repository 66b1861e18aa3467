/*
 * pace.c - how long the recorder sleeps between two passes: long enough
 * that a recorder waking up does not steal the processor from the program
 * (on a busy 2-CPU machine every wake-up preempts it), short enough that no
 * ring gets more than a quarter full in between.  The rate is the peak the
 * recent passes saw, decaying over half a second: a pass that follows a
 * long one finds few records (the writers were waiting for the long one),
 * and a rate taken from it alone slept the recorder for 30-50 ms while a
 * ring filled in a few.
 *
 * A pass's rate is its records over the stretch of the program's time they
 * were written in: from what the previous pass covered to what this one
 * covers (the merge's watermark), never the time between the recorder's own
 * wake-ups.  Those are what the pacing decides, so measuring by them fed its
 * errors back: the first pass drains what the program wrote while the
 * recorder started (10 ms and more), and divided by the 0.1 ms since the
 * loop began it read 20-40 times the true rate, which the peak then held
 * for seconds.  A cond-var ping-pong (660 K events/s) had the recorder
 * preempting it every 0.4-1.3 ms instead of every 10, a third slower per
 * turn in the runs where that happened.
 */
#include "pace.h"

uint64_t pace_next(struct pace *p, long events, uint64_t upto_ns, uint64_t ring_events, uint64_t max_ns)
{
	uint64_t dt = upto_ns > p->upto ? upto_ns - p->upto : 0;
	if (upto_ns > p->upto)
		p->upto = upto_ns;
	double measured = events > 0 && dt ? (double)events / ((double)dt / 1e9) : 0;
	double keep = dt >= 500000000u ? 0 : 1 - (double)dt / 5e8;
	p->rate = measured > p->rate * keep ? measured : p->rate * keep;
	if (p->rate < 1000) /* quiet: a writer with a full ring wakes us */
		return max_ns / 5 > 10000000u ? 10000000u : max_ns / 5;
	double ns = (double)ring_events / 4 / p->rate * 1e9;
	if ((uint64_t)events >= ring_events / 4 || ns < 50000)
		return 0;
	return ns > (double)max_ns ? max_ns : (uint64_t)ns;
}

/*
 * test_pace.c - the recorder's pacing (capture/recorder/pace.c) on made-up passes:
 * the rate is the program's records over the program's time they cover,
 * so a start-up backlog drained at once paces like the same records spread
 * out; a burst is held for a while; a quiet program gets the long sleep.
 */
#include "../../capture/recorder/pace.h"
#include "tap.h"

#define MS 1000000u
#define RING (1048576u / 36) /* records in a 1M ring */
#define MAX (50u * MS)

int main(void)
{
	/* a ping-pong at 660 K events/s: its first pass drains what it wrote
	 * during the recorder's 10 ms start-up, covering those 10 ms */
	struct pace p = { 0, 0 };
	uint64_t ns = pace_next(&p, 6600, 10 * MS, RING, MAX);
	ok(ns > 10 * MS && ns < 12 * MS, "a start-up backlog paces by the time it was written in: %.2f ms (11.03)", ns / 1e6);
	ns = pace_next(&p, 7260, 21 * MS, RING, MAX);
	ok(ns > 10 * MS && ns < 12 * MS, "the next pass at the same rate: %.2f ms", ns / 1e6);

	/* the same records over the same stretch, whatever the recorder's own timing: a
	 * pass that covered only 0.1 ms with 66 records reads the same rate */
	struct pace q = { 0, 0 };
	pace_next(&q, 6600, 10 * MS, RING, MAX);
	ns = pace_next(&q, 66, 10 * MS + 100000u, RING, MAX);
	ok(ns > 10 * MS && ns < 12 * MS, "a short pass reads the same rate: %.2f ms", ns / 1e6);

	/* a pass that covered no new time (the merge held back) changes nothing but the count */
	uint64_t before = q.upto;
	ns = pace_next(&q, 0, before, RING, MAX);
	ok(q.upto == before && ns > 10 * MS, "a pass that covered nothing keeps the pace: %.2f ms", ns / 1e6);

	/* a flood: a quarter ring or more in one pass means at once */
	struct pace f = { 0, 0 };
	ok(pace_next(&f, RING / 4, 1 * MS, RING, MAX) == 0, "a quarter ring drained in one pass: the next pass at once");

	/* after that burst (7.3 M/s), a pass with few records (the writers waited) keeps
	 * the peak: about 1 ms, not the 50 ms its own 100 K/s would give */
	ns = pace_next(&f, 100, 2 * MS, RING, MAX);
	ok(ns < 2 * MS, "the peak is held after a burst: %.3f ms", ns / 1e6);

	/* half a second of the program's time without records: quiet, the long sleep */
	ns = pace_next(&f, 0, 600 * MS, RING, MAX);
	ok(ns == 10 * MS, "quiet after the peak decays: %.2f ms", ns / 1e6);

	/* a slow program: the sleep is capped */
	struct pace s = { 0, 0 };
	ns = pace_next(&s, 5000, 1000 * MS, RING, MAX);
	ok(ns == MAX, "5 K events/s sleeps the longest allowed: %.2f ms", ns / 1e6);
	return tap_done();
}

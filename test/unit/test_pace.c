/*
 * test_pace.c - the recorder's pacing (capture/recorder/pace.c) on made-up passes:
 * the rate is the program's ring bytes over the program's time they cover
 * (both given as totals so far),
 * so a start-up backlog drained at once paces like the same records spread
 * out; a burst is held for a while; a quiet program gets the long sleep; a
 * writer flat out is drained every PACE_FAST of its ring, any slower one at
 * half its ring less the pass's own time.
 */
#include "../../capture/recorder/pace.h"
#include "tap.h"

#define MS 1000000u
#define RING (2u << 20) /* bytes in a 2 MiB ring */
#define MAX (50u * MS)
#define REC 36u /* bytes a record, for the counts below */

int main(void)
{
	/* a ping-pong at 660 K events/s (23.8 MB/s): its first pass drains what it wrote
	 * during the recorder's 10 ms start-up, covering those 10 ms: half a ring in 44 ms */
	struct pace p = { 0 };
	uint64_t ns = pace_next(&p, 6600 * REC, 10 * MS, 10 * MS, RING, 0, MAX);
	ok(ns > 43 * MS && ns < 45 * MS, "a start-up backlog paces by the time it was written in: %.2f ms (44.1)", ns / 1e6);
	ns = pace_next(&p, (6600 + 7260) * REC, 21 * MS, 21 * MS, RING, 0, MAX);
	ok(ns > 43 * MS && ns < 45 * MS, "the next pass at the same rate: %.2f ms", ns / 1e6);

	/* the same records over the same stretch, whatever the recorder's own timing: a
	 * pass that covered only 0.1 ms with 66 records reads the same rate */
	struct pace q = { 0 };
	pace_next(&q, 6600 * REC, 10 * MS, 10 * MS, RING, 0, MAX);
	ns = pace_next(&q, (6600 + 66) * REC, 10 * MS + 100000u, 10 * MS + 100000u, RING, 0, MAX);
	ok(ns > 43 * MS && ns < 45 * MS, "a short pass reads the same rate: %.2f ms", ns / 1e6);

	/* the writers go on during a pass: a slower writer's sleep is half a ring's time less the pass's */
	struct pace w = { 0 };
	uint64_t plain = pace_next(&w, 6600 * REC, 10 * MS, 10 * MS, RING, 0, MAX);
	struct pace w2 = { 0 };
	ns = pace_next(&w2, 6600 * REC, 10 * MS, 10 * MS, RING, 3 * MS, MAX);
	ok(plain - ns == 3 * MS, "a 3 ms pass shortens the sleep by 3 ms: %.2f against %.2f ms", ns / 1e6, plain / 1e6);

	/* a pass that covered no new time (the merge held back) changes nothing but the count */
	uint64_t before = q.upto;
	ns = pace_next(&q, (6600 + 66) * REC, before, before + 1 * MS, RING, 0, MAX);
	ok(q.upto == before && ns > 10 * MS, "a pass that covered nothing keeps the pace: %.2f ms", ns / 1e6);

	/* a flood: half a ring or more in one pass means at once */
	struct pace f = { 0 };
	ok(pace_next(&f, RING / 2, 10 * MS, 10 * MS, RING, 0, MAX) == 0, "half a ring drained in one pass: the next pass at once");

	/* a writer flat out (2.5 GB/s, the lock loop's: 0.3 of a ring in 0.25 ms) is drained
	 * every 0.3 of its ring, and the pass's own time is not taken off */
	struct pace l = { 0 };
	ns = pace_next(&l, 250000, 100000u, 100000u, RING, 40000u, MAX);
	ok(ns > 240000u && ns < 260000u, "a writer flat out: every 0.3 of its ring, %.3f ms (0.252)", ns / 1e6);
	ok(pace_next(&l, 250000u + 700000u, 350000u, 350000u, RING, 0, MAX) == 0,
	   "a writer flat out, 0.3 of a ring in one pass: the next pass at once");

	/* after a burst (7.3 M/s), a pass with few records (the writers waited) keeps
	 * the peak: about 4 ms, not the 50 ms its own 100 K/s would give */
	struct pace b = { 0 };
	pace_next(&b, 7300 * REC, 1 * MS, 1 * MS, RING, 0, MAX);
	ns = pace_next(&b, (7300 + 100) * REC, 2 * MS, 2 * MS, RING, 0, MAX);
	ok(ns > 3 * MS && ns < 5 * MS, "the peak is held after a burst: %.3f ms", ns / 1e6);

	/* half a second of the program's time without records: quiet, the long sleep */
	ns = pace_next(&b, (7300 + 100) * REC, 600 * MS, 600 * MS, RING, 0, MAX);
	ok(ns == 10 * MS, "quiet after the peak decays: %.2f ms", ns / 1e6);

	/* the peak falls to nothing in PACE_HOLD_NS of the program's time: halfway, half of it (the sleep
	 * twice the peak's), and it never held on by being seen again in passes close together */
	struct pace h = { 0 };
	uint64_t at_peak = pace_next(&h, 20000 * REC, 10 * MS, 10 * MS, RING, 0, MAX); /* 72 MB/s */
	uint64_t t = 10 * MS + (uint64_t)(PACE_HOLD_NS / 2);
	ns = pace_next(&h, 20000 * REC + 1000, t, t, RING, 0, MAX);
	ok(ns > 2 * at_peak - 100000u && ns < 2 * at_peak + 100000u, "halfway through the hold, half the peak: %.3f ms against %.3f",
	   ns / 1e6, at_peak / 1e6);
	struct pace h2 = { 0 };
	pace_next(&h2, 100000 * REC, 10 * MS, 10 * MS, RING, 0, MAX);
	for (t = 10 * MS; t < 10 * MS + (uint64_t)PACE_HOLD_NS; t += 100000u)
		ns = pace_next(&h2, 100000 * REC, t + 100000u, t + 100000u, RING, 0, MAX);
	ok(ns == 10 * MS, "a hold's worth of passes 0.1 ms apart with no bytes: quiet, %.2f ms", ns / 1e6);

	/* a mark held back (a thread preempted inside a write): passes 10 us apart of 17 bytes each,
	 * the program's time covered moving 10 ns a pass, read as 1.7 MB/s (their bytes over the
	 * time between the passes), not 1.7 GB/s, which drained at once, again and again (node: 1465
	 * passes where 100 did, 2026-11-30) */
	struct pace m = { 0 };
	uint64_t wall = 100 * MS, upto = 100 * MS, by = 0;
	pace_next(&m, by, upto, wall, RING, 0, MAX);
	for (int k = 0; k < 100; k++)
		ns = pace_next(&m, by += 17, upto += 10, wall += 10000u, RING, 0, MAX);
	ok(ns > 10 * MS, "a mark held back does not make a flood of 17-byte passes: %.2f ms", ns / 1e6);

	/* a slow program: the sleep is capped */
	struct pace s = { 0 };
	ns = pace_next(&s, 5000 * REC, 1000 * MS, 1000 * MS, RING, 0, MAX);
	ok(ns == MAX, "5 K events/s sleeps the longest allowed: %.2f ms", ns / 1e6);
	return tap_done();
}

/*
 * test_flight.c - the order a flight snapshot writes its records in
 * (capture/recorder/flight.c, time_order): each ring's records merged by
 * (time, tid, ring, place in the ring), as qsort by that order gives them,
 * with times that tie within a ring and across rings, empty rings, one ring
 * alone, and a ring whose records are out of time order.
 */
#include <stdlib.h>
#include <string.h>

#include "../../capture/recorder/flight.c" /* its static time_order */
#include "tap.h"

static uint64_t rnd = 88172645463325252ull;
static uint64_t next(void)
{
	rnd ^= rnd << 13;
	rnd ^= rnd >> 7;
	rnd ^= rnd << 17;
	return rnd;
}

/* The order a snapshot's records must come in, written here apart from flight.c's: time, tid, ring, place. */
static int spec_order(const void *a, const void *b)
{
	const struct frec *x = a, *y = b;
	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if (x->ring != y->ring)
		return x->ring < y->ring ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* time_order against a qsort by spec_order, on nruns rings of up to most records each; out: a ring out of order */
static void one(uint32_t nruns, uint32_t most, int out, const char *what)
{
	size_t cap = (size_t)nruns * most + 1, n = 0;
	struct frec *a = malloc(cap * sizeof *a), *want = malloc(cap * sizeof *want);
	size_t *start = malloc((nruns + 1) * sizeof *start);
	uint32_t k = 0;
	for (uint32_t r = 0; r < nruns; r++) {
		uint32_t len = most ? (uint32_t)(next() % (most + 1)) : 0, tid = 100 + (uint32_t)(next() % 3); /* tids repeat */
		uint64_t t = next() % 50;
		if (!len)
			continue; /* an empty ring is no run */
		start[k++] = n;
		for (uint32_t s = 0; s < len; s++) {
			t += next() % 3; /* 0: a tie within the ring, and often across rings */
			a[n++] = (struct frec){ t, tid, r, s, NULL };
		}
		if (out && r == nruns / 2 && len > 2) { /* this ring's records out of time order */
			struct frec x = a[n - 1];
			a[n - 1] = a[n - len];
			a[n - len] = x;
		}
	}
	start[k] = n;
	memcpy(want, a, n * sizeof *a);
	qsort(want, n, sizeof *want, spec_order);
	int rc = time_order(&a, n, start, k);
	int same = rc == 0;
	for (size_t i = 0; same && i < n; i++)
		same = a[i].ts == want[i].ts && a[i].ring == want[i].ring && a[i].seq == want[i].seq;
	ok(same, "%s: %zu records of %u rings in qsort's order", what, n, k);
	free(a);
	free(want);
	free(start);
}

int main(void)
{
	one(1, 500, 0, "one ring");
	one(2, 500, 0, "two rings");
	one(5, 3000, 0, "five rings (CPython's threads)");
	one(7, 40, 0, "seven rings, an odd count");
	one(64, 200, 0, "64 rings, some empty");
	one(5, 300, 1, "a ring out of time order");
	one(3, 0, 0, "no records");
	return tap_done();
}

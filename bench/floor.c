/*
 * floor - the least a tracer can pay per event here: read the clock and
 * store a 36-byte record into a private ring (what ptt's trace path does,
 * without the checksum and the interposition).  Prints ns per event.
 * With "lfence", the clock is read the way ptt stamps an acquisition
 * (lfence; rdtsc), otherwise as it stamps a release or a request (rdtsc).
 *
 *   floor [EVENTS [lfence]]
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../capture/shm.h"

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 20000000;
	int fenced = argc > 2 && !strcmp(argv[2], "lfence");
	enum { WORDS = 1 << 18 };
	uint32_t *ring = calloc(WORDS, 4);
	if (!ring)
		return 1;
	struct timespec a, b;
	uint64_t pos = 0;
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (long i = 0; i < n; i++) {
		uint32_t *p = ring + (pos & (WORDS - 1));
		uint64_t ts = fenced ? ptt_rdtsc() : ptt_rdtsc_early();
		p[0] = ptt_rec_word0(18, 9); /* header words stored one by one, as the runtime does */
		p[1] = (uint32_t)ts;
		p[2] = (uint32_t)(ts >> 32);
		p[3] = 1;
		p[4] = 2;
		p[5] = (uint32_t)i;
		p[6] = 0;
		p[7] = 0;
		p[8] = 0;
		pos = (pos + 9) & (WORDS - 16);
		__asm__ __volatile__("" ::: "memory");
	}
	clock_gettime(CLOCK_MONOTONIC, &b);
	printf("%.2f\n", ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / (double)n);
	free(ring);
	return 0;
}

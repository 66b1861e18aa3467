/*
 * pace.h - how long ptt-record sleeps between two passes over the rings.
 */
#ifndef PTT_PACE_H
#define PTT_PACE_H

#include <stdint.h>

/* Below this many ring bytes a second (about 1 000 records) the program is quiet. */
#define PACE_QUIET 36000.0
/* A writer that fills this share of a ring in less than PACE_SLOW_NS is drained at that share, any other at half. */
#define PACE_FAST 0.3
#define PACE_SLOW_NS 400000.0
/* The peak rate falls to nothing in this much of the program's time after it was seen. */
#define PACE_HOLD_NS 2e8

struct pace {
	uint64_t upto;  /* the program's time covered by the passes so far (ns since the trace's start) */
	uint64_t bytes; /* the ring bytes written by the passes so far */
	double peak;    /* the fullest ring's bytes/s (pace_bytes'), the highest measured since ... */
	uint64_t peak_upto; /* ... the program's time it was measured at */
	uint64_t wall;  /* the last pass's start (CLOCK_MONOTONIC ns) */
};

/*
 * After a pass that began at wall_ns (CLOCK_MONOTONIC) and took pass_ns,
 * with bytes of program records written so far (as they lay in the rings;
 * each pass's fullest ring, summed) and every record up to upto_ns written
 * (drain_stats' pace_bytes and upto_ns): the nanoseconds to sleep before
 * the next one, 0 for at once.  ring_bytes: a ring's size; max_ns: the
 * longest sleep while records arrive.  Start from { 0 }.
 */
uint64_t pace_next(struct pace *p, uint64_t bytes, uint64_t upto_ns, uint64_t wall_ns, uint64_t ring_bytes,
		   uint64_t pass_ns, uint64_t max_ns);

#endif

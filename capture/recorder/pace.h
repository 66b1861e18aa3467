/*
 * pace.h - how long ptt-record sleeps between two passes over the rings.
 */
#ifndef PTT_PACE_H
#define PTT_PACE_H

#include <stdint.h>

struct pace {
	double rate;   /* the program's events/s, all rings: the recent peak */
	uint64_t upto; /* the program's time covered by the passes so far (ns since the trace's start) */
};

/*
 * After a pass that wrote events program records and left every record up
 * to upto_ns (drain_stats) written: the nanoseconds to sleep before the
 * next one, 0 for at once.  ring_events: a ring's size in records; max_ns:
 * the longest sleep while records arrive.  Start from { 0, 0 }.
 */
uint64_t pace_next(struct pace *p, long events, uint64_t upto_ns, uint64_t ring_events, uint64_t max_ns);

#endif

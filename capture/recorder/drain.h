/*
 * drain.h - the recorder's side of the rings: merge every thread's records
 * into one time-ordered stream and hand them to the trace writer.
 */
#ifndef PTT_DRAIN_H
#define PTT_DRAIN_H

#include <stdint.h>

#include "../../formats/ptt_trace.h"
#include "../shm.h"

struct drain_stats {
	uint64_t events;      /* records written */
	uint64_t lost;        /* events reported lost (discard mode, no ring, torn by a kill) */
	uint64_t waits;       /* times a writer waited for room */
	uint64_t late;        /* events after their thread's end, not recorded */
	uint64_t passes;
	uint64_t pace_bytes;  /* the pacing's measure: each pass's fullest ring's bytes, summed (merged: all
			       * rings'); no ring took more than this in any stretch of passes */
	uint64_t salvaged;    /* releases cut short by the process's death, completed */
	uint64_t upto_ns;     /* every program record up to this time (ns since the trace's start) is written */
	struct ptt_limits limits; /* the limit events written (the runtime's and the recorder's) */
};

struct drain;

struct drain *drain_new(struct ptt_shm *shm, struct ptt_writer *w, const struct ptt_clock *clk);
/* Stamp with clk from now on (the recorder measures the TSC's rate once the program runs). */
void drain_set_clock(struct drain *d, const struct ptt_clock *clk);
/*
 * One pass over the rings: write every record that can no longer be
 * preceded by a record still to come.  final: the program is gone; write
 * everything that checks out, torn records counted as lost.
 * Returns the program records written (not the recorder's own), or a negative error from the writer.
 */
long drain_pass(struct drain *d, int final);
/* Queue a recorder event (args as 32-bit words) stamped now. */
int drain_note(struct drain *d, unsigned id, const uint32_t *args, unsigned nargw); /* -1 if the queue is full */
const struct drain_stats *drain_stats(const struct drain *d);
/*
 * Called with a program record just before it is written (it may write
 * records of its own first): with every record of a user type, and of the
 * builtin ids that sees marks (NULL: with every record).  The others are
 * written in runs that the hook does not see.
 */
void drain_set_hook(struct drain *d, int (*before)(void *ctx, const uint32_t *rec, struct ptt_writer *w), void *ctx,
		    const uint8_t *sees);
/*
 * Called within a pass as well as after it, at the points where the space
 * read is given back to the rings (every few thousand records): every
 * record so far is with the writer, drain_stats counts it, and the hook has
 * seen it.  ptt-record -m starts its next file there, so that a busy
 * program's files end near their size rather than a whole pass past it.
 * A nonzero return ends the pass with that error.
 */
void drain_set_cut(struct drain *d, int (*cut)(void *ctx), void *ctx);
void drain_free(struct drain *d);
/*
 * A record cut short because its process died inside the call it records:
 * the releases (unlock, signal, post, cancel) write their object before the
 * call and only the result after, so such a record is complete but for its
 * result, taken as success (the process is gone: the release cannot be
 * undone), and its checksum.  Only those, only when the header is the ring
 * owner's (pid, tid) and the time is between the ring's previous record and
 * now.  1 when rec was completed.
 */
int drain_salvage(uint32_t *rec, uint32_t n, uint32_t pid, uint32_t tid, uint64_t prev_ts, uint64_t now);
uint64_t drain_now(const struct drain *d);
/*
 * on: the passes leave the rings' counts of lost events and waits unreported, and ended
 * threads' rings unfreed (their reports need the clock): for passes made with a clock
 * not yet measured.  off: as usual.
 */
void drain_hold_reports(struct drain *d, int on);
/*
 * Streams mode (format version 3, 4 with coded streams: the writer set with ptt_writer_set_streams):
 * a pass copies each ring's committed span to the writer as it lies, one
 * stream per ring, and writes a MARK; the readers merge.  No hook, no cut:
 * rotation and flight snapshots need the state in force, which only the
 * merge (drain_pass's default) keeps.
 */
void drain_set_streams(struct drain *d, int on);

#endif

/*
 * flight.h - ptt-record --flight: the rings keep each thread's most recent
 * records (the writers overwrite their oldest, see trace_path.c); the
 * recorder writes them out, merged by time, only when asked.
 */
#ifndef PTT_FLIGHT_H
#define PTT_FLIGHT_H

#include <stdint.h>

#include "../../formats/ptt_trace.h"
#include "../shm.h"

struct flight;

struct flight *flight_new(struct ptt_shm *shm);
/*
 * The rings of ended threads keep their history until a new thread needs
 * a ring: this gives back the oldest ones whenever fewer than a few rings
 * are free (new threads that find none add a segment, below the cap).
 * Call it as often as the recorder wakes up.
 */
void flight_trim(struct flight *f);
/*
 * Copy every ring's records (their writers may go on) and write them to w
 * in time order, after a META line per thread saying where its history
 * starts.  names: the names in force (formats/inforce.h), written first ("head N"
 * of them, stamped at the first record) but those still in a thread's
 * retained history, each told by a thread of the snapshot; may be NULL.  Just before each cut
 * thread's first record, the holds its retained records show in force there (ptt_inforce_infer_thread),
 * stamped with it.  live: the program runs on (a snapshot, which then ends where
 * every ring's copy is complete).  before: called with each record first (user types, the keeper), may
 * be NULL.  The number of records written (but the names), or a negative error of the
 * writer; *torn counts records found damaged (overwritten while copied).
 */
struct ptt_inforce;
long flight_write(struct flight *f, struct ptt_writer *w, const struct ptt_clock *clk, int live,
		  int (*before)(void *, const uint32_t *, struct ptt_writer *), void *ctx, struct ptt_inforce *names,
		  uint64_t *torn);
void flight_free(struct flight *f);

#endif

/*
 * keeper.h - what a reader needs at the head of a file that starts mid-run:
 * the records that begin and name processes, threads, modules and objects
 * (process_begin, process_exec, module, module_build_id, thread_begin,
 * thread_name, object_name), kept while the recorder writes them and told again at the
 * head of each rotated file (-m) and of each flight snapshot, so that any
 * one file decodes with its names.
 * With them, for a rotated file, the state in force as ptt-filter's windows
 * tell it: the records that opened each live thread's holds and waits still
 * open (an acquisition that took, a request not yet answered, a cond wait's
 * outcome, which holds its mutex again), paired with what closes them by
 * their role only (a release, an outcome, a semaphore's post, the thread's
 * end, a loss of its events); the model (convert/model.h) interprets them
 * when a reader of the file alone reads them.  A flight snapshot has none:
 * the recorder never sees what its rings overwrote.
 * Memory: one record per live process, thread, module and named object,
 * and per frame in force (at most KEEPER_FRAMES_MAX a thread).
 */
#ifndef PTT_KEEPER_H
#define PTT_KEEPER_H

#include <stdint.h>

#include "../../formats/ptt_trace.h"

struct keeper;
/* Which builtin ids the keeper takes (set by keeper_new): the one test on every record's way. */
extern uint8_t keeper_takes[PTT_EV_BUILTIN_COUNT];

struct keeper *keeper_new(void);
void keeper_take(struct keeper *k, const uint32_t *rec);
/* Look at a record about to be written: a table look-up for all but the namings and the lock records. */
static inline void keeper_see(struct keeper *k, const uint32_t *rec)
{
	unsigned id = ptt_rec_id(rec[0]);
	if (__builtin_expect(id < PTT_EV_BUILTIN_COUNT && keeper_takes[id], 0))
		keeper_take(k, rec);
}
/*
 * Write every kept record to w, stamped at ticks: the namings oldest first,
 * each told by the thread teller names for the kept record rec: tid itself while it
 * lives, else another live thread of pid, else 0 (the record is left out).  A thread's beginning and
 * name are told only by that thread, while it lives.  teller NULL: the
 * keeper's own account (threads begun and not ended).  Then the frames in
 * force, in the order they opened, each told by its own thread.  Returns the records
 * written (w NULL: that would be), or a negative error of the writer.
 */
long keeper_write(struct keeper *k, struct ptt_writer *w, uint64_t ticks,
		  uint32_t (*teller)(void *ctx, const uint32_t *rec, uint32_t pid, uint32_t tid), void *ctx);
/* The records kept, names and frames (what keeper_write writes at most). */
size_t keeper_count(const struct keeper *k);
/*
 * Take the records of the flight mode's names log in s (shm.h).  Returns the
 * naming records the log could not give (no room, or still being written).
 */
struct ptt_shm;
uint64_t keeper_from_log(struct keeper *k, const struct ptt_shm *s);
void keeper_free(struct keeper *k);

#endif

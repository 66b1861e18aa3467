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
 * end, a loss of its events); the model (convert/lib/model.h) interprets them
 * when a reader of the file alone reads them.  A flight snapshot cannot
 * have them: the recorder never sees what its rings overwrote.  What its
 * retained records show of it is told instead (keeper_infer_thread).
 * Memory: one record per live process, thread, module and named object,
 * and per frame in force (at most PTT_FRAMES_MAX a thread, ptt_trace.h: past it the oldest is
 * forgotten and the next head says so in a limit event, table PTT_LIMIT_FRAMES).
 */
#ifndef PTT_KEEPER_H
#define PTT_KEEPER_H

#include <stdint.h>

#include "../../formats/ptt_trace.h"

struct keeper;
/* Which builtin ids the keeper takes (set by keeper_new): the one test on every record's way. */
extern uint8_t keeper_takes[PTT_EV_BUILTIN_COUNT];
/* Threads whose stack record waits for their next event (keeper_see looks at every record then). */
extern uint32_t keeper_npending;

struct keeper *keeper_new(void);
void keeper_take(struct keeper *k, const uint32_t *rec);
/* A record the keeper does not take: its thread's stack, if one waits, was for it. */
void keeper_unpend(struct keeper *k, const uint32_t *rec);
/* Look at a record about to be written: a table look-up for all but the namings and the lock records. */
static inline void keeper_see(struct keeper *k, const uint32_t *rec)
{
	unsigned id = ptt_rec_id(rec[0]);
	if (__builtin_expect(id < PTT_EV_BUILTIN_COUNT && keeper_takes[id], 0))
		keeper_take(k, rec);
	else if (__builtin_expect(keeper_npending != 0, 0))
		keeper_unpend(k, rec);
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
/*
 * The holds in force where a flight recording's cut thread begins (its
 * older records overwritten), as its retained records show them: a keeper
 * told of every cut thread (keeper_infer_thread: its pid, tid and first
 * record's ticks), then given every retained record of every thread in time
 * order (keeper_see), finds each release by a cut thread of an object it had
 * not taken since its start (an unlock, a rwlock_unlock, a cond wait's
 * request giving its mutex up, a semaphore's post), paired by role as the
 * frames above are.  Such an object was held since before its start (each
 * release one hold: a recursive lock held twice is released twice), unless
 * another thread took it exclusively meanwhile.  An rwlock's hold is read
 * when another thread took it for reading meanwhile or when the thread's own
 * later acquisitions of it are all reads, write when they are all writes,
 * else not told; a semaphore's post by a thread that took no unit is a hold
 * only where the records show the semaphore used as a lock (a thread posts
 * what it took) and never as a signal (a post for another thread that took
 * one): a post before any wait is no hold otherwise.  A lock held through
 * the whole retained history, without a release in it, is not seen.
 * keeper_infer_write calls tell with each hold found, thread by thread, the
 * holds of a thread in the reverse order of their releases (nested locks are
 * released last taken first): the acquisition of its class the readers know
 * (mutex_lock, rwlock_rdlock or rwlock_wrlock, sem_wait, spin_lock) with ret
 * 0 and no site, by that thread, stamped with its first record's ticks.
 * Returns the records told, or tell's first non-zero result (negative), or
 * PTT_E_NOMEM.
 */
int keeper_infer_thread(struct keeper *k, uint32_t pid, uint32_t tid, uint64_t first);
long keeper_infer_write(struct keeper *k, int (*tell)(void *ctx, const uint32_t *rec, uint32_t n), void *ctx);
/* The records kept, names and frames (what keeper_write writes at most). */
size_t keeper_count(const struct keeper *k);
/*
 * Take the records of one of the flight mode's logs (shm.h: the names, the
 * stacks), words[0, cap).  Returns the records the log could not give (no
 * room, or still being written).
 */
struct ptt_shm_log;
uint64_t keeper_from_log(struct keeper *k, const struct ptt_shm_log *log, const uint32_t *words, uint32_t cap);
void keeper_free(struct keeper *k);

#endif

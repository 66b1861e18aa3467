/*
 * inforce.h - the records in force at a point of a trace: what a reader
 * needs to read the rest of it alone (a rotated file's head, a flight
 * snapshot's head, a ptt-filter window's start, a ptt-index snapshot).  The
 * one statement of which records those are, for the recorder and the
 * readers alike:
 *  - the namings: the records that begin and name processes, threads,
 *    modules, objects and shared mappings (process_begin, process_exec,
 *    module, module_build_id, map_shared, thread_begin, thread_name,
 *    object_name), and what a stack needs to be read (stack_frames,
 *    py_runtime, py_code); a newer one about the same thing (a thread's
 *    name, an object's, a module at the same base) replaces the older; a
 *    process's begin or exit forgets its records, a thread's end its own;
 *  - the frames: the records that opened each live thread's holds, waits
 *    and tracer stalls still open (an acquisition that took, a request not
 *    yet answered, a cond wait's outcome, which holds its mutex again, a
 *    tracer_stall), each with the stack record that went before it (a hold
 *    taken after a wait: the wait's; pairing: ptt_stack_pairing), paired
 *    with what closes them by their role only (a release, an outcome, a
 *    semaphore's post, a tracer_stall_end, the thread's end, a loss of its
 *    events); a semaphore posted for another thread is a signal from then
 *    on, whose units open no frame.  The model (convert/lib/model.h)
 *    interprets them when it reads them back;
 *  - the stack records read whose events come later (a point between the
 *    two), and a limit event (PTT_LIMIT_FRAMES) for the frames forgotten,
 *    the oldest of a thread past PTT_FRAMES_MAX (a limit record of that
 *    table read counts as forgotten again).
 * A flight snapshot cannot know the frames: the recorder never sees what
 * its rings overwrote.  What its retained records show of it is inferred
 * instead (ptt_inforce_infer_thread).
 * Memory: one record per live process, thread, module and named object,
 * and per frame in force (at most PTT_FRAMES_MAX a thread).
 */
#ifndef PTT_INFORCE_H
#define PTT_INFORCE_H

#include <stddef.h>
#include <stdint.h>

#include "ptt_trace.h"

struct ptt_inforce;
/* The part ptt_inforce_see reads on every record's way (the first member of struct ptt_inforce). */
struct ptt_inforce_fast {
	uint32_t npending;                    /* threads whose stack record waits for their next event */
	uint8_t takes[PTT_EV_BUILTIN_COUNT];  /* the builtin ids it takes */
};

struct ptt_inforce *ptt_inforce_new(void);
/* Take a sound record (ptt_rec_sound) that ptt_inforce_takes; pos: the caller's position of it, told back. */
void ptt_inforce_take(struct ptt_inforce *k, const uint32_t *rec, uint64_t pos);
/* The same, for a record of type ty (a text trace's layout may differ from the builtin's; NULL: the builtin's). */
void ptt_inforce_take_as(struct ptt_inforce *k, const uint32_t *rec, uint64_t pos, const struct ptt_type *ty);
/* A record it does not take: its thread's stack, if one waits, was for it (or not: ptt_stack_pairing). */
void ptt_inforce_unpend(struct ptt_inforce *k, const uint32_t *rec);
static inline int ptt_inforce_takes(const struct ptt_inforce *k, unsigned id)
{
	return id < PTT_EV_BUILTIN_COUNT && ((const struct ptt_inforce_fast *)(const void *)k)->takes[id];
}
/* Look at every record of the trace in its order: a table look-up for all but the ones it takes. */
static inline void ptt_inforce_see(struct ptt_inforce *k, const uint32_t *rec, uint64_t pos)
{
	const struct ptt_inforce_fast *f = (const struct ptt_inforce_fast *)(const void *)k;
	unsigned id = ptt_rec_id(rec[0]);
	if (__builtin_expect(id < PTT_EV_BUILTIN_COUNT && f->takes[id], 0))
		ptt_inforce_take(k, rec, pos);
	else if (__builtin_expect(f->npending != 0, 0))
		ptt_inforce_unpend(k, rec);
}
/* What a record told is. */
enum { PTT_INFORCE_NAME = 1, PTT_INFORCE_FRAME, PTT_INFORCE_STACK, PTT_INFORCE_PENDING, PTT_INFORCE_LIMIT };
struct ptt_inforce_rec {
	unsigned kind;         /* PTT_INFORCE_*: STACK goes just before its FRAME, PENDING: a stack whose event is to come */
	const uint32_t *words; /* the record as read (a STACK, PENDING or LIMIT: made, stamped as its frame, or as the latest told) */
	uint32_t n;
	uint64_t pos;          /* as taken (a STACK: its frame's; PENDING, LIMIT: 0) */
	uint32_t about;        /* a thread_begin's or thread_name's thread (told by it alone), else 0 */
};
/*
 * Call fn with every record in force: the namings and the frames in the
 * order they arrived, each frame after its stack record; then the pending
 * stacks, then the limit event if frames were forgotten (all so far: every
 * point told lacks them, the same count at a rotated head, a window's start
 * and a snapshot).  Returns the records told, or fn's first non-zero
 * result, or PTT_E_NOMEM.
 */
long ptt_inforce_foreach(struct ptt_inforce *k, int (*fn)(void *ctx, const struct ptt_inforce_rec *r), void *ctx);
/* Frames forgotten (or read as forgotten in a limit record) so far. */
uint64_t ptt_inforce_forgotten(const struct ptt_inforce *k);
/*
 * Write every record in force to w (ptt_inforce_foreach), stamped at ticks, each naming told by the thread
 * teller names for the kept record rec: tid itself while it lives, else
 * another live thread of pid, else 0 (the record is left out).  A thread's
 * beginning and name are told only by that thread, while it lives.  teller
 * NULL: its own account (threads begun and not ended).  The rest each by
 * its own thread.  Returns the records written (w NULL: that would be), or
 * a negative error of the writer.
 */
struct ptt_writer;
long ptt_inforce_write(struct ptt_inforce *k, struct ptt_writer *w, uint64_t ticks,
		       uint32_t (*teller)(void *ctx, const uint32_t *rec, uint32_t pid, uint32_t tid), void *ctx);
/* The same records, by its own account (teller NULL), each handed to put (a snapshot's: ptt-record's
 * keeper writes a part's head at its end); put's first non-zero result stops it and is returned. */
long ptt_inforce_tell(struct ptt_inforce *k, uint64_t ticks, int (*put)(void *ctx, const uint32_t *rec, uint32_t n),
		      void *ctx);
/*
 * The holds in force where a flight recording's cut thread begins (its
 * older records overwritten), as its retained records show them: an inforce
 * told of every cut thread (ptt_inforce_infer_thread: its pid, tid and first
 * record's ticks), then given every retained record of every thread in time
 * order (ptt_inforce_see), finds each release by a cut thread of an object it had
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
 * ptt_inforce_infer_write calls tell with each hold found, thread by thread, the
 * holds of a thread in the reverse order of their releases (nested locks are
 * released last taken first): the acquisition of its class the readers know
 * (mutex_lock, rwlock_rdlock or rwlock_wrlock, sem_wait, spin_lock) with ret
 * 0 and no site, by that thread, stamped with its first record's ticks.
 * Returns the records told, or tell's first non-zero result (negative), or
 * PTT_E_NOMEM.
 */
int ptt_inforce_infer_thread(struct ptt_inforce *k, uint32_t pid, uint32_t tid, uint64_t first);
long ptt_inforce_infer_write(struct ptt_inforce *k, int (*tell)(void *ctx, const uint32_t *rec, uint32_t n), void *ctx);
/* The records kept, names and frames (what ptt_inforce_write writes at most, with the stacks and limit). */
size_t ptt_inforce_count(const struct ptt_inforce *k);
void ptt_inforce_free(struct ptt_inforce *k);

#endif

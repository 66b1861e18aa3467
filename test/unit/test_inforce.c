/*
 * test_inforce.c - the holds and waits in force (formats/inforce.c) that a rotated
 * file's head, a window's start and a snapshot tell again, on made-up records: which
 * stay in force after each kind of record, counted by ptt_inforce_count (the records a head would hold);
 * and the holds it finds in force where a flight recording's cut thread begins.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../formats/ptt_trace.h"
#include "tap.h"

#define PID 10

static uint32_t now = 1000; /* the ticks of the next record */

/* A record of builtin type id by tid with the given argument words (64-bit ones low word first). */
static void feed(struct ptt_inforce *k, unsigned id, uint32_t tid, const uint32_t *args, unsigned nargs)
{
	uint32_t r[PTT_REC_MAX_WORDS] = { 0 };
	unsigned n = PTT_REC_HDR_WORDS + ptt_builtin_type(id)->words + 1;
	r[0] = ptt_rec_word0(id, n);
	r[1] = now++;
	r[3] = PID;
	r[4] = tid;
	memcpy(r + PTT_REC_HDR_WORDS, args, nargs * 4);
	r[n - 1] = ptt_rec_checksum(r, n - 1);
	ptt_inforce_see(k, r, 0);
}

/* ptr, ret, site (mutex_lock, mutex_unlock, sem_wait, sem_post, ...) */
static void obj_ret(struct ptt_inforce *k, unsigned id, uint32_t tid, uint32_t obj, int32_t ret)
{
	uint32_t a[5] = { obj, 0, (uint32_t)ret, 0, 0 };
	feed(k, id, tid, a, 5);
}

static void req(struct ptt_inforce *k, unsigned id, uint32_t tid, uint32_t obj)
{
	uint32_t a[4] = { obj, 0, 0, 0 };
	feed(k, id, tid, a, 4);
}

static void cond(struct ptt_inforce *k, unsigned id, uint32_t tid, uint32_t cv, uint32_t mutex)
{
	uint32_t a[7] = { cv, 0, mutex, 0, 0, 0, 0 }; /* cond_wait: cond, mutex, ret 0, site */
	feed(k, id, tid, a, 7);
}

static uint32_t told[16][PTT_REC_MAX_WORDS];
static unsigned ntold;

static int tell(void *ctx, const uint32_t *rec, uint32_t n)
{
	(void)ctx;
	if (ntold < 16)
		memcpy(told[ntold], rec, n * 4);
	ntold++;
	return 0;
}

/* told[i] is the acquisition id of obj by tid, stamped at ticks, ret 0, checksummed */
static int told_is(unsigned i, unsigned id, uint32_t tid, uint32_t obj, uint32_t ticks)
{
	const uint32_t *r = told[i];
	uint32_t n = ptt_rec_len(r[0]);
	return i < ntold && ptt_rec_id(r[0]) == id && n == PTT_REC_HDR_WORDS + (uint32_t)ptt_builtin_type(id)->words + 1u &&
	       r[1] == ticks && r[2] == 0 && r[3] == PID && r[4] == tid && r[5] == obj && r[6] == 0 && r[7] == 0 &&
	       ptt_rec_checksum(r, n - 1) == r[n - 1];
}

/* A flight recording: thread 21's history is cut (it begins at 5000), the others' are whole. */
static void held_at_start(void)
{
	struct ptt_inforce *k = ptt_inforce_new();
	ok(ptt_inforce_infer_thread(k, PID, 21, 5000) == 0, "a cut thread is told to the keeper");
	now = 5000;
	obj_ret(k, PTT_EV_MUTEX_LOCK, 21, 0x60, 0);
	obj_ret(k, PTT_EV_MUTEX_UNLOCK, 21, 0x60, 0);      /* taken and released since: nothing */
	req(k, PTT_EV_MUTEX_LOCK_REQ, 21, 0x68);           /* asked for, taken, released: nothing */
	obj_ret(k, PTT_EV_MUTEX_LOCK, 21, 0x68, 0);
	obj_ret(k, PTT_EV_MUTEX_UNLOCK, 21, 0x68, 0);
	obj_ret(k, PTT_EV_MUTEX_UNLOCK, 21, 0x10, 0);      /* held at the start */
	obj_ret(k, PTT_EV_MUTEX_UNLOCK, 22, 0x20, 0);      /* a whole thread: nothing */
	obj_ret(k, PTT_EV_MUTEX_UNLOCK, 21, 0x18, EPERM);  /* refused: nothing */
	obj_ret(k, PTT_EV_MUTEX_UNLOCK, 21, 0x30, 0);      /* a recursive lock held twice */
	obj_ret(k, PTT_EV_MUTEX_UNLOCK, 21, 0x30, 0);
	cond(k, PTT_EV_COND_WAIT_REQ, 21, 0x40, 0x50);     /* the wait gives up a mutex held at the start */
	cond(k, PTT_EV_COND_WAIT, 21, 0x40, 0x50);         /* ... and takes it again */
	obj_ret(k, PTT_EV_MUTEX_UNLOCK, 21, 0x50, 0);      /* that hold: nothing */
	obj_ret(k, PTT_EV_RWLOCK_UNLOCK, 21, 0x70, 0);     /* read: its later acquisitions are reads */
	obj_ret(k, PTT_EV_RWLOCK_RDLOCK, 21, 0x70, 0);
	obj_ret(k, PTT_EV_RWLOCK_UNLOCK, 21, 0x70, 0);
	obj_ret(k, PTT_EV_RWLOCK_UNLOCK, 21, 0x78, 0);     /* read or write: not known */
	obj_ret(k, PTT_EV_RWLOCK_RDLOCK, 22, 0x80, 0);     /* another reader meanwhile: a read hold */
	obj_ret(k, PTT_EV_RWLOCK_UNLOCK, 21, 0x80, 0);
	obj_ret(k, PTT_EV_RWLOCK_UNLOCK, 21, 0x88, 0);     /* write: its later acquisitions are writes */
	obj_ret(k, PTT_EV_RWLOCK_WRLOCK, 21, 0x88, 0);
	obj_ret(k, PTT_EV_MUTEX_LOCK, 22, 0x90, 0);        /* another thread took it meanwhile: not held */
	obj_ret(k, PTT_EV_MUTEX_UNLOCK, 22, 0x90, 0);
	obj_ret(k, PTT_EV_MUTEX_UNLOCK, 21, 0x90, 0);
	obj_ret(k, PTT_EV_SEM_POST, 21, 0xa0, 0);          /* a post before any wait, never used as a lock */
	obj_ret(k, PTT_EV_SEM_WAIT, 22, 0xb0, 0);          /* used as a lock: its taker posts it */
	obj_ret(k, PTT_EV_SEM_POST, 22, 0xb0, 0);
	obj_ret(k, PTT_EV_SEM_POST, 21, 0xb0, 0);          /* a unit held at the start */
	obj_ret(k, PTT_EV_SEM_WAIT, 24, 0xd0, 0);          /* used as a lock, */
	obj_ret(k, PTT_EV_SEM_POST, 24, 0xd0, 0);
	obj_ret(k, PTT_EV_SEM_POST, 21, 0xd0, 0);
	obj_ret(k, PTT_EV_SEM_WAIT, 23, 0xd0, 0);
	obj_ret(k, PTT_EV_SEM_POST, 22, 0xd0, 0);          /* and as a signal: no hold */
	obj_ret(k, PTT_EV_SEM_WAIT, 22, 0xc0, 0);
	obj_ret(k, PTT_EV_SEM_POST, 21, 0xc0, 0);          /* a post for another thread: a signal */
	obj_ret(k, PTT_EV_SEM_WAIT, 21, 0xc0, 0);
	obj_ret(k, PTT_EV_SEM_POST, 21, 0xc0, 0);
	ntold = 0;
	ok(ptt_inforce_infer_write(k, tell, NULL) == 8 && ntold == 8, "8 holds found in force at the start (%u)", ntold);
	/* the reverse of the releases: 0xb0, 0x88, 0x80, 0x70, 0x50, 0x30 twice, 0x10 */
	ok(told_is(0, PTT_EV_SEM_WAIT, 21, 0xb0, 5000), "a unit of a semaphore used as a lock, by its post before any wait");
	ok(told_is(1, PTT_EV_RWLOCK_WRLOCK, 21, 0x88, 5000), "a write hold, as its later takings");
	ok(told_is(2, PTT_EV_RWLOCK_RDLOCK, 21, 0x80, 5000), "a read hold, shared meanwhile with another reader");
	ok(told_is(3, PTT_EV_RWLOCK_RDLOCK, 21, 0x70, 5000), "a read hold, as its later takings");
	ok(told_is(4, PTT_EV_MUTEX_LOCK, 21, 0x50, 5000), "the mutex a cond wait gave up");
	ok(told_is(5, PTT_EV_MUTEX_LOCK, 21, 0x30, 5000) && told_is(6, PTT_EV_MUTEX_LOCK, 21, 0x30, 5000),
	   "a recursive lock, twice");
	ok(told_is(7, PTT_EV_MUTEX_LOCK, 21, 0x10, 5000), "a mutex released first, taken last");
	ok(ptt_inforce_count(k) > 0 && ptt_inforce_write(k, NULL, 0, NULL, NULL) >= 0, "the keeper goes on as before");
	ptt_inforce_free(k);

	k = ptt_inforce_new();
	obj_ret(k, PTT_EV_MUTEX_UNLOCK, 21, 0x10, 0);
	ntold = 0;
	ok(ptt_inforce_infer_write(k, tell, NULL) == 0 && ntold == 0, "no cut thread: nothing found");
	ptt_inforce_free(k);
}

/* A thread holding PTT_FRAMES_MAX + 6 locks: the oldest 6 are forgotten, and the head says so in a limit event. */
static void past_the_cap(void)
{
	struct ptt_inforce *k = ptt_inforce_new();
	for (uint32_t i = 0; i < PTT_FRAMES_MAX + 6; i++)
		obj_ret(k, PTT_EV_MUTEX_LOCK, 31, 0x1000 + 64 * i, 0);
	ok(ptt_inforce_count(k) == PTT_FRAMES_MAX, "a thread keeps PTT_FRAMES_MAX frames in force");
	ok(ptt_inforce_write(k, NULL, 0, NULL, NULL) == PTT_FRAMES_MAX + 1, "the head would tell them and one limit event");
	char path[] = "/tmp/ptt-keeper-XXXXXX";
	int fd = mkstemp(path);
	unlink(path);
	struct ptt_writer *w = NULL;
	const char *meta = "clock ns\nclock_hz 1000000000\nstart_ticks 0\n";
	int rc = fd < 0 || ptt_writer_open(&w, fd, 0) != 0 || ptt_writer_meta(w, meta, strlen(meta)) != 0;
	long n = rc ? -1 : ptt_inforce_write(k, w, 9000, NULL, NULL);
	ok(ptt_writer_close(w) == 0 && n == PTT_FRAMES_MAX + 1, "the head is written: %ld records", n);
	ok(ptt_inforce_write(k, NULL, 0, NULL, NULL) == PTT_FRAMES_MAX + 1,
	   "the next head says them again (all forgotten so far, as a window's start and a snapshot do)");
	struct ptt_limits lim = { 0 };
	struct ptt_reader *r = NULL;
	struct ptt_event *ev = malloc(sizeof *ev);
	unsigned locks = 0, first = 0;
	if (ev && lseek(fd, 0, SEEK_SET) == 0 && ptt_reader_open(&r, fd, "head") == 0)
		while (ptt_reader_next(r, ev) > 0) {
			ptt_limits_add(&lim, ev);
			if (ev->id == PTT_EV_MUTEX_LOCK && locks++ == 0)
				first = (uint32_t)ev->arg[0];
		}
	ptt_reader_close(r);
	free(ev);
	close(fd);
	ok(locks == PTT_FRAMES_MAX && first == 0x1000 + 64 * 6, "the head holds the newest %u locks (first 0x%x)", locks, first);
	ok(lim.count[PTT_LIMIT_FRAMES] == 6 && lim.limit[PTT_LIMIT_FRAMES] == PTT_FRAMES_MAX,
	   "its limit event counts the 6 forgotten, at %u", PTT_FRAMES_MAX);
	ptt_inforce_free(k);
}

int main(void)
{
	past_the_cap();
	struct ptt_inforce *k = ptt_inforce_new();
	ok(k && ptt_inforce_count(k) == 0, "a new keeper keeps nothing");

	obj_ret(k, PTT_EV_MUTEX_LOCK, 11, 0x10, 0);
	ok(ptt_inforce_count(k) == 1, "a lock taken is in force");
	obj_ret(k, PTT_EV_MUTEX_TRYLOCK, 11, 0x18, EBUSY);
	ok(ptt_inforce_count(k) == 1, "a failed trylock takes nothing");
	obj_ret(k, PTT_EV_MUTEX_UNLOCK, 12, 0x10, 0);
	ok(ptt_inforce_count(k) == 1, "another thread's unlock ends no hold of this one");
	obj_ret(k, PTT_EV_MUTEX_UNLOCK, 11, 0x10, EPERM);
	ok(ptt_inforce_count(k) == 1, "a refused unlock ends nothing");
	obj_ret(k, PTT_EV_MUTEX_LOCK, 11, 0x10, 0);
	obj_ret(k, PTT_EV_MUTEX_UNLOCK, 11, 0x10, 0);
	ok(ptt_inforce_count(k) == 1, "a recursive lock: one unlock leaves one hold");
	obj_ret(k, PTT_EV_MUTEX_UNLOCK, 11, 0x10, 0);
	ok(ptt_inforce_count(k) == 0, "the second unlock ends it");

	obj_ret(k, PTT_EV_MUTEX_LOCK, 11, 0x10, 0);
	cond(k, PTT_EV_COND_WAIT_REQ, 11, 0x20, 0x10);
	ok(ptt_inforce_count(k) == 1, "a cond wait gives its mutex up: only the wait is in force");
	cond(k, PTT_EV_COND_WAIT, 11, 0x20, 0x10);
	ok(ptt_inforce_count(k) == 1, "its outcome ends the wait and holds the mutex again");
	obj_ret(k, PTT_EV_MUTEX_UNLOCK, 11, 0x10, 0);
	ok(ptt_inforce_count(k) == 0, "the unlock after the wait ends that hold");

	req(k, PTT_EV_MUTEX_LOCK_REQ, 12, 0x10);
	req(k, PTT_EV_MUTEX_LOCK_REQ, 12, 0x28);
	ok(ptt_inforce_count(k) == 1, "a request after a request: the earlier call returned unseen");
	obj_ret(k, PTT_EV_MUTEX_LOCK, 12, 0x28, 0);
	ok(ptt_inforce_count(k) == 1, "the outcome ends the wait and holds");

	uint32_t lost[7] = { 12, 3, 0, 0, 0, 0, 0 };
	feed(k, PTT_EV_REC_LOST, 99, lost, 7);
	ok(ptt_inforce_count(k) == 0, "a loss of the thread's events forgets its frames");

	obj_ret(k, PTT_EV_MUTEX_LOCK, 13, 0x10, 0);
	feed(k, PTT_EV_THREAD_END, 13, lost, 3);
	ok(ptt_inforce_count(k) == 0, "a thread's end ends its frames");

	/* semaphores: used as a lock (the taker posts it) or as a signal (another thread posts) */
	obj_ret(k, PTT_EV_SEM_WAIT, 14, 0x40, 0);
	ok(ptt_inforce_count(k) == 1, "a semaphore unit taken is told (the model decides if it is a hold)");
	obj_ret(k, PTT_EV_SEM_WAIT, 14, 0x40, 0);
	ok(ptt_inforce_count(k) == 1, "taken twice by one thread: told once");
	obj_ret(k, PTT_EV_SEM_POST, 14, 0x40, 0);
	ok(ptt_inforce_count(k) == 0, "the taker's post gives it back");
	obj_ret(k, PTT_EV_SEM_WAIT, 15, 0x48, 0);
	obj_ret(k, PTT_EV_SEM_POST, 16, 0x48, 0);
	ok(ptt_inforce_count(k) == 0, "a post for another thread ends its unit: a signal");
	obj_ret(k, PTT_EV_SEM_WAIT, 15, 0x48, 0);
	ok(ptt_inforce_count(k) == 0, "a signal's units are no holds: none told from then on");
	obj_ret(k, PTT_EV_SEM_WAIT, 15, 0x40, -1);
	ok(ptt_inforce_count(k) == 0, "a failed semaphore wait takes nothing");

	obj_ret(k, PTT_EV_MUTEX_LOCK, 17, 0x10, 0);
	req(k, PTT_EV_MUTEX_LOCK_REQ, 18, 0x10);
	uint32_t exit_args[1] = { 0 };
	feed(k, PTT_EV_PROCESS_EXIT, 17, exit_args, 1);
	ok(ptt_inforce_count(k) == 0, "the process's exit ends every frame of its threads");
	ok(ptt_inforce_write(k, NULL, 0, NULL, NULL) == 0, "and nothing is written");

	obj_ret(k, PTT_EV_MUTEX_LOCK, 19, 0x10, 0);
	ok(ptt_inforce_write(k, NULL, 0, NULL, NULL) == 1, "ptt_inforce_write counts the frames it would write");
	req(k, PTT_EV_MUTEX_LOCK_REQ, 19, 0x10);
	ok(ptt_inforce_count(k) == 2, "asking for a mutex it holds (a self-deadlock) gives up nothing");
	ptt_inforce_free(k);
	held_at_start();
	return tap_done();
}

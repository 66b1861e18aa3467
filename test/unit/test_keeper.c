/*
 * test_keeper.c - the holds and waits the recorder's keeper (capture/recorder/keeper.c)
 * tells again at the head of a rotated file, on made-up records: which stay in force
 * after each kind of record, counted by keeper_count (the records a head would hold).
 */
#include <errno.h>
#include <string.h>

#include "../../capture/recorder/keeper.h"
#include "tap.h"

#define PID 10

/* A record of builtin type id by tid with the given argument words (64-bit ones low word first). */
static void feed(struct keeper *k, unsigned id, uint32_t tid, const uint32_t *args, unsigned nargs)
{
	uint32_t r[PTT_REC_MAX_WORDS] = { 0 };
	unsigned n = PTT_REC_HDR_WORDS + ptt_builtin_type(id)->words + 1;
	r[0] = ptt_rec_word0(id, n);
	r[1] = 1000;
	r[3] = PID;
	r[4] = tid;
	memcpy(r + PTT_REC_HDR_WORDS, args, nargs * 4);
	r[n - 1] = ptt_rec_checksum(r, n - 1);
	keeper_see(k, r);
}

/* ptr, ret, site (mutex_lock, mutex_unlock, sem_wait, sem_post, ...) */
static void obj_ret(struct keeper *k, unsigned id, uint32_t tid, uint32_t obj, int32_t ret)
{
	uint32_t a[5] = { obj, 0, (uint32_t)ret, 0, 0 };
	feed(k, id, tid, a, 5);
}

static void req(struct keeper *k, unsigned id, uint32_t tid, uint32_t obj)
{
	uint32_t a[4] = { obj, 0, 0, 0 };
	feed(k, id, tid, a, 4);
}

static void cond(struct keeper *k, unsigned id, uint32_t tid, uint32_t cv, uint32_t mutex)
{
	uint32_t a[7] = { cv, 0, mutex, 0, 0, 0, 0 }; /* cond_wait: cond, mutex, ret 0, site */
	feed(k, id, tid, a, 7);
}

int main(void)
{
	struct keeper *k = keeper_new();
	ok(k && keeper_count(k) == 0, "a new keeper keeps nothing");

	obj_ret(k, PTT_EV_MUTEX_LOCK, 11, 0x10, 0);
	ok(keeper_count(k) == 1, "a lock taken is in force");
	obj_ret(k, PTT_EV_MUTEX_TRYLOCK, 11, 0x18, EBUSY);
	ok(keeper_count(k) == 1, "a failed trylock takes nothing");
	obj_ret(k, PTT_EV_MUTEX_UNLOCK, 12, 0x10, 0);
	ok(keeper_count(k) == 1, "another thread's unlock ends no hold of this one");
	obj_ret(k, PTT_EV_MUTEX_UNLOCK, 11, 0x10, EPERM);
	ok(keeper_count(k) == 1, "a refused unlock ends nothing");
	obj_ret(k, PTT_EV_MUTEX_LOCK, 11, 0x10, 0);
	obj_ret(k, PTT_EV_MUTEX_UNLOCK, 11, 0x10, 0);
	ok(keeper_count(k) == 1, "a recursive lock: one unlock leaves one hold");
	obj_ret(k, PTT_EV_MUTEX_UNLOCK, 11, 0x10, 0);
	ok(keeper_count(k) == 0, "the second unlock ends it");

	obj_ret(k, PTT_EV_MUTEX_LOCK, 11, 0x10, 0);
	cond(k, PTT_EV_COND_WAIT_REQ, 11, 0x20, 0x10);
	ok(keeper_count(k) == 1, "a cond wait gives its mutex up: only the wait is in force");
	cond(k, PTT_EV_COND_WAIT, 11, 0x20, 0x10);
	ok(keeper_count(k) == 1, "its outcome ends the wait and holds the mutex again");
	obj_ret(k, PTT_EV_MUTEX_UNLOCK, 11, 0x10, 0);
	ok(keeper_count(k) == 0, "the unlock after the wait ends that hold");

	req(k, PTT_EV_MUTEX_LOCK_REQ, 12, 0x10);
	req(k, PTT_EV_MUTEX_LOCK_REQ, 12, 0x28);
	ok(keeper_count(k) == 1, "a request after a request: the earlier call returned unseen");
	obj_ret(k, PTT_EV_MUTEX_LOCK, 12, 0x28, 0);
	ok(keeper_count(k) == 1, "the outcome ends the wait and holds");

	uint32_t lost[7] = { 12, 3, 0, 0, 0, 0, 0 };
	feed(k, PTT_EV_REC_LOST, 99, lost, 7);
	ok(keeper_count(k) == 0, "a loss of the thread's events forgets its frames");

	obj_ret(k, PTT_EV_MUTEX_LOCK, 13, 0x10, 0);
	feed(k, PTT_EV_THREAD_END, 13, lost, 3);
	ok(keeper_count(k) == 0, "a thread's end ends its frames");

	/* semaphores: used as a lock (the taker posts it) or as a signal (another thread posts) */
	obj_ret(k, PTT_EV_SEM_WAIT, 14, 0x40, 0);
	ok(keeper_count(k) == 1, "a semaphore unit taken is told (the model decides if it is a hold)");
	obj_ret(k, PTT_EV_SEM_WAIT, 14, 0x40, 0);
	ok(keeper_count(k) == 1, "taken twice by one thread: told once");
	obj_ret(k, PTT_EV_SEM_POST, 14, 0x40, 0);
	ok(keeper_count(k) == 0, "the taker's post gives it back");
	obj_ret(k, PTT_EV_SEM_WAIT, 15, 0x48, 0);
	obj_ret(k, PTT_EV_SEM_POST, 16, 0x48, 0);
	ok(keeper_count(k) == 0, "a post for another thread ends its unit: a signal");
	obj_ret(k, PTT_EV_SEM_WAIT, 15, 0x48, 0);
	ok(keeper_count(k) == 0, "a signal's units are no holds: none told from then on");
	obj_ret(k, PTT_EV_SEM_WAIT, 15, 0x40, -1);
	ok(keeper_count(k) == 0, "a failed semaphore wait takes nothing");

	obj_ret(k, PTT_EV_MUTEX_LOCK, 17, 0x10, 0);
	req(k, PTT_EV_MUTEX_LOCK_REQ, 18, 0x10);
	uint32_t exit_args[1] = { 0 };
	feed(k, PTT_EV_PROCESS_EXIT, 17, exit_args, 1);
	ok(keeper_count(k) == 0, "the process's exit ends every frame of its threads");
	ok(keeper_write(k, NULL, 0, NULL, NULL) == 0, "and nothing is written");

	obj_ret(k, PTT_EV_MUTEX_LOCK, 19, 0x10, 0);
	ok(keeper_write(k, NULL, 0, NULL, NULL) == 1, "keeper_write counts the frames it would write");
	keeper_free(k);
	return tap_done();
}

/*
 * test_stack.c - the runtime's stack table (capture/runtime/stack.c): one id per
 * distinct stack, never two stacks under one id, also with threads
 * inserting the same stacks at once; full is said (PTT_STACK_FULL), not a
 * hang or a wrong id; a fork child's table starts empty; ptt_stack_here
 * unwinds past the caller and not while already unwinding.  Linked with the
 * writer, without a recorder: the stack_frames records are counted lost.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "../../capture/runtime/runtime.h"
#include "tap.h"

#define DISTINCT 1000
#define THREADS 4

static uintptr_t frames[DISTINCT][5];
static uint32_t got[THREADS][3][DISTINCT];

static void make_stack(unsigned i, uintptr_t *f)
{
	for (unsigned k = 0; k < 5; k++)
		f[k] = 0x400000u + i * 64u + k * 7u + 1u;
}

static void *inserter(void *arg)
{
	unsigned me = (unsigned)(uintptr_t)arg;
	ptt_tls.no_ring = 1; /* no recorder: records are counted lost */
	for (unsigned r = 0; r < 3; r++)
		for (unsigned j = 0; j < DISTINCT; j++) {
			unsigned i = (j * 7 + me * 131) % DISTINCT; /* each thread in its own order */
			/* a thread preempted while it writes a slot makes the others' lookups of that stack take
			 * a second slot and id (the same frames) once they have waited a while: every lookup is
			 * answered, with an id of that stack */
			got[me][r][i] = ptt_stack_intern(frames[i], 5);
		}
	return NULL;
}

__attribute__((noinline)) static uint32_t here(void)
{
	uint32_t id = ptt_stack_here();
	__asm__ volatile("" ::: "memory");
	return id;
}

int main(void)
{
	static struct ptt_shm shm;
	shm.flags = PTT_SHM_DISCARD;
	ptt_shm = &shm;
	ptt_tls.no_ring = 1;
	ptt_stack_init(PTT_STACKS_BLOCKING);

	uintptr_t a[3] = { 0x1000, 0x2000, 0x3000 }, b[3] = { 0x1000, 0x2000, 0x3001 };
	uint32_t ia = ptt_stack_intern(a, 3), ib = ptt_stack_intern(b, 3);
	ok(ia == 1 && ib == 2, "ids from 1, one per distinct stack (%u %u)", ia, ib);
	ok(ptt_stack_intern(a, 3) == ia && ptt_stack_intern(b, 3) == ib, "the same stack, the same id");
	ok(ptt_stack_intern(a, 2) != ia, "a prefix is another stack");
	ok(ptt_stack_intern(a, 0) == PTT_STACK_NONE, "no frames, no stack");

	for (unsigned i = 0; i < DISTINCT; i++)
		make_stack(i, frames[i]);
	pthread_t th[THREADS];
	for (unsigned t = 0; t < THREADS; t++)
		pthread_create(&th[t], NULL, inserter, (void *)(uintptr_t)t);
	for (unsigned t = 0; t < THREADS; t++)
		pthread_join(th[t], NULL);
	/* an id names one stack: no two distinct stacks share one, in any thread */
	uint32_t *owner = calloc(DISTINCT * THREADS + 16, sizeof *owner);
	int answered = 1, unique = 1, again = 1;
	for (unsigned t = 0; t < THREADS; t++)
		for (unsigned r = 0; r < 3; r++)
			for (unsigned i = 0; i < DISTINCT; i++) {
				uint32_t id = got[t][r][i];
				if (!id || id == PTT_STACK_FULL || id >= DISTINCT * THREADS + 16) {
					answered = 0;
					continue;
				}
				if (owner[id] && owner[id] != i + 1)
					unique = 0;
				owner[id] = i + 1;
			}
	/* once every slot is written, the same stack is the same id */
	for (unsigned i = 0; i < DISTINCT; i++)
		again &= ptt_stack_intern(frames[i], 5) == ptt_stack_intern(frames[i], 5) &&
			 owner[ptt_stack_intern(frames[i], 5)] == i + 1;
	ok(answered, "%u threads inserting the same %u stacks: every lookup answered", THREADS, DISTINCT);
	ok(again, "then each stack's id is found again");
	ok(unique, "never two stacks under one id");
	free(owner);

	/* fill it: at some point full is said, and stacks already in are still found */
	uint32_t last = 0;
	unsigned inserted = 0;
	for (unsigned i = DISTINCT; i < 40000; i++) {
		uintptr_t f[5];
		make_stack(i, f);
		last = ptt_stack_intern(f, 5);
		if (last == PTT_STACK_FULL)
			break;
		inserted++;
	}
	ok(last == PTT_STACK_FULL, "full after %u more stacks: PTT_STACK_FULL", inserted);
	ok(ptt_stack_intern(a, 3) == ia, "a stack already in is still found when full");

	uint32_t h1 = here(), h2 = here();
	ok(h1 == PTT_STACK_FULL || (h1 != PTT_STACK_NONE && h1 == h2), "ptt_stack_here: an id (%u)", h1);
	ptt_stack_after_fork();
	h1 = here();
	ok(h1 == 1, "after fork the table is empty: ids from 1 again (%u)", h1);
	ok(here() == h1, "and the caller's stack is found again");
	ptt_tls.unwinding = 1;
	ok(here() == PTT_STACK_NONE, "no stack while the thread is already unwinding");
	ptt_tls.unwinding = 0;
	ptt_tls.guard = 1;
	ok(here() == PTT_STACK_NONE, "no stack inside the tracer");
	ptt_tls.guard = 0;
	return tap_done();
}

/*
 * whatif.h - the what-if replay of ptt-critical (critical.h): each thread's
 * life as a program of steps, replayed with new hold times.
 *
 * The steps: run for a time (scaled when it runs inside a chosen hold),
 * take a lock, give it back, wait for another thread's step (a signal, a
 * post, a barrier's last arrival, a joined thread's end, a futex wake, a
 * thread's creation) plus the hand-off's latency as recorded.  The locks
 * the caller gives take and give steps (critical.c: those a what-if names)
 * are not replayed in the recorded order: a lock given back goes to the
 * thread that has waited for it longest in the new times, and a free lock
 * to the first thread that asks, as a faster hold lets other threads in
 * sooner.  Every other hand-off is a wait step, in its order.  Processors
 * are not modelled.
 */
#ifndef PTT_WHATIF_H
#define PTT_WHATIF_H

#include <stdint.h>

struct whatif;
struct whatif *whatif_new(void);
/* A thread of the replay (its index, or -1 out of memory). */
int whatif_thread(struct whatif *w);
/* The number of steps of thread i so far: a point another thread's wait can name (no later run merges into it). */
uint32_t whatif_steps(struct whatif *w, int i);
/* Steps of thread i: run ns at factor (scaled), take or give back lock (an index of the caller's; a take
 * handed the lock at a release goes on latency ns after it), wait until thread src has made its first
 * `steps` steps, then latency ns more. */
void whatif_run(struct whatif *w, int i, uint64_t ns, double factor);
void whatif_take(struct whatif *w, int i, uint32_t lock, int shared, uint64_t latency);
void whatif_give(struct whatif *w, int i, uint32_t lock);
void whatif_wait(struct whatif *w, int i, int src, uint32_t steps, uint64_t latency);
/* Thread i starts at ns (its first step's time, for a thread no step of the replay starts). */
void whatif_start(struct whatif *w, int i, uint64_t ns);
/*
 * Replay: 0, or -1 when the replay could not go on (a wait that no step of
 * the new order lets go): then *stuck says how many threads were left.
 */
int whatif_replay(struct whatif *w, unsigned *stuck);
/* Takes of a lock the new order left blocked for ever (a lock held across another wait), which the
 * replay let happen as recorded, the holds overlapping. */
unsigned whatif_forced(const struct whatif *w);
/* The new time thread i made its first `steps` steps (after whatif_replay). */
double whatif_time(const struct whatif *w, int i, uint32_t steps);
void whatif_free(struct whatif *w);

#endif

/*
 * blame.h - who a program's waits were for, cascaded, and the knots of its
 * wait-for graph (ptt-critical --blame): what bounds the throughput of a
 * program that runs until it is stopped, where the critical path of the run
 * (critical.h) ends wherever the stop falls.
 *
 * The rule is wPerf's (Zhou et al., OSDI 2018), on ptt's exact edges.  A
 * wait of thread A that thread B ended at e (critical_wait: the release, the
 * signal, the post, the last arrival, the exit, the wake) is A's time on B's
 * behalf; where B was itself waiting during [begin, e], that part of A's
 * time goes on to whom B waited for (and on, as B's own waits were already
 * cascaded when they ended): A waited for B while B waited for C, so A waited
 * for C.  The hand-off's latency, e to A's return, stays on B.  A timeout or
 * a sleep is the thread's own time; a wait with no edge known stays unknown.
 *
 * Threads are grouped by name, each run of digits not after a letter read
 * as one (pool-0 .. pool-3 is the group pool-N), a thread with no name by
 * its start routine (symbols.h: ptt_syms_thread_start): a group's row is its
 * threads' time and on whose behalf they waited.  Threads of one group that
 * wait for each other in turn (a group commit's changing leader) make many
 * edges, each under the trim below: the working threads' waits for others
 * are also told per group, the busiest first, with where they were made.  The wait-for graph has
 * the threads as vertices, an edge A -> B weighing the time A waited for B;
 * edges under 5 % of A's life are dropped as noise, as wPerf trims, and so
 * are the edges of idle threads (running under 1 % of their life: a
 * background thread woken now and then, main joining its workers, a spare
 * worker woken only by the shutdown): waiting for work is not what bounds
 * the work (wPerf has its user name the threads that serve requests, and
 * record while they do: here --from/--to clip the waits).  A knot is a
 * strongly connected set of threads with no edge out of it: whatever waits
 * ends up waiting for it, and making anything outside it faster cannot make
 * it faster.  Knots of the same groups are one row, ranked by the time the
 * other threads waited for them; the first is named as the bound.  A knot
 * nobody waits for bounds nothing (every thread that never waits is one):
 * it is not listed.
 *
 * Memory: each thread keeps its last cascaded waits (BLAME_HISTORY) for the
 * waits of others to look into; a wait reaching further back than that stays
 * on the thread it waited for, and the report says how much did.
 */
#ifndef PTT_BLAME_H
#define PTT_BLAME_H

#include <stdint.h>
#include <stdio.h>

#include "critical.h"

#define BLAME_HISTORY 4096
#define BLAME_TRIM_PCT 10
#define BLAME_IDLE_PCT 1

struct blame;
struct ptt_syms;

/* A blame view fed by c's waits (critical_observe), naming with syms. */
struct blame *blame_new(struct ptt_syms *syms, struct critical *c);
/* The view of [from_ns, to_ns] only (0: no bound), as the path's window. */
void blame_set_window(struct blame *b, uint64_t from_ns, uint64_t to_ns);
/* After critical_finish: the groups, the graph and its knots. */
void blame_finish(struct blame *b);
/* The report: groups by time waited for them, the graph's edges, the knots and the bound. */
void blame_print(const struct blame *b, unsigned top, FILE *out);
/* The bound's group name (the first knot), or NULL when no knot is waited for. */
const char *blame_bound(const struct blame *b);
void blame_free(struct blame *b);

#endif

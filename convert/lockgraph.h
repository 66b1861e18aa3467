/*
 * lockgraph.h - the lock-order graph of a trace (an edge A -> B when a
 * thread blocks to take B while holding A) and the threads blocked at its
 * end, for ptt-deadlock.  Memory: objects, edges and live threads.
 */
#ifndef PTT_LOCKGRAPH_H
#define PTT_LOCKGRAPH_H

#include <stdio.h>

#include "../formats/ptt_trace.h"

struct lockgraph;
struct lockgraph *lockgraph_new(void);
void lockgraph_event(struct lockgraph *g, const struct ptt_event *ev);
struct loss;
/*
 * Print each cycle of two or more threads (out may be NULL); returns the
 * number found.  A cycle with an order taken only where loss (fidelity.h)
 * says events may be lost is no finding: it is printed as unverifiable and
 * counted in *unverified.
 */
int lockgraph_report_cycles(struct lockgraph *g, const struct loss *loss, FILE *out, int *unverified);
/* Print wait-for cycles among threads blocked at the end; returns the number found (unverifiable ones
 * apart, in *unverified: a wait of the cycle began before a lost stretch that could have ended it). */
int lockgraph_report_blocked(struct lockgraph *g, const struct loss *loss, FILE *out, int *unverified);
void lockgraph_free(struct lockgraph *g);

#endif

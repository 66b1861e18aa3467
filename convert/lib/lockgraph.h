/*
 * lockgraph.h - the lock-order graph of a trace (an edge A -> B when a
 * thread blocks to take B while holding A, or takes B by a try that is the
 * fast path of a blocking acquisition) and the threads deadlocked at its
 * end or when their process exits, for ptt-deadlock.  Memory: objects, edges and live threads.
 */
#ifndef PTT_LOCKGRAPH_H
#define PTT_LOCKGRAPH_H

#include <stdio.h>

#include "../../formats/ptt_trace.h"

struct lockgraph;
struct loss;
struct model;
struct ptt_syms;
/* The graph of the trace m replays (its observer: model_observe), named with syms (pass.h); loss
 * (fidelity.h, may be NULL) says where events may be lost: no finding is built on those stretches. */
struct lockgraph *lockgraph_new(const struct loss *loss, struct ptt_syms *syms, struct model *m);
/* Each event, before m takes it. */
void lockgraph_event(struct lockgraph *g, const struct ptt_event *ev);
/*
 * Print each cycle of two or more threads (out may be NULL); returns the
 * number found.  A cycle with an order taken only where the loss given to lockgraph_new
 * says events may be lost is no finding: it is printed as unverifiable and
 * counted in *unverified.
 */
int lockgraph_report_cycles(struct lockgraph *g, FILE *out, int *unverified);
/* Print wait-for cycles among threads blocked at the end (and as processes exited); returns the number found (unverifiable ones
 * apart, in *unverified: a wait of the cycle began before a lost stretch that could have ended it). */
int lockgraph_report_blocked(struct lockgraph *g, FILE *out, int *unverified);
/*
 * Print the threads blocked for ever (lockgraph.c): waiting for a lock when their process exited or
 * at the end of the trace, in no cycle found (call after lockgraph_report_blocked), with their
 * stacks; returns their number (those whose waits lost events could have ended apart, in *unverified).
 */
int lockgraph_report_forever(struct lockgraph *g, FILE *out, int *unverified);
/* fidelity_blind_note's sentence for this trace, or NULL. */
const char *lockgraph_blind_note(const struct lockgraph *g);
/* 1 when the trace shows a program whose locks ptt cannot see (fidelity_blind_locks). */
int lockgraph_blind_locks(const struct lockgraph *g);
void lockgraph_free(struct lockgraph *g);

#endif

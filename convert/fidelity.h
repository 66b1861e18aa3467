/*
 * fidelity.h - replays a trace and reports what cannot have happened: two
 * holders of a mutex or write lock, an unlock by a non-holder, a cond wait
 * that does not release and re-take its mutex, a thread that begins before
 * its creation, events of a process that never began.
 */
#ifndef PTT_FIDELITY_H
#define PTT_FIDELITY_H

#include <stdio.h>

#include "../formats/ptt_trace.h"

struct fidelity;
struct fidelity *fidelity_new(void);
/* Feed one event; a violation is described in msg (returns 1), else returns 0. */
int fidelity_add(struct fidelity *f, const struct ptt_event *ev, const struct ptt_names *names, char *msg, size_t size);
unsigned long fidelity_violations(const struct fidelity *f);
/* The trace starts mid-run (the kept files of a rotated recording, a flight
 * recording, a window): processes without their beginning and locks released
 * before ever being taken are what came before the start, not violations;
 * in a flight recording r, so is a release by a thread of a lock left free
 * before that thread's history begins. */
void fidelity_starts_mid_run(struct fidelity *f, const struct ptt_reader *r);
void fidelity_free(struct fidelity *f);

#endif

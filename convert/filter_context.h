/*
 * filter_context.h - what is in force when a window opens: the locks each
 * thread holds and the waits in progress, kept as the events that began
 * them, so that a windowed trace can start with them (stamped at the
 * window's start) and a viewer shows the right states from the first
 * moment.  Memory: a few events per live thread.
 */
#ifndef PTT_FILTER_CONTEXT_H
#define PTT_FILTER_CONTEXT_H

#include "../formats/ptt_trace.h"

struct fcontext;
struct fcontext *fcontext_new(void);
void fcontext_event(struct fcontext *c, const struct ptt_event *ev);
/*
 * Call emit for every open event, oldest first, as a copy whose time is
 * at_ns (ticks at_ticks); returns the first non-zero result of emit.
 */
int fcontext_replay(struct fcontext *c, uint64_t at_ns, uint64_t at_ticks, const struct ptt_types *types,
		    int (*emit)(void *ctx, struct ptt_event *ev), void *ctx);
void fcontext_free(struct fcontext *c);

#endif

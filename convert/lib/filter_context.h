/*
 * filter_context.h - what is in force when a window opens: the records
 * formats/inforce.h names (the live processes and threads with their names
 * and modules, the locks each thread holds and the waits in progress, kept
 * as the records that began them, as the recorder keeps them for a rotated
 * file's head), so that a windowed trace can start with them (stamped at the
 * window's start) and a viewer shows the right states from the first
 * moment.  The same state, with the init records of live objects (the
 * model's own state), makes the snapshots of ptt-index, from which a
 * window's context is rebuilt without reading the trace from its start.
 * Memory: a few records per live thread, process and object.
 */
#ifndef PTT_FILTER_CONTEXT_H
#define PTT_FILTER_CONTEXT_H

#include "../../formats/ptt_trace.h"

struct fcontext;
struct fcontext *fcontext_new(void);
/* Learn from the next event (and from a snapshot's records, in their order). */
void fcontext_event(struct fcontext *c, const struct ptt_event *ev);
/*
 * Call emit for every record in force, oldest first, as a copy whose time
 * is at_ns (ticks at_ticks); returns the first non-zero result of emit.
 */
int fcontext_replay(struct fcontext *c, uint64_t at_ns, uint64_t at_ticks, const struct ptt_types *types,
		    int (*emit)(void *ctx, struct ptt_event *ev), void *ctx);
/*
 * Call put for every record in force and every record the state depends on
 * (kind PTT_SNAP_CONTEXT or PTT_SNAP_STATE), oldest first, as they were
 * stored: fed back to fcontext_event in that order, they rebuild the state.
 */
int fcontext_snapshot(struct fcontext *c, const struct ptt_types *types,
		      int (*put)(void *ctx, unsigned kind, const struct ptt_event *ev), void *ctx);
void fcontext_free(struct fcontext *c);

#endif

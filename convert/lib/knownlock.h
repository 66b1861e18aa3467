/*
 * knownlock.h - locks known by their implementation that the trace shows as
 * something else: a thread waiting on them waits for a lock another thread
 * holds (contention), not for work.
 *  - CPython's GIL: take_gil waits on gil->cond (with gil->mutex) until the
 *    holder drops the GIL; both live inside the interpreter's _PyRuntime
 *    (3.11 to 3.13: ceval.gil, or the main interpreter's _gil inside it),
 *    where no other pthread object does (CPython's own locks are semaphores
 *    or parking-lot words allocated elsewhere).  Told by the object's data
 *    symbol (ptt_syms_is_gil), not by an offset that moves between versions.
 *  - a Java monitor (HotSpot): a thread entering a monitor another holds
 *    parks on its own ParkEvent's condition, from ObjectMonitor::enter,
 *    EnterI or ReenterI (libjvm has symbols); told by the wait's stack.  The
 *    same condition also serves Object.wait (ObjectMonitor::wait): only the
 *    waits made entering a monitor are a lock's.
 */
#ifndef PTT_KNOWNLOCK_H
#define PTT_KNOWNLOCK_H

#include <stdint.h>

struct ptt_syms;
struct ptt_stacks;
struct mframe;

enum knownlock { KL_NONE, KL_CPYTHON_GIL, KL_JVM_MONITOR };

/* What wait f (a model frame) of a thread of process pid waits for, with the stacks st of its trace. */
enum knownlock knownlock_of_wait(struct ptt_syms *syms, const struct ptt_stacks *st, uint32_t pid, const struct mframe *f);
/* "CPython GIL", "Java monitor"; NULL for KL_NONE. */
const char *knownlock_name(enum knownlock k);

#endif

/*
 * pyframes.h - the Python frames of a trace's stacks (CPython, ptt-trace(5)):
 * the code objects its py_code events describe, per process, and a frame's
 * name as symbols.c gives every frame's: "worker (py_locks.py)" at
 * "py_locks.py:12".  Fed by ptt_syms_update(), asked by ptt_syms_code() for
 * a PTT_IS_PYFRAME() address; nothing else needs to know.
 */
#ifndef PTT_PYFRAMES_H
#define PTT_PYFRAMES_H

#include <stdint.h>

#include "../../formats/ptt_trace.h"
#include "symbols.h"

struct ptt_pyframes;
struct ptt_pyframes *ptt_pyframes_new(void);
void ptt_pyframes_free(struct ptt_pyframes *p);
/* Learn from an event (py_code; a later definition of the same id, after an exec, replaces the first). */
void ptt_pyframes_update(struct ptt_pyframes *p, const struct ptt_event *ev);
/*
 * A Python frame of process pid, named: func its qualified name ("Worker.run"), where
 * "Worker.run (py_locks.py)", line "py_locks.py:12" (NULL when the frame has no line), text
 * "Worker.run (py_locks.py) at py_locks.py:12"; a code object no py_code described: func NULL,
 * where "python code #N".  Never NULL; valid until ptt_pyframes_free().
 */
const struct ptt_sym *ptt_pyframes_sym(struct ptt_pyframes *p, uint32_t pid, uint64_t frame);

#endif

/*
 * pprof.h - ptt-stat --pprof: the waits or holds ptt-stat counts, as pprof's
 * profile (convert/proto/profile.proto, through protobuf-c), gzip-compressed
 * as pprof reads it.  A sample per stack, object and thread: values are the
 * count and the nanoseconds; its locations are the stack's frames, leaf first,
 * named as every tool names them (lockframes.h), with file:line where known;
 * labels name the object, its class, the thread and its tid and pid.
 */
#ifndef PTT_PPROF_H
#define PTT_PPROF_H

#include <stdint.h>
#include <stdio.h>

#include "stat_table.h"

struct pprof;
struct ptt_syms;
struct model;
/* A profile of what (STAT_FOLD_WAIT, HOLD or LOCKS: waits for locks alone) of the tables st keeps, named
 * with syms from m's stacks; its sampler is set on st.  NULL: out of memory. */
struct pprof *pprof_new(struct ptt_syms *syms, struct model *m, struct stat_table *st, enum stat_fold what);
/*
 * Write the profile to out, once the input is read: time_ns the trace's start (ns since the epoch, 0
 * unknown), duration_ns its length, comment a line kept in it.  0, or -1 with errno (ENOMEM, or a
 * compression error as EIO); write errors are out's.
 */
int pprof_write(struct pprof *pp, FILE *out, int64_t time_ns, int64_t duration_ns, const char *comment);
void pprof_free(struct pprof *pp);

#endif

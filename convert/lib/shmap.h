/*
 * shmap.h - objects in shared memory are one object (ptt-trace(5), SHARED
 * OBJECTS).  The runtime tells each MAP_SHARED mapping a process makes
 * (map_shared: its range, the file's dev and inode and the offset, or for
 * an anonymous one the process that made it; a forked child repeats its
 * parent's) and each munmap over one (unmap_shared).  shmap keeps, per
 * process, the shared ranges in force and rewrites each object argument of
 * an event that falls in one to the object's address in the mapping's
 * identity: PTT_SHARED_ADDR(identity, offset in the file), the same for
 * every process that maps it, at whatever address.  ptt_obj_key gives such
 * an address one key whatever the pid: the model, the lock graph and every
 * table then have one object, its holders and waiters in several processes.
 * A process's ranges are forgotten at its process_begin (a pid reused, or a
 * forked child about to repeat its parent's) and process_exec.
 */
#ifndef PTT_SHMAP_H
#define PTT_SHMAP_H

#include <stddef.h>
#include <stdint.h>

#include "../../formats/ptt_trace.h"

struct shmap;
struct shmap *shmap_new(void);
void shmap_free(struct shmap *m);
/* Forget every process's ranges, keep the identities (and so the addresses given): a second pass over the same input. */
void shmap_restart(struct shmap *m);
/* Learn from ev (map_shared, unmap_shared, process_begin, process_exec) and rewrite its object arguments in place. */
void shmap_event(struct shmap *m, struct ptt_event *ev);
/* The name of a shared address: "PATH+0xOFF", or for an anonymous mapping "shared-anon.PID.ADDR+0xOFF" (its
 * maker and its address there); "" if unknown. */
const char *shmap_name(const struct shmap *m, uint64_t addr, char *buf, size_t size);

#endif

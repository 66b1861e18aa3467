/*
 * keeper.h - ptt-record --streams -m: the state in force at each part's
 * start, written at the part's end.
 *
 * In streams mode the drain never decodes a record, so it cannot know what
 * is in force when a part begins.  A thread of its own, at idle priority,
 * reads the finished parts back in order as any reader does (merged by
 * time), feeding one struct ptt_inforce; once it has read part N-1 to its
 * end and the writer is past part N, it appends to part N (whose META says
 * "head end") the state in force at its start: a snapshot block and the
 * index that finds it from the file's end (ptt-trace(5), kind 7), so that
 * part N read alone (-f removed the ones before) knows its names and holds.
 * Neither the drain nor the program ever waits for it: keeper_moved is an
 * atomic store and a futex wake; -f removes no part it has not read
 * (keeper_kept, rotate_drop).  At the run's end keeper_finish waits for it:
 * at most the part before the last to read.
 */
#ifndef PTT_KEEPER_H
#define PTT_KEEPER_H

#include <stdint.h>

struct keeper;

/* Its thread, started now (waiting for the first part to be written); NULL without memory or thread. */
struct keeper *keeper_start(const char *output);
/* The writer is past part (it writes the next one): the parts up to it may be read and completed. */
void keeper_moved(struct keeper *k, uint32_t part);
/* The parts it has read (UINT32_MAX once it stopped): -f may remove those (rotate.h, kept). */
const uint32_t *keeper_kept(const struct keeper *k);
/*
 * The run's end, last the last part (closed): wait for the keeper to write
 * its head.  *why: a sentence when it could not (its part in *part), else
 * NULL; *cpu_ns its processor time, *wait_ns the time waited here.
 */
void keeper_finish(struct keeper *k, uint32_t last, const char **why, uint32_t *part, uint64_t *cpu_ns,
		   uint64_t *wait_ns);
void keeper_free(struct keeper *k);

#endif

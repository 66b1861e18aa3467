/*
 * merge.h - the readers' merge of per-thread streams (format version 3).
 *
 * A version 3 trace holds each thread's records as a stream of its own,
 * each in time order by itself, and MARK blocks: every record before a
 * mark's time is in the file before it.  The reader hands the records of
 * the stream blocks to ptt_merge_add in file order, and each mark to
 * ptt_merge_mark; ptt_merge_next gives back the records that no record
 * still to come can precede, in the order of (time, tid, stream): a heap of
 * the streams by their first record held, as babeltrace2's muxer.  What is
 * held is what lies between two marks: memory bounded by the recorder's
 * passes, not by the trace.  Internal to formats/ (reader.c, the unit test).
 */
#ifndef PTT_MERGE_H
#define PTT_MERGE_H

#include <stddef.h>
#include <stdint.h>

struct ptt_merge;

struct ptt_merge *ptt_merge_new(void);
void ptt_merge_free(struct ptt_merge *m);
/* A sound record of stream (its words, n = its length, and its file offset), ordered by its own time
 * and tid: 0, or PTT_E_NOMEM.  words has room for PTT_REC_MAX_WORDS: the first 16 are read whatever n. */
int ptt_merge_add(struct ptt_merge *m, uint32_t stream, const uint32_t *words, uint32_t n, uint64_t offset);
/* No record before ticks is still to come: they may go (a mark never takes back an earlier one). */
void ptt_merge_mark(struct ptt_merge *m, uint64_t ticks);
/* The input ended (or a record outside every stream follows): everything held may go, in order. */
void ptt_merge_all(struct ptt_merge *m);
/* The next record that may go, copied to words (room for PTT_REC_MAX_WORDS), *n and *offset set: 1, or 0. */
int ptt_merge_next(struct ptt_merge *m, uint32_t *words, uint32_t *n, uint64_t *offset);
/* Records held, not yet given back. */
size_t ptt_merge_held(const struct ptt_merge *m);

#endif

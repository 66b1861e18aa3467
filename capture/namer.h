/*
 * namer.h - names global and static objects (a file-scope mutex) after
 * their ELF symbol: the recorder sees each object's address in the events
 * and the program's loaded objects in its module events, and writes an
 * object_name record just before the first event of an unnamed object.
 */
#ifndef PTT_NAMER_H
#define PTT_NAMER_H

#include <stdint.h>

#include "../formats/ptt_trace.h"

struct namer;
struct namer *namer_new(void);
/* Look at a record about to be written; may write an object_name record first. */
int namer_before(void *namer, const uint32_t *rec, struct ptt_writer *w);
void namer_free(struct namer *n);

#endif

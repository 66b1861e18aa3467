/*
 * namer.h - names global and static objects (a file-scope mutex) after
 * their ELF symbol: the recorder sees each object's address in the events
 * and the program's loaded objects in its module events, and writes an
 * object_name record just before the first event of an unnamed object.
 */
#ifndef PTT_NAMER_H
#define PTT_NAMER_H

#include <stdint.h>

#include "../../formats/ptt_trace.h"

struct namer;
struct namer *namer_new(void);
/* Look at a record about to be written; may write an object_name record first. */
int namer_before(void *namer, const uint32_t *rec, struct ptt_writer *w);
/* Begin loading the symbols of the ELF file at path (the program, before it
 * starts) on a thread of its own, so that the first pass does not stall on a
 * large symbol table while the rings fill; its module event then waits for
 * the load only if it is not done. */
void namer_preload(struct namer *n, const char *path);
/* Show k every object_name record the namer writes (the names a later file repeats at its head). */
struct keeper;
void namer_set_keeper(struct namer *n, struct keeper *k);
void namer_free(struct namer *n);

#endif

/*
 * entity_name.h - the names every picture gives processes, threads and
 * synchronisation objects (Paje containers, JSON tracks), chosen in one place.
 * Each writes a NUL-terminated name of at most size - 1 bytes into buf; the
 * caller escapes it for its output format.
 */
#ifndef PTT_ENTITY_NAME_H
#define PTT_ENTITY_NAME_H

#include <stddef.h>
#include <stdint.h>

#include "../../formats/ptt_trace.h"

/* Object kinds as words, per class (PTT_CLASS_MUTEX .. PTT_CLASS_SPIN): "mutex", "rwlock", ... */
extern const char *const entity_object_kind[PTT_CLASS_COUNT];

struct ptt_syms;
/* "COMMAND PID" (ptt_syms_process_name) */
void entity_process_name(char *buf, size_t size, struct ptt_syms *syms, uint32_t pid);
/* "TID NAME" (its given name, else its start routine), or "TID": tests and scripts read the tid as the first word */
void entity_thread_name(char *buf, size_t size, struct ptt_syms *syms, uint32_t pid, uint32_t tid);
/* "KIND NAME": its given name, else its symbol, else module+0xOFF, else its address */
void entity_object_name(char *buf, size_t size, struct ptt_syms *syms, uint32_t pid, unsigned cls, uint64_t addr);

#endif

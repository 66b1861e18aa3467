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

/*
 * The one rule of processes in names, for every output that names a thread or an object in text
 * (ptt-stat's rows, ptt-deadlock, ptt-record's summary): where the trace has more than one process
 * (ptt_syms_processes), a thread or an object of one process carries its process; an object in
 * shared memory (PTT_SHARED_ADDR) is named by its mapping and belongs to no one process.
 * entity_process_tag is the spelling of a process in those names, "pid N" (the place where a host
 * would join it).
 */
int entity_many_processes(const struct ptt_syms *syms);
void entity_process_tag(char *buf, size_t size, uint32_t pid);
/* "TID (NAME)", "TID": with several processes "TID (NAME, pid N)", "TID (pid N)" */
void entity_thread_label(char *buf, size_t size, struct ptt_syms *syms, uint32_t pid, uint32_t tid);
/* Append " (pid N)" to the object name in buf when the rule asks for it */
void entity_object_process(char *buf, size_t size, struct ptt_syms *syms, uint32_t pid, uint64_t addr);

#endif

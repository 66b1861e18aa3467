/* human.h - an event as an English sentence (ptt-dump --human). */
#ifndef PTT_HUMAN_H
#define PTT_HUMAN_H

#include "../../formats/ptt_trace.h"

struct model;
struct ptt_syms;
/* Write "thread 4243 (worker) waits for mutex queue_lock, held by thread 4244" into buf; syms (may be NULL)
 * names threads and objects, having learnt from ev already; m (may be NULL) is the model of the trace up
 * to, not including, ev. */
void human_sentence(const struct ptt_event *ev, struct ptt_syms *syms, const struct model *m, char *buf, size_t size);

#endif

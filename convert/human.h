/* human.h - an event as an English sentence (ptt-dump --human). */
#ifndef PTT_HUMAN_H
#define PTT_HUMAN_H

#include "../formats/ptt_trace.h"

/* Write "thread 4243 (worker) waits for mutex queue_lock" into buf. */
void human_sentence(const struct ptt_event *ev, const struct ptt_names *names, char *buf, size_t size);

#endif

/* entity_name.c - the display names of processes, threads and objects, for every picture. */
#include <inttypes.h>
#include <stdio.h>

#include "entity_name.h"

const char *const entity_object_kind[PTT_CLASS_COUNT] = {
	[PTT_CLASS_MUTEX] = "mutex", [PTT_CLASS_RWLOCK] = "rwlock", [PTT_CLASS_SPIN] = "spinlock",
	[PTT_CLASS_COND] = "cond", [PTT_CLASS_BARRIER] = "barrier", [PTT_CLASS_SEM] = "semaphore",
};

void entity_process_name(char *buf, size_t size, const struct ptt_names *names, uint32_t pid)
{
	(void)names;
	snprintf(buf, size, "process %" PRIu32, pid);
}

void entity_thread_name(char *buf, size_t size, const struct ptt_names *names, uint32_t tid)
{
	const char *given = ptt_names_thread(names, tid);
	if (given)
		snprintf(buf, size, "%" PRIu32 " %s", tid, given);
	else
		snprintf(buf, size, "%" PRIu32, tid);
}

void entity_object_name(char *buf, size_t size, const struct ptt_names *names, unsigned cls, uint64_t addr)
{
	const char *kind = cls < PTT_CLASS_COUNT && entity_object_kind[cls] ? entity_object_kind[cls] : "object";
	const char *given = ptt_names_object(names, addr);
	if (given)
		snprintf(buf, size, "%s %s", kind, given);
	else
		snprintf(buf, size, "%s 0x%" PRIx64, kind, addr);
}

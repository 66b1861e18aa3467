/* entity_name.c - the display names of processes, threads and objects, for every picture. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "entity_name.h"
#include "host.h"
#include "symbols.h"

const char *const entity_object_kind[PTT_CLASS_COUNT] = {
	[PTT_CLASS_MUTEX] = "mutex", [PTT_CLASS_RWLOCK] = "rwlock", [PTT_CLASS_SPIN] = "spinlock",
	[PTT_CLASS_COND] = "cond", [PTT_CLASS_BARRIER] = "barrier", [PTT_CLASS_SEM] = "semaphore",
	[PTT_CLASS_FUTEX] = "futex",
};

void entity_process_name(char *buf, size_t size, struct ptt_syms *syms, uint32_t pid)
{
	ptt_syms_process_name(syms, pid, buf, size);
}

void entity_thread_name(char *buf, size_t size, struct ptt_syms *syms, uint32_t pid, uint32_t tid)
{
	char given[PTT_MAX_STR];
	ptt_syms_thread_name(syms, pid, tid, given, sizeof given);
	/* the tid first: rows of threads with the same start routine stay apart */
	if (strncmp(given, "thread ", 7) != 0)
		ptt_name_printf(buf, size, "%" PRIu32 " %s", host_local(tid), given);
	else
		ptt_name_printf(buf, size, "%" PRIu32, host_local(tid));
}

void entity_object_name(char *buf, size_t size, struct ptt_syms *syms, uint32_t pid, unsigned cls, uint64_t addr)
{
	const char *kind = cls < PTT_CLASS_COUNT && entity_object_kind[cls] ? entity_object_kind[cls] : "object";
	char given[PTT_MAX_STR];
	ptt_syms_object_name(syms, pid, addr, given, sizeof given);
	ptt_name_printf(buf, size, "%s %s", kind, given);
}

int entity_many_processes(const struct ptt_syms *syms) { return ptt_syms_processes(syms) > 1; }

void entity_process_tag(char *buf, size_t size, uint32_t pid)
{
	snprintf(buf, size, "pid %" PRIu32, host_local(pid)); /* as its host gave it */
}

void entity_thread_label(char *buf, size_t size, struct ptt_syms *syms, uint32_t pid, uint32_t tid)
{
	char given[PTT_MAX_STR], proc[48] = "";
	const char *s = ptt_syms_thread_known_name(syms, pid, tid, given, sizeof given);
	if (entity_many_processes(syms))
		entity_process_tag(proc, sizeof proc, pid);
	int h = snprintf(buf, size, "%" PRIu32, host_local(tid));
	if ((!*s && !*proc) || h < 0 || size < (size_t)h + 8)
		return;
	/* "TID (NAME, pid N)": a name too long is cut one way (with its mark), the parenthesis kept */
	char tail[64];
	int tl = snprintf(tail, sizeof tail, "%s%s)", *s && *proc ? ", " : "", proc);
	if (tl < 0 || size < (size_t)h + 2 + (size_t)tl + 1)
		return;
	size_t room = size - (size_t)h - 2 - (size_t)tl;
	memcpy(buf + h, " (", 3);
	size_t l = (size_t)h + 2 + (*s && room > 4 ? ptt_name_printf(buf + h + 2, room, "%s", s) : 0);
	snprintf(buf + l, size - l, "%s", tail);
}

void entity_object_process(char *buf, size_t size, struct ptt_syms *syms, uint32_t pid, uint64_t addr)
{
	if (PTT_IS_SHARED(addr) || !entity_many_processes(syms))
		return;
	char proc[48];
	entity_process_tag(proc, sizeof proc, pid);
	size_t l = strlen(buf);
	if (l < size)
		snprintf(buf + l, size - l, " (%s)", proc);
}

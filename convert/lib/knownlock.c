/* knownlock.c - CPython's GIL and Java monitors, told from a wait (knownlock.h). */
#include <string.h>

#include "knownlock.h"
#include "model.h"
#include "symbols.h"

/* HotSpot's functions that park a thread entering a monitor someone holds (not ObjectMonitor::wait) */
static const char *const monitor_enter[] = { "ObjectMonitor::enter(", "ObjectMonitor::EnterI(", "ObjectMonitor::ReenterI(" };

enum knownlock knownlock_of_wait(struct ptt_syms *syms, const struct ptt_stacks *st, uint32_t pid, const struct mframe *f)
{
	unsigned cls = mstate_class(f->state);
	if (cls != PTT_CLASS_COND && cls != PTT_CLASS_MUTEX)
		return KL_NONE;
	if (ptt_syms_is_gil(syms, pid, f->obj))
		return KL_CPYTHON_GIL;
	const uint64_t *fr;
	unsigned n = cls == PTT_CLASS_COND && f->stack ? ptt_stacks_get(st, pid, f->stack, &fr) : 0;
	for (unsigned i = 0; i < n && i < 8; i++) { /* the park is a few frames below the enter */
		const struct ptt_sym *s = ptt_syms_code(syms, pid, fr[i]);
		for (size_t k = 0; s->func && k < sizeof monitor_enter / sizeof monitor_enter[0]; k++)
			if (strncmp(s->func, monitor_enter[k], strlen(monitor_enter[k])) == 0)
				return KL_JVM_MONITOR;
	}
	return KL_NONE;
}

const char *knownlock_name(enum knownlock k)
{
	switch (k) {
	case KL_CPYTHON_GIL: return "CPython GIL";
	case KL_JVM_MONITOR: return "Java monitor";
	default: return NULL;
	}
}

/* api.c - the user trace-point API of ptt.h. */
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "../ptt.h"
#include "runtime.h"

static struct ptt_type user_types[PTT_MAX_USER_TYPES];
static uint32_t nlocal; /* registrations when not recorded */

PTT_EXPORT int ptt_active(void)
{
	return ptt_shm != NULL;
}

static int valid_name(const char *n)
{
	size_t len = strlen(n);
	if (len == 0 || len >= sizeof user_types[0].name)
		return 0;
	for (; *n; n++)
		if (!((*n >= 'a' && *n <= 'z') || (*n >= 'A' && *n <= 'Z') || (*n >= '0' && *n <= '9') ||
		      *n == '_' || *n == '.' || *n == '-'))
			return 0;
	return 1;
}

static int register_locked(struct ptt_type *tp, int level, const char *args);

PTT_EXPORT int ptt_register_event(const char *name, int level, const char *args)
{
	struct ptt_type t;
	memset(&t, 0, sizeof t);
	if (!name || !valid_name(name) || level < 1 || level > 3 || strlen(args ? args : "") >= sizeof ptt_shm->types[0].args)
		return -1;
	if (ptt_type_parse_args(&t, args ? args : "") != 0)
		return -1;
	snprintf(t.name, sizeof t.name, "%s", name);
	t.cls = PTT_CLASS_USER;
	t.level = (uint8_t)level;
	t.source = PTT_SRC_PROGRAM;
	/* registrations are rare and may race: one at a time, so a lookup never
	 * reads a half-written entry (a spin, not a mutex: a mutex would trace itself) */
	static int registering;
	while (__atomic_exchange_n(&registering, 1, __ATOMIC_ACQUIRE))
		sched_yield();
	int id = register_locked(&t, level, args);
	__atomic_store_n(&registering, 0, __ATOMIC_RELEASE);
	return id;
}

static int register_locked(struct ptt_type *tp, int level, const char *args)
{
	struct ptt_type t = *tp;
	struct ptt_shm *s = ptt_shm;
	uint32_t n = s ? __atomic_load_n(&s->ntypes, __ATOMIC_ACQUIRE) : __atomic_load_n(&nlocal, __ATOMIC_ACQUIRE);
	for (uint32_t i = 0; i < n && i < PTT_MAX_USER_TYPES; i++) {
		const struct ptt_type *u = &user_types[i];
		if (strcmp(u->name, t.name) == 0 && u->level == t.level && u->nargs == t.nargs &&
		    memcmp(u->argkind, t.argkind, sizeof t.argkind) == 0)
			return u->id;
	}
	uint32_t i = __atomic_fetch_add(s ? &s->ntypes : &nlocal, 1, __ATOMIC_ACQ_REL);
	if (i >= PTT_MAX_USER_TYPES) {
		if (s) /* the trace says so: the program's events of that type will be missing */
			ptt_emit_limit(PTT_LIMIT_USER_TYPES, 1, PTT_MAX_USER_TYPES, i + 1);
		return -1;
	}
	t.id = (uint16_t)(PTT_USER_ID_BASE + i);
	user_types[i] = t;
	if (s) {
		struct ptt_shm_type *st = &s->types[i];
		st->id = t.id;
		st->level = t.level;
		st->cls = t.cls;
		snprintf(st->name, sizeof st->name, "%s", t.name);
		snprintf(st->args, sizeof st->args, "%s", args ? args : "");
		__atomic_store_n(&st->ready, 1, __ATOMIC_RELEASE);
		ptt_on[t.id] = (uint32_t)level <= s->level && (s->class_mask & (1u << PTT_CLASS_USER));
	}
	return t.id;
}

PTT_EXPORT void ptt_trace(int id, const uint64_t *args, unsigned nargs)
{
	if (id < PTT_USER_ID_BASE || id >= PTT_USER_ID_BASE + PTT_MAX_USER_TYPES || !ptt_on[id])
		return;
	const struct ptt_type *t = &user_types[id - PTT_USER_ID_BASE];
	uint32_t w[2 * PTT_MAX_ARGS];
	unsigned nw = 0;
	const char *str = NULL;
	for (unsigned a = 0; a < t->nargs; a++) {
		uint64_t v = a < nargs ? args[a] : 0;
		switch (ptt_arg_kind_words(t->argkind[a])) {
		case 1: w[nw++] = (uint32_t)v; break;
		case 2: ptt_put64(w + nw, v); nw += 2; break;
		default: str = (const char *)(uintptr_t)v;
		}
	}
	if (t->nargs && t->argkind[t->nargs - 1] == PTT_ARG_STR)
		ptt_emit_str((unsigned)id, w, nw, str ? str : "");
	else
		ptt_emit((unsigned)id, w, nw);
}

/* A span kind is a user type "ptt.span.NAME" (key, end): the format is unchanged, decoders need no table. */
PTT_EXPORT int ptt_span_kind(const char *name)
{
	char full[sizeof user_types[0].name];
	if (!name || strlen(name) + sizeof "ptt.span." > sizeof full)
		return -1;
	snprintf(full, sizeof full, "ptt.span.%s", name);
	return ptt_register_event(full, 1, "key:u64,end:u32");
}

PTT_EXPORT void ptt_span_begin(int kind, uint64_t key)
{
	const uint64_t a[2] = { key, 0 };
	ptt_trace(kind, a, 2);
}

PTT_EXPORT void ptt_span_end(int kind, uint64_t key)
{
	const uint64_t a[2] = { key, 1 };
	ptt_trace(kind, a, 2);
}

PTT_EXPORT void ptt_name_object(const void *object, const char *name)
{
	if (!ptt_shm || !name)
		return;
	uint32_t a[2];
	ptt_put64(a, (uint64_t)(uintptr_t)object);
	ptt_emit_str(PTT_EV_OBJECT_NAME, a, 2, name);
}

PTT_EXPORT void ptt_name_thread(const char *name)
{
	if (!ptt_shm || !name)
		return;
	uint32_t a[1] = { ptt_tls.tid ? ptt_tls.tid : ptt_gettid() };
	ptt_emit_str(PTT_EV_THREAD_NAME, a, 1, name);
}

/* fidelity.c - the trace replay behind ptt-dump --check. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "fidelity.h"

#define EOWNERDEAD_ 130

/* A small open-addressing map from a 64-bit key to a slot, deletions by tombstone-free backshift. */
struct slot {
	uint64_t key;
	uint32_t holder;  /* mutex / write lock holder tid, 0 if free */
	uint32_t count;   /* recursive holds, or readers of an rwlock */
	uint8_t used;
};

struct map {
	struct slot *s;
	size_t cap, used;
};

struct fidelity {
	struct map locks;     /* mutexes and rwlocks by address */
	struct map pids;      /* processes that began */
	struct map children;  /* tids announced by thread_create (holder = 1) */
	struct map handles;   /* handles announced by thread_create */
	struct map seen;      /* locks seen at all (mid_run only) */
	int mid_run;          /* the trace starts mid-run: what came before is unknown */
	unsigned long violations;
};

static size_t mix(uint64_t k, size_t cap)
{
	k ^= k >> 31;
	k *= 0x9E3779B97F4A7C15ull;
	k ^= k >> 29;
	return (size_t)k & (cap - 1);
}

static struct slot *map_get(struct map *m, uint64_t key, int create)
{
	if (create && (m->used + 1) * 2 > m->cap) {
		size_t cap = m->cap ? m->cap * 2 : 256;
		struct slot *s = calloc(cap, sizeof *s);
		if (!s)
			return NULL;
		for (size_t i = 0; i < m->cap; i++)
			if (m->s[i].used) {
				size_t j = mix(m->s[i].key, cap);
				while (s[j].used)
					j = (j + 1) & (cap - 1);
				s[j] = m->s[i];
			}
		free(m->s);
		m->s = s;
		m->cap = cap;
	}
	if (!m->cap)
		return NULL;
	size_t j = mix(key, m->cap);
	while (m->s[j].used) {
		if (m->s[j].key == key)
			return &m->s[j];
		j = (j + 1) & (m->cap - 1);
	}
	if (!create)
		return NULL;
	memset(&m->s[j], 0, sizeof m->s[j]);
	m->s[j].used = 1;
	m->s[j].key = key;
	m->used++;
	return &m->s[j];
}

/* Remove key, shifting back the entries of its probe chain (bounded memory under churn). */
static void map_del(struct map *m, uint64_t key)
{
	struct slot *e = map_get(m, key, 0);
	if (!e)
		return;
	size_t i = (size_t)(e - m->s);
	m->s[i].used = 0;
	m->used--;
	for (size_t j = (i + 1) & (m->cap - 1); m->s[j].used; j = (j + 1) & (m->cap - 1)) {
		size_t home = mix(m->s[j].key, m->cap);
		/* move j back to i if its home is not in (i, j] cyclically */
		if ((j > i && (home <= i || home > j)) || (j < i && home <= i && home > j)) {
			m->s[i] = m->s[j];
			m->s[j].used = 0;
			i = j;
		}
	}
}

struct fidelity *fidelity_new(void)
{
	return calloc(1, sizeof(struct fidelity));
}

unsigned long fidelity_violations(const struct fidelity *f) { return f->violations; }

void fidelity_starts_mid_run(struct fidelity *f) { f->mid_run = 1; }

static void map_free(struct map *m) { free(m->s); }

void fidelity_free(struct fidelity *f)
{
	if (!f)
		return;
	map_free(&f->locks);
	map_free(&f->pids);
	map_free(&f->children);
	map_free(&f->handles);
	map_free(&f->seen);
	free(f);
}

static const char *objname(const struct ptt_names *n, uint64_t addr, char *buf, size_t size)
{
	const char *s = n ? ptt_names_object(n, addr) : NULL;
	if (s)
		snprintf(buf, size, "0x%" PRIx64 " (%s)", addr, s);
	else
		snprintf(buf, size, "0x%" PRIx64, addr);
	return buf;
}

static int violation(struct fidelity *f, const struct ptt_event *ev, char *msg, size_t size, const char *what)
{
	f->violations++;
	snprintf(msg, size, "%" PRIu64 ".%09" PRIu64 " pid %" PRIu32 " tid %" PRIu32 " %s: %s",
		 ev->ns / 1000000000u, ev->ns % 1000000000u, ev->pid, ev->tid, ev->type->name, what);
	return 1;
}

static int acquired(const struct ptt_event *ev)
{
	int64_t ret = (int64_t)ptt_event_arg(ev, "ret", 0);
	return ret == 0 || ret == EOWNERDEAD_;
}

/* Locks are per process (a forked child has copies at the same addresses). */
static uint64_t lock_key(const struct ptt_event *ev, uint64_t addr)
{
	return addr ^ ((uint64_t)ev->pid << 47) ^ ((uint64_t)ev->pid >> 17);
}

/* Exclusive acquisition of obj by ev->tid (mutex, write lock, cond re-acquisition). */
static int take(struct fidelity *f, const struct ptt_event *ev, uint64_t obj, const struct ptt_names *n,
		char *msg, size_t size)
{
	if (f->mid_run)
		map_get(&f->seen, lock_key(ev, obj), 1);
	struct slot *s = map_get(&f->locks, lock_key(ev, obj), 1);
	if (!s)
		return 0;
	char o[128], what[256];
	if (s->holder && s->holder != ev->tid) {
		snprintf(what, sizeof what, "%s acquired while held by thread %" PRIu32, objname(n, obj, o, sizeof o), s->holder);
		s->holder = ev->tid;
		s->count = 1;
		return violation(f, ev, msg, size, what);
	}
	if (!s->holder && s->count && ev->type->cls == PTT_CLASS_RWLOCK) {
		snprintf(what, sizeof what, "%s write-locked while %" PRIu32 " readers hold it", objname(n, obj, o, sizeof o), s->count);
		s->holder = ev->tid;
		s->count = 1;
		return violation(f, ev, msg, size, what);
	}
	s->holder = ev->tid;
	s->count++;
	return 0;
}

static int release(struct fidelity *f, const struct ptt_event *ev, uint64_t obj, const struct ptt_names *n,
		   char *msg, size_t size)
{
	uint64_t key = lock_key(ev, obj);
	struct slot *s = map_get(&f->locks, key, 0);
	char o[128], what[256];
	if (f->mid_run && !map_get(&f->seen, key, 0)) {
		map_get(&f->seen, key, 1);
		if (!s)
			return 0; /* taken before the trace starts */
	}
	if (ev->type->cls == PTT_CLASS_RWLOCK && s && !s->holder && s->count) {
		if (--s->count == 0)
			map_del(&f->locks, key);
		return 0;
	}
	if (!s) {
		struct slot *p = map_get(&f->pids, ev->pid, 0);
		if (p && p->holder)
			return 0; /* a forked child releasing what its parent held at fork() */
	}
	if (!s || s->holder != ev->tid) {
		snprintf(what, sizeof what, "%s released by a thread that does not hold it%s", objname(n, obj, o, sizeof o),
			 s && s->holder ? "" : " (it is free)");
		if (s && s->holder)
			snprintf(what + strlen(what), sizeof what - strlen(what), " (holder: thread %" PRIu32 ")", s->holder);
		return violation(f, ev, msg, size, what);
	}
	if (--s->count == 0)
		map_del(&f->locks, key);
	return 0;
}

static int thread_events(struct fidelity *f, const struct ptt_event *ev, char *msg, size_t size)
{
	if (ev->id == PTT_EV_THREAD_CREATE && ptt_event_arg(ev, "ret", 0) == 0) {
		uint64_t child = ptt_event_arg(ev, "child", 0), handle = ptt_event_arg(ev, "handle", 0);
		if (child)
			map_get(&f->children, child, 1);
		map_get(&f->handles, handle, 1);
	}
	if (ev->id == PTT_EV_THREAD_BEGIN && ptt_event_arg(ev, "parent", 0) != 0) {
		uint64_t handle = ptt_event_arg(ev, "handle", 0);
		if (map_get(&f->children, ev->tid, 0))
			map_del(&f->children, ev->tid);
		else if (map_get(&f->handles, handle, 0))
			; /* announced by handle only */
		else
			return violation(f, ev, msg, size, "thread begins before any thread_create announced it");
		map_del(&f->handles, handle);
	}
	return 0;
}

int fidelity_add(struct fidelity *f, const struct ptt_event *ev, const struct ptt_names *n, char *msg, size_t size)
{
	const struct ptt_type *t = ev->type;
	if (t->source == PTT_SRC_RECORDER)
		return 0;
	struct slot *p = map_get(&f->pids, ev->pid, 0);
	if (!p) {
		p = map_get(&f->pids, ev->pid, 1);
		if (ev->id != PTT_EV_PROCESS_BEGIN && !f->mid_run)
			return violation(f, ev, msg, size, "first event of a process that never began (no process_begin)");
	}
	uint64_t obj;
	switch (ev->id) {
	case PTT_EV_THREAD_CREATE:
	case PTT_EV_THREAD_BEGIN:
		return thread_events(f, ev, msg, size);
	case PTT_EV_MUTEX_LOCK:
	case PTT_EV_MUTEX_TRYLOCK:
	case PTT_EV_MUTEX_TIMEDLOCK:
		if (!acquired(ev))
			return 0;
		return take(f, ev, ptt_event_arg(ev, "mutex", 0), n, msg, size);
	case PTT_EV_RWLOCK_WRLOCK:
	case PTT_EV_RWLOCK_TRYWRLOCK:
	case PTT_EV_RWLOCK_TIMEDWRLOCK:
		if (!acquired(ev))
			return 0;
		return take(f, ev, ptt_event_arg(ev, "rwlock", 0), n, msg, size);
	case PTT_EV_RWLOCK_RDLOCK:
	case PTT_EV_RWLOCK_TRYRDLOCK:
	case PTT_EV_RWLOCK_TIMEDRDLOCK: {
		if (!acquired(ev))
			return 0;
		obj = ptt_event_arg(ev, "rwlock", 0);
		if (f->mid_run)
			map_get(&f->seen, lock_key(ev, obj), 1);
		struct slot *s = map_get(&f->locks, lock_key(ev, obj), 1);
		if (!s)
			return 0;
		if (s->holder && s->holder != ev->tid) {
			char o[128], what[256];
			snprintf(what, sizeof what, "%s read-locked while thread %" PRIu32 " write-holds it",
				 objname(n, obj, o, sizeof o), s->holder);
			return violation(f, ev, msg, size, what);
		}
		if (!s->holder)
			s->count++;
		return 0;
	}
	case PTT_EV_MUTEX_UNLOCK:
		if (ptt_event_arg(ev, "ret", 0) != 0)
			return 0; /* a refused unlock (EPERM) released nothing */
		return release(f, ev, ptt_event_arg(ev, "mutex", 0), n, msg, size);
	case PTT_EV_RWLOCK_UNLOCK:
		if (ptt_event_arg(ev, "ret", 0) != 0)
			return 0;
		return release(f, ev, ptt_event_arg(ev, "rwlock", 0), n, msg, size);
	case PTT_EV_COND_WAIT_REQ:
	case PTT_EV_COND_TIMEDWAIT_REQ:
		return release(f, ev, ptt_event_arg(ev, "mutex", 0), n, msg, size);
	case PTT_EV_COND_WAIT: {
		obj = ptt_event_arg(ev, "mutex", 0);
		struct slot *s = map_get(&f->locks, lock_key(ev, obj), 0);
		if (s && s->holder == ev->tid) {
			char o[128], what[256];
			snprintf(what, sizeof what, "condition wait ended holding %s, which it never released",
				 objname(n, obj, o, sizeof o));
			return violation(f, ev, msg, size, what);
		}
		return take(f, ev, obj, n, msg, size);
	}
	case PTT_EV_MUTEX_DESTROY:
	case PTT_EV_RWLOCK_DESTROY:
		obj = ptt_event_arg(ev, t->argname[0][0] == 'm' ? "mutex" : "rwlock", 0);
		map_del(&f->locks, lock_key(ev, obj));
		return 0;
	case PTT_EV_PROCESS_BEGIN: {
		/* a child of a traced process: remember it was forked */
		uint64_t ppid = ptt_event_arg(ev, "ppid", 0);
		p->holder = map_get(&f->pids, ppid, 0) != NULL;
		return 0;
	}
	default:
		return 0;
	}
}

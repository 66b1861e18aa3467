/* shmap.c - per process, the shared mappings in force; object addresses in them made one per mapping identity. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../formats/map.h"
#include "shmap.h"

struct identity {
	uint64_t dev, ino, base; /* base: an anonymous mapping's address in its maker (dev 0, ino its pid) */
	char path[PTT_MAX_STR];
};

struct range {
	uint64_t lo, hi, off; /* [lo, hi) in the process, from off in the identity */
	uint32_t id;          /* index in identities */
};

struct space {
	struct range *r;
	size_t n, cap;
};

struct shmap {
	struct identity *ids;
	size_t nids, capids;
	struct ptt_map spaces; /* pid + 1 -> struct space */
	size_t ranges;         /* ranges in force over all processes: 0, nothing to look up */
};

struct shmap *shmap_new(void) { return calloc(1, sizeof(struct shmap)); }

static void free_space(void *v)
{
	struct space *s = v;
	free(s->r);
	free(s);
}

void shmap_restart(struct shmap *m)
{
	if (!m)
		return;
	ptt_map_free_with(&m->spaces, free_space);
	m->ranges = 0;
}

void shmap_free(struct shmap *m)
{
	if (!m)
		return;
	shmap_restart(m);
	free(m->ids);
	free(m);
}

/* The identity's index, added when new; -1 without memory or room in an address. */
static long identity(struct shmap *m, uint64_t dev, uint64_t ino, uint64_t base, const char *path)
{
	for (size_t i = 0; i < m->nids; i++)
		if (m->ids[i].dev == dev && m->ids[i].ino == ino && m->ids[i].base == base) {
			if (!m->ids[i].path[0] && path[0])
				snprintf(m->ids[i].path, sizeof m->ids[i].path, "%s", path);
			return (long)i;
		}
	if (m->nids >= PTT_SHARED_IDS)
		return -1;
	if (PTT_GROW(m->ids, &m->capids, m->nids + 1) != 0)
		return -1;
	struct identity *id = &m->ids[m->nids];
	id->dev = dev;
	id->ino = ino;
	id->base = base;
	snprintf(id->path, sizeof id->path, "%s", path);
	return (long)m->nids++;
}

static void forget(struct shmap *m, uint32_t pid)
{
	struct space *s = ptt_map_del(&m->spaces, (uint64_t)pid + 1);
	if (s) {
		m->ranges -= s->n;
		free_space(s);
	}
}

/* Take [lo, hi) out of pid's ranges (a range cut in two keeps both ends). */
static void cut(struct shmap *m, struct space *s, uint64_t lo, uint64_t hi)
{
	for (size_t i = 0; i < s->n;) {
		struct range *r = &s->r[i];
		if (r->hi <= lo || hi <= r->lo) {
			i++;
			continue;
		}
		if (r->lo < lo && hi < r->hi && s->n < s->cap) { /* a hole in the middle: two ranges */
			struct range tail = { hi, r->hi, r->off + (hi - r->lo), r->id };
			r->hi = lo;
			s->r[s->n++] = tail;
			m->ranges++;
			i++;
		} else if (r->lo < lo) {
			r->hi = lo;
			i++;
		} else if (hi < r->hi) {
			r->off += hi - r->lo;
			r->lo = hi;
			i++;
		} else {
			s->r[i] = s->r[--s->n];
			m->ranges--;
		}
	}
}

static void map_range(struct shmap *m, const struct ptt_event *ev)
{
	uint64_t addr = ptt_event_argn(ev, PTT_ARGNAME_ADDR, 0), len = ptt_event_argn(ev, PTT_ARGNAME_LEN, 0);
	uint64_t dev = ptt_event_argn(ev, PTT_ARGNAME_DEV, 0), ino = ptt_event_argn(ev, PTT_ARGNAME_INO, 0);
	uint64_t off = ptt_event_argn(ev, PTT_ARGNAME_OFF, 0);
	/* an anonymous mapping (dev 0): off is its address in the process that made it, part of its identity */
	uint64_t base = dev == 0 && !ev->str[0] ? off : 0;
	if (base)
		off = 0;
	long id = identity(m, dev, ino, base, ev->str);
	struct space *s = ptt_map_get(&m->spaces, (uint64_t)ev->pid + 1);
	if (!s) {
		s = calloc(1, sizeof *s);
		if (!s || ptt_map_put(&m->spaces, (uint64_t)ev->pid + 1, s)) {
			free(s);
			return;
		}
	}
	if (!len || addr + len < addr)
		return;
	cut(m, s, addr, addr + len); /* MAP_FIXED over what was there */
	if (id < 0)
		return;
	if (PTT_GROW(s->r, &s->cap, s->n + 2) != 0) /* room for one more, and for a cut in two */
		return;
	s->r[s->n++] = (struct range){ addr, addr + len, off, (uint32_t)id };
	m->ranges++;
}

/* Is this argument an object (a lock, condition, barrier, semaphore, futex word)? */
static int object_arg(unsigned argid)
{
	switch (argid) {
	case PTT_ARGNAME_OBJECT: case PTT_ARGNAME_MUTEX: case PTT_ARGNAME_COND: case PTT_ARGNAME_RWLOCK:
	case PTT_ARGNAME_BARRIER: case PTT_ARGNAME_SEM: case PTT_ARGNAME_SPIN: case PTT_ARGNAME_FUTEX:
		return 1;
	default:
		return 0;
	}
}

void shmap_event(struct shmap *m, struct ptt_event *ev)
{
	if (!m || !ev->type)
		return;
	switch (ev->id) {
	case PTT_EV_MAP_SHARED:
		if (ev->type->role == PTT_ROLE_NAME) /* the built-in type, not a user's of the same id */
			map_range(m, ev);
		return;
	case PTT_EV_UNMAP_SHARED: {
		struct space *s = ev->type->role == PTT_ROLE_NAME ? ptt_map_get(&m->spaces, (uint64_t)ev->pid + 1) : NULL;
		uint64_t addr = ptt_event_argn(ev, PTT_ARGNAME_ADDR, 0), len = ptt_event_argn(ev, PTT_ARGNAME_LEN, 0);
		if (s && addr + len >= addr)
			cut(m, s, addr, addr + len);
		return;
	}
	case PTT_EV_PROCESS_BEGIN: case PTT_EV_PROCESS_EXEC:
		if (m->ranges)
			forget(m, ev->pid);
		return;
	}
	if (!m->ranges || ev->type->role == PTT_ROLE_NAME || ev->type->role == PTT_ROLE_META)
		return;
	const struct space *s = ptt_map_get(&m->spaces, (uint64_t)ev->pid + 1);
	if (!s || !s->n)
		return;
	for (unsigned a = 0; a < ev->nargs && a < PTT_MAX_ARGS; a++) {
		if (!object_arg(ev->type->argid[a]))
			continue;
		uint64_t addr = ev->arg[a];
		for (size_t i = 0; i < s->n; i++)
			if (s->r[i].lo <= addr && addr < s->r[i].hi) {
				uint64_t off = s->r[i].off + (addr - s->r[i].lo);
				if (off <= PTT_SHARED_OFF_MAX)
					ev->arg[a] = PTT_SHARED_ADDR(s->r[i].id, off);
				break;
			}
	}
}

const char *shmap_name(const struct shmap *m, uint64_t addr, char *buf, size_t size)
{
	uint32_t id = PTT_SHARED_ID(addr);
	if (size)
		buf[0] = 0;
	if (!m || !PTT_IS_SHARED(addr) || id >= m->nids)
		return buf;
	const struct identity *i = &m->ids[id];
	if (i->dev == 0 && !i->path[0])
		snprintf(buf, size, "shared-anon.%" PRIu64 ".%" PRIx64 "+0x%" PRIx64, i->ino, i->base, PTT_SHARED_OFF(addr));
	else
		snprintf(buf, size, "%s+0x%" PRIx64, i->path[0] ? i->path : "shared", PTT_SHARED_OFF(addr));
	return buf;
}

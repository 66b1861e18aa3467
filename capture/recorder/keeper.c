/* keeper.c - the naming records in force, told again at the head of a file (keeper.h). */
#include <stdlib.h>
#include <string.h>

#include "keeper.h"
#include "../shm.h"

uint8_t keeper_takes[PTT_EV_BUILTIN_COUNT];

struct kept {
	uint32_t id, pid;
	uint64_t sub;     /* what it is about: tid, target, base, object (0: the process) */
	uint32_t *words;  /* NULL: dropped */
	uint32_t n;
};

struct keeper {
	struct kept *v;   /* oldest first; dropped ones stay until compacted */
	size_t n, cap, dropped;
	uint32_t *map;    /* open addressing: 1 + index in v of a live record, 0 empty */
	size_t map_cap;
	uint64_t serial;  /* for records never replaced (process_exec) */
};

struct keeper *keeper_new(void)
{
	static const unsigned ids[] = { PTT_EV_PROCESS_BEGIN, PTT_EV_PROCESS_EXEC, PTT_EV_PROCESS_EXIT, PTT_EV_MODULE,
					PTT_EV_THREAD_BEGIN, PTT_EV_THREAD_END, PTT_EV_THREAD_NAME, PTT_EV_OBJECT_NAME };
	for (size_t i = 0; i < sizeof ids / sizeof ids[0]; i++)
		keeper_takes[ids[i]] = 1;
	return calloc(1, sizeof(struct keeper));
}

void keeper_free(struct keeper *k)
{
	if (!k)
		return;
	for (size_t i = 0; i < k->n; i++)
		free(k->v[i].words);
	free(k->v);
	free(k->map);
	free(k);
}

static size_t slot_of(uint32_t id, uint32_t pid, uint64_t sub, size_t cap)
{
	uint64_t h = (sub * 0x9E3779B97F4A7C15ull) ^ ((uint64_t)pid << 20) ^ id;
	h ^= h >> 29;
	return (size_t)(h * 0xBF58476D1CE4E5B9ull >> 17) & (cap - 1);
}

/* The map slot of (id, pid, sub): where it is, or the empty slot where it would go. */
static size_t find(const struct keeper *k, uint32_t id, uint32_t pid, uint64_t sub)
{
	size_t j = slot_of(id, pid, sub, k->map_cap);
	while (k->map[j]) {
		const struct kept *e = &k->v[k->map[j] - 1];
		if (e->id == id && e->pid == pid && e->sub == sub)
			break;
		j = (j + 1) & (k->map_cap - 1);
	}
	return j;
}

/* Rebuild the map (and drop the dropped records) with room for twice the live ones. */
static int rebuild(struct keeper *k)
{
	size_t live = 0;
	for (size_t i = 0; i < k->n; i++)
		if (k->v[i].words)
			k->v[live++] = k->v[i];
	k->n = live;
	k->dropped = 0;
	size_t cap = 64;
	while (cap < (live + 1) * 2)
		cap *= 2;
	uint32_t *m = calloc(cap, sizeof *m);
	if (!m)
		return -1;
	free(k->map);
	k->map = m;
	k->map_cap = cap;
	for (size_t i = 0; i < live; i++)
		k->map[find(k, k->v[i].id, k->v[i].pid, k->v[i].sub)] = (uint32_t)i + 1;
	return 0;
}

static void drop_at(struct keeper *k, size_t j)
{
	struct kept *e = &k->v[k->map[j] - 1];
	free(e->words);
	e->words = NULL;
	k->dropped++;
	/* backward-shift deletion keeps every probe chain whole */
	size_t i = j;
	for (;;) {
		k->map[i] = 0;
		size_t n = i;
		for (;;) {
			n = (n + 1) & (k->map_cap - 1);
			if (!k->map[n])
				return;
			const struct kept *o = &k->v[k->map[n] - 1];
			size_t home = slot_of(o->id, o->pid, o->sub, k->map_cap);
			if ((n > i && (home <= i || home > n)) || (n < i && home <= i && home > n))
				break;
		}
		k->map[i] = k->map[n];
		i = n;
	}
}

static void drop(struct keeper *k, uint32_t id, uint32_t pid, uint64_t sub)
{
	if (!k->map_cap)
		return;
	size_t j = find(k, id, pid, sub);
	if (k->map[j])
		drop_at(k, j);
}

static void drop_process(struct keeper *k, uint32_t pid)
{
	for (size_t i = 0; i < k->n; i++)
		if (k->v[i].words && k->v[i].pid == pid)
			drop(k, k->v[i].id, pid, k->v[i].sub);
}

static void add(struct keeper *k, uint32_t id, uint32_t pid, uint64_t sub, const uint32_t *rec, uint32_t n)
{
	if (k->map_cap)
		drop(k, id, pid, sub); /* the newer one replaces it, at the end of the order */
	if ((k->n + 1) * 2 > k->map_cap || (k->dropped > 64 && k->dropped * 2 > k->n)) {
		if (rebuild(k))
			return;
	}
	if (PTT_GROW(k->v, &k->cap, k->n + 1) != 0)
		return;
	uint32_t *w = malloc((size_t)n * 4);
	if (!w)
		return; /* memory is short: that name is not told again */
	memcpy(w, rec, (size_t)n * 4);
	k->v[k->n] = (struct kept){ id, pid, sub, w, n };
	k->map[find(k, id, pid, sub)] = (uint32_t)++k->n;
}

static uint64_t arg64(const uint32_t *rec) { return (uint64_t)rec[PTT_REC_HDR_WORDS + 1] << 32 | rec[PTT_REC_HDR_WORDS]; }

void keeper_take(struct keeper *k, const uint32_t *rec)
{
	if (!k)
		return;
	uint32_t id = ptt_rec_id(rec[0]), n = ptt_rec_len(rec[0]), pid = rec[3], tid = rec[4];
	if (n < (uint32_t)PTT_REC_MIN_WORDS + ptt_builtin_type(id)->words)
		return;
	switch (id) {
	case PTT_EV_PROCESS_BEGIN:
		drop_process(k, pid); /* a new process, or a new image (exec): what was kept of it is gone */
		add(k, id, pid, 0, rec, n);
		break;
	case PTT_EV_PROCESS_EXEC:
		add(k, id, pid, ++k->serial, rec, n);
		break;
	case PTT_EV_PROCESS_EXIT:
		drop_process(k, pid);
		break;
	case PTT_EV_MODULE:
	case PTT_EV_OBJECT_NAME:
		add(k, id, pid, arg64(rec), rec, n);
		break;
	case PTT_EV_THREAD_BEGIN:
		add(k, id, pid, tid, rec, n);
		break;
	case PTT_EV_THREAD_NAME:
		add(k, id, pid, rec[PTT_REC_HDR_WORDS], rec, n);
		break;
	case PTT_EV_THREAD_END:
		drop(k, PTT_EV_THREAD_BEGIN, pid, tid);
		drop(k, PTT_EV_THREAD_NAME, pid, tid);
		break;
	default:
		break;
	}
}

/* The keeper's own account of live threads: tid if its thread_begin is kept, else one of pid's that is, else 0. */
static uint32_t own_teller(const struct keeper *k, uint32_t pid, uint32_t tid)
{
	if (k->map_cap && k->map[find(k, PTT_EV_THREAD_BEGIN, pid, tid)])
		return tid;
	if (k->map_cap && k->map[find(k, PTT_EV_THREAD_BEGIN, pid, pid)])
		return pid;
	for (size_t i = 0; i < k->n; i++)
		if (k->v[i].words && k->v[i].id == PTT_EV_THREAD_BEGIN && k->v[i].pid == pid)
			return (uint32_t)k->v[i].sub;
	return 0;
}

long keeper_write(struct keeper *k, struct ptt_writer *w, uint64_t ticks,
		  uint32_t (*teller)(void *ctx, const uint32_t *rec, uint32_t pid, uint32_t tid), void *ctx)
{
	long written = 0;
	uint32_t buf[PTT_REC_MAX_WORDS];
	for (size_t i = 0; k && i < k->n; i++) {
		const struct kept *e = &k->v[i];
		if (!e->words || e->n > PTT_REC_MAX_WORDS)
			continue;
		uint32_t by = e->words[4];
		if (e->id == PTT_EV_THREAD_BEGIN || e->id == PTT_EV_THREAD_NAME)
			by = (uint32_t)e->sub; /* about one thread: told by that thread, while it lives */
		uint32_t t = teller ? teller(ctx, e->words, e->pid, by) : own_teller(k, e->pid, by);
		if (!t || ((e->id == PTT_EV_THREAD_BEGIN || e->id == PTT_EV_THREAD_NAME) && t != by))
			continue; /* no thread left to tell it */
		if (!w) { /* counting */
			written++;
			continue;
		}
		memcpy(buf, e->words, (size_t)e->n * 4);
		buf[1] = (uint32_t)ticks;
		buf[2] = (uint32_t)(ticks >> 32);
		buf[4] = t;
		buf[e->n - 1] = ptt_rec_checksum(buf, e->n - 1);
		int rc = ptt_writer_record(w, buf, e->n);
		if (rc)
			return rc;
		written++;
	}
	return written;
}

size_t keeper_count(const struct keeper *k) { return k ? k->n - k->dropped : 0; }

uint64_t keeper_from_log(struct keeper *k, const struct ptt_shm *s, int (*also)(void *ctx, const uint32_t *rec), void *ctx)
{
	uint64_t used = __atomic_load_n(&s->names_used, __ATOMIC_ACQUIRE), pos = 0, unread = 0;
	if (used > PTT_NAMES_WORDS)
		used = PTT_NAMES_WORDS;
	while (pos < used) {
		uint32_t w0 = __atomic_load_n(&s->names[pos], __ATOMIC_ACQUIRE), n = ptt_rec_len(w0);
		if (!ptt_rec_marked(w0) || n < PTT_REC_MIN_WORDS || pos + n > used)
			break; /* a record still being written: the ones after it wait for the next snapshot */
		const uint32_t *rec = s->names + pos;
		pos += n;
		if (ptt_rec_checksum(rec, n - 1) != rec[n - 1] || ptt_rec_id(w0) >= PTT_EV_BUILTIN_COUNT ||
		    !keeper_takes[ptt_rec_id(w0)]) {
			unread++;
			continue;
		}
		if (also)
			also(ctx, rec);
		keeper_take(k, rec);
	}
	for (; pos < used; unread++) { /* count what is left, by lengths where they are written */
		uint32_t n = ptt_rec_len(__atomic_load_n(&s->names[pos], __ATOMIC_ACQUIRE));
		if (n < PTT_REC_MIN_WORDS)
			break;
		pos += n;
	}
	return unread + __atomic_load_n(&s->names_lost, __ATOMIC_RELAXED);
}

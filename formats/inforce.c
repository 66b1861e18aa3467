/* inforce.c - the records in force at a point of a trace (inforce.h): the namings, and the records
 * that opened the holds, waits and tracer stalls in force, with their stacks. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ptt_trace.h"

enum { TAKES_NAME = 1, TAKES_STATE = 2 };

/* A frame in force: the record that opened it (an acquisition that took, a request not answered yet). */
#define KFRAME_WORDS 16 /* the longest record that opens a frame (futex_wait_req, thread_join) is 14 */
struct kframe {
	uint64_t obj, seq;  /* obj: the first argument (a lock's address, a join's handle); a cond wait's
			       outcome: its mutex; seq: order of arrival (of names and frames) */
	uint64_t pos;       /* the caller's position of the record (ptt_inforce_take) */
	uint32_t n;
	uint8_t wait;       /* 0 a hold, 1 a wait, 2 a tracer stall */
	uint32_t stack;     /* the stack record before it (a hold after a wait: the wait's), 0 none */
	uint32_t words[KFRAME_WORDS];
};
struct kthread {
	uint32_t pid, tid;
	struct kframe *f;   /* oldest first */
	unsigned n, cap;
	uint32_t pending;   /* a stack record's stack, for the thread's next event (k->fast.npending counts them) */
};

struct kept {
	uint32_t id, pid;
	uint64_t sub;     /* what it is about: tid, target, base, object (0: the process) */
	uint32_t *words;  /* NULL: dropped */
	uint64_t seq, pos; /* order of arrival (of names and frames), the caller's position */
	uint32_t n;
	uint32_t next;    /* 1 + the index of the next live record whose key agrees (kept_key), 0 none */
};

struct ptt_inforce {
	struct ptt_inforce_fast fast; /* first: read by ptt_inforce_see (inforce.h) */
	/* per builtin id, for the state: 1 + the word of its ret argument, of its mutex argument after the
	 * first (0: none); its role and class; the words its records have at least */
	uint8_t ret_word[PTT_EV_BUILTIN_COUNT], mutex_word[PTT_EV_BUILTIN_COUNT];
	uint8_t role_of[PTT_EV_BUILTIN_COUNT], cls_of[PTT_EV_BUILTIN_COUNT], min_words[PTT_EV_BUILTIN_COUNT];
	struct kept *v;   /* oldest first; dropped ones stay until compacted */
	size_t n, cap, dropped;
	struct ptt_map map; /* kept_key -> 1 + index in v of the newest live record with that key (a chain by next) */
	uint64_t serial;  /* for records never replaced (process_exec) */
	struct kthread *thr; /* threads that had a frame (their entries stay; tids are reused) */
	size_t nthr, capthr;
	struct ptt_map tmap; /* (pid, tid) -> 1 + index in thr */
	uint64_t seq;
	struct kthread *last; /* the thread looked up last (a thread's records come in runs) */
	struct ptt_map signals; /* ptt_obj_key of the semaphores posted for another thread -> 1 */
	struct kinfer *inf;     /* ptt_inforce_infer_thread's: the holds found in force before the records taken */
	uint64_t forgotten; /* frames forgotten at PTT_FRAMES_MAX (or read as forgotten in a limit record) */
	uint32_t forgot_pid, forgot_tid; /* the thread that forgot one last */
};

/*
 * What ptt_inforce_infer_write needs (inforce.h): each cut thread's start, the
 * releases that found no hold of their thread (the holds in force at its
 * start), and per object the latest acquisitions of it.
 */
struct kfound {
	uint32_t pid, tid;
	uint64_t obj, first, seq; /* first: the thread's start (ticks); seq: the release's order */
	uint8_t cls, shared, habit; /* shared: another thread took it shared meanwhile; habit: the thread's
				       own acquisitions after, 1 shared, 2 exclusive, 3 both */
	uint32_t next;              /* 1 + the next found hold of the same object, 0 none */
};
struct kobj {
	uint64_t excl_ts, shared_ts; /* the latest exclusive and shared acquisitions, by excl_tid, shared_tid */
	uint32_t excl_tid, shared_tid;
	uint8_t sem_lock;            /* a semaphore posted by a thread that took it: used as a lock */
	uint32_t found;              /* 1 + its first found hold, 0 none */
};
struct kinfer {
	struct ptt_map starts;       /* (pid, tid) of a cut thread -> 1 + its first record's ticks */
	struct ptt_map objs;         /* ptt_obj_key -> struct kobj */
	struct kfound *v;
	size_t n, cap;
	uint64_t seq;
};

/* The words of type t's ret argument and of its mutex argument after the first: 1 + the word after the header, 0 none. */
static void layout(const struct ptt_type *t, uint8_t *ret, uint8_t *mutex)
{
	*ret = *mutex = 0;
	for (unsigned a = 0, w = 0; a < t->nargs; w += ptt_arg_kind_words(t->argkind[a++])) {
		if (t->argid[a] == PTT_ARGNAME_RET && !*ret)
			*ret = (uint8_t)(1 + w);
		/* a mutex after the first argument: the one a cond wait gives up and takes again (a
		 * mutex's own request names it first: asking for it gives up nothing) */
		if (t->argid[a] == PTT_ARGNAME_MUTEX && t->argkind[a] == PTT_ARG_PTR && a > 0 && !*mutex)
			*mutex = (uint8_t)(1 + w);
	}
}

struct ptt_inforce *ptt_inforce_new(void)
{
	struct ptt_inforce *k = calloc(1, sizeof *k);
	if (!k)
		return NULL;
	/* the namings, and what a stack needs to be read: its frames, and CPython's code objects */
	static const unsigned ids[] = { PTT_EV_PROCESS_BEGIN, PTT_EV_PROCESS_EXEC, PTT_EV_PROCESS_EXIT, PTT_EV_MODULE,
					PTT_EV_MODULE_BUILD_ID, PTT_EV_THREAD_BEGIN, PTT_EV_THREAD_END, PTT_EV_THREAD_NAME, PTT_EV_OBJECT_NAME,
					PTT_EV_STACK_FRAMES, PTT_EV_PY_RUNTIME, PTT_EV_PY_CODE, PTT_EV_STACK, PTT_EV_MAP_SHARED,
					PTT_EV_UNMAP_SHARED };
	for (size_t i = 0; i < sizeof ids / sizeof ids[0]; i++)
		k->fast.takes[ids[i]] = TAKES_NAME;
	/* not names: a loss makes it forget a thread's frames; a limit tells frames forgotten before; a
	 * tracer stall opens a frame of its own */
	k->fast.takes[PTT_EV_REC_LOST] = k->fast.takes[PTT_EV_LIMIT] = TAKES_NAME;
	k->fast.takes[PTT_EV_TRACER_STALL] = k->fast.takes[PTT_EV_TRACER_STALL_END] = TAKES_NAME;
	for (unsigned id = 0; id < PTT_EV_BUILTIN_COUNT; id++) { /* the records that open or close a frame */
		const struct ptt_type *t = ptt_builtin_type(id);
		if (t) {
			k->role_of[id] = t->role;
			k->cls_of[id] = t->cls;
			k->min_words[id] = (uint8_t)(PTT_REC_MIN_WORDS + t->words);
		}
		if (!t || t->source != PTT_SRC_PTHREAD || !t->nargs || t->argkind[0] != PTT_ARG_PTR)
			continue;
		switch (t->role) {
		case PTT_ROLE_REQUEST: case PTT_ROLE_REQUEST_SHARED: case PTT_ROLE_ACQUIRE: case PTT_ROLE_SHARED:
		case PTT_ROLE_TRY: case PTT_ROLE_TRY_SHARED: case PTT_ROLE_WAIT_END: case PTT_ROLE_RELEASE:
			break;
		case PTT_ROLE_POST:
		case PTT_ROLE_INIT:
		case PTT_ROLE_DESTROY:
			if (t->cls == PTT_CLASS_SEM)
				break;
			continue;
		default:
			continue;
		}
		k->fast.takes[id] = TAKES_STATE;
		layout(t, &k->ret_word[id], &k->mutex_word[id]);
	}
	return k;
}

void ptt_inforce_free(struct ptt_inforce *k)
{
	if (!k)
		return;
	for (size_t i = 0; i < k->n; i++)
		free(k->v[i].words);
	free(k->v);
	ptt_map_free(&k->map);
	for (size_t i = 0; i < k->nthr; i++) {
		k->fast.npending -= k->thr[i].pending != 0;
		free(k->thr[i].f);
	}
	free(k->thr);
	ptt_map_free(&k->tmap);
	ptt_map_free(&k->signals);
	if (k->inf) {
		ptt_map_free(&k->inf->starts);
		ptt_map_free_with(&k->inf->objs, free);
		free(k->inf->v);
		free(k->inf);
	}
	free(k);
}

/* The map key of (id, pid, sub): a mix of the three (records whose keys agree share a chain, struct kept's next). */
static uint64_t kept_key(uint32_t id, uint32_t pid, uint64_t sub)
{
	uint64_t h = (sub * 0x9E3779B97F4A7C15ull) ^ ((uint64_t)pid << 20) ^ id;
	h ^= h >> 29;
	return h * 0xBF58476D1CE4E5B9ull;
}

/* 1 + the index in v of the live record (id, pid, sub), 0 none; *prev: 1 + the one before it in its chain, 0 the head
 * (a dropped record may stay in a chain: skipped). */
static size_t find(const struct ptt_inforce *k, uint32_t id, uint32_t pid, uint64_t sub, size_t *prev)
{
	size_t p = 0;
	for (size_t i = (uintptr_t)ptt_map_get(&k->map, kept_key(id, pid, sub)); i; p = i, i = k->v[i - 1].next) {
		const struct kept *e = &k->v[i - 1];
		if (e->words && e->id == id && e->pid == pid && e->sub == sub) {
			if (prev)
				*prev = p;
			return i;
		}
	}
	return 0;
}

/* Put record i (0-based) at the head of its key's chain: 0, or PTT_E_NOMEM. */
static int link_kept(struct ptt_inforce *k, size_t i)
{
	struct kept *e = &k->v[i];
	uint64_t key = kept_key(e->id, e->pid, e->sub);
	e->next = (uint32_t)(uintptr_t)ptt_map_get(&k->map, key);
	return ptt_map_put(&k->map, key, (void *)(uintptr_t)(i + 1));
}

/* Drop the dropped records from v and index the live ones again. */
static int rebuild(struct ptt_inforce *k)
{
	size_t live = 0;
	for (size_t i = 0; i < k->n; i++)
		if (k->v[i].words)
			k->v[live++] = k->v[i];
	k->n = live;
	k->dropped = 0;
	ptt_map_free(&k->map);
	for (size_t i = 0; i < live; i++)
		if (link_kept(k, i) != 0)
			return -1;
	return 0;
}

static void drop(struct ptt_inforce *k, uint32_t id, uint32_t pid, uint64_t sub)
{
	size_t prev, i = find(k, id, pid, sub, &prev);
	if (!i)
		return;
	struct kept *e = &k->v[i - 1];
	int unlinked = 1;
	if (prev)
		k->v[prev - 1].next = e->next;
	else if (e->next) /* no memory to grow the map: e stays in its chain, dropped, until rebuild */
		unlinked = ptt_map_put(&k->map, kept_key(id, pid, sub), (void *)(uintptr_t)e->next) == 0;
	else
		ptt_map_del(&k->map, kept_key(id, pid, sub));
	free(e->words);
	e->words = NULL;
	if (unlinked)
		e->next = 0;
	k->dropped++;
}

static void drop_process(struct ptt_inforce *k, uint32_t pid)
{
	for (size_t i = 0; i < k->n; i++)
		if (k->v[i].words && k->v[i].pid == pid)
			drop(k, k->v[i].id, pid, k->v[i].sub);
}

static void add(struct ptt_inforce *k, uint32_t id, uint32_t pid, uint64_t sub, const uint32_t *rec, uint32_t n,
		uint64_t pos)
{
	drop(k, id, pid, sub); /* the newer one replaces it, at the end of the order */
	if (k->dropped > 64 && k->dropped * 2 > k->n && rebuild(k) != 0)
		return;
	if (k->n >= UINT32_MAX - 1 || PTT_GROW(k->v, &k->cap, k->n + 1) != 0)
		return;
	uint32_t *w = malloc((size_t)n * 4);
	if (!w)
		return; /* memory is short: that name is not told again */
	memcpy(w, rec, (size_t)n * 4);
	k->v[k->n] = (struct kept){ id, pid, sub, w, ++k->seq, pos, n, 0 };
	if (link_kept(k, k->n) != 0) {
		free(w);
		return;
	}
	k->n++;
}

static uint64_t arg64(const uint32_t *rec) { return (uint64_t)rec[PTT_REC_HDR_WORDS + 1] << 32 | rec[PTT_REC_HDR_WORDS]; }

/* ---- the holds and waits in force (inforce.h) ---- */

/* The frames of thread (pid, tid); NULL if it has none and create is 0 (or memory is short). */
static struct kthread *kthread_of(struct ptt_inforce *k, uint32_t pid, uint32_t tid, int create)
{
	if (k->last && k->last->tid == tid && k->last->pid == pid)
		return k->last;
	uint64_t key = (uint64_t)pid << 32 | tid;
	uintptr_t i = (uintptr_t)ptt_map_get(&k->tmap, key);
	if (i)
		return k->last = &k->thr[i - 1];
	if (!create || PTT_GROW(k->thr, &k->capthr, k->nthr + 1) != 0 ||
	    ptt_map_put(&k->tmap, key, (void *)(uintptr_t)(k->nthr + 1)) != 0)
		return NULL;
	k->thr[k->nthr] = (struct kthread){ pid, tid, NULL, 0, 0, 0 };
	return k->last = &k->thr[k->nthr++];
}

static void kremove(struct kthread *t, unsigned i)
{
	memmove(t->f + i, t->f + i + 1, (t->n - i - 1) * sizeof t->f[0]);
	t->n--;
}

static void kclear(struct ptt_inforce *k, struct kthread *t)
{
	while (t && t->n)
		kremove(t, t->n - 1);
	if (t && t->pending) {
		t->pending = 0;
		k->fast.npending--;
	}
}

/* The topmost frame of t on obj that is a wait (wait 1) or a hold (wait 0), or -1. */
static int kfind(const struct kthread *t, uint64_t obj, int wait)
{
	for (unsigned i = t ? t->n : 0; i-- > 0;)
		if (t->f[i].obj == obj && t->f[i].wait == wait)
			return (int)i;
	return -1;
}

static void kpush(struct ptt_inforce *k, struct kthread *t, const uint32_t *rec, uint32_t n, uint64_t obj, int wait,
		  uint32_t stack, uint64_t pos)
{
	if (n > KFRAME_WORDS)
		return; /* none is: a reader would take the frame's end as a release never taken */
	if (t->n >= PTT_FRAMES_MAX) { /* the one cap (ptt_trace.h): the oldest is forgotten, told as a limit */
		kremove(t, 0);
		k->forgotten++;
		k->forgot_pid = t->pid;
		k->forgot_tid = t->tid;
	}
	if (t->n == t->cap) {
		unsigned cap = t->cap ? t->cap * 2 : 4;
		struct kframe *nf = realloc(t->f, cap * sizeof *nf);
		if (!nf)
			return;
		t->f = nf;
		t->cap = cap;
	}
	struct kframe *f = &t->f[t->n++];
	f->obj = obj;
	f->seq = ++k->seq;
	f->pos = pos;
	f->n = n;
	f->wait = (uint8_t)wait;
	f->stack = stack;
	memcpy(f->words, rec, (size_t)n * 4);
}

/* Forget t's frame on obj: the stack it was opened with (0: none, or no such frame). */
static uint32_t kdrop(struct kthread *t, uint64_t obj, int wait)
{
	int i = kfind(t, obj, wait);
	if (i < 0)
		return 0;
	uint32_t stack = t->f[i].stack;
	kremove(t, (unsigned)i);
	return stack;
}

/* The stack record before t's event, taken by it (0: none). */
static uint32_t take_pending(struct ptt_inforce *k, struct kthread *t)
{
	uint32_t stack = t ? t->pending : 0;
	if (stack) {
		t->pending = 0;
		k->fast.npending--;
	}
	return stack;
}

static int is_signal(const struct ptt_inforce *k, uint32_t pid, uint64_t obj)
{
	return ptt_map_get(&k->signals, ptt_obj_key(pid, obj)) != NULL;
}

static void mark_signal(struct ptt_inforce *k, uint32_t pid, uint64_t obj)
{
	ptt_map_put(&k->signals, ptt_obj_key(pid, obj), (void *)1); /* no memory: replayed as a lock's, as before */
}

static void clear_process(struct ptt_inforce *k, uint32_t pid)
{
	for (size_t i = 0; i < k->nthr; i++)
		if (k->thr[i].pid == pid)
			kclear(k, &k->thr[i]);
}

/* ---- the holds in force at a cut thread's start (ptt_inforce_infer_thread, inforce.h) ---- */

static uint64_t ticks_of(const uint32_t *rec) { return ptt_rec_ticks(rec); }

static struct kobj *kobj_of(struct kinfer *inf, uint32_t pid, uint64_t obj)
{
	uint64_t key = ptt_obj_key(pid, obj);
	struct kobj *o = ptt_map_get(&inf->objs, key);
	if (!o && (o = calloc(1, sizeof *o)) != NULL && ptt_map_put(&inf->objs, key, o) != 0) {
		free(o);
		o = NULL;
	}
	return o;
}

/* The record's thread took obj (shared or not): what the holds found before it need to know. */
static void infer_acquired(struct kinfer *inf, const uint32_t *rec, uint64_t obj, int shared)
{
	struct kobj *o = kobj_of(inf, rec[3], obj);
	if (!o)
		return;
	if (shared) {
		o->shared_ts = ticks_of(rec);
		o->shared_tid = rec[4];
	} else {
		o->excl_ts = ticks_of(rec);
		o->excl_tid = rec[4];
	}
	for (uint32_t i = o->found; i; i = inf->v[i - 1].next)
		if (inf->v[i - 1].tid == rec[4])
			inf->v[i - 1].habit |= shared ? 1 : 2;
}

/*
 * The record's thread gives obj (of class cls) up, holding it by none of its
 * records: if its history is cut, it held obj since before its start, unless
 * another thread took obj exclusively since then (a semaphore: any number).
 */
static void infer_released(struct kinfer *inf, const uint32_t *rec, uint64_t obj, unsigned cls)
{
	uintptr_t start = (uintptr_t)ptt_map_get(&inf->starts, (uint64_t)rec[3] << 32 | rec[4]);
	struct kobj *o = start ? kobj_of(inf, rec[3], obj) : NULL;
	uint64_t first = start - 1;
	if (!o || (cls != PTT_CLASS_SEM && o->excl_tid && o->excl_tid != rec[4] && o->excl_ts >= first))
		return;
	if (PTT_GROW(inf->v, &inf->cap, inf->n + 1) != 0)
		return;
	int shared = o->shared_tid && o->shared_tid != rec[4] && o->shared_ts >= first; /* only readers share it */
	inf->v[inf->n] = (struct kfound){ rec[3], rec[4], obj, first, ++inf->seq, (uint8_t)cls, (uint8_t)shared, 0, o->found };
	o->found = (uint32_t)++inf->n;
}

/*
 * A record that opens or closes a frame, paired by role as the model does
 * (convert/lib/model.h), without judging it: the model interprets the records
 * when it reads them (a semaphore unit is a hold or not by its rules).
 */
static inline __attribute__((always_inline)) void state_take(struct ptt_inforce *k, const uint32_t *rec, uint32_t id, uint32_t n, uint64_t pos,
		       unsigned ret_word, unsigned mutex_word)
{
	unsigned role = k->role_of[id], cls = k->cls_of[id];
	uint32_t pid = rec[3], tid = rec[4];
	uint64_t obj = arg64(rec);
	unsigned rw = ret_word ? PTT_REC_HDR_WORDS + ret_word - 1u : 0, mw = mutex_word ? PTT_REC_HDR_WORDS + mutex_word - 1u : 0;
	int32_t ret = rw && rw < n - 1 ? (int32_t)rec[rw] : 0; /* the last word is the checksum */
	uint64_t mutex = mw && mw + 1 < n - 1 ? (uint64_t)rec[mw + 1] << 32 | rec[mw] : 0;
	struct kthread *t = kthread_of(k, pid, tid, 0);
	uint32_t stack = take_pending(k, t), waited;
	switch (role) {
	case PTT_ROLE_REQUEST:
	case PTT_ROLE_REQUEST_SHARED:
		for (unsigned i = t ? t->n : 0; i-- > 0;) /* an earlier call returned unseen */
			if (t->f[i].wait == 1)
				kremove(t, i);
		if (mutex && k->inf && kfind(t, mutex, 0) < 0)
			infer_released(k->inf, rec, mutex, PTT_CLASS_MUTEX);
		if (mutex)
			kdrop(t, mutex, 0); /* a cond wait gives its mutex up */
		if ((t = t ? t : kthread_of(k, pid, tid, 1)))
			kpush(k, t, rec, n, obj, 1, stack, pos);
		break;
	case PTT_ROLE_ACQUIRE:
	case PTT_ROLE_SHARED:
	case PTT_ROLE_TRY:
	case PTT_ROLE_TRY_SHARED:
		waited = kdrop(t, obj, 1); /* a hold taken after a wait is where the wait began (the model's rule) */
		if (cls == PTT_CLASS_THREAD || !(ret == 0 || (ret == EOWNERDEAD && cls != PTT_CLASS_SEM)))
			break;
		if (k->inf)
			infer_acquired(k->inf, rec, obj, role == PTT_ROLE_SHARED || role == PTT_ROLE_TRY_SHARED);
		if (cls == PTT_CLASS_SEM && is_signal(k, pid, obj))
			break; /* a unit of a signal, no hold (the model's rule): nothing to tell */
		if (cls == PTT_CLASS_SEM)
			kdrop(t, obj, 0); /* a semaphore used as a lock is held once */
		if ((t = t ? t : kthread_of(k, pid, tid, 1)))
			kpush(k, t, rec, n, obj, 0, waited ? waited : stack, pos);
		break;
	case PTT_ROLE_WAIT_END:
		waited = kdrop(t, obj, 1);
		if (mutex && k->inf)
			infer_acquired(k->inf, rec, mutex, 0);
		if (mutex && (t = t ? t : kthread_of(k, pid, tid, 1)))
			kpush(k, t, rec, n, mutex, 0, waited, pos); /* a cond wait's outcome holds its mutex again, whatever ret */
		break;
	case PTT_ROLE_RELEASE:
		if (ret == 0 && k->inf && kfind(t, obj, 0) < 0)
			infer_released(k->inf, rec, obj, cls);
		if (ret == 0)
			kdrop(t, obj, 0);
		break;
	case PTT_ROLE_INIT: /* a semaphore initialised to other than 1 is no lock: a signal (the model's rule) */
	case PTT_ROLE_DESTROY:
		if (ret != 0)
			break;
		ptt_map_del(&k->signals, ptt_obj_key(pid, obj));
		if (role == PTT_ROLE_INIT && id == PTT_EV_SEM_INIT && n > PTT_REC_HDR_WORDS + 3 && rec[PTT_REC_HDR_WORDS + 2] != 1)
			mark_signal(k, pid, obj);
		break;
	case PTT_ROLE_POST:
		/* a semaphore: the poster gives its unit back (used as a lock), or posts for another thread
		 * that took one: a signal from then on, whose units the model holds not (model.h) */
		if (ret != 0)
			break;
		if (kfind(t, obj, 0) >= 0) {
			struct kobj *o = k->inf ? kobj_of(k->inf, pid, obj) : NULL;
			if (o)
				o->sem_lock = 1;
			kdrop(t, obj, 0);
			break;
		}
		int other = 0;
		for (size_t i = 0; i < k->nthr; i++) {
			struct kthread *u = &k->thr[i];
			if (u->pid == pid && kfind(u, obj, 0) >= 0) {
				mark_signal(k, pid, obj);
				other = 1;
				for (int j; (j = kfind(u, obj, 0)) >= 0;)
					kremove(u, (unsigned)j);
			}
		}
		if (!other && k->inf) /* a unit taken before the start, or a signal: told apart at the end */
			infer_released(k->inf, rec, obj, PTT_CLASS_SEM);
		break;
	default:
		break;
	}
}

void ptt_inforce_take(struct ptt_inforce *k, const uint32_t *rec, uint64_t pos)
{
	ptt_inforce_take_as(k, rec, pos, NULL);
}

void ptt_inforce_take_as(struct ptt_inforce *k, const uint32_t *rec, uint64_t pos, const struct ptt_type *ty)
{
	if (!k)
		return;
	uint32_t id = ptt_rec_id(rec[0]), n = ptt_rec_len(rec[0]), pid = rec[3], tid = rec[4];
	struct kthread *t;
	if (id >= PTT_EV_BUILTIN_COUNT || !k->fast.takes[id])
		return;
	const struct ptt_type *bt = ty ? ptt_builtin_type(id) : NULL; /* the recorder's records are the builtin's */
	if (bt && ty != bt && (ty->words != bt->words || ty->nargs != bt->nargs ||
			       memcmp(ty->argkind, bt->argkind, ty->nargs * sizeof ty->argkind[0]) != 0)) {
		/* a layout of its own (a text trace's, learnt from its lines): its first argument as the builtin's */
		if (!ty->nargs || !bt->nargs || ty->argkind[0] != bt->argkind[0] || n < (uint32_t)PTT_REC_MIN_WORDS + ty->words)
			return;
		if (k->fast.takes[id] == TAKES_STATE) {
			uint8_t rw, mw;
			layout(ty, &rw, &mw);
			state_take(k, rec, id, n, pos, rw, mw);
			return;
		}
	} else if (n < k->min_words[id]) {
		return;
	} else if (k->fast.takes[id] == TAKES_STATE) { /* the drain's path for every lock record */
		state_take(k, rec, id, n, pos, k->ret_word[id], k->mutex_word[id]);
		return;
	}
	switch (id) {
	case PTT_EV_REC_LOST: /* a thread's events lost: its holds and waits are not known any more */
		for (size_t i = 0; i < k->nthr; i++) /* the note names the thread by tid only */
			if (k->thr[i].tid == rec[PTT_REC_HDR_WORDS])
				kclear(k, &k->thr[i]);
		break;
	case PTT_EV_LIMIT: /* frames a file's writer forgot before its head (read again: told again) */
		if (rec[PTT_REC_HDR_WORDS] == PTT_LIMIT_FRAMES) {
			k->forgotten += (uint64_t)rec[PTT_REC_HDR_WORDS + 2] << 32 | rec[PTT_REC_HDR_WORDS + 1];
			k->forgot_pid = pid;
			k->forgot_tid = tid;
		}
		break;
	case PTT_EV_TRACER_STALL: /* the thread waits for room in its ring until its tracer_stall_end (the model's rule) */
		if ((t = kthread_of(k, pid, tid, 1)) != NULL)
			kpush(k, t, rec, n, 0, 2, 0, pos);
		break;
	case PTT_EV_TRACER_STALL_END:
		kdrop(kthread_of(k, pid, tid, 0), 0, 2);
		break;
	case PTT_EV_PROCESS_BEGIN:
		clear_process(k, pid);
		drop_process(k, pid); /* a new process, or a new image (exec): what was kept of it is gone */
		add(k, id, pid, 0, rec, n, pos);
		break;
	case PTT_EV_PROCESS_EXEC:
		add(k, id, pid, ++k->serial, rec, n, pos);
		break;
	case PTT_EV_PROCESS_EXIT:
		clear_process(k, pid);
		drop_process(k, pid);
		break;
	case PTT_EV_MODULE:
	case PTT_EV_MODULE_BUILD_ID:
	case PTT_EV_OBJECT_NAME:
	case PTT_EV_MAP_SHARED: /* by its address: a later part still knows the process's shared memory */
		add(k, id, pid, arg64(rec), rec, n, pos);
		break;
	case PTT_EV_UNMAP_SHARED: /* the mapping at that address (a part of one unmapped stays told whole) */
		drop(k, PTT_EV_MAP_SHARED, pid, arg64(rec));
		break;
	case PTT_EV_STACK_FRAMES: /* a stack's frames, six a record: by (stack, at) */
		add(k, id, pid, (uint64_t)rec[PTT_REC_HDR_WORDS] << 32 | rec[PTT_REC_HDR_WORDS + 1], rec, n, pos);
		break;
	case PTT_EV_PY_CODE: /* a code object, by its id */
		add(k, id, pid, rec[PTT_REC_HDR_WORDS], rec, n, pos);
		break;
	case PTT_EV_PY_RUNTIME:
		add(k, id, pid, 0, rec, n, pos);
		break;
	case PTT_EV_STACK: /* the stack of the thread's next event: a frame it opens keeps it */
		if ((t = kthread_of(k, pid, tid, 1)) != NULL) {
			k->fast.npending += !t->pending;
			t->pending = rec[PTT_REC_HDR_WORDS];
		}
		break;
	case PTT_EV_THREAD_BEGIN:
		add(k, id, pid, tid, rec, n, pos);
		break;
	case PTT_EV_THREAD_NAME:
		add(k, id, pid, rec[PTT_REC_HDR_WORDS], rec, n, pos);
		break;
	case PTT_EV_THREAD_END:
		drop(k, PTT_EV_THREAD_BEGIN, pid, tid);
		drop(k, PTT_EV_THREAD_NAME, pid, tid);
		kclear(k, kthread_of(k, pid, tid, 0));
		break;
	default:
		break;
	}
}

void ptt_inforce_unpend(struct ptt_inforce *k, const uint32_t *rec)
{
	const struct ptt_type *ty = ptt_builtin_type(ptt_rec_id(rec[0]));
	if (k && ptt_stack_pairing(ptt_rec_id(rec[0]), ty != NULL, ty ? ty->role : 0, ty ? ty->nargs : 0) == PTT_STACK_TAKE)
		take_pending(k, kthread_of(k, rec[3], rec[4], 0));
}

/* One record in force: a kept naming (e) or a frame (f), ordered by arrival. */
struct told {
	uint64_t seq;
	const struct kept *e;
	const struct kframe *f;
};

static int by_seq(const void *a, const void *b)
{
	uint64_t x = ((const struct told *)a)->seq, y = ((const struct told *)b)->seq;
	return x < y ? -1 : x > y;
}

/* A stack record of thread (pid, tid) naming stack, stamped at ticks, in s (PTT_REC_MIN_WORDS + 1 words). */
static void stack_record(uint32_t *s, uint32_t pid, uint32_t tid, uint32_t stack, uint64_t ticks)
{
	ptt_rec_put_header(s, ptt_rec_word0(PTT_EV_STACK, PTT_REC_MIN_WORDS + 1), ticks, pid, tid);
	s[PTT_REC_HDR_WORDS] = stack;
	ptt_rec_seal(s, PTT_REC_MIN_WORDS + 1);
}

/* The limit event (PTT_LIMIT_FRAMES) for count frames forgotten, by the thread that forgot one last, in r. */
static void limit_record(uint32_t *r, const struct ptt_inforce *k, uint64_t count, uint64_t ticks)
{
	enum { A = PTT_REC_HDR_WORDS, N = PTT_REC_MIN_WORDS + 7 };
	ptt_rec_put_header(r, ptt_rec_word0(PTT_EV_LIMIT, N), ticks, k->forgot_pid, k->forgot_tid);
	r[A] = PTT_LIMIT_FRAMES;
	r[A + 1] = (uint32_t)count;
	r[A + 2] = (uint32_t)(count >> 32);
	r[A + 3] = PTT_FRAMES_MAX;
	r[A + 4] = r[A + 5] = r[A + 6] = 0;
	ptt_rec_seal(r, N);
}

long ptt_inforce_foreach(struct ptt_inforce *k, int (*fn)(void *ctx, const struct ptt_inforce_rec *r), void *ctx)
{
	size_t n = 0;
	for (size_t i = 0; k && i < k->n; i++)
		n += k->v[i].words != NULL;
	for (size_t i = 0; k && i < k->nthr; i++)
		n += k->thr[i].n;
	struct told *v = n ? malloc(n * sizeof *v) : NULL;
	if (n && !v)
		return PTT_E_NOMEM;
	n = 0;
	for (size_t i = 0; k && i < k->n; i++)
		if (k->v[i].words)
			v[n++] = (struct told){ k->v[i].seq, &k->v[i], NULL };
	for (size_t i = 0; k && i < k->nthr; i++)
		for (unsigned j = 0; j < k->thr[i].n; j++)
			v[n++] = (struct told){ k->thr[i].f[j].seq, NULL, &k->thr[i].f[j] };
	if (n)
		qsort(v, n, sizeof *v, by_seq);
	uint32_t s[PTT_REC_MIN_WORDS + 7];
	uint64_t latest = 0;
	long told = 0;
	int rc = 0;
	for (size_t i = 0; i < n && !rc; i++) {
		struct ptt_inforce_rec r = { PTT_INFORCE_NAME, NULL, 0, 0, 0 };
		if (v[i].e) {
			r.words = v[i].e->words;
			r.n = v[i].e->n;
			r.pos = v[i].e->pos;
			if (v[i].e->id == PTT_EV_THREAD_BEGIN || v[i].e->id == PTT_EV_THREAD_NAME)
				r.about = (uint32_t)v[i].e->sub;
		} else {
			const struct kframe *f = v[i].f;
			if (f->stack) { /* the stack record that went before it, as the runtime writes it */
				stack_record(s, ptt_rec_pid(f->words), ptt_rec_tid(f->words), f->stack, ptt_rec_ticks(f->words));
				struct ptt_inforce_rec sr = { PTT_INFORCE_STACK, s, PTT_REC_MIN_WORDS + 1, f->pos, 0 };
				if ((rc = fn(ctx, &sr)) != 0)
					break;
				told++;
			}
			r = (struct ptt_inforce_rec){ PTT_INFORCE_FRAME, f->words, f->n, f->pos, 0 };
		}
		uint64_t ticks = ptt_rec_ticks(r.words);
		latest = ticks > latest ? ticks : latest;
		if ((rc = fn(ctx, &r)) == 0)
			told++;
	}
	free(v);
	for (size_t i = 0; k && i < k->nthr && !rc; i++) /* last: no record told before takes them */
		if (k->thr[i].pending) {
			stack_record(s, k->thr[i].pid, k->thr[i].tid, k->thr[i].pending, latest);
			struct ptt_inforce_rec r = { PTT_INFORCE_PENDING, s, PTT_REC_MIN_WORDS + 1, 0, 0 };
			if ((rc = fn(ctx, &r)) == 0)
				told++;
		}
	uint64_t forgotten = k ? k->forgotten : 0; /* all so far: the records told lack every one of them */
	if (!rc && forgotten) {
		limit_record(s, k, forgotten, latest);
		struct ptt_inforce_rec r = { PTT_INFORCE_LIMIT, s, PTT_REC_MIN_WORDS + 7, 0, 0 };
		if ((rc = fn(ctx, &r)) == 0)
			told++;
	}
	return rc ? rc : told;
}

uint64_t ptt_inforce_forgotten(const struct ptt_inforce *k)
{
	return k ? k->forgotten : 0;
}

/* Its own account of live threads: tid if its thread_begin is kept, else one of pid's that is, else 0. */
static uint32_t own_teller(const struct ptt_inforce *k, uint32_t pid, uint32_t tid)
{
	if (find(k, PTT_EV_THREAD_BEGIN, pid, tid, NULL))
		return tid;
	if (find(k, PTT_EV_THREAD_BEGIN, pid, pid, NULL))
		return pid;
	for (size_t i = 0; i < k->n; i++)
		if (k->v[i].words && k->v[i].id == PTT_EV_THREAD_BEGIN && k->v[i].pid == pid)
			return (uint32_t)k->v[i].sub;
	return 0;
}

struct head {
	const struct ptt_inforce *k;
	struct ptt_writer *w;
	uint64_t ticks;
	uint32_t (*teller)(void *ctx, const uint32_t *rec, uint32_t pid, uint32_t tid);
	void *ctx;
	long written;
	int (*put)(void *ctx, const uint32_t *rec, uint32_t n); /* ptt_inforce_tell's, instead of a writer */
	void *put_ctx;
};

/* ptt_inforce_write's: a naming told by the thread its teller names, the rest by their own thread. */
static int write_one(void *p, const struct ptt_inforce_rec *r)
{
	struct head *h = p;
	uint32_t by = ptt_rec_tid(r->words), pid = ptt_rec_pid(r->words);
	if (r->kind == PTT_INFORCE_NAME) {
		uint32_t about = r->about ? r->about : by; /* about one thread: told by that thread, while it lives */
		by = h->teller ? h->teller(h->ctx, r->words, pid, about) : own_teller(h->k, pid, about);
		if (!by || (r->about && by != r->about))
			return 0; /* no thread left to tell it */
	}
	if (r->n > PTT_REC_MAX_WORDS)
		return 0;
	if (h->w || h->put) {
		uint32_t buf[PTT_REC_MAX_WORDS];
		memcpy(buf, r->words, (size_t)r->n * 4);
		ptt_rec_put_header(buf, buf[0], h->ticks, pid, by);
		ptt_rec_seal(buf, r->n);
		int rc = h->put ? h->put(h->put_ctx, buf, r->n) : ptt_writer_record(h->w, buf, r->n);
		if (rc)
			return rc;
	}
	h->written++;
	return 0;
}

long ptt_inforce_write(struct ptt_inforce *k, struct ptt_writer *w, uint64_t ticks,
		       uint32_t (*teller)(void *ctx, const uint32_t *rec, uint32_t pid, uint32_t tid), void *ctx)
{
	struct head h = { k, w, ticks, teller, ctx, 0, NULL, NULL };
	long rc = ptt_inforce_foreach(k, write_one, &h);
	return rc < 0 ? rc : h.written;
}

long ptt_inforce_tell(struct ptt_inforce *k, uint64_t ticks, int (*put)(void *ctx, const uint32_t *rec, uint32_t n),
		      void *ctx)
{
	struct head h = { k, NULL, ticks, NULL, NULL, 0, put, ctx };
	long rc = ptt_inforce_foreach(k, write_one, &h);
	return rc < 0 ? rc : h.written;
}

int ptt_inforce_infer_thread(struct ptt_inforce *k, uint32_t pid, uint32_t tid, uint64_t first)
{
	if (!k || (!k->inf && !(k->inf = calloc(1, sizeof *k->inf))))
		return PTT_E_NOMEM;
	return ptt_map_put(&k->inf->starts, (uint64_t)pid << 32 | tid, (void *)(uintptr_t)(first + 1));
}

/* The acquisition (shared or not) of class cls that the readers know first: mutex_lock, rwlock_rdlock, ... (0: none). */
static unsigned acquisition_of(const struct ptt_inforce *k, unsigned cls, int shared)
{
	for (unsigned id = 0; id < PTT_EV_BUILTIN_COUNT; id++)
		if (k->fast.takes[id] == TAKES_STATE && k->cls_of[id] == cls &&
		    k->role_of[id] == (shared ? PTT_ROLE_SHARED : PTT_ROLE_ACQUIRE))
			return id;
	return 0;
}

/* By thread, its holds last found first (the reverse of their releases: nested holds were taken in that order). */
static int by_thread_nested(const void *a, const void *b)
{
	const struct kfound *x = a, *y = b;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return x->seq > y->seq ? -1 : x->seq < y->seq;
}

long ptt_inforce_infer_write(struct ptt_inforce *k, int (*tell)(void *ctx, const uint32_t *rec, uint32_t n), void *ctx)
{
	struct kinfer *inf = k ? k->inf : NULL;
	if (!inf || !inf->n)
		return 0;
	struct kfound *v = malloc(inf->n * sizeof *v);
	if (!v)
		return PTT_E_NOMEM;
	memcpy(v, inf->v, inf->n * sizeof *v);
	qsort(v, inf->n, sizeof *v, by_thread_nested);
	long told = 0;
	for (size_t i = 0; i < inf->n; i++) {
		const struct kfound *f = &v[i];
		int shared = 0;
		if (f->cls == PTT_CLASS_SEM) { /* a hold only where the semaphore is used as a lock, never as a signal */
			const struct kobj *o = ptt_map_get(&inf->objs, ptt_obj_key(f->pid, f->obj));
			if (!o || !o->sem_lock || is_signal(k, f->pid, f->obj))
				continue;
		} else if (f->cls == PTT_CLASS_RWLOCK) { /* read or write: told only when the records say */
			if (f->shared || f->habit == 1)
				shared = 1;
			else if (f->habit != 2)
				continue;
		}
		unsigned id = acquisition_of(k, f->cls, shared);
		uint32_t rec[PTT_REC_MAX_WORDS] = { 0 }, n = k->min_words[id];
		if (!id || n < PTT_REC_HDR_WORDS + 3)
			continue;
		ptt_rec_put_header(rec, ptt_rec_word0(id, n), f->first, f->pid, f->tid);
		rec[PTT_REC_HDR_WORDS] = (uint32_t)f->obj; /* ret 0 (it took), site 0 (not known) */
		rec[PTT_REC_HDR_WORDS + 1] = (uint32_t)(f->obj >> 32);
		ptt_rec_seal(rec, n);
		int rc = tell(ctx, rec, n);
		if (rc) {
			free(v);
			return rc;
		}
		told++;
	}
	free(v);
	return told;
}

size_t ptt_inforce_count(const struct ptt_inforce *k)
{
	size_t n = k ? k->n - k->dropped : 0;
	for (size_t i = 0; k && i < k->nthr; i++)
		n += k->thr[i].n;
	return n;
}

/* model.c - the one state model: replaying what each thread holds and waits for (rules in model.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"

const char *const mstate_name[MS_COUNT] = {
	"Running (outside traced waits)", "Blocked on mutex", "Holding mutex", "In condition wait",
	"At barrier", "Joining a thread", "Waiting on semaphore", "Waiting to read-lock", "Waiting to write-lock",
	"Holding read lock", "Holding write lock", "Holding spinlock", "Holding semaphore (as a lock)",
	"Waiting (outside the selection)", "Stalled by tracer", "Blocked on futex",
};
const char *const mstate_alias[MS_COUNT] = {
	"R", "MW", "MH", "CW", "BW", "JW", "SW", "RRW", "RWW", "RRH", "RWH", "SH", "SMH", "OW", "TS", "FW",
};
const char *const mstate_key[MS_COUNT] = {
	"running", "blocked_mutex", "holding_mutex", "cond_wait", "barrier_wait", "join", "sem_wait",
	"rwlock_read_wait", "rwlock_write_wait", "rwlock_read_hold", "rwlock_write_hold", "spin_hold",
	"sem_hold", "other_wait", "tracer_stall", "futex_wait",
};

/* the kind of object a state is about (META: none) */
static const uint8_t state_cls[MS_COUNT] = {
	[MS_MUTEX_WAIT] = PTT_CLASS_MUTEX, [MS_MUTEX_HOLD] = PTT_CLASS_MUTEX, [MS_COND_WAIT] = PTT_CLASS_COND,
	[MS_BARRIER] = PTT_CLASS_BARRIER, [MS_SEM_WAIT] = PTT_CLASS_SEM, [MS_RW_RD_WAIT] = PTT_CLASS_RWLOCK,
	[MS_RW_WR_WAIT] = PTT_CLASS_RWLOCK, [MS_RW_RD_HOLD] = PTT_CLASS_RWLOCK, [MS_RW_WR_HOLD] = PTT_CLASS_RWLOCK,
	[MS_SPIN_HOLD] = PTT_CLASS_SPIN, [MS_SEM_HOLD] = PTT_CLASS_SEM, [MS_JOIN] = PTT_CLASS_THREAD,
	[MS_FUTEX_WAIT] = PTT_CLASS_FUTEX,
};

unsigned mstate_class(unsigned s) { return s < MS_COUNT && s != MS_JOIN ? state_cls[s] : PTT_CLASS_META; }

int mstate_is_hold(unsigned s)
{
	return s == MS_MUTEX_HOLD || s == MS_RW_RD_HOLD || s == MS_RW_WR_HOLD || s == MS_SPIN_HOLD || s == MS_SEM_HOLD;
}

int mstate_is_wait(unsigned s)
{
	return s != MS_RUNNING && s != MS_TRACER_STALL && s < MS_COUNT && !mstate_is_hold(s);
}

struct model {
	struct model_ops ops;
	struct ptt_map threads, processes, objects;
	uint64_t last_key;       /* the object asked for last and its key (object_get): an event's take, push and */
	struct mobject *last;    /* count, or release, drop and count, ask for one object three times */
	struct ptt_map joiners;  /* (pid, target tid) -> the thread blocked joining it */
	struct ptt_map ended;    /* (process serial, tid) -> serial of a thread that ended, not joined yet */
	struct ptt_map pids;     /* every pid seen: 1 began, 2 forked from a traced process, 3 no beginning */
	struct ptt_map exited;   /* pids whose process_exit was seen (until a process_begin reuses the pid) */
	uint64_t after_exit;     /* events of a process after its process_exit, left out */
	struct ptt_map announced; /* (pid, child tid) and (pid, handle) of thread_create, until the child begins */
	struct ptt_map histories; /* (pid, tid) -> 1 + ns where a flight recording's history of the thread begins */
	struct ptt_map cuts;      /* the same, for the threads whose older records were overwritten (cut) */
	uint32_t serial;
	uint64_t link_keys;
	int objects_on, mid_run, anomaly_done;
	struct ptt_stacks *stacks; /* stack_frames learnt */
	uint64_t stacks_full;      /* stack events saying the runtime's table was full */
	uint64_t stacks_unknown;   /* stack events whose frames the trace did not give before them */
	uint64_t frames_forgotten; /* frames forgotten past PTT_FRAMES_MAX (model_frames_forgotten) */
	uint32_t forgot_pid, forgot_tid; /* the thread that forgot one last */
	uint64_t npending;         /* threads with a pending_stack */
	uint32_t inherit_stack;    /* for push: the stack of the wait a hold follows */
	uint64_t held_before;      /* objects whose first event is a release (of a hold not seen) */
	struct model_tee *tee;     /* model_observe_also's, newest first */
};

/* Ended, unjoined threads are remembered until joined or until their tid is taken again (then they
 * cannot be joined any more): at most one per tid of a process, however many threads the trace has. */

/* Two observers of one model (model_observe_also, at the end of this file). */
struct model_tee {
	struct model_ops a, b;
	struct model_tee *prev; /* a tee of a tee: the older one, which a's callbacks reach */
};

static uint64_t tkey(uint32_t pid, uint32_t tid) { return (uint64_t)pid << 32 | tid; }
static uint64_t ekey(const struct mprocess *p, uint32_t tid) { return (uint64_t)p->serial << 32 | tid; }
/* handles live in a key space apart from tids (tids are below 2^32) */
static uint64_t hkey(uint32_t pid, uint64_t handle) { return ptt_obj_key(pid, handle) | 1ull << 63; }

struct model *model_new(const struct model_ops *ops)
{
	struct model *m = calloc(1, sizeof *m);
	if (m) {
		model_observe(m, ops);
		m->stacks = ptt_stacks_new();
		if (!m->stacks) {
			free(m);
			return NULL;
		}
	}
	return m;
}

void model_observe(struct model *m, const struct model_ops *ops)
{
	m->ops = *ops;
	m->objects_on = ops->object_begin != NULL;
}

void model_starts_mid_run(struct model *m, const struct ptt_reader *r)
{
	m->mid_run = 1;
	for (size_t i = 0; r && i < ptt_reader_meta_count(r); i++) {
		unsigned pid, tid;
		unsigned long long ns;
		char how[16] = "";
		if (sscanf(ptt_reader_meta_line(r, i), "flight_thread %u %u %llu %15s", &pid, &tid, &ns, how) >= 3 &&
		    ns < UINT64_MAX) {
			ptt_map_put(&m->histories, tkey(pid, tid), (void *)(uintptr_t)(ns + 1));
			if (!strcmp(how, "cut"))
				ptt_map_put(&m->cuts, tkey(pid, tid), (void *)(uintptr_t)(ns + 1));
		}
	}
}

uint64_t model_history_cut(const struct model *m, uint32_t pid, uint32_t tid)
{
	uintptr_t v = (uintptr_t)ptt_map_get(&m->cuts, tkey(pid, tid));
	return v ? v - 1 : 0;
}

static void anomaly(struct model *m, const struct ptt_event *ev, enum manomaly_kind kind, uint64_t obj,
		    uint32_t other, uint32_t count)
{
	if (m->anomaly_done || !m->ops.anomaly)
		return;
	m->anomaly_done = 1;
	struct manomaly a = { kind, obj, other, count };
	m->ops.anomaly(m->ops.ctx, ev, &a);
}

static struct mprocess *process_of(struct model *m, uint32_t pid, uint64_t ns)
{
	struct mprocess *p = ptt_map_get(&m->processes, pid);
	if (p)
		return p;
	p = calloc(1, sizeof *p);
	if (!p || ptt_map_put(&m->processes, pid, p)) {
		free(p);
		return NULL;
	}
	p->pid = pid;
	p->serial = ++m->serial;
	if (m->ops.process_begin)
		m->ops.process_begin(m->ops.ctx, p, ns);
	return p;
}

/* The thread, created on first sight (a trace may be cut or filtered). */
static struct mthread *thread_of(struct model *m, uint32_t pid, uint32_t tid, uint64_t ns)
{
	struct mthread *t = ptt_map_get(&m->threads, tkey(pid, tid));
	if (t)
		return t;
	struct mprocess *p = process_of(m, pid, ns);
	if (!p)
		return NULL;
	t = calloc(1, sizeof *t);
	if (!t || ptt_map_put(&m->threads, tkey(pid, tid), t)) {
		free(t);
		return NULL;
	}
	if (m->ended.used)
		ptt_map_del(&m->ended, ekey(p, tid)); /* the tid is reused: the old thread cannot be joined any more */
	t->pid = pid;
	t->tid = tid;
	t->serial = ++m->serial;
	t->begin_ns = ns;
	t->running_since = ns;
	p->live_threads++;
	if (m->ops.thread_begin)
		m->ops.thread_begin(m->ops.ctx, t, p, ns);
	return t;
}

/* Show o from now on as an object of kind cls (a new incarnation if it was shown as another kind). */
static void show_object(struct model *m, struct mobject *o, unsigned cls, uint64_t ns)
{
	struct mprocess *p = ptt_map_get(&m->processes, o->pid);
	if (!p)
		return;
	if (o->serial && m->ops.object_end) /* the address was reused without a destroy call */
		m->ops.object_end(m->ops.ctx, o, p, ns);
	o->cls = (uint8_t)cls;
	o->holders = o->waiters = 0;
	o->serial = ++m->serial;
	o->user = NULL;
	m->ops.object_begin(m->ops.ctx, o, p, ns);
}

/* The object at addr, created on first sight; cls (0: unknown) is the kind it is used as. */
/* m->objects' entry for key k, NULL if none */
static struct mobject *object_get(struct model *m, uint64_t k)
{
	if (m->last && m->last_key == k)
		return m->last;
	struct mobject *o = ptt_map_get(&m->objects, k);
	if (o) {
		m->last_key = k;
		m->last = o;
	}
	return o;
}

static struct mobject *object_of(struct model *m, uint32_t pid, uint64_t addr, unsigned cls, uint64_t ns)
{
	uint64_t k = ptt_obj_key(pid, addr);
	struct mobject *o = object_get(m, k);
	if (!o) {
		o = calloc(1, sizeof *o);
		if (!o || ptt_map_put(&m->objects, k, o)) {
			free(o);
			return NULL;
		}
		o->pid = pid;
		o->addr = addr;
	}
	if (m->objects_on && cls && o->cls != cls)
		show_object(m, o, cls, ns);
	return o;
}

/* A frame on an object was pushed (+1) or removed (-1): count its holders or waiters. */
static void count(struct model *m, const struct mthread *t, const struct mframe *f, int delta, uint64_t ns)
{
	unsigned cls = mstate_class(f->state);
	if (cls == PTT_CLASS_META)
		return;
	struct mobject *o = object_get(m, ptt_obj_key(t->pid, f->obj));
	if (!o || !model_object_is(o, t->pid, f->obj) || (m->objects_on && o->cls != cls))
		return;
	int waits = !mstate_is_hold(f->state);
	uint32_t *n = waits ? &o->waiters : &o->holders;
	if (delta > 0)
		(*n)++;
	else if (*n)
		(*n)--;
	else
		return;
	if (o->serial && m->ops.object_count)
		m->ops.object_count(m->ops.ctx, o, waits, ns);
}

struct mthread *model_thread(const struct model *m, uint32_t pid, uint32_t tid)
{
	return ptt_map_get(&m->threads, tkey(pid, tid));
}

struct mthread *model_thread_of_tid(const struct model *m, uint32_t pid, uint32_t tid)
{
	struct mthread *t = model_thread(m, pid, tid);
	struct ptt_map_iter it;
	void *p;
	for (ptt_map_iter_init(&it, &m->processes); !t && ptt_map_next(&it, NULL, &p);)
		t = model_thread(m, ((const struct mprocess *)p)->pid, tid);
	return t;
}

struct mobject *model_object(const struct model *m, uint32_t pid, uint64_t addr)
{
	struct mobject *o = ptt_map_get(&m->objects, ptt_obj_key(pid, addr));
	return o && model_object_is(o, pid, addr) ? o : NULL;
}

int model_object_is(const struct mobject *o, uint32_t pid, uint64_t addr)
{
	return o->addr == addr && (o->pid == pid || PTT_IS_SHARED(addr));
}

struct mthread *model_object_user(const struct model *m, const struct mobject *o, uint32_t pid, uint32_t tid)
{
	if (!tid)
		return NULL;
	/* in shared memory, the thread may be another process's (tids are unique system-wide) */
	return PTT_IS_SHARED(o->addr) ? model_thread_of_tid(m, pid, tid) : model_thread(m, pid, tid);
}

static const struct mframe running = { .state = MS_RUNNING };

const struct mframe *model_top(const struct mthread *t) { return t->depth ? &t->stack[t->depth - 1] : NULL; }

static const struct mframe *top(const struct mthread *t) { return t->depth ? &t->stack[t->depth - 1] : &running; }

const struct mframe *model_waiting(const struct mthread *t)
{
	for (unsigned i = t->depth; i-- > 0;)
		if (mstate_is_wait(t->stack[i].state))
			return &t->stack[i];
	return NULL;
}

static void push(struct model *m, struct mthread *t, enum mstate s, uint64_t obj, const struct ptt_event *ev)
{
	uint64_t ns = ev->ns;
	/* the frame below stays where it is unless the stack moves: copied only then (a copy per push and
	 * per pop was 0.7 % of ptt-stat's instructions on a sqlite3 trace) */
	const struct mframe *old = top(t);
	struct mframe keep;
	if (t->depth == t->cap) {
		keep = *old;
		old = &keep;
		if (t->cap >= PTT_FRAMES_MAX) { /* absurdly deep: forget the oldest frame, counted (model_frames_forgotten) */
			m->frames_forgotten++;
			m->forgot_pid = t->pid;
			m->forgot_tid = t->tid;
			count(m, t, &t->stack[0], -1, ns);
			memmove(t->stack, t->stack + 1, (t->depth - 1) * sizeof t->stack[0]);
			t->depth--;
		} else {
			size_t cap = t->cap;
			if (PTT_GROW(t->stack, &cap, t->depth + 1) != 0)
				return;
			t->cap = (unsigned)cap;
		}
	}
	/* every field set, none zeroed first: memset's rep stos of the frame was 3 % of ptt-stat's time on a lock
	 * loop (mframe's fields are all below, arg copied after) */
	struct mframe *f = &t->stack[t->depth++];
	f->state = (uint8_t)s;
	f->obj = obj;
	f->since_ns = f->begin_ns = ns;
	f->stalled_ns = 0;
	f->open.id = ev->id;
	f->open.ticks = ev->ticks;
	f->open.pos = ev->pos;
	f->stack = t->pending_stack ? t->pending_stack : m->inherit_stack;
	f->events = t->events;
	f->lost = t->lost_to && ns <= t->lost_to; /* within a stretch of its lost events (model.h: lost events) */
	memcpy(f->open.arg, ev->arg, sizeof f->open.arg);
	if (m->ops.state)
		m->ops.state(m->ops.ctx, t, old, f, ns);
	count(m, t, f, +1, ns);
}

/* Remove frame i of t (a copy is left in *gone). */
static void remove_frame(struct model *m, struct mthread *t, unsigned i, uint64_t ns, struct mframe *gone)
{
	*gone = t->stack[i]; /* the top, when it is the one removed: the state told below is left from it */
	int was_top = i == t->depth - 1;
	memmove(t->stack + i, t->stack + i + 1, (t->depth - i - 1) * sizeof t->stack[0]);
	t->depth--;
	if (was_top) {
		if (t->depth)
			t->stack[t->depth - 1].since_ns = ns; /* a new interval of the state uncovered */
		else
			t->running_since = ns;
		if (m->ops.state)
			m->ops.state(m->ops.ctx, t, gone, top(t), ns);
	}
	count(m, t, gone, -1, ns);
}

/* Remove the topmost frame in state s on obj (anywhere in the stack) into *gone; 1 if there was one. */
static int drop(struct model *m, struct mthread *t, enum mstate s, uint64_t obj, uint64_t ns, struct mframe *gone)
{
	for (unsigned i = t->depth; i-- > 0;)
		if (t->stack[i].state == s && t->stack[i].obj == obj) {
			remove_frame(m, t, i, ns, gone);
			return 1;
		}
	return 0;
}

/* The end of an object's container (if shown) and of its record. */
static void end_object(struct model *m, struct mobject *o, uint64_t ns)
{
	struct mprocess *p = ptt_map_get(&m->processes, o->pid);
	if (o->serial && p && m->ops.object_end)
		m->ops.object_end(m->ops.ctx, o, p, ns);
	ptt_map_del(&m->objects, ptt_obj_key(o->pid, o->addr));
	if (m->last == o)
		m->last = NULL;
	free(o);
}

/* t stops waiting in a join. */
static void unwait_join(struct model *m, struct mthread *t)
{
	if (t->joining && ptt_map_get(&m->joiners, tkey(t->pid, t->joining)) == t)
		ptt_map_del(&m->joiners, tkey(t->pid, t->joining));
	t->joining = 0;
}

/* End the join link started towards t, if any. */
static void end_join_link(struct model *m, struct mthread *t, uint64_t ns)
{
	if (!t->join_key)
		return;
	struct mprocess *p = ptt_map_get(&m->processes, t->pid);
	if (p && m->ops.link_end)
		m->ops.link_end(m->ops.ctx, p, t->serial, "join", t->join_key, ns);
	t->join_key = 0;
}

/* t really ended (thread_end): start the join link now if a joiner waits, else remember t for a later join. */
static void thread_ended(struct model *m, struct mthread *t, uint64_t ns)
{
	struct mprocess *p = ptt_map_get(&m->processes, t->pid);
	if (!p || !m->ops.link_start || !m->ops.link_end)
		return;
	struct mthread *j = ptt_map_get(&m->joiners, tkey(t->pid, t->tid));
	if (j && j != t && !j->join_key) {
		j->join_key = ++m->link_keys;
		m->ops.link_start(m->ops.ctx, p, t->serial, "join", j->join_key, ns);
		return;
	}
	ptt_map_put(&m->ended, ekey(p, t->tid), (void *)(uintptr_t)t->serial);
}

static void end_thread(struct model *m, struct mthread *t, uint64_t ns)
{
	while (t->depth) {
		struct mframe gone;
		remove_frame(m, t, t->depth - 1, ns, &gone);
	}
	end_join_link(m, t, ns);
	unwait_join(m, t);
	struct mprocess *p = ptt_map_get(&m->processes, t->pid);
	if (p && p->live_threads)
		p->live_threads--;
	if (m->ops.thread_end)
		m->ops.thread_end(m->ops.ctx, t, p, ns);
	ptt_map_del(&m->threads, tkey(t->pid, t->tid));
	free(t->stack);
	free(t);
}

/*
 * A join by t returned.  The link comes from the joined thread: started at
 * its end if t was already waiting then, else drawn at the return (Paje
 * times never go back), only when the joined thread is known.  A joined
 * thread whose end is not in the trace ends now.
 */
static void join_returned(struct model *m, struct mthread *t, uint32_t target, int ok, uint64_t ns)
{
	struct mprocess *p = ptt_map_get(&m->processes, t->pid);
	struct mthread *x = target && target != t->tid ? ptt_map_get(&m->threads, tkey(t->pid, target)) : NULL;
	if (t->join_key) {
		end_join_link(m, t, ns);
	} else if (ok && target && p && m->ops.link_start && m->ops.link_end) {
		uint32_t from = x ? x->serial : (uint32_t)(uintptr_t)ptt_map_get(&m->ended, ekey(p, target));
		if (from) {
			uint64_t key = ++m->link_keys;
			m->ops.link_start(m->ops.ctx, p, from, "join", key, ns);
			m->ops.link_end(m->ops.ctx, p, t->serial, "join", key, ns);
		}
	}
	unwait_join(m, t);
	if (ok && target && p) {
		if (m->ended.used)
			ptt_map_del(&m->ended, ekey(p, target));
		if (x)
			end_thread(m, x, ns);
	}
}

static void end_process(struct model *m, uint32_t pid, uint64_t ns)
{
	struct ptt_map_iter it;
	void *v;
	for (ptt_map_iter_init(&it, &m->threads); ptt_map_next(&it, NULL, &v);)
		if (((struct mthread *)v)->pid == pid)
			end_thread(m, v, ns); /* deletes the current entry only: safe */
	/* objects after the threads (their counts are back to 0), before the process */
	for (ptt_map_iter_init(&it, &m->objects); ptt_map_next(&it, NULL, &v);)
		if (((struct mobject *)v)->pid == pid && !PTT_IS_SHARED(((struct mobject *)v)->addr))
			end_object(m, v, ns); /* a shared object lives on with its other processes */
	struct mprocess *p = ptt_map_get(&m->processes, pid);
	if (!p)
		return;
	if (m->ops.process_end)
		m->ops.process_end(m->ops.ctx, p, ns);
	ptt_map_del(&m->processes, pid);
	free(p);
}

static int64_t ret_of(const struct ptt_event *ev) { return (int64_t)ptt_event_argn(ev, PTT_ARGNAME_RET, 0); }

/* Did an acquisition take its object?  (model.h: success) */
static int took(const struct ptt_event *ev)
{
	int64_t ret = ret_of(ev);
	if (ev->type->cls == PTT_CLASS_SEM || ev->type->cls == PTT_CLASS_THREAD)
		return ret == 0;
	return ret == 0 || ret == EOWNERDEAD;
}

/* t is now o's last releaser, signaller, poster or barrier arriver: the thread a waiter's link comes from. */
static void set_last(struct model *m, struct mthread *t, struct mobject *o, const struct ptt_event *ev)
{
	o->last_tid = t->tid;
	if (m->ops.last)
		m->ops.last(m->ops.ctx, t, o, ev);
}

static void link_from_last(struct model *m, struct mthread *t, struct mobject *o, const char *kind, uint64_t ns)
{
	if (!o || !o->last_tid || o->last_tid == t->tid || !m->ops.link)
		return;
	struct mthread *from = model_object_user(m, o, t->pid, o->last_tid);
	if (from)
		m->ops.link(m->ops.ctx, from, t, kind, o->addr, ns);
}

static void point(struct model *m, struct mthread *t, const struct ptt_event *ev)
{
	if (m->ops.point)
		m->ops.point(m->ops.ctx, t, ev);
}

/* The wait state a request on an object of class cls opens. */
static enum mstate wait_state(unsigned cls, unsigned role)
{
	switch (cls) {
	case PTT_CLASS_MUTEX: return MS_MUTEX_WAIT;
	case PTT_CLASS_RWLOCK: return role == PTT_ROLE_REQUEST_SHARED ? MS_RW_RD_WAIT : MS_RW_WR_WAIT;
	case PTT_CLASS_COND: return MS_COND_WAIT;
	case PTT_CLASS_BARRIER: return MS_BARRIER;
	case PTT_CLASS_SEM: return MS_SEM_WAIT;
	case PTT_CLASS_THREAD: return MS_JOIN;
	case PTT_CLASS_FUTEX: return MS_FUTEX_WAIT;
	default: return MS_OTHER_WAIT;
	}
}

/* The hold state an acquisition of class cls makes (MS_RUNNING: none). */
static enum mstate hold_state(unsigned cls, int shared)
{
	switch (cls) {
	case PTT_CLASS_MUTEX: return MS_MUTEX_HOLD;
	case PTT_CLASS_RWLOCK: return shared ? MS_RW_RD_HOLD : MS_RW_WR_HOLD;
	case PTT_CLASS_SPIN: return MS_SPIN_HOLD;
	case PTT_CLASS_SEM: return MS_SEM_HOLD;
	default: return MS_RUNNING;
	}
}

static int forked(const struct model *m, uint32_t pid) { return (uintptr_t)ptt_map_get(&m->pids, pid) == 2; }

/* Exclusive ownership of o by t (model.h: ownership, anomalies). */
static void own(struct model *m, struct mthread *t, struct mobject *o, const struct ptt_event *ev, int ownerdead)
{
	o->known = 1;
	if (o->owner && o->owner != t->tid && !ownerdead) {
		anomaly(m, ev, MA_TAKEN_WHILE_HELD, o->addr, o->owner, 0);
		o->depth = 0;
	} else if (!o->owner && o->readers) {
		anomaly(m, ev, MA_WRITE_WHILE_READ, o->addr, 0, o->readers);
		o->readers = 0;
	} else if (o->owner != t->tid) {
		o->depth = 0;
	}
	o->owner = t->tid;
	o->depth++;
}

static void own_shared(struct model *m, struct mthread *t, struct mobject *o, const struct ptt_event *ev)
{
	o->known = 1;
	if (o->owner && o->owner != t->tid)
		anomaly(m, ev, MA_READ_WHILE_WRITTEN, o->addr, o->owner, 0);
	else if (!o->owner)
		o->readers++;
}

/* t gives up its ownership of o (model.h: anomalies). */
static void disown_rule(struct model *m, struct mthread *t, struct mobject *o, const struct ptt_event *ev)
{
	int first = !o->known;
	o->known = 1;
	int owned = o->owner || o->readers;
	m->held_before += first && !owned;
	/* in a flight recording, free since before t's history begins: taken by t where its history is lost */
	uintptr_t history = (uintptr_t)ptt_map_get(&m->histories, tkey(t->pid, t->tid));
	if (m->mid_run && !owned && (first || ptt_role_is_request(ev->type->role) || (history && o->free_ns < history)))
		return; /* taken before the trace starts (a cond wait's request: its mutex, by each waiter) */
	if (ev->type->cls == PTT_CLASS_RWLOCK && !o->owner && o->readers) {
		o->readers--;
		return;
	}
	if (!owned && forked(m, t->pid))
		return; /* a forked child releasing what its parent held at fork() */
	if (o->owner != t->tid) {
		anomaly(m, ev, MA_RELEASE_NOT_HELD, o->addr, o->owner, 0);
		return;
	}
	if (--o->depth == 0)
		o->owner = 0;
}

static void disown(struct model *m, struct mthread *t, struct mobject *o, const struct ptt_event *ev)
{
	disown_rule(m, t, o, ev);
	if (!o->owner && !o->readers)
		o->free_ns = ev->ns;
}

/* t releases its hold of state s on o (a frame, if it has one); ev is the release. */
static void release_hold(struct model *m, struct mthread *t, struct mobject *o, enum mstate s, const struct ptt_event *ev)
{
	struct mframe gone;
	if (drop(m, t, s, o->addr, ev->ns, &gone)) {
		set_last(m, t, o, ev);
		if (m->ops.release && !gone.lost) /* a lost hold: how long it lasted is not known */
			m->ops.release(m->ops.ctx, t, o, &gone, ev);
	}
}

/* t takes o again while a lost hold of it is open: that hold's release was lost; it ends, uncounted. */
static void end_lost_hold(struct model *m, struct mthread *t, struct mobject *o, uint64_t ns)
{
	for (unsigned i = t->depth; i-- > 0;) {
		const struct mframe *f = &t->stack[i];
		if (!f->lost || f->obj != o->addr || !mstate_is_hold(f->state))
			continue;
		struct mframe gone;
		remove_frame(m, t, i, ns, &gone);
		if (gone.state == MS_RW_RD_HOLD) {
			if (o->readers)
				o->readers--;
		} else if (o->owner == t->tid && o->depth && --o->depth == 0) {
			o->owner = 0;
		}
		return;
	}
}

/* A successful take of o by t, which waited in *wait (or not: NULL). */
static void take(struct model *m, struct mthread *t, struct mobject *o, const struct mframe *wait, const struct ptt_event *ev,
		 int shared)
{
	unsigned cls = ev->type->cls;
	enum mstate hs = hold_state(cls, shared);
	end_lost_hold(m, t, o, ev->ns);
	if (cls == PTT_CLASS_SEM) {
		if (wait)
			link_from_last(m, t, o, "post", ev->ns);
		o->taker = t->tid;
		if (o->value_known)
			o->value--;
		if (!o->sem_lock) {
			if (m->ops.acquire)
				m->ops.acquire(m->ops.ctx, t, o, NULL, wait, ev);
			return;
		}
		o->owner = t->tid;
		o->depth = 1;
	} else {
		if (wait)
			link_from_last(m, t, o, "handoff", ev->ns);
		if (shared)
			own_shared(m, t, o, ev);
		else
			own(m, t, o, ev, ret_of(ev) == EOWNERDEAD);
	}
	if (hs == MS_RUNNING)
		return;
	m->inherit_stack = wait ? wait->stack : 0; /* the hold was taken where the wait began */
	push(m, t, hs, o->addr, ev);
	m->inherit_stack = 0;
	if (m->ops.acquire)
		m->ops.acquire(m->ops.ctx, t, o, &t->stack[t->depth - 1], wait, ev);
}

/* Close t's wait of state s on obj, if open: 1 and a copy in *wait (0 for a lost wait: not known to be one). */
static int close_wait(struct model *m, struct mthread *t, enum mstate s, uint64_t obj, uint64_t ns, struct mframe *wait)
{
	return drop(m, t, s, obj, ns, wait) && !wait->lost;
}

/*
 * Thread t waits on futex f (at obj) expecting val: a counter so far? one
 * waiter? (the futex rule)  A value below the last one expected is a
 * decrease only if the wait then sleeps on it (on_wait_end): a counter's
 * waiter that read it before another's notification, and asks after the
 * next waiter asked for the new count, finds the word changed (EAGAIN).
 */
static void futex_expects(struct mfutex *f, struct mthread *t, uint64_t obj, uint32_t val)
{
	uint32_t tid = t->tid;
	t->futex_lower = 0;
	if (!f->counter) {
		f->counter = 1;
		f->val = val;
	} else if (f->counter < 3 && val < f->val) {
		t->futex_lower = obj; /* f->val stays the highest */
	} else if (f->counter < 3 && val != f->val) {
		f->counter = 2;
		f->val = val;
	} else {
		f->val = val;
	}
	if (!f->waiters) {
		f->waiters = 1;
		f->waiter = tid;
	} else if (f->waiter != tid) {
		f->waiters = 2;
	}
}

enum mfutex_use model_futex_use(const struct mfutex *f)
{
	if (!f->returned || f->woken_by_waiter)
		return MF_LOCK;
	if (f->counter == 2)
		return MF_SIGNAL;
	return f->waiters == 1 && f->counter == 1 ? MF_PARK : MF_LOCK;
}

void model_futex_merge(struct mfutex *into, const struct mfutex *seen)
{
	into->returned |= seen->returned;
	into->woken_by_waiter |= seen->woken_by_waiter;
	if (seen->counter > into->counter)
		into->counter = seen->counter;
	if (seen->waiters > into->waiters) {
		into->waiters = seen->waiters;
		into->waiter = seen->waiter;
	}
	into->val = seen->val;
}

static void on_request(struct model *m, struct mthread *t, const struct ptt_event *ev, unsigned role, uint64_t obj)
{
	const struct ptt_type *ty = ev->type;
	/* the earlier call returned unseen */
	for (unsigned i = t->depth; i-- > 0;)
		if (mstate_is_wait(t->stack[i].state)) {
			struct mframe gone;
			remove_frame(m, t, i, ev->ns, &gone);
		}
	enum mstate s = wait_state(ty->cls, role);
	struct mobject *o = NULL;
	if (ty->cls == PTT_CLASS_THREAD) {
		uint32_t target = (uint32_t)ptt_event_argn(ev, PTT_ARGNAME_TARGET, 0);
		obj = target;
		unwait_join(m, t);
		push(m, t, s, obj, ev);
		if (target && target != t->tid && !ptt_map_put(&m->joiners, tkey(t->pid, target), t))
			t->joining = target;
	} else {
		o = obj ? object_of(m, t->pid, obj, 0, ev->ns) : NULL;
		if (ty->cls == PTT_CLASS_COND) { /* the hidden unlock */
			uint64_t mutex = ptt_event_argn(ev, PTT_ARGNAME_MUTEX, 0);
			struct mobject *mo = object_of(m, t->pid, mutex, 0, ev->ns);
			if (mo) {
				disown(m, t, mo, ev);
				release_hold(m, t, mo, MS_MUTEX_HOLD, ev);
			}
		}
		if (ty->cls == PTT_CLASS_BARRIER && o)
			set_last(m, t, o, ev); /* the last to arrive releases the others */
		if (ty->cls == PTT_CLASS_FUTEX && o)
			futex_expects(&o->futex, t, obj, (uint32_t)ptt_event_argn(ev, PTT_ARGNAME_VAL, 0));
		push(m, t, s, obj, ev);
	}
	if (m->ops.wait_begin && t->depth)
		m->ops.wait_begin(m->ops.ctx, t, o, &t->stack[t->depth - 1], ev);
}

static void on_acquire(struct model *m, struct mthread *t, const struct ptt_event *ev, unsigned role, uint64_t obj)
{
	const struct ptt_type *ty = ev->type;
	int shared = role == PTT_ROLE_SHARED || role == PTT_ROLE_TRY_SHARED;
	int try = role == PTT_ROLE_TRY || role == PTT_ROLE_TRY_SHARED;
	struct mframe wait;
	int waited;
	if (ty->cls == PTT_CLASS_THREAD) { /* tryjoin */
		uint32_t target = (uint32_t)ptt_event_argn(ev, PTT_ARGNAME_TARGET, 0);
		waited = close_wait(m, t, MS_JOIN, target, ev->ns, &wait);
		point(m, t, ev);
		if (m->ops.wait_end)
			m->ops.wait_end(m->ops.ctx, t, NULL, waited ? &wait : NULL, took(ev), ev);
		join_returned(m, t, target, took(ev), ev->ns);
		return;
	}
	waited = close_wait(m, t, wait_state(ty->cls, shared ? PTT_ROLE_REQUEST_SHARED : PTT_ROLE_REQUEST), obj, ev->ns, &wait);
	struct mobject *o = object_of(m, t->pid, obj, 0, ev->ns);
	if (try || !took(ev))
		point(m, t, ev);
	if (!o)
		return;
	if (!took(ev)) {
		if (m->ops.wait_end)
			m->ops.wait_end(m->ops.ctx, t, o, waited ? &wait : NULL, 0, ev);
		return;
	}
	take(m, t, o, waited ? &wait : NULL, ev, shared);
}

static void on_wait_end(struct model *m, struct mthread *t, const struct ptt_event *ev, uint64_t obj)
{
	const struct ptt_type *ty = ev->type;
	struct mframe wait;
	int waited, ok;
	int64_t ret = ret_of(ev);
	if (ty->cls == PTT_CLASS_THREAD) { /* join */
		uint32_t target = (uint32_t)ptt_event_argn(ev, PTT_ARGNAME_TARGET, 0);
		waited = close_wait(m, t, MS_JOIN, target, ev->ns, &wait);
		point(m, t, ev);
		ok = ret == 0;
		if (m->ops.wait_end)
			m->ops.wait_end(m->ops.ctx, t, NULL, waited ? &wait : NULL, ok, ev);
		join_returned(m, t, target, ok, ev->ns);
		return;
	}
	waited = close_wait(m, t, wait_state(ty->cls, PTT_ROLE_REQUEST), obj, ev->ns, &wait);
	struct mobject *o = obj ? object_of(m, t->pid, obj, 0, ev->ns) : NULL;
	if (ty->cls == PTT_CLASS_BARRIER) {
		ok = ret == 0 || (int32_t)ret == -1; /* PTHREAD_BARRIER_SERIAL_THREAD */
		if (waited)
			link_from_last(m, t, o, "barrier", ev->ns);
	} else {
		ok = ret == 0;
		if (waited && ok && (ty->cls == PTT_CLASS_COND || ty->cls == PTT_CLASS_FUTEX))
			link_from_last(m, t, o, "wake", ev->ns);
	}
	if (o && ty->cls == PTT_CLASS_FUTEX) {
		o->futex.returned = 1;
		t->futex_waited = obj;
		if (t->futex_lower == obj && ret != EAGAIN)
			o->futex.counter = 3; /* it slept on a lower value: the word went down (futex_expects) */
		t->futex_lower = 0;
	}
	if (m->ops.wait_end)
		m->ops.wait_end(m->ops.ctx, t, o, waited ? &wait : NULL, ok, ev);
	uint64_t mutex = ty->cls == PTT_CLASS_COND ? ptt_event_argn(ev, PTT_ARGNAME_MUTEX, 0) : 0;
	struct mobject *mo = mutex ? object_of(m, t->pid, mutex, 0, ev->ns) : NULL;
	if (!mo)
		return;
	/* the hidden re-lock, whatever ret */
	end_lost_hold(m, t, mo, ev->ns);
	if (mo->owner == t->tid)
		anomaly(m, ev, MA_COND_KEPT_MUTEX, mutex, 0, 0);
	else
		own(m, t, mo, ev, ret == EOWNERDEAD);
	m->inherit_stack = waited ? wait.stack : 0;
	push(m, t, MS_MUTEX_HOLD, mutex, ev);
	m->inherit_stack = 0;
	if (m->ops.acquire)
		m->ops.acquire(m->ops.ctx, t, mo, &t->stack[t->depth - 1], NULL, ev);
}

static void on_release(struct model *m, struct mthread *t, const struct ptt_event *ev, uint64_t obj)
{
	struct mobject *o = ret_of(ev) == 0 ? object_of(m, t->pid, obj, 0, ev->ns) : NULL; /* refused: released nothing */
	unsigned cls = ev->type->cls;
	enum mstate s = hold_state(cls, 0);
	if (o && cls == PTT_CLASS_RWLOCK) {
		int write = 0;
		for (unsigned i = t->depth; i-- > 0 && !write;)
			write = t->stack[i].obj == obj && t->stack[i].state == MS_RW_WR_HOLD;
		s = write ? MS_RW_WR_HOLD : MS_RW_RD_HOLD;
	}
	if (o) {
		disown(m, t, o, ev);
		release_hold(m, t, o, s, ev);
	}
	point(m, t, ev);
}

static void post(struct model *m, struct mthread *t, const struct ptt_event *ev, uint64_t obj)
{
	unsigned cls = ev->type->cls;
	if (cls != PTT_CLASS_COND && cls != PTT_CLASS_SEM && cls != PTT_CLASS_FUTEX)
		return;
	struct mobject *o = object_of(m, t->pid, obj, 0, ev->ns);
	if (!o)
		return;
	if (cls == PTT_CLASS_FUTEX) {
		if ((int32_t)ptt_event_argn(ev, PTT_ARGNAME_WOKEN, 0) > 0)
			set_last(m, t, o, ev);
		if (t->futex_waited == obj)
			o->futex.woken_by_waiter = 1; /* its waiter wakes it: a lock's word (the futex rule) */
		return;
	}
	if (cls == PTT_CLASS_COND) {
		set_last(m, t, o, ev);
		return;
	}
	if (ret_of(ev) != 0)
		return;
	set_last(m, t, o, ev);
	if (!o->posters) {
		o->poster = t->tid;
		o->posters = 1;
	} else if (o->poster != t->tid) {
		o->posters = 2;
	}
	if (o->value_known && ++o->value > 1)
		o->sem_lock = 0; /* counting beyond one: no lock (what is held is still released below) */
	else if (!o->value_known && !o->sem_lock && o->taker == t->tid) {
		o->sem_lock = 1; /* it took a unit and gives it back: a lock */
		return;
	}
	/* a lock-like semaphore: the poster's hold ends, or else the last taker's */
	struct mthread *h = t;
	int mine = 0;
	for (unsigned i = 0; i < t->depth && !mine; i++)
		mine = t->stack[i].state == MS_SEM_HOLD && t->stack[i].obj == obj;
	if (!mine && o->taker)
		h = model_object_user(m, o, t->pid, o->taker);
	if (o->owner == (h ? h->tid : 0)) {
		o->owner = 0;
		o->depth = 0;
	}
	struct mframe gone;
	if (h && drop(m, h, MS_SEM_HOLD, obj, ev->ns, &gone) && m->ops.release)
		m->ops.release(m->ops.ctx, h, o, &gone, ev);
	if (!mine && h && h != t)
		o->sem_lock = 0; /* posted by a thread holding none for the one that took it: a signal, from now on */
}

static void on_post(struct model *m, struct mthread *t, const struct ptt_event *ev, uint64_t obj)
{
	post(m, t, ev, obj);
	point(m, t, ev);
}

static void on_life(struct model *m, struct mthread *t, const struct ptt_event *ev)
{
	switch (ev->id) {
	case PTT_EV_THREAD_BEGIN: {
		uint32_t parent = (uint32_t)ptt_event_argn(ev, PTT_ARGNAME_PARENT, 0);
		struct mthread *pt = parent ? ptt_map_get(&m->threads, tkey(ev->pid, parent)) : NULL;
		int announced = 0;
		if (parent) {
			uint64_t h = hkey(ev->pid, ptt_event_argn(ev, PTT_ARGNAME_HANDLE, 0));
			announced = ptt_map_get(&m->announced, tkey(ev->pid, ev->tid)) || ptt_map_get(&m->announced, h);
			if (!announced && !m->mid_run) /* mid-run: created before the trace starts */
				anomaly(m, ev, MA_UNANNOUNCED_THREAD, 0, 0, 0);
			ptt_map_del(&m->announced, tkey(ev->pid, ev->tid));
			ptt_map_del(&m->announced, h);
		}
		/* the creation is shown when it is in the trace (not before a window's start) */
		if (pt && announced && m->ops.link)
			m->ops.link(m->ops.ctx, pt, t, "create", 0, ev->ns);
		return;
	}
	case PTT_EV_THREAD_CREATE:
		if (ret_of(ev) == 0) {
			uint32_t child = (uint32_t)ptt_event_argn(ev, PTT_ARGNAME_CHILD, 0);
			if (child)
				ptt_map_put(&m->announced, tkey(ev->pid, child), m);
			ptt_map_put(&m->announced, hkey(ev->pid, ptt_event_argn(ev, PTT_ARGNAME_HANDLE, 0)), m);
		}
		break;
	default:
		break;
	}
	point(m, t, ev);
}

/* The waits open on o lengthened by a stall of its holder over [from, to) (model.h: tracer stalls). */
struct stall_span {
	const struct mobject *o;
	const struct mthread *holder;
	uint64_t from, to;
};
static int lengthen_wait(void *ctx, struct mthread *u, const struct mframe *f)
{
	const struct stall_span *sp = ctx;
	if (u == sp->holder || !model_object_is(sp->o, u->pid, f->obj) || !mstate_is_wait(f->state) ||
	    f->state == MS_JOIN || f->begin_ns >= sp->to)
		return 0;
	((struct mframe *)f)->stalled_ns += sp->to - (f->begin_ns > sp->from ? f->begin_ns : sp->from);
	return 0;
}

static void on_stall(struct model *m, const struct ptt_event *ev)
{
	struct mthread *t = thread_of(m, ev->pid, ev->tid, ev->ns);
	struct mframe gone;
	if (!t)
		return;
	if (ev->id == PTT_EV_TRACER_STALL) {
		push(m, t, MS_TRACER_STALL, 0, ev);
		return;
	}
	if (!drop(m, t, MS_TRACER_STALL, 0, ev->ns, &gone))
		return;
	for (unsigned i = 0; i < t->depth; i++) {
		const struct mobject *o = mstate_is_hold(t->stack[i].state) ? model_object(m, t->pid, t->stack[i].obj) : NULL;
		if (o && o->waiters) {
			struct stall_span sp = { o, t, gone.begin_ns, ev->ns };
			model_foreach_open(m, lengthen_wait, &sp);
		}
	}
}

/* Events of a thread lost (rec_lost): its frames opened by the stretch's end are lost (model.h: lost events). */
static void on_lost(struct model *m, const struct ptt_event *ev)
{
	uint32_t tid = (uint32_t)ptt_event_argn(ev, PTT_ARGNAME_STREAM, 0);
	uint64_t to = ptt_event_argn(ev, PTT_ARGNAME_TO_NS, 0);
	struct mthread *t = tid ? model_thread_of_tid(m, ev->pid, tid) : NULL;
	if (!t || !to)
		return; /* no thread (a ring never had), or no times (a record torn by a death: the process is gone) */
	for (unsigned i = 0; i < t->depth; i++)
		if (t->stack[i].begin_ns <= to)
			t->stack[i].lost = 1;
	if (to > t->lost_to)
		t->lost_to = to; /* frames it opens up to then: push */
}

/* A pid's first event: was it process_begin (model.h: anomalies)? */
static void check_process(struct model *m, const struct ptt_event *ev)
{
	uintptr_t seen = (uintptr_t)ptt_map_get(&m->pids, ev->pid);
	if (seen && ev->id != PTT_EV_PROCESS_BEGIN)
		return;
	uintptr_t v = 3;
	if (ev->id == PTT_EV_PROCESS_BEGIN)
		v = ptt_map_get(&m->pids, (uint32_t)ptt_event_argn(ev, PTT_ARGNAME_PPID, 0)) ? 2 : 1;
	else if (!m->mid_run)
		anomaly(m, ev, MA_NO_PROCESS_BEGIN, 0, 0, 0);
	if (!seen || ev->id == PTT_EV_PROCESS_BEGIN)
		ptt_map_put(&m->pids, ev->pid, (void *)v);
}

static void apply(struct model *m, const struct ptt_event *ev);

void model_event(struct model *m, const struct ptt_event *ev)
{
	if (ev->id == PTT_EV_STACK_FRAMES && ev->type && ev->type->role == PTT_ROLE_META) {
		ptt_stacks_update(m->stacks, ev);
		return;
	}
	int pairing = ptt_stack_pairing(ev->id, ev->type != NULL, ev->type ? ev->type->role : 0, ev->nargs);
	if (pairing == PTT_STACK_HOLD) {
		/* the stack of the thread's next event */
		struct mthread *t = ptt_map_get(&m->threads, tkey(ev->pid, ev->tid));
		uint64_t id = ptt_event_argn(ev, PTT_ARGNAME_STACK, 0);
		const uint64_t *f;
		if (id == PTT_STACK_ID_FULL)
			m->stacks_full++;
		else if (id && !ptt_stacks_get(m->stacks, ev->pid, (uint32_t)id, &f))
			m->stacks_unknown++;
		if (id != PTT_STACK_ID_FULL && t) {
			m->npending += !t->pending_stack;
			t->pending_stack = (uint32_t)id;
		}
		return;
	}
	apply(m, ev);
	/* a name (the recorder's object_name, stamped as the event it names) is not the next event */
	if (m->npending && pairing == PTT_STACK_TAKE) { /* the thread's next event took its stack, or did not want it */
		struct mthread *t = ptt_map_get(&m->threads, tkey(ev->pid, ev->tid));
		if (t && t->pending_stack) {
			t->pending_stack = 0;
			m->npending--;
		}
	}
}

const struct ptt_stacks *model_stacks(const struct model *m) { return m->stacks; }

unsigned model_stack_copy(const struct model *m, uint32_t pid, uint32_t stack, uint64_t **frames)
{
	const uint64_t *f = NULL;
	unsigned n = stack ? ptt_stacks_get(model_stacks(m), pid, stack, &f) : 0;
	*frames = n ? malloc(n * sizeof *f) : NULL;
	if (!*frames)
		return 0;
	memcpy(*frames, f, n * sizeof *f);
	return n;
}
uint64_t model_stacks_full(const struct model *m) { return m->stacks_full; }
uint64_t model_frames_forgotten(const struct model *m) { return m->frames_forgotten; }
void model_frames_forgot_by(const struct model *m, uint32_t *pid, uint32_t *tid)
{
	*pid = m->forgot_pid;
	*tid = m->forgot_tid;
}
uint64_t model_stacks_unknown(const struct model *m) { return m->stacks_unknown; }
uint64_t model_held_before(const struct model *m) { return m->held_before; }
uint64_t model_after_exit(const struct model *m) { return m->after_exit; }

static void apply(struct model *m, const struct ptt_event *ev)
{
	const struct ptt_type *ty = ev->type;
	if (ty && (ev->id == PTT_EV_TRACER_STALL || ev->id == PTT_EV_TRACER_STALL_END) &&
	    strcmp(ty->name, ptt_builtin_type(ev->id)->name) == 0) {
		on_stall(m, ev);
		return;
	}
	if (ty && ev->id == PTT_EV_REC_LOST && strcmp(ty->name, ptt_builtin_type(ev->id)->name) == 0) {
		on_lost(m, ev);
		return;
	}
	if (!ty || ty->source == PTT_SRC_RECORDER)
		return;
	m->anomaly_done = 0;
	if (m->exited.used && ev->id != PTT_EV_PROCESS_BEGIN && ptt_map_get(&m->exited, ev->pid)) {
		m->after_exit++; /* model.h: events after a process's exit */
		return;
	}
	check_process(m, ev);
	uint64_t ns = ev->ns;
	if (ev->id == PTT_EV_PROCESS_BEGIN) { /* its thread is the process's first: it lives from now */
		if (m->exited.used)
			ptt_map_del(&m->exited, ev->pid);
		process_of(m, ev->pid, ns);
		thread_of(m, ev->pid, ev->tid, ns);
		return;
	}
	if (ev->id == PTT_EV_PROCESS_EXIT) {
		end_process(m, ev->pid, ns);
		ptt_map_put(&m->exited, ev->pid, (void *)1); /* no memory: its late events make threads again */
		return;
	}
	if (ev->id == PTT_EV_THREAD_END) { /* after process_exit the thread is already gone */
		struct mthread *gone = ptt_map_get(&m->threads, tkey(ev->pid, ev->tid));
		if (gone) {
			thread_ended(m, gone, ns);
			end_thread(m, gone, ns);
		}
		return;
	}
	struct mthread *t = thread_of(m, ev->pid, ev->tid, ns);
	if (!t)
		return;
	t->events++;
	uint64_t obj = ty->nargs && ty->argkind[0] == PTT_ARG_PTR ? ev->arg[0] : 0;
	if (m->objects_on && obj && ((ty->cls >= PTT_CLASS_MUTEX && ty->cls <= PTT_CLASS_SPIN) || ty->cls == PTT_CLASS_FUTEX)) {
		object_of(m, t->pid, obj, ty->cls, ns); /* shown from its first appearance */
		if (ty->cls == PTT_CLASS_COND && ty->role != PTT_ROLE_POST) {
			uint64_t mutex = ptt_event_argn(ev, PTT_ARGNAME_MUTEX, 0);
			if (mutex)
				object_of(m, t->pid, mutex, PTT_CLASS_MUTEX, ns);
		}
	}
	unsigned role = ty->role;
	struct mobject *o;
	switch (role) {
	case PTT_ROLE_REQUEST:
	case PTT_ROLE_REQUEST_SHARED:
		on_request(m, t, ev, role, obj);
		break;
	case PTT_ROLE_ACQUIRE:
	case PTT_ROLE_SHARED:
	case PTT_ROLE_TRY:
	case PTT_ROLE_TRY_SHARED:
		on_acquire(m, t, ev, role, obj);
		break;
	case PTT_ROLE_WAIT_END:
		on_wait_end(m, t, ev, obj);
		break;
	case PTT_ROLE_RELEASE:
		on_release(m, t, ev, obj);
		break;
	case PTT_ROLE_POST:
		on_post(m, t, ev, obj);
		break;
	case PTT_ROLE_INIT:
		if (ret_of(ev) == 0 && obj && (o = object_of(m, t->pid, obj, 0, ns)) && !o->holders && !o->waiters) {
			o->owner = o->depth = o->readers = o->taker = o->poster = 0;
			o->posters = o->known = 0;
			o->value_known = ty->cls == PTT_CLASS_SEM && ptt_type_arg_index(ty, PTT_ARGNAME_VALUE) >= 0;
			o->value = (int64_t)ptt_event_argn(ev, PTT_ARGNAME_VALUE, 0);
			o->sem_lock = o->value_known && o->value == 1;
		}
		break;
	case PTT_ROLE_DESTROY:
		if (ret_of(ev) == 0 && (o = model_object(m, ev->pid, obj)) && !o->holders && !o->waiters)
			end_object(m, o, ns);
		break;
	case PTT_ROLE_LIFE:
		on_life(m, t, ev);
		break;
	case PTT_ROLE_POINT:
		point(m, t, ev);
		break;
	default: /* names, padding */
		break;
	}
}

void model_finish(struct model *m, uint64_t ns)
{
	struct ptt_map_iter it;
	void *p;
	for (ptt_map_iter_init(&it, &m->processes); ptt_map_next(&it, NULL, &p);)
		end_process(m, ((struct mprocess *)p)->pid, ns); /* deletes the current entry only: safe */
}

int model_foreach_thread(const struct model *m, int (*fn)(void *ctx, struct mthread *t), void *ctx)
{
	struct ptt_map_iter it;
	void *t;
	for (ptt_map_iter_init(&it, &m->threads); ptt_map_next(&it, NULL, &t);) {
		int rc = fn(ctx, t);
		if (rc)
			return rc;
	}
	return 0;
}

int model_foreach_open(const struct model *m, int (*fn)(void *ctx, struct mthread *t, const struct mframe *f), void *ctx)
{
	struct ptt_map_iter it;
	void *v;
	for (ptt_map_iter_init(&it, &m->threads); ptt_map_next(&it, NULL, &v);) {
		struct mthread *t = v;
		for (unsigned k = 0; k < t->depth; k++) {
			int rc = fn(ctx, t, &t->stack[k]);
			if (rc)
				return rc;
		}
	}
	return 0;
}

struct cut {
	uint32_t pid, tid;
	uint64_t end_ns;
	int (*fn)(void *ctx, struct mthread *t, const struct mframe *f);
	void *ctx;
};

static int cut_wait(void *ctx, struct mthread *t, const struct mframe *f)
{
	const struct cut *c = ctx;
	if ((c->pid && t->pid != c->pid) || (c->tid && t->tid != c->tid))
		return 0;
	if (!mstate_is_wait(f->state) || mstate_class(f->state) == PTT_CLASS_META || f->state == MS_OTHER_WAIT ||
	    c->end_ns < f->begin_ns || f->lost) /* its end may be among its thread's lost events (lost events, above) */
		return 0;
	return c->fn(c->ctx, t, f);
}

int model_foreach_cut(const struct model *m, const struct ptt_event *ev, uint64_t end_ns,
		      int (*fn)(void *ctx, struct mthread *t, const struct mframe *f), void *ctx)
{
	struct cut c = { 0, 0, end_ns, fn, ctx };
	if (ev && ev->id != PTT_EV_THREAD_END && ev->id != PTT_EV_PROCESS_EXIT)
		return 0;
	if (ev) {
		c.pid = ev->pid;
		c.tid = ev->id == PTT_EV_THREAD_END ? ev->tid : 0;
		c.end_ns = ev->ns;
	}
	return model_foreach_open(m, cut_wait, &c);
}

struct mthread *model_any_holder(const struct model *m, uint32_t pid, uint64_t addr, const struct mthread *not)
{
	struct mobject *o = model_object(m, pid, addr);
	if (o && o->owner) {
		struct mthread *t = model_object_user(m, o, pid, o->owner);
		return t != not ? t : NULL;
	}
	struct ptt_map_iter it;
	void *v;
	for (ptt_map_iter_init(&it, &m->threads); ptt_map_next(&it, NULL, &v);) {
		struct mthread *t = v;
		if (t == not || (t->pid != pid && !PTT_IS_SHARED(addr)))
			continue;
		for (unsigned k = 0; k < t->depth; k++)
			if (t->stack[k].obj == addr && mstate_is_hold(t->stack[k].state))
				return t;
	}
	return NULL;
}

int model_frame_event(const struct mthread *t, const struct mframe *f, const struct ptt_types *types,
		      uint64_t at_ns, uint64_t at_ticks, struct ptt_event *ev)
{
	memset(ev, 0, sizeof *ev);
	ev->type = ptt_types_get(types, f->open.id);
	if (!ev->type)
		return -1;
	ev->id = f->open.id;
	ev->nargs = ev->type->nargs;
	ev->ns = at_ns;
	ev->ticks = at_ticks;
	ev->pid = t->pid;
	ev->tid = t->tid;
	ev->pos = f->open.pos;
	memcpy(ev->arg, f->open.arg, sizeof ev->arg);
	return 0;
}

void model_free(struct model *m)
{
	if (!m)
		return;
	struct ptt_map_iter it;
	void *v;
	for (ptt_map_iter_init(&it, &m->threads); ptt_map_next(&it, NULL, &v);) {
		free(((struct mthread *)v)->stack);
		free(v);
	}
	for (ptt_map_iter_init(&it, &m->processes); ptt_map_next(&it, NULL, &v);)
		free(v);
	for (ptt_map_iter_init(&it, &m->objects); ptt_map_next(&it, NULL, &v);)
		free(v);
	ptt_map_free(&m->threads);
	ptt_map_free(&m->processes);
	ptt_stacks_free(m->stacks);
	ptt_map_free(&m->objects);
	ptt_map_free(&m->joiners);
	ptt_map_free(&m->ended);
	ptt_map_free(&m->pids);
	ptt_map_free(&m->exited);
	ptt_map_free(&m->announced);
	ptt_map_free(&m->histories);
	ptt_map_free(&m->cuts);
	while (m->tee) {
		struct model_tee *prev = m->tee->prev;
		free(m->tee);
		m->tee = prev;
	}
	free(m);
}

/*
 * Two observers of one model (model_observe_also): each callback calls the
 * first observer's, then the second's.  The tee lives as long as the model.
 */
#define TEE(name, params, args) \
	static void tee_##name params \
	{ \
		const struct model_tee *tee = ctx; \
		if (tee->a.name) \
			tee->a.name(tee->a.ctx, args); \
		if (tee->b.name) \
			tee->b.name(tee->b.ctx, args); \
	}
#define A(...) __VA_ARGS__
TEE(process_begin, (void *ctx, struct mprocess *p, uint64_t ns), A(p, ns))
TEE(process_end, (void *ctx, struct mprocess *p, uint64_t ns), A(p, ns))
TEE(thread_begin, (void *ctx, struct mthread *t, struct mprocess *p, uint64_t ns), A(t, p, ns))
TEE(thread_end, (void *ctx, struct mthread *t, struct mprocess *p, uint64_t ns), A(t, p, ns))
TEE(state, (void *ctx, struct mthread *t, const struct mframe *old, const struct mframe *now, uint64_t ns), A(t, old, now, ns))
TEE(link, (void *ctx, struct mthread *from, struct mthread *to, const char *kind, uint64_t obj, uint64_t ns),
    A(from, to, kind, obj, ns))
TEE(point, (void *ctx, struct mthread *t, const struct ptt_event *ev), A(t, ev))
TEE(link_start, (void *ctx, struct mprocess *p, uint32_t from, const char *kind, uint64_t key, uint64_t ns),
    A(p, from, kind, key, ns))
TEE(link_end, (void *ctx, struct mprocess *p, uint32_t to, const char *kind, uint64_t key, uint64_t ns), A(p, to, kind, key, ns))
TEE(object_begin, (void *ctx, struct mobject *o, struct mprocess *p, uint64_t ns), A(o, p, ns))
TEE(object_end, (void *ctx, struct mobject *o, struct mprocess *p, uint64_t ns), A(o, p, ns))
TEE(object_count, (void *ctx, struct mobject *o, int waiters, uint64_t ns), A(o, waiters, ns))
TEE(wait_begin, (void *ctx, struct mthread *t, struct mobject *o, const struct mframe *wait, const struct ptt_event *ev),
    A(t, o, wait, ev))
TEE(acquire, (void *ctx, struct mthread *t, struct mobject *o, const struct mframe *hold, const struct mframe *wait,
	      const struct ptt_event *ev), A(t, o, hold, wait, ev))
TEE(release, (void *ctx, struct mthread *t, struct mobject *o, const struct mframe *hold, const struct ptt_event *ev),
    A(t, o, hold, ev))
TEE(wait_end, (void *ctx, struct mthread *t, struct mobject *o, const struct mframe *wait, int ok, const struct ptt_event *ev),
    A(t, o, wait, ok, ev))
TEE(last, (void *ctx, struct mthread *t, struct mobject *o, const struct ptt_event *ev), A(t, o, ev))
TEE(anomaly, (void *ctx, const struct ptt_event *ev, const struct manomaly *a), A(ev, a))
#undef A
#undef TEE

int model_observe_also(struct model *m, const struct model_ops *ops)
{
	struct model_tee *tee = calloc(1, sizeof *tee);
	if (!tee)
		return -1;
	tee->a = m->ops;
	tee->b = *ops;
	tee->prev = m->tee;
	m->tee = tee;
	/* a callback is teed when either observer has it (object_begin decides whether objects are shown) */
#define ON(name) ((tee->a.name || tee->b.name) ? tee_##name : NULL)
	struct model_ops both = {
		.ctx = tee, .process_begin = ON(process_begin), .process_end = ON(process_end),
		.thread_begin = ON(thread_begin), .thread_end = ON(thread_end), .state = ON(state), .link = ON(link),
		.point = ON(point), .link_start = ON(link_start), .link_end = ON(link_end),
		.object_begin = ON(object_begin), .object_end = ON(object_end), .object_count = ON(object_count),
		.wait_begin = ON(wait_begin), .acquire = ON(acquire), .release = ON(release), .wait_end = ON(wait_end),
		.last = ON(last), .anomaly = ON(anomaly),
	};
#undef ON
	model_observe(m, &both);
	return 0;
}

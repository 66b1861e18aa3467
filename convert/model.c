/* model.c - replaying thread states, life cycles and hand-offs from events. */
#include <stdlib.h>
#include <string.h>

#include "model.h"
#include "pmap.h"

const char *const mstate_name[MS_COUNT] = {
	"Running", "Blocked on mutex", "Holding mutex", "Waiting on condition", "Waiting at barrier",
	"Joining", "Waiting on semaphore", "Waiting to read-lock", "Waiting to write-lock",
	"Holding read lock", "Holding write lock", "Holding spinlock",
};
const char *const mstate_alias[MS_COUNT] = { "R", "MW", "MH", "CW", "BW", "JW", "SW", "RRW", "RWW", "RRH", "RWH", "SH" };
const char *const mstate_key[MS_COUNT] = {
	"running", "blocked_mutex", "holding_mutex", "cond_wait", "barrier_wait", "join", "sem_wait",
	"rwlock_read_wait", "rwlock_write_wait", "rwlock_read_hold", "rwlock_write_hold", "spin_hold",
};

struct model {
	struct model_ops ops;
	struct pmap threads, processes, objects;
	struct pmap joiners;  /* (pid, target tid) -> the thread blocked joining it */
	struct pmap ended;    /* (process serial, tid) -> serial of a thread that ended, not joined yet */
	uint32_t serial;
	uint64_t link_keys;
	int objects_on;
};

/* Ended, unjoined threads remembered at most (detached threads are never joined): then forgotten. */
#define MODEL_ENDED_MAX 65536

/* the kind of object a state is about (0: none), and whether it holds or waits */
static const uint8_t state_cls[MS_COUNT] = {
	[MS_MUTEX_WAIT] = PTT_CLASS_MUTEX, [MS_MUTEX_HOLD] = PTT_CLASS_MUTEX, [MS_COND_WAIT] = PTT_CLASS_COND,
	[MS_BARRIER] = PTT_CLASS_BARRIER, [MS_SEM_WAIT] = PTT_CLASS_SEM, [MS_RW_RD_WAIT] = PTT_CLASS_RWLOCK,
	[MS_RW_WR_WAIT] = PTT_CLASS_RWLOCK, [MS_RW_RD_HOLD] = PTT_CLASS_RWLOCK, [MS_RW_WR_HOLD] = PTT_CLASS_RWLOCK,
	[MS_SPIN_HOLD] = PTT_CLASS_SPIN,
};
static int is_hold(unsigned s)
{
	return s == MS_MUTEX_HOLD || s == MS_RW_RD_HOLD || s == MS_RW_WR_HOLD || s == MS_SPIN_HOLD;
}

static uint64_t tkey(uint32_t pid, uint32_t tid) { return (uint64_t)pid << 32 | tid; }
static uint64_t ekey(const struct mprocess *p, uint32_t tid) { return (uint64_t)p->serial << 32 | tid; }

struct model *model_new(const struct model_ops *ops)
{
	struct model *m = calloc(1, sizeof *m);
	if (m) {
		m->ops = *ops;
		m->objects_on = ops->object_begin != NULL;
	}
	return m;
}

static struct mprocess *process_of(struct model *m, uint32_t pid, uint64_t ns)
{
	struct mprocess *p = pmap_get(&m->processes, pid);
	if (p)
		return p;
	p = calloc(1, sizeof *p);
	if (!p || pmap_put(&m->processes, pid, p)) {
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
	struct mthread *t = pmap_get(&m->threads, tkey(pid, tid));
	if (t)
		return t;
	struct mprocess *p = process_of(m, pid, ns);
	if (!p)
		return NULL;
	t = calloc(1, sizeof *t);
	if (!t || pmap_put(&m->threads, tkey(pid, tid), t)) {
		free(t);
		return NULL;
	}
	if (m->ended.used)
		pmap_del(&m->ended, ekey(p, tid)); /* the tid is reused: the old thread cannot be joined any more */
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
	struct mprocess *p = pmap_get(&m->processes, o->pid);
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
static struct mobject *object_of(struct model *m, uint32_t pid, uint64_t addr, unsigned cls, uint64_t ns)
{
	uint64_t k = pmap_obj_key(pid, addr);
	struct mobject *o = pmap_get(&m->objects, k);
	if (!o) {
		o = calloc(1, sizeof *o);
		if (!o || pmap_put(&m->objects, k, o)) {
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
	unsigned cls = state_cls[f->state];
	if (!m->objects_on || !cls)
		return;
	struct mobject *o = delta > 0 ? object_of(m, t->pid, f->obj, cls, ns) : pmap_get(&m->objects, pmap_obj_key(t->pid, f->obj));
	if (!o || o->cls != cls || !o->serial || o->addr != f->obj || o->pid != t->pid)
		return;
	int waits = !is_hold(f->state);
	uint32_t *n = waits ? &o->waiters : &o->holders;
	if (delta > 0)
		(*n)++;
	else if (*n)
		(*n)--;
	else
		return;
	if (m->ops.object_count)
		m->ops.object_count(m->ops.ctx, o, waits, ns);
}

struct mthread *model_thread(struct model *m, uint32_t pid, uint32_t tid)
{
	return pmap_get(&m->threads, tkey(pid, tid));
}

static const struct mframe running = { MS_RUNNING, 0, 0 };

static const struct mframe *top(const struct mthread *t)
{
	return t->depth ? &t->stack[t->depth - 1] : &running;
}

static void push(struct model *m, struct mthread *t, enum mstate s, uint64_t obj, uint64_t ns)
{
	struct mframe old = *top(t);
	if (t->depth == MODEL_STACK) { /* absurdly deep: forget the oldest frame */
		count(m, t, &t->stack[0], -1, ns);
		memmove(t->stack, t->stack + 1, (MODEL_STACK - 1) * sizeof t->stack[0]);
		t->depth--;
	}
	t->stack[t->depth].state = (uint8_t)s;
	t->stack[t->depth].obj = obj;
	t->stack[t->depth].since_ns = ns;
	t->depth++;
	if (m->ops.state)
		m->ops.state(m->ops.ctx, t, &old, top(t), ns);
	count(m, t, top(t), +1, ns);
}

/* Remove the topmost frame in state s on obj (anywhere in the stack); 1 if there was one. */
static int drop(struct model *m, struct mthread *t, enum mstate s, uint64_t obj, uint64_t ns)
{
	for (unsigned i = t->depth; i-- > 0;) {
		if (t->stack[i].state != s || t->stack[i].obj != obj)
			continue;
		struct mframe old = *top(t), gone = t->stack[i];
		int was_top = i == t->depth - 1;
		memmove(t->stack + i, t->stack + i + 1, (t->depth - i - 1) * sizeof t->stack[0]);
		t->depth--;
		if (was_top) {
			if (t->depth)
				t->stack[t->depth - 1].since_ns = ns; /* a new interval of the state uncovered */
			else
				t->running_since = ns;
			if (m->ops.state)
				m->ops.state(m->ops.ctx, t, &old, top(t), ns);
		}
		count(m, t, &gone, -1, ns);
		return 1;
	}
	return 0;
}

/* The end of an object's container (if shown) and of its record. */
static void end_object(struct model *m, struct mobject *o, uint64_t ns)
{
	struct mprocess *p = pmap_get(&m->processes, o->pid);
	if (o->serial && p && m->ops.object_end)
		m->ops.object_end(m->ops.ctx, o, p, ns);
	pmap_del(&m->objects, pmap_obj_key(o->pid, o->addr));
	free(o);
}

/* A successful destroy: the address may be reused for a new object.  Kept while threads still use it. */
static void forget_object(struct model *m, uint32_t pid, uint64_t addr, uint64_t ns)
{
	struct mobject *o = pmap_get(&m->objects, pmap_obj_key(pid, addr));
	if (o && o->pid == pid && o->addr == addr && !o->holders && !o->waiters)
		end_object(m, o, ns);
}

/* t stops waiting in a join. */
static void unwait_join(struct model *m, struct mthread *t)
{
	if (t->joining && pmap_get(&m->joiners, tkey(t->pid, t->joining)) == t)
		pmap_del(&m->joiners, tkey(t->pid, t->joining));
	t->joining = 0;
}

/* End the join link started towards t, if any. */
static void end_join_link(struct model *m, struct mthread *t, uint64_t ns)
{
	if (!t->join_key)
		return;
	struct mprocess *p = pmap_get(&m->processes, t->pid);
	if (p && m->ops.link_end)
		m->ops.link_end(m->ops.ctx, p, t->serial, "join", t->join_key, ns);
	t->join_key = 0;
}

/* t really ended (thread_end): start the join link now if a joiner waits, else remember t for a later join. */
static void thread_ended(struct model *m, struct mthread *t, uint64_t ns)
{
	struct mprocess *p = pmap_get(&m->processes, t->pid);
	if (!p || !m->ops.link_start || !m->ops.link_end)
		return;
	struct mthread *j = pmap_get(&m->joiners, tkey(t->pid, t->tid));
	if (j && j != t && !j->join_key) {
		j->join_key = ++m->link_keys;
		m->ops.link_start(m->ops.ctx, p, t->serial, "join", j->join_key, ns);
		return;
	}
	if (m->ended.used >= MODEL_ENDED_MAX) {
		pmap_free(&m->ended);
		memset(&m->ended, 0, sizeof m->ended);
	}
	pmap_put(&m->ended, ekey(p, t->tid), (void *)(uintptr_t)t->serial);
}

static void end_thread(struct model *m, struct mthread *t, uint64_t ns)
{
	while (t->depth) {
		struct mframe old = *top(t);
		t->depth--;
		if (t->depth)
			t->stack[t->depth - 1].since_ns = ns;
		else
			t->running_since = ns;
		if (m->ops.state)
			m->ops.state(m->ops.ctx, t, &old, top(t), ns);
		count(m, t, &old, -1, ns);
	}
	end_join_link(m, t, ns);
	unwait_join(m, t);
	struct mprocess *p = pmap_get(&m->processes, t->pid);
	if (p && p->live_threads)
		p->live_threads--;
	if (m->ops.thread_end)
		m->ops.thread_end(m->ops.ctx, t, p, ns);
	pmap_del(&m->threads, tkey(t->pid, t->tid));
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
	struct mprocess *p = pmap_get(&m->processes, t->pid);
	struct mthread *x = target && target != t->tid ? pmap_get(&m->threads, tkey(t->pid, target)) : NULL;
	if (t->join_key) {
		end_join_link(m, t, ns);
	} else if (ok && target && p && m->ops.link_start && m->ops.link_end) {
		uint32_t from = x ? x->serial : (uint32_t)(uintptr_t)pmap_get(&m->ended, ekey(p, target));
		if (from) {
			uint64_t key = ++m->link_keys;
			m->ops.link_start(m->ops.ctx, p, from, "join", key, ns);
			m->ops.link_end(m->ops.ctx, p, t->serial, "join", key, ns);
		}
	}
	unwait_join(m, t);
	if (ok && target && p) {
		if (m->ended.used)
			pmap_del(&m->ended, ekey(p, target));
		if (x)
			end_thread(m, x, ns);
	}
}

static void end_process(struct model *m, uint32_t pid, uint64_t ns)
{
	for (size_t i = 0; i < m->threads.cap; i++) {
		struct mthread *t = m->threads.vals[i];
		if (t && t->pid == pid) {
			end_thread(m, t, ns);
			i = (size_t)-1; /* the table shifted: start over */
		}
	}
	/* objects after the threads (their counts are back to 0), before the process */
	for (size_t i = 0; i < m->objects.cap;) {
		struct mobject *o = m->objects.vals[i];
		if (o && o->pid == pid)
			end_object(m, o, ns); /* backward shift may refill slot i, never from slots not seen yet below i */
		else
			i++;
	}
	struct mprocess *p = pmap_get(&m->processes, pid);
	if (!p)
		return;
	if (m->ops.process_end)
		m->ops.process_end(m->ops.ctx, p, ns);
	pmap_del(&m->processes, pid);
	free(p);
}

static int acquired(const struct ptt_event *ev)
{
	int64_t ret = (int64_t)ptt_event_arg(ev, "ret", 0);
	return ret == 0 || ret == 130; /* EOWNERDEAD */
}

static void link_from_last(struct model *m, struct mthread *t, struct mobject *o, const char *kind,
			   uint64_t obj, uint64_t ns)
{
	if (!o || !o->last_tid || o->last_tid == t->tid || !m->ops.link)
		return;
	struct mthread *from = pmap_get(&m->threads, tkey(t->pid, o->last_tid));
	if (from)
		m->ops.link(m->ops.ctx, from, t, kind, obj, ns);
}

static void lock_acquired(struct model *m, struct mthread *t, enum mstate wait, enum mstate hold,
			  uint64_t obj, const struct ptt_event *ev)
{
	int waited = drop(m, t, wait, obj, ev->ns);
	if (!acquired(ev)) {
		if (m->ops.point)
			m->ops.point(m->ops.ctx, t, ev);
		return;
	}
	if (waited)
		link_from_last(m, t, object_of(m, t->pid, obj, 0, ev->ns), "handoff", obj, ev->ns);
	push(m, t, hold, obj, ev->ns);
}

void model_event(struct model *m, const struct ptt_event *ev)
{
	const struct ptt_type *ty = ev->type;
	if (!ty || ty->source == PTT_SRC_RECORDER)
		return;
	uint64_t ns = ev->ns;
	if (ev->id == PTT_EV_PROCESS_BEGIN) {
		process_of(m, ev->pid, ns);
		return;
	}
	if (ev->id == PTT_EV_PROCESS_EXIT) {
		end_process(m, ev->pid, ns);
		return;
	}
	if (ev->id == PTT_EV_THREAD_END) { /* after process_exit the thread is already gone */
		struct mthread *gone = pmap_get(&m->threads, tkey(ev->pid, ev->tid));
		if (gone) {
			thread_ended(m, gone, ns);
			end_thread(m, gone, ns);
		}
		return;
	}
	struct mthread *t = thread_of(m, ev->pid, ev->tid, ns);
	if (!t)
		return;
	uint64_t obj = ty->nargs && ty->argkind[0] == PTT_ARG_PTR ? ev->arg[0] : 0;
	struct mobject *o;
	if (m->objects_on && obj && ty->cls >= PTT_CLASS_MUTEX && ty->cls <= PTT_CLASS_SPIN) {
		object_of(m, t->pid, obj, ty->cls, ns); /* shown from its first appearance */
		if (ty->cls == PTT_CLASS_COND && ev->id != PTT_EV_COND_SIGNAL && ev->id != PTT_EV_COND_BROADCAST) {
			uint64_t mutex = ptt_event_arg(ev, "mutex", 0);
			if (mutex)
				object_of(m, t->pid, mutex, PTT_CLASS_MUTEX, ns);
		}
	}
	switch (ev->id) {
	case PTT_EV_THREAD_BEGIN: {
		uint32_t parent = (uint32_t)ptt_event_arg(ev, "parent", 0);
		struct mthread *pt = parent ? pmap_get(&m->threads, tkey(ev->pid, parent)) : NULL;
		if (pt && m->ops.link)
			m->ops.link(m->ops.ctx, pt, t, "create", 0, ns);
		break;
	}
	case PTT_EV_THREAD_JOIN_REQ: {
		uint32_t target = (uint32_t)ptt_event_arg(ev, "target", 0);
		push(m, t, MS_JOIN, target, ns);
		unwait_join(m, t);
		if (target && target != t->tid && !pmap_put(&m->joiners, tkey(t->pid, target), t))
			t->joining = target;
		break;
	}
	case PTT_EV_THREAD_JOIN:
	case PTT_EV_THREAD_TRYJOIN: {
		uint32_t target = (uint32_t)ptt_event_arg(ev, "target", 0);
		drop(m, t, MS_JOIN, target, ns);
		if (m->ops.point)
			m->ops.point(m->ops.ctx, t, ev);
		join_returned(m, t, target, ptt_event_arg(ev, "ret", 1) == 0, ns);
		break;
	}
	case PTT_EV_MUTEX_LOCK_REQ:
	case PTT_EV_MUTEX_TIMEDLOCK_REQ:
		push(m, t, MS_MUTEX_WAIT, obj, ns);
		break;
	case PTT_EV_MUTEX_LOCK:
	case PTT_EV_MUTEX_TIMEDLOCK:
	case PTT_EV_MUTEX_TRYLOCK:
		lock_acquired(m, t, MS_MUTEX_WAIT, MS_MUTEX_HOLD, obj, ev);
		break;
	case PTT_EV_MUTEX_UNLOCK:
		if (ptt_event_arg(ev, "ret", 0) == 0 && drop(m, t, MS_MUTEX_HOLD, obj, ns) && (o = object_of(m, t->pid, obj, 0, ns)))
			o->last_tid = t->tid;
		if (m->ops.point)
			m->ops.point(m->ops.ctx, t, ev);
		break;
	case PTT_EV_COND_WAIT_REQ:
	case PTT_EV_COND_TIMEDWAIT_REQ: {
		uint64_t mutex = ptt_event_arg(ev, "mutex", 0);
		if (drop(m, t, MS_MUTEX_HOLD, mutex, ns) && (o = object_of(m, t->pid, mutex, 0, ns)))
			o->last_tid = t->tid;
		push(m, t, MS_COND_WAIT, obj, ns);
		break;
	}
	case PTT_EV_COND_WAIT: {
		int was_waiting = drop(m, t, MS_COND_WAIT, obj, ns);
		if (was_waiting && ptt_event_arg(ev, "ret", 0) == 0)
			link_from_last(m, t, object_of(m, t->pid, obj, 0, ns), "wake", obj, ns);
		push(m, t, MS_MUTEX_HOLD, ptt_event_arg(ev, "mutex", 0), ns);
		break;
	}
	case PTT_EV_COND_SIGNAL:
	case PTT_EV_COND_BROADCAST:
		if ((o = object_of(m, t->pid, obj, 0, ns)))
			o->last_tid = t->tid;
		if (m->ops.point)
			m->ops.point(m->ops.ctx, t, ev);
		break;
	case PTT_EV_BARRIER_WAIT_REQ:
		if ((o = object_of(m, t->pid, obj, 0, ns)))
			o->last_tid = t->tid; /* the last to arrive releases the others */
		push(m, t, MS_BARRIER, obj, ns);
		break;
	case PTT_EV_BARRIER_WAIT:
		if (drop(m, t, MS_BARRIER, obj, ns))
			link_from_last(m, t, object_of(m, t->pid, obj, 0, ns), "barrier", obj, ns);
		break;
	case PTT_EV_SEM_WAIT_REQ:
		push(m, t, MS_SEM_WAIT, obj, ns);
		break;
	case PTT_EV_SEM_WAIT:
	case PTT_EV_SEM_TIMEDWAIT:
	case PTT_EV_SEM_TRYWAIT:
		if (drop(m, t, MS_SEM_WAIT, obj, ns) && ptt_event_arg(ev, "ret", 0) == 0)
			link_from_last(m, t, object_of(m, t->pid, obj, 0, ns), "post", obj, ns);
		if (ev->id == PTT_EV_SEM_TRYWAIT && m->ops.point)
			m->ops.point(m->ops.ctx, t, ev);
		break;
	case PTT_EV_SEM_POST:
		if ((o = object_of(m, t->pid, obj, 0, ns)))
			o->last_tid = t->tid;
		if (m->ops.point)
			m->ops.point(m->ops.ctx, t, ev);
		break;
	case PTT_EV_RWLOCK_RDLOCK_REQ:
		push(m, t, MS_RW_RD_WAIT, obj, ns);
		break;
	case PTT_EV_RWLOCK_WRLOCK_REQ:
		push(m, t, MS_RW_WR_WAIT, obj, ns);
		break;
	case PTT_EV_RWLOCK_RDLOCK:
	case PTT_EV_RWLOCK_TRYRDLOCK:
	case PTT_EV_RWLOCK_TIMEDRDLOCK:
		lock_acquired(m, t, MS_RW_RD_WAIT, MS_RW_RD_HOLD, obj, ev);
		break;
	case PTT_EV_RWLOCK_WRLOCK:
	case PTT_EV_RWLOCK_TRYWRLOCK:
	case PTT_EV_RWLOCK_TIMEDWRLOCK:
		lock_acquired(m, t, MS_RW_WR_WAIT, MS_RW_WR_HOLD, obj, ev);
		break;
	case PTT_EV_RWLOCK_UNLOCK:
		if (!drop(m, t, MS_RW_WR_HOLD, obj, ns))
			drop(m, t, MS_RW_RD_HOLD, obj, ns);
		if ((o = object_of(m, t->pid, obj, 0, ns)))
			o->last_tid = t->tid;
		break;
	case PTT_EV_SPIN_LOCK:
	case PTT_EV_SPIN_TRYLOCK:
		if (acquired(ev))
			push(m, t, MS_SPIN_HOLD, obj, ns);
		break;
	case PTT_EV_SPIN_UNLOCK:
		drop(m, t, MS_SPIN_HOLD, obj, ns);
		break;
	case PTT_EV_MUTEX_DESTROY:
	case PTT_EV_COND_DESTROY:
	case PTT_EV_RWLOCK_DESTROY:
	case PTT_EV_BARRIER_DESTROY:
	case PTT_EV_SEM_DESTROY:
	case PTT_EV_SEM_CLOSE:
		if (ptt_event_arg(ev, "ret", 0) == 0)
			forget_object(m, ev->pid, obj, ns);
		break;
	default:
		if (m->ops.point && (ty->cls == PTT_CLASS_USER || ev->id == PTT_EV_THREAD_CREATE ||
				     ev->id == PTT_EV_THREAD_CANCEL || ev->id == PTT_EV_PROCESS_FORK ||
				     ev->id == PTT_EV_PROCESS_EXEC || ev->id == PTT_EV_THREAD_EXIT))
			m->ops.point(m->ops.ctx, t, ev);
	}
}

void model_finish(struct model *m, uint64_t ns)
{
	for (;;) {
		uint32_t pid = 0;
		int found = 0;
		for (size_t i = 0; i < m->processes.cap && !found; i++)
			if (m->processes.vals[i]) {
				pid = ((struct mprocess *)m->processes.vals[i])->pid;
				found = 1;
			}
		if (!found)
			break;
		end_process(m, pid, ns);
	}
}

void model_free(struct model *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->threads.cap; i++)
		free(m->threads.vals[i]);
	for (size_t i = 0; i < m->processes.cap; i++)
		free(m->processes.vals[i]);
	for (size_t i = 0; i < m->objects.cap; i++)
		free(m->objects.vals[i]);
	pmap_free(&m->threads);
	pmap_free(&m->processes);
	pmap_free(&m->objects);
	pmap_free(&m->joiners);
	pmap_free(&m->ended);
	free(m);
}

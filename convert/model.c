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

/* per object: who last released or signalled it, for hand-off and wake-up links */
struct mobject {
	uint32_t last_tid;   /* last unlocker / signaller / barrier arriver */
	uint32_t holder;     /* for barriers: arrivals so far */
};

struct model {
	struct model_ops ops;
	struct pmap threads, processes, objects;
	uint32_t serial;
};

static uint64_t tkey(uint32_t pid, uint32_t tid) { return (uint64_t)pid << 32 | tid; }

struct model *model_new(const struct model_ops *ops)
{
	struct model *m = calloc(1, sizeof *m);
	if (m)
		m->ops = *ops;
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
		memmove(t->stack, t->stack + 1, (MODEL_STACK - 1) * sizeof t->stack[0]);
		t->depth--;
	}
	t->stack[t->depth].state = (uint8_t)s;
	t->stack[t->depth].obj = obj;
	t->stack[t->depth].since_ns = ns;
	t->depth++;
	if (m->ops.state)
		m->ops.state(m->ops.ctx, t, &old, top(t), ns);
}

/* Remove the topmost frame in state s on obj (anywhere in the stack); 1 if there was one. */
static int drop(struct model *m, struct mthread *t, enum mstate s, uint64_t obj, uint64_t ns)
{
	for (unsigned i = t->depth; i-- > 0;) {
		if (t->stack[i].state != s || t->stack[i].obj != obj)
			continue;
		struct mframe old = *top(t);
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
		return 1;
	}
	return 0;
}

static struct mobject *object_of(struct model *m, uint32_t pid, uint64_t addr)
{
	uint64_t k = pmap_obj_key(pid, addr);
	struct mobject *o = pmap_get(&m->objects, k);
	if (!o) {
		o = calloc(1, sizeof *o);
		if (!o || pmap_put(&m->objects, k, o)) {
			free(o);
			return NULL;
		}
	}
	return o;
}

static void forget_object(struct model *m, uint32_t pid, uint64_t addr)
{
	uint64_t k = pmap_obj_key(pid, addr);
	free(pmap_get(&m->objects, k));
	pmap_del(&m->objects, k);
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
	}
	struct mprocess *p = pmap_get(&m->processes, t->pid);
	if (p && p->live_threads)
		p->live_threads--;
	if (m->ops.thread_end)
		m->ops.thread_end(m->ops.ctx, t, p, ns);
	pmap_del(&m->threads, tkey(t->pid, t->tid));
	free(t);
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
		link_from_last(m, t, object_of(m, t->pid, obj), "handoff", obj, ev->ns);
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
		if (gone)
			end_thread(m, gone, ns);
		return;
	}
	struct mthread *t = thread_of(m, ev->pid, ev->tid, ns);
	if (!t)
		return;
	uint64_t obj = ty->nargs && ty->argkind[0] == PTT_ARG_PTR ? ev->arg[0] : 0;
	struct mobject *o;
	switch (ev->id) {
	case PTT_EV_THREAD_BEGIN: {
		uint32_t parent = (uint32_t)ptt_event_arg(ev, "parent", 0);
		struct mthread *pt = parent ? pmap_get(&m->threads, tkey(ev->pid, parent)) : NULL;
		if (pt && m->ops.link)
			m->ops.link(m->ops.ctx, pt, t, "create", 0, ns);
		break;
	}
	case PTT_EV_THREAD_JOIN_REQ:
		push(m, t, MS_JOIN, ptt_event_arg(ev, "target", 0), ns);
		break;
	case PTT_EV_THREAD_JOIN:
	case PTT_EV_THREAD_TRYJOIN:
		drop(m, t, MS_JOIN, ptt_event_arg(ev, "target", 0), ns);
		if (m->ops.point)
			m->ops.point(m->ops.ctx, t, ev);
		break;
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
		if (ptt_event_arg(ev, "ret", 0) == 0 && drop(m, t, MS_MUTEX_HOLD, obj, ns) && (o = object_of(m, t->pid, obj)))
			o->last_tid = t->tid;
		if (m->ops.point)
			m->ops.point(m->ops.ctx, t, ev);
		break;
	case PTT_EV_COND_WAIT_REQ:
	case PTT_EV_COND_TIMEDWAIT_REQ: {
		uint64_t mutex = ptt_event_arg(ev, "mutex", 0);
		if (drop(m, t, MS_MUTEX_HOLD, mutex, ns) && (o = object_of(m, t->pid, mutex)))
			o->last_tid = t->tid;
		push(m, t, MS_COND_WAIT, obj, ns);
		break;
	}
	case PTT_EV_COND_WAIT: {
		int was_waiting = drop(m, t, MS_COND_WAIT, obj, ns);
		if (was_waiting && ptt_event_arg(ev, "ret", 0) == 0)
			link_from_last(m, t, object_of(m, t->pid, obj), "wake", obj, ns);
		push(m, t, MS_MUTEX_HOLD, ptt_event_arg(ev, "mutex", 0), ns);
		break;
	}
	case PTT_EV_COND_SIGNAL:
	case PTT_EV_COND_BROADCAST:
		if ((o = object_of(m, t->pid, obj)))
			o->last_tid = t->tid;
		if (m->ops.point)
			m->ops.point(m->ops.ctx, t, ev);
		break;
	case PTT_EV_BARRIER_WAIT_REQ:
		if ((o = object_of(m, t->pid, obj)))
			o->last_tid = t->tid; /* the last to arrive releases the others */
		push(m, t, MS_BARRIER, obj, ns);
		break;
	case PTT_EV_BARRIER_WAIT:
		if (drop(m, t, MS_BARRIER, obj, ns))
			link_from_last(m, t, object_of(m, t->pid, obj), "barrier", obj, ns);
		break;
	case PTT_EV_SEM_WAIT_REQ:
		push(m, t, MS_SEM_WAIT, obj, ns);
		break;
	case PTT_EV_SEM_WAIT:
	case PTT_EV_SEM_TIMEDWAIT:
	case PTT_EV_SEM_TRYWAIT:
		if (drop(m, t, MS_SEM_WAIT, obj, ns) && ptt_event_arg(ev, "ret", 0) == 0)
			link_from_last(m, t, object_of(m, t->pid, obj), "post", obj, ns);
		if (ev->id == PTT_EV_SEM_TRYWAIT && m->ops.point)
			m->ops.point(m->ops.ctx, t, ev);
		break;
	case PTT_EV_SEM_POST:
		if ((o = object_of(m, t->pid, obj)))
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
		if ((o = object_of(m, t->pid, obj)))
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
		forget_object(m, ev->pid, obj);
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
	free(m);
}

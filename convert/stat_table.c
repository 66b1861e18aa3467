/* stat_table.c - ptt-stat's accounting and tables. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"
#include "pmap.h"
#include "stat_table.h"

#define HIST 256 /* log histogram: 4 buckets per power of two of nanoseconds */
#define TOPW 4
#define HOLDS 16

struct obj {
	uint32_t pid;
	uint64_t addr;
	uint8_t cls;
	uint64_t acq, contended, waits;
	uint64_t wait_total, wait_max, hold_total, hold_max, holds;
	uint64_t owner_changes;
	uint32_t last_owner;
	uint32_t hist[HIST];
	struct { uint32_t tid; uint64_t ns; } top[TOPW];
};

struct thr {
	uint32_t pid, tid;
	uint64_t first_ns, last_ns, ended_ns;
	uint64_t in_state[MS_COUNT];
	struct { uint64_t obj, start; int req; } wait;
	struct { uint64_t obj, start; } hold[HOLDS];
	unsigned nholds;
	int ended;
};

struct stat_table {
	struct pmap objs_by_key, thr_by_key;
	struct obj **objs;
	size_t nobjs, cap_objs;
	struct thr **thrs;
	size_t nthrs, cap_thrs;
	struct ptt_names *names;
	struct model *model;
	uint64_t last_ns, first_ns;
	int any;
};

static uint64_t tkey(uint32_t pid, uint32_t tid) { return (uint64_t)pid << 32 | tid; }

static int grow(void ***arr, size_t *cap, size_t n)
{
	if (n < *cap)
		return 0;
	size_t nc = *cap ? *cap * 2 : 64;
	void **na = realloc(*arr, nc * sizeof *na);
	if (!na)
		return -1;
	*arr = na;
	*cap = nc;
	return 0;
}

static struct obj *obj_of(struct stat_table *st, uint32_t pid, uint64_t addr, unsigned cls)
{
	struct obj *o = pmap_get(&st->objs_by_key, pmap_obj_key(pid, addr));
	if (o)
		return o;
	if (grow((void ***)&st->objs, &st->cap_objs, st->nobjs) || !(o = calloc(1, sizeof *o)))
		return NULL;
	if (pmap_put(&st->objs_by_key, pmap_obj_key(pid, addr), o)) {
		free(o);
		return NULL;
	}
	o->pid = pid;
	o->addr = addr;
	o->cls = (uint8_t)cls;
	st->objs[st->nobjs++] = o;
	return o;
}

static struct thr *thr_of(struct stat_table *st, uint32_t pid, uint32_t tid, uint64_t ns)
{
	struct thr *t = pmap_get(&st->thr_by_key, tkey(pid, tid));
	if (t && !t->ended)
		return t;
	if (grow((void ***)&st->thrs, &st->cap_thrs, st->nthrs) || !(t = calloc(1, sizeof *t)))
		return NULL;
	if (pmap_put(&st->thr_by_key, tkey(pid, tid), t)) {
		free(t);
		return NULL;
	}
	t->pid = pid;
	t->tid = tid;
	t->first_ns = ns;
	st->thrs[st->nthrs++] = t;
	return t;
}

static unsigned bucket(uint64_t ns)
{
	if (ns < 4)
		return (unsigned)ns;
	unsigned lg = 63u - (unsigned)__builtin_clzll(ns);
	unsigned sub = (unsigned)(ns >> (lg - 2)) & 3u;
	unsigned b = lg * 4 + sub;
	return b < HIST ? b : HIST - 1;
}

static uint64_t bucket_value(unsigned b)
{
	if (b < 4)
		return b;
	unsigned lg = b / 4, sub = b % 4;
	return ((uint64_t)(4 + sub) << (lg - 2)) + ((uint64_t)1 << (lg - 2)) / 2; /* middle of the bucket */
}

static uint64_t percentile(const struct obj *o, double p)
{
	uint64_t want = (uint64_t)((double)o->waits * p + 0.5), seen = 0;
	if (!o->waits)
		return 0;
	if (want < 1)
		want = 1;
	for (unsigned b = 0; b < HIST; b++) {
		seen += o->hist[b];
		if (seen >= want)
			return bucket_value(b) < o->wait_max ? bucket_value(b) : o->wait_max;
	}
	return o->wait_max;
}

static void add_wait(struct obj *o, uint32_t tid, uint64_t d, int contended)
{
	o->waits++;
	o->contended += contended;
	o->wait_total += d;
	if (d > o->wait_max)
		o->wait_max = d;
	o->hist[bucket(d)]++;
	unsigned k;
	for (k = 0; k < TOPW && o->top[k].tid && o->top[k].tid != tid; k++)
		;
	if (k == TOPW) { /* replace the smallest */
		k = 0;
		for (unsigned j = 1; j < TOPW; j++)
			if (o->top[j].ns < o->top[k].ns)
				k = j;
		if (o->top[k].ns > d)
			return;
		o->top[k].ns = 0;
	}
	o->top[k].tid = tid;
	o->top[k].ns += d;
}

static void on_state(void *ctx, struct mthread *mt, const struct mframe *old, const struct mframe *now, uint64_t ns)
{
	struct stat_table *st = ctx;
	(void)now;
	struct thr *t = pmap_get(&st->thr_by_key, tkey(mt->pid, mt->tid));
	uint64_t start = old->state == MS_RUNNING ? mt->running_since : old->since_ns;
	if (t && ns >= start)
		t->in_state[old->state] += ns - start;
}

static void on_thread_end(void *ctx, struct mthread *mt, struct mprocess *p, uint64_t ns)
{
	(void)p;
	static const struct mframe running = { MS_RUNNING, 0, 0 };
	on_state(ctx, mt, &running, &running, ns);
}

struct stat_table *stat_new(void)
{
	struct stat_table *st = calloc(1, sizeof *st);
	if (!st)
		return NULL;
	st->names = ptt_names_new();
	struct model_ops ops = { .ctx = st, .thread_end = on_thread_end, .state = on_state };
	st->model = model_new(&ops);
	if (!st->names || !st->model) {
		stat_free(st);
		return NULL;
	}
	return st;
}

static int acquired(const struct ptt_event *ev)
{
	int64_t ret = (int64_t)ptt_event_arg(ev, "ret", 0);
	return ret == 0 || ret == 130;
}

static void take(struct stat_table *st, struct thr *t, const struct ptt_event *ev, uint64_t obj)
{
	struct obj *o = obj_of(st, ev->pid, obj, ev->type->cls);
	if (!o)
		return;
	int waited = t->wait.req && t->wait.obj == obj;
	uint64_t d = waited ? ev->ns - t->wait.start : 0;
	t->wait.req = 0;
	if (!acquired(ev))
		return;
	o->acq++;
	add_wait(o, ev->tid, d, waited);
	if (o->last_owner && o->last_owner != ev->tid)
		o->owner_changes++;
	o->last_owner = ev->tid;
	if (t->nholds < HOLDS) {
		t->hold[t->nholds].obj = obj;
		t->hold[t->nholds].start = ev->ns;
		t->nholds++;
	}
}

static void release(struct stat_table *st, struct thr *t, const struct ptt_event *ev, uint64_t obj)
{
	for (unsigned i = t->nholds; i-- > 0;) {
		if (t->hold[i].obj != obj)
			continue;
		struct obj *o = obj_of(st, ev->pid, obj, PTT_CLASS_MUTEX);
		uint64_t d = ev->ns - t->hold[i].start;
		if (o) {
			o->holds++;
			o->hold_total += d;
			if (d > o->hold_max)
				o->hold_max = d;
		}
		memmove(t->hold + i, t->hold + i + 1, (t->nholds - i - 1) * sizeof t->hold[0]);
		t->nholds--;
		return;
	}
}

void stat_event(struct stat_table *st, const struct ptt_event *ev)
{
	ptt_names_update(st->names, ev);
	if (ev->id == PTT_EV_SEM_OPEN && ev->nargs && ev->str[0] && !ptt_names_object(st->names, ev->arg[0]))
		ptt_names_set_object(st->names, ev->arg[0], ev->str); /* a named semaphore: its name */
	model_event(st->model, ev);
	if (!st->any)
		st->first_ns = ev->ns;
	st->any = 1;
	st->last_ns = ev->ns;
	if (!ev->type || ev->type->source == PTT_SRC_RECORDER || ev->type->cls == PTT_CLASS_META)
		return;
	if (ev->id == PTT_EV_THREAD_END || ev->id == PTT_EV_PROCESS_EXIT) {
		for (size_t i = 0; i < st->nthrs; i++) {
			struct thr *t = st->thrs[i];
			if (!t->ended && t->pid == ev->pid && (ev->id == PTT_EV_PROCESS_EXIT || t->tid == ev->tid)) {
				t->ended = 1;
				t->ended_ns = ev->ns;
				t->last_ns = ev->ns;
			}
		}
		return;
	}
	struct thr *t = thr_of(st, ev->pid, ev->tid, ev->ns);
	if (!t)
		return;
	t->last_ns = ev->ns;
	uint64_t obj = ev->nargs && ev->type->argkind[0] == PTT_ARG_PTR ? ev->arg[0] : 0;
	if (ptt_role_is_request(ev->type->role) && ev->id != PTT_EV_THREAD_JOIN_REQ) {
		if (ev->id == PTT_EV_COND_WAIT_REQ || ev->id == PTT_EV_COND_TIMEDWAIT_REQ)
			release(st, t, ev, ptt_event_arg(ev, "mutex", 0));
		t->wait.obj = obj;
		t->wait.start = ev->ns;
		t->wait.req = 1;
		return;
	}
	switch (ev->id) {
	case PTT_EV_MUTEX_LOCK: case PTT_EV_MUTEX_TRYLOCK: case PTT_EV_MUTEX_TIMEDLOCK:
	case PTT_EV_RWLOCK_RDLOCK: case PTT_EV_RWLOCK_WRLOCK: case PTT_EV_RWLOCK_TRYRDLOCK:
	case PTT_EV_RWLOCK_TRYWRLOCK: case PTT_EV_RWLOCK_TIMEDRDLOCK: case PTT_EV_RWLOCK_TIMEDWRLOCK:
	case PTT_EV_SPIN_LOCK: case PTT_EV_SPIN_TRYLOCK:
		if (ev->id == PTT_EV_MUTEX_TRYLOCK && !acquired(ev))
			return; /* a failed try is not a wait */
		take(st, t, ev, obj);
		break;
	case PTT_EV_MUTEX_UNLOCK: case PTT_EV_RWLOCK_UNLOCK: case PTT_EV_SPIN_UNLOCK:
		release(st, t, ev, obj);
		break;
	case PTT_EV_COND_WAIT: {
		struct obj *o = obj_of(st, ev->pid, obj, PTT_CLASS_COND);
		if (o && t->wait.req && t->wait.obj == obj) {
			o->acq++;
			add_wait(o, ev->tid, ev->ns - t->wait.start, 1);
		}
		t->wait.req = 0;
		/* the mutex is held again */
		uint64_t m = ptt_event_arg(ev, "mutex", 0);
		if (t->nholds < HOLDS) {
			t->hold[t->nholds].obj = m;
			t->hold[t->nholds].start = ev->ns;
			t->nholds++;
		}
		break;
	}
	case PTT_EV_BARRIER_WAIT: case PTT_EV_SEM_WAIT: case PTT_EV_SEM_TIMEDWAIT: case PTT_EV_SEM_TRYWAIT: {
		struct obj *o = obj_of(st, ev->pid, obj, ev->type->cls);
		int waited = t->wait.req && t->wait.obj == obj;
		if (o && (acquired(ev) || ev->id == PTT_EV_BARRIER_WAIT)) {
			o->acq++;
			add_wait(o, ev->tid, waited ? ev->ns - t->wait.start : 0, waited);
		}
		t->wait.req = 0;
		break;
	}
	default:
		break;
	}
}

void stat_finish(struct stat_table *st)
{
	model_finish(st->model, st->last_ns);
	for (size_t i = 0; i < st->nthrs; i++)
		if (!st->thrs[i]->ended)
			st->thrs[i]->ended_ns = st->last_ns;
}

static const struct stat_opts *sort_opts;

static uint64_t sort_key(const struct obj *o)
{
	switch (sort_opts->sort) {
	case STAT_SORT_HOLD: return o->hold_total;
	case STAT_SORT_COUNT: return o->acq;
	case STAT_SORT_CONTENDED: return o->contended;
	default: return o->wait_total;
	}
}

static int by_key(const void *a, const void *b)
{
	const struct obj *x = *(const struct obj *const *)a, *y = *(const struct obj *const *)b;
	uint64_t kx = sort_key(x), ky = sort_key(y);
	if (kx != ky)
		return kx > ky ? -1 : 1;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static double ms(uint64_t ns) { return (double)ns / 1e6; }

static void obj_name(const struct stat_table *st, const struct obj *o, char *buf, size_t size)
{
	const char *n = ptt_names_object(st->names, o->addr);
	if (n)
		snprintf(buf, size, "%s", n);
	else
		snprintf(buf, size, "0x%" PRIx64, o->addr);
	for (char *p = buf; *p; p++)
		if (*p == ',' || *p == '"' || *p == '\n')
			*p = '_';
}

void stat_print(const struct stat_table *st, const struct stat_opts *o, FILE *out)
{
	sort_opts = o;
	struct obj **sorted = malloc((st->nobjs + 1) * sizeof *sorted);
	if (!sorted)
		return;
	if (st->nobjs) { /* objs is NULL in a trace without sync objects: no memcpy/qsort of NULL */
		memcpy(sorted, st->objs, st->nobjs * sizeof *sorted);
		qsort(sorted, st->nobjs, sizeof *sorted, by_key);
	}
	size_t shown = o->top && o->top < st->nobjs ? o->top : st->nobjs;
	uint64_t contention = 0;
	for (size_t i = 0; i < st->nobjs; i++)
		if (st->objs[i]->cls != PTT_CLASS_COND && st->objs[i]->cls != PTT_CLASS_BARRIER)
			contention += st->objs[i]->wait_total;
	if (o->csv)
		fprintf(out, "object,name,kind,pid,acquisitions,contended,contended_pct,wait_total_ns,wait_mean_ns,"
			     "wait_p50_ns,wait_p99_ns,wait_max_ns,hold_total_ns,hold_mean_ns,hold_max_ns,owner_changes,top_waiter_tid\n");
	else
		fprintf(out, "%-20s %-7s %9s %9s %6s %11s %10s %10s %10s %10s %11s %10s %10s %7s %s\n", "OBJECT", "KIND",
			"ACQUIRED", "CONTENDED", "CONT%", "WAIT(ms)", "MEAN(us)", "P50(us)", "P99(us)", "MAX(us)",
			"HOLD(ms)", "MEAN(us)", "MAX(us)", "OWNERS", "TOP WAITER");
	for (size_t i = 0; i < shown; i++) {
		const struct obj *b = sorted[i];
		char name[96];
		obj_name(st, b, name, sizeof name);
		uint32_t topw = 0;
		uint64_t topns = 0;
		for (unsigned k = 0; k < TOPW; k++)
			if (b->top[k].tid && b->top[k].ns > topns) {
				topns = b->top[k].ns;
				topw = b->top[k].tid;
			}
		double pct = b->acq ? 100.0 * (double)b->contended / (double)b->acq : 0;
		uint64_t wmean = b->waits ? b->wait_total / b->waits : 0, hmean = b->holds ? b->hold_total / b->holds : 0;
		if (o->csv) {
			fprintf(out, "0x%" PRIx64 ",%s,%s,%" PRIu32 ",%" PRIu64 ",%" PRIu64 ",%.2f,%" PRIu64 ",%" PRIu64 ",%" PRIu64
				",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu32 "\n",
				b->addr, name, ptt_class_name(b->cls), b->pid, b->acq, b->contended, pct, b->wait_total, wmean,
				percentile(b, 0.5), percentile(b, 0.99), b->wait_max, b->hold_total, hmean, b->hold_max,
				b->owner_changes, topw);
			continue;
		}
		const char *tn = topw ? ptt_names_thread(st->names, topw) : NULL;
		char tw[64];
		if (topw)
			snprintf(tw, sizeof tw, "%" PRIu32 "%s%s%s", topw, tn ? " (" : "", tn ? tn : "", tn ? ")" : "");
		else
			snprintf(tw, sizeof tw, "-");
		fprintf(out, "%-20s %-7s %9" PRIu64 " %9" PRIu64 " %6.1f %11.3f %10.2f %10.2f %10.2f %10.2f %11.3f %10.2f %10.2f %7" PRIu64 " %s\n",
			name, ptt_class_name(b->cls), b->acq, b->contended, pct, ms(b->wait_total), (double)wmean / 1e3,
			(double)percentile(b, 0.5) / 1e3, (double)percentile(b, 0.99) / 1e3, (double)b->wait_max / 1e3,
			ms(b->hold_total), (double)hmean / 1e3, (double)b->hold_max / 1e3, b->owner_changes, tw);
	}
	if (!o->csv && shown < st->nobjs)
		fprintf(out, "(%zu more objects; --top=0 shows all)\n", st->nobjs - shown);
	/* threads */
	if (o->csv)
		fprintf(out, "\npid,tid,name,lifetime_ns,running_ns,blocked_mutex_ns,cond_wait_ns,barrier_ns,join_ns,sem_ns,rwlock_ns\n");
	else
		fprintf(out, "\n%8s %8s %-16s %11s %11s %11s %11s %11s %11s %11s %11s\n", "PID", "TID", "NAME", "LIFE(ms)",
			"RUN(ms)", "MUTEX(ms)", "COND(ms)", "BARRIER(ms)", "JOIN(ms)", "SEM(ms)", "RWLOCK(ms)");
	size_t tshown = o->top && o->top < st->nthrs ? o->top : st->nthrs;
	for (size_t i = 0; i < tshown; i++) {
		const struct thr *t = st->thrs[i];
		const char *n = ptt_names_thread(st->names, t->tid);
		uint64_t life = t->ended_ns > t->first_ns ? t->ended_ns - t->first_ns : 0;
		uint64_t waits = t->in_state[MS_MUTEX_WAIT] + t->in_state[MS_COND_WAIT] + t->in_state[MS_BARRIER] +
				 t->in_state[MS_JOIN] + t->in_state[MS_SEM_WAIT] + t->in_state[MS_RW_RD_WAIT] + t->in_state[MS_RW_WR_WAIT];
		uint64_t run = life > waits ? life - waits : 0;
		uint64_t rw = t->in_state[MS_RW_RD_WAIT] + t->in_state[MS_RW_WR_WAIT];
		if (o->csv)
			fprintf(out, "%" PRIu32 ",%" PRIu32 ",%s,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64
				",%" PRIu64 ",%" PRIu64 "\n", t->pid, t->tid, n ? n : "", life, run, t->in_state[MS_MUTEX_WAIT],
				t->in_state[MS_COND_WAIT], t->in_state[MS_BARRIER], t->in_state[MS_JOIN], t->in_state[MS_SEM_WAIT], rw);
		else
			fprintf(out, "%8" PRIu32 " %8" PRIu32 " %-16.16s %11.3f %11.3f %11.3f %11.3f %11.3f %11.3f %11.3f %11.3f\n",
				t->pid, t->tid, n ? n : "", ms(life), ms(run), ms(t->in_state[MS_MUTEX_WAIT]),
				ms(t->in_state[MS_COND_WAIT]), ms(t->in_state[MS_BARRIER]), ms(t->in_state[MS_JOIN]),
				ms(t->in_state[MS_SEM_WAIT]), ms(rw));
	}
	if (!o->csv) {
		if (tshown < st->nthrs)
			fprintf(out, "(%zu more threads)\n", st->nthrs - tshown);
		fprintf(out, "\ncontention: %.3f ms spent waiting for locks and semaphores over %.3f ms of trace\n",
			ms(contention), ms(st->last_ns - st->first_ns));
	}
	free(sorted);
}

void stat_free(struct stat_table *st)
{
	if (!st)
		return;
	for (size_t i = 0; i < st->nobjs; i++)
		free(st->objs[i]);
	for (size_t i = 0; i < st->nthrs; i++)
		free(st->thrs[i]);
	free(st->objs);
	free(st->thrs);
	pmap_free(&st->objs_by_key);
	pmap_free(&st->thr_by_key);
	ptt_names_free(st->names);
	model_free(st->model);
	free(st);
}

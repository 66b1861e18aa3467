/* stat_table.c - ptt-stat's accounting and tables. */
#include <limits.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "critical.h"
#include "entity_name.h"
#include "fidelity.h"
#include "host.h"
#include "lockframes.h"
#include "knownlock.h"
#include "model.h"
#include "stat_table.h"
#include "symbols.h"

#define HIST 256 /* log histogram: 4 buckets per power of two of nanoseconds */
#define TOPW 4
#define STAT_STALL_WARN_PCT 1.0 /* --brief warns about tracer stalls above this share of the threads' time */
#define STAT_OBSERVER_NOTE_PCT 20 /* --brief notes ptt's own share of the locks' hold time from this share up */
#define SITES 64 /* call sites kept per object; the rest are counted as one "other sites" row */

/* What happened at one call site of one object (site 0: the others, or a trace without sites). */
struct site {
	uint64_t addr;
	uint64_t acq, contended, wait_total, wait_max, holds, hold_total, hold_max;
};

/*
 * stat_late_sites: a site of one object before it is named, as the event gave it: the calling
 * thread's process, its model stack (0: none, or its frames unknown then) and the call address of
 * the event that opened it; its figures summed as struct site's are, and the contended waits'
 * (add_site_wait's) apart.  Named at stat_finish, the lock layer learnt (lockframes.h).
 */
struct rawsite {
	struct obj *o;
	uint32_t pid, stack;
	uint64_t call;
	uint64_t *frames;           /* its process's image was replaced (an exec numbers stacks anew): the stack's frames */
	uint32_t nframes;
	uint8_t gone;               /* ... and it is never found again */
	uint8_t contended;          /* in stat_table.cw (a contended wait was counted at it) */
	struct site s;              /* s.addr unused */
	uint64_t cwaits, cwait_total, cwait_max;
};

struct obj {
	uint32_t pid;
	uint64_t addr;
	uint8_t cls;
	uint8_t sem_lock;           /* a semaphore the model saw used as a lock (at its last acquisition) */
	uint8_t known;              /* a condition that is a known lock's (enum knownlock: the GIL, a Java monitor) */
	uint64_t known_asked;       /* the opening (trace position) of the last wait known_lock looked at */
	struct mfutex futex;        /* what the model saw of a futex (model.h), kept past the object's end */
	int8_t futex_named;         /* a futex whose waits a library's function makes, that says its use
				       (lockframes_futex_use): that use + 1; 0 the futex rule decides */
	uint64_t acq, contended, waits;
	uint64_t open_waits;        /* waits still open at the end of the trace (in contended and the wait times) */
	uint64_t wait_total, wait_max, hold_total, hold_max, holds;
	uint64_t owner_changes;
	uint64_t stalled_waits, stalled_ns; /* waits lengthened by a holder's tracer stall, and by how much */
	uint64_t hold_events;       /* the holders' own events inside its holds, acquisition and release included */
	uint32_t last_owner;
	uint32_t hist[HIST];
	uint32_t hold_hist[HIST];   /* the holds' log histogram (ptt-top's p50/p99 hold) */
	struct { uint32_t pid, tid; uint64_t ns; } top[TOPW]; /* pid: an object in shared memory has waiters in several */
	struct site *sites;
	unsigned nsites;
	struct rawsite **raw;        /* stat_late_sites: its sites unnamed, in the order of their first event */
	size_t nraw, capraw;
	struct rawsite *last_raw;    /* the one found last (a lock taken and released at one site, over and over) */
	uint64_t first_ns, last_ns;  /* its first and last acquisition, release or wait: the span its figures cover */
	uint32_t users[4];           /* the first threads that used it (loss_covers asks of them) */
	uint8_t many_users;
	uint64_t crit_ns;            /* its time on the critical path (critical.h: held + waited), set when printing */
};

struct thr {
	uint32_t pid, tid;
	uint64_t first_ns, ended_ns;
	uint64_t in_state[MS_COUNT];
	uint64_t sem_lock_wait;     /* the part of in_state[MS_SEM_WAIT] spent on semaphores used as locks */
	uint64_t known_lock_wait;   /* the part of in_state[MS_COND_WAIT] spent waiting for a known lock (knownlock.h) */
};

/* Time waited or held under one stack (or, without one, at one site) for one object: a folded-stack line. */
struct fold {
	struct fold *next;          /* same hash key */
	uint32_t pid, stack;
	uint64_t site, obj;
	uint8_t cls, hold;
	uint64_t ns;
	uint64_t *frames;           /* the stack's frames when it came (an exec numbers stacks from 1 again) */
	uint32_t nframes;
	uint32_t cpid;              /* stat_late_sites, without a stack: site is a call address of this process, named at the end */
	uint8_t gone;               /* ... whose image was replaced: it is never found again */
};

struct stat_table {
	struct ptt_map folds;          /* fold_key -> chain of struct fold */
	struct ptt_map site_waits;     /* (pid, site) -> struct site_wait */
	int stacked;                /* a wait or hold had a stack: the sites are frames past the lock layer */
	struct ptt_map objs_by_key;
	int csv_names;
	const struct hosts *hosts;  /* a merged trace's (stat_set_hosts): pids and tids said with their host */
	struct obj **objs;
	size_t nobjs, cap_objs;
	struct thr **thrs;
	size_t nthrs, cap_thrs;
	uint64_t open_waits;        /* over every object */
	uint64_t stalls, stall_ns, stall_holding_ns; /* tracer stalls: how many, how long, how long holding a lock */
	uint64_t stalled_ns;        /* waits lengthened by them, over every object */
	struct ptt_syms *syms;
	struct model *model;
	uint64_t last_ns, first_ns;
	uint64_t win_from, win_to; /* --from/--to (0: no bound) */
	int any;
	const struct loss *loss;    /* where events were lost (fidelity.h): objects whose span it covers are marked */
	struct fidelity_blind blind; /* what the trace cannot show */
	int folding;                /* keep struct fold (--folded) */
	void (*sampler)(void *ctx, const struct stat_sample *s); /* each wait and hold (--pprof) */
	void *sampler_ctx;
	double trace_path_ps;       /* what ptt's trace path adds per event, measured when recorded (0: unknown) */
	char cut_at[PATH_MAX + 64]; /* where what was read stops before the recording ends ("": at its end) */
	const struct critical *crit; /* the critical path of the same pass (NULL: none, the column reads 0) */
	char crit_cmd[512];         /* how to ask ptt-critical about the same input */
	int late;                   /* stat_late_sites: sites named at stat_finish */
	struct ptt_map raw_by_key;  /* rawsite_key -> struct rawsite (a collision: the next odd key) */
	struct rawsite **raws;      /* every rawsite, made in this order */
	size_t nraws, capraws;
	struct rawsite **cw;        /* the rawsites in the order of their first contended wait */
	size_t ncw, capcw;
	struct ptt_map rawfolds;    /* fold_key of the unnamed -> chain of struct fold */
	struct fold **rf;           /* the unnamed folds, made in this order */
	size_t nrf, caprf;
};

void stat_set_loss(struct stat_table *st, const struct loss *l) { st->loss = l; }

void stat_set_window(struct stat_table *st, uint64_t from_ns, uint64_t to_ns)
{
	st->win_from = from_ns;
	st->win_to = to_ns;
}

/* The part of [begin, end] inside the window into *d: 1, or 0 when none of it is (an instant at end counts). */
static int inside(const struct stat_table *st, uint64_t begin, uint64_t end, uint64_t *d)
{
	if (!cli_window_clip(st->win_from, st->win_to, &begin, &end))
		return 0;
	*d = end - begin;
	return 1;
}

/* o was used by thread tid at ns: the span and the users its figures depend on. */
static void used(struct obj *o, uint32_t tid, uint64_t ns)
{
	if (!o->first_ns || ns < o->first_ns)
		o->first_ns = ns;
	if (ns > o->last_ns)
		o->last_ns = ns;
	unsigned i = 0;
	while (i < 4 && o->users[i] && o->users[i] != tid)
		i++;
	if (i == 4)
		o->many_users = 1;
	else
		o->users[i] = tid;
}

/* Do o's figures cover a stretch where events of one of its users (or of any thread) were lost? */
static int gap(const struct stat_table *st, const struct obj *o)
{
	if (!st->loss || !o->first_ns)
		return 0;
	if (o->many_users)
		return loss_covers(st->loss, 0, o->first_ns, o->last_ns);
	for (unsigned i = 0; i < 4 && o->users[i]; i++)
		if (loss_covers(st->loss, o->users[i], o->first_ns, o->last_ns))
			return 1;
	return 0;
}

static struct obj *obj_of(struct stat_table *st, uint32_t pid, uint64_t addr, unsigned cls)
{
	struct obj *o = ptt_map_get(&st->objs_by_key, ptt_obj_key(pid, addr));
	if (o)
		return o;
	if (PTT_GROW(st->objs, &st->cap_objs, st->nobjs + 1) || !(o = calloc(1, sizeof *o)))
		return NULL;
	if (ptt_map_put(&st->objs_by_key, ptt_obj_key(pid, addr), o)) {
		free(o);
		return NULL;
	}
	o->pid = pid;
	o->addr = addr;
	o->cls = (uint8_t)cls;
	st->objs[st->nobjs++] = o;
	return o;
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

uint64_t stat_hist_percentile(const uint32_t *hist, uint64_t n, uint64_t max, double p)
{
	uint64_t want = (uint64_t)((double)n * p + 0.5), seen = 0;
	if (!n)
		return 0;
	if (want < 1)
		want = 1;
	for (unsigned b = 0; b < HIST; b++) {
		seen += hist[b];
		if (seen >= want)
			return bucket_value(b) < max ? bucket_value(b) : max;
	}
	return max;
}

static uint64_t percentile(const struct obj *o, double p) { return stat_hist_percentile(o->hist, o->waits, o->wait_max, p); }

/* The row of a call site of o (NULL without a site): the first SITES sites each, then one row for the rest. */
static struct site *site_of(struct obj *o, uint64_t addr)
{
	if (!addr)
		return NULL;
	for (unsigned k = 0; k < o->nsites; k++)
		if (o->sites[k].addr == addr)
			return &o->sites[k];
	if (o->nsites >= SITES - 1 && addr != 1) /* the last slot is kept for the others: never a loop when full */
		return site_of(o, 1); /* "other sites": 1 is no return address */
	if (!o->sites && !(o->sites = calloc(SITES, sizeof *o->sites)))
		return NULL;
	o->sites[o->nsites].addr = addr;
	return &o->sites[o->nsites++];
}

/*
 * Where a wait or hold was opened, before it is named: the calling thread's process, the frame's model
 * stack (0: none) and the call address of the event that opened it (ptt_syms_site_addr).
 */
struct sref {
	uint32_t pid, stack;
	uint64_t call;
};

static struct sref frame_ref(const struct stat_table *st, uint32_t pid, const struct mframe *f)
{
	return (struct sref){ pid, f->stack, ptt_syms_site_addr(st->syms, f->open.id, f->open.arg) };
}

/* An event's own call site (no stack). */
static struct sref ev_ref(const struct stat_table *st, const struct ptt_event *ev)
{
	return (struct sref){ ev->pid, 0, ptt_syms_site_addr(st->syms, ev->id, ev->arg) };
}

/* The site of r: with a stack, its first frame past the lock layer (lockframes.h); else the call site. */
static uint64_t ref_site(struct stat_table *st, const struct sref *r)
{
	uint64_t site = r->stack ? lockframes_site(st->syms, model_stacks(st->model), r->pid, r->stack) : 0;
	if (site)
		st->stacked = 1;
	return site ? site : lockframes_call_site(st->syms, r->pid, r->call);
}

static uint64_t fold_key(uint32_t pid, uint32_t stack, uint64_t site, uint64_t obj, int hold)
{
	uint64_t h = ptt_obj_key(pid, obj) * 0x9E3779B97F4A7C15ull;
	h ^= (stack ? stack : site) + (uint64_t)hold * 0x632BE59BD9B4E019ull;
	h *= 0xff51afd7ed558ccdull;
	return (h ^ (h >> 31)) | 1;
}

/*
 * d ns more in the fold (pid, stack with its nfr frames fr, site, obj, hold) of map m, made if new (at the
 * head of its key's chain); with late (stat_late_sites, in the map of the unnamed), site is a call address
 * of process cpid and the fold is listed in st->rf.
 */
static void fold_put(struct stat_table *st, struct ptt_map *m, int late, uint32_t pid, uint32_t cpid, uint32_t stack,
		     uint64_t site, uint64_t obj, unsigned cls, int hold, const uint64_t *fr, unsigned nfr, uint64_t d)
{
	uint64_t key = fold_key(pid, stack, site, obj, hold);
	struct fold *head = ptt_map_get(m, key), *x;
	for (x = head; x; x = x->next)
		if (x->pid == pid && x->stack == stack && x->site == site && x->obj == obj && x->hold == hold &&
		    x->nframes == nfr && (!nfr || !memcmp(x->frames, fr, nfr * sizeof *fr)) &&
		    (!late || (!x->gone && x->cpid == cpid)))
			break;
	if (!x) {
		if ((late && PTT_GROW(st->rf, &st->caprf, st->nrf + 1)) || !(x = calloc(1, sizeof *x)) ||
		    (nfr && !(x->frames = malloc(nfr * sizeof *fr)))) {
			free(x);
			return;
		}
		*x = (struct fold){ head, pid, stack, site, obj, (uint8_t)cls, (uint8_t)hold, 0, x->frames, nfr, late ? cpid : 0, 0 };
		if (nfr)
			memcpy(x->frames, fr, nfr * sizeof *fr);
		if (ptt_map_put(m, key, x)) {
			free(x->frames);
			free(x);
			return;
		}
		if (late)
			st->rf[st->nrf++] = x;
	}
	x->ns += d;
}

/* d ns waited (hold 0) or held (hold 1) by thread tid on o under frame f's stack (its call site r when it has none) */
static void add_fold(struct stat_table *st, const struct obj *o, uint32_t tid, const struct mframe *f, const struct sref *r,
		     int hold, uint64_t d)
{
	if ((!st->folding || !d) && !st->sampler)
		return;
	const uint64_t *fr = NULL;
	unsigned nfr = f && f->stack ? ptt_stacks_get(model_stacks(st->model), o->pid, f->stack, &fr) : 0;
	uint32_t stack = nfr ? f->stack : 0;
	if (st->late && st->folding && d) { /* named at the end: keyed by the call (its process in the chain's test) */
		fold_put(st, &st->rawfolds, 1, o->pid, r->pid, stack, stack ? 0 : r->call, o->addr, o->cls, hold, fr, nfr, d);
		return;
	}
	uint64_t site = stack ? 0 : lockframes_call_site(st->syms, r->pid, r->call);
	if (st->sampler)
		st->sampler(st->sampler_ctx, &(struct stat_sample){ o->pid, tid, stack, site, o->addr, d, hold });
	if (!st->folding || !d)
		return;
	fold_put(st, &st->folds, 0, o->pid, 0, stack, site, o->addr, o->cls, hold, fr, nfr, d);
}

/* an acquisition or passage at site that waited d ns (contended: it blocked) */
/*
 * Contended waits by site over every object (the WAITS BY SITE tables of a trace with stacks), each
 * object's apart: whether it is a lock (is_lock) is known only when the tables are printed.
 */
struct site_wait {
	struct site_wait *next;     /* the same site's waits for other objects */
	uint32_t pid;
	uint64_t site, obj, waits, wait_total, wait_max;
	uint32_t nobj;              /* in a printed row: objects waited for there, 1, or 2 for several */
};

/* n contended waits at site for o, total ns in all, the longest max */
static void add_site_wait(struct stat_table *st, const struct obj *o, uint64_t site, uint64_t n, uint64_t total, uint64_t max)
{
	if (!site)
		return;
	uint64_t key = ptt_obj_key(o->pid, site);
	struct site_wait *head = ptt_map_get(&st->site_waits, key), *w = head;
	while (w && w->obj != o->addr)
		w = w->next;
	if (!w) {
		if (!(w = calloc(1, sizeof *w)))
			return;
		w->pid = o->pid;
		w->site = site;
		w->obj = o->addr;
		w->nobj = 1;
		if (head) {
			w->next = head->next;
			head->next = w;
		} else if (ptt_map_put(&st->site_waits, key, w)) {
			free(w);
			return;
		}
	}
	w->waits += n;
	w->wait_total += total;
	if (max > w->wait_max)
		w->wait_max = max;
}

/* The row of o's unnamed site r (stat_late_sites), made if new (NULL: no memory). */
static struct rawsite *raw_of(struct stat_table *st, struct obj *o, const struct sref *r)
{
	const uint64_t *fr;
	struct rawsite *x = o->last_raw;
	/* the last one again (a stack known then is known still, or its image is gone) */
	if (x && x->call == r->call && x->stack == r->stack && x->pid == r->pid && !x->gone)
		return x;
	/* a stack whose frames are not known is none: its site is the call's, as ref_site would have it now */
	uint32_t stack = r->stack && ptt_stacks_get(model_stacks(st->model), r->pid, r->stack, &fr) ? r->stack : 0;
	uint64_t h = ptt_obj_key(o->pid, o->addr) * 0x9E3779B97F4A7C15ull ^ r->call;
	h = (h ^ (h >> 29)) * 0xbf58476d1ce4e5b9ull ^ ((uint64_t)stack << 32 | r->pid);
	h = (h ^ (h >> 32)) | 1;
	for (; (x = ptt_map_get(&st->raw_by_key, h)); h += 2) /* a collision: the next odd key */
		if (x->o == o && x->call == r->call && x->stack == stack && x->pid == r->pid && !x->gone)
			return o->last_raw = x;
	if (PTT_GROW(o->raw, &o->capraw, o->nraw + 1) || PTT_GROW(st->raws, &st->capraws, st->nraws + 1) ||
	    !(x = calloc(1, sizeof *x)))
		return NULL;
	if (ptt_map_put(&st->raw_by_key, h, x)) {
		free(x);
		return NULL;
	}
	*x = (struct rawsite){ .o = o, .pid = r->pid, .stack = stack, .call = r->call };
	o->raw[o->nraw++] = x;
	st->raws[st->nraws++] = x;
	return o->last_raw = x;
}

/* Figures of sites added up (a site's rows, or an unnamed site's into its named row). */
static void site_add(struct site *at, const struct site *s)
{
	at->acq += s->acq;
	at->contended += s->contended;
	at->wait_total += s->wait_total;
	if (s->wait_max > at->wait_max)
		at->wait_max = s->wait_max;
	at->holds += s->holds;
	at->hold_total += s->hold_total;
	if (s->hold_max > at->hold_max)
		at->hold_max = s->hold_max;
}

/* A wait at r of d ns (contended: it blocked) in o's site rows: named now, or kept unnamed (stat_late_sites). */
static void site_wait(struct stat_table *st, struct obj *o, const struct sref *r, uint64_t d, int contended)
{
	struct site one = { 0, 1, (uint64_t)contended, d, d, 0, 0, 0 };
	if (st->late) {
		struct rawsite *x = raw_of(st, o, r);
		if (!x)
			return;
		site_add(&x->s, &one);
		if (contended && !x->contended) {
			if (PTT_GROW(st->cw, &st->capcw, st->ncw + 1))
				return;
			x->contended = 1;
			st->cw[st->ncw++] = x;
		}
		if (contended) {
			x->cwaits++;
			x->cwait_total += d;
			if (d > x->cwait_max)
				x->cwait_max = d;
		}
		return;
	}
	uint64_t site = ref_site(st, r);
	struct site *at = site_of(o, site);
	if (contended)
		add_site_wait(st, o, site, 1, d, d);
	if (at)
		site_add(at, &one);
}

/* A hold of d ns taken at r, in o's site rows. */
static void site_hold(struct stat_table *st, struct obj *o, const struct sref *r, uint64_t d)
{
	struct site one = { 0, 0, 0, 0, 0, 1, d, d };
	struct rawsite *x = st->late ? raw_of(st, o, r) : NULL;
	struct site *at = x ? &x->s : st->late ? NULL : site_of(o, ref_site(st, r));
	if (at)
		site_add(at, &one);
}

/* The named site of an unnamed one (stat_late_sites), as ref_site names it. */
static uint64_t raw_site(struct stat_table *st, const struct rawsite *x)
{
	uint64_t site = 0;
	if (x->gone)
		site = lockframes_site_of(st->syms, x->pid, x->frames, x->nframes);
	else if (x->stack)
		site = lockframes_site(st->syms, model_stacks(st->model), x->pid, x->stack);
	if (site)
		st->stacked = 1;
	return site ? site : lockframes_call_site(st->syms, x->pid, x->call);
}

/*
 * stat_late_sites, the lock layer learnt: the unnamed sites named and their
 * figures given to their rows in the order they came, so that each object's
 * first SITES - 1 named sites (in the order of their first events) have rows
 * of their own as when named at once, the site waits' and folds' tables
 * made by the same puts in the same order (ptt_map: the same order printed).
 */
static void name_sites(struct stat_table *st)
{
	for (size_t i = 0; i < st->nraws; i++)
		st->raws[i]->s.addr = raw_site(st, st->raws[i]);
	for (size_t i = 0; i < st->nobjs; i++) {
		struct obj *o = st->objs[i];
		for (size_t k = 0; k < o->nraw; k++) {
			struct site *at = site_of(o, o->raw[k]->s.addr);
			if (at)
				site_add(at, &o->raw[k]->s);
		}
	}
	for (size_t i = 0; i < st->ncw; i++) {
		const struct rawsite *x = st->cw[i];
		add_site_wait(st, x->o, x->s.addr, x->cwaits, x->cwait_total, x->cwait_max);
	}
	for (size_t i = 0; i < st->nrf; i++) {
		const struct fold *x = st->rf[i];
		uint64_t site = x->stack ? 0 : lockframes_call_site(st->syms, x->cpid, x->site);
		fold_put(st, &st->folds, 0, x->pid, 0, x->stack, site, x->obj, x->cls, x->hold, x->frames, x->nframes, x->ns);
	}
	st->late = 0;
}

/* Process pid's image is replaced (an exec, a pid used again): its unnamed sites keep their stacks' frames
 * and are not found again (the new image numbers its stacks from 1 again). */
static void image_gone(struct stat_table *st, uint32_t pid)
{
	for (size_t i = 0; i < st->nraws; i++) {
		struct rawsite *x = st->raws[i];
		if (x->pid != pid || x->gone)
			continue;
		x->nframes = model_stack_copy(st->model, pid, x->stack, &x->frames);
		x->gone = 1;
	}
	for (size_t i = 0; i < st->nrf; i++)
		if (!st->rf[i]->stack && st->rf[i]->cpid == pid)
			st->rf[i]->gone = 1;
}

static void add_wait(struct stat_table *st, struct obj *o, uint32_t pid, uint32_t tid, const struct sref *r, uint64_t d,
		     int contended)
{
	site_wait(st, o, r, d, contended);
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
	o->top[k].pid = pid;
	o->top[k].tid = tid;
	o->top[k].ns += d;
}

static void on_thread_begin(void *ctx, struct mthread *mt, struct mprocess *p, uint64_t ns)
{
	struct stat_table *st = ctx;
	struct thr *t;
	(void)p;
	mt->user = NULL;
	if (PTT_GROW(st->thrs, &st->cap_thrs, st->nthrs + 1) || !(t = calloc(1, sizeof *t)))
		return;
	t->pid = mt->pid;
	t->tid = mt->tid;
	t->first_ns = t->ended_ns = ns > st->win_from ? ns : st->win_from;
	st->thrs[st->nthrs++] = t;
	mt->user = t;
}

static void known_lock(struct stat_table *st, struct obj *o, uint32_t pid, const struct mframe *wait);

static void on_state(void *ctx, struct mthread *mt, const struct mframe *old, const struct mframe *now, uint64_t ns)
{
	struct stat_table *st = ctx;
	struct thr *t = mt->user;
	(void)now;
	uint64_t start = old->state == MS_RUNNING ? mt->running_since : old->since_ns, d = 0;
	if (t && ns >= start && inside(st, start, ns, &d)) {
		start = ns - d; /* its part inside the window */
		t->in_state[old->state] += ns - start;
		if (old->state == MS_SEM_WAIT) {
			const struct mobject *mo = model_object(st->model, mt->pid, old->obj);
			if (mo && mo->sem_lock)
				t->sem_lock_wait += ns - start;
		}
		struct obj *o = old->state == MS_COND_WAIT ? obj_of(st, mt->pid, old->obj, PTT_CLASS_COND) : NULL;
		if (o) /* the GIL's or a Java monitor's condition: a wait for a lock, as the LOCKS table has it */
			known_lock(st, o, mt->pid, old);
		if (o && o->known)
			t->known_lock_wait += ns - start;
	}
	if (st && old->state == MS_TRACER_STALL && ns >= old->begin_ns && inside(st, old->begin_ns, ns, &d)) {
		int holding = 0;
		for (unsigned i = 0; i < mt->depth; i++)
			holding |= mstate_is_hold(mt->stack[i].state);
		st->stalls++;
		st->stall_ns += d;
		if (holding)
			st->stall_holding_ns += d;
	}
}

/* a wait that a holder's tracer stall lengthened */
static void stalled_wait(struct stat_table *st, struct obj *o, const struct mframe *wait)
{
	if (!wait || !wait->stalled_ns)
		return;
	o->stalled_waits++;
	o->stalled_ns += wait->stalled_ns;
	st->stalled_ns += wait->stalled_ns;
}

static void on_thread_end(void *ctx, struct mthread *mt, struct mprocess *p, uint64_t ns)
{
	struct stat_table *st = ctx;
	(void)p;
	static const struct mframe running = { .state = MS_RUNNING };
	on_state(st, mt, &running, &running, ns); /* running: no stall, no condition to ask of */
	struct thr *t = mt->user;
	if (t && st->win_from && ns < st->win_from) { /* ended before the window: no row */
		for (size_t i = st->nthrs; i-- > 0;)
			if (st->thrs[i] == t) {
				memmove(&st->thrs[i], &st->thrs[i + 1], (st->nthrs - i - 1) * sizeof *st->thrs);
				st->nthrs--;
				break;
			}
		free(t);
		mt->user = NULL;
	} else if (t) {
		t->ended_ns = ns;
	}
}

/* an acquisition: counted, with the time waited (a cond wait's re-lock of its mutex is no acquisition of it) */
static void on_acquire(void *ctx, struct mthread *t, struct mobject *mo, const struct mframe *hold, const struct mframe *wait,
		       const struct ptt_event *ev)
{
	struct stat_table *st = ctx;
	(void)hold;
	if (ev->type->role == PTT_ROLE_WAIT_END)
		return;
	struct obj *o = obj_of(st, t->pid, mo->addr, ev->type->cls);
	uint64_t d = 0;
	if (!o)
		return;
	if (o->cls == PTT_CLASS_SEM)
		o->sem_lock = hold != NULL; /* the model's verdict: a unit taken as a hold */
	if (!inside(st, wait ? wait->begin_ns : ev->ns, ev->ns, &d) || ev->ns < st->win_from)
		return; /* taken before the window */
	o->acq++;
	used(o, t->tid, ev->ns - d);
	used(o, t->tid, ev->ns);
	const struct sref at = hold ? frame_ref(st, t->pid, hold) : wait ? frame_ref(st, t->pid, wait) : ev_ref(st, ev);
	add_wait(st, o, t->pid, t->tid, &at, d, wait != NULL);
	if (wait && (st->folding || st->sampler)) {
		const struct sref call = ev_ref(st, ev);
		add_fold(st, o, t->tid, wait, &call, 0, d);
	}
	stalled_wait(st, o, wait);
	if (o->last_owner && o->last_owner != t->tid)
		o->owner_changes++;
	o->last_owner = t->tid;
}

static void on_release(void *ctx, struct mthread *t, struct mobject *mo, const struct mframe *hold, const struct ptt_event *ev)
{
	struct stat_table *st = ctx;
	struct obj *o = obj_of(st, t->pid, mo->addr, ev->type->cls == PTT_CLASS_COND ? PTT_CLASS_MUTEX : ev->type->cls);
	uint64_t d = 0;
	if (o && inside(st, hold->begin_ns, ev->ns, &d) && ev->ns >= st->win_from) {
		used(o, t->tid, ev->ns - d);
		used(o, t->tid, ev->ns);
		o->holds++;
		o->hold_total += d;
		o->hold_events += t->events - hold->events + 1;
		if (d > o->hold_max)
			o->hold_max = d;
		o->hold_hist[bucket(d)]++;
		const struct sref at = frame_ref(st, t->pid, hold), call = { t->pid, 0, at.call };
		add_fold(st, o, t->tid, hold, &call, 1, d);
		site_hold(st, o, &at, d); /* where it was taken */
	}
}

static void futex_verdict(struct obj *o, const struct mobject *mo)
{
	model_futex_merge(&o->futex, &mo->futex);
}

/* A futex wait made in a library's function that names the word's use (GLib's g_cond_wait): its row keeps it. */
static void futex_named_use(struct stat_table *st, struct obj *o, uint32_t pid, const struct mframe *wait)
{
	int use = wait && !o->futex_named ? lockframes_futex_use(st->syms, pid, ptt_syms_site_addr(st->syms, wait->open.id, wait->open.arg)) : -1;
	if (use >= 0)
		o->futex_named = (int8_t)(use + 1);
}

/* A futex's use: the one its library's function names, else the futex rule's (model.h). */
static enum mfutex_use futex_use(const struct obj *o)
{
	return o->futex_named ? (enum mfutex_use)(o->futex_named - 1) : model_futex_use(&o->futex);
}

/* A futex's wake may settle that it is a lock (model.h, the futex rule): its row learns it. */
static void on_point(void *ctx, struct mthread *t, const struct ptt_event *ev)
{
	struct stat_table *st = ctx;
	if (ev->type->cls != PTT_CLASS_FUTEX || ev->type->role != PTT_ROLE_POST || !ev->type->nargs)
		return;
	struct obj *o = ptt_map_get(&st->objs_by_key, ptt_obj_key(t->pid, ev->arg[0]));
	const struct mobject *mo = o ? model_object(st->model, t->pid, ev->arg[0]) : NULL;
	if (mo)
		futex_verdict(o, mo);
}

/* A condition whose waits are a known lock's (knownlock.h): one such wait makes it a lock's. */
static void known_lock(struct stat_table *st, struct obj *o, uint32_t pid, const struct mframe *wait)
{
	if (o->known || o->known_asked == wait->open.pos + 1) /* on_state and on_wait_end ask of one wait */
		return;
	o->known_asked = wait->open.pos + 1;
	o->known = (uint8_t)knownlock_of_wait(st->syms, model_stacks(st->model), pid, wait);
}

/* an outcome that took nothing: a cond wait or barrier counts as a passage, a futex wait as a wait
 * (contended: whatever its result, the thread asked to sleep); a failed try is not a wait */
static void on_wait_end(void *ctx, struct mthread *t, struct mobject *mo, const struct mframe *wait, int ok,
			const struct ptt_event *ev)
{
	unsigned role = ev->type->role, cls = ev->type->cls;
	(void)ok;
	if (!mo || role == PTT_ROLE_TRY || role == PTT_ROLE_TRY_SHARED)
		return;
	if (cls == PTT_CLASS_META)
		return; /* a wait a selection (ptt-filter) left out: no object's row */
	struct obj *o = obj_of(ctx, t->pid, mo->addr, cls);
	if (o && cls == PTT_CLASS_FUTEX) {
		futex_verdict(o, mo);
		futex_named_use(ctx, o, t->pid, wait);
	}
	if (!o || (cls != PTT_CLASS_BARRIER && ((cls != PTT_CLASS_COND && cls != PTT_CLASS_FUTEX) || !wait)))
		return;
	if (cls == PTT_CLASS_COND)
		known_lock(ctx, o, t->pid, wait);
	uint64_t d = 0;
	if (!inside(ctx, wait ? wait->begin_ns : ev->ns, ev->ns, &d) || ev->ns < ((struct stat_table *)ctx)->win_from)
		return; /* ended before the window */
	o->acq++;
	used(o, t->tid, ev->ns - d);
	used(o, t->tid, ev->ns);
	const struct sref at = wait ? frame_ref(ctx, t->pid, wait) : ev_ref(ctx, ev);
	add_wait(ctx, o, t->pid, t->tid, &at, d, wait != NULL);
	if (wait) {
		const struct sref call = ev_ref(ctx, ev);
		add_fold(ctx, o, t->tid, wait, &call, 0, d);
	}
	stalled_wait(ctx, o, wait);
}

void stat_set_folding(struct stat_table *st, int on) { st->folding = on; }

void stat_set_sampler(struct stat_table *st, void (*fn)(void *ctx, const struct stat_sample *s), void *ctx)
{
	st->sampler = fn;
	st->sampler_ctx = ctx;
}
void stat_set_trace_cost(struct stat_table *st, double ps) { st->trace_path_ps = ps; }
void stat_set_hosts(struct stat_table *st, const struct hosts *hs) { st->hosts = hs && hs->n ? hs : NULL; }

void stat_set_cut(struct stat_table *st, const char *where)
{
	snprintf(st->cut_at, sizeof st->cut_at, "%s", where ? where : "");
}

void stat_set_critical(struct stat_table *st, const struct critical *c, const char *cmd)
{
	st->crit = c;
	snprintf(st->crit_cmd, sizeof st->crit_cmd, "%s", cmd ? cmd : "ptt-critical FILE");
}

/* Each object's time on the critical path, once the path is built (the CRIT column, --sort=critical). */
static void fill_critical(const struct stat_table *st)
{
	for (size_t i = 0; i < st->nobjs; i++) {
		const struct critical_obj *co = st->crit ? critical_object_of(st->crit, st->objs[i]->pid, st->objs[i]->addr) : NULL;
		st->objs[i]->crit_ns = co ? co->held_ns + co->waited_ns : 0;
	}
}

struct stat_table *stat_new(struct ptt_syms *syms, struct model *m)
{
	struct stat_table *st = calloc(1, sizeof *st);
	if (!st)
		return NULL;
	st->syms = syms;
	st->model = m;
	struct model_ops ops = { .ctx = st, .thread_begin = on_thread_begin, .thread_end = on_thread_end, .state = on_state,
				 .acquire = on_acquire, .release = on_release, .wait_end = on_wait_end, .point = on_point };
	model_observe(m, &ops);
	return st;
}

struct open_ctx {
	struct stat_table *st;
	uint64_t end_ns;
};

static int open_wait(void *ctx, struct mthread *t, const struct mframe *f);

void stat_event(struct stat_table *st, const struct ptt_event *ev)
{
	fidelity_blind_event(&st->blind, ev);
	/* a wait its thread's end cut: counted as one the end of the trace (or window) cuts */
	struct open_ctx oc = { st, ev->ns };
	model_foreach_cut(st->model, ev, 0, open_wait, &oc);
	if (st->late && (ev->id == PTT_EV_PROCESS_EXEC || ev->id == PTT_EV_PROCESS_BEGIN))
		image_gone(st, ev->pid); /* before the model takes it: the stacks are the old image's */
	if (!st->any)
		st->first_ns = ev->ns > st->win_from ? ev->ns : st->win_from;
	st->any = 1;
	st->last_ns = ev->ns;
}

/*
 * A wait still open at the end of the trace or window, or when its thread or
 * process ended (a thread blocked for ever, or cut by the end): contended,
 * with its time up to that end, so that a deadlock never reads as "no thread
 * waited", and a window and the whole trace count it alike.  Joins and
 * waits a selection left out are no object's contention (model_foreach_cut:
 * the rule ptt-deadlock's threads blocked for ever follow too).
 */
static int open_wait(void *ctx, struct mthread *t, const struct mframe *f)
{
	struct open_ctx *oc = ctx;
	struct stat_table *st = oc->st;
	unsigned cls = mstate_class(f->state);
	uint64_t d = 0;
	if (!inside(st, f->begin_ns, oc->end_ns, &d) || oc->end_ns < st->win_from)
		return 0; /* cut before the window */
	struct obj *o = obj_of(st, t->pid, f->obj, cls);
	if (o) {
		const struct mobject *mo = cls == PTT_CLASS_SEM ? model_object(st->model, t->pid, f->obj) : NULL;
		if (mo)
			o->sem_lock = mo->sem_lock;
		const struct mobject *fo = cls == PTT_CLASS_FUTEX ? model_object(st->model, t->pid, f->obj) : NULL;
		if (fo) {
			futex_verdict(o, fo);
			futex_named_use(st, o, t->pid, f);
		}
		if (cls == PTT_CLASS_COND)
			known_lock(st, o, t->pid, f);
		used(o, t->tid, oc->end_ns - d);
		used(o, t->tid, oc->end_ns);
		/* counted in ACQUIRED too, as its site's row counts it (add_wait): a contended call is one of
		 * the calls made, so that CONTENDED never exceeds ACQUIRED (a futex with one wait open: 0, 1) */
		o->acq++;
		const struct sref at = frame_ref(st, t->pid, f), call = { t->pid, 0, at.call };
		add_wait(st, o, t->pid, t->tid, &at, d, 1);
		add_fold(st, o, t->tid, f, &call, 0, d);
		stalled_wait(st, o, f);
		o->open_waits++;
		st->open_waits++;
	}
	return 0;
}

void stat_finish(struct stat_table *st, uint64_t from_ns, uint64_t to_ns)
{
	/* a window's threads live until its end, and the trace's time is the window's */
	if (to_ns > st->last_ns)
		st->last_ns = to_ns;
	if (from_ns && st->any && from_ns < st->first_ns)
		st->first_ns = from_ns;
	struct open_ctx oc = { st, st->last_ns };
	model_foreach_cut(st->model, NULL, st->last_ns, open_wait, &oc);
	if (st->late)
		name_sites(st);
}

int stat_late_sites(struct stat_table *st)
{
	st->late = !st->sampler;
	return st->late;
}

static const struct stat_opts *sort_opts;

/* the figure --sort orders by, of an object or of a site */
static uint64_t key_of(uint64_t wait_total, uint64_t hold_total, uint64_t acq, uint64_t contended)
{
	switch (sort_opts->sort) {
	case STAT_SORT_HOLD: return hold_total;
	case STAT_SORT_COUNT: return acq;
	case STAT_SORT_CONTENDED: return contended;
	default: return wait_total;
	}
}

/* sites have no time on the path of their own: under --sort=critical they keep the order of wait */
static uint64_t sort_key(const struct obj *o)
{
	return sort_opts->sort == STAT_SORT_CRITICAL ? o->crit_ns : key_of(o->wait_total, o->hold_total, o->acq, o->contended);
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

static uint64_t site_key(const struct site *a)
{
	return key_of(a->wait_total, a->hold_total, a->acq, a->contended);
}

/* sites in the order of the objects' sort key, then by acquisitions; "other sites" last */
static int by_site_key(const void *a, const void *b)
{
	const struct site *x = a, *y = b;
	if ((x->addr == 1) != (y->addr == 1))
		return x->addr == 1 ? 1 : -1;
	uint64_t kx = site_key(x), ky = site_key(y);
	if (kx != ky)
		return kx > ky ? -1 : 1;
	if (x->acq != y->acq)
		return x->acq > y->acq ? -1 : 1;
	if (x->holds != y->holds)
		return x->holds > y->holds ? -1 : 1;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/*
 * Under an object's row, its top o->sites call sites (mutrace's backtraces,
 * one frame deep): the acquisitions, waits and holds taken there, a hold
 * counted at the site that took the lock.  CSV: rows of the sites table.
 */
static void print_sites(const struct stat_table *st, const struct stat_opts *o, const struct obj *b, const char *name, FILE *out)
{
	struct site sorted[SITES];
	unsigned n = b->nsites;
	if (!o->sites || !n)
		return;
	memcpy(sorted, b->sites, n * sizeof *sorted);
	qsort(sorted, n, sizeof *sorted, by_site_key);
	unsigned shown = o->sites < n ? o->sites : n;
	for (unsigned k = 0; k < shown; k++) {
		const struct site *a = &sorted[k];
		const struct ptt_sym *sym = a->addr == 1 ? NULL : ptt_syms_code(st->syms, b->pid, a->addr);
		double pct = a->acq ? 100.0 * (double)a->contended / (double)a->acq : 0;
		uint64_t wmean = a->acq ? a->wait_total / a->acq : 0, hmean = a->holds ? a->hold_total / a->holds : 0;
		if (o->csv) {
			char esc[3][512];
			fprintf(out, "0x%" PRIx64 ",%s,%" PRIu32 ",%u,%s,%s,%s,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64
				",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 "\n", b->addr, name, b->pid, k + 1,
				sym ? ptt_name_escape(sym->where, PTT_ESC_CSV, esc[0], sizeof esc[0]) : "other",
				sym && sym->line ? ptt_name_escape(sym->line, PTT_ESC_CSV, esc[1], sizeof esc[1]) : "",
				sym && sym->func ? ptt_name_escape(sym->func, PTT_ESC_CSV, esc[2], sizeof esc[2]) : "", a->acq,
				a->contended, a->wait_total, wmean, a->wait_max, a->holds, a->hold_total, hmean, a->hold_max);
			continue;
		}
		char label[32];
		snprintf(label, sizeof label, "  site %u", k + 1);
		fprintf(out, "%-20s %-7s %9" PRIu64 " %9" PRIu64 " %6.1f %11.3f %10.2f %10s %10s %10.2f %11.3f %10.2f %10.2f %11s %7s %s\n",
			label, "", a->acq, a->contended, pct, ms(a->wait_total), (double)wmean / 1e3, "-", "-",
			(double)a->wait_max / 1e3, ms(a->hold_total), (double)hmean / 1e3, (double)a->hold_max / 1e3, "-", "-",
			sym ? sym->text : "(other sites)");
	}
	if (!o->csv && shown < n)
		fprintf(out, "%-20s (%u more sites; --sites=0 shows none, -S %u all)\n", "", n - shown, n);
}

static int by_site_row(const void *a, const void *b)
{
	const struct site_wait *x = a, *y = b;
	if (x->wait_total != y->wait_total)
		return x->wait_total > y->wait_total ? -1 : 1;
	return x->site < y->site ? -1 : x->site > y->site;
}

static int is_lock(const struct obj *o);

/* A futex that is a thread's parking word (model.h, the futex rule). */
static int is_park(const struct obj *o) { return o->cls == PTT_CLASS_FUTEX && futex_use(o) == MF_PARK; }

/* The KIND column: the class, or "park". */
static const char *kind_name(const struct obj *o) { return is_park(o) ? "park" : ptt_class_name(o->cls); }

/* Under a table of locks that shows a park: what a park is, once. */
static void print_park_note(struct obj *const *objs, size_t n, FILE *out)
{
	for (size_t i = 0; i < n; i++)
		if (is_park(objs[i])) {
			fputs("park: a thread's own futex word, woken by others (InnoDB's group commit, Rust's thread::park, "
			      "parking_lot): a hand-off, counted as contention, that may be waiting for work\n", out);
			return;
		}
}

/* One row of a WAITS BY SITE table: a site's waits for the objects of one kind of use, summed. */
static void add_to_row(struct site_wait *row, const struct site_wait *w)
{
	if (!row->waits) {
		row->pid = w->pid;
		row->site = w->site;
		row->obj = w->obj;
		row->nobj = 1;
	} else if (row->obj != w->obj) {
		row->nobj = 2;
	}
	row->waits += w->waits;
	row->wait_total += w->wait_total;
	if (w->wait_max > row->wait_max)
		row->wait_max = w->wait_max;
}

static void obj_name(const struct stat_table *st, const struct obj *o, char *buf, size_t size);

static void print_site_rows(const struct stat_table *st, const struct stat_opts *o, struct site_wait *rows, size_t n,
			    const char *title, FILE *out)
{
	qsort(rows, n, sizeof *rows, by_site_row);
	size_t shown = o->top && o->top < n ? o->top : n;
	fprintf(out, "\n%s\n%9s %11s %10s %10s  %-20s %s\n", title, "WAITS", "WAIT(ms)", "MEAN(us)", "MAX(us)", "OBJECT", "SITE");
	for (size_t i = 0; i < shown; i++) {
		char name[96];
		const struct obj *ob = rows[i].nobj > 1 ? NULL : ptt_map_get(&st->objs_by_key, ptt_obj_key(rows[i].pid, rows[i].obj));
		if (rows[i].nobj > 1)
			snprintf(name, sizeof name, "(several)");
		else if (ob)
			obj_name(st, ob, name, sizeof name); /* with its pid where another process's has its name */
		else
			ptt_syms_object_name(st->syms, rows[i].pid, rows[i].obj, name, sizeof name);
		fprintf(out, "%9" PRIu64 " %11.3f %10.2f %10.2f  %-20s %s\n", rows[i].waits, ms(rows[i].wait_total),
			(double)rows[i].wait_total / (double)rows[i].waits / 1e3, (double)rows[i].wait_max / 1e3, name,
			ptt_syms_code(st->syms, rows[i].pid, rows[i].site)->text);
	}
	if (shown < n)
		fprintf(out, "(%zu more sites)\n", n - shown);
}

/*
 * A trace with stacks: where the program waited, the site being the first
 * frame past the lock layer (lockframes.h): "where in my code", most
 * waited first; waits for locks (contention) apart from waits for work, as
 * the object tables are.
 */
static void print_site_waits(const struct stat_table *st, const struct stat_opts *o, FILE *out)
{
	size_t nsites = st->site_waits.used, n[2] = { 0, 0 };
	struct site_wait *rows[2] = { calloc(nsites + 1, sizeof **rows), calloc(nsites + 1, sizeof **rows) };
	struct ptt_map_iter it;
	void *chain;
	for (ptt_map_iter_init(&it, &st->site_waits); rows[0] && rows[1] && ptt_map_next(&it, NULL, &chain);) {
		struct site_wait *w = chain;
		struct site_wait row[2] = { { 0 }, { 0 } };
		for (; w; w = w->next) {
			const struct obj *ob = ptt_map_get(&st->objs_by_key, ptt_obj_key(w->pid, w->obj));
			add_to_row(&row[ob && is_lock(ob) ? 0 : 1], w);
		}
		for (int k = 0; k < 2; k++)
			if (row[k].waits)
				rows[k][n[k]++] = row[k];
	}
	if (rows[0] && rows[1]) {
		print_site_rows(st, o, rows[0], n[0], "WAITS BY SITE: locks (the first frame past the lock layer)", out);
		if (n[1])
			print_site_rows(st, o, rows[1], n[1], "WAITS BY SITE: waiting for work (the first frame past the lock layer)", out);
	}
	free(rows[0]);
	free(rows[1]);
}

/* A thread's name as the pictures give it (its own, else its start routine), "" when it has none. */
static const char *thr_name(const struct stat_table *st, uint32_t pid, uint32_t tid, char *buf, size_t size)
{
	ptt_syms_thread_known_name(st->syms, pid, tid, buf, size);
	for (char *p = buf; *p; p++)
		if (*p == ',' || *p == '"' || *p == '\n')
			*p = '_';
	return buf;
}

static void obj_name(const struct stat_table *st, const struct obj *o, char *buf, size_t size)
{
	ptt_syms_object_name(st->syms, o->pid, o->addr, buf, size); /* given name, symbol, module+0xoff or address */
	const char *kind = knownlock_name(o->known);
	size_t k = kind ? strlen(kind) : 0, n = strlen(buf);
	if (kind && strncmp(buf, kind, k) != 0 && n + k + 4 <= size) { /* "Java monitor (0x7f...)": a thread's park */
		memmove(buf + k + 2, buf, n + 1);
		memcpy(buf, kind, k);
		memcpy(buf + k, " (", 2);
		memcpy(buf + k + 2 + n, ")", 2);
	}
	if (!st->csv_names) { /* the CSV form has a pid column */
		size_t l = strlen(buf);
		entity_object_process(buf, size, st->syms, o->pid, o->addr); /* "(pid N)" with several processes */
		if (st->hosts && !PTT_IS_SHARED(o->addr)) { /* a merged trace: "(pid N on HOST)", or "(on HOST)" */
			size_t e = strlen(buf);
			if (e > l && buf[e - 1] == ')')
				buf[e - 1] = '\0';
			else
				snprintf(buf + e, size - e, " (");
			e = strlen(buf);
			snprintf(buf + e, size - e, "%son %s)", buf[e - 1] == '(' ? "" : " ", hosts_name(st->hosts, o->pid));
		}
	}
	for (char *p = buf; *p; p++)
		if (*p == ',' || *p == '"' || *p == '\n')
			*p = '_';
}

/* The threads' lifetimes summed, and the tracer's share of it in stalls (percent). */
static double stall_share(const struct stat_table *st)
{
	uint64_t life = 0;
	for (size_t i = 0; i < st->nthrs; i++)
		life += st->thrs[i]->ended_ns > st->thrs[i]->first_ns ? st->thrs[i]->ended_ns - st->thrs[i]->first_ns : 0;
	return life ? 100.0 * (double)st->stall_ns / (double)life : 0;
}

/* Tracer stalls, when there were some: theirs apart from the program's waits, and the waits they lengthened. */
static void print_stalls(const struct stat_table *st, struct obj *const *sorted, size_t shown, FILE *out)
{
	if (!st->stalls)
		return;
	fprintf(out, "\ntracer stalls: %" PRIu64 ", %.3f ms summed over threads (%.2f %% of their time), %.3f ms of it "
		     "holding locks;\nwaits lengthened by them: %.3f ms (ptt's doing, not the program's: counted in the "
		     "tables above)\n", st->stalls, ms(st->stall_ns), stall_share(st), ms(st->stall_holding_ns), ms(st->stalled_ns));
	for (size_t i = 0; i < shown; i++)
		if (sorted[i]->stalled_waits) {
			char name[96];
			obj_name(st, sorted[i], name, sizeof name);
			fprintf(out, "  %-20s %" PRIu64 " wait%s lengthened by %.3f ms (of %.3f ms waited)\n", name,
				sorted[i]->stalled_waits, sorted[i]->stalled_waits > 1 ? "s" : "", ms(sorted[i]->stalled_ns),
				ms(sorted[i]->wait_total));
		}
}

/*
 * Mutual exclusion (mutexes, rwlocks, spinlocks, semaphores the model saw
 * used as locks, the conditions of known locks: CPython's GIL, Java
 * monitors): a thread waiting here lost time to another that held the
 * lock.  The rest is waiting for work (condition variables, semaphores used
 * as signals, barriers): a thread waiting there is idle until another gives
 * it something to do, which is no contention.
 */
static int is_lock(const struct obj *o)
{
	return o->cls == PTT_CLASS_MUTEX || o->cls == PTT_CLASS_RWLOCK || o->cls == PTT_CLASS_SPIN ||
	       (o->cls == PTT_CLASS_COND && o->known) ||
	       (o->cls == PTT_CLASS_FUTEX && futex_use(o) != MF_SIGNAL) ||
	       (o->cls == PTT_CLASS_SEM && o->sem_lock);
}

/*
 * The observer effect on the locks: every event a holder records inside a
 * hold (its acquisition's record is written after the lock is taken, its
 * release's before the lock is given back) lengthens the hold by what the
 * trace path costs, measured when the trace was recorded (trace_path_ps,
 * ptt_calibrate); an estimate: stacks unwound inside a hold add more, not counted
 * here, and part of a release's record is written after the lock is given back.
 * Longer holds make longer waits: the part ptt adds to the waits follows
 * from it but is not computed.
 */
struct observer {
	uint64_t events, holds;
	double own_ns, held_ns, pct; /* pct: own_ns as a share of held_ns */
};
static int observer_of(const struct stat_table *st, struct observer *ob)
{
	uint64_t held = 0;
	memset(ob, 0, sizeof *ob);
	for (size_t i = 0; i < st->nobjs; i++)
		if (is_lock(st->objs[i])) {
			ob->events += st->objs[i]->hold_events;
			ob->holds += st->objs[i]->holds;
			held += st->objs[i]->hold_total;
		}
	if (st->trace_path_ps <= 0 || !ob->holds)
		return 0;
	ob->own_ns = (double)ob->events * st->trace_path_ps / 1e3;
	ob->held_ns = (double)held + (double)ob->holds * st->trace_path_ps / 1e3; /* the release's record too */
	ob->pct = ob->held_ns > 0 ? 100.0 * ob->own_ns / ob->held_ns : 0;
	return ob->held_ns > 0;
}

static void print_observer(const struct stat_table *st, FILE *out)
{
	struct observer ob;
	if (!observer_of(st, &ob))
		return;
	fprintf(out, "observer: ptt's trace path took %.1f ns per event (measured at the run's start); inside the %" PRIu64
		     " holds of locks\ntheir holders recorded %" PRIu64 " events: %.3f ms of the %.3f ms held (%.0f %%) is ptt's own,"
		     " so untraced these locks are\nheld shorter and waited for less\n",
		st->trace_path_ps / 1e3, ob.holds, ob.events, ob.own_ns / 1e6, ob.held_ns / 1e6, ob.pct);
}

/* The objects of one kind of use (locks or not), sorted by --sort; returns how many. */
static size_t select_sorted(const struct stat_table *st, int locks, struct obj **sorted)
{
	size_t n = 0;
	for (size_t i = 0; i < st->nobjs; i++)
		if (is_lock(st->objs[i]) == locks)
			sorted[n++] = st->objs[i];
	if (n)
		qsort(sorted, n, sizeof *sorted, by_key);
	return n;
}

static const char *sort_phrase(const struct stat_opts *o, int locks)
{
	switch (o->sort) {
	case STAT_SORT_HOLD: return "longest held first";
	case STAT_SORT_COUNT: return "most taken first";
	case STAT_SORT_CONTENDED: return "most often waited for first";
	case STAT_SORT_CRITICAL: return "most time on the critical path first";
	default: return locks ? "most time others lost waiting first" : "most time waited first";
	}
}

/* The rows of one table of objects (the first shown of n), each with its sites in text. */
static size_t print_objects(const struct stat_table *st, const struct stat_opts *o, struct obj **sorted, size_t shown,
			    int locks, FILE *out)
{
	size_t marked = 0;
	for (size_t i = 0; i < shown; i++) {
		const struct obj *b = sorted[i];
		char name[96];
		obj_name(st, b, name, sizeof name);
		if (!o->csv && gap(st, b)) { /* its figures cover a lost stretch: they may be short */
			size_t l = strlen(name);
			snprintf(name + (l < sizeof name - 2 ? l : sizeof name - 2), 2, "*");
			marked++;
		}
		uint32_t topw = 0, topp = b->pid;
		uint64_t topns = 0;
		for (unsigned k = 0; k < TOPW; k++)
			if (b->top[k].tid && b->top[k].ns > topns) {
				topns = b->top[k].ns;
				topw = b->top[k].tid;
				topp = b->top[k].pid;
			}
		double pct = b->acq ? 100.0 * (double)b->contended / (double)b->acq : 0;
		uint64_t wmean = b->waits ? b->wait_total / b->waits : 0, hmean = b->holds ? b->hold_total / b->holds : 0;
		if (o->csv) {
			fprintf(out, "0x%" PRIx64 ",%s,%s,%" PRIu32 ",%" PRIu64 ",%" PRIu64 ",%.2f,%" PRIu64 ",%" PRIu64 ",%" PRIu64
				",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu32 ",%s,%" PRIu64 "\n",
				b->addr, name, kind_name(b), b->pid, b->acq, b->contended, pct, b->wait_total, wmean,
				percentile(b, 0.5), percentile(b, 0.99), b->wait_max, b->hold_total, hmean, b->hold_max,
				b->owner_changes, topw, locks ? "lock" : "work", b->crit_ns);
			continue;
		}
		char tnb[64];
		const char *tn = topw ? thr_name(st, topp, topw, tnb, sizeof tnb) : NULL;
		if (tn && !*tn)
			tn = NULL;
		char tw[sizeof tnb + 180], tid[120]; /* "TID (NAME, pid N)"; "TID on HOST (NAME)" merged */
		char proc[32] = "";
		host_id_phrase(st->hosts, topw, tid, sizeof tid);
		if (topw && entity_many_processes(st->syms))
			entity_process_tag(proc, sizeof proc, topp);
		if (topw)
			snprintf(tw, sizeof tw, "%s%s%s%s%s%s", tid, tn || *proc ? " (" : "", tn ? tn : "",
				 tn && *proc ? ", " : "", proc, tn || *proc ? ")" : "");
		else
			snprintf(tw, sizeof tw, "-");
		fprintf(out, "%-20s %-7s %9" PRIu64 " %9" PRIu64 " %6.1f %11.3f %10.2f %10.2f %10.2f %10.2f %11.3f %10.2f %10.2f %11.3f %7" PRIu64 " %s\n",
			name, kind_name(b), b->acq, b->contended, pct, ms(b->wait_total), (double)wmean / 1e3,
			(double)percentile(b, 0.5) / 1e3, (double)percentile(b, 0.99) / 1e3, (double)b->wait_max / 1e3,
			ms(b->hold_total), (double)hmean / 1e3, (double)b->hold_max / 1e3, ms(b->crit_ns), b->owner_changes, tw);
		print_sites(st, o, b, name, out);
	}
	return marked;
}

static void print_header(FILE *out)
{
	fprintf(out, "%-20s %-7s %9s %9s %6s %11s %10s %10s %10s %10s %11s %10s %10s %11s %7s %s\n", "OBJECT", "KIND",
		"ACQUIRED", "CONTENDED", "CONT%", "WAIT(ms)", "MEAN(us)", "P50(us)", "P99(us)", "MAX(us)",
		"HOLD(ms)", "MEAN(us)", "MAX(us)", "CRIT(ms)", "OWNERS", "TOP WAITER");
}

/* Sites named module+0x... for want of symbols: which file, and how to get them named. */
static void print_stripped(const struct stat_table *st, FILE *out)
{
	const char *wrappers = lockframes_wrappers();
	if (wrappers && st->stacked)
		fprintf(out, "wrappers: %s taken as the program's lock wrapper%s (a lock taken in one is released\n"
			     "in the other%s, called by the same functions): the sites are their callers where a stack was\n"
			     "recorded (a wait's; an acquisition without a wait has one with ptt-record --stacks=all), else in the\n"
			     "wrapper itself; --skip-frames='!NAME' names them\n",
			wrappers, strchr(wrappers, ',') ? "s" : "", lockframes_wrappers_several_unlockers() ? "s" : "");
	const char *paths[4];
	size_t n = ptt_syms_stripped(st->syms, paths, 4), shown = n < 4 ? n : 4;
	if (!n)
		return;
	fprintf(out, "names: ");
	for (size_t i = 0; i < shown; i++) {
		const char *base = strrchr(paths[i], '/');
		fprintf(out, "%s%s", i ? (i + 1 == n ? " and " : ", ") : "", base ? base + 1 : paths[i]);
	}
	if (n > shown)
		fprintf(out, " (and %zu other file%s)", n - shown, n - shown > 1 ? "s" : "");
	fprintf(out, " %s no symbol table and no debug information here, so %s sites read\n"
		     "module+0xoff (what addr2line takes); %s debug symbols name them (Debian: %s -dbgsym package%s)\n",
		n > 1 ? "have" : "has", n > 1 ? "their" : "its", n > 1 ? "their" : "its", n > 1 ? "their" : "its",
		n > 1 ? "s" : "");
}

/*
 * The waits still open at the end, told apart by use (the summary and the
 * full report say them alike): waits for locks may be threads blocked for
 * ever (ptt-deadlock tells); waits for work (a pool's idle workers on their
 * condition at a normal shutdown) are no such thing.  Where the recording
 * goes on past what was read (a rotated part, a window), they may end there:
 * one line, no guess.  full: the report's wording, which says how they count.
 */
static void print_open_waits(const struct stat_table *st, int full, FILE *out)
{
	uint64_t locks = 0, idle = 0;
	for (size_t i = 0; i < st->nobjs; i++)
		*(is_lock(st->objs[i]) ? &locks : &idle) += st->objs[i]->open_waits;
	const char *counted = full ? ", counted as contended up to then" : "";
	if (st->open_waits && st->cut_at[0]) { /* the recording goes on: they may end there */
		fprintf(out, "%" PRIu64 " wait%s still open %s%s\n", st->open_waits, st->open_waits > 1 ? "s were" : " was",
			st->cut_at, counted);
		return;
	}
	if (locks && full)
		fprintf(out, "%" PRIu64 " wait%s still open at the end of the trace (or when %s thread ended), counted as "
			     "contended up to then (threads blocked for ever? see ptt-deadlock)\n", locks,
			locks > 1 ? "s were" : " was", locks > 1 ? "their" : "its");
	else if (locks)
		fprintf(out, "%" PRIu64 " wait%s still open at the end (threads blocked for ever? see ptt-deadlock)\n",
			locks, locks > 1 ? "s were" : " was");
	if (idle) /* one open wait a thread: as many threads */
		fprintf(out, "%" PRIu64 " thread%s waiting for work when the program ended (condition variables, semaphores "
			     "used as signals, barriers: idle, not blocked%s)\n", idle, idle > 1 ? "s were" : " was",
			full ? "; counted up to then" : "");
}

/* A thread's time outside traced waits (running, or in calls ptt does not trace), and its life. */
static uint64_t no_wait(const struct thr *t, uint64_t *life)
{
	uint64_t waits = t->in_state[MS_TRACER_STALL]; /* nor is a tracer stall the program's running */
	*life = t->ended_ns > t->first_ns ? t->ended_ns - t->first_ns : 0;
	for (unsigned s = 0; s < MS_COUNT; s++)
		if (mstate_is_wait(s))
			waits += t->in_state[s];
	return *life > waits ? *life - waits : 0;
}

/* Of o's waits by its top waiters, the time waited by threads that work (outside traced waits over half their life). */
static uint64_t waited_by_working(const struct stat_table *st, const struct obj *o, uint64_t *by_top)
{
	uint64_t working = 0;
	*by_top = 0;
	for (unsigned k = 0; k < TOPW && o->top[k].tid; k++) {
		*by_top += o->top[k].ns;
		for (size_t i = 0; i < st->nthrs; i++) {
			const struct thr *t = st->thrs[i];
			uint64_t life, run = t->tid == o->top[k].tid && t->pid == o->pid ? no_wait(t, &life) : 0;
			if (run && run * 2 > life) {
				working += o->top[k].ns;
				break;
			}
		}
	}
	return working;
}

/*
 * The rule of the tables is the kind of object: a condition, a semaphore used as a signal or a barrier
 * is waiting for work.  A thread that works waits on one for another thread's doing too (a commit for
 * its log write, MariaDB's net_real_write on its thd_async_state; a pipeline's stage for the one before
 * it): where most of an object's waits were made by threads that work (outside traced waits over half
 * their life), it is no idle worker's.  Told after the totals, with the objects waited on most.
 */
static void print_result_waits(const struct stat_table *st, struct obj *const *work, size_t n, FILE *out)
{
	const struct obj *top[3] = { NULL, NULL, NULL };
	uint64_t waits = 0, ns = 0;
	size_t objs = 0;
	for (size_t i = 0; i < n; i++) {
		uint64_t by_top, working = waited_by_working(st, work[i], &by_top);
		if (!working || working * 2 <= by_top)
			continue;
		objs++;
		waits += work[i]->waits;
		ns += work[i]->wait_total;
		for (unsigned k = 0; k < 3; k++)
			if (!top[k] || work[i]->wait_total > top[k]->wait_total) {
				memmove(&top[k + 1], &top[k], (2 - k) * sizeof *top);
				top[k] = work[i];
				break;
			}
	}
	if (!objs)
		return;
	fprintf(out, "not idle: %zu of the objects of WAITING FOR WORK (%" PRIu64 " wait%s, %.3f ms) %s waited on mostly by\n"
		     "threads that work (outside traced waits over half their life): such a wait is for another thread's\n"
		     "doing (a commit for its log write, a stage for the one before it), as a lock's is; ptt-critical\n"
		     "--blame tells whose:",
		objs, waits, waits > 1 ? "s" : "", ms(ns), objs > 1 ? "were" : "was");
	for (unsigned k = 0; k < 3 && top[k]; k++) {
		char name[96], site[256] = "";
		const struct obj *o = top[k];
		obj_name(st, o, name, sizeof name);
		unsigned s = 0;
		for (unsigned j = 1; j < o->nsites; j++)
			if (o->sites[j].wait_total > o->sites[s].wait_total)
				s = j;
		if (o->nsites && o->sites[s].addr != 1)
			ptt_syms_code_phrase(st->syms, o->pid, o->sites[s].addr, site, sizeof site);
		fprintf(out, "\n  %s%s: %" PRIu64 " wait%s, %.3f ms", name, site, o->waits, o->waits > 1 ? "s" : "",
			ms(o->wait_total));
	}
	fprintf(out, "%s\n", objs > 3 ? "\n  ..." : "");
}

/* One of the two object tables (locks, or waiting for work): its title, header and first shown rows. */
static size_t print_table(const struct stat_table *st, const struct stat_opts *o, const char *title, struct obj **objs,
			  size_t shown, size_t n, int locks, FILE *out)
{
	fprintf(out, "%s, %s\n", title, sort_phrase(o, locks));
	print_header(out);
	size_t marked = print_objects(st, o, objs, shown, locks, out);
	if (shown < n)
		fprintf(out, "(%zu more %s; --top=0 shows all)\n", n - shown, locks ? "locks" : "objects");
	return marked;
}

void stat_print(const struct stat_table *st, const struct stat_opts *o, FILE *out)
{
	sort_opts = o;
	((struct stat_table *)st)->csv_names = o->csv;
	fill_critical(st);
	struct obj **locks = malloc((st->nobjs + 1) * sizeof *locks), **work = malloc((st->nobjs + 1) * sizeof *work);
	if (!locks || !work) {
		free(locks);
		free(work);
		return;
	}
	size_t nl = select_sorted(st, 1, locks), nw = select_sorted(st, 0, work);
	size_t shown_l = o->top && o->top < nl ? o->top : nl, shown_w = o->top && o->top < nw ? o->top : nw;
	uint64_t contention = 0, idle = 0;
	size_t marked = 0; /* objects shown whose figures cover a lost stretch */
	for (size_t i = 0; i < nl; i++)
		contention += locks[i]->wait_total;
	for (size_t i = 0; i < nw; i++)
		idle += work[i]->wait_total;
	if (o->csv) {
		fprintf(out, "object,name,kind,pid,acquisitions,contended,contended_pct,wait_total_ns,wait_mean_ns,"
			     "wait_p50_ns,wait_p99_ns,wait_max_ns,hold_total_ns,hold_mean_ns,hold_max_ns,owner_changes,top_waiter_tid,"
			     "use,critical_ns\n");
		print_objects(st, o, locks, shown_l, 1, out);
		print_objects(st, o, work, shown_w, 0, out);
	} else {
		marked += print_table(st, o, "LOCKS: mutual exclusion (mutexes, rwlocks, spinlocks, semaphores used as locks)",
				      locks, shown_l, nl, 1, out);
		marked += print_table(st, o, "\nWAITING FOR WORK: condition variables, semaphores used as signals, barriers "
					     "(idle, not contention)", work, shown_w, nw, 0, out);
	}
	if (!o->csv && st->stacked)
		print_site_waits(st, o, out);
	/* threads: time blocked on locks, then waiting for work */
	if (o->csv)
		fprintf(out, "\npid,tid,name,lifetime_ns,no_wait_ns,blocked_mutex_ns,cond_wait_ns,barrier_ns,join_ns,sem_ns,rwlock_ns,"
			     "other_wait_ns,sem_lock_ns,futex_wait_ns\n");
	else
		fprintf(out, "\n%s%8s %8s %-16s %11s %11s %11s %11s %11s %11s %11s %11s %11s %11s %11s\n", st->hosts ? "HOST         " : "", "PID", "TID", "NAME",
			"LIFE(ms)", "NO-WAIT(ms)", "MUTEX(ms)", "RWLOCK(ms)", "SEMLOCK(ms)", "COND(ms)", "SEM(ms)", "BARRIER(ms)", "JOIN(ms)",
			"OTHER(ms)", "FUTEX(ms)");
	size_t tshown = o->top && o->top < st->nthrs ? o->top : st->nthrs;
	uint64_t joins = 0;
	for (size_t i = 0; i < st->nthrs; i++)
		joins += st->thrs[i]->in_state[MS_JOIN];
	for (size_t i = 0; i < tshown; i++) {
		const struct thr *t = st->thrs[i];
		char nb[PTT_MAX_STR], cut[19]; /* cut: 16 columns of a name in the table */
		const char *n = thr_name(st, t->pid, t->tid, nb, sizeof nb);
		uint64_t life, run = no_wait(t, &life); /* outside any traced blocking call */
		uint64_t rw = t->in_state[MS_RW_RD_WAIT] + t->in_state[MS_RW_WR_WAIT];
		uint64_t semlock = t->sem_lock_wait, semsig = t->in_state[MS_SEM_WAIT] - t->sem_lock_wait;
		/* a known lock's condition waits are lock waits (the LOCKS table's rule): MUTEX, not COND */
		uint64_t mutex = t->in_state[MS_MUTEX_WAIT] + t->known_lock_wait, cond = t->in_state[MS_COND_WAIT] - t->known_lock_wait;
		if (o->csv)
			fprintf(out, "%" PRIu32 ",%" PRIu32 ",%s,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64
				",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 "\n", t->pid, t->tid, n ? n : "", life, run,
				mutex, cond, t->in_state[MS_BARRIER], t->in_state[MS_JOIN],
				t->in_state[MS_SEM_WAIT], rw, t->in_state[MS_OTHER_WAIT], semlock, t->in_state[MS_FUTEX_WAIT]);
		else if (n && strlen(n) > 16 && ptt_name_printf(cut, sizeof cut, "%s", n) && ptt_name_cut(cut, 15))
			n = cut; /* 16 columns: 15 bytes and the mark */
		if (!o->csv)
			fprintf(out, "%-*.*s%s%8" PRIu32 " %8" PRIu32 " %-16s %11.3f %11.3f %11.3f %11.3f %11.3f %11.3f %11.3f %11.3f %11.3f %11.3f %11.3f\n",
				st->hosts ? 12 : 0, st->hosts ? 12 : 0, st->hosts ? hosts_name(st->hosts, t->pid) : "", st->hosts ? " " : "",
				host_local(t->pid), host_local(t->tid), n ? n : "", ms(life), ms(run), ms(mutex), ms(rw), ms(semlock),
				ms(cond), ms(semsig), ms(t->in_state[MS_BARRIER]), ms(t->in_state[MS_JOIN]),
				ms(t->in_state[MS_OTHER_WAIT]), ms(t->in_state[MS_FUTEX_WAIT]));
	}
	if (o->csv && o->sites) { /* the sites of the objects shown, after the two tables CSV readers know */
		fprintf(out, "\nobject,name,pid,rank,site,site_line,function,acquisitions,contended,wait_total_ns,wait_mean_ns,"
			     "wait_max_ns,holds,hold_total_ns,hold_mean_ns,hold_max_ns\n");
		for (size_t i = 0; i < shown_l + shown_w; i++) {
			const struct obj *b = i < shown_l ? locks[i] : work[i - shown_l];
			char name[96];
			obj_name(st, b, name, sizeof name);
			print_sites(st, o, b, name, out);
		}
	}
	if (!o->csv) {
		if (tshown < st->nthrs)
			fprintf(out, "(%zu more threads)\n", st->nthrs - tshown);
		fprintf(out, "NO-WAIT: outside any traced blocking call (running, or blocked in a call ptt does not trace);\n"
			     "SEMLOCK: semaphores used as locks, SEM: the others; OTHER: blocked in a traced call that a\n"
			     "selection (ptt-filter) left out; FUTEX: blocked in a futex wait made through syscall() (Rust's std\n"
			     "locks, InnoDB's srw_lock); MUTEX counts the waits for locks made on a condition too (CPython's\n"
			     "GIL, Java monitors), which COND leaves out\n");
		fprintf(out, "CRIT: an object's time on the critical path, held or waited for by the thread the path runs\n"
			     "through (waits off the path, as idle workers' are, count nothing; ptt-critical tells the path)\n");
		print_stripped(st, out);
		print_park_note(locks, shown_l, out);
		fprintf(out, "\ncontention: %.3f ms waited for locks (mutual exclusion), summed over threads, in %.3f ms of trace\n",
			ms(contention), ms(st->last_ns - st->first_ns));
		fprintf(out, "waiting for work: %.3f ms in condition variables, semaphores used as signals and barriers,"
			     " %.3f ms in joins\n", ms(idle), ms(joins));
		print_result_waits(st, work, nw, out);
		print_open_waits(st, 1, out);
		print_observer(st, out);
		print_stalls(st, locks, shown_l, out);
		if (loss_print(st->loss, out) && marked)
			fprintf(out, "%zu of the objects shown (marked *) were in use while events of their threads were lost: "
				     "their figures may be short\n", marked);
		uint64_t before = model_held_before(st->model);
		if (before)
			fprintf(out, "%" PRIu64 " lock%s released before any acquisition in the trace (held at its start, "
				     "or taken where events were lost): %s holds before are not counted\n", before,
				before > 1 ? "s were" : " was", before > 1 ? "their" : "its");
		const char *note = fidelity_blind_note(&st->blind);
		if (note)
			fprintf(out, "%s\n", note);
		uint64_t full = model_stacks_full(st->model);
		if (full)
			fprintf(out, "%" PRIu64 " event%s no stack: the runtime's stack table was full (named at %s call site%s)\n",
				full, full > 1 ? "s have" : " has", full > 1 ? "their" : "its", full > 1 ? "s" : "");
		uint64_t unknown = model_stacks_unknown(st->model);
		if (unknown)
			fprintf(out, "%" PRIu64 " event%s a stack whose frames the trace does not hold (lost, or overwritten in a flight "
				     "recording): named at %s call site%s\n",
				unknown, unknown > 1 ? "s have" : " has", unknown > 1 ? "their" : "its", unknown > 1 ? "s" : "");
	}
	free(locks);
	free(work);
}

/*
 * --brief's pointer to ptt-critical: the object with the most time on the
 * critical path (held or waited for by the thread it runs through), as a
 * share of the path's length, which is the run's (or its window's).
 */
static void print_critical_top(const struct stat_table *st, FILE *out)
{
	if (!st->crit && st->crit_cmd[0]) { /* not computed: the input is large (ptt-stat.c) */
		fprintf(out, "critical path: not computed here for an input this large (%s computes it)\n", st->crit_cmd);
		return;
	}
	const struct critical_obj *co = st->crit ? critical_object(st->crit, 0) : NULL;
	const struct critical_sum *sum = st->crit ? critical_summary(st->crit) : NULL;
	double pct = co && sum->length ? 100.0 * (double)(co->held_ns + co->waited_ns) / (double)sum->length : 0;
	if (pct < 0.05) /* nothing on the path but running (or less than 0.1 % of it) */
		return;
	char name[256], kind[32] = "";
	critical_object_name(st->crit, co, name, sizeof name);
	if (co->cls != PTT_CLASS_THREAD) {
		const struct obj *o = ptt_map_get(&st->objs_by_key, ptt_obj_key(co->pid, co->addr));
		if (o)
			obj_name(st, o, name, sizeof name); /* with its pid where another process's has its name */
		snprintf(kind, sizeof kind, " (%s)", o ? kind_name(o) : ptt_class_name(co->cls));
	}
	fprintf(out, "on the critical path: %s%s %.1f %% of the run%s (%s for what to fix first)\n", name, kind, pct,
		!co->waited_ns && co->cls != PTT_CLASS_THREAD ? ", the work done holding it: never waited for on the path" : "",
		st->crit_cmd);
}

/*
 * --brief: the locks threads waited for most, a line each, mutrace-style
 * (ptt-record's closing summary); then, apart, the time spent waiting for
 * work, which is no contention.
 */
void stat_print_brief(const struct stat_table *st, const struct stat_opts *o, FILE *out)
{
	struct obj **sorted = malloc((st->nobjs + 1) * sizeof *sorted);
	const struct obj *most_idle = NULL;
	size_t n = 0;
	uint64_t contention = 0, idle = 0;
	for (size_t i = 0; sorted && i < st->nobjs; i++) {
		const struct obj *b = st->objs[i];
		if (!is_lock(b)) {
			idle += b->wait_total;
			if (b->wait_total && (!most_idle || b->wait_total > most_idle->wait_total))
				most_idle = b;
		} else if (b->contended) {
			sorted[n++] = st->objs[i];
			contention += b->wait_total;
		}
	}
	if (!sorted)
		return;
	struct stat_opts by_wait = *o;
	by_wait.sort = STAT_SORT_WAIT;
	sort_opts = &by_wait;
	if (n)
		qsort(sorted, n, sizeof *sorted, by_key);
	size_t shown = o->top && o->top < n ? o->top : n;
	if (!n)
		fprintf(out, "no thread waited for a lock\n");
	else
		fprintf(out, "%.3f ms waited for locks over %.3f ms; most contended:\n", ms(contention),
			ms(st->last_ns - st->first_ns));
	const char *note = fidelity_blind_note(&st->blind);
	if (note)
		fprintf(out, "%s\n", note);
	size_t marked = 0;
	for (size_t i = 0; i < shown; i++) {
		const struct obj *b = sorted[i];
		char name[96];
		obj_name(st, b, name, sizeof name);
		if (gap(st, b)) {
			size_t l = strlen(name);
			snprintf(name + (l < sizeof name - 2 ? l : sizeof name - 2), 2, "*");
			marked++;
		}
		if (b->cls == PTT_CLASS_FUTEX) /* no acquisition is seen: a futex-based lock is taken out of sight */
			fprintf(out, "  %-20s %-6s %" PRIu64 " futex waits, %.3f ms in all, longest %.3f ms\n", name,
				kind_name(b), b->contended, ms(b->wait_total), ms(b->wait_max));
		else
			fprintf(out, "  %-20s %-6s %" PRIu64 " of %" PRIu64 " acquisitions waited, %.3f ms in all, longest %.3f ms\n",
				name, kind_name(b), b->contended, b->acq, ms(b->wait_total), ms(b->wait_max));
	}
	if (shown < n)
		fprintf(out, "  (%zu more contended)\n", n - shown);
	print_park_note(sorted, shown, out);
	print_open_waits(st, 0, out); /* after the list it would otherwise split */
	if (most_idle) {
		char name[96];
		obj_name(st, most_idle, name, sizeof name);
		fprintf(out, "waiting for work (no contention): %.3f ms in condition variables, semaphores used as signals "
			     "and barriers, most on %s (%s)\n", ms(idle), name, kind_name(most_idle));
	}
	print_critical_top(st, out);
	struct observer ob;
	if (contention && observer_of(st, &ob) && ob.pct >= STAT_OBSERVER_NOTE_PCT)
		fprintf(out, "note: %.0f %% of the time these locks were held is ptt's own recording (ptt-stat: observer): untraced "
			     "they are held shorter and waited for less\n", ob.pct);
	double share = stall_share(st);
	if (st->stalls && (share >= STAT_STALL_WARN_PCT || st->stalled_ns))
		fprintf(out, "%s: the tracer stalled threads %.3f ms (%.2f %% of their time) waiting for room in their "
			     "rings, lengthening waits for locks by %.3f ms;\n  bigger rings (-b), no -z, or -d (drop events "
			     "instead of waiting) avoid it\n", share >= STAT_STALL_WARN_PCT ? "warning" : "note",
			ms(st->stall_ns), share, ms(st->stalled_ns));
	size_t nspans = 0;
	loss_spans(st->loss, &nspans);
	if (nspans && loss_events(st->loss)) /* one line: the full account is ptt-stat's */
		fprintf(out, "  %" PRIu64 " events were lost, in %zu stretch%s (ptt-stat tells where); %zu of these figures (marked *) "
			"cover them\n", loss_events(st->loss), nspans, nspans > 1 ? "es" : "", marked);
	else if (nspans)
		fprintf(out, "  events may be missing in %zu stretch%s (a start mid-run, damage: ptt-stat tells where); "
			"%zu of these figures (marked *) cover them\n", nspans, nspans > 1 ? "es" : "", marked);
	free(sorted);
}

const char *stat_blind_locks(const struct stat_table *st)
{
	return fidelity_blind_locks(&st->blind) ? fidelity_blind_note(&st->blind) : NULL;
}

/*
 * --folded: one line per stack and object, "frame;frame;...;[kind object] NS",
 * root (outermost frame) first, the object waited for or held as the leaf, the
 * value in nanoseconds of wait (or hold) time summed over threads.  Without a
 * stack, the call site is the one frame.  Lines with the same frames (one stack
 * met under two ids) are left for the viewer to add up, as they all do.
 */
void stat_print_folded(const struct stat_table *st, enum stat_fold what, FILE *out)
{
	struct ptt_map_iter it;
	void *chain;
	for (ptt_map_iter_init(&it, &st->folds); ptt_map_next(&it, NULL, &chain);)
		for (const struct fold *x = chain; x; x = x->next) {
			if (x->hold != (what == STAT_FOLD_HOLD))
				continue;
			const struct obj *ob = ptt_map_get(&st->objs_by_key, ptt_obj_key(x->pid, x->obj));
			if (what == STAT_FOLD_LOCKS && !(ob && is_lock(ob)))
				continue;
			char name[512];
			lockframes_fold_frames(st->syms, x->pid, x->frames, x->nframes, x->site, out);
			ptt_syms_object_name(st->syms, x->pid, x->obj, name, sizeof name);
			lockframes_fold_word(name);
			fprintf(out, "[%s %s] %" PRIu64 "\n", ob ? kind_name(ob) : ptt_class_name(x->cls), name, x->ns);
		}
}

/* A chain of a site's waits. */
static void free_site_waits(void *x)
{
	for (struct site_wait *w = x, *next; w; w = next) {
		next = w->next;
		free(w);
	}
}

/* A chain of folds. */
static void free_folds(void *x)
{
	for (struct fold *f = x, *next; f; f = next) {
		next = f->next;
		free(f->frames);
		free(f);
	}
}

void stat_free(struct stat_table *st)
{
	if (!st)
		return;
	ptt_map_free_with(&st->folds, free_folds);
	ptt_map_free_with(&st->rawfolds, free_folds);
	free(st->rf);
	for (size_t i = 0; i < st->nraws; i++) {
		free(st->raws[i]->frames);
		free(st->raws[i]);
	}
	free(st->raws);
	free(st->cw);
	ptt_map_free(&st->raw_by_key);
	ptt_map_free_with(&st->site_waits, free_site_waits);
	for (size_t i = 0; i < st->nobjs; i++) {
		free(st->objs[i]->sites);
		free(st->objs[i]->raw);
		free(st->objs[i]);
	}
	for (size_t i = 0; i < st->nthrs; i++)
		free(st->thrs[i]);
	free(st->objs);
	free(st->thrs);
	ptt_map_free(&st->objs_by_key);
	free(st);
}

size_t stat_count(const struct stat_table *st) { return st->nobjs; }

void stat_row(const struct stat_table *st, size_t i, struct stat_row *r)
{
	const struct obj *o = st->objs[i];
	r->pid = o->pid;
	r->addr = o->addr;
	r->cls = o->cls;
	r->lock = is_lock(o);
	r->acq = o->acq;
	r->contended = o->contended;
	r->waits = o->waits;
	r->wait_total = o->wait_total;
	r->wait_max = o->wait_max;
	r->holds = o->holds;
	r->hold_total = o->hold_total;
	r->hold_max = o->hold_max;
	memcpy(r->wait_hist, o->hist, sizeof o->hist);
	memcpy(r->hold_hist, o->hold_hist, sizeof o->hold_hist);
	obj_name(st, o, r->name, sizeof r->name);
	snprintf(r->kind, sizeof r->kind, "%s", kind_name(o));
}

void stat_stalls(const struct stat_table *st, uint64_t *n, uint64_t *ns, uint64_t *lengthened_ns)
{
	*n = st->stalls;
	*ns = st->stall_ns;
	*lengthened_ns = st->stalled_ns;
}

int stat_is_lock(const struct stat_table *st, uint32_t pid, uint64_t obj)
{
	const struct obj *o = ptt_map_get(&st->objs_by_key, ptt_obj_key(pid, obj));
	return o && is_lock(o);
}

/*
 * ptt-paje - convert a ptt trace to Paje for PajeNG and ViTE: containers
 * Program > Process > Thread, thread states, point events, links for thread
 * creation, joins, mutex hand-offs, condition wake-ups, barrier and semaphore
 * releases, the number of live threads per process, with --objects a
 * container per synchronisation object with its holders and waiters, and
 * with --critical a row showing the thread the critical path runs through.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/cli.h"
#include "lib/critical.h"
#include "lib/lockframes.h"
#include "lib/entity_name.h"
#include "lib/host.h"
#include "lib/fidelity.h"
#include "lib/model.h"
#include "lib/paje_out.h"
#include "lib/pass.h"
#include "lib/symbols.h"

/* objects shown by --objects unless told otherwise: enough to see the contention, few enough to read */
#define PAJE_OBJECTS_DEFAULT 10
#define SHARED_SERIAL(h) (UINT32_MAX - (uint32_t)(h)) /* no process's: the model's serials count up from 1 */

/* What the first pass learns of an object (all incarnations at one address in one process). */
struct obj_stat {
	uint64_t key;
	uint64_t waits;     /* times a thread began to wait on it */
	uint64_t changes;   /* changes of its holders and waiters */
	uint32_t waiters;   /* now, to see a wait begin */
	uint32_t p_serial;  /* its process */
	uint8_t cls;        /* its kind (the last, if the address was reused as another) */
	int shown;
	/* second pass: its row, one container per kind it was used as, made at its first lifetime and
	 * kept for the next ones (CPython re-initialises its lock semaphores at the same addresses) */
	uint32_t row[PTT_CLASS_COUNT];
	uint32_t row_process; /* the process serial the rows belong to (an exec starts over) */
};
_Static_assert(PTT_CLASS_COUNT <= 16, "a row is listed as row << 4 | kind");

struct paje {
	FILE *out;
	struct model *model;    /* for the stacks of states (model_stacks) */
	struct ptt_syms *syms; /* names and symbols, learnt by a first pass */
	int program_created;
	struct hosts hosts;     /* a merged trace's (ptt-merge): a container each, above their processes */
	uint64_t links;
	int objects;            /* draw object containers */
	long max_objects;       /* the most contended shown; 0: all */
	struct ptt_map stats;      /* ptt_obj_key -> struct obj_stat, from the first pass */
	/*
	 * With objects, every thread's container is created with its process,
	 * so that threads come first and the objects after them (ViTE draws
	 * containers in creation order).  The first pass runs the same model on
	 * the same events, so a thread has the same serial in both passes:
	 */
	struct ptt_map early;      /* process serial -> struct serials, its threads in creation order */
	struct ptt_map unclaimed;  /* thread serial -> tid, created early and not begun yet in this pass */
	struct ptt_map kinds;      /* process serial -> 1 + bit mask of the kinds of its objects shown */
	struct ptt_map rows;       /* process serial -> struct serials, its object rows as row << 4 | kind */
	/* objects in shared memory (shmap.h): one row for every process that uses them, under a container
	 * "shared memory" of the program (of each host) that lives as long as it: not under the process that
	 * used one first, whose end would end the row while others still use the object */
	struct mprocess *shared; /* one per host (1 without hosts); serial SHARED_SERIAL(host), pid 0 */
	uint32_t nrows;
	int lost_seen;          /* a rec_lost record in the first pass: the header declares "Events lost" */
	/* the first pass's rec_lost records, drawn in the second at the time of the loss (in order of it) */
	struct lost *losts;
	size_t nlosts, caplosts, next_lost;
	struct ptt_map lost_tid_pid; /* tid -> 1 + pid of the thread, from the first pass's thread_begin records */
	struct ptt_map live;       /* pid -> serial of its live process (for a loss drawn on it) */
	/*
	 * --critical: the path found by the first pass (its own model and analysis), in time order, drawn in the
	 * second as the states of a row "critical path" under the program (which thread it runs through), with
	 * a link for each hand-off between threads; the row ends where the path does.
	 */
	int critical;
	struct critical *crit;
	struct path_step *path;
	size_t npath, next_step;
	uint64_t path_end;
	struct path_link *waiting; /* hand-offs to threads without a row yet */
	size_t nwaiting, capwaiting;
	uint64_t crit_links;
	int row_state;          /* 0: no row yet, 1: made, 2: ended */
};

struct lost {
	uint32_t tid, pid;
	uint64_t at, from, to, count;
	size_t seq;
};

/* A stretch of the critical path (critical.h): one thread's time on it, entered from another at `from`. */
struct path_step {
	uint32_t pid, tid, from_pid, from_tid;
	uint64_t from;
};

/* A hand-off drawn on the path whose thread had no row yet at the time: drawn when it begins. */
struct path_link {
	uint32_t from_pid, from_tid, pid, tid;
};

struct serials {
	uint32_t n, cap;
	uint32_t s[];
};

/* Append v to the list under key in m (made on first use); a failed allocation leaves it out. */
static void serials_push(struct ptt_map *m, uint64_t key, uint32_t v)
{
	struct serials *l = ptt_map_get(m, key);
	if (!l || l->n == l->cap) {
		uint32_t cap = l ? 2 * l->cap : 8;
		struct serials *more = realloc(l, sizeof *more + cap * sizeof more->s[0]);
		if (!more)
			return;
		if (!l)
			more->n = 0;
		more->cap = cap;
		l = more;
		if (ptt_map_put(m, key, l) != 0)
			return;
	}
	l->s[l->n++] = v;
}

static void line_start(struct paje *pj, int id, uint64_t ns)
{
	fprintf(pj->out, "%d ", id);
	paje_time(pj->out, ns);
}

/* The lines written per event are built in a buffer: "ID TIME" first, then emit() ends the line. */
static char *head(char *p, int id, uint64_t ns)
{
	p = ptt_fmt_u64(p, (uint64_t)id);
	*p++ = ' ';
	return ptt_fmt_time(p, ns);
}

static void emit(struct paje *pj, char *line, char *end)
{
	*end++ = '\n';
	fwrite_unlocked(line, 1, (size_t)(end - line), pj->out);
}

/* " NAME" + number */
static char *field(char *p, const char *name, uint64_t n)
{
	return ptt_fmt_u64(paje_put(p, name), n);
}

static void program(struct paje *pj, uint64_t ns)
{
	if (pj->program_created)
		return;
	pj->program_created = 1;
	fprintf(pj->out, "%d ", PJ_CREATE_CONTAINER);
	paje_time(pj->out, ns);
	fputs(" C_prog CT_Program 0 \"Program\"\n", pj->out);
	if (pj->critical) { /* first under the program: ViTE draws containers in the order they are made */
		line_start(pj, PJ_CREATE_CONTAINER, ns);
		fputs(" C_crit CT_Critical C_prog \"critical path\"\n", pj->out);
		pj->row_state = 1;
	}
	for (unsigned h = 0; h < pj->hosts.n; h++) {
		line_start(pj, PJ_CREATE_CONTAINER, ns);
		fprintf(pj->out, " H%u CT_Host C_prog ", h);
		paje_name(pj->out, pj->hosts.h[h].name[0] ? pj->hosts.h[h].name : "?");
		putc('\n', pj->out);
	}
}

static void thread_container(struct paje *pj, uint32_t serial, uint32_t pid, uint32_t tid, uint32_t p_serial, uint64_t ns)
{
	char name[PTT_MAX_STR + 32];
	entity_thread_name(name, sizeof name, pj->syms, pid, tid);
	line_start(pj, PJ_CREATE_CONTAINER, ns);
	fprintf(pj->out, " T%" PRIu32 " CT_Thread P%" PRIu32 " ", serial, p_serial);
	paje_name(pj->out, name);
	putc('\n', pj->out);
}

/*
 * Under a process, after its threads: "objects" (G), holding one container
 * per kind (K), holding the objects.  p->user has bit 0 set once "objects"
 * exists and bit 1 + cls once the kind cls has its container.
 */
static void object_group(struct paje *pj, struct mprocess *p, unsigned cls, uint64_t ns)
{
	uintptr_t made = (uintptr_t)p->user;
	if (!(made & 1)) {
		line_start(pj, PJ_CREATE_CONTAINER, ns);
		fprintf(pj->out, " G%" PRIu32 " CT_Objects P%" PRIu32 " \"objects\"\n", p->serial, p->serial);
		made |= 1;
	}
	if (!(made & (uintptr_t)2 << cls)) {
		line_start(pj, PJ_CREATE_CONTAINER, ns);
		fprintf(pj->out, " K%" PRIu32 "_%u %s G%" PRIu32 " \"%s\"\n", p->serial, cls, paje_group_type[cls], p->serial,
			paje_group_name[cls]);
		made |= (uintptr_t)2 << cls;
	}
	p->user = (void *)made;
}

/* The kind containers of p's objects shown (as the first pass found them), locks first. */
static void object_groups(struct paje *pj, struct mprocess *p, uint64_t ns)
{
	static const unsigned order[] = { PTT_CLASS_MUTEX, PTT_CLASS_RWLOCK, PTT_CLASS_SPIN,
					  PTT_CLASS_COND, PTT_CLASS_BARRIER, PTT_CLASS_SEM, PTT_CLASS_FUTEX };
	uintptr_t mask = (uintptr_t)ptt_map_get(&pj->kinds, p->serial);
	for (size_t i = 0; mask && i < sizeof order / sizeof order[0]; i++)
		if (mask & (uintptr_t)2 << order[i])
			object_group(pj, p, order[i], ns);
}

/* The rows of p's objects, after their last lifetime, before their kind's container. */
static void end_rows(struct paje *pj, struct mprocess *p, uint64_t ns)
{
	const struct serials *rows = ptt_map_get(&pj->rows, p->serial);
	for (uint32_t i = 0; rows && i < rows->n; i++) {
		line_start(pj, PJ_DESTROY_CONTAINER, ns);
		fprintf(pj->out, " %s O%" PRIu32 "\n", paje_object_type[rows->s[i] & 15], rows->s[i] >> 4);
	}
}

static void on_process_begin(void *ctx, struct mprocess *p, uint64_t ns)
{
	struct paje *pj = ctx;
	char name[PTT_MAX_STR + 32];
	program(pj, ns);
	entity_process_name(name, sizeof name, pj->syms, p->pid);
	fprintf(pj->out, "%d ", PJ_CREATE_CONTAINER);
	paje_time(pj->out, ns);
	if (pj->hosts.n)
		fprintf(pj->out, " P%" PRIu32 " CT_Process H%u ", p->serial, host_of(p->pid));
	else
		fprintf(pj->out, " P%" PRIu32 " CT_Process C_prog ", p->serial);
	paje_name(pj->out, name);
	fprintf(pj->out, "\n%d ", PJ_SET_VARIABLE);
	paje_time(pj->out, ns);
	fprintf(pj->out, " V_Threads P%" PRIu32 " 0\n", p->serial);
	if (pj->lost_seen)
		ptt_map_put(&pj->live, p->pid, (void *)(uintptr_t)p->serial);
	const struct serials *early = ptt_map_get(&pj->early, p->serial);
	for (uint32_t i = 0; early && i < early->n; i++) {
		uint32_t tid = (uint32_t)(uintptr_t)ptt_map_get(&pj->unclaimed, early->s[i]);
		if (tid)
			thread_container(pj, early->s[i], p->pid, tid, p->serial, ns);
	}
	object_groups(pj, p, ns);
}

static void on_process_end(void *ctx, struct mprocess *p, uint64_t ns)
{
	struct paje *pj = ctx;
	const struct serials *early = ptt_map_get(&pj->early, p->serial);
	for (uint32_t i = 0; early && i < early->n; i++)
		if (ptt_map_get(&pj->unclaimed, early->s[i])) { /* created early, never begun in this pass */
			line_start(pj, PJ_DESTROY_CONTAINER, ns);
			fprintf(pj->out, " CT_Thread T%" PRIu32 "\n", early->s[i]);
		}
	end_rows(pj, p, ns);
	uintptr_t made = (uintptr_t)p->user;
	for (unsigned cls = 0; cls < PTT_CLASS_COUNT; cls++)
		if (made & (uintptr_t)2 << cls) { /* after the objects, before the process */
			line_start(pj, PJ_DESTROY_CONTAINER, ns);
			fprintf(pj->out, " %s K%" PRIu32 "_%u\n", paje_group_type[cls], p->serial, cls);
		}
	if (made & 1) {
		line_start(pj, PJ_DESTROY_CONTAINER, ns);
		fprintf(pj->out, " CT_Objects G%" PRIu32 "\n", p->serial);
	}
	fprintf(pj->out, "%d ", PJ_DESTROY_CONTAINER);
	paje_time(pj->out, ns);
	fprintf(pj->out, " CT_Process P%" PRIu32 "\n", p->serial);
	if (pj->lost_seen && (uint32_t)(uintptr_t)ptt_map_get(&pj->live, p->pid) == p->serial)
		ptt_map_del(&pj->live, p->pid);
}

/* The row (T serial) of thread tid of process pid, if it has one now; else 0. */
static uint32_t row_of(struct paje *pj, uint32_t pid, uint32_t tid)
{
	const struct mthread *t = tid ? model_thread(pj->model, pid, tid) : NULL;
	return t && t->user ? t->serial : 0;
}

/* A hand-off on the critical path: a link between the threads' rows, under the program (they may be of two processes). */
static void path_link(struct paje *pj, uint32_t from_serial, uint32_t to_serial, uint64_t ns)
{
	uint64_t key = ++pj->crit_links;
	line_start(pj, PJ_START_LINK, ns);
	fprintf(pj->out, " L_critical C_prog T%" PRIu32 " critical c%" PRIu64 "\n", from_serial, key);
	line_start(pj, PJ_END_LINK, ns);
	fprintf(pj->out, " L_critical C_prog T%" PRIu32 " critical c%" PRIu64 "\n", to_serial, key);
}

/* Thread t has its row now: the hand-offs to it that waited for it, from threads that still have theirs. */
static void path_links_to(struct paje *pj, const struct mthread *t, uint64_t ns)
{
	size_t kept = 0;
	for (size_t i = 0; i < pj->nwaiting; i++) {
		const struct path_link *l = &pj->waiting[i];
		if (l->pid != t->pid || l->tid != t->tid) {
			pj->waiting[kept++] = *l;
			continue;
		}
		uint32_t from = row_of(pj, l->from_pid, l->from_tid);
		if (from) /* else the thread it came from is gone: no link (never one left open) */
			path_link(pj, from, t->serial, ns);
	}
	pj->nwaiting = kept;
}

/* The row's value for thread tid of process pid: "Cpid_tid" */
static char *path_value(char *p, uint32_t pid, uint32_t tid)
{
	p = field(p, "C", pid);
	return field(p, "_", tid);
}

/*
 * The critical path up to ns (the Paje time of the event about to be drawn),
 * never before floor: each stretch a state of the row from its start, and
 * its hand-off a link, drawn before the events of that time (a thread that
 * handed off as it ended still has its row); where the path ends, the row.
 */
static void draw_path(struct paje *pj, const struct cli_clock *clock, uint64_t ns, uint64_t floor)
{
	for (; pj->next_step < pj->npath; pj->next_step++) {
		const struct path_step *s = &pj->path[pj->next_step];
		uint64_t at = s->from > clock->from ? s->from - clock->from : 0;
		if (at > ns)
			return;
		at = at > floor ? at : floor;
		program(pj, at);
		char line[128], *p = head(line, PJ_SET_STATE, at);
		emit(pj, line, path_value(paje_put(p, " ST_Critical C_crit "), s->pid, s->tid));
		if (!s->from_tid || (s->from_tid == s->tid && s->from_pid == s->pid))
			continue;
		uint32_t from = row_of(pj, s->from_pid, s->from_tid), to = row_of(pj, s->pid, s->tid);
		if (from && to)
			path_link(pj, from, to, at);
		else if (from && PTT_GROW(pj->waiting, &pj->capwaiting, pj->nwaiting + 1) == 0)
			pj->waiting[pj->nwaiting++] = (struct path_link){ s->from_pid, s->from_tid, s->pid, s->tid };
	}
	uint64_t end = pj->path_end > clock->from ? pj->path_end - clock->from : 0;
	if (pj->row_state == 1 && end <= ns) {
		line_start(pj, PJ_DESTROY_CONTAINER, end > floor ? end : floor);
		fputs(" CT_Critical C_crit\n", pj->out);
		pj->row_state = 2;
	}
}

static void on_thread_begin(void *ctx, struct mthread *t, struct mprocess *p, uint64_t ns)
{
	struct paje *pj = ctx;
	t->user = p;
	if ((uint32_t)(uintptr_t)ptt_map_get(&pj->unclaimed, t->serial) == t->tid && t->tid)
		ptt_map_del(&pj->unclaimed, t->serial);
	else
		thread_container(pj, t->serial, t->pid, t->tid, p->serial, ns);
	fprintf(pj->out, "%d ", PJ_ADD_VARIABLE);
	paje_time(pj->out, ns);
	fprintf(pj->out, " V_Threads P%" PRIu32 " 1\n%d ", p->serial, PJ_SET_STATE);
	paje_time(pj->out, ns);
	fprintf(pj->out, " ST_Thread T%" PRIu32 " R\n", t->serial);
	if (pj->nwaiting)
		path_links_to(pj, t, ns);
}

static void on_thread_end(void *ctx, struct mthread *t, struct mprocess *p, uint64_t ns)
{
	struct paje *pj = ctx;
	fprintf(pj->out, "%d ", PJ_DESTROY_CONTAINER);
	paje_time(pj->out, ns);
	fprintf(pj->out, " CT_Thread T%" PRIu32 "\n", t->serial);
	if (p) {
		fprintf(pj->out, "%d ", PJ_SUB_VARIABLE);
		paje_time(pj->out, ns);
		fprintf(pj->out, " V_Threads P%" PRIu32 " 1\n", p->serial);
	}
}

/* " \"SITE\"": a call site, symbolised and escaped, as the last field of a line (fits in 600 bytes) */
static char *site_field(struct paje *pj, char *p, uint32_t pid, uint64_t addr)
{
	char esc[512];
	const struct ptt_sym *sym = ptt_syms_code(pj->syms, pid, addr);
	p = paje_put(p, " \"");
	return paje_put(paje_put(p, ptt_name_escape(sym->text, PTT_ESC_PAJE, esc, sizeof esc)), "\"");
}

static void on_state(void *ctx, struct mthread *t, const struct mframe *old, const struct mframe *now, uint64_t ns)
{
	struct paje *pj = ctx;
	/* a hold or wait says where it was asked for: the site of the event that opened the frame */
	uint64_t site = now->state == MS_RUNNING ? 0 :
		lockframes_call_site(pj->syms, t->pid, ptt_syms_site_addr(pj->syms, now->open.id, now->open.arg));
	/* with a stack, the first frame past the lock layer (lockframes.h) */
	uint64_t past = site && now->stack ? lockframes_site(pj->syms, model_stacks(pj->model), t->pid, now->stack) : 0;
	if (past)
		site = past;
	char line[768], *p = head(line, site ? PJ_SET_STATE_SITE : PJ_SET_STATE, ns);
	(void)old; /* even a new interval of the same state is set again: intervals count acquisitions */
	p = field(p, " ST_Thread T", t->serial);
	*p++ = ' ';
	p = paje_put(p, mstate_alias[now->state]);
	emit(pj, line, site ? site_field(pj, p, t->pid, site) : p);
}

/* one end of a link: " L_kind Pn Tn kind PREFIXkey" */
static void link_line(struct paje *pj, int id, uint64_t ns, const char *kind, uint32_t p_serial, uint32_t t_serial,
		      const char *key_prefix, uint64_t key)
{
	char line[160], *p = head(line, id, ns);
	p = paje_put(paje_put(p, " L_"), kind);
	p = field(p, " P", p_serial);
	p = field(p, " T", t_serial);
	p = paje_put(paje_put(p, " "), kind);
	emit(pj, line, field(p, key_prefix, key));
}

static void on_link(void *ctx, struct mthread *from, struct mthread *to, const char *kind, uint64_t obj, uint64_t ns)
{
	struct paje *pj = ctx;
	const struct mprocess *p = to->user;
	(void)obj;
	if (!p || from->pid != to->pid)
		return;
	uint64_t key = ++pj->links;
	link_line(pj, PJ_START_LINK, ns, kind, p->serial, from->serial, " k", key);
	link_line(pj, PJ_END_LINK, ns, kind, p->serial, to->serial, " k", key);
}

/* links from the model: their keys (j) never meet those of on_link (k) */
static void on_link_start(void *ctx, struct mprocess *p, uint32_t from, const char *kind, uint64_t key, uint64_t ns)
{
	link_line(ctx, PJ_START_LINK, ns, kind, p->serial, from, " j", key);
}

static void on_link_end(void *ctx, struct mprocess *p, uint32_t to, const char *kind, uint64_t key, uint64_t ns)
{
	link_line(ctx, PJ_END_LINK, ns, kind, p->serial, to, " j", key);
}

/* What the first pass learnt of o's address (made here when that pass could not read the input). */
static struct obj_stat *obj_stat_of(struct paje *pj, const struct mobject *o)
{
	uint64_t key = ptt_obj_key(o->pid, o->addr);
	struct obj_stat *st = ptt_map_get(&pj->stats, key);
	if (!st && (st = calloc(1, sizeof *st)) != NULL) {
		st->key = key;
		if (ptt_map_put(&pj->stats, key, st) != 0) {
			free(st);
			st = NULL;
		}
	}
	return st;
}

static void set_count(struct paje *pj, const struct mobject *o, const char *var, uint32_t n, uint64_t ns)
{
	const struct obj_stat *st = o->user;
	char line[128], *p = head(line, PJ_SET_VARIABLE, ns);
	p = paje_put(paje_put(p, " "), var);
	p = field(p, " O", st->row[o->cls]);
	emit(pj, line, field(p, " ", n));
}

static void set_life(struct paje *pj, const struct mobject *o, int live, uint64_t ns)
{
	const struct obj_stat *st = o->user;
	line_start(pj, PJ_SET_STATE, ns);
	fprintf(pj->out, " %s O%" PRIu32 " %s\n", paje_life_type[o->cls], st->row[o->cls],
		live ? paje_life_live[o->cls] : paje_life_gone[o->cls]);
}

/*
 * An object gets a row when it is among those shown (o->user set to its
 * obj_stat), in the container of its kind: one row per address and kind in
 * a process, whatever the number of its lifetimes (init .. destroy), each
 * drawn on it as a "live" state.  The rows end with their process.
 */
/* The container "shared memory" of pid's host (made at its first object), as the process its objects go under. */
static struct mprocess *shared_memory(struct paje *pj, uint32_t pid, uint64_t ns)
{
	unsigned h = pj->hosts.n ? host_of(pid) : 0, n = pj->hosts.n ? pj->hosts.n : 1;
	if (h >= n)
		h = 0;
	if (!pj->shared && !(pj->shared = calloc(n, sizeof *pj->shared)))
		return NULL;
	struct mprocess *p = &pj->shared[h];
	if (!p->serial) {
		p->serial = SHARED_SERIAL(h);
		line_start(pj, PJ_CREATE_CONTAINER, ns);
		if (pj->hosts.n)
			fprintf(pj->out, " P%" PRIu32 " CT_Process H%u \"shared memory\"\n", p->serial, h);
		else
			fprintf(pj->out, " P%" PRIu32 " CT_Process C_prog \"shared memory\"\n", p->serial);
	}
	return p;
}

static void on_object_begin(void *ctx, struct mobject *o, struct mprocess *p, uint64_t ns)
{
	struct paje *pj = ctx;
	char name[PTT_MAX_STR + 32];
	struct obj_stat *st = obj_stat_of(pj, o);
	o->user = st && (pj->max_objects == 0 || st->shown) && o->cls < PTT_CLASS_COUNT ? st : NULL;
	if (!o->user)
		return;
	if (PTT_IS_SHARED(o->addr) && !(p = shared_memory(pj, o->pid, ns))) {
		o->user = NULL;
		return;
	}
	if (st->row_process != p->serial) { /* rows of an earlier image of the process (exec) are gone */
		memset(st->row, 0, sizeof st->row);
		st->row_process = p->serial;
	}
	if (!st->row[o->cls]) {
		st->row[o->cls] = ++pj->nrows;
		serials_push(&pj->rows, p->serial, st->row[o->cls] << 4 | o->cls);
		object_group(pj, p, o->cls, ns);
		entity_object_name(name, sizeof name, pj->syms, o->pid, o->cls, o->addr);
		line_start(pj, PJ_CREATE_CONTAINER, ns);
		fprintf(pj->out, " O%" PRIu32 " %s K%" PRIu32 "_%u ", st->row[o->cls], paje_object_type[o->cls], p->serial,
			o->cls);
		paje_name(pj->out, name);
		putc('\n', pj->out);
	}
	set_life(pj, o, 1, ns);
	if (paje_holders_var[o->cls])
		set_count(pj, o, paje_holders_var[o->cls], 0, ns);
	if (paje_waiters_var[o->cls])
		set_count(pj, o, paje_waiters_var[o->cls], 0, ns);
}

static void on_object_end(void *ctx, struct mobject *o, struct mprocess *p, uint64_t ns)
{
	(void)p;
	if (o->user)
		set_life(ctx, o, 0, ns);
}

static void on_object_count(void *ctx, struct mobject *o, int waiters, uint64_t ns)
{
	const char *var = waiters ? paje_waiters_var[o->cls] : paje_holders_var[o->cls];
	if (var && o->user)
		set_count(ctx, o, var, waiters ? o->waiters : o->holders, ns);
}

static void on_point(void *ctx, struct mthread *t, const struct ptt_event *ev)
{
	struct paje *pj = ctx;
	uint64_t site = lockframes_call_site(pj->syms, t->pid, ptt_syms_site_addr(pj->syms, ev->id, ev->arg));
	/* type names are [A-Za-z0-9_.-], < 48 bytes */
	char line[768], *p = head(line, site ? PJ_NEW_EVENT_SITE : PJ_NEW_EVENT, ev->ns);
	p = field(p, " E_Thread T", t->serial);
	*p++ = ' ';
	p = paje_put(p, ev->type->name);
	emit(pj, line, site ? site_field(pj, p, t->pid, site) : p);
}

/* A rec_lost record of the first pass, kept to be drawn at the time of its loss. */
static void keep_lost(struct paje *pj, const struct ptt_event *ev)
{
	if (PTT_GROW(pj->losts, &pj->caplosts, pj->nlosts + 1) != 0)
		return; /* memory is short: that loss is not drawn (the note on stderr still counts it) */
	struct lost *l = &pj->losts[pj->nlosts];
	l->tid = (uint32_t)ptt_event_argn(ev, PTT_ARGNAME_STREAM, 0);
	l->pid = ev->pid;
	l->count = ptt_event_argn(ev, PTT_ARGNAME_COUNT, 0);
	l->from = ptt_event_argn(ev, PTT_ARGNAME_FROM_NS, 0);
	l->to = ptt_event_argn(ev, PTT_ARGNAME_TO_NS, 0);
	l->at = l->to ? l->from : ev->ns; /* no times: lost at some time before the note, drawn at the note */
	l->seq = pj->nlosts++;
}

static int by_loss_time(const void *a, const void *b)
{
	const struct lost *x = a, *y = b;
	if (x->at != y->at)
		return x->at < y->at ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/*
 * Events the recorder lost (rec_lost): a point event "Events lost" at the
 * time the loss began (a state drawn across it may not have lasted), on the
 * row of the thread whose events were lost while it has one, else on its
 * process's (or the process of the record's), else on the program's; its
 * value says how many and the stretch.  Every loss at or before ns (the
 * Paje time of the event about to be drawn; a window's start taken off),
 * never before floor (Paje times never go back).
 */
static void draw_losses(struct paje *pj, const struct cli_clock *clock, uint64_t ns, uint64_t floor)
{
	for (; pj->next_lost < pj->nlosts; pj->next_lost++) {
		const struct lost *l = &pj->losts[pj->next_lost];
		uint64_t at = l->at > clock->from ? l->at - clock->from : 0;
		if (at > ns)
			break;
		at = at > floor ? at : floor;
		struct mthread *t = l->tid ? model_thread_of_tid(pj->model, l->pid, l->tid) : NULL;
		uintptr_t tp = l->tid ? (uintptr_t)ptt_map_get(&pj->lost_tid_pid, l->tid) : 0;
		uint32_t p = tp ? (uint32_t)(uintptr_t)ptt_map_get(&pj->live, (uint32_t)(tp - 1)) : 0;
		if (!p)
			p = (uint32_t)(uintptr_t)ptt_map_get(&pj->live, l->pid);
		program(pj, at);
		line_start(pj, PJ_NEW_EVENT, at);
		if (t)
			fprintf(pj->out, " E_Lost T%" PRIu32, t->serial);
		else if (p)
			fprintf(pj->out, " E_LostP P%" PRIu32, p);
		else
			fputs(" E_LostG C_prog", pj->out);
		fprintf(pj->out, " \"%" PRIu64 " event%s lost", l->count, l->count == 1 ? "" : "s");
		if (l->tid && !t)
			fprintf(pj->out, " of thread %" PRIu32, l->tid);
		if (l->to)
			fprintf(pj->out, " from %" PRIu64 ".%09" PRIu64 " s to %" PRIu64 ".%09" PRIu64 " s (trace time)",
				l->from / 1000000000u, l->from % 1000000000u, l->to / 1000000000u, l->to % 1000000000u);
		fputs("\"\n", pj->out);
	}
}

static void usage(void)
{
	printf("Usage: ptt-paje [OPTION]... [FILE|-]...\n"
	       "Convert a ptt trace (binary or text, from FILE or stdin) to Paje on stdout,\n"
	       "for PajeNG (pj_dump) and ViTE.\n"
	       "Several FILEs are read in order as one trace (the files of ptt-record -m).\n"
	       "\n"
	       "  -o, --objects          under each process, after its threads, a container per\n"
	       "                         mutex, rwlock, spinlock, condition variable, barrier and\n"
	       "                         semaphore, with its holders and waiters: the 10 objects\n"
	       "                         threads waited on most\n"
	       "  -n, --max-objects=N    --objects for the N objects waited on most (0: all)\n"
	       "  -O, --all-objects      --objects for every object (as --max-objects=0)\n"
	       "  -c, --critical         a row \"critical path\" first: the thread the trace's\n"
	       "                         critical path runs through (ptt-critical), with a link\n"
	       "                         for each hand-off between threads\n"
	       CLI_SKIP_FRAMES_HELP
	       "  -h, --help             show this help and exit\n"
	       "      --version          show the version and exit\n"
	       "\n"
	       "Exit status: 0 success, 1 damaged input (the Paje file is still complete and valid),\n"
	       "2 usage error or unreadable input.\n");
}

/* First pass, through the model: which objects threads wait on, how often. */
static void stat_begin(void *ctx, struct mobject *o, struct mprocess *p, uint64_t ns)
{
	struct obj_stat *st = obj_stat_of(ctx, o);
	(void)ns;
	if (st) {
		st->waiters = 0;
		st->p_serial = PTT_IS_SHARED(o->addr) ? 0 : p->serial; /* 0: under "shared memory", made when needed */
		st->cls = o->cls;
	}
	o->user = st;
}

static void stat_count(void *ctx, struct mobject *o, int waiters, uint64_t ns)
{
	struct obj_stat *st = o->user;
	(void)ctx, (void)ns;
	if (!st)
		return;
	st->changes++;
	if (waiters && o->waiters > st->waiters)
		st->waits++;
	if (waiters)
		st->waiters = o->waiters;
}

static void stat_thread(void *ctx, struct mthread *t, struct mprocess *p, uint64_t ns)
{
	struct paje *pj = ctx;
	(void)ns;
	if (t->tid && ptt_map_put(&pj->unclaimed, t->serial, (void *)(uintptr_t)t->tid) == 0)
		serials_push(&pj->early, p->serial, t->serial);
}

/* More waits first, then more activity, then the lower key: the same choice for the same trace. */
static int by_contention(const void *a, const void *b)
{
	const struct obj_stat *x = *(struct obj_stat *const *)a, *y = *(struct obj_stat *const *)b;
	if (x->waits != y->waits)
		return x->waits < y->waits ? 1 : -1;
	if (x->changes != y->changes)
		return x->changes < y->changes ? 1 : -1;
	return x->key < y->key ? -1 : x->key > y->key;
}

/* Mark the max_objects most contended objects as shown. */
static void choose_objects(struct paje *pj)
{
	struct obj_stat **all = calloc(pj->stats.used + 1, sizeof *all);
	size_t n = 0;
	if (!all)
		return;
	struct ptt_map_iter it;
	void *v;
	for (ptt_map_iter_init(&it, &pj->stats); ptt_map_next(&it, NULL, &v);)
		all[n++] = v;
	qsort(all, n, sizeof *all, by_contention);
	for (size_t i = 0; i < n; i++) {
		all[i]->shown = pj->max_objects == 0 || i < (size_t)pj->max_objects;
		uintptr_t mask = (uintptr_t)ptt_map_get(&pj->kinds, all[i]->p_serial);
		if (all[i]->shown && all[i]->cls < PTT_CLASS_COUNT && all[i]->p_serial)
			ptt_map_put(&pj->kinds, all[i]->p_serial, (void *)(mask | 1 | (uintptr_t)2 << all[i]->cls));
	}
	free(all);
}

/* First pass (pass.h: PASS_NAMES_FIRST): rec_lost records, kept to be drawn (the header then declares the
 * "Events lost" types), and which process each thread is of, to draw a loss of a thread gone by then;
 * with --critical, each event to the analysis before that pass's model takes it. */
static void first_event(void *ctx, const struct ptt_event *ev)
{
	struct paje *pj = ctx;
	if (pj->crit)
		critical_event(pj->crit, ev);
	if ((ev->id == PTT_EV_THREAD_BEGIN || ev->id == PTT_EV_PROCESS_BEGIN) && ev->tid)
		ptt_map_put(&pj->lost_tid_pid, ev->tid, (void *)(uintptr_t)(ev->pid + 1ull));
	if (ev->id == PTT_EV_REC_LOST) {
		pj->lost_seen = 1;
		keep_lost(pj, ev);
	}
}

/* --critical, first pass: the analysis observes that pass's model (its event hook is first_event's). */
static int crit_start(void *ctx, struct pass *p, struct model *m)
{
	struct paje *pj = ctx;
	if (!(pj->crit = critical_new(p->syms, m)))
		fprintf(stderr, "ptt-paje: %s\n", strerror(ENOMEM));
	else
		critical_keep_stretches(pj->crit); /* drawn stretch by stretch */
	return pj->crit ? PASS_GO : PASS_FAIL;
}

static void crit_after(void *ctx, const struct ptt_event *ev)
{
	critical_after(((struct paje *)ctx)->crit, ev);
}

/* critical_foreach_stretch gives the path from its end back: each stretch is put in its place. */
static int keep_step(void *ctx, const struct critical_stretch *s)
{
	struct paje *pj = ctx;
	struct path_step *st = &pj->path[--pj->next_step];
	*st = (struct path_step){ s->pid, s->tid, 0, s->from_tid, s->from };
	if (pj->path_end < s->to)
		pj->path_end = s->to;
	return pj->next_step == 0;
}

static int count_step(void *ctx, const struct critical_stretch *s)
{
	(void)s;
	++*(size_t *)ctx;
	return 0;
}

/* The path is built: kept in time order, each hand-off's thread with its process (the stretch before). */
static void crit_end(void *ctx, struct pass *p, uint64_t end_ns)
{
	struct paje *pj = ctx;
	size_t n = 0;
	(void)p;
	critical_finish(pj->crit, end_ns);
	critical_foreach_stretch(pj->crit, count_step, &n);
	if (n && (pj->path = calloc(n, sizeof *pj->path)) != NULL) {
		pj->npath = pj->next_step = n;
		critical_foreach_stretch(pj->crit, keep_step, pj);
		size_t kept = 1; /* a thread's stretches one after the other: one state */
		for (size_t i = 1; i < n; i++) {
			const struct path_step *prev = &pj->path[kept - 1];
			if (pj->path[i].pid == prev->pid && pj->path[i].tid == prev->tid)
				continue;
			pj->path[i].from_pid = prev->pid;
			pj->path[kept++] = pj->path[i];
		}
		pj->npath = kept;
	}
	critical_free(pj->crit);
	pj->crit = NULL;
}

/* Options into pj; 0 to go on, else the exit status (help, version: 0 is returned as -1). */
static int options(struct paje *pj, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "all-objects", no_argument, 0, 'O' }, { "critical", no_argument, 0, 'c' },
		{ "help", no_argument, 0, 'h' }, CLI_SKIP_FRAMES_LONGOPT,
		{ "max-objects", required_argument, 0, 'n' }, { "objects", no_argument, 0, 'o' },
		{ "version", no_argument, 0, 'V' }, { 0, 0, 0, 0 },
	};
	int c;
	char *end;
	while ((c = getopt_long(argc, argv, "chn:oO", longopts, NULL)) != -1) {
		switch (c) {
		case 'c': pj->critical = 1; break;
		case 'o': pj->objects = 1; break;
		case 'O': pj->objects = 1; pj->max_objects = 0; break;
		case 'n':
			pj->objects = 1;
			pj->max_objects = strtol(optarg, &end, 10);
			if (end == optarg || *end || pj->max_objects < 0) {
				fprintf(stderr, "ptt-paje: --max-objects: not a count: %s\n", optarg);
				return cli_usage_error("ptt-paje");
			}
			break;
		case CLI_OPT_SKIP_FRAMES:
			if (cli_skip_frames("ptt-paje", optarg))
				return 2;
			break;
		case 'h': usage(); return -1;
		case 'V': cli_print_version("ptt-paje"); return -1;
		default: return cli_usage_error("ptt-paje");
		}
	}
	return 0;
}

static void free_stats(struct paje *pj)
{
	ptt_map_free_with(&pj->stats, free);
	ptt_map_free_with(&pj->early, free);
	ptt_map_free_with(&pj->rows, free);
	ptt_map_free(&pj->unclaimed);
	ptt_map_free(&pj->kinds);
	ptt_map_free(&pj->live);
	ptt_map_free(&pj->lost_tid_pid);
	free(pj->losts);
	critical_free(pj->crit);
	free(pj->path);
	free(pj->waiting);
}

/*
 * The critical path's row, its hand-offs, and a value per thread on the path,
 * named as its row is, coloured in turn from a palette (Tableau 10) whose
 * first six are none of the thread states' running blue, mutex red or green.
 */
static void path_header(struct paje *pj)
{
	static const char *const colours[] = { "1.00 0.50 0.05", "0.58 0.40 0.74", "0.55 0.34 0.29",
					       "0.89 0.47 0.76", "0.74 0.74 0.13", "0.09 0.75 0.81",
					       "0.50 0.50 0.50", "0.12 0.47 0.71" };
	char name[PTT_MAX_STR + 32], line[64];
	struct ptt_map seen = { 0 };
	fprintf(pj->out, "%d CT_Critical CT_Program \"Critical path\"\n", PJ_DEF_CONTAINER_TYPE);
	fprintf(pj->out, "%d ST_Critical CT_Critical \"Thread on the critical path\"\n", PJ_DEF_STATE_TYPE);
	fprintf(pj->out, "%d L_critical CT_Program CT_Thread CT_Thread \"Critical path hand-off\"\n", PJ_DEF_LINK_TYPE);
	for (size_t i = 0, k = 0; i < pj->npath; i++) {
		const struct path_step *s = &pj->path[i];
		uint64_t key = (uint64_t)s->pid << 32 | s->tid;
		if (ptt_map_get(&seen, key) || ptt_map_put(&seen, key, (void *)1) != 0)
			continue;
		*path_value(line, s->pid, s->tid) = 0;
		entity_thread_name(name, sizeof name, pj->syms, s->pid, s->tid);
		fprintf(pj->out, "%d %s ST_Critical ", PJ_DEF_ENTITY_VALUE, line);
		paje_name(pj->out, name);
		fprintf(pj->out, " \"%s\"\n", colours[k++ % (sizeof colours / sizeof colours[0])]);
	}
	ptt_map_free(&seen);
}

/* The names are learnt (a first pass): the objects to show, the header. */
static int start(void *ctx, struct pass *p)
{
	struct paje *pj = ctx;
	pj->syms = p->syms;
	pj->model = p->model;
	if (pj->objects)
		choose_objects(pj);
	if (hosts_peek(&pj->hosts, p->in.fd))
		pj->hosts.n = 0;
	paje_header(pj->out, pj->objects, pj->hosts.n > 0);
	if (pj->lost_seen) {
		fprintf(pj->out, "%d E_Lost CT_Thread \"Events lost\"\n", PJ_DEF_EVENT_TYPE);
		fprintf(pj->out, "%d E_LostP CT_Process \"Events lost\"\n", PJ_DEF_EVENT_TYPE);
		fprintf(pj->out, "%d E_LostG CT_Program \"Events lost\"\n", PJ_DEF_EVENT_TYPE);
		if (pj->nlosts)
			qsort(pj->losts, pj->nlosts, sizeof *pj->losts, by_loss_time);
	}
	if (pj->critical)
		path_header(pj);
	return PASS_GO;
}

static int event(void *ctx, struct pass *p, struct ptt_event *ev)
{
	struct paje *pj = ctx;
	if (ev->ns < p->last_ns)
		ev->ns = p->last_ns; /* Paje times never go back, whatever the input */
	if (pj->next_lost < pj->nlosts)
		draw_losses(pj, &p->clock, ev->ns, p->last_ns);
	if (pj->row_state < 2 && pj->critical)
		draw_path(pj, &p->clock, ev->ns, p->last_ns);
	return PASS_GO;
}

/* The end of the trace, or of its window (a window is drawn from its start: viewers begin their time axis at 0). */
static int end(void *ctx, struct pass *p)
{
	struct paje *pj = ctx;
	if (pj->next_lost < pj->nlosts) /* losses after the last event (none, unless hand-written) */
		draw_losses(pj, &p->clock, UINT64_MAX, p->last_ns);
	if (pj->critical)
		draw_path(pj, &p->clock, p->end_ns, p->last_ns);
	pj->nwaiting = 0; /* hand-offs to threads that never began: not drawn */
	program(ctx, p->end_ns);
	return PASS_GO;
}

static int report(void *ctx, struct pass *p)
{
	struct paje *pj = ctx;
	if (pj->row_state == 1) { /* a path that ends with the trace, or none */
		line_start(pj, PJ_DESTROY_CONTAINER, p->end_ns);
		fputs(" CT_Critical C_crit\n", pj->out);
	}
	for (unsigned h = 0; pj->shared && h < (pj->hosts.n ? pj->hosts.n : 1); h++)
		if (pj->shared[h].serial) /* its objects' rows, kinds and the container, as a process's at its end */
			on_process_end(pj, &pj->shared[h], p->end_ns);
	free(pj->shared);
	for (unsigned h = 0; h < pj->hosts.n; h++) {
		line_start(pj, PJ_DESTROY_CONTAINER, p->end_ns);
		fprintf(pj->out, " CT_Host H%u\n", h);
	}
	fprintf(pj->out, "%d ", PJ_DESTROY_CONTAINER);
	paje_time(pj->out, p->end_ns);
	fputs(" CT_Program C_prog\n", pj->out);
	return PASS_GO;
}

int main(int argc, char **argv)
{
	struct paje pj = { .out = stdout, .max_objects = PAJE_OBJECTS_DEFAULT };
	int rc = options(&pj, argc, argv);
	if (rc)
		return rc < 0 ? 0 : rc;
	struct model_ops first = { .ctx = &pj, .thread_begin = stat_thread, .object_begin = stat_begin,
				   .object_count = stat_count };
	static const struct model_ops path_only; /* --critical alone: the first pass's model has no other observer */
	/* names first: a container's name is fixed when it is made; ordered: Paje readers reject time going back */
	const struct pass_tool tool = {
		.prog = "ptt-paje", .ctx = &pj, .start = start, .event = event, .end = end, .report = report,
		.need = PASS_SHARED | PASS_NAMES_FIRST | PASS_MODEL | PASS_FINISH | PASS_ORDERED | PASS_LOSS | PASS_LOSS_NOTE |
			PASS_CLOCK | PASS_BUFFERED,
		.first_ops = pj.objects ? &first : pj.critical ? &path_only : NULL, .first_event = first_event,
		.first_start = pj.critical ? crit_start : NULL, .first_after = pj.critical ? crit_after : NULL,
		.first_end = pj.critical ? crit_end : NULL,
		.ops = { .ctx = &pj, .process_begin = on_process_begin, .process_end = on_process_end,
			 .thread_begin = on_thread_begin, .thread_end = on_thread_end, .state = on_state, .link = on_link,
			 .point = on_point, .link_start = on_link_start, .link_end = on_link_end,
			 .object_begin = pj.objects ? on_object_begin : NULL, .object_end = on_object_end,
			 .object_count = on_object_count } };
	struct pass p;
	rc = pass_run(&p, &tool, argc - optind, argv + optind);
	free_stats(&pj);
	hosts_free(&pj.hosts);
	return rc;
}

/*
 * ptt-sqlite - traces into a SQLite database (schema: ptt-sqlite(1)): hosts,
 * traces, processes, threads, objects, the waits (with the thread that let
 * each one in) and holds the model replays, their stacks and frames named as
 * every tool names them, and with --events every event.  Several traces go
 * into one database, each keyed by its host and its processes: a fleet.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sqlite3.h>

#include "lib/cli.h"
#include "lib/host.h"
#include "lib/lockframes.h"
#include "lib/model.h"
#include "lib/pass.h"
#include "lib/symbols.h"

static const char schema[] =
	"CREATE TABLE IF NOT EXISTS hosts(host_id INTEGER PRIMARY KEY, hostname TEXT UNIQUE);\n"
	"CREATE TABLE IF NOT EXISTS traces(trace_id INTEGER PRIMARY KEY, host_id INTEGER, path TEXT, cmdline TEXT,\n"
	"  recorder_pid INTEGER, realtime_ns INTEGER, end_ns INTEGER, events INTEGER, damaged INTEGER);\n"
	"CREATE TABLE IF NOT EXISTS processes(process_id INTEGER PRIMARY KEY, trace_id INTEGER, host_id INTEGER,\n"
	"  pid INTEGER, name TEXT, cmdline TEXT, begin_ns INTEGER, end_ns INTEGER);\n"
	"CREATE TABLE IF NOT EXISTS threads(thread_id INTEGER PRIMARY KEY, process_id INTEGER, pid INTEGER,\n"
	"  tid INTEGER, name TEXT, begin_ns INTEGER, end_ns INTEGER);\n"
	"CREATE TABLE IF NOT EXISTS objects(object_id INTEGER PRIMARY KEY, process_id INTEGER, pid INTEGER,\n"
	"  address INTEGER, class TEXT, use TEXT, name TEXT);\n"
	"CREATE TABLE IF NOT EXISTS stacks(stack_id INTEGER PRIMARY KEY, process_id INTEGER, site TEXT, frames TEXT);\n"
	"CREATE TABLE IF NOT EXISTS frames(stack_id INTEGER, depth INTEGER, name TEXT, location TEXT, lock_layer INTEGER,\n"
	"  PRIMARY KEY(stack_id, depth)) WITHOUT ROWID;\n"
	"CREATE TABLE IF NOT EXISTS waits(thread_id INTEGER, object_id INTEGER, begin_ns INTEGER, end_ns INTEGER,\n"
	"  duration_ns INTEGER, ok INTEGER, holder_id INTEGER, released_by INTEGER, stalled_ns INTEGER,\n"
	"  site TEXT, stack_id INTEGER);\n"
	"CREATE TABLE IF NOT EXISTS holds(thread_id INTEGER, object_id INTEGER, begin_ns INTEGER, end_ns INTEGER,\n"
	"  duration_ns INTEGER, complete INTEGER, site TEXT, stack_id INTEGER);\n"
	"CREATE TABLE IF NOT EXISTS events(process_id INTEGER, thread_id INTEGER, time_ns INTEGER, event TEXT,\n"
	"  class TEXT, object_id INTEGER, args TEXT);\n";

/* The statements, prepared once per database. */
enum { S_HOST, S_HOST_ID, S_TRACE, S_PROCESS, S_THREAD, S_OBJECT, S_STACK, S_FRAME, S_WAIT, S_HOLD, S_EVENT, S_COUNT };
static const char *const stmt_sql[S_COUNT] = {
	"INSERT OR IGNORE INTO hosts(hostname) VALUES(?1)",
	"SELECT host_id FROM hosts WHERE hostname = ?1",
	"INSERT INTO traces VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
	"INSERT INTO processes VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
	"INSERT INTO threads VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7)",
	"INSERT INTO objects VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7)",
	"INSERT INTO stacks VALUES(?1, ?2, ?3, ?4)",
	"INSERT INTO frames VALUES(?1, ?2, ?3, ?4, ?5)",
	"INSERT INTO waits VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
	"INSERT INTO holds VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
	"INSERT INTO events VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7)",
};

struct sq_proc {
	int64_t id;
	uint32_t pid;
	uint64_t begin_ns, end_ns;
	int ended;
	char *cmd;                  /* its process_begin's command, or its exec's path */
};

struct sq_thread {
	int64_t id, proc;
	uint32_t pid, tid;
	uint64_t begin_ns, end_ns;
	int ended;
};

struct sq_object {
	int64_t id, proc;
	uint32_t pid;
	uint64_t addr;
	unsigned cls;
	uint8_t sem_lock;           /* a semaphore the model saw used as a lock */
	struct mfutex futex;        /* a futex's use so far (model.h, the futex rule) */
};

/* What a run keeps: the database, and of the trace being read, its rows not written yet. */
struct sq {
	sqlite3 *db;
	sqlite3_stmt *st[S_COUNT];
	int events_too;
	int64_t trace, host;
	struct hosts hosts;   /* a merged trace's (ptt-merge): its processes' and threads' hosts */
	int64_t next_proc, next_thread, next_object, next_stack;
	struct ptt_map procs, threads, objects, stacks; /* (pid), (pid, tid), (pid, addr), (pid, stack) -> row */
	struct ptt_map holders;     /* (pid, tid) -> the holder's row when its open wait began (one open per thread) */
	struct sq_proc **proc_list;
	struct sq_thread **thread_list;
	struct sq_object **object_list;
	size_t nprocs, cap_procs, nthreads, cap_threads, nobjects, cap_objects;
	struct pass *p;
	uint64_t rows, events;
	int failed;                 /* a database error was said */
};

static int sq_fail(struct sq *s, const char *what)
{
	if (!s->failed)
		fprintf(stderr, "ptt-sqlite: %s: %s\n", what, sqlite3_errmsg(s->db));
	s->failed = 1;
	return PASS_FAIL;
}

/* Run a prepared statement with its bound values, and reset it for the next. */
static void sq_step(struct sq *s, int i)
{
	if (sqlite3_step(s->st[i]) != SQLITE_DONE)
		sq_fail(s, stmt_sql[i]);
	sqlite3_reset(s->st[i]);
	sqlite3_clear_bindings(s->st[i]);
	s->rows++;
}

static void bind_id(sqlite3_stmt *st, int col, int64_t id)
{
	if (id)
		sqlite3_bind_int64(st, col, id);
	else
		sqlite3_bind_null(st, col);
}

static void bind_text(sqlite3_stmt *st, int col, const char *text)
{
	if (text && *text)
		sqlite3_bind_text(st, col, text, -1, SQLITE_TRANSIENT);
	else
		sqlite3_bind_null(st, col);
}

static int64_t max_id(struct sq *s, const char *sql)
{
	sqlite3_stmt *st;
	int64_t id = 0;
	if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
		id = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return id;
}

static void *keep(void *arrp, size_t *n, size_t *cap, void *x)
{
	void ***arr = arrp;
	if (!x || ptt_grow(arr, cap, *n + 1, sizeof **arr)) {
		free(x);
		return NULL;
	}
	(*arr)[(*n)++] = x;
	return x;
}

static struct sq_proc *proc_of(struct sq *s, uint32_t pid)
{
	struct sq_proc *p = ptt_map_get(&s->procs, pid);
	if (p)
		return p;
	if (!(p = keep(&s->proc_list, &s->nprocs, &s->cap_procs, calloc(1, sizeof *p))))
		return NULL;
	*p = (struct sq_proc){ ++s->next_proc, pid, 0, 0, 0, NULL };
	ptt_map_put(&s->procs, pid, p);
	return p;
}

static uint64_t tkey(uint32_t pid, uint32_t tid) { return (uint64_t)pid << 32 | tid; }

/* The row of thread tid of pid as it is now (a tid used again is a new row, from its thread_begin). */
static struct sq_thread *thread_of(struct sq *s, uint32_t pid, uint32_t tid, uint64_t ns, int fresh)
{
	struct sq_thread *t = ptt_map_get(&s->threads, tkey(pid, tid));
	if (t && !fresh)
		return t;
	struct sq_proc *p = proc_of(s, pid);
	if (!p || !(t = keep(&s->thread_list, &s->nthreads, &s->cap_threads, calloc(1, sizeof *t))))
		return NULL;
	*t = (struct sq_thread){ ++s->next_thread, p->id, pid, tid, ns, 0, 0 };
	ptt_map_put(&s->threads, tkey(pid, tid), t);
	return t;
}

static int64_t thread_id(struct sq *s, uint32_t pid, uint32_t tid, uint64_t ns)
{
	struct sq_thread *t = tid ? thread_of(s, pid, tid, ns, 0) : NULL;
	return t ? t->id : 0;
}

static struct sq_object *object_of(struct sq *s, uint32_t pid, uint64_t addr, unsigned cls)
{
	uint64_t key = ptt_obj_key(pid, addr);
	struct sq_object *o = ptt_map_get(&s->objects, key);
	if (o)
		return o;
	struct sq_proc *p = proc_of(s, pid);
	if (!p || !(o = keep(&s->object_list, &s->nobjects, &s->cap_objects, calloc(1, sizeof *o))))
		return NULL;
	*o = (struct sq_object){ .id = ++s->next_object, .proc = p->id, .pid = pid, .addr = addr, .cls = cls };
	ptt_map_put(&s->objects, key, o);
	return o;
}

static int64_t object_id(struct sq *s, uint32_t pid, uint64_t addr, unsigned cls)
{
	struct sq_object *o = object_of(s, pid, addr, cls);
	return o ? o->id : 0;
}

/* What the model says of an object's use so far (a futex's waits, a semaphore taken as a lock), as ptt-stat asks. */
static void object_use(struct sq *s, uint32_t pid, const struct mobject *mo, unsigned cls, int sem_lock)
{
	struct sq_object *o = mo ? object_of(s, pid, mo->addr, cls) : NULL;
	if (o && cls == PTT_CLASS_FUTEX)
		model_futex_merge(&o->futex, &mo->futex);
	if (o && cls == PTT_CLASS_SEM && sem_lock >= 0)
		o->sem_lock = (uint8_t)sem_lock;
}

/* ptt-stat's rule (stat_table.c): mutual exclusion ("lock": a waiter lost time to a holder) or waiting
 * for work ("work": condition variables, barriers, semaphores and futexes used as signals). */
static const char *object_use_word(const struct sq_object *o)
{
	int lock = o->cls == PTT_CLASS_MUTEX || o->cls == PTT_CLASS_RWLOCK || o->cls == PTT_CLASS_SPIN ||
		   (o->cls == PTT_CLASS_FUTEX && model_futex_use(&o->futex) != MF_SIGNAL) ||
		   (o->cls == PTT_CLASS_SEM && o->sem_lock);
	return lock ? "lock" : "work";
}

/* The row of a model stack (0: none), written with its frames the first time: innermost first, each
 * inline level a frame, named as ptt-stat --folded names them. */
static int64_t stack_id(struct sq *s, uint32_t pid, uint32_t stack)
{
	const uint64_t *f;
	struct ptt_syms *syms = s->p->syms;
	const struct ptt_stacks *stacks = model_stacks(s->p->model);
	unsigned n = stack ? ptt_stacks_get(stacks, pid, stack, &f) : 0;
	if (!n)
		return 0;
	uint64_t key = tkey(pid, stack);
	int64_t id = (int64_t)(intptr_t)ptt_map_get(&s->stacks, key);
	if (id)
		return id;
	id = ++s->next_stack;
	if (ptt_map_put(&s->stacks, key, (void *)(intptr_t)id))
		return 0;
	char name[512], past[2048];
	unsigned depth = 0;
	for (unsigned i = 0; i < n; i++) {
		unsigned levels = ptt_syms_code(syms, pid, f[i])->levels;
		for (unsigned l = 0; l < levels; l++) {
			uint64_t a = levels > 1 ? ptt_syms_level(f[i], l) : f[i];
			sqlite3_stmt *st = s->st[S_FRAME];
			sqlite3_bind_int64(st, 1, id);
			sqlite3_bind_int(st, 2, (int)depth++);
			bind_text(st, 3, lockframes_name(syms, pid, a, name, sizeof name));
			bind_text(st, 4, ptt_syms_code(syms, pid, a)->line);
			sqlite3_bind_int(st, 5, lockframes_is_lock(syms, pid, a));
			sq_step(s, S_FRAME);
		}
	}
	sqlite3_stmt *st = s->st[S_STACK];
	sqlite3_bind_int64(st, 1, id);
	sqlite3_bind_int64(st, 2, proc_of(s, pid) ? proc_of(s, pid)->id : 0);
	uint64_t site = lockframes_site(syms, stacks, pid, stack);
	bind_text(st, 3, site ? lockframes_name(syms, pid, site, name, sizeof name) : NULL);
	lockframes_past(syms, stacks, pid, stack, 64, past, sizeof past);
	bind_text(st, 4, past);
	sq_step(s, S_STACK);
	return id;
}

/* A wait or hold's site (the first frame past the lock layer, else its opening call site) and stack. */
static void bind_site(struct sq *s, sqlite3_stmt *st, int col, uint32_t pid, const struct mframe *f)
{
	char name[512];
	uint64_t site = lockframes_frame_site(s->p->syms, model_stacks(s->p->model), pid, f);
	bind_text(st, col, site ? lockframes_name(s->p->syms, pid, site, name, sizeof name) : NULL);
	bind_id(st, col + 1, stack_id(s, pid, f->stack));
}

/*
 * A wait of t on o from f->begin_ns to end_ns; ok 1 (took or passed), 0 (failed), -1 (open at the end);
 * the holder when it asked and the thread whose release, signal, post or wake let it in (o's last).
 */
static void wait_row(struct sq *s, struct mthread *t, const struct mobject *o, unsigned cls, const struct mframe *f,
		     uint64_t end_ns, int ok, int64_t holder)
{
	sqlite3_stmt *st = s->st[S_WAIT];
	sqlite3_bind_int64(st, 1, thread_id(s, t->pid, t->tid, f->begin_ns));
	sqlite3_bind_int64(st, 2, object_id(s, t->pid, f->obj, cls));
	sqlite3_bind_int64(st, 3, (int64_t)f->begin_ns);
	sqlite3_bind_int64(st, 4, (int64_t)end_ns);
	sqlite3_bind_int64(st, 5, (int64_t)(end_ns - f->begin_ns));
	if (ok >= 0)
		sqlite3_bind_int(st, 6, ok);
	bind_id(st, 7, holder);
	if (ok > 0 && o && o->last_tid && o->last_tid != t->tid)
		sqlite3_bind_int64(st, 8, thread_id(s, t->pid, o->last_tid, end_ns));
	sqlite3_bind_int64(st, 9, (int64_t)f->stalled_ns);
	bind_site(s, st, 10, t->pid, f);
	sq_step(s, S_WAIT);
}

static void hold_row(struct sq *s, struct mthread *t, const struct mframe *f, unsigned cls, uint64_t end_ns, int complete)
{
	sqlite3_stmt *st = s->st[S_HOLD];
	sqlite3_bind_int64(st, 1, thread_id(s, t->pid, t->tid, f->begin_ns));
	sqlite3_bind_int64(st, 2, object_id(s, t->pid, f->obj, cls));
	sqlite3_bind_int64(st, 3, (int64_t)f->begin_ns);
	sqlite3_bind_int64(st, 4, (int64_t)end_ns);
	sqlite3_bind_int64(st, 5, (int64_t)(end_ns - f->begin_ns));
	sqlite3_bind_int(st, 6, complete);
	bind_site(s, st, 7, t->pid, f);
	sq_step(s, S_HOLD);
}

/* ---- the model's callbacks ---- */

static void on_process_begin(void *ctx, struct mprocess *mp, uint64_t ns)
{
	struct sq_proc *p = proc_of(ctx, mp->pid);
	if (p && !p->begin_ns)
		p->begin_ns = ns;
}

static void on_process_end(void *ctx, struct mprocess *mp, uint64_t ns)
{
	struct sq_proc *p = proc_of(ctx, mp->pid);
	if (p) {
		p->end_ns = ns;
		p->ended = 1;
	}
}

static void on_thread_begin(void *ctx, struct mthread *t, struct mprocess *mp, uint64_t ns)
{
	(void)mp;
	thread_of(ctx, t->pid, t->tid, ns, 1); /* a new row, its tid used again or not */
}

static void on_thread_end(void *ctx, struct mthread *t, struct mprocess *mp, uint64_t ns)
{
	(void)mp;
	struct sq_thread *th = thread_of(ctx, t->pid, t->tid, ns, 0);
	if (th) {
		th->end_ns = ns;
		th->ended = 1;
	}
}

static void on_wait_begin(void *ctx, struct mthread *t, struct mobject *o, const struct mframe *wait,
			  const struct ptt_event *ev)
{
	struct sq *s = ctx;
	(void)ev;
	const struct mthread *h = o ? model_any_holder(s->p->model, t->pid, wait->obj, t) : NULL;
	int64_t id = h ? thread_id(s, h->pid, h->tid, ev->ns) : 0;
	if (id)
		ptt_map_put(&s->holders, tkey(t->pid, t->tid), (void *)(intptr_t)id);
	else
		ptt_map_del(&s->holders, tkey(t->pid, t->tid));
}

/* A wait ended: its row, with the holder noted at its start. */
static void wait_done(struct sq *s, struct mthread *t, const struct mobject *o, unsigned cls, const struct mframe *f,
		      uint64_t end_ns, int ok)
{
	int64_t holder = (int64_t)(intptr_t)ptt_map_del(&s->holders, tkey(t->pid, t->tid));
	wait_row(s, t, o, cls, f, end_ns, ok, holder);
}

static void on_acquire(void *ctx, struct mthread *t, struct mobject *o, const struct mframe *hold, const struct mframe *wait,
		       const struct ptt_event *ev)
{
	/* a cond wait's re-lock of its mutex: the wait is the cond's (wait_end) */
	if (ev->type->role == PTT_ROLE_WAIT_END)
		return;
	object_use(ctx, t->pid, o, ev->type->cls, hold != NULL);
	if (wait)
		wait_done(ctx, t, o, ev->type->cls, wait, ev->ns, 1);
}

static void on_release(void *ctx, struct mthread *t, struct mobject *o, const struct mframe *hold, const struct ptt_event *ev)
{
	(void)o;
	hold_row(ctx, t, hold, ev->type->cls == PTT_CLASS_COND ? PTT_CLASS_MUTEX : ev->type->cls, ev->ns, 1);
}

static void on_wait_end(void *ctx, struct mthread *t, struct mobject *o, const struct mframe *wait, int ok,
			const struct ptt_event *ev)
{
	unsigned cls = ev->type->cls, role = ev->type->role;
	if (!o || !wait || cls == PTT_CLASS_META || role == PTT_ROLE_TRY || role == PTT_ROLE_TRY_SHARED)
		return; /* a join (no object), a wait a selection left out, a try that did not block */
	object_use(ctx, t->pid, o, cls, -1);
	/* a futex wait ends with the futex word changed (EAGAIN, a timeout) as with a wake: it waited */
	wait_done(ctx, t, o, cls, wait, ev->ns, cls == PTT_CLASS_FUTEX || ok);
}

/* A futex's wake may settle that it is a lock (model.h, the futex rule). */
static void on_point(void *ctx, struct mthread *t, const struct ptt_event *ev)
{
	struct sq *s = ctx;
	if (ev->type->cls == PTT_CLASS_FUTEX && ev->type->role == PTT_ROLE_POST && ev->type->nargs &&
	    ptt_map_get(&s->objects, ptt_obj_key(t->pid, ev->arg[0])))
		object_use(s, t->pid, model_object(s->p->model, t->pid, ev->arg[0]), PTT_CLASS_FUTEX, -1);
}

/* Waits and holds still open at the end of the trace (the model closes them without a word). */
static int open_row(void *ctx, struct mthread *t, const struct mframe *f)
{
	struct sq *s = ctx;
	unsigned cls = mstate_class(f->state);
	if (cls == PTT_CLASS_META || f->state == MS_JOIN || f->state == MS_OTHER_WAIT || f->lost || s->p->end_ns < f->begin_ns)
		return 0;
	const struct mobject *o = model_object(s->p->model, t->pid, f->obj);
	object_use(s, t->pid, o, cls, o ? o->sem_lock : -1);
	if (mstate_is_wait(f->state))
		wait_done(s, t, o, cls, f, s->p->end_ns, -1);
	else if (mstate_is_hold(f->state))
		hold_row(s, t, f, cls, s->p->end_ns, 0);
	return 0;
}

/* ---- the pass ---- */

static void event_row(struct sq *s, const struct ptt_event *ev)
{
	const struct ptt_type *t = ev->type;
	char args[PTT_MAX_ARGS * 48 + PTT_MAX_STR + 16], *q = args;
	int64_t obj = 0;
	for (unsigned a = 0; a < t->nargs; a++) {
		if (!obj && t->argkind[a] == PTT_ARG_PTR && t->cls != PTT_CLASS_THREAD && t->cls != PTT_CLASS_PROCESS &&
		    t->cls != PTT_CLASS_META)
			obj = object_id(s, ev->pid, ev->arg[a], t->cls);
		q += sprintf(q, "%s%s=", a ? ";" : "", t->argname[a]);
		switch (t->argkind[a]) {
		case PTT_ARG_STR: q += snprintf(q, PTT_MAX_STR + 2, "%s", ev->str); break;
		case PTT_ARG_PTR: q = ptt_fmt_hex(q, ev->arg[a]); break;
		case PTT_ARG_I32: case PTT_ARG_I64: q = ptt_fmt_i64(q, (int64_t)ev->arg[a]); break;
		default: q = ptt_fmt_u64(q, ev->arg[a]);
		}
	}
	*q = 0;
	sqlite3_stmt *st = s->st[S_EVENT];
	struct sq_proc *p = proc_of(s, ev->pid);
	bind_id(st, 1, p ? p->id : 0);
	bind_id(st, 2, thread_id(s, ev->pid, ev->tid, ev->ns));
	sqlite3_bind_int64(st, 3, (int64_t)ev->ns);
	sqlite3_bind_text(st, 4, t->name, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 5, ptt_class_name(t->cls), -1, SQLITE_STATIC);
	bind_id(st, 6, obj);
	bind_text(st, 7, args);
	sq_step(s, S_EVENT);
}

static int start(void *ctx, struct pass *p)
{
	struct sq *s = ctx;
	s->p = p;
	s->trace = max_id(s, "SELECT MAX(trace_id) FROM traces") + 1;
	s->next_proc = max_id(s, "SELECT MAX(process_id) FROM processes");
	s->next_thread = max_id(s, "SELECT MAX(thread_id) FROM threads");
	s->next_object = max_id(s, "SELECT MAX(object_id) FROM objects");
	s->next_stack = max_id(s, "SELECT MAX(stack_id) FROM stacks");
	return s->failed ? PASS_FAIL : PASS_GO;
}

/* The row of the host named host (made the first time its name is met): its id, or -1 (said). */
static int64_t host_id_of(struct sq *s, const char *host)
{
	bind_text(s->st[S_HOST], 1, host);
	sq_step(s, S_HOST);
	bind_text(s->st[S_HOST_ID], 1, host);
	if (sqlite3_step(s->st[S_HOST_ID]) != SQLITE_ROW) {
		sq_fail(s, "hosts");
		return -1;
	}
	int64_t id = sqlite3_column_int64(s->st[S_HOST_ID], 0);
	sqlite3_reset(s->st[S_HOST_ID]);
	return id;
}

/* The trace's host: its hostname, known once its header is read; a merged trace's (ptt-merge) first host's. */
static int host_row(struct sq *s, struct pass *p)
{
	const char *host = s->hosts.n ? hosts_name(&s->hosts, 0) : ptt_reader_meta(p->in.r, "hostname");
	host = host && *host ? host : "unknown";
	s->host = host_id_of(s, host);
	return s->failed ? PASS_FAIL : PASS_GO;
}

/* The host of process or thread id: in a merged trace, the one its number says (host.h); else the trace's. */
static int64_t host_of_id(struct sq *s, uint32_t id)
{
	const char *name = hosts_name(&s->hosts, id);
	return name ? host_id_of(s, name) : s->host;
}

static int event(void *ctx, struct pass *p, struct ptt_event *ev)
{
	struct sq *s = ctx;
	(void)p;
	s->events++;
	if (ev->id == PTT_EV_PROCESS_BEGIN || (ev->id == PTT_EV_PROCESS_EXEC && !ev->arg[0])) {
		struct sq_proc *pr = proc_of(s, ev->pid);
		if (pr && ev->str[0]) {
			free(pr->cmd);
			pr->cmd = strdup(ev->str);
		}
	}
	if (s->events_too)
		event_row(s, ev);
	return s->failed ? PASS_FAIL : PASS_GO;
}

static int end(void *ctx, struct pass *p)
{
	model_foreach_open(p->model, open_row, ctx);
	return PASS_GO;
}

/* The rows whose names are known only now: trace, processes, threads, objects. */
static int report(void *ctx, struct pass *p)
{
	struct sq *s = ctx;
	char name[PTT_MAX_STR + 64];
	hosts_free(&s->hosts);
	if (hosts_read(&s->hosts, p->in.r))
		return sq_fail(s, "hosts");
	if (host_row(s, p) != PASS_GO)
		return PASS_FAIL;
	const char *pid = ptt_reader_meta(p->in.r, "pid"), *cmd = ptt_reader_meta(p->in.r, "cmdline");
	const char *real = ptt_reader_meta(p->in.r, "realtime_ns");
	sqlite3_stmt *st = s->st[S_TRACE];
	sqlite3_bind_int64(st, 1, s->trace);
	sqlite3_bind_int64(st, 2, s->host);
	bind_text(st, 3, p->in.label); /* "FILE", or "FILE (and N more)" for the parts of one (--one) */
	bind_text(st, 4, cmd ? cmd + strspn(cmd, " ") : NULL);
	if (pid)
		sqlite3_bind_int64(st, 5, strtoll(pid, NULL, 10));
	if (real)
		sqlite3_bind_int64(st, 6, strtoll(real, NULL, 10));
	sqlite3_bind_int64(st, 7, (int64_t)p->end_ns);
	sqlite3_bind_int64(st, 8, (int64_t)s->events);
	sqlite3_bind_int(st, 9, p->in.problems > 0);
	sq_step(s, S_TRACE);
	for (size_t i = 0; i < s->nprocs; i++) {
		struct sq_proc *pr = s->proc_list[i];
		st = s->st[S_PROCESS];
		sqlite3_bind_int64(st, 1, pr->id);
		sqlite3_bind_int64(st, 2, s->trace);
		sqlite3_bind_int64(st, 3, host_of_id(s, pr->pid));
		sqlite3_bind_int64(st, 4, host_local(pr->pid)); /* as the host knew it; the host is its column */
		bind_text(st, 5, ptt_syms_process_name(p->syms, pr->pid, name, sizeof name));
		bind_text(st, 6, pr->cmd ? pr->cmd : pid && strtoul(pid, NULL, 10) == pr->pid && cmd ? cmd + strspn(cmd, " ") : NULL);
		sqlite3_bind_int64(st, 7, (int64_t)pr->begin_ns);
		sqlite3_bind_int64(st, 8, (int64_t)(pr->ended ? pr->end_ns : p->end_ns));
		sq_step(s, S_PROCESS);
	}
	for (size_t i = 0; i < s->nthreads; i++) {
		struct sq_thread *t = s->thread_list[i];
		st = s->st[S_THREAD];
		sqlite3_bind_int64(st, 1, t->id);
		sqlite3_bind_int64(st, 2, t->proc);
		sqlite3_bind_int64(st, 3, host_local(t->pid));
		sqlite3_bind_int64(st, 4, host_local(t->tid));
		bind_text(st, 5, ptt_syms_thread_name(p->syms, t->pid, t->tid, name, sizeof name));
		sqlite3_bind_int64(st, 6, (int64_t)t->begin_ns);
		sqlite3_bind_int64(st, 7, (int64_t)(t->ended ? t->end_ns : p->end_ns));
		sq_step(s, S_THREAD);
	}
	for (size_t i = 0; i < s->nobjects; i++) {
		struct sq_object *o = s->object_list[i];
		st = s->st[S_OBJECT];
		sqlite3_bind_int64(st, 1, o->id);
		sqlite3_bind_int64(st, 2, o->proc);
		sqlite3_bind_int64(st, 3, host_local(o->pid));
		sqlite3_bind_int64(st, 4, (int64_t)o->addr);
		sqlite3_bind_text(st, 5, o->cls == PTT_CLASS_FUTEX && model_futex_use(&o->futex) == MF_PARK ? "park"
					 : ptt_class_name(o->cls), -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 6, object_use_word(o), -1, SQLITE_STATIC);
		bind_text(st, 7, ptt_syms_object_name(p->syms, o->pid, o->addr, name, sizeof name));
		sq_step(s, S_OBJECT);
	}
	return s->failed ? PASS_FAIL : PASS_GO;
}

/* Forget the trace just read (its rows are written). */
static void sq_reset(struct sq *s)
{
	for (size_t i = 0; i < s->nprocs; i++)
		free(s->proc_list[i]->cmd);
	ptt_map_free_with(&s->procs, free);
	ptt_map_free(&s->threads);
	ptt_map_free_with(&s->objects, free);
	ptt_map_free(&s->stacks);
	ptt_map_free(&s->holders);
	for (size_t i = 0; i < s->nthreads; i++)
		free(s->thread_list[i]);
	free(s->proc_list);
	free(s->thread_list);
	free(s->object_list);
	s->proc_list = NULL, s->thread_list = NULL, s->object_list = NULL;
	s->nprocs = s->cap_procs = s->nthreads = s->cap_threads = s->nobjects = s->cap_objects = 0;
	s->events = 0;
}

/* Open (or create) the database, its schema, one transaction and the statements: 0, or 1 (said). */
static int sq_open(struct sq *s, const char *path)
{
	/* one thread uses the connection: no mutexes (5 % of the time in them) */
	if (sqlite3_open_v2(path, &s->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK) {
		fprintf(stderr, "ptt-sqlite: %s: %s\n", path, s->db ? sqlite3_errmsg(s->db) : "cannot open");
		return 1;
	}
	/* a database being made: its journal is the one transaction's, kept in memory */
	if (sqlite3_exec(s->db, "PRAGMA journal_mode=MEMORY; PRAGMA synchronous=OFF; BEGIN", NULL, NULL, NULL) != SQLITE_OK ||
	    sqlite3_exec(s->db, schema, NULL, NULL, NULL) != SQLITE_OK) {
		fprintf(stderr, "ptt-sqlite: %s: %s\n", path, sqlite3_errmsg(s->db));
		return 1;
	}
	for (int i = 0; i < S_COUNT; i++)
		if (sqlite3_prepare_v3(s->db, stmt_sql[i], -1, SQLITE_PREPARE_PERSISTENT, &s->st[i], NULL) != SQLITE_OK) {
			fprintf(stderr, "ptt-sqlite: %s: %s (not a database ptt-sqlite wrote?)\n", path, sqlite3_errmsg(s->db));
			return 1;
		}
	return 0;
}

/* Commit (or, after a database error, roll back) and close: 0 or 1 (said). */
static int sq_close(struct sq *s, const char *path, int ok)
{
	int rc = 0;
	hosts_free(&s->hosts);
	for (int i = 0; i < S_COUNT; i++)
		sqlite3_finalize(s->st[i]);
	if (s->db && sqlite3_exec(s->db, ok ? "COMMIT" : "ROLLBACK", NULL, NULL, NULL) != SQLITE_OK && ok) {
		fprintf(stderr, "ptt-sqlite: %s: %s\n", path, sqlite3_errmsg(s->db));
		rc = 1;
	}
	if (s->db && sqlite3_close(s->db) != SQLITE_OK && !rc) {
		fprintf(stderr, "ptt-sqlite: %s: %s\n", path, sqlite3_errmsg(s->db));
		rc = 1;
	}
	return rc;
}

static void usage(void)
{
	printf("Usage: ptt-sqlite [OPTION]... TRACE... DB\n"
	       "Write ptt traces (binary or text) into the SQLite database DB (made if absent, else added to):\n"
	       "hosts, traces, processes, threads, objects, waits, holds, stacks, frames and, with -e, events\n"
	       "(the schema is in ptt-sqlite(1)).  Each TRACE is a trace of its own, keyed by its host and\n"
	       "processes; '-' reads one from stdin.\n"
	       "\n"
	       "  -e, --events      also one row per event (the largest table by far)\n"
	       "  -1, --one         the TRACEs are the parts of one recording (ptt-record -m), read in order\n"
	       CLI_SKIP_FRAMES_HELP
	       "  -q, --quiet       no closing line (rows written, rows/s) on stderr\n"
	       "  -h, --help        show this help and exit\n"
	       "      --version     show the version and exit\n"
	       "\n"
	       "Exit status: 0 success, 1 damaged or unreadable input among others (what was read is\n"
	       "written) or a database error (nothing is written), 2 usage error or no input readable.\n");
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "events", no_argument, 0, 'e' }, { "help", no_argument, 0, 'h' }, { "one", no_argument, 0, '1' },
		{ "quiet", no_argument, 0, 'q' }, CLI_SKIP_FRAMES_LONGOPT, { "version", no_argument, 0, 'V' }, { 0, 0, 0, 0 },
	};
	int c, one = 0, quiet = 0, rc = 0;
	struct sq s = { 0 };
	while ((c = getopt_long(argc, argv, "e1qh", longopts, NULL)) != -1) {
		switch (c) {
		case 'e': s.events_too = 1; break;
		case '1': one = 1; break;
		case 'q': quiet = 1; break;
		case CLI_OPT_SKIP_FRAMES: if (cli_skip_frames("ptt-sqlite", optarg)) return 2; break;
		case 'h': usage(); return 0;
		case 'V': cli_print_version("ptt-sqlite"); return 0;
		default: return cli_usage_error("ptt-sqlite");
		}
	}
	if (argc - optind < 2) {
		fprintf(stderr, "ptt-sqlite: a TRACE and the DB to write are needed\n");
		return cli_usage_error("ptt-sqlite");
	}
	const char *dbpath = argv[argc - 1];
	if (sq_open(&s, dbpath))
		return sq_close(&s, dbpath, 0), 1;
	const struct pass_tool tool = {
		.prog = "ptt-sqlite", .ctx = &s, .start = start, .event = event, .end = end, .report = report,
		.need = PASS_SHARED | PASS_SYMS | PASS_MODEL | PASS_FINISH | PASS_ORDERED,
		.ops = { .ctx = &s, .process_begin = on_process_begin, .process_end = on_process_end,
			 .thread_begin = on_thread_begin, .thread_end = on_thread_end, .wait_begin = on_wait_begin,
			 .acquire = on_acquire, .point = on_point, .release = on_release, .wait_end = on_wait_end } };
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	int ntraces = argc - optind - 1, read = 0;
	for (int i = 0; i < ntraces && !s.failed; i += one ? ntraces : 1) {
		struct pass p;
		int r = pass_run(&p, &tool, one ? ntraces : 1, argv + optind + i);
		sq_reset(&s);
		read += r < 2;
		rc = r ? 1 : rc; /* one trace unreadable among others: said, the others written, exit 1 */
	}
	rc = read ? rc : 2; /* nothing could be read: the database is left as it was */
	int bad = sq_close(&s, dbpath, !s.failed && rc < 2) || s.failed;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	double secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	if (!quiet && !bad && rc < 2)
		fprintf(stderr, "ptt-sqlite: %s: %" PRIu64 " rows in %.2f s (%.0f rows/s)\n", dbpath, s.rows, secs,
			secs > 0 ? (double)s.rows / secs : 0.0);
	return bad ? 1 : rc;
}

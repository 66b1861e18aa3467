/*
 * ptt-json - convert a ptt trace to the Chrome Trace Event Format (JSON),
 * for Perfetto's UI and chrome://tracing: a track per thread with its states
 * as complete events, thread creations, hand-offs, wake-ups and joins as
 * flow events, holders and waiters of each synchronisation object as
 * counters, and process and thread names as metadata.  Streamed: memory is
 * bounded by the live threads and objects, never by the length of the trace.
 * With --critical, the critical path (critical.h) too, written once the
 * pass is over (only then is the path known): a track of its stretches, and
 * a flow along each hand-off it takes.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/cli.h"
#include "lib/critical.h"
#include "lib/entity_name.h"
#include "lib/host.h"
#include "lib/fidelity.h"
#include "lib/lockframes.h"
#include "lib/symbols.h"
#include "lib/model.h"
#include "lib/pass.h"


/* An object with a counter track: how often its counter changed, its track's name once chosen. */
struct jobj {
	uint64_t addr, changes;
	uint32_t pid, index;
	uint8_t cls, shown;
	char *name;
	struct jobj *next; /* the next object with the same key */
};

/* A counter change, spooled until the end, when the most active objects are known. */
struct jcount {
	uint64_t ns;
	uint32_t index, holders, waiters, pad;
};

struct json {
	FILE *out;
	struct ptt_syms *syms; /* names and symbols, learnt as the events come */
	const struct ptt_reader *r;
	struct hosts hosts;         /* a merged trace's (ptt-merge), read with the first process: its processes say their host */
	int hosts_read;
	int exec;                   /* the event being handed is an exec */
	int points;                 /* instant events for unlocks, signals, posts, ... */
	long counters;              /* counter tracks for this many objects, the most active; -1: all, inline */
	FILE *spool;                /* the counter changes (struct jcount), when bounded */
	struct ptt_map objs;           /* ptt_obj_key -> struct jobj (chained by class) */
	struct jobj **obj;          /* by index */
	uint32_t nobj, capobj;
	int spool_err;
	unsigned long events;       /* written so far: the first has no comma */
	uint64_t flows;
	struct ptt_map serial_tid;     /* thread serial -> tid, for flows from a thread that ended */
	struct ptt_map tid_serial;     /* (pid, tid) -> the serial of the last thread with that tid */
	int critical;               /* --critical: the path's track and flows, at the end */
	struct critical *crit;
	uint32_t path_pids[8];      /* the processes whose critical-path track is named (the first 8; others: named again) */
	unsigned npath_pids;
	uint64_t stretches;         /* slices written */
	struct critical_stretch pending; /* the slice being made (path_stretch) */
	int any_pending;
};

/* The critical path's track in each process: a tid no Linux thread has (tids stay below 2^22). */
#define JSON_PATH_TID 0x7fffffffu

/* What a thread track shows now: the open complete event. */
struct jthread {
	uint8_t state;
	uint64_t obj, since_ns;
	uint64_t site; /* where the state's frame was opened (0: unknown, running) */
};

/*
 * A JSON string: quoted, with " \ and control characters escaped, < > &
 * as \u escapes too (the output stays safe inside an HTML page, as
 * trace2html embeds it), and bytes that are not UTF-8 replaced by '?'.
 */
static void json_string(FILE *out, const char *s)
{
	const unsigned char *p = (const unsigned char *)(s ? s : "");
	putc('"', out);
	while (*p) {
		unsigned char c = *p;
		if (c == '"' || c == '\\') {
			putc('\\', out);
			putc(c, out);
		} else if (c < 0x20 || c == 0x7f || c == '<' || c == '>' || c == '&') {
			fprintf(out, "\\u%04x", c);
		} else if (c < 0x80) {
			putc(c, out);
		} else {
			/* a whole, shortest-form UTF-8 sequence, or '?' for its first byte */
			int n = c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
			int ok = n > 0;
			for (int i = 1; ok && i < n; i++)
				ok = (p[i] & 0xc0) == 0x80;
			if (ok && n == 3 && ((c == 0xe0 && p[1] < 0xa0) || (c == 0xed && p[1] >= 0xa0)))
				ok = 0; /* overlong, or a surrogate */
			if (ok && n == 4 && ((c == 0xf0 && p[1] < 0x90) || (c == 0xf4 && p[1] >= 0x90)))
				ok = 0;
			if (!ok) {
				putc('?', out);
			} else {
				fwrite_unlocked(p, 1, (size_t)n, out);
				p += n - 1;
			}
		}
		p++;
	}
	putc('"', out);
}

/* Microseconds, exact to the nanosecond and without trailing zeros: "12", "12.5", "12.05", "12.345" */
static void json_ts(FILE *out, uint64_t ns)
{
	uint64_t us = ns / 1000, f = ns % 1000;
	if (!f)
		fprintf(out, "%" PRIu64, us);
	else if (f % 100 == 0)
		fprintf(out, "%" PRIu64 ".%" PRIu64, us, f / 100);
	else if (f % 10 == 0)
		fprintf(out, "%" PRIu64 ".%02" PRIu64, us, f / 10);
	else
		fprintf(out, "%" PRIu64 ".%03" PRIu64, us, f);
}

/* Begin an event of a process: the separator (one event a line), then {"ph":"PH","pid":PID */
static void begin_process(struct json *js, const char *ph, uint32_t pid)
{
	fputs(js->events++ ? ",\n{\"ph\":\"" : "\n{\"ph\":\"", js->out);
	fprintf(js->out, "%s\",\"pid\":%" PRIu32, ph, pid);
}

/* Begin an event of a thread: {"ph":"PH","pid":PID,"tid":TID */
static void begin(struct json *js, const char *ph, uint32_t pid, uint32_t tid)
{
	begin_process(js, ph, pid);
	fprintf(js->out, ",\"tid\":%" PRIu32, tid);
}

/* A metadata event naming a process (tid 0) or a thread. */
static void name_meta(struct json *js, const char *what, uint32_t pid, uint32_t tid, const char *name)
{
	begin(js, "M", pid, tid);
	fprintf(js->out, ",\"name\":\"%s\",\"args\":{\"name\":", what);
	json_string(js->out, name);
	fputs("}}", js->out);
}

static void thread_meta(struct json *js, uint32_t pid, uint32_t tid)
{
	char name[PTT_MAX_STR + 32];
	entity_thread_name(name, sizeof name, js->syms, pid, tid);
	name_meta(js, "thread_name", pid, tid, name);
}

/* A process's track name: "COMMAND PID", then " on HOST" in a merged trace. */
static void process_meta(struct json *js, uint32_t pid)
{
	char name[PTT_MAX_STR + 128];
	if (!js->hosts_read++ && hosts_read(&js->hosts, js->r))
		js->hosts.n = 0;
	entity_process_name(name, sizeof name, js->syms, pid);
	host_append(js->hosts.n ? &js->hosts : NULL, pid, name, sizeof name);
	name_meta(js, "process_name", pid, 0, name);
}

static void on_process_begin(void *ctx, struct mprocess *p, uint64_t ns)
{
	(void)ns;
	process_meta(ctx, p->pid);
}

/* Chrome's reserved colour names, by what a state means for the thread: waiting, holding or running
 * (or stalled by the tracer: ptt's doing, drawn apart from the program's waits). */
static const char *state_colour(const struct mframe *f)
{
	if (f->state == MS_RUNNING)
		return "thread_state_running";
	if (f->state == MS_TRACER_STALL)
		return "black";
	return mstate_is_hold(f->state) ? "good" : "terrible";
}

/* The complete event of the state t showed from jt->since_ns to ns. */
/* PREFIX"fast_path+0x10 (prog) at prog.c:17": the value of the "site" argument */
static void site_arg(struct json *js, const char *prefix, uint32_t pid, uint64_t site)
{
	fputs(prefix, js->out);
	json_string(js->out, ptt_syms_code(js->syms, pid, site)->text);
}

static void close_state(struct json *js, struct mthread *t, struct jthread *jt, uint64_t ns)
{
	struct mframe f = { .state = jt->state, .obj = jt->obj, .since_ns = jt->since_ns };
	begin(js, "X", t->pid, t->tid); /* no "cat": a state is the X event without one (--critical's have one) */
	fputs(",\"name\":", js->out);
	json_string(js->out, mstate_name[f.state]);
	fputs(",\"ts\":", js->out);
	json_ts(js->out, f.since_ns);
	fputs(",\"dur\":", js->out);
	json_ts(js->out, ns - f.since_ns);
	fprintf(js->out, ",\"cname\":\"%s\"", state_colour(&f));
	if (f.obj && f.state != MS_RUNNING) {
		char given[PTT_MAX_STR];
		char addr[32];
		ptt_syms_object_name(js->syms, t->pid, f.obj, given, sizeof given);
		snprintf(addr, sizeof addr, "0x%" PRIx64, f.obj);
		fprintf(js->out, ",\"args\":{\"object\":\"%s\"", addr);
		if (strcmp(given, addr) != 0) { /* a name, not the address again */
			fputs(",\"object_name\":", js->out);
			json_string(js->out, given);
		}
		if (jt->site)
			site_arg(js, ",\"site\":", t->pid, jt->site);
		putc('}', js->out);
	}
	putc('}', js->out);
}

static void on_thread_begin(void *ctx, struct mthread *t, struct mprocess *p, uint64_t ns)
{
	struct json *js = ctx;
	struct jthread *jt = calloc(1, sizeof *jt);
	(void)p;
	t->user = jt;
	if (jt)
		jt->since_ns = ns;
	if (t->tid) {
		/* a thread whose tid is taken again can no longer be joined (the model forgets it too):
		 * its entry goes, so the map holds at most one thread per tid, however many the trace has */
		uint64_t k = (uint64_t)t->pid << 32 | t->tid;
		uint32_t old = (uint32_t)(uintptr_t)ptt_map_get(&js->tid_serial, k);
		if (old)
			ptt_map_del(&js->serial_tid, old);
		ptt_map_put(&js->serial_tid, t->serial, (void *)(uintptr_t)t->tid);
		ptt_map_put(&js->tid_serial, k, (void *)(uintptr_t)t->serial);
	}
	thread_meta(js, t->pid, t->tid);
}

static void on_thread_end(void *ctx, struct mthread *t, struct mprocess *p, uint64_t ns)
{
	struct jthread *jt = t->user;
	(void)p;
	if (jt)
		close_state(ctx, t, jt, ns);
	free(jt);
	t->user = NULL;
}

static void on_state(void *ctx, struct mthread *t, const struct mframe *old, const struct mframe *now, uint64_t ns)
{
	struct jthread *jt = t->user;
	(void)old; /* each acquisition is its own event, even of the same state */
	if (!jt)
		return;
	close_state(ctx, t, jt, ns);
	jt->state = now->state;
	jt->obj = now->obj;
	jt->since_ns = ns;
	struct ptt_syms *syms = ((struct json *)ctx)->syms; /* past the lock layer's inlined levels (lockframes.h) */
	jt->site = now->state == MS_RUNNING ? 0 : lockframes_call_site(syms, t->pid, ptt_syms_site_addr(syms, now->open.id, now->open.arg));
}

/* One end of a flow: "s" leaves the slice open at ns on the sender, "f" enters the receiver's. */
static void flow(struct json *js, const char *ph, const char *kind, uint32_t pid, uint32_t tid, uint64_t id, uint64_t ns)
{
	begin(js, ph, pid, tid);
	fprintf(js->out, ",\"cat\":\"%s\",\"name\":\"%s\",\"id\":%" PRIu64 ",\"ts\":", kind, kind, id);
	json_ts(js->out, ns);
	fputs(*ph == 'f' ? ",\"bp\":\"e\"}" : "}", js->out);
}

/* flow ids: even for the links of on_link, odd for the model's keys */
static void on_link(void *ctx, struct mthread *from, struct mthread *to, const char *kind, uint64_t obj, uint64_t ns)
{
	struct json *js = ctx;
	(void)obj;
	if (from->pid != to->pid)
		return;
	uint64_t id = 2 * ++js->flows;
	flow(js, "s", kind, from->pid, from->tid, id, ns);
	flow(js, "f", kind, to->pid, to->tid, id, ns);
}

static void on_link_start(void *ctx, struct mprocess *p, uint32_t from, const char *kind, uint64_t key, uint64_t ns)
{
	struct json *js = ctx;
	uint32_t tid = (uint32_t)(uintptr_t)ptt_map_get(&js->serial_tid, from);
	if (tid)
		flow(js, "s", kind, p->pid, tid, 2 * key + 1, ns);
}

static void on_link_end(void *ctx, struct mprocess *p, uint32_t to, const char *kind, uint64_t key, uint64_t ns)
{
	struct json *js = ctx;
	uint32_t tid = (uint32_t)(uintptr_t)ptt_map_get(&js->serial_tid, to);
	if (tid)
		flow(js, "f", kind, p->pid, tid, 2 * key + 1, ns); /* an end without its start is ignored by readers */
}

/* The counter event of an object named name: series "holders" (locks) and "waiters". */
static void counter_event(struct json *js, const char *name, uint32_t pid, uint8_t cls, uint32_t holders,
			  uint32_t waiters, uint64_t ns)
{
	begin_process(js, "C", pid); /* a counter is the process's: no tid */
	fputs(",\"name\":", js->out);
	json_string(js->out, name);
	fputs(",\"ts\":", js->out);
	json_ts(js->out, ns);
	fputs(",\"args\":{", js->out);
	if (cls == PTT_CLASS_MUTEX || cls == PTT_CLASS_RWLOCK || cls == PTT_CLASS_SPIN)
		fprintf(js->out, "\"holders\":%" PRIu32 ",", holders);
	fprintf(js->out, "\"waiters\":%" PRIu32 "}}", waiters);
}

/* The entry of object o, made on its first change; NULL when memory runs out. */
static struct jobj *jobj_of(struct json *js, const struct mobject *o)
{
	uint64_t k = ptt_obj_key(o->pid, o->addr);
	struct jobj *head = ptt_map_get(&js->objs, k), *j;
	for (j = head; j; j = j->next)
		if (j->pid == o->pid && j->addr == o->addr && j->cls == o->cls)
			return j;
	size_t cap = js->capobj;
	if (PTT_GROW(js->obj, &cap, (size_t)js->nobj + 1) != 0)
		return NULL;
	js->capobj = (uint32_t)cap;
	if (!(j = calloc(1, sizeof *j)))
		return NULL;
	*j = (struct jobj){ .addr = o->addr, .pid = o->pid, .index = js->nobj, .cls = o->cls, .next = head };
	if (ptt_map_put(&js->objs, k, j) != 0) {
		free(j);
		return NULL;
	}
	js->obj[js->nobj++] = j;
	return j;
}

/*
 * The counter of an object: one track per object.  Unbounded, written at
 * once; bounded, counted and spooled to a temporary file, and written at
 * the end for the most active objects only (counter_tracks).
 */
static void counter(struct json *js, const struct mobject *o, uint64_t ns)
{
	if (js->counters < 0) {
		char name[PTT_MAX_STR + 32];
		entity_object_name(name, sizeof name, js->syms, o->pid, o->cls, o->addr);
		counter_event(js, name, o->pid, o->cls, o->holders, o->waiters, ns);
		return;
	}
	struct jobj *j = js->spool ? jobj_of(js, o) : NULL;
	if (!j) {
		js->spool_err = 1;
		return;
	}
	j->changes++;
	struct jcount c = { .ns = ns, .index = j->index, .holders = o->holders, .waiters = o->waiters };
	if (fwrite(&c, sizeof c, 1, js->spool) != 1)
		js->spool_err = 1;
}

/* More changes first; of equal ones, the object seen first. */
static int by_activity(const void *a, const void *b)
{
	const struct jobj *x = *(struct jobj *const *)a, *y = *(struct jobj *const *)b;
	if (x->changes != y->changes)
		return x->changes > y->changes ? -1 : 1;
	return x->index < y->index ? -1 : x->index > y->index;
}

/* The spooled counters of the js->counters most active objects, in time order; how many tracks. */
static uint32_t counter_tracks(struct json *js)
{
	if (!js->nobj || !js->spool)
		return 0;
	struct jobj **rank = malloc(js->nobj * sizeof *rank);
	if (!rank) {
		js->spool_err = 1;
		return 0;
	}
	memcpy(rank, js->obj, js->nobj * sizeof *rank);
	qsort(rank, js->nobj, sizeof *rank, by_activity);
	uint32_t shown = js->nobj < (unsigned long)js->counters ? js->nobj : (uint32_t)js->counters;
	for (uint32_t i = 0; i < shown; i++) {
		char name[PTT_MAX_STR + 32];
		entity_object_name(name, sizeof name, js->syms, rank[i]->pid, rank[i]->cls, rank[i]->addr);
		rank[i]->name = strdup(name);
		rank[i]->shown = 1;
	}
	free(rank);
	struct jcount c;
	if (fflush(js->spool) != 0 || fseek(js->spool, 0, SEEK_SET) != 0)
		js->spool_err = 1;
	while (!js->spool_err && fread(&c, sizeof c, 1, js->spool) == 1) {
		const struct jobj *j = c.index < js->nobj ? js->obj[c.index] : NULL;
		if (j && j->shown)
			counter_event(js, j->name ? j->name : "?", j->pid, j->cls, c.holders, c.waiters, c.ns);
	}
	if (ferror(js->spool))
		js->spool_err = 1;
	return shown;
}

static void jobj_free(struct json *js)
{
	for (uint32_t i = 0; i < js->nobj; i++) {
		free(js->obj[i]->name);
		free(js->obj[i]);
	}
	free(js->obj);
	ptt_map_free(&js->objs);
	if (js->spool)
		fclose(js->spool);
}

static void on_object_begin(void *ctx, struct mobject *o, struct mprocess *p, uint64_t ns)
{
	(void)p;
	counter(ctx, o, ns);
}

static void on_object_end(void *ctx, struct mobject *o, struct mprocess *p, uint64_t ns)
{
	(void)ctx, (void)o, (void)p, (void)ns; /* its counter already went back to 0 */
}

static void on_object_count(void *ctx, struct mobject *o, int waiters, uint64_t ns)
{
	(void)waiters;
	counter(ctx, o, ns);
}

static void on_point(void *ctx, struct mthread *t, const struct ptt_event *ev)
{
	struct json *js = ctx;
	if (!js->points)
		return;
	begin(js, "i", t->pid, t->tid);
	fprintf(js->out, ",\"s\":\"t\",\"cat\":\"event\",\"name\":\"%s\",\"ts\":", ev->type->name); /* [a-z0-9_] */
	json_ts(js->out, ev->ns);
	uint64_t site = lockframes_call_site(js->syms, t->pid, ptt_syms_site_addr(js->syms, ev->id, ev->arg));
	if (site) {
		site_arg(js, ",\"args\":{\"site\":", t->pid, site);
		putc('}', js->out);
	}
	putc('}', js->out);
}

/*
 * Events the recorder lost (rec_lost): an instant "events lost" (cat
 * "loss") on the track of the thread they were lost of, at the start of the
 * stretch (at the record when its times are not known), with the count and
 * the stretch in trace time.  shift: how much the clock moved this event back.
 */
static void on_lost(struct json *js, struct model *m, const struct ptt_event *ev, uint64_t shift)
{
	uint32_t tid = (uint32_t)ptt_event_argn(ev, PTT_ARGNAME_STREAM, 0);
	if (!tid)
		return;
	uint64_t n = ptt_event_argn(ev, PTT_ARGNAME_COUNT, 0), from = ptt_event_argn(ev, PTT_ARGNAME_FROM_NS, 0),
		 to = ptt_event_argn(ev, PTT_ARGNAME_TO_NS, 0);
	const struct mthread *t = model_thread_of_tid(m, ev->pid, tid); /* ev->pid: the recorder's */
	begin(js, "i", t ? t->pid : ev->pid, tid);
	fputs(",\"s\":\"t\",\"cat\":\"loss\",\"name\":\"events lost\",\"ts\":", js->out);
	json_ts(js->out, to && from >= shift ? from - shift : ev->ns);
	fprintf(js->out, ",\"args\":{\"count\":%" PRIu64, n);
	if (to)
		fprintf(js->out, ",\"from_ns\":%" PRIu64 ",\"to_ns\":%" PRIu64, from, to);
	fputs("}}", js->out);
}

/* A stretch of the path: a slice on its process's path track, and the flow of the hand-off into it. */
static void path_slice(struct json *js, const struct critical_stretch *cs)
{
	char name[PTT_MAX_STR + 32];
	unsigned i = 0;
	while (i < js->npath_pids && js->path_pids[i] != cs->pid)
		i++;
	if (i == js->npath_pids) {
		name_meta(js, "thread_name", cs->pid, JSON_PATH_TID, "critical path");
		if (js->npath_pids < sizeof js->path_pids / sizeof *js->path_pids)
			js->path_pids[js->npath_pids++] = cs->pid;
	}
	entity_thread_name(name, sizeof name, js->syms, cs->pid, cs->tid);
	begin(js, "X", cs->pid, JSON_PATH_TID);
	fputs(",\"cat\":\"critical\",\"name\":", js->out);
	json_string(js->out, name);
	fputs(",\"ts\":", js->out);
	json_ts(js->out, cs->from);
	fputs(",\"dur\":", js->out);
	json_ts(js->out, cs->to - cs->from);
	fprintf(js->out, ",\"cname\":\"yellow\",\"args\":{\"tid\":%" PRIu32 ",\"from_tid\":%" PRIu32 ",\"running_ns\":%" PRIu64
		",\"waiting_ns\":%" PRIu64 "}}", cs->tid, cs->from_tid, cs->running, cs->waiting);
	js->stretches++;
	if (cs->from_tid && cs->from_tid != cs->tid) { /* the hand-off: from the thread that let this one go on */
		uint64_t id = 2 * ++js->flows;
		flow(js, "s", "critical", cs->pid, cs->from_tid, id, cs->from);
		flow(js, "f", "critical", cs->pid, cs->tid, id, cs->from);
	}
}

/*
 * Each stretch as critical_foreach_stretch gives them, end first: one
 * thread's consecutive stretches (no hand-off between them) make one slice.
 */
static int path_stretch(void *ctx, const struct critical_stretch *cs)
{
	struct json *js = ctx;
	struct critical_stretch *p = &js->pending;
	if (js->any_pending && p->pid == cs->pid && p->tid == cs->tid && !p->from_tid && p->from == cs->to) {
		p->from = cs->from;
		p->from_tid = cs->from_tid;
		p->running += cs->running;
		p->waiting += cs->waiting;
		return 0;
	}
	if (js->any_pending)
		path_slice(js, p);
	*p = *cs;
	js->any_pending = 1;
	return 0;
}

/* The path's account in the metadata: its window, length, unknown part and stretches. */
static void path_meta(struct json *js)
{
	const struct critical_sum *s = critical_summary(js->crit);
	fprintf(js->out, ",\"critical_path\":{\"from_ns\":%" PRIu64 ",\"to_ns\":%" PRIu64 ",\"length_ns\":%" PRIu64
		",\"running_ns\":%" PRIu64 ",\"unknown_ns\":%" PRIu64 ",\"stretches\":%" PRIu64 ",\"end_tid\":%" PRIu32
		",\"checked\":%s}", s->from_ns, s->to_ns, s->length, s->running, s->unknown, js->stretches, s->end_tid,
		s->checked ? "true" : "false");
}

static void usage(void)
{
	printf("Usage: ptt-json [OPTION]... [FILE|-]...\n"
	       "Convert a ptt trace (binary or text, from FILE or stdin) to the Chrome Trace Event\n"
	       "Format (JSON) on stdout, for Perfetto's UI and chrome://tracing.\n"
	       "Several FILEs are read in order as one trace (the files of ptt-record -m).\n"
	       "\n"
	       "  -c, --counters=N|all  counter tracks for the N most active objects only (default 64),\n"
	       "                    or for every object\n"
	       "  -C, --critical    also the critical path (ptt-critical(1)): a \"critical path\" track of\n"
	       "                    its stretches in each process, and a flow along each hand-off on it\n"
	       "  -p, --points      also an instant event per unlock, signal, post, failed trylock, ...\n"
	       "  -h, --help        show this help and exit\n"
	       "      --version     show the version and exit\n"
	       "\n"
	       "Exit status: 0 success, 1 damaged input (the JSON is still complete and valid),\n"
	       "2 usage error or unreadable input.\n");
}

static int start(void *ctx, struct pass *p)
{
	struct json *js = ctx;
	js->syms = p->syms;
	js->r = p->in.r;
	if (js->counters >= 0 && !(js->spool = tmpfile())) {
		fprintf(stderr, "ptt-json: a temporary file for the counters: %s\n", strerror(errno));
		return PASS_FAIL;
	}
	if (js->critical && !(js->crit = critical_new(p->syms, p->model))) { /* beside the tool's own observer */
		fprintf(stderr, "ptt-json: %s\n", strerror(ENOMEM));
		return PASS_FAIL;
	}
	if (js->crit)
		critical_keep_stretches(js->crit); /* drawn stretch by stretch */
	fprintf(js->out, "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"generator\":\"ptt-json %s\"},\"traceEvents\":[",
		PTT_VERSION);
	return PASS_GO;
}

/* Before the model takes ev: a loss's instant event; is it an exec (process_begin of a pid already seen)? */
static int event(void *ctx, struct pass *p, struct ptt_event *ev)
{
	struct json *js = ctx;
	if (ev->id == PTT_EV_REC_LOST)
		on_lost(js, p->model, ev, p->shift);
	js->exec = ev->id == PTT_EV_PROCESS_BEGIN && model_thread(p->model, ev->pid, ev->tid);
	if (js->crit)
		critical_event(js->crit, ev); /* no window: never over */
	return PASS_GO;
}

/* Once the model took ev: names that changed (a later thread name replaces the first, an exec's command). */
static int after(void *ctx, struct pass *p, struct ptt_event *ev)
{
	struct json *js = ctx;
	uint32_t target = (uint32_t)ptt_event_argn(ev, PTT_ARGNAME_TARGET, 0);
	if (js->crit)
		critical_after(js->crit, ev);
	if (ev->id == PTT_EV_THREAD_NAME && model_thread(p->model, ev->pid, target))
		thread_meta(js, ev->pid, target);
	if (js->exec) {
		process_meta(js, ev->pid);
		thread_meta(js, ev->pid, ev->tid);
	}
	return PASS_GO;
}

/* The input read, the model not closed yet: the critical path is built. */
static int end(void *ctx, struct pass *p)
{
	struct json *js = ctx;
	if (js->crit)
		critical_finish(js->crit, p->end_ns);
	return PASS_GO;
}

/* The model closed: the counters, the critical path, and the metadata. */
static int report(void *ctx, struct pass *p)
{
	struct json *js = ctx;
	uint32_t tracks = counter_tracks(js);
	if (js->crit) {
		critical_foreach_stretch(js->crit, path_stretch, js);
		if (js->any_pending)
			path_slice(js, &js->pending);
	}
	fputs("\n],\n\"metadata\":{\"counter_limit\":", js->out);
	if (js->counters < 0)
		fputs("\"all\"", js->out);
	else
		fprintf(js->out, "%ld,\"counter_objects\":%" PRIu32 ",\"counter_tracks\":%" PRIu32, js->counters,
			js->nobj, tracks);
	if (loss_events(p->in.loss)) {
		size_t n, stretches = 0;
		const struct loss_span *v = loss_spans(p->in.loss, &n);
		for (size_t i = 0; i < n; i++)
			stretches += v[i].count != 0;
		fprintf(js->out, ",\"events_lost\":%" PRIu64 ",\"lost_stretches\":%zu", loss_events(p->in.loss), stretches);
	}
	if (js->crit)
		path_meta(js);
	fputs("}}\n", js->out);
	if (js->spool_err)
		fprintf(stderr, "ptt-json: the counters' temporary file: %s; counters are missing\n",
			errno ? strerror(errno) : "out of memory");
	return js->spool_err ? PASS_FAIL : PASS_GO;
}

/* Options into js: 0 to go on, else the exit status (help, version: -1 for 0). */
static int options(struct json *js, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "counters", required_argument, 0, 'c' }, { "critical", no_argument, 0, 'C' }, { "help", no_argument, 0, 'h' },
		{ "points", no_argument, 0, 'p' },
		{ "version", no_argument, 0, 'V' }, { 0, 0, 0, 0 },
	};
	int c;
	char *end;
	while ((c = getopt_long(argc, argv, "c:Chp", longopts, NULL)) != -1) {
		switch (c) {
		case 'c':
			if (strcmp(optarg, "all") == 0) {
				js->counters = -1;
				break;
			}
			js->counters = strtol(optarg, &end, 10);
			if (end == optarg || *end || js->counters < 0 || js->counters > 100000000) {
				fprintf(stderr, "ptt-json: --counters: '%s' is not a count or 'all'\n", optarg);
				return cli_usage_error("ptt-json");
			}
			break;
		case 'C': js->critical = 1; break;
		case 'p': js->points = 1; break;
		case 'h': usage(); return -1;
		case 'V': cli_print_version("ptt-json"); return -1;
		default: return cli_usage_error("ptt-json");
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct json js = { .out = stdout, .counters = 64 };
	int rc = options(&js, argc, argv);
	if (rc)
		return rc < 0 ? 0 : rc;
	/* durations are never negative (ordered); a window's times from its start, as in ptt-paje and ptt-csv */
	const struct pass_tool tool = {
		.prog = "ptt-json", .ctx = &js, .start = start, .event = event, .after = after, .end = end, .report = report,
		.need = PASS_SHARED | PASS_SYMS | PASS_NAMES_FIRST | PASS_MODEL | PASS_FINISH | PASS_ORDERED | PASS_LOSS | PASS_LOSS_NOTE | PASS_CLOCK |
			PASS_BUFFERED,
		.ops = { .ctx = &js, .process_begin = on_process_begin, .thread_begin = on_thread_begin,
			 .thread_end = on_thread_end, .state = on_state, .link = on_link, .point = on_point,
			 .link_start = on_link_start, .link_end = on_link_end, .object_begin = on_object_begin,
			 .object_end = on_object_end, .object_count = on_object_count } };
	struct pass p;
	rc = pass_run(&p, &tool, argc - optind, argv + optind);
	hosts_free(&js.hosts);
	jobj_free(&js);
	critical_free(js.crit);
	ptt_map_free(&js.serial_tid);
	ptt_map_free(&js.tid_serial);
	return rc;
}

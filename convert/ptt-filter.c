/*
 * ptt-filter - select events of a trace: by process, thread, object, event
 * type or class, time window and position.  Writes the form it read
 * (binary or text), keeping the context a viewer needs.
 */
#include <errno.h>
#include <fnmatch.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/cli.h"
#include "lib/filter_context.h"
#include "lib/filter_spec.h"
#include "lib/host.h"
#include "lib/pass.h"
#include "lib/symbols.h"

static void usage(void)
{
	printf("Usage: ptt-filter [OPTION]... [FILE|-]...\n"
	       "Select events of a ptt trace (binary or text, from FILE or stdin) and write them\n"
	       "to stdout in the same form.  Options combine with AND; comma lists with OR.\n"
	       "Several FILEs are read in order as one trace (the files of ptt-record -m).\n"
	       "\n"
	       "  -p, --pid=LIST        events of these processes (PID, or PID@HOST in a merged trace)\n"
	       "  -t, --thread=LIST     events of these threads (tid or thread name)\n"
	       "  -m, --mutex=LIST      events about these objects (0x address or name)\n"
	       "  -o, --object=LIST     the same as --mutex, for any kind of object\n"
	       "  -s, --site=PATTERN    events called from a site matching the glob PATTERN: the symbolised\n"
	       "                        site (\"queue_push+0x1a (prog) at queue.c:42\"), its function\n"
	       "                        or its file:line (e.g. 'queue_push', '*queue.c:4?', 'libfoo.so+0x*')\n"
	       "  -e, --event=LIST      events whose name starts so, or of these classes\n"
	       "                        (thread, mutex, cond, rwlock, barrier, sem, spin, futex, process,\n"
	       "                        user)\n"
	       "  -f, --from=TIME       events at or after TIME since the start (units ns, us, ms, s; default s)\n"
	       "  -T, --to=TIME         events at or before TIME\n"
	       "  -F, --first=N         events from position N on (0-based over the input)\n"
	       "  -c, --count=N         at most N events from the window's start\n"
	       "  -v, --invert          keep the events that do not match instead\n"
	       "  -n, --no-context      keep only matching events: no process and thread definitions,\n"
	       "                        no locks and waits in force at a window's start; binary\n"
	       "                        input is then read only from the blocks the window needs\n"
	       "      --force           write a binary trace to stdout even when it is a terminal\n"
	       "  -h, --help            show this help and exit\n"
	       "      --version         show the version and exit\n"
	       "\n"
	       "Exit status: 0 success, 1 damaged input (the output is still consistent), a\n"
	       "selection that names nothing in the trace (with the nearest names it has), a\n"
	       "window that ends before it begins or lies outside the trace (nothing is then\n"
	       "written); 2 usage error or unreadable input.\n");
}

struct out_ctx {
	struct ptt_sink *sink;
	const struct ptt_reader *r;
	struct filter_spec *spec;
	const struct ptt_names *names;
	struct ptt_syms *syms;
	const char *site;   /* --site pattern, or NULL */
	int context;                     /* definitions and wait_other markers are written */
	struct ptt_map pending;             /* (pid, tid) -> the left-out call a thread is blocked in */
	struct ptt_map stacks;              /* (pid, tid) -> struct held_stack for its next event */
	int replaying;                   /* writing a window's context: no event of it takes a held stack */
	struct fcontext *ctx;
	int hold_stacks;                 /* a stack event waits for its thread's next event, kept or not with it */
	/* the run */
	struct pass *pass;
	int no_context, force;
	uint64_t seen_n;                 /* the input's events from the window's start on (--count counts them) */
	uint64_t delivered;              /* the events read so far, of several inputs (a rotated set) */
	int in_window, seen, stopped_early, past_to, empty, failed, werr;
	int names_checked;               /* the names of the selection were checked by a first pass */
	int any;                         /* an event was read */
	uint64_t first_ns, last_ns;      /* of the trace's first event read; of the window's last event */
};

/* --site: the event's call site, its function or its file:line matches the glob. */
static int site_match(struct out_ctx *o, const struct ptt_event *ev)
{
	if (!o->site)
		return 1;
	const struct ptt_sym *s = ptt_syms_site(o->syms, ev);
	return s && (!fnmatch(o->site, s->text, 0) || !fnmatch(o->site, s->where, 0) ||
		     (s->func && !fnmatch(o->site, s->func, 0)) || (s->line && !fnmatch(o->site, s->line, 0)));
}

static int selected(struct out_ctx *o, const struct ptt_event *ev)
{
	return (spec_match(o->spec, ev, o->names, o->syms) && site_match(o, ev)) != o->spec->invert;
}

/* A left-out blocking call: its object and the type of its request. */
struct left_out {
	uint64_t obj;
	uint32_t id;
};

static uint64_t thread_key(const struct ptt_event *ev) { return (uint64_t)ev->pid << 32 | ev->tid; }

/* Write an event of type t (its nargs arguments from args) for the thread of ev, at ev's time. */
static int write_at(struct out_ctx *o, const struct ptt_event *ev, const struct ptt_type *t, const uint64_t *args)
{
	static struct ptt_event m;
	memset(&m, 0, sizeof m);
	m.type = t;
	m.id = t->id;
	m.nargs = t->nargs;
	m.ns = ev->ns;
	m.ticks = ev->ticks;
	m.pos = ev->pos;
	m.pid = ev->pid;
	m.tid = ev->tid;
	for (unsigned i = 0; i < t->nargs; i++)
		m.arg[i] = args[i];
	int rc = ptt_event_encode(&m);
	return rc ? rc : ptt_sink_event(o->sink, o->r, &m);
}

/* Write a wait_other marker (begin or end) for thread of ev at its time. */
static int marker(struct out_ctx *o, const struct ptt_event *ev, const char *name, const struct left_out *l)
{
	const struct ptt_type *t = ptt_types_find_name(ptt_reader_types(o->r), name);
	int io = t ? ptt_type_arg_index(t, PTT_ARGNAME_OBJECT) : -1, ie = t ? ptt_type_arg_index(t, PTT_ARGNAME_EVENT) : -1;
	if (!t || t->nargs != 2 || io < 0 || ie < 0)
		return 0; /* the input defines the id otherwise: no marker */
	uint64_t args[2] = { 0, 0 };
	args[io] = l->obj;
	args[ie] = l->id;
	return write_at(o, ev, t, args);
}

/*
 * Write ev if kept.  With context, a blocking call that the selection leaves
 * out becomes a wait_other marker, and the thread's next event (its
 * outcome, or whatever comes first) ends it: the thread is not drawn
 * running while it waits on something outside the selection.
 */
/* A stack event held back until its thread's next event (with context). */
struct held_stack {
	uint64_t id;
};

/* Hold ev (a stack event) for its thread's next event. */
static int hold(struct out_ctx *o, const struct ptt_event *ev)
{
	struct held_stack *h = ptt_map_get(&o->stacks, thread_key(ev));
	if (!h) {
		if (!(h = malloc(sizeof *h)) || ptt_map_put(&o->stacks, thread_key(ev), h)) {
			free(h);
			return PTT_E_NOMEM;
		}
	}
	h->id = ptt_event_argn(ev, PTT_ARGNAME_STACK, 0);
	return 0;
}

/* The held stack of ev's thread, written before ev when ev is kept, dropped either way.  It is stamped
 * at ev's time (the two are nanoseconds apart): the events of other threads written meanwhile may be
 * later than the stack's own time, and a trace's time never goes back. */
static int stack_before(struct out_ctx *o, const struct ptt_event *ev, int keep)
{
	struct held_stack *h = ptt_map_get(&o->stacks, thread_key(ev));
	ptt_map_del(&o->stacks, thread_key(ev));
	const struct ptt_type *t = ptt_types_get(ptt_reader_types(o->r), PTT_EV_STACK);
	int rc = 0;
	if (keep && h && t && t->nargs == 1 && ptt_type_arg_index(t, PTT_ARGNAME_STACK) == 0)
		rc = write_at(o, ev, t, &h->id);
	free(h);
	return rc;
}

/* Before the window: a thread's stack event is held for its next event, which may be the window's. */
static int hold_stack(struct out_ctx *o, const struct ptt_event *ev)
{
	int pairing = ptt_stack_pairing(ev->id, ev->type != NULL, ev->type ? ev->type->role : 0, ev->nargs);
	if (!o->hold_stacks)
		return 0;
	if (pairing == PTT_STACK_HOLD)
		return hold(o, ev);
	if (o->stacks.used && pairing == PTT_STACK_TAKE && ptt_map_get(&o->stacks, thread_key(ev)))
		return stack_before(o, ev, 0); /* its event is before the window: the stack goes with it */
	return 0;
}

static int write_event(struct out_ctx *o, struct ptt_event *ev, int keep)
{
	int rc = 0;
	unsigned role = ev->type->role;
	int pairing = ptt_stack_pairing(ev->id, 1, role, ev->nargs);
	/* with context, a stack event goes with its thread's next event, kept or not with it
	 * (without, it is an event like any other: --no-context keeps what was asked for, raw) */
	if (o->hold_stacks && !o->replaying && pairing == PTT_STACK_HOLD)
		return hold(o, ev);
	if (o->stacks.used && !o->replaying && pairing == PTT_STACK_TAKE && ptt_map_get(&o->stacks, thread_key(ev)))
		rc = stack_before(o, ev, keep);
	if (rc)
		return rc;
	if (o->context && o->pending.used && role != PTT_ROLE_NAME && role != PTT_ROLE_META) {
		struct left_out *l = ptt_map_get(&o->pending, thread_key(ev));
		if (l) {
			rc = marker(o, ev, "wait_other_end", l);
			ptt_map_del(&o->pending, thread_key(ev));
			free(l);
		}
	}
	if (!rc && keep)
		return ptt_sink_event(o->sink, o->r, ev);
	if (!rc && o->context && ptt_role_is_request(role) && ev->type->cls != PTT_CLASS_META) {
		struct left_out *l = malloc(sizeof *l);
		if (!l || ptt_map_put(&o->pending, thread_key(ev), l)) {
			free(l);
			return PTT_E_NOMEM;
		}
		l->obj = ev->nargs && ev->type->argkind[0] == PTT_ARG_PTR && ev->type->cls != PTT_CLASS_THREAD ? ev->arg[0] : 0;
		l->id = ev->id;
		rc = marker(o, ev, "wait_other", l);
	}
	return rc;
}

/* Definitions are kept whatever the selection; holds and waits when they are selected (else wait_other). */
static int emit_context(void *p, struct ptt_event *ev)
{
	struct out_ctx *o = p;
	o->replaying = 1;
	int rc = write_event(o, ev, selected(o, ev) || spec_is_definition(ev));
	o->replaying = 0;
	return rc;
}

/* A snapshot's record: learnt as if read from the trace. */
static int restore(void *p, struct ptt_event *ev, unsigned kind)
{
	struct out_ctx *o = p;
	(void)kind;
	pass_learn(o->pass, ev); /* names, modules for --site, the model */
	fcontext_event(o->ctx, ev);
	return hold_stack(o, ev); /* a stack whose event comes after the snapshot goes with that event */
}

/* The window begins with ev: its context, stamped at the window's start, and its bounds in the header. */
static int open_window(struct out_ctx *o, const struct ptt_event *ev)
{
	uint64_t at = o->spec->first ? ev->ns : o->spec->from_ns;
	if (at < o->spec->from_ns)
		at = o->spec->from_ns;
	uint64_t ticks = at;
	if (ev->ns == at) {
		ticks = ev->ticks;
	} else if (ptt_reader_form(o->r) == PTT_FORM_BINARY) {
		/* the first tick at or after the start, so that every reader sees the same time (found
		 * tick by tick, a damaged clock rate made this loop for minutes, or for ever) */
		const struct ptt_clock *clk = ptt_reader_clock(o->r);
		ticks = ptt_clock_ticks(clk, at);
		if (ticks != UINT64_MAX)
			at = ptt_clock_ns(clk, ticks);
	}
	char line[64];
	snprintf(line, sizeof line, "window_from_ns %llu\n", (unsigned long long)at);
	int rc = ptt_sink_meta(o->sink, line);
	if (!rc && o->ctx)
		rc = fcontext_replay(o->ctx, at, ticks, ptt_reader_types(o->r), emit_context, o);
	return rc;
}

static int parse_count(const char *arg, uint64_t *v, const char *opt)
{
	char *end;
	*v = strtoull(arg, &end, 10);
	if (!*arg || *end || *arg == '-') {
		fprintf(stderr, "ptt-filter: %s: not a number: '%s'\n", opt, arg);
		return -1;
	}
	return 0;
}

static int parse_args(int argc, char **argv, struct filter_spec *s, int *no_context, int *force, const char **site)
{
	static const struct option longopts[] = {
		{ "pid", required_argument, 0, 'p' }, { "thread", required_argument, 0, 't' },
		{ "mutex", required_argument, 0, 'm' }, { "object", required_argument, 0, 'o' },
		{ "event", required_argument, 0, 'e' }, { "from", required_argument, 0, 'f' },
		{ "to", required_argument, 0, 'T' }, { "first", required_argument, 0, 'F' },
		{ "count", required_argument, 0, 'c' }, { "invert", no_argument, 0, 'v' },
		{ "no-context", no_argument, 0, 'n' }, { "site", required_argument, 0, 's' },
		{ "help", no_argument, 0, 'h' }, { "version", no_argument, 0, 'V' },
		{ "force", no_argument, 0, 'O' }, { 0, 0, 0, 0 },
	};
	int c;
	while ((c = getopt_long(argc, argv, "p:t:m:o:s:e:f:T:F:c:vnh", longopts, NULL)) != -1) {
		int bad = 0;
		switch (c) {
		case 'p': bad = spec_add_pids(s, optarg); break;
		case 't': bad = spec_add_list(s, s->threads, &s->nthreads, optarg, "--thread"); break;
		case 'm': case 'o': {
			unsigned before = s->nobjects;
			const char *opt = c == 'm' ? "--mutex" : "--object";
			bad = spec_add_list(s, s->objects, &s->nobjects, optarg, opt);
			for (unsigned i = before; i < s->nobjects; i++)
				s->object_opts[i] = opt;
			break;
		}
		case 'e':
			bad = spec_add_list(s, s->events, &s->nevents, optarg, "--event");
			break;
		case 'f':
		case 'T':
			if (spec_parse_time(optarg, c == 'f' ? &s->from_ns : &s->to_ns)) {
				fprintf(stderr, "ptt-filter: %s: not a time: '%s' (e.g. 1.5s, 200ms, 30us, 100ns)\n",
					c == 'f' ? "--from" : "--to", optarg);
				bad = 1;
			}
			s->has_window |= c == 'f';
			break;
		case 'F': bad = parse_count(optarg, &s->first, "--first"); s->has_window = 1; break;
		case 'c': bad = parse_count(optarg, &s->count, "--count"); break;
		case 's': *site = optarg; break;
		case 'v': s->invert = 1; break;
		case 'n': *no_context = 1; break;
		case 'O': *force = 1; break;
		case 'h': usage(); return 0;
		case 'V': cli_print_version("ptt-filter"); return 0;
		default: return cli_usage_error("ptt-filter");
		}
		if (bad)
			return cli_usage_error("ptt-filter");
	}
	return -1;
}

/*
 * The output, opened when the first thing is written (or at the end): a
 * refused selection or a window outside the trace writes nothing at all, so
 * that the next tool of a pipe says its input is empty instead of drawing it.
 */
static int open_sink(struct out_ctx *o)
{
	if (o->sink)
		return 0;
	int rc = ptt_sink_open(&o->sink, stdout, ptt_reader_form(o->r), 0);
	if (rc)
		return rc;
	if (ptt_reader_form(o->r) == PTT_FORM_TEXT)
		ptt_sink_set_note(o->sink, ptt_syms_note, o->syms);
	return 0;
}

/* The first pass (selections by name): which names the trace has. */
static void first_event(void *ctx, const struct ptt_event *ev)
{
	struct out_ctx *o = ctx;
	const struct ptt_names *names = ptt_syms_names(o->pass->syms);
	spec_note_seen(o->spec, ev, names, o->pass->syms);
	o->failed |= spec_collect(o->spec, ev) != 0;
}

/* --pid=N@HOST: the hosts are the trace's (its header, read apart from fd: a file, stdin spooled by the
 * first reading); 0, or 1 said */
static int resolve_hosts(struct filter_spec *spec, int fd)
{
	unsigned i = 0;
	while (i < spec->npids && !spec->pid_hosts[i])
		i++;
	if (i == spec->npids)
		return 0;
	struct hosts hs;
	if (hosts_peek(&hs, fd)) {
		fprintf(stderr, "ptt-filter: the trace's hosts cannot be read\n");
		return 1;
	}
	int bad = spec_resolve_hosts(spec, &hs, "ptt-filter");
	hosts_free(&hs);
	return bad;
}

/* The input is open: refuse a terminal for a binary trace, and names the trace lacks; where reading starts, and the state there. */
static int start(void *ctx, struct pass *p)
{
	struct out_ctx *o = ctx;
	struct filter_spec *spec = o->spec;
	if (ptt_reader_form(p->in.r) == PTT_FORM_BINARY && isatty(1) && !o->force) {
		fprintf(stderr, "ptt-filter: refusing to write a binary trace to a terminal: redirect it, pipe it, or use --force\n");
		return PASS_QUIT;
	}
	o->pass = p;
	o->r = p->in.r;
	o->syms = p->syms;
	o->names = ptt_syms_names(p->syms); /* learnt by the pass */
	if (o->failed) {
		fprintf(stderr, "ptt-filter: %s\n", strerror(ENOMEM));
		return PASS_FAIL;
	}
	if (o->names_checked && resolve_hosts(spec, p->in.fd))
		return PASS_FAIL; /* nothing written */
	if (o->names_checked && spec_warn_unseen(spec, "ptt-filter", o->names, o->syms))
		return PASS_FAIL; /* nothing written */
	o->ctx = o->context ? fcontext_new() : NULL;
	o->failed = o->context && !o->ctx;
	o->in_window = !spec->has_window;
	/* with context and a selection, a stack goes with its event; a copy of the whole trace keeps each as it is */
	o->hold_stacks = o->context && (o->site || !spec_selects_all(spec));
	if (!o->context) /* by position only in one file: several are counted as read (event()) */
		ptt_reader_skip(p->in.r, spec->from_ns, p->in.npaths > 1 ? 0 : spec->first);
	else if (o->ctx && spec->has_window && p->in.npaths <= 1) /* a snapshot of the state before the window, if any */
		o->failed |= ptt_reader_snapshot(p->in.r, spec->from_ns, spec->first, restore, o) < 0;
	if ((o->empty = spec->from_ns > spec->to_ns))
		fprintf(stderr, "ptt-filter: the window ends (--to) before it begins (--from): it selects nothing\n");
	return o->failed || o->empty ? PASS_STOP : PASS_GO;
}

/* An event in the window is written (or left out) here; one before it goes on to the model and after(). */
static int event(void *ctx, struct pass *p, struct ptt_event *ev)
{
	struct out_ctx *o = ctx;
	struct filter_spec *spec = o->spec;
	spec_note_seen(spec, ev, o->names, o->syms);
	if (!o->any) {
		o->any = 1;
		o->first_ns = ev->ns;
	}
	/* counting every event of the input from 0; of several files (a rotated set), as they are read as one
	 * (the state each file's head repeats is read once), as ptt-dump lists them */
	uint64_t pos = p->in.npaths > 1 ? o->delivered++ : ev->pos;
	if (ev->ns > spec->to_ns || (o->in_window && o->seen_n >= spec->count)) {
		o->stopped_early = 1;
		o->past_to = ev->ns > spec->to_ns || o->in_window;
		return PASS_STOP; /* past the window: nothing more to keep */
	}
	if (!o->in_window && ev->ns >= spec->from_ns && pos >= spec->first) {
		o->in_window = 1;
		o->failed |= (o->werr = open_sink(o)) != 0 || (o->werr = open_window(o, ev)) != 0;
	}
	if (!o->in_window)
		return PASS_GO;
	if (!o->sink)
		o->failed |= (o->werr = open_sink(o)) != 0;
	o->seen = 1;
	o->seen_n++;
	o->last_ns = ev->ns;
	int keep = selected(o, ev) || (o->context && spec_is_definition(ev));
	if (!o->failed && (o->werr = write_event(o, ev, keep)) != 0)
		o->failed = 1;
	return o->failed ? PASS_FAIL : PASS_SKIP;
}

/* Before the window, once the model took ev: the context learns it; a stack waits for its event. */
static int after(void *ctx, struct pass *p, struct ptt_event *ev)
{
	struct out_ctx *o = ctx;
	(void)p;
	if (o->ctx)
		fcontext_event(o->ctx, ev);
	o->failed |= hold_stack(o, ev) != 0; /* the stack of an event the window begins with */
	return o->failed ? PASS_FAIL : PASS_GO;
}

/*
 * A window with no event of the trace before it or none after it, and none
 * in it: one line that says where the trace is; 1 if so (nothing written).
 * An empty stretch between two events is no error: it is written as such.
 */
static int window_outside(struct out_ctx *o, struct pass *p)
{
	const struct filter_spec *spec = o->spec;
	if (o->seen || o->empty || !(spec->has_window || spec->to_ns != UINT64_MAX))
		return 0;
	/* without context, the blocks that end before --from were passed over unread (ptt_reader_skip):
	 * events before the window may be there unseen, so a window before the first event read is no error */
	int skipped = !o->context && spec->from_ns;
	int before = (o->any && o->first_ns < spec->from_ns) || (skipped && o->any), after = o->past_to;
	if (before && after && !spec->first)
		return 0;
	char to[48] = "the end";
	if (spec->to_ns != UINT64_MAX)
		snprintf(to, sizeof to, "%.6f s", spec->to_ns / 1e9);
	fprintf(stderr, "ptt-filter: the window selects no event: ");
	if (spec->first && o->any && !after)
		fprintf(stderr, "--first=%llu is past the trace's last event\n", (unsigned long long)spec->first);
	else if (!before && o->any)
		fprintf(stderr, "[%.6f s, %s] ends before the trace's first event, at %.6f s\n", spec->from_ns / 1e9, to,
			o->first_ns / 1e9);
	else if (o->any)
		fprintf(stderr, "[%.6f s, %s] begins after the trace's last event, at %.6f s\n", spec->from_ns / 1e9, to,
			p->last_ns / 1e9);
	else
		fprintf(stderr, "[%.6f s, %s] %s\n", spec->from_ns / 1e9, to,
			spec->from_ns ? "begins after the trace's last event" : "is outside the trace, which has no event");
	return 1;
}

/* Where the window ends, the sink closed; selections that named nothing; a window outside the trace. */
static int report(void *ctx, struct pass *p)
{
	struct out_ctx *o = ctx;
	struct filter_spec *spec = o->spec;
	int outside = !o->failed && window_outside(o, p);
	if (!o->sink && !o->failed && !outside && !o->empty) /* nothing selected: the trace's header and end, as it had them */
		o->failed |= (o->werr = open_sink(o)) != 0;
	if (o->sink && o->seen && (spec->has_window || spec->to_ns != UINT64_MAX)) {
		char line[64]; /* where the window ends: its --to when the trace goes on after it */
		snprintf(line, sizeof line, "window_to_ns %llu\n", (unsigned long long)(o->past_to ? spec->to_ns : o->last_ns));
		o->failed |= ptt_sink_end_meta(o->sink, line) != 0;
	}
	if (o->sink) {
		int crc = ptt_sink_close(o->sink, p->in.r); /* frees it, even after a write error */
		if (!o->werr)
			o->werr = crc;
	}
	if (o->werr) { /* the binary writer bypasses stdio: say it here, stdout's checks cannot see it */
		o->failed = 1;
		if (o->werr != -EPIPE && ptt_reader_form(p->in.r) == PTT_FORM_BINARY)
			fprintf(stderr, "ptt-filter: write error: %s\n", ptt_strerror(o->werr));
	}
	/* stopped before the end, a user type registered later is unknown yet: no verdict */
	int verdict = !o->stopped_early && !o->empty;
	int unknown = verdict && spec_warn_unknown_events(spec, ptt_reader_types(p->in.r), "ptt-filter");
	unknown |= verdict && !o->names_checked && spec_warn_unseen(spec, "ptt-filter", o->names, o->syms);
	return o->failed || unknown || o->empty || outside ? PASS_FAIL : PASS_GO;
}

static void out_free(struct out_ctx *o)
{
	fcontext_free(o->ctx);
	ptt_map_free_with(&o->pending, free);
	ptt_map_free_with(&o->stacks, free);
}

int main(int argc, char **argv)
{
	struct filter_spec spec;
	struct out_ctx o = { .spec = &spec };
	spec_init(&spec);
	int rc = parse_args(argc, argv, &spec, &o.no_context, &o.force, &o.site);
	if (rc < 0) {
		o.context = !o.no_context;
		/* names asked for are checked by a first pass before anything is written: a name the
		 * trace lacks leaves the output empty, and the next tool of a pipe fails on it */
		o.names_checked = spec_has_names(&spec);
		struct pass p;
		o.pass = &p;
		/* the model: what is in force when the window opens (with context) */
		const struct pass_tool tool = { .prog = "ptt-filter", .ctx = &o, .start = start, .event = event,
						.after = after, .report = report,
						.first_event = o.names_checked ? first_event : NULL,
						.need = PASS_SYMS | PASS_BUFFERED | (o.context ? PASS_MODEL : 0) |
							(o.names_checked ? PASS_NAMES_FIRST : 0) };
		rc = pass_run(&p, &tool, argc - optind, argv + optind);
	}
	out_free(&o);
	spec_free(&spec);
	return rc;
}

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

#include "cli.h"
#include "filter_context.h"
#include "filter_spec.h"
#include "symbols.h"

static void usage(void)
{
	printf("Usage: ptt-filter [OPTION]... [FILE|-]...\n"
	       "Select events of a ptt trace (binary or text, from FILE or stdin) and write them\n"
	       "to stdout in the same form.  Options combine with AND; comma lists with OR.\n"
	       "Several FILEs are read in order as one trace (the files of ptt-record -m).\n"
	       "\n"
	       "  -p, --pid=LIST        events of these processes\n"
	       "  -t, --thread=LIST     events of these threads (tid or thread name)\n"
	       "  -m, --mutex=LIST      events about these objects (0x address or name)\n"
	       "  -o, --object=LIST     the same as --mutex, for any kind of object\n"
	       "  -s, --site=PATTERN    events called from a site matching the glob PATTERN: the symbolised\n"
	       "                        site (\"queue_push+0x1a (prog) at queue.c:42\"), its function\n"
	       "                        or its file:line (e.g. 'queue_push', '*queue.c:4?', 'libfoo.so+0x*')\n"
	       "  -e, --event=LIST      events whose name starts so, or of these classes\n"
	       "                        (thread, mutex, cond, rwlock, barrier, sem, spin, process, user)\n"
	       "  -f, --from=TIME       events at or after TIME since the start (units ns, us, ms, s; default s)\n"
	       "  -T, --to=TIME         events at or before TIME\n"
	       "  -F, --first=N         events from position N on (0-based over the input)\n"
	       "  -c, --count=N         at most N events from there\n"
	       "  -v, --invert          keep the events that do not match instead\n"
	       "  -n, --no-context      keep only matching events: no process and thread definitions,\n"
	       "                        no locks and waits in force at a window's start; binary\n"
	       "                        input is then read only from the blocks the window needs\n"
	       "      --force           write a binary trace to stdout even when it is a terminal\n"
	       "  -h, --help            show this help and exit\n"
	       "      --version         show the version and exit\n"
	       "\n"
	       "Exit status: 0 success, 1 damaged input (the output is still consistent),\n"
	       "2 usage error or unreadable input.\n");
}

struct out_ctx {
	struct ptt_sink *sink;
	const struct ptt_reader *r;
	const struct filter_spec *spec;
	const struct ptt_names *names;
	struct ptt_syms *syms;
	const char *site;   /* --site pattern, or NULL */
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
	return (spec_match(o->spec, ev, o->names) && site_match(o, ev)) != o->spec->invert;
}

static int emit_context(void *p, struct ptt_event *ev)
{
	struct out_ctx *o = p;
	if (!selected(o, ev))
		return 0;
	return ptt_sink_event(o->sink, o->r, ev);
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
		case 'm': case 'o': bad = spec_add_list(s, s->objects, &s->nobjects, optarg, "--object"); break;
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

int main(int argc, char **argv)
{
	struct filter_spec spec;
	int no_context = 0, force = 0;
	const char *site = NULL;
	spec_init(&spec);
	int rc = parse_args(argc, argv, &spec, &no_context, &force, &site);
	if (rc >= 0) {
		spec_free(&spec);
		return rc;
	}
	static char outbuf[1 << 18];
	setvbuf(stdout, outbuf, _IOFBF, sizeof outbuf);
	struct cli_input in;
	if (cli_open(&in, "ptt-filter", argc - optind, argv + optind)) {
		spec_free(&spec);
		return 2;
	}
	if (ptt_reader_form(in.r) == PTT_FORM_BINARY && isatty(1) && !force) {
		fprintf(stderr, "ptt-filter: refusing to write a binary trace to a terminal: redirect it, pipe it, or use --force\n");
		cli_close(&in);
		spec_free(&spec);
		return 2;
	}
	struct ptt_sink *sink = NULL;
	struct ptt_names *names = ptt_names_new();
	struct ptt_syms *syms = ptt_syms_new();
	struct fcontext *ctx = no_context ? NULL : fcontext_new();
	int failed = !names || !syms || (!no_context && !ctx) || ptt_sink_open(&sink, stdout, ptt_reader_form(in.r), 0) != 0;
	if (sink && ptt_reader_form(in.r) == PTT_FORM_TEXT)
		ptt_sink_set_note(sink, ptt_syms_note, syms);
	if (no_context)
		ptt_reader_skip(in.r, spec.from_ns, spec.first);
	uint64_t end_pos = spec.count == UINT64_MAX ? UINT64_MAX : spec.first + spec.count;
	int in_window = !spec.has_window;
	struct out_ctx oc = { sink, in.r, &spec, names, syms, site };
	static struct ptt_event ev;
	int werr = 0, stopped_early = 0;
	while (!failed && cli_next(&in, &ev) > 0) {
		ptt_names_update(names, &ev);
		ptt_syms_update(syms, &ev);
		if (ev.ns > spec.to_ns || ev.pos >= end_pos) {
			stopped_early = 1;
			break; /* past the window: nothing more to keep */
		}
		if (!in_window && ev.ns >= spec.from_ns && ev.pos >= spec.first) {
			in_window = 1;
			if (ctx)
				failed |= fcontext_replay(ctx, ev.ns, ev.ticks, ptt_reader_types(in.r), emit_context, &oc) != 0;
		}
		if (ctx && !in_window)
			fcontext_event(ctx, &ev);
		int keep = in_window && selected(&oc, &ev);
		if (!keep && !no_context && spec_is_definition(&ev))
			keep = 1;
		if (keep && (werr = ptt_sink_event(sink, in.r, &ev)) != 0)
			failed = 1;
	}
	if (sink) {
		int crc = ptt_sink_close(sink, in.r); /* frees it, even after a write error */
		if (!werr)
			werr = crc;
	}
	if (werr) { /* the binary writer bypasses stdio: say it here, stdout's checks cannot see it */
		failed = 1;
		if (werr != -EPIPE && ptt_reader_form(in.r) == PTT_FORM_BINARY)
			fprintf(stderr, "ptt-filter: write error: %s\n", ptt_strerror(werr));
	}
	/* stopped before the end, a user type registered later is unknown yet: no verdict */
	int unknown = !stopped_early && spec_warn_unknown_events(&spec, ptt_reader_types(in.r), "ptt-filter");
	fcontext_free(ctx);
	ptt_names_free(names);
	ptt_syms_free(syms);
	spec_free(&spec);
	int damaged = cli_close(&in);
	int out = cli_finish_output("ptt-filter");
	return damaged || out || failed || unknown ? 1 : 0;
}

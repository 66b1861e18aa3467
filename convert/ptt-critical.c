/*
 * ptt-critical - the critical path of a trace: what set the run's length,
 * which locks on it to fix first, and what a faster lock would buy.
 */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "lib/blame.h"
#include "lib/cli.h"
#include "lib/critical.h"
#include "lib/fidelity.h"
#include "lib/pass.h"

static void usage(void)
{
	printf("Usage: ptt-critical [OPTION]... [FILE|-]...\n"
	       "The critical path of a ptt trace (binary or text, from FILE or stdin): walked back\n"
	       "from where the last thread ends, through running time and along the exact hand-offs\n"
	       "(release -> acquisition, signal -> wake, post, barrier, join, futex wake), with the\n"
	       "locks on it ranked by their time on it, and what shortening one would buy.\n"
	       "Several FILEs are read in order as one trace (the files of ptt-record -m).\n"
	       "\n"
	       "  -w, --what-if=NAME:PCT  replay the trace with the holds of the lock NAME (or the\n"
	       "                    holds taken at the site or under the stack frame NAME) PCT\n"
	       "                    longer, e.g. queue_lock:-50%%, and print the predicted run\n"
	       "                    time (repeatable)\n"
	       "  -b, --blame       for a program that runs until stopped: each group of threads'\n"
	       "                    waits, on whose behalf (cascaded along chains, as wPerf does),\n"
	       "                    and the knots of the wait-for graph, the first named as the bound\n"
	       "  -s, --spans       each span kind's critical paths (ptt_span_begin/end, ptt(3)):\n"
	       "                    count, length p50/p99, critical time per object and site\n"
	       "  -t, --thread=TID  the path ends where thread TID ends (default: the last to end)\n"
	       "      --from=TIME   the path explains the trace from TIME on (1.5s, 200ms, 30us)\n"
	       "      --to=TIME     ... up to TIME\n"
	       "  -n, --top=N       show the first N rows of each table (default 10; 0: all)\n"
	       "  -F, --folded      write the path's time per stack as folded lines (ns), for flame\n"
	       "                    graphs (flamegraph.pl, inferno, speedscope), instead of tables\n"
	       CLI_SKIP_FRAMES_HELP
	       "  -h, --help        show this help and exit\n"
	       "      --version     show the version and exit\n"
	       "\n"
	       "Exit status: 0 success, 1 damaged input or part of the path unknown (the report\n"
	       "says how much), 2 usage error or unreadable input.\n");
}

struct crit_run {
	struct critical *c;
	struct blame *b;
	int blame, spans;
	char **specs;
	unsigned nspecs, top;
	int folded;
	uint32_t tid;
	uint64_t from, to;
	int any;           /* an event was read */
	uint64_t first_ns; /* the first one's time */
};

enum { OPT_FROM = 0x2001, OPT_TO };

static int options(struct crit_run *r, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "blame", no_argument, 0, 'b' }, { "folded", no_argument, 0, 'F' }, { "from", required_argument, 0, OPT_FROM }, { "help", no_argument, 0, 'h' },
		CLI_SKIP_FRAMES_LONGOPT, { "spans", no_argument, 0, 's' }, { "thread", required_argument, 0, 't' }, { "to", required_argument, 0, OPT_TO },
		{ "top", required_argument, 0, 'n' }, { "version", no_argument, 0, 'V' },
		{ "what-if", required_argument, 0, 'w' }, { 0, 0, 0, 0 },
	};
	int c;
	char *end;
	while ((c = getopt_long(argc, argv, "bsw:t:n:Fh", longopts, NULL)) != -1) {
		switch (c) {
		case 'w':
			r->specs = realloc(r->specs, (r->nspecs + 1) * sizeof *r->specs);
			if (!r->specs)
				return 1;
			r->specs[r->nspecs++] = optarg;
			break;
		case 't':
		case 'n': {
			long v = strtol(optarg, &end, 10);
			if (*end || !*optarg || v < 0 || v > 0x7fffffffL) {
				fprintf(stderr, "ptt-critical: --%s: not a number: '%s'\n", c == 't' ? "thread" : "top", optarg);
				return cli_usage_error("ptt-critical");
			}
			*(c == 't' ? &r->tid : &r->top) = (unsigned)v;
			break;
		}
		case OPT_FROM:
		case OPT_TO:
			if (cli_window_arg("ptt-critical", c == OPT_FROM, optarg, &r->from, &r->to))
				return 2;
			break;
		case CLI_OPT_SKIP_FRAMES:
			if (cli_skip_frames("ptt-critical", optarg))
				return 2;
			break;
		case 'F': r->folded = 1; break;
		case 'b': r->blame = 1; break;
		case 's': r->spans = 1; break;
		case 'h': usage(); return -1;
		case 'V': cli_print_version("ptt-critical"); return -1;
		default: return cli_usage_error("ptt-critical");
		}
	}
	if (cli_window_check("ptt-critical", r->from, r->to))
		return 2;
	if ((r->blame || r->spans) && (r->nspecs || r->folded || r->tid || (r->blame && r->spans))) {
		fprintf(stderr, "ptt-critical: --%s is a view of its own: not with --what-if, --folded, --thread or --%s\n",
			r->blame ? "blame" : "spans", r->blame ? "spans" : "blame");
		return cli_usage_error("ptt-critical");
	}
	if (r->nspecs && (r->from || r->to)) {
		fprintf(stderr, "ptt-critical: --what-if predicts the whole run: not with --from or --to\n");
		return cli_usage_error("ptt-critical");
	}
	return 0;
}

static int start(void *ctx, struct pass *p)
{
	struct crit_run *r = ctx;
	char err[256];
	if (!(r->c = critical_new(p->syms, p->model)))
		return PASS_FAIL;
	for (unsigned i = 0; i < r->nspecs; i++)
		if (critical_what_if(r->c, r->specs[i], err, sizeof err)) {
			fprintf(stderr, "ptt-critical: --what-if: %s\n", err);
			return PASS_QUIT;
		}
	if (getenv("PTT_DEBUG") || r->spans)
		critical_keep_stretches(r->c); /* listed at the end; a span's path is walked back stretch by stretch */
	if (r->blame && !(r->b = blame_new(p->syms, r->c)))
		return PASS_FAIL;
	if (r->b)
		blame_set_window(r->b, r->from, r->to);
	if (r->spans)
		critical_spans(r->c);
	critical_set_thread(r->c, r->tid);
	critical_set_window(r->c, r->from, r->to);
	if ((p->tool->need & PASS_WRAPPERS_ASREAD) && !critical_late_sites(r->c)) {
		fprintf(stderr, "ptt-critical: internal error: sites asked before the lock layer is learnt\n");
		return PASS_FAIL;
	}
	return PASS_GO;
}

static int event(void *ctx, struct pass *p, struct ptt_event *ev)
{
	struct crit_run *r = ctx;
	(void)p;
	if (!r->any) {
		r->any = 1;
		r->first_ns = ev->ns;
	}
	return critical_event(r->c, ev) ? PASS_STOP : PASS_GO;
}

static int after(void *ctx, struct pass *p, struct ptt_event *ev)
{
	(void)p;
	critical_after(((struct crit_run *)ctx)->c, ev);
	return PASS_GO;
}

static int end(void *ctx, struct pass *p)
{
	struct crit_run *r = ctx;
	critical_finish(r->c, p->end_ns);
	if (r->b)
		blame_finish(r->b);
	return PASS_GO;
}

static int debug_stretch(void *ctx, const struct critical_stretch *s)
{
	(void)ctx;
	fprintf(stderr, "stretch tid %u [%.3f, %.3f] run %.3f wait %.3f from %u\n", s->tid, s->from / 1e6, s->to / 1e6,
		s->running / 1e6, s->waiting / 1e6, s->from_tid);
	return 0;
}

static int report(void *ctx, struct pass *p)
{
	if (getenv("PTT_DEBUG"))
		critical_foreach_stretch(((struct crit_run *)ctx)->c, debug_stretch, NULL);
	struct crit_run *r = ctx;
	const struct critical_sum *s = critical_summary(r->c);
	if (r->from && (!s->length || s->to_ns <= r->from)) {
		fprintf(stderr, "ptt-critical: the window starts after the trace ends (%.3f ms)\n", (double)p->last_ns / 1e6);
		return PASS_FAIL;
	}
	if (r->to && r->any && r->to < r->first_ns) {
		fprintf(stderr, "ptt-critical: the window ends before the trace's first event (%.3f ms)\n", (double)r->first_ns / 1e6);
		return PASS_FAIL;
	}
	const char *cost = ptt_reader_meta(p->in.r, "trace_path_ps");
	if (cost)
		critical_set_trace_cost(r->c, strtod(cost, NULL));
	if (r->b || r->spans) {
		int lost = loss_print(p->in.loss, stdout);
		if (lost)
			printf("\n");
		if (r->b)
			blame_print(r->b, r->top, stdout);
		else
			critical_print_spans(r->c, r->top, stdout);
		cli_say_limits(&p->in, stdout, "limit: ");
		return lost ? PASS_FAIL : PASS_GO;
	}
	if (r->folded) {
		critical_print_folded(r->c, stdout);
	} else {
		if (loss_print(p->in.loss, stdout))
			printf("\n");
		critical_print(r->c, r->top, stdout);
		cli_say_limits(&p->in, stdout, "limit: ");
	}
	if (r->tid && !s->length) {
		fprintf(stderr, "ptt-critical: no thread %u in the trace\n", r->tid);
		return PASS_FAIL;
	}
	return s->unknown || !s->checked ? PASS_FAIL : PASS_GO;
}

int main(int argc, char **argv)
{
	struct crit_run r = { .top = 10 };
	int rc = options(&r, argc, argv);
	if (rc) {
		free(r.specs);
		return rc < 0 ? 0 : rc;
	}
	/* the path and its report name sites only at the end: one read, the lock layer learnt meanwhile; what-if,
	 * --blame and --spans name them as the events come, once a first pass has learnt the layer, and a window
	 * that ends before the trace stops reading there: the layer is learnt from the whole trace all the same */
	const int first = r.nspecs || r.blame || r.spans || r.to;
	const struct pass_tool tool = { .prog = "ptt-critical", .ctx = &r, .start = start, .event = event, .after = after,
					.end = end, .report = report,
					.need = PASS_SHARED | PASS_SYMS | (first ? PASS_NAMES_FIRST : PASS_WRAPPERS_ASREAD) |
						PASS_MODEL | PASS_FINISH | PASS_ORDERED | PASS_LOSS };
	struct pass p;
	rc = pass_run(&p, &tool, argc - optind, argv + optind);
	blame_free(r.b);
	critical_free(r.c);
	free(r.specs);
	return rc;
}

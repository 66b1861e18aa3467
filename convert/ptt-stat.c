/*
 * ptt-stat - contention per object and per thread, mutrace-style: how often
 * each lock was taken, how often a thread had to wait, for how long, how
 * long it was held, and where each thread's time went.
 */
#include <getopt.h>
#include <errno.h>
#include <limits.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/cli.h"
#include "lib/host.h"
#include <sys/stat.h>

#include "lib/critical.h"
#include "lib/pass.h"
#include "lib/pprof.h"
#include "lib/stat_table.h"

static void usage(void)
{
	printf("Usage: ptt-stat [OPTION]... [FILE|-]...\n"
	       "Contention statistics of a ptt trace (binary or text, from FILE or stdin).\n"
	       "Several FILEs are read in order as one trace (the files of ptt-record -m).\n"
	       "\n"
	       "  -s, --sort=KEY    order objects by wait (default), hold, count, contended or critical\n"
	       "                    (time on the critical path: the CRIT column, ptt-critical(1))\n"
	       "  -n, --top=N       show the first N objects and threads (default 20; 0: all)\n"
	       "  -S, --sites=N     show each object's top N call sites (default 3; 0: none)\n"
	       "  -b, --brief       only the contended locks, a line each, and the object with the most\n"
	       "                    time on the critical path (ptt-record's closing summary)\n"
	       "  -c, --csv         write CSV tables instead of aligned text\n"
	       "  -F, --folded=WHAT folded stacks of wait, hold or locks (wait for locks alone) time (ns),\n"
	       "                    a line per stack and object, for flame graphs (flamegraph.pl, inferno,\n"
	       "                    speedscope), instead of tables\n"
	       "  -p, --pprof=WHAT  pprof's profile (gzip-compressed profile.proto) of wait, hold or locks\n"
	       "                    time, for go tool pprof, Pyroscope or Grafana, instead of tables\n"
	       "      --from=TIME   count the trace from TIME on (1.5s, 200ms, 30us): a wait, hold or\n"
	       "                    thread for its part inside, as ptt-critical --from does\n"
	       "      --to=TIME     ... up to TIME\n"
	       CLI_SKIP_FRAMES_HELP
	       "  -h, --help        show this help and exit\n"
	       "      --version     show the version and exit\n"
	       "\n"
	       "Where events were lost (discard mode, damage, a cut or mid-run start), a 'loss:'\n"
	       "paragraph says how many, of which threads, when; objects marked * were in use then.\n"
	       "\n"
	       "Exit status: 0 success, 1 damaged input (statistics of the intact part are printed)\n"
	       "or a window outside the trace, 2 usage error or unreadable input, 7 not measured: the\n"
	       "program's locks are out of ptt's sight (a JVM's monitors, Go's runtime, no traced\n"
	       "process).\n");
}

/* --brief (ptt-record's closing summary) finds the critical path only in inputs up to this size: the
 * path more than doubles the summary's time (a 111 MB trace: 1.6 s without it, 3.5 s with it). */
#define BRIEF_CRITICAL_MAX (16ull << 20)

/* What the options ask for. */
struct stat_run {
	struct stat_opts o;
	int brief, folded;          /* folded: -1 none, 0 wait, 1 hold */
	int pprof;                  /* the same for --pprof */
	struct pprof *pp;
	struct stat_table *st;
	struct critical *c;         /* the critical path, beside the tables (not for --folded) */
	char cmd[512];              /* "ptt-critical FILE...": how to see that path */
	int big;                    /* --brief of inputs over BRIEF_CRITICAL_MAX bytes: no path computed */
	int blind;                  /* the program's locks are out of sight: exit status 7 */
	uint64_t from, to;          /* --from/--to (0: no bound) */
	int any, past_to;           /* an event was read; one past --to (none read after it) */
	uint64_t first_ns;          /* the first one's time */
};

enum { OPT_FROM = 0x2001, OPT_TO };

/* Options into s: 0 to go on, else the exit status (help, version: -1 for 0). */
static int options(struct stat_run *s, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "sort", required_argument, 0, 's' }, { "top", required_argument, 0, 'n' },
		{ "brief", no_argument, 0, 'b' }, { "csv", no_argument, 0, 'c' }, { "help", no_argument, 0, 'h' },
		{ "sites", required_argument, 0, 'S' }, CLI_SKIP_FRAMES_LONGOPT,
		{ "folded", required_argument, 0, 'F' }, { "pprof", required_argument, 0, 'p' },
		{ "from", required_argument, 0, OPT_FROM }, { "to", required_argument, 0, OPT_TO },
		{ "version", no_argument, 0, 'V' }, { 0, 0, 0, 0 },
	};
	int c;
	while ((c = getopt_long(argc, argv, "s:n:S:F:p:bch", longopts, NULL)) != -1) {
		switch (c) {
		case 's':
			if (!strcmp(optarg, "wait")) s->o.sort = STAT_SORT_WAIT;
			else if (!strcmp(optarg, "hold")) s->o.sort = STAT_SORT_HOLD;
			else if (!strcmp(optarg, "count")) s->o.sort = STAT_SORT_COUNT;
			else if (!strcmp(optarg, "contended")) s->o.sort = STAT_SORT_CONTENDED;
			else if (!strcmp(optarg, "critical")) s->o.sort = STAT_SORT_CRITICAL;
			else {
				fprintf(stderr, "ptt-stat: --sort: one of wait, hold, count, contended, critical: '%s'\n", optarg);
				return cli_usage_error("ptt-stat");
			}
			break;
		case 'n':
		case 'S': {
			char *end;
			long v = strtol(optarg, &end, 10);
			if (*end || !*optarg || v < 0 || v > 100000) {
				fprintf(stderr, "ptt-stat: --%s: not a count: '%s'\n", c == 'n' ? "top" : "sites", optarg);
				return cli_usage_error("ptt-stat");
			}
			*(c == 'n' ? &s->o.top : &s->o.sites) = (unsigned)v;
			break;
		}
		case CLI_OPT_SKIP_FRAMES:
			if (cli_skip_frames("ptt-stat", optarg))
				return 2;
			break;
		case OPT_FROM:
		case OPT_TO:
			if (cli_window_arg("ptt-stat", c == OPT_FROM, optarg, &s->from, &s->to))
				return 2;
			break;
		case 'F':
		case 'p': {
			int *what = c == 'F' ? &s->folded : &s->pprof;
			if (!strcmp(optarg, "wait")) *what = STAT_FOLD_WAIT;
			else if (!strcmp(optarg, "hold")) *what = STAT_FOLD_HOLD;
			else if (!strcmp(optarg, "locks")) *what = STAT_FOLD_LOCKS;
			else {
				fprintf(stderr, "ptt-stat: --%s: wait, hold or locks: '%s'\n", c == 'F' ? "folded" : "pprof", optarg);
				return cli_usage_error("ptt-stat");
			}
			break;
		}
		case 'b': s->brief = 1; break;
		case 'c': s->o.csv = 1; break;
		case 'h': usage(); return -1;
		case 'V': cli_print_version("ptt-stat"); return -1;
		default: return cli_usage_error("ptt-stat");
		}
	}
	if (cli_window_check("ptt-stat", s->from, s->to))
		return 2;
	if (s->pprof >= 0 && s->folded >= 0) {
		fprintf(stderr, "ptt-stat: --folded and --pprof: one or the other\n");
		return cli_usage_error("ptt-stat");
	}
	if (s->pprof >= 0 && isatty(STDOUT_FILENO)) { /* compressed bytes: for a file or a pipe */
		fprintf(stderr, "ptt-stat: --pprof: standard output is a terminal; redirect it to a file\n");
		return cli_usage_error("ptt-stat");
	}
	return 0;
}

static int start(void *ctx, struct pass *p)
{
	struct stat_run *s = ctx;
	if (!(s->st = stat_new(p->syms, p->model)))
		return PASS_FAIL;
	stat_set_window(s->st, s->from, s->to);
	stat_set_folding(s->st, s->folded >= 0);
	if (s->pprof >= 0)
		return (s->pp = pprof_new(p->syms, p->model, s->st, s->pprof)) ? PASS_GO : PASS_FAIL;
	const int late = (p->tool->need & PASS_WRAPPERS_ASREAD) != 0;
	if (late && !stat_late_sites(s->st)) {
		fprintf(stderr, "ptt-stat: internal error: sites asked before the lock layer is learnt\n");
		return PASS_FAIL;
	}
	stat_set_loss(s->st, p->in.loss); /* asked when printing, the input read */
	if (s->folded < 0 && s->big) /* --brief of a large input (ptt-record's summary): the path would more
					 than double its time; the summary says so and how to get it */
		stat_set_critical(s->st, NULL, s->cmd);
	else if (s->folded < 0) { /* a second observer of the model (after stat_new's model_observe) */
		if (!(s->c = critical_new(p->syms, p->model)))
			return PASS_FAIL;
		critical_set_window(s->c, s->from, s->to);
		if (late && !critical_late_sites(s->c)) {
			fprintf(stderr, "ptt-stat: internal error: the path's sites asked before the lock layer is learnt\n");
			return PASS_FAIL;
		}
		stat_set_critical(s->st, s->c, s->cmd);
	}
	return PASS_GO;
}

static int event(void *ctx, struct pass *p, struct ptt_event *ev)
{
	struct stat_run *s = ctx;
	(void)p;
	if (!s->any) {
		s->any = 1;
		s->first_ns = ev->ns;
	}
	if (s->to && ev->ns > s->to) { /* past the window: the rest is not read */
		s->past_to = 1;
		return PASS_STOP;
	}
	stat_event(s->st, ev);
	if (s->c)
		critical_event(s->c, ev); /* the window's end stops the reading first */
	return PASS_GO;
}

static int after(void *ctx, struct pass *p, struct ptt_event *ev)
{
	struct stat_run *s = ctx;
	(void)p;
	if (s->c)
		critical_after(s->c, ev);
	return PASS_GO;
}

/* The waits still open at the end, before the model closes them. */
static int end(void *ctx, struct pass *p)
{
	uint64_t from = 0, to = 0;
	struct stat_run *s = ctx;
	cli_window(p->in.r, &from, &to);
	if (s->from > from)
		from = s->from;
	if (s->past_to) /* the trace goes on past --to: the window's end is its end, where the model closes */
		p->end_ns = to = s->to;
	stat_finish(s->st, from, to);
	if (s->c)
		critical_finish(s->c, p->end_ns);
	return PASS_GO;
}

/* "ptt-critical FILE...": the inputs as given (FILE for stdin), cut short with "..." when long. */
static void critical_cmd(char *buf, size_t size, int n, char **paths)
{
	size_t len = (size_t)snprintf(buf, size, "ptt-critical");
	for (int i = 0; i < (n ? n : 1) && len < size; i++) {
		const char *path = !n || !strcmp(paths[i], "-") ? "FILE" : paths[i];
		if (len + strlen(path) + 5 >= size) {
			snprintf(buf + len, size - len, " ...");
			break;
		}
		len += (size_t)snprintf(buf + len, size - len, " %s", path);
	}
}

/* What ptt-record took of the processors beside the program (its END lines): a program short of
 * processors waits longer for its locks than untraced, and the tables cannot tell that part apart. */
static void say_recorder(struct pass *p)
{
	const char *cpu = ptt_reader_meta(p->in.r, "recorder_cpu_ns"), *cpus = ptt_reader_meta(p->in.r, "cpus");
	double ns = cpu ? strtod(cpu, NULL) : 0, n = cpus ? strtod(cpus, NULL) : 0;
	if (ns <= 0 || n <= 0 || !p->end_ns)
		return;
	printf("recorder: ptt-record took %.1f ms of processor time beside the program (%.1f %% of %.0f processor%s over the "
	       "trace):\nwhere processors are short, the program's waits are longer than untraced by a part no table shows\n",
	       ns / 1e6, 100.0 * ns / (n * (double)p->end_ns), n, n > 1 ? "s" : "");
}

/* --pprof: the profile on stdout, stamped with the trace's start and length */
static int write_pprof(struct stat_run *s, struct pass *p)
{
	const char *real = ptt_reader_meta(p->in.r, "realtime_ns");
	char note[600];
	snprintf(note, sizeof note, "ptt-stat --pprof=%s of %s", s->pprof == STAT_FOLD_WAIT ? "wait" :
		 s->pprof == STAT_FOLD_HOLD ? "hold" : "locks", p->in.label);
	if (pprof_write(s->pp, stdout, real ? strtoll(real, NULL, 10) : 0, (int64_t)p->end_ns, note)) {
		fprintf(stderr, "ptt-stat: --pprof: %s\n", strerror(errno));
		return PASS_FAIL;
	}
	return PASS_GO;
}

static int report(void *ctx, struct pass *p)
{
	struct stat_run *s = ctx;
	const char *cost = ptt_reader_meta(p->in.r, "trace_path_ps");
	if (cost)
		stat_set_trace_cost(s->st, strtod(cost, NULL));
	const char *next = ptt_reader_saw_end(p->in.r) ? NULL : ptt_reader_meta(p->in.r, "continued");
	uint64_t from = 0, to = 0;
	char cut[PATH_MAX + 64];
	if (s->from && (!s->any || p->last_ns < s->from)) {
		fprintf(stderr, "ptt-stat: the window starts after the trace ends (%.3f ms)\n", (double)p->last_ns / 1e6);
		return PASS_FAIL;
	}
	if (s->to && s->any && s->to < s->first_ns) {
		fprintf(stderr, "ptt-stat: the window ends before the trace's first event (%.3f ms)\n", (double)s->first_ns / 1e6);
		return PASS_FAIL;
	}
	if (s->past_to) {
		stat_set_cut(s->st, "at the window's end (--to)");
	} else if (next) {
		snprintf(cut, sizeof cut, "where this part of a rotated recording ends (it continues in %s)", next);
		stat_set_cut(s->st, cut);
	} else if (cli_window(p->in.r, &from, &to) && to) {
		stat_set_cut(s->st, "at the window's end");
	}
	struct hosts hs;
	if (hosts_read(&hs, p->in.r))
		hs.n = 0;
	stat_set_hosts(s->st, &hs);
	if (s->pprof >= 0) {
		int rc = write_pprof(s, p);
		hosts_free(&hs);
		return rc;
	}
	if (s->folded >= 0)
		stat_print_folded(s->st, s->folded, stdout);
	else if (s->brief)
		stat_print_brief(s->st, &s->o, stdout);
	else
		stat_print(s->st, &s->o, stdout);
	stat_set_hosts(s->st, NULL);
	hosts_free(&hs);
	if (!s->o.csv && s->folded < 0) /* the limits the trace met, with the figures they affect (CSV, folded: on stderr) */
		cli_say_limits(&p->in, stdout, "limit: ");
	if (!s->o.csv && !s->brief && s->folded < 0)
		say_recorder(p);
	/* figures of nothing (no traced process) or of a runtime's own locks (a JVM, Go) are no measure of the
	 * program's: said last (stderr for CSV and folded stacks, whose stdout another program reads) */
	const char *blind = stat_blind_locks(s->st);
	s->blind = blind != NULL;
	if (blind && !s->o.csv && s->folded < 0)
		printf("not measured: this program's locks are out of ptt's sight (exit status 7)\n");
	else if (blind)
		fprintf(stderr, "ptt-stat: not measured: %s (exit status 7)\n", blind + strlen("note: "));
	return PASS_GO;
}

int main(int argc, char **argv)
{
	struct stat_run s = { .o = { STAT_SORT_WAIT, 20, 0, 3 }, .folded = -1, .pprof = -1 };
	int rc = options(&s, argc, argv);
	if (rc)
		return rc < 0 ? 0 : rc;
	/* waits and holds are differences of times: ordered */
	critical_cmd(s.cmd, sizeof s.cmd, argc - optind, argv + optind);
	if (s.brief) {
		unsigned long long bytes = 0;
		struct stat sb;
		for (int i = optind; i < argc; i++)
			if (!stat(argv[i], &sb) && S_ISREG(sb.st_mode))
				bytes += (unsigned long long)sb.st_size;
		s.big = bytes > BRIEF_CRITICAL_MAX;
	}
	/* the tables name sites only at the end: one read, the lock layer learnt meanwhile; --pprof's samples
	 * name theirs as the events come, once a first pass has learnt the layer, and a window that ends
	 * before the trace (--to) stops the reading there: the layer is learnt from the whole trace first */
	const int first = s.pprof >= 0 || s.to;
	const struct pass_tool tool = { .prog = "ptt-stat", .ctx = &s, .start = start, .event = event, .after = after,
					.end = end, .report = report,
					.need = PASS_SHARED | PASS_SYMS | (first ? PASS_NAMES_FIRST : PASS_WRAPPERS_ASREAD) |
						PASS_MODEL | PASS_FINISH | PASS_ORDERED | PASS_LOSS };
	struct pass p;
	rc = pass_run(&p, &tool, argc - optind, argv + optind);
	stat_free(s.st);
	critical_free(s.c);
	pprof_free(s.pp);
	return rc == 0 && s.blind ? 7 : rc;
}

/*
 * ptt-stat - contention per object and per thread, mutrace-style: how often
 * each lock was taken, how often a thread had to wait, for how long, how
 * long it was held, and where each thread's time went.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "fidelity.h"
#include "model.h"
#include "stat_table.h"

static void usage(void)
{
	printf("Usage: ptt-stat [OPTION]... [FILE|-]...\n"
	       "Contention statistics of a ptt trace (binary or text, from FILE or stdin).\n"
	       "Several FILEs are read in order as one trace (the files of ptt-record -m).\n"
	       "\n"
	       "  -s, --sort=KEY    order objects by wait (default), hold, count or contended\n"
	       "  -n, --top=N       show the first N objects and threads (default 20; 0: all)\n"
	       "  -S, --sites=N     show each object's top N call sites (default 3; 0: none)\n"
	       "  -b, --brief       only the contended locks, a line each (ptt-record's closing summary)\n"
	       "  -c, --csv         write CSV tables instead of aligned text\n"
	       "  -F, --folded=WHAT folded stacks of wait, hold or locks (wait for locks alone) time (ns),\n"
	       "                    a line per stack and object, for flame graphs (flamegraph.pl, inferno,\n"
	       "                    speedscope), instead of tables\n"
	       CLI_SKIP_FRAMES_HELP
	       "  -h, --help        show this help and exit\n"
	       "      --version     show the version and exit\n"
	       "\n"
	       "Where events were lost (discard mode, damage, a cut or mid-run start), a 'loss:'\n"
	       "paragraph says how many, of which threads, when; objects marked * were in use then.\n"
	       "\n"
	       "Exit status: 0 success, 1 damaged input (statistics of the intact part are printed),\n"
	       "2 usage error or unreadable input.\n");
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "sort", required_argument, 0, 's' }, { "top", required_argument, 0, 'n' },
		{ "brief", no_argument, 0, 'b' }, { "csv", no_argument, 0, 'c' }, { "help", no_argument, 0, 'h' },
		{ "sites", required_argument, 0, 'S' }, CLI_SKIP_FRAMES_LONGOPT,
		{ "folded", required_argument, 0, 'F' },
		{ "version", no_argument, 0, 'V' }, { 0, 0, 0, 0 },
	};
	struct stat_opts o = { STAT_SORT_WAIT, 20, 0, 3 };
	int c, brief = 0, folded = -1;
	while ((c = getopt_long(argc, argv, "s:n:S:F:bch", longopts, NULL)) != -1) {
		switch (c) {
		case 's':
			if (!strcmp(optarg, "wait")) o.sort = STAT_SORT_WAIT;
			else if (!strcmp(optarg, "hold")) o.sort = STAT_SORT_HOLD;
			else if (!strcmp(optarg, "count")) o.sort = STAT_SORT_COUNT;
			else if (!strcmp(optarg, "contended")) o.sort = STAT_SORT_CONTENDED;
			else {
				fprintf(stderr, "ptt-stat: --sort: one of wait, hold, count, contended: '%s'\n", optarg);
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
			*(c == 'n' ? &o.top : &o.sites) = (unsigned)v;
			break;
		}
		case CLI_OPT_SKIP_FRAMES:
			if (cli_skip_frames("ptt-stat", optarg))
				return 2;
			break;
		case 'F':
			if (!strcmp(optarg, "wait")) folded = STAT_FOLD_WAIT;
			else if (!strcmp(optarg, "hold")) folded = STAT_FOLD_HOLD;
			else if (!strcmp(optarg, "locks")) folded = STAT_FOLD_LOCKS;
			else {
				fprintf(stderr, "ptt-stat: --folded: wait, hold or locks: '%s'\n", optarg);
				return cli_usage_error("ptt-stat");
			}
			break;
		case 'b': brief = 1; break;
		case 'c': o.csv = 1; break;
		case 'h': usage(); return 0;
		case 'V': cli_print_version("ptt-stat"); return 0;
		default: return cli_usage_error("ptt-stat");
		}
	}
	struct cli_input in;
	if (cli_open(&in, "ptt-stat", argc - optind, argv + optind))
		return 2;
	in.ordered = 1; /* waits and holds are differences of times */
	struct stat_table *st = stat_new();
	in.loss = loss_new();
	static struct ptt_event ev;
	if (st && folded >= 0)
		stat_set_folding(st, 1);
	while (st && cli_next(&in, &ev) > 0)
		stat_event(st, &ev);
	loss_finish(in.loss, in.r);
	if (st) {
		stat_set_loss(st, in.loss);
		uint64_t from = 0, to = 0;
		cli_window(in.r, &from, &to);
		stat_finish(st, from, to);
		if (folded >= 0)
			stat_print_folded(st, folded, stdout);
		else if (brief)
			stat_print_brief(st, &o, stdout);
		else
			stat_print(st, &o, stdout);
		if (!o.csv) /* the limits the trace met, with the figures they affect (CSV: on stderr) */
			cli_say_limits(&in, stdout, "limit: ");
		stat_free(st);
	}
	loss_free(in.loss);
	int damaged = cli_close(&in);
	int out = cli_finish_output("ptt-stat");
	return damaged || out || !st ? 1 : 0;
}

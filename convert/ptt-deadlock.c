/*
 * ptt-deadlock - lock-order cycles (potential deadlocks) over a whole
 * trace, and wait-for cycles among the threads still blocked at its end
 * (actual deadlocks).
 */
#include <getopt.h>
#include <stdio.h>

#include "cli.h"
#include "fidelity.h"
#include "lockgraph.h"

static void usage(void)
{
	printf("Usage: ptt-deadlock [OPTION]... [FILE|-]...\n"
	       "Find lock-order inversions (potential deadlocks) and threads deadlocked at the end\n"
	       "of a ptt trace (binary or text, from FILE or stdin).\n"
	       "Several FILEs are read in order as one trace (the files of ptt-record -m).\n"
	       "\n"
	       "  -q, --quiet       print nothing; the exit status tells\n"
	       CLI_SKIP_FRAMES_HELP
	       "  -h, --help        show this help and exit\n"
	       "      --version     show the version and exit\n"
	       "\n"
	       "Where events were lost (discard mode, a damaged or cut trace, a flight recording's\n"
	       "overwritten start), a cycle that a lost stretch could explain is no finding: it is\n"
	       "printed as unverifiable, with the stretch, after a 'loss:' paragraph.\n"
	       "\n"
	       "Exit status: 0 nothing found, 1 potential deadlocks found, 3 an actual deadlock\n"
	       "found (potential ones too, maybe), 2 usage error or unreadable input, 4 nothing\n"
	       "found but the input was damaged, 5 nothing found but unverifiable cycles (events\n"
	       "were lost where they lie).\n");
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "quiet", no_argument, 0, 'q' }, { "help", no_argument, 0, 'h' }, CLI_SKIP_FRAMES_LONGOPT,
		{ "version", no_argument, 0, 'V' }, { 0, 0, 0, 0 },
	};
	int c, quiet = 0;
	while ((c = getopt_long(argc, argv, "qh", longopts, NULL)) != -1) {
		switch (c) {
		case 'q': quiet = 1; break;
		case CLI_OPT_SKIP_FRAMES:
			if (cli_skip_frames("ptt-deadlock", optarg))
				return 2;
			break;
		case 'h': usage(); return 0;
		case 'V': cli_print_version("ptt-deadlock"); return 0;
		default: return cli_usage_error("ptt-deadlock");
		}
	}
	struct cli_input in;
	if (cli_open(&in, "ptt-deadlock", argc - optind, argv + optind))
		return 2;
	in.loss = loss_new();
	struct lockgraph *g = lockgraph_new(in.loss);
	static struct ptt_event ev;
	while (g && cli_next(&in, &ev) > 0)
		lockgraph_event(g, &ev);
	loss_finish(in.loss, in.r);
	if (!quiet && loss_print(in.loss, stdout))
		printf("\n");
	int weak_cycles = 0, weak_deadlocks = 0;
	int potential = g ? lockgraph_report_cycles(g, quiet ? NULL : stdout, &weak_cycles) : 0;
	int actual = g ? lockgraph_report_blocked(g, quiet ? NULL : stdout, &weak_deadlocks) : 0;
	int futex = g ? lockgraph_report_futex(g, quiet ? NULL : stdout) : 0;
	const char *note = g ? lockgraph_blind_note(g) : NULL;
	if (!quiet && !potential && !actual && !weak_cycles && !weak_deadlocks)
		printf(futex ? "no lock-order inversion and no deadlock found among the waits ptt can follow\n"
			     : "no lock-order inversion and no deadlock found\n");
	else if (!quiet && !potential && !actual)
		printf("no verified lock-order inversion and no verified deadlock: %d cycle%s where events were lost\n",
		       weak_cycles + weak_deadlocks, weak_cycles + weak_deadlocks > 1 ? "s lie" : " lies");
	if (!quiet && note)
		printf("%s\n", note);
	lockgraph_free(g);
	loss_free(in.loss);
	int damaged = cli_close(&in);
	int out = cli_finish_output("ptt-deadlock");
	if (!g)
		return 2;
	if (actual)
		return 3;
	if (potential)
		return 1;
	if (out)
		return 1; /* the report did not get out: as bad as a finding */
	if (weak_cycles || weak_deadlocks)
		return 5;
	return damaged ? 4 : 0;
}

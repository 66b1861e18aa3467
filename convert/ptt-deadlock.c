/*
 * ptt-deadlock - lock-order cycles (potential deadlocks) over a whole
 * trace, and wait-for cycles among the threads still blocked at its end
 * (actual deadlocks).
 */
#include <getopt.h>
#include <stdio.h>

#include "lib/cli.h"
#include "lib/fidelity.h"
#include "lib/lockgraph.h"
#include "lib/pass.h"

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
	       "were lost where they lie), 6 no cycle but threads blocked for ever waiting for\n"
	       "locks (owners unknown), 7 not checked: the program's locks are out of ptt's sight\n"
	       "(a JVM's monitors, Go's runtime, no traced process).\n");
}

struct deadlock {
	int quiet;
	struct lockgraph *g;
	int potential, actual, weak_cycles, weak_deadlocks;
	int forever, weak_forever, blind; /* blocked for ever (no cycle); locks out of sight */
};

static int start(void *ctx, struct pass *p)
{
	struct deadlock *d = ctx;
	return (d->g = lockgraph_new(p->in.loss, p->syms, p->model)) ? PASS_GO : PASS_FAIL;
}

static int event(void *ctx, struct pass *p, struct ptt_event *ev)
{
	(void)p;
	lockgraph_event(((struct deadlock *)ctx)->g, ev);
	return PASS_GO;
}

/* The cycles of the whole trace, and the threads blocked at its end (the model as it ends: not closed). */
static int report(void *ctx, struct pass *p)
{
	struct deadlock *d = ctx;
	FILE *out = d->quiet ? NULL : stdout;
	if (out && loss_print(p->in.loss, out))
		printf("\n");
	d->potential = lockgraph_report_cycles(d->g, out, &d->weak_cycles);
	d->actual = lockgraph_report_blocked(d->g, out, &d->weak_deadlocks);
	d->forever = lockgraph_report_forever(d->g, out, &d->weak_forever);
	d->blind = lockgraph_blind_locks(d->g);
	const char *note = lockgraph_blind_note(d->g);
	int weak = d->weak_cycles + d->weak_deadlocks;
	if (out && !d->potential && !d->actual && d->forever)
		printf("no lock-order inversion and no deadlock ptt can prove, but %d thread%s blocked for ever waiting for "
		       "locks, owners unknown\n", d->forever, d->forever > 1 ? "s were" : " was");
	else if (out && !d->potential && !d->actual && !weak && !d->weak_forever)
		printf("no lock-order inversion and no deadlock found%s\n", d->blind ? " among the locks ptt can see" : "");
	else if (out && !d->potential && !d->actual && weak)
		printf("no verified lock-order inversion and no verified deadlock: %d cycle%s where events were lost\n",
		       weak, weak > 1 ? "s lie" : " lies");
	else if (out && !d->potential && !d->actual)
		printf("no verified lock-order inversion and no verified deadlock: %d thread%s blocked for ever where events "
		       "were lost\n", d->weak_forever, d->weak_forever > 1 ? "s were" : " was");
	if (out && note)
		printf("%s\n", note);
	if (out && d->blind && !d->potential && !d->actual)
		printf("not checked: this program's locks are out of ptt's sight (exit status 7)\n");
	return PASS_GO;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "quiet", no_argument, 0, 'q' }, { "help", no_argument, 0, 'h' }, CLI_SKIP_FRAMES_LONGOPT,
		{ "version", no_argument, 0, 'V' }, { 0, 0, 0, 0 },
	};
	struct deadlock d = { 0 };
	int c;
	while ((c = getopt_long(argc, argv, "qh", longopts, NULL)) != -1) {
		switch (c) {
		case 'q': d.quiet = 1; break;
		case CLI_OPT_SKIP_FRAMES:
			if (cli_skip_frames("ptt-deadlock", optarg))
				return 2;
			break;
		case 'h': usage(); return 0;
		case 'V': cli_print_version("ptt-deadlock"); return 0;
		default: return cli_usage_error("ptt-deadlock");
		}
	}
	const struct pass_tool tool = { .prog = "ptt-deadlock", .ctx = &d, .start = start, .event = event,
					.report = report, .need = PASS_SHARED | PASS_SYMS | PASS_NAMES_FIRST | PASS_MODEL | PASS_LOSS };
	struct pass p;
	int rc = pass_run(&p, &tool, argc - optind, argv + optind);
	lockgraph_free(d.g);
	if (rc == 2 || !d.g)
		return 2;
	if (d.actual)
		return 3;
	if (d.potential || p.write_error) /* a report that did not get out: as bad as a finding */
		return 1;
	if (d.blind)
		return 7;
	if (d.forever)
		return 6;
	if (d.weak_cycles || d.weak_deadlocks || d.weak_forever)
		return 5;
	return p.damaged ? 4 : 0;
}

/*
 * ptt-paje - convert a ptt trace to Paje for PajeNG and ViTE: containers
 * Program > Process > Thread, thread states, point events, links for thread
 * creation, mutex hand-offs, condition wake-ups, barrier and semaphore
 * releases, and the number of live threads per process.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "model.h"
#include "paje_out.h"

struct paje {
	FILE *out;
	struct ptt_names *names;
	int program_created;
	uint64_t last_ns, links;
};

static void program(struct paje *pj, uint64_t ns)
{
	if (pj->program_created)
		return;
	pj->program_created = 1;
	fprintf(pj->out, "%d ", PJ_CREATE_CONTAINER);
	paje_time(pj->out, ns);
	fputs(" C_prog CT_Program 0 \"Program\"\n", pj->out);
}

static void on_process_begin(void *ctx, struct mprocess *p, uint64_t ns)
{
	struct paje *pj = ctx;
	char name[64];
	program(pj, ns);
	snprintf(name, sizeof name, "process %" PRIu32, p->pid);
	fprintf(pj->out, "%d ", PJ_CREATE_CONTAINER);
	paje_time(pj->out, ns);
	fprintf(pj->out, " P%" PRIu32 " CT_Process C_prog ", p->serial);
	paje_name(pj->out, name);
	fprintf(pj->out, "\n%d ", PJ_SET_VARIABLE);
	paje_time(pj->out, ns);
	fprintf(pj->out, " V_Threads P%" PRIu32 " 0\n", p->serial);
}

static void on_process_end(void *ctx, struct mprocess *p, uint64_t ns)
{
	struct paje *pj = ctx;
	fprintf(pj->out, "%d ", PJ_DESTROY_CONTAINER);
	paje_time(pj->out, ns);
	fprintf(pj->out, " CT_Process P%" PRIu32 "\n", p->serial);
}

static void on_thread_begin(void *ctx, struct mthread *t, struct mprocess *p, uint64_t ns)
{
	struct paje *pj = ctx;
	char name[128];
	const char *given = ptt_names_thread(pj->names, t->tid);
	if (given)
		snprintf(name, sizeof name, "%" PRIu32 " %s", t->tid, given);
	else
		snprintf(name, sizeof name, "%" PRIu32, t->tid);
	t->user = p;
	fprintf(pj->out, "%d ", PJ_CREATE_CONTAINER);
	paje_time(pj->out, ns);
	fprintf(pj->out, " T%" PRIu32 " CT_Thread P%" PRIu32 " ", t->serial, p->serial);
	paje_name(pj->out, name);
	fprintf(pj->out, "\n%d ", PJ_ADD_VARIABLE);
	paje_time(pj->out, ns);
	fprintf(pj->out, " V_Threads P%" PRIu32 " 1\n%d ", p->serial, PJ_SET_STATE);
	paje_time(pj->out, ns);
	fprintf(pj->out, " ST_Thread T%" PRIu32 " R\n", t->serial);
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

static void on_state(void *ctx, struct mthread *t, const struct mframe *old, const struct mframe *now, uint64_t ns)
{
	struct paje *pj = ctx;
	(void)old; /* even a new interval of the same state is set again: intervals count acquisitions */
	fprintf(pj->out, "%d ", PJ_SET_STATE);
	paje_time(pj->out, ns);
	fprintf(pj->out, " ST_Thread T%" PRIu32 " %s\n", t->serial, mstate_alias[now->state]);
}

static void on_link(void *ctx, struct mthread *from, struct mthread *to, const char *kind, uint64_t obj, uint64_t ns)
{
	struct paje *pj = ctx;
	const struct mprocess *p = to->user;
	(void)obj;
	if (!p || from->pid != to->pid)
		return;
	uint64_t key = ++pj->links;
	fprintf(pj->out, "%d ", PJ_START_LINK);
	paje_time(pj->out, ns);
	fprintf(pj->out, " L_%s P%" PRIu32 " T%" PRIu32 " %s k%" PRIu64 "\n%d ", kind, p->serial, from->serial, kind, key,
		PJ_END_LINK);
	paje_time(pj->out, ns);
	fprintf(pj->out, " L_%s P%" PRIu32 " T%" PRIu32 " %s k%" PRIu64 "\n", kind, p->serial, to->serial, kind, key);
}

static void on_point(void *ctx, struct mthread *t, const struct ptt_event *ev)
{
	struct paje *pj = ctx;
	fprintf(pj->out, "%d ", PJ_NEW_EVENT);
	paje_time(pj->out, ev->ns);
	fprintf(pj->out, " E_Thread T%" PRIu32 " %s\n", t->serial, ev->type->name);
}

static void usage(void)
{
	printf("Usage: ptt-paje [OPTION]... [FILE|-]...\n"
	       "Convert a ptt trace (binary or text, from FILE or stdin) to Paje on stdout,\n"
	       "for PajeNG (pj_dump) and ViTE.\n"
	       "Several FILEs are read in order as one trace (the files of ptt-record -m).\n"
	       "\n"
	       "  -h, --help        show this help and exit\n"
	       "      --version     show the version and exit\n"
	       "\n"
	       "Exit status: 0 success, 1 damaged input (the Paje file is still complete and valid),\n"
	       "2 usage error or unreadable input.\n");
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "help", no_argument, 0, 'h' }, { "version", no_argument, 0, 'V' }, { 0, 0, 0, 0 },
	};
	int c;
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case 'h': usage(); return 0;
		case 'V': cli_print_version("ptt-paje"); return 0;
		default: return cli_usage_error("ptt-paje");
		}
	}
	static char outbuf[1 << 18];
	setvbuf(stdout, outbuf, _IOFBF, sizeof outbuf);
	struct cli_input in;
	if (cli_open(&in, "ptt-paje", argc - optind, argv + optind))
		return 2;
	in.ordered = 1; /* Paje readers reject time going back */
	struct paje pj = { stdout, ptt_names_new(), 0, 0, 0 };
	struct model_ops ops = { &pj, on_process_begin, on_process_end, on_thread_begin, on_thread_end,
				 on_state, on_link, on_point };
	struct model *m = model_new(&ops);
	static struct ptt_event ev;
	paje_header(stdout);
	while (m && pj.names && cli_next(&in, &ev) > 0) {
		ptt_names_update(pj.names, &ev);
		model_event(m, &ev);
		pj.last_ns = ev.ns;
	}
	program(&pj, pj.last_ns);
	model_finish(m, pj.last_ns);
	fprintf(stdout, "%d ", PJ_DESTROY_CONTAINER);
	paje_time(stdout, pj.last_ns);
	fputs(" CT_Program C_prog\n", stdout);
	model_free(m);
	ptt_names_free(pj.names);
	int damaged = cli_close(&in);
	int out = cli_finish_output("ptt-paje");
	return damaged || out ? 1 : 0;
}

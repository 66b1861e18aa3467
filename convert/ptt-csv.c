/*
 * ptt-csv - a trace as CSV for R, pandas and spreadsheets: one row per
 * event, or with --states one row per interval a thread spent in a state.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "model.h"

/* RFC 4180: quote when needed, double the quotes inside. */
static void field(FILE *out, const char *s)
{
	if (!strpbrk(s, ",\"\r\n")) {
		fputs(s, out);
		return;
	}
	putc('"', out);
	for (; *s; s++) {
		if (*s == '"')
			putc('"', out);
		putc(*s, out);
	}
	putc('"', out);
}

static void event_row(FILE *out, const struct ptt_event *ev, const struct ptt_names *names)
{
	const struct ptt_type *t = ev->type;
	const char *tname = ptt_names_thread(names, ev->tid);
	uint64_t obj = 0;
	int has_obj = 0;
	char args[PTT_MAX_STR * 4 + 512];
	size_t n = 0;
	args[0] = 0;
	for (unsigned a = 0; a < t->nargs && n < sizeof args; a++) {
		if (!has_obj && t->argkind[a] == PTT_ARG_PTR && t->cls != PTT_CLASS_THREAD && t->cls != PTT_CLASS_PROCESS) {
			obj = ev->arg[a];
			has_obj = 1;
		}
		int w;
		switch (t->argkind[a]) {
		case PTT_ARG_STR: w = snprintf(args + n, sizeof args - n, "%s%s=%s", a ? ";" : "", t->argname[a], ev->str); break;
		case PTT_ARG_PTR: w = snprintf(args + n, sizeof args - n, "%s%s=0x%" PRIx64, a ? ";" : "", t->argname[a], ev->arg[a]); break;
		case PTT_ARG_I32: case PTT_ARG_I64:
			w = snprintf(args + n, sizeof args - n, "%s%s=%" PRId64, a ? ";" : "", t->argname[a], (int64_t)ev->arg[a]);
			break;
		default: w = snprintf(args + n, sizeof args - n, "%s%s=%" PRIu64, a ? ";" : "", t->argname[a], ev->arg[a]);
		}
		if (w < 0)
			break;
		n += (size_t)w;
	}
	fprintf(out, "%" PRIu64 ",%" PRIu64 ".%09" PRIu64 ",%" PRIu32 ",%" PRIu32 ",", ev->ns, ev->ns / 1000000000u,
		ev->ns % 1000000000u, ev->pid, ev->tid);
	field(out, tname ? tname : "");
	fprintf(out, ",%s,%s,%s,", ptt_source_name(t->source), t->name, ptt_class_name(t->cls));
	if (has_obj)
		fprintf(out, "0x%" PRIx64, obj);
	putc(',', out);
	const char *oname = has_obj ? ptt_names_object(names, obj) : NULL;
	field(out, oname ? oname : "");
	putc(',', out);
	field(out, args);
	putc('\n', out);
}

struct states {
	FILE *out;
	const struct ptt_names *names;
	int complete;
};

static void state_row(void *ctx, struct mthread *t, const struct mframe *old, const struct mframe *now, uint64_t ns)
{
	struct states *st = ctx;
	(void)now;
	uint64_t start = old->state == MS_RUNNING ? t->running_since : old->since_ns;
	const char *tname = ptt_names_thread(st->names, t->tid);
	fprintf(st->out, "%" PRIu32 ",%" PRIu32 ",", t->pid, t->tid);
	field(st->out, tname ? tname : "");
	fprintf(st->out, ",%s,", mstate_key[old->state]);
	if (old->state != MS_RUNNING && old->state != MS_JOIN)
		fprintf(st->out, "0x%" PRIx64, old->obj);
	else if (old->state == MS_JOIN)
		fprintf(st->out, "%" PRIu64, old->obj);
	putc(',', st->out);
	const char *oname = old->state != MS_RUNNING ? ptt_names_object(st->names, old->obj) : NULL;
	field(st->out, oname ? oname : "");
	fprintf(st->out, ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%d\n", start, ns, ns - start, st->complete);
}

static void end_row(void *ctx, struct mthread *t, struct mprocess *p, uint64_t ns)
{
	(void)p;
	static const struct mframe running = { MS_RUNNING, 0, 0 };
	state_row(ctx, t, &running, &running, ns); /* the last running interval */
}

static void usage(void)
{
	printf("Usage: ptt-csv [OPTION]... [FILE|-]...\n"
	       "Write a ptt trace (binary or text, from FILE or stdin) as CSV on stdout.\n"
	       "Several FILEs are read in order as one trace (the files of ptt-record -m).\n"
	       "\n"
	       "  -s, --states      one row per interval a thread spent in a state, instead of one row per event\n"
	       "  -h, --help        show this help and exit\n"
	       "      --version     show the version and exit\n"
	       "\n"
	       "Event columns: time_ns,time_s,pid,tid,thread_name,source,event,class,object,object_name,args\n"
	       "State columns: pid,tid,thread_name,state,object,object_name,start_ns,end_ns,duration_ns,complete\n"
	       "Exit status: 0 success, 1 damaged input, 2 usage error or unreadable input.\n");
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "states", no_argument, 0, 's' }, { "help", no_argument, 0, 'h' },
		{ "version", no_argument, 0, 'V' }, { 0, 0, 0, 0 },
	};
	int c, states = 0;
	while ((c = getopt_long(argc, argv, "sh", longopts, NULL)) != -1) {
		switch (c) {
		case 's': states = 1; break;
		case 'h': usage(); return 0;
		case 'V': cli_print_version("ptt-csv"); return 0;
		default: return cli_usage_error("ptt-csv");
		}
	}
	static char outbuf[1 << 18];
	setvbuf(stdout, outbuf, _IOFBF, sizeof outbuf);
	struct cli_input in;
	if (cli_open(&in, "ptt-csv", argc - optind, argv + optind))
		return 2;
	in.ordered = states; /* intervals are differences of times; event rows stay as read */
	struct ptt_names *names = ptt_names_new();
	struct states st = { stdout, names, 1 };
	struct model_ops ops = { .ctx = &st, .thread_end = end_row, .state = state_row };
	struct model *m = states ? model_new(&ops) : NULL;
	if (states)
		puts("pid,tid,thread_name,state,object,object_name,start_ns,end_ns,duration_ns,complete");
	else
		puts("time_ns,time_s,pid,tid,thread_name,source,event,class,object,object_name,args");
	static struct ptt_event ev;
	uint64_t last = 0;
	while (names && (!states || m) && cli_next(&in, &ev) > 0) {
		ptt_names_update(names, &ev);
		if (states)
			model_event(m, &ev);
		else
			event_row(stdout, &ev, names);
		last = ev.ns;
	}
	if (m) {
		st.complete = 0; /* what is still open was cut by the end of the trace */
		model_finish(m, last);
		model_free(m);
	}
	ptt_names_free(names);
	int damaged = cli_close(&in);
	int out = cli_finish_output("ptt-csv");
	return damaged || out ? 1 : 0;
}

/*
 * ptt-csv - a trace as CSV for R, pandas and spreadsheets: one row per
 * event, or with --states one row per interval a thread spent in a state.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "lib/cli.h"
#include "lib/host.h"
#include "lib/model.h"
#include "lib/pass.h"
#include "lib/symbols.h"

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

/* the same, into a line being built; returns the end */
static char *put_field(char *p, const char *s)
{
	if (!strpbrk(s, ",\"\r\n")) {
		size_t n = strlen(s);
		memcpy(p, s, n);
		return p + n;
	}
	*p++ = '"';
	for (; *s; s++) {
		if (*s == '"')
			*p++ = '"';
		*p++ = *s;
	}
	*p++ = '"';
	return p;
}

static char *put_str(char *p, const char *s)
{
	size_t n = strlen(s);
	memcpy(p, s, n);
	return p + n;
}

/* o's name as every tool prints it (given, data symbol, module+0xoff), or "" when that is only its address */
static const char *object_name(struct ptt_syms *syms, uint32_t pid, uint64_t obj, char *buf, size_t size)
{
	ptt_syms_object_name(syms, pid, obj, buf, size);
	if (buf[0] == '0' && buf[1] == 'x')
		buf[0] = 0;
	return buf;
}

/* One row, built in a buffer (printf was most of the time): the arguments
 * as name=value;... are one field, quoted as a whole when needed. */
static void event_row(FILE *out, const struct ptt_event *ev, struct ptt_syms *syms, const struct hosts *hs)
{
	const struct ptt_type *t = ev->type;
	char tname[PTT_MAX_STR]; /* as the pictures name it: given name, start routine, command (main thread) */
	ptt_syms_thread_known_name(syms, ev->pid, ev->tid, tname, sizeof tname);
	uint64_t obj = 0;
	int has_obj = 0;
	static char args[PTT_MAX_ARGS * 48 + PTT_MAX_STR * 4 + 16]; /* names of 23 bytes, numbers of 20 */
	static char line[sizeof args * 2 + 4 * PTT_MAX_STR + 1024]; /* every field quoted, quotes doubled */
	char *q = args;
	for (unsigned a = 0; a < t->nargs; a++) {
		if (!has_obj && t->argkind[a] == PTT_ARG_PTR && t->cls != PTT_CLASS_THREAD && t->cls != PTT_CLASS_PROCESS) {
			obj = ev->arg[a];
			has_obj = 1;
		}
		if (a)
			*q++ = ';';
		q = put_str(q, t->argname[a]);
		*q++ = '=';
		switch (t->argkind[a]) {
		case PTT_ARG_STR: q = put_str(q, ev->str); break;
		case PTT_ARG_PTR: q = ptt_fmt_hex(q, ev->arg[a]); break;
		case PTT_ARG_I32: case PTT_ARG_I64: q = ptt_fmt_i64(q, (int64_t)ev->arg[a]); break;
		default: q = ptt_fmt_u64(q, ev->arg[a]);
		}
	}
	*q = 0;
	char *p = line;
	if (hs->n) { /* a merged trace: its host first, the ids as the host gave them */
		p = put_field(p, hosts_name(hs, ev->pid));
		*p++ = ',';
	}
	p = ptt_fmt_u64(p, ev->ns);
	*p++ = ',';
	p = ptt_fmt_time(p, ev->ns);
	*p++ = ',';
	p = ptt_fmt_u64(p, hs->n ? host_local(ev->pid) : ev->pid);
	*p++ = ',';
	p = ptt_fmt_u64(p, hs->n ? host_local(ev->tid) : ev->tid);
	*p++ = ',';
	p = put_field(p, tname);
	*p++ = ',';
	p = put_str(p, ptt_source_name(t->source));
	*p++ = ',';
	p = put_str(p, t->name);
	*p++ = ',';
	p = put_str(p, ptt_class_name(t->cls));
	*p++ = ',';
	if (has_obj)
		p = ptt_fmt_hex(p, obj);
	*p++ = ',';
	char oname[PTT_MAX_STR];
	p = put_field(p, has_obj ? object_name(syms, ev->pid, obj, oname, sizeof oname) : "");
	*p++ = ',';
	p = put_field(p, args);
	*p++ = ',';
	const struct ptt_sym *site = ptt_syms_site(syms, ev);
	p = put_field(p, site ? site->where : "");
	*p++ = ',';
	p = put_field(p, site && site->line ? site->line : "");
	*p++ = '\n';
	fwrite(line, 1, (size_t)(p - line), out);
}

struct states {
	FILE *out;
	struct ptt_syms *syms;
	int complete;
	int header_done;
	struct hosts hosts; /* a merged trace's (ptt-merge): a host column first */
};

/* "HOST," before a row's pid in a merged trace, and the ids as their host gave them */
static void row_ids(struct states *st, uint32_t pid, uint32_t tid)
{
	if (st->hosts.n) {
		field(st->out, hosts_name(&st->hosts, pid));
		putc(',', st->out);
	}
	fprintf(st->out, "%" PRIu32 ",%" PRIu32 ",", st->hosts.n ? host_local(pid) : pid, st->hosts.n ? host_local(tid) : tid);
}

static void state_row(void *ctx, struct mthread *t, const struct mframe *old, const struct mframe *now, uint64_t ns)
{
	struct states *st = ctx;
	(void)now;
	uint64_t start = old->state == MS_RUNNING ? t->running_since : old->since_ns;
	char tname[PTT_MAX_STR];
	ptt_syms_thread_known_name(st->syms, t->pid, t->tid, tname, sizeof tname);
	row_ids(st, t->pid, t->tid);
	field(st->out, tname);
	fprintf(st->out, ",%s,", mstate_key[old->state]);
	if (old->state != MS_RUNNING && old->state != MS_JOIN && old->obj)
		fprintf(st->out, "0x%" PRIx64, old->obj);
	else if (old->state == MS_JOIN)
		fprintf(st->out, "%" PRIu64, old->obj);
	putc(',', st->out);
	char oname[PTT_MAX_STR] = "";
	if (old->state == MS_JOIN) /* the joined thread, as named in its own rows */
		ptt_syms_thread_known_name(st->syms, t->pid, (uint32_t)old->obj, oname, sizeof oname);
	else if (old->state != MS_RUNNING && old->obj)
		object_name(st->syms, t->pid, old->obj, oname, sizeof oname);
	field(st->out, oname);
	fprintf(st->out, ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%d\n", start, ns, ns - start, st->complete);
}

static void end_row(void *ctx, struct mthread *t, struct mprocess *p, uint64_t ns)
{
	(void)p;
	static const struct mframe running = { .state = MS_RUNNING };
	state_row(ctx, t, &running, &running, ns); /* the last running interval */
}

/*
 * With --states, events the recorder lost (rec_lost with its times): a row
 * of state "lost" for the thread they were lost of, over the stretch (times
 * as the clock shows them: shift is how much it moved this event back).
 */
static void lost_row(struct states *st, const struct model *m, const struct ptt_event *ev, uint64_t shift)
{
	uint32_t tid = (uint32_t)ptt_event_argn(ev, PTT_ARGNAME_STREAM, 0);
	uint64_t from = ptt_event_argn(ev, PTT_ARGNAME_FROM_NS, 0), to = ptt_event_argn(ev, PTT_ARGNAME_TO_NS, 0);
	if (!tid || !to || to < from)
		return;
	from = from > shift ? from - shift : 0;
	to = to > shift ? to - shift : 0;
	const struct mthread *t = model_thread_of_tid(m, ev->pid, tid); /* ev->pid: the recorder's */
	uint32_t pid = t ? t->pid : ev->pid;
	char tname[PTT_MAX_STR];
	ptt_syms_thread_known_name(st->syms, pid, tid, tname, sizeof tname);
	row_ids(st, pid, tid);
	field(st->out, tname);
	fprintf(st->out, ",lost,,,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",1\n", from, to, to - from);
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
	       "A trace of several hosts (ptt-merge) has a first column host, and each host's own pids and tids.\n"
	       "Event columns: time_ns,time_s,pid,tid,thread_name,source,event,class,object,object_name,args,site,site_line\n"
	       "  (site: the call site as function+offset (module), or module+offset; site_line: file:line)\n"
	       "State columns: pid,tid,thread_name,state,object,object_name,start_ns,end_ns,duration_ns,complete\n"
	       "Exit status: 0 success, 1 damaged input, 2 usage error or unreadable input.\n");
}

static int start(void *ctx, struct pass *p)
{
	struct states *st = ctx;
	st->syms = p->syms;
	return PASS_GO;
}

/* The columns, once the trace's header is read (its first event, or its end): a merged trace's start with host. */
static void header(struct states *st, struct pass *p)
{
	if (st->header_done++)
		return;
	if (hosts_read(&st->hosts, p->in.r))
		st->hosts.n = 0;
	if (st->hosts.n)
		fputs("host,", stdout);
	if (p->model)
		puts("pid,tid,thread_name,state,object,object_name,start_ns,end_ns,duration_ns,complete");
	else
		puts("time_ns,time_s,pid,tid,thread_name,source,event,class,object,object_name,args,site,site_line");
}

/* A row per event, or with --states a lost stretch's row before the model takes the rest */
static int event(void *ctx, struct pass *p, struct ptt_event *ev)
{
	struct states *st = ctx;
	header(st, p);
	if (!p->model)
		event_row(stdout, ev, p->syms, &st->hosts);
	else if (ev->id == PTT_EV_REC_LOST)
		lost_row(ctx, p->model, ev, p->shift);
	return PASS_GO;
}

/* What is still open is cut by the end of the trace (a window's states end at its end). */
static int end(void *ctx, struct pass *p)
{
	header(ctx, p);
	((struct states *)ctx)->complete = 0;
	return PASS_GO;
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
	/* a window's times from its start, as in ptt-paje and ptt-json; with states, intervals are differences
	 * of times (ordered), event rows stay as read */
	struct states st = { .out = stdout, .complete = 1 };
	struct pass_tool tool = { .prog = "ptt-csv", .ctx = &st, .start = start, .event = event, .end = end,
				  .need = PASS_SYMS | PASS_LOSS | PASS_LOSS_NOTE | PASS_CLOCK | PASS_BUFFERED,
				  .ops = { .ctx = &st, .thread_end = end_row, .state = state_row } };
	if (states)
		tool.need |= PASS_MODEL | PASS_FINISH | PASS_ORDERED;
	struct pass p;
	int rc = pass_run(&p, &tool, argc - optind, argv + optind);
	hosts_free(&st.hosts);
	return rc;
}

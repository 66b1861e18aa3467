/*
 * ptt-paje - convert a ptt trace to Paje for PajeNG and ViTE: containers
 * Program > Process > Thread, thread states, point events, links for thread
 * creation, joins, mutex hand-offs, condition wake-ups, barrier and semaphore
 * releases, the number of live threads per process and, with --objects, a
 * container per synchronisation object with its holders and waiters.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "model.h"
#include "paje_out.h"

struct paje {
	FILE *out;
	struct ptt_names *names;
	int program_created;
	uint64_t last_ns, links;
};

static void line_start(struct paje *pj, int id, uint64_t ns)
{
	fprintf(pj->out, "%d ", id);
	paje_time(pj->out, ns);
}

/* The lines written per event are built in a buffer: "ID TIME" first, then emit() ends the line. */
static char *head(char *p, int id, uint64_t ns)
{
	p = ptt_fmt_u64(p, (uint64_t)id);
	*p++ = ' ';
	return ptt_fmt_time(p, ns);
}

static void emit(struct paje *pj, char *line, char *end)
{
	*end++ = '\n';
	fwrite_unlocked(line, 1, (size_t)(end - line), pj->out);
}

/* " NAME" + number */
static char *field(char *p, const char *name, uint64_t n)
{
	return ptt_fmt_u64(paje_put(p, name), n);
}

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
	char line[128], *p = head(line, PJ_SET_STATE, ns);
	(void)old; /* even a new interval of the same state is set again: intervals count acquisitions */
	p = field(p, " ST_Thread T", t->serial);
	*p++ = ' ';
	emit(pj, line, paje_put(p, mstate_alias[now->state]));
}

/* one end of a link: " L_kind Pn Tn kind PREFIXkey" */
static void link_line(struct paje *pj, int id, uint64_t ns, const char *kind, uint32_t p_serial, uint32_t t_serial,
		      const char *key_prefix, uint64_t key)
{
	char line[160], *p = head(line, id, ns);
	p = paje_put(paje_put(p, " L_"), kind);
	p = field(p, " P", p_serial);
	p = field(p, " T", t_serial);
	p = paje_put(paje_put(p, " "), kind);
	emit(pj, line, field(p, key_prefix, key));
}

static void on_link(void *ctx, struct mthread *from, struct mthread *to, const char *kind, uint64_t obj, uint64_t ns)
{
	struct paje *pj = ctx;
	const struct mprocess *p = to->user;
	(void)obj;
	if (!p || from->pid != to->pid)
		return;
	uint64_t key = ++pj->links;
	link_line(pj, PJ_START_LINK, ns, kind, p->serial, from->serial, " k", key);
	link_line(pj, PJ_END_LINK, ns, kind, p->serial, to->serial, " k", key);
}

/* links from the model: their keys (j) never meet those of on_link (k) */
static void on_link_start(void *ctx, struct mprocess *p, uint32_t from, const char *kind, uint64_t key, uint64_t ns)
{
	link_line(ctx, PJ_START_LINK, ns, kind, p->serial, from, " j", key);
}

static void on_link_end(void *ctx, struct mprocess *p, uint32_t to, const char *kind, uint64_t key, uint64_t ns)
{
	link_line(ctx, PJ_END_LINK, ns, kind, p->serial, to, " j", key);
}

static void set_count(struct paje *pj, const struct mobject *o, const char *var, uint32_t n, uint64_t ns)
{
	char line[128], *p = head(line, PJ_SET_VARIABLE, ns);
	p = paje_put(paje_put(p, " "), var);
	p = field(p, " O", o->serial);
	emit(pj, line, field(p, " ", n));
}

static void on_object_begin(void *ctx, struct mobject *o, struct mprocess *p, uint64_t ns)
{
	struct paje *pj = ctx;
	char name[PTT_MAX_STR + 32];
	const char *given = ptt_names_object(pj->names, o->addr);
	if (given)
		snprintf(name, sizeof name, "%s %s", paje_object_kind[o->cls], given);
	else
		snprintf(name, sizeof name, "%s 0x%" PRIx64, paje_object_kind[o->cls], o->addr);
	line_start(pj, PJ_CREATE_CONTAINER, ns);
	fprintf(pj->out, " O%" PRIu32 " %s P%" PRIu32 " ", o->serial, paje_object_type[o->cls], p->serial);
	paje_name(pj->out, name);
	putc('\n', pj->out);
	if (paje_holders_var[o->cls])
		set_count(pj, o, paje_holders_var[o->cls], 0, ns);
	if (paje_waiters_var[o->cls])
		set_count(pj, o, paje_waiters_var[o->cls], 0, ns);
}

static void on_object_end(void *ctx, struct mobject *o, struct mprocess *p, uint64_t ns)
{
	struct paje *pj = ctx;
	(void)p;
	line_start(pj, PJ_DESTROY_CONTAINER, ns);
	fprintf(pj->out, " %s O%" PRIu32 "\n", paje_object_type[o->cls], o->serial);
}

static void on_object_count(void *ctx, struct mobject *o, int waiters, uint64_t ns)
{
	const char *var = waiters ? paje_waiters_var[o->cls] : paje_holders_var[o->cls];
	if (var)
		set_count(ctx, o, var, waiters ? o->waiters : o->holders, ns);
}

static void on_point(void *ctx, struct mthread *t, const struct ptt_event *ev)
{
	char line[160], *p = head(line, PJ_NEW_EVENT, ev->ns); /* type names are [A-Za-z0-9_.-], < 48 bytes */
	p = field(p, " E_Thread T", t->serial);
	*p++ = ' ';
	emit(ctx, line, paje_put(p, ev->type->name));
}

static void usage(void)
{
	printf("Usage: ptt-paje [OPTION]... [FILE|-]...\n"
	       "Convert a ptt trace (binary or text, from FILE or stdin) to Paje on stdout,\n"
	       "for PajeNG (pj_dump) and ViTE.\n"
	       "Several FILEs are read in order as one trace (the files of ptt-record -m).\n"
	       "\n"
	       "  -o, --objects     a container per mutex, rwlock, spinlock, condition variable,\n"
	       "                    barrier and semaphore, with its holders and waiters\n"
	       "  -h, --help        show this help and exit\n"
	       "      --version     show the version and exit\n"
	       "\n"
	       "Exit status: 0 success, 1 damaged input (the Paje file is still complete and valid),\n"
	       "2 usage error or unreadable input.\n");
}

/* The names in the trace at fd, read from its start; the offset is put back to 0. */
static void learn_names_fd(struct ptt_names *names, int fd, const char *name)
{
	static struct ptt_event ev;
	struct ptt_reader *r = NULL;
	if (ptt_reader_open(&r, fd, name) == 0) {
		int rc;
		while ((rc = ptt_reader_next(r, &ev)) != 0)
			if (rc > 0 && (ev.id == PTT_EV_THREAD_NAME || ev.id == PTT_EV_OBJECT_NAME))
				ptt_names_update(names, &ev);
	}
	ptt_reader_close(r);
	lseek(fd, 0, SEEK_SET);
}

/* A pipe on stdin becomes a temporary file (unlinked at once), so that it can be read twice. */
static int spool_stdin(void)
{
	struct stat st;
	if (fstat(0, &st) == 0 && S_ISREG(st.st_mode))
		return 0;
	FILE *tmp = tmpfile();
	if (!tmp)
		return -1;
	static char buf[1 << 16];
	ssize_t n;
	while ((n = read(0, buf, sizeof buf)) > 0 || (n < 0 && errno == EINTR))
		if (n > 0 && fwrite(buf, 1, (size_t)n, tmp) != (size_t)n)
			break;
	int bad = n < 0 || fflush(tmp) != 0 || ferror(tmp);
	if (bad || dup2(fileno(tmp), 0) < 0 || lseek(0, 0, SEEK_SET) != 0) {
		fclose(tmp);
		return -1;
	}
	fclose(tmp); /* fd 0 keeps the file */
	return 0;
}

/*
 * Threads usually name themselves just after they begin, and a Paje
 * container's name is fixed when it is created: a quick first pass learns
 * every thread and object name (stdin from a pipe is spooled to a temporary
 * file for it), so that a file and the same trace piped in give the same
 * Paje.  Damage is left for the real pass to report.
 */
static int learn_names(struct ptt_names *names, int npaths, char **paths)
{
	int stdin_used = npaths == 0;
	for (int i = 0; i < npaths; i++)
		stdin_used |= strcmp(paths[i], "-") == 0;
	if (stdin_used && spool_stdin() != 0) {
		fprintf(stderr, "ptt-paje: -: cannot keep a copy of the input (%s)\n", strerror(errno));
		return -1;
	}
	if (npaths == 0)
		learn_names_fd(names, 0, "-");
	for (int i = 0; i < npaths; i++) {
		if (strcmp(paths[i], "-") == 0) {
			learn_names_fd(names, 0, "-");
			continue;
		}
		int fd = open(paths[i], O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue; /* reported by the real pass */
		struct stat st;
		if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode))
			learn_names_fd(names, fd, paths[i]);
		close(fd);
	}
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "help", no_argument, 0, 'h' }, { "objects", no_argument, 0, 'o' },
		{ "version", no_argument, 0, 'V' }, { 0, 0, 0, 0 },
	};
	int c, objects = 0;
	while ((c = getopt_long(argc, argv, "oh", longopts, NULL)) != -1) {
		switch (c) {
		case 'o': objects = 1; break;
		case 'h': usage(); return 0;
		case 'V': cli_print_version("ptt-paje"); return 0;
		default: return cli_usage_error("ptt-paje");
		}
	}
	static char outbuf[1 << 18];
	setvbuf(stdout, outbuf, _IOFBF, sizeof outbuf);
	struct paje pj = { stdout, ptt_names_new(), 0, 0, 0 };
	if (!pj.names || learn_names(pj.names, argc - optind, argv + optind) != 0)
		return 1;
	struct cli_input in;
	if (cli_open(&in, "ptt-paje", argc - optind, argv + optind)) {
		ptt_names_free(pj.names);
		return 2;
	}
	in.ordered = 1; /* Paje readers reject time going back */
	struct model_ops ops = { .ctx = &pj, .process_begin = on_process_begin, .process_end = on_process_end,
				 .thread_begin = on_thread_begin, .thread_end = on_thread_end, .state = on_state,
				 .link = on_link, .point = on_point, .link_start = on_link_start, .link_end = on_link_end,
				 .object_begin = objects ? on_object_begin : NULL, .object_end = on_object_end,
				 .object_count = on_object_count };
	struct model *m = model_new(&ops);
	static struct ptt_event ev;
	paje_header(stdout, objects);
	/* a window (ptt-filter) is drawn from its start: viewers begin their time axis at 0 */
	uint64_t from = 0, to = 0;
	int window = -1;
	while (m && pj.names && cli_next(&in, &ev) > 0) {
		if (window < 0)
			window = cli_window(in.r, &from, &to);
		ev.ns = ev.ns > from ? ev.ns - from : 0;
		if (ev.ns < pj.last_ns)
			ev.ns = pj.last_ns; /* Paje times never go back, whatever the input */
		ptt_names_update(pj.names, &ev);
		model_event(m, &ev);
		pj.last_ns = ev.ns;
	}
	if (window > 0 && cli_window(in.r, &from, &to) && to > from && to - from > pj.last_ns)
		pj.last_ns = to - from; /* to the window's end */
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

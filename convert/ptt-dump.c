/*
 * ptt-dump - decode a ptt trace to text: one event per line (lossless,
 * readable back by every ptt filter), sentences, a summary, or a check.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/cli.h"
#include "lib/lockframes.h"
#include "lib/fidelity.h"
#include "lib/host.h"
#include "lib/human.h"
#include "lib/model.h"
#include "lib/pass.h"
#include "lib/summary.h"
#include "lib/symbols.h"

enum mode { MODE_TEXT, MODE_HUMAN, MODE_INFO, MODE_CHECK };

static void usage(void)
{
	printf("Usage: ptt-dump [OPTION]... [FILE|-]...\n"
	       "Decode a ptt trace (binary or text, from FILE or stdin) to text on stdout.\n"
	       "Several FILEs are read in order as one trace (the files of ptt-record -m).\n"
	       "Call sites are symbolised (function+offset (module) at file:line) after a '#'.\n"
	       "\n"
	       "  -H, --human       one sentence per event, saying where (\"thread 42 waits for mutex\n"
	       "                    queue_lock at queue.c:42 in queue_push\")\n"
	       "  -c, --check       verify checksums, structure and time order, and replay the trace for\n"
	       "                    impossible histories (two holders of a lock, ...); print counts;\n"
	       "                    those after events were lost are counted apart, not failures\n"
	       "  -i, --info        print the header, duration, lost events, limits met, per-thread and\n"
	       "                    per-event counts\n"
	       "  -n, --no-header   leave out the '#' header lines of the text form\n"
	       CLI_SKIP_FRAMES_HELP
	       "  -h, --help        show this help and exit\n"
	       "      --version     show the version and exit\n"
	       "\n"
	       "Exit status: 0 success, 1 damaged input or a failed check (intact events are still\n"
	       "printed), 2 usage error or unreadable input, 5 if --check found nothing but violations\n"
	       "that lost events could explain (unverifiable, set aside).\n");
}

/*
 * --check's violations, judged once the whole trace is read (a rec_lost
 * record comes after the stretch it covers): the rule in fidelity.h.  The first 20 are printed, in order.
 */
#define VIOLATIONS_SHOWN 20
struct violations {
	size_t n, cap;
	struct fidelity_culprit *c;
	char *msg[VIOLATIONS_SHOWN]; /* of the first ones, in order */
};

static void keep_violation(struct violations *v, const struct fidelity *fid, const char *msg)
{
	if (PTT_GROW(v->c, &v->cap, v->n + 1) != 0)
		return; /* counted by fidelity_violations all the same, and not set aside */
	if (v->n < VIOLATIONS_SHOWN)
		v->msg[v->n] = strdup(msg);
	fidelity_last_culprit(fid, &v->c[v->n++]);
}

/* Print the first violations, free them all; returns how many a loss could explain. */
static unsigned long judge_violations(struct violations *v, const struct fidelity *fid, const struct loss *l)
{
	unsigned long aside = 0;
	for (size_t i = 0; i < v->n; i++) {
		int lost = fidelity_loss_explains(fid, l, &v->c[i]);
		aside += (unsigned long)lost;
		if (i < VIOLATIONS_SHOWN && v->msg[i])
			printf("violation%s: %s\n", lost ? " where events were lost" : "", v->msg[i]);
		if (i < VIOLATIONS_SHOWN)
			free(v->msg[i]);
	}
	free(v->c);
	return aside;
}

/* What the options ask for, and what the mode keeps. */
struct dump {
	enum mode mode;
	struct hosts hosts;         /* --human on a merged trace (ptt-merge): each sentence says its host */
	int hosts_read;
	int no_header;
	struct ptt_sink *sink;      /* the text form, with its header */
	struct summary *sum;        /* --info, --check: the counts */
	struct fidelity *fid;       /* --check: the replay's violations */
	struct violations found;
	uint32_t stack;             /* --human: the stack the event being told takes */
	int unverified;             /* --check passed, but with violations set aside: exit status 5 */
};

static char line[PTT_MAX_STR * 4 + 1024];

/* --human, before the model takes ev: its sentence, and the stack its thread announced for it. */
static void human_begin(struct dump *d, struct pass *p, const struct ptt_event *ev)
{
	human_sentence(ev, p->syms, p->model, line, sizeof line);
	if (!d->hosts_read++ && hosts_read(&d->hosts, p->in.r))
		d->hosts.n = 0;
	const char *host = hosts_name(&d->hosts, ev->pid);
	size_t at = strcspn(line, " "), len = strlen(line), hl = host ? strlen(host) + 3 : 0;
	if (host && line[at] && len + hl < sizeof line) { /* "TIME [HOST] sentence" */
		memmove(line + at + hl, line + at, len - at + 1);
		line[at] = ' ';
		line[at + 1] = '[';
		memcpy(line + at + 2, host, hl - 3);
		line[at + hl - 1] = ']';
	}
	struct mthread *t = model_thread(p->model, ev->pid, ev->tid);
	d->stack = t ? t->pending_stack : 0;
}

/*
 * --human, once the model took ev: with a stack (the stack events themselves
 * are not shown), the site is the first frame past the lock layer and the
 * frames after it follow ("from a <- b <- c").
 */
static void human_end(struct dump *d, struct pass *p, const struct ptt_event *ev)
{
	struct ptt_syms *syms = p->syms;
	uint32_t stack = d->stack;
	struct mthread *t;
	const struct mframe *top = stack ? NULL : (t = model_thread(p->model, ev->pid, ev->tid)) ? model_top(t) : NULL;
	if (top && top->open.pos == ev->pos)
		stack = top->stack; /* a hold taken after a wait: where the wait began */
	const struct ptt_stacks *st = model_stacks(p->model);
	uint64_t site = lockframes_site(syms, st, ev->pid, stack);
	size_t len = strlen(line), size = sizeof line;
	if (site && ptt_syms_site(syms, ev)) {
		len += ptt_syms_code_phrase(syms, ev->pid, site, line + len, size - len);
		if (len + 16 < size) {
			memcpy(line + len, " (from ", 7);
			size_t k = lockframes_past(syms, st, ev->pid, stack, 5, line + len + 7, size - len - 8);
			if (k)
				memcpy(line + len + 7 + k, ")", 2);
			else
				line[len] = 0;
		}
	} else {
		ptt_syms_site_phrase(syms, ev, line + len, size - len);
	}
	puts(line);
}

/* The text form without its header: the event's line and its site after a '#'. */
static void text_line(struct pass *p, const struct ptt_event *ev)
{
	size_t len = ptt_text_format_event(ev, line, sizeof line);
	size_t k = ptt_syms_note(p->syms, ev, line + len + 4, sizeof line - len - 5);
	if (k) {
		memcpy(line + len, "  # ", 4);
		len += 4 + k;
	}
	line[len++] = '\n';
	fwrite(line, 1, len, stdout);
}

/* --human tells no stack event, nor a CPython's py_runtime and py_code */
static int is_stack(const struct ptt_event *ev)
{
	return ev->id == PTT_EV_STACK || ev->id == PTT_EV_STACK_FRAMES || ev->id == PTT_EV_PY_CODE || ev->id == PTT_EV_PY_RUNTIME;
}

static int start(void *ctx, struct pass *p)
{
	struct dump *d = ctx;
	int failed = !(d->sum = summary_new()) || (d->mode == MODE_CHECK && !(d->fid = fidelity_new(p->model)));
	if (d->mode == MODE_TEXT && !d->no_header && !failed) {
		failed |= ptt_sink_open(&d->sink, stdout, PTT_FORM_TEXT, 0) != 0;
		if (d->sink)
			ptt_sink_set_note(d->sink, ptt_syms_note, p->syms);
	}
	return failed ? PASS_FAIL : PASS_GO;
}

/* Before the model takes ev: its counts, its line; --human, its sentence. */
static int event(void *ctx, struct pass *p, struct ptt_event *ev)
{
	struct dump *d = ctx;
	if (d->mode == MODE_INFO || d->mode == MODE_CHECK) /* the counts only they print */
		summary_add(d->sum, ev);
	if (d->sink && ptt_sink_event(d->sink, p->in.r, ev) != 0)
		return PASS_FAIL;
	if (d->mode == MODE_TEXT && !d->sink)
		text_line(p, ev);
	if (d->mode == MODE_HUMAN && !is_stack(ev))
		human_begin(d, p, ev);
	return d->mode == MODE_TEXT && ferror(stdout) ? PASS_STOP : PASS_GO; /* --human's line: after() */
}

/* Once the model took ev: a violation it found; --human, where it happened. */
static int after(void *ctx, struct pass *p, struct ptt_event *ev)
{
	struct dump *d = ctx;
	if (d->fid && fidelity_add(d->fid, ev, p->syms, line, sizeof line))
		keep_violation(&d->found, d->fid, line);
	if (d->mode != MODE_HUMAN)
		return PASS_GO;
	if (!is_stack(ev))
		human_end(d, p, ev);
	return ferror(stdout) ? PASS_STOP : PASS_GO;
}

static int report(void *ctx, struct pass *p)
{
	struct dump *d = ctx;
	if (d->sink)
		ptt_sink_close(d->sink, p->in.r);
	if (d->mode == MODE_INFO) {
		summary_print_info(d->sum, &p->in, p->syms, p->unknown_before ? p->mid_run_why : NULL, stdout);
		size_t stretches = 0;
		loss_spans(p->in.loss, &stretches);
		if (stretches) {
			fputc('\n', stdout);
			loss_print(p->in.loss, stdout);
		}
	}
	if (d->mode != MODE_CHECK)
		return PASS_GO;
	unsigned long violations = fidelity_violations(d->fid), aside = judge_violations(&d->found, d->fid, p->in.loss);
	summary_print_check(d->sum, &p->in, violations, aside, stdout);
	d->unverified = aside > 0;
	return summary_order_errors(d->sum) || violations > aside ? PASS_FAIL : PASS_GO;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "human", no_argument, 0, 'H' }, { "check", no_argument, 0, 'c' },
		{ "info", no_argument, 0, 'i' }, { "no-header", no_argument, 0, 'n' },
		{ "help", no_argument, 0, 'h' }, CLI_SKIP_FRAMES_LONGOPT, { "version", no_argument, 0, 'V' }, { 0, 0, 0, 0 },
	};
	struct dump d = { .mode = MODE_TEXT };
	int c;
	while ((c = getopt_long(argc, argv, "Hcinh", longopts, NULL)) != -1) {
		switch (c) {
		case 'H': d.mode = MODE_HUMAN; break;
		case 'c': d.mode = MODE_CHECK; break;
		case 'i': d.mode = MODE_INFO; break;
		case 'n': d.no_header = 1; break;
		case CLI_OPT_SKIP_FRAMES:
			if (cli_skip_frames("ptt-dump", optarg))
				return 2;
			break;
		case 'h': usage(); return 0;
		case 'V': cli_print_version("ptt-dump"); return 0;
		default: return cli_usage_error("ptt-dump");
		}
	}
	/* --human: who holds what; --check: the replay; --info and --check: where events were lost, besides
	 * how many (said after the counts; violations there set aside) */
	struct pass_tool tool = { .prog = "ptt-dump", .ctx = &d, .start = start, .event = event, .report = report,
				  .need = PASS_SYMS | PASS_BUFFERED };
	if (d.mode == MODE_HUMAN || d.mode == MODE_CHECK) {
		tool.need |= PASS_MODEL;
		tool.after = after;
	}
	if (d.mode == MODE_HUMAN)
		tool.need |= PASS_WRAPPERS; /* the program's lock wrappers, learnt before any site is named (lockframes.h) */
	tool.need |= d.mode == MODE_INFO || d.mode == MODE_CHECK ? PASS_LOSS : 0;
	struct pass p;
	int rc = pass_run(&p, &tool, argc - optind, argv + optind);
	fidelity_free(d.fid);
	summary_free(d.sum);
	hosts_free(&d.hosts);
	return rc == 0 && d.unverified ? 5 : rc;
}

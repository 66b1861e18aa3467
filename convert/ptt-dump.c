/*
 * ptt-dump - decode a ptt trace to text: one event per line (lossless,
 * readable back by every ptt filter), sentences, a summary, or a check.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "lockframes.h"
#include "fidelity.h"
#include "human.h"
#include "model.h"
#include "summary.h"
#include "symbols.h"

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
	       "printed), 2 usage error or unreadable input.\n");
}

/*
 * --human: the event's sentence and its site; with a stack (the stack
 * events themselves are not shown), the site is the first frame past the
 * lock layer and the frames after it follow ("from a <- b <- c").
 */
static void human_line(const struct ptt_event *ev, struct ptt_syms *syms, struct model *model, char *line, size_t size)
{
	if (ev->id == PTT_EV_STACK || ev->id == PTT_EV_STACK_FRAMES) {
		model_event(model, ev);
		return;
	}
	human_sentence(ev, syms, model, line, size);
	struct mthread *t = model_thread(model, ev->pid, ev->tid);
	uint32_t stack = t ? t->pending_stack : 0;
	model_event(model, ev);
	const struct mframe *top = stack ? NULL : (t = model_thread(model, ev->pid, ev->tid)) ? model_top(t) : NULL;
	if (top && top->open.pos == ev->pos)
		stack = top->stack; /* a hold taken after a wait: where the wait began */
	const struct ptt_stacks *st = model_stacks(model);
	uint64_t site = lockframes_site(syms, st, ev->pid, stack);
	size_t len = strlen(line);
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

/*
 * --check's violations, judged once the whole trace is read (a rec_lost
 * record comes after the stretch it covers): the rule in fidelity.h.  The first 20 are printed, in order.
 */
#define VIOLATIONS_SHOWN 20
struct violations {
	size_t n, cap;
	uint64_t *ns;
	char *msg[VIOLATIONS_SHOWN]; /* of the first ones, in order */
};

static void keep_violation(struct violations *v, uint64_t ns, const char *msg)
{
	if (PTT_GROW(v->ns, &v->cap, v->n + 1) != 0)
		return; /* counted by fidelity_violations all the same, and not set aside */
	if (v->n < VIOLATIONS_SHOWN)
		v->msg[v->n] = strdup(msg);
	v->ns[v->n++] = ns;
}

/* Is ns at or after the start of a lost stretch (not the cut before a trace's start: fidelity_starts_mid_run's)? */
static int after_loss(const struct loss *l, uint64_t ns)
{
	size_t n;
	const struct loss_span *v = loss_spans(l, &n);
	for (size_t i = 0; i < n; i++)
		if ((v[i].count || v[i].from_ns) && v[i].from_ns <= ns)
			return 1;
	return 0;
}

/* Print the first violations, free them all; returns how many fall where events were lost. */
static unsigned long judge_violations(struct violations *v, const struct loss *l)
{
	unsigned long aside = 0;
	for (size_t i = 0; i < v->n; i++) {
		int lost = after_loss(l, v->ns[i]);
		aside += (unsigned long)lost;
		if (i < VIOLATIONS_SHOWN && v->msg[i])
			printf("violation%s: %s\n", lost ? " where events were lost" : "", v->msg[i]);
		if (i < VIOLATIONS_SHOWN)
			free(v->msg[i]);
	}
	free(v->ns);
	return aside;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "human", no_argument, 0, 'H' }, { "check", no_argument, 0, 'c' },
		{ "info", no_argument, 0, 'i' }, { "no-header", no_argument, 0, 'n' },
		{ "help", no_argument, 0, 'h' }, CLI_SKIP_FRAMES_LONGOPT, { "version", no_argument, 0, 'V' }, { 0, 0, 0, 0 },
	};
	enum mode mode = MODE_TEXT;
	int no_header = 0, c;
	while ((c = getopt_long(argc, argv, "Hcinh", longopts, NULL)) != -1) {
		switch (c) {
		case 'H': mode = MODE_HUMAN; break;
		case 'c': mode = MODE_CHECK; break;
		case 'i': mode = MODE_INFO; break;
		case 'n': no_header = 1; break;
		case CLI_OPT_SKIP_FRAMES:
			if (cli_skip_frames("ptt-dump", optarg))
				return 2;
			break;
		case 'h': usage(); return 0;
		case 'V': cli_print_version("ptt-dump"); return 0;
		default: return cli_usage_error("ptt-dump");
		}
	}
	static char outbuf[1 << 18];
	setvbuf(stdout, outbuf, _IOFBF, sizeof outbuf);
	struct cli_input in;
	if (cli_open(&in, "ptt-dump", argc - optind, argv + optind))
		return 2;
	struct ptt_sink *sink = NULL;
	struct summary *sum = summary_new();
	struct ptt_syms *syms = ptt_syms_new();
	const struct ptt_names *names = syms ? ptt_syms_names(syms) : NULL; /* learnt by ptt_syms_update */
	struct fidelity *fid = mode == MODE_CHECK ? fidelity_new() : NULL;
	static const struct model_ops no_ops = { 0 };
	struct model *model = mode == MODE_HUMAN ? model_new(&no_ops) : NULL; /* who holds what, for --human */
	static struct ptt_event ev;
	static char line[PTT_MAX_STR * 4 + 1024];
	int failed = !names || !sum || !syms || (mode == MODE_HUMAN && !model);
	if (mode == MODE_TEXT && !no_header && !failed) {
		failed |= ptt_sink_open(&sink, stdout, PTT_FORM_TEXT, 0) != 0;
		if (sink)
			ptt_sink_set_note(sink, ptt_syms_note, syms);
	}
	if (mode == MODE_INFO || mode == MODE_CHECK)
		in.loss = loss_new(); /* where, besides how many: said after the counts; violations there set aside */
	struct violations found = { 0 };
	int first = 1;
	while (!failed && cli_next(&in, &ev) > 0) {
		if (first && fid) { /* the header is read by now: a later part of a rotated recording? */
			const char *part = ptt_reader_meta(in.r, "part");
			uint64_t from = 0, to = 0;
			if ((part && atoi(part) > 1) || ptt_reader_meta(in.r, "flight") || /* or a flight recording */
			    cli_window(in.r, &from, &to)) /* or a window */
				fidelity_starts_mid_run(fid, in.r);
		}
		first = 0;
		ptt_syms_update(syms, &ev);
		if (mode == MODE_INFO || mode == MODE_CHECK) /* the counts only they print */
			summary_add(sum, &ev);
		if (fid && fidelity_add(fid, &ev, names, line, sizeof line))
			keep_violation(&found, ev.ns, line);
		if (sink) {
			failed |= ptt_sink_event(sink, in.r, &ev) != 0;
		} else if (mode == MODE_TEXT) {
			size_t len = ptt_text_format_event(&ev, line, sizeof line);
			size_t k = ptt_syms_note(syms, &ev, line + len + 4, sizeof line - len - 5);
			if (k) {
				memcpy(line + len, "  # ", 4);
				len += 4 + k;
			}
			line[len++] = '\n';
			fwrite(line, 1, len, stdout);
		} else if (mode == MODE_HUMAN) {
			human_line(&ev, syms, model, line, sizeof line);
		}
		if (ferror(stdout))
			break;
	}
	if (sink)
		ptt_sink_close(sink, in.r);
	if (mode == MODE_INFO) {
		summary_print_info(sum, &in, syms, stdout);
		loss_finish(in.loss, in.r);
		size_t stretches = 0;
		loss_spans(in.loss, &stretches);
		if (stretches) {
			fputc('\n', stdout);
			loss_print(in.loss, stdout);
		}
	}
	unsigned long violations = fid ? fidelity_violations(fid) : 0, aside = 0;
	if (mode == MODE_CHECK) {
		loss_finish(in.loss, in.r);
		aside = judge_violations(&found, in.loss);
		summary_print_check(sum, &in, violations, aside, stdout);
	}
	loss_free(in.loss);
	in.loss = NULL;
	int bad = mode == MODE_CHECK && (summary_order_errors(sum) || violations > aside);
	fidelity_free(fid);
	model_free(model);
	summary_free(sum);
	ptt_syms_free(syms);
	int damaged = cli_close(&in);
	int out = cli_finish_output("ptt-dump");
	return damaged || bad || out || failed ? 1 : 0;
}

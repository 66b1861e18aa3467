/* pass.c - the one reading pipeline: inputs, names, the model, the tool's hooks (pass.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fidelity.h"
#include "lockframes.h"
#include "pass.h"
#include "shmap.h"
#include "symbols.h"

const char *pass_mid_run(const struct ptt_reader *r, char *buf, size_t size, int *unknown_before)
{
	const char *part = ptt_reader_meta(r, "part");
	uint64_t from = 0, to = 0;
	*unknown_before = part && atoi(part) > 1;
	if (*unknown_before) {
		snprintf(buf, size, "part %d of a rotated recording: the parts before it are not read", atoi(part));
		return buf;
	}
	if (ptt_reader_meta(r, "flight"))
		return "a flight recording: each thread's events before its kept history are overwritten";
	if (cli_window(r, &from, &to))
		return "a window: the events before it are left out";
	return NULL;
}

/* Does the trace start mid-run: a later part of a rotated recording, a flight recording, a window? */
static int starts_mid_run(const struct ptt_reader *r, struct pass *p)
{
	static char buf[128];
	int unknown;
	const char *w = pass_mid_run(r, buf, sizeof buf, &unknown);
	if (p) {
		p->mid_run_why = w;
		p->unknown_before = unknown;
	}
	return w != NULL;
}

/* What the first pass carries from one input to the next: the real pass's rules (read_all, end_of). */
struct first_run {
	struct model *m;
	uint64_t last_ns, end_ns;
	int started;
};

/* The first pass over the trace at fd, from its start; the offset is put back to 0. */
static void first_pass_fd(struct pass *p, struct first_run *f, int fd, const char *name)
{
	const struct pass_tool *t = p->tool;
	const int ordered = (t->need & PASS_ORDERED) != 0;
	static struct ptt_event ev;
	struct ptt_reader *r = NULL;
	if (ptt_reader_open(&r, fd, name) == 0) {
		int rc;
		while ((rc = ptt_reader_next(r, &ev)) != 0) {
			if (rc < 0)
				continue; /* damage: the real pass reports it */
			if (!f->started && f->m && starts_mid_run(r, NULL))
				model_starts_mid_run(f->m, r);
			f->started = 1;
			if (ordered && ev.ns < f->last_ns)
				ev.ns = f->last_ns; /* as cli_next moves it, silently: the real pass says it */
			f->last_ns = ev.ns;
			shmap_event(p->shmap, &ev);
			ptt_syms_update(p->syms, &ev);
			lockframes_learn(p->syms, &ev);
			if (t->first_event)
				t->first_event(t->ctx, &ev);
			if (f->m)
				model_event(f->m, &ev);
			if (f->m && t->first_after)
				t->first_after(t->ctx, &ev);
		}
		uint64_t from = 0, to = 0;
		cli_window(r, &from, &to);
		f->end_ns = to > f->end_ns ? to : f->end_ns;
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
 * PASS_NAMES_FIRST: threads usually name themselves just after they begin,
 * and some outputs fix a name when they first show it (a Paje container):
 * a quick first pass learns every name, so that a file and the same trace
 * piped in give the same output; with first_ops, a model of its own sees it
 * too (ptt-paje: which objects are the most contended).  Damage is left for
 * the real pass to report.
 */
static int first_pass(struct pass *p, int npaths, char **paths)
{
	const struct pass_tool *t = p->tool;
	struct first_run f = { .m = t->first_ops ? model_new(t->first_ops) : NULL };
	int stdin_used = npaths == 0;
	for (int i = 0; i < npaths; i++)
		stdin_used |= strcmp(paths[i], "-") == 0;
	if (stdin_used && spool_stdin() != 0) {
		fprintf(stderr, "%s: -: cannot keep a copy of the input (%s)\n", t->prog, strerror(errno));
		model_free(f.m);
		return -1;
	}
	if (f.m && t->first_start && t->first_start(t->ctx, p, f.m) != PASS_GO) {
		model_free(f.m);
		return -1;
	}
	if (npaths == 0)
		first_pass_fd(p, &f, 0, "-");
	for (int i = 0; i < npaths; i++) {
		if (strcmp(paths[i], "-") == 0) {
			first_pass_fd(p, &f, 0, "-");
			continue;
		}
		int fd = open(paths[i], O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue; /* reported by the real pass */
		struct stat st;
		if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode))
			first_pass_fd(p, &f, fd, paths[i]);
		close(fd);
	}
	lockframes_learn_end(); /* before any site is named */
	if (f.m && t->first_end)
		t->first_end(t->ctx, p, f.end_ns > f.last_ns ? f.end_ns : f.last_ns);
	model_free(f.m); /* without model_finish: nothing more waits */
	shmap_restart(p->shmap); /* the real pass learns the mappings again, in order: the same addresses */
	return 0;
}

void pass_learn(struct pass *p, const struct ptt_event *ev)
{
	if (ev->id == PTT_EV_LIMIT && ev->nargs >= 4) /* a snapshot's (frames forgotten before it): said as read */
		ptt_limits_met(&p->in.limits, (unsigned)ev->arg[0], ev->arg[1], ev->arg[2], ev->arg[3]);
	if (p->syms)
		ptt_syms_update(p->syms, ev);
	if (p->model)
		model_event(p->model, ev);
}

/* Every event, through names, the tool's hooks and the model; the step that stopped it. */
static int read_all(struct pass *p)
{
	const struct pass_tool *t = p->tool;
	/* read once: the hooks may write anywhere, the compiler would load these for every event */
	int (*const event)(void *, struct pass *, struct ptt_event *) = t->event;
	int (*const after)(void *, struct pass *, struct ptt_event *) = t->after;
	void *const ctx = t->ctx;
	const int clock = (t->need & PASS_CLOCK) != 0, syms = (t->need & PASS_SYMS) != 0;
	const int wrappers = (t->need & PASS_WRAPPERS_ASREAD) && p->syms;
	struct model *const model = p->model;
	static struct ptt_event ev;
	int step = PASS_GO, first = 1;
	while (step != PASS_STOP && step != PASS_FAIL && cli_next(&p->in, &ev) > 0) {
		if (__builtin_expect(first, 0) && (p->mid_run = starts_mid_run(p->in.r, p)) && model)
			model_starts_mid_run(model, p->in.r); /* the header is read by now */
		first = 0;
		if (clock) {
			uint64_t raw = ev.ns;
			cli_clock_event(&p->clock, p->in.r, &ev);
			p->shift = raw - ev.ns;
		}
		if (p->shmap)
			shmap_event(p->shmap, &ev);
		if (syms)
			ptt_syms_update(p->syms, &ev);
		if (wrappers)
			lockframes_learn(p->syms, &ev);
		step = event ? event(ctx, p, &ev) : PASS_GO;
		if (step == PASS_GO && model)
			model_event(model, &ev);
		if (step == PASS_GO && after)
			step = after(ctx, p, &ev);
		if (step == PASS_GO || step == PASS_SKIP)
			p->last_ns = ev.ns;
	}
	return step;
}

/* The end of the trace, or of the window it was cut to when that is later. */
static uint64_t end_of(struct pass *p)
{
	if (p->tool->need & PASS_CLOCK)
		return cli_clock_end(&p->clock, p->in.r, p->last_ns);
	uint64_t from = 0, to = 0;
	cli_window(p->in.r, &from, &to);
	return to > p->last_ns ? to : p->last_ns;
}

/* The input is read: the loss account, the end and report hooks around the model's close. */
static int finish(struct pass *p)
{
	const struct pass_tool *t = p->tool;
	loss_finish(p->in.loss, p->in.r);
	if (t->need & PASS_WRAPPERS_ASREAD)
		lockframes_learn_end(); /* before the end hook names a site */
	p->end_ns = end_of(p);
	/* the one frame cap, said with the trace's limits: the frames the trace says were forgotten
	 * before it (a rotated file's head, a window's or snapshot's context) and those the model forgot
	 * reading it are not the same frames: they add up */
	if (p->model && model_frames_forgotten(p->model))
		ptt_limits_met(&p->in.limits, PTT_LIMIT_FRAMES, p->in.limits.count[PTT_LIMIT_FRAMES] + model_frames_forgotten(p->model),
			       PTT_FRAMES_MAX, 0);
	int step = t->end ? t->end(t->ctx, p) : PASS_GO;
	if ((t->need & PASS_FINISH) && p->model)
		model_finish(p->model, p->end_ns);
	if (t->report && t->report(t->ctx, p) == PASS_FAIL)
		step = PASS_FAIL;
	return step;
}

/* What the tool needs made before it starts: 0, or -1 (said). */
static int make(struct pass *p)
{
	const struct pass_tool *t = p->tool;
	p->in.ordered = (t->need & PASS_ORDERED) != 0;
	if (((t->need & PASS_LOSS) && !(p->in.loss = loss_new())) ||
	    ((t->need & PASS_MODEL) && !(p->model = model_new(&t->ops)))) {
		fprintf(stderr, "%s: %s\n", t->prog, strerror(ENOMEM));
		return -1;
	}
	return 0;
}

int pass_run(struct pass *p, const struct pass_tool *t, int npaths, char **paths)
{
	static char outbuf[1 << 18];
	memset(p, 0, sizeof *p);
	p->tool = t;
	if (t->need & PASS_BUFFERED)
		setvbuf(stdout, outbuf, _IOFBF, sizeof outbuf);
	if (((t->need & PASS_SHARED) && !(p->shmap = shmap_new())) ||
	    ((t->need & (PASS_SYMS | PASS_NAMES_FIRST)) && !(p->syms = ptt_syms_new()))) {
		fprintf(stderr, "%s: %s\n", t->prog, strerror(ENOMEM));
		shmap_free(p->shmap);
		return 1;
	}
	ptt_syms_set_shmap(p->syms, p->shmap);
	if ((t->need & PASS_NAMES_FIRST) && first_pass(p, npaths, paths) != 0) {
		ptt_syms_free(p->syms);
		shmap_free(p->shmap);
		return 1;
	}
	if ((t->need & (PASS_WRAPPERS | PASS_NAMES_FIRST)) == PASS_WRAPPERS) {
		/* the first pass with symbols of its own (silent): the real pass learns names as it goes */
		struct ptt_syms *keep = p->syms;
		int rc = (p->syms = ptt_syms_new()) ? 0 : -1;
		if (!rc) {
			ptt_syms_set_warn(p->syms, NULL, NULL);
			ptt_syms_set_shmap(p->syms, p->shmap);
			rc = first_pass(p, npaths, paths);
		}
		ptt_syms_free(p->syms);
		p->syms = keep;
		if (rc != 0) {
			ptt_syms_free(p->syms);
			shmap_free(p->shmap);
			return 1;
		}
	}
	if (cli_open(&p->in, t->prog, npaths, paths) != 0) {
		ptt_syms_free(p->syms);
		shmap_free(p->shmap);
		return 2;
	}
	int step = make(p) != 0 ? PASS_FAIL : t->start ? t->start(t->ctx, p) : PASS_GO;
	int started = step != PASS_FAIL && step != PASS_QUIT;
	if (step == PASS_GO)
		step = read_all(p);
	if (started && finish(p) == PASS_FAIL)
		step = PASS_FAIL;
	p->failed = step == PASS_FAIL;
	if ((t->need & PASS_LOSS_NOTE) && step != PASS_QUIT)
		loss_note(p->in.loss, t->prog, p->in.label, stderr);
	loss_free(p->in.loss);
	p->in.loss = NULL;
	model_free(p->model);
	ptt_syms_free(p->syms);
	shmap_free(p->shmap);
	p->shmap = NULL;
	p->damaged = cli_close(&p->in);
	if (step == PASS_QUIT)
		return 2;
	p->write_error = cli_finish_output(t->prog);
	return p->damaged || p->write_error || p->failed ? 1 : 0;
}

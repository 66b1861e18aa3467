/* cli.c - input opening, damage reporting and output checks for the filters. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "fidelity.h"
#include "filter_spec.h"
#include "lockframes.h"

/* A garbled trace has a damaged record every few hundred bytes: the first few
 * lines say what and where, one line at the end how many (not one line each). */
#define MAX_REPORTED 3
#define PROGRESS_EVERY (1u << 20) /* events between two looks at the clock */

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* A long run says how far it is, at most twice a second; a short one says nothing. */
static void show_progress(struct cli_input *in)
{
	in->next_check += PROGRESS_EVERY;
	double t = now_s();
	if (t - in->last_shown < 0.5)
		return;
	in->last_shown = t;
	off_t at = in->file_size ? lseek(in->fd, 0, SEEK_CUR) : -1;
	if (at > 0)
		fprintf(stderr, "\r%s: %s: %llu M events, %.0f%%", in->prog, in->name, in->events >> 20,
			100.0 * (double)at / (double)in->file_size);
	else
		fprintf(stderr, "\r%s: %s: %llu M events", in->prog, in->name, in->events >> 20);
	in->progress = 2; /* shown: clear it at the end */
}

/* Open one input as the current one: its fd, or -1 (reported). */
static int open_path(struct cli_input *in, const char *path)
{
	int fd = 0;
	if (strcmp(path, "-") != 0) {
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0) {
			fprintf(stderr, "%s: %s: %s\n", in->prog, path, strerror(errno));
			return -1;
		}
		struct stat st;
		if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
			fprintf(stderr, "%s: %s: %s\n", in->prog, path, strerror(EISDIR));
			close(fd);
			return -1;
		}
	}
	in->fd = fd;
	in->name = path;
	struct stat st;
	in->file_size = in->progress && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) ? (unsigned long long)st.st_size : 0;
	return fd;
}

/* The reader used up the current input: close it and open the next one that opens. */
static int next_path(void *arg)
{
	struct cli_input *in = arg;
	if (in->fd > 0)
		close(in->fd);
	in->fd = -1;
	while (in->next_path < in->npaths) {
		int fd = open_path(in, in->paths[in->next_path++]);
		if (fd >= 0)
			return fd;
		in->problems++;
	}
	return -1;
}

int cli_open(struct cli_input *in, const char *prog, int npaths, char **paths)
{
	static char *stdin_only[] = { "-", NULL };
	memset(in, 0, sizeof *in);
	in->prog = prog;
	in->fd = -1;
	in->paths = npaths > 0 ? paths : stdin_only;
	in->npaths = npaths > 0 ? npaths : 1;
	if (in->npaths > 1)
		snprintf(in->label, sizeof in->label, "%s (and %d more)", in->paths[0], in->npaths - 1);
	else
		snprintf(in->label, sizeof in->label, "%s", in->paths[0]);
	if (isatty(2) && !isatty(1)) {
		in->progress = 1;
		in->next_check = PROGRESS_EVERY;
		in->last_shown = now_s();
	}
	unsigned long skipped = 0;
	while (!in->r && in->next_path < in->npaths) {
		if (open_path(in, in->paths[in->next_path++]) < 0) {
			skipped++;
			continue;
		}
		int rc = ptt_reader_open(&in->r, in->fd, in->name);
		if (rc) {
			const char *d = in->r ? ptt_reader_diag(in->r) : "";
			fprintf(stderr, "%s: %s: %s\n", prog, in->name, *d ? d : ptt_strerror(rc));
			ptt_reader_close(in->r);
			in->r = NULL;
			if (in->fd > 0)
				close(in->fd);
			in->fd = -1;
			skipped++;
		}
	}
	if (!in->r)
		return -1;
	in->problems = skipped;
	if (in->next_path < in->npaths)
		ptt_reader_set_next(in->r, next_path, in);
	return 0;
}

/* 1 if one more problem may have its own line (the first MAX_REPORTED do), counted as shown. */
static int may_show(struct cli_input *in)
{
	return in->shown < MAX_REPORTED ? (int)++in->shown : 0;
}

/* Keep time non-decreasing for the converters that need it (states, Paje): one message per stretch. */
static void keep_order(struct cli_input *in, struct ptt_event *ev)
{
	if (ev->ns >= in->last_ns) {
		in->behind = 0;
		in->last_ns = ev->ns;
		return;
	}
	if (!in->behind) {
		in->problems++;
		in->reordered++;
		if (may_show(in))
			fprintf(stderr, "%s: %s: %s %" PRIu64 ": time goes back %" PRIu64 " ns, events moved forward\n",
				in->prog, in->name, ptt_reader_form(in->r) == PTT_FORM_TEXT ? "line" : "offset", ev->offset,
				in->last_ns - ev->ns);
	}
	in->behind = 1;
	ev->ns = in->last_ns;
}

/* The loss account (fidelity.h): each event, and each damaged stretch once the next good event (or the end) bounds it. */
static void track_loss(struct cli_input *in, int rc, const struct ptt_event *ev)
{
	if (rc > 0) {
		if (in->damage_open) /* after the last good event: a hold that ended there is whole */
			loss_damage(in->loss, in->good_ns + 1, ev->ns);
		in->damage_open = 0;
		in->good_ns = ev->ns;
		loss_event(in->loss, ev);
	} else if (rc == 0 && in->damage_open) {
		loss_damage(in->loss, in->good_ns + 1, UINT64_MAX);
		in->damage_open = 0;
	} else if (rc < 0) {
		in->damage_open = 1;
	}
}

int cli_next(struct cli_input *in, struct ptt_event *ev)
{
	for (;;) {
		int rc = ptt_reader_next(in->r, ev);
		if (rc > 0 && in->ordered)
			keep_order(in, ev);
		if (in->loss)
			track_loss(in, rc, ev);
		if (rc > 0 && in->progress && ++in->events >= in->next_check)
			show_progress(in);
		if (rc > 0 && __builtin_expect(ev->id == PTT_EV_LIMIT, 0))
			ptt_limits_add(&in->limits, ev);
		if (rc >= 0)
			return rc;
		if (rc == PTT_E_VERSION && in->next_path >= in->npaths) {
			/* the reader dropped the rest of that input; stop unless others follow */
			fprintf(stderr, "%s: %s: %s\n", in->prog, in->name, ptt_reader_diag(in->r));
			in->problems++;
			return 0;
		}
		if (in->progress == 2)
			fputs("\r\033[K", stderr); /* the message on a line of its own */
		in->problems++;
		in->damaged++;
		if (may_show(in))
			fprintf(stderr, "%s: %s: %s\n", in->prog, in->name, ptt_reader_diag(in->r));
	}
}

void cli_say_limits(struct cli_input *in, FILE *out, const char *prefix)
{
	char line[256];
	for (unsigned i = 0; ptt_limits_sentence(&in->limits, i, line, sizeof line); i++)
		fprintf(out, "%s%s\n", prefix, line);
	in->limits_said = 1;
}

int cli_close(struct cli_input *in)
{
	if (in->progress == 2)
		fputs("\r\033[K", stderr);
	if (!in->limits_said) {
		char prefix[sizeof in->label + 64];
		snprintf(prefix, sizeof prefix, "%s: %s: note: ", in->prog, in->label);
		cli_say_limits(in, stderr, prefix);
	}
	if (in->damaged + in->reordered > in->shown) {
		char moved[96] = "";
		if (in->reordered)
			snprintf(moved, sizeof moved, "%s%lu stretches of events moved forward in time", in->damaged ? ", " : "",
				 in->reordered);
		fprintf(stderr, "%s: %s: ", in->prog, in->label);
		if (in->damaged)
			fprintf(stderr, "%lu damaged records or blocks skipped", in->damaged);
		fprintf(stderr, "%s in all (the first %lu shown above)\n", moved, in->shown);
	}
	ptt_reader_close(in->r);
	if (in->fd > 0)
		close(in->fd);
	return in->problems ? 1 : 0;
}

int cli_finish_output(const char *prog)
{
	if (fflush(stdout) != 0 || ferror(stdout)) {
		if (errno != EPIPE)
			fprintf(stderr, "%s: write error: %s\n", prog, strerror(errno));
		return 1;
	}
	return 0;
}

int cli_window(const struct ptt_reader *r, uint64_t *from, uint64_t *to)
{
	const char *f = ptt_reader_meta(r, "window_from_ns"), *t = ptt_reader_meta(r, "window_to_ns");
	if (f)
		*from = strtoull(f, NULL, 10);
	if (t)
		*to = strtoull(t, NULL, 10);
	return f || t;
}

int cli_window_clip(uint64_t from, uint64_t to, uint64_t *b, uint64_t *e)
{
	if (from && *b < from)
		*b = from;
	if (to && *e > to)
		*e = to;
	return *e >= *b;
}

int cli_window_arg(const char *prog, int is_from, const char *arg, uint64_t *from, uint64_t *to)
{
	if (!spec_parse_time(arg, is_from ? from : to))
		return 0;
	fprintf(stderr, "%s: --%s: not a time (1.5s, 200ms, 30us, 100ns): '%s'\n", prog, is_from ? "from" : "to", arg);
	return cli_usage_error(prog);
}

int cli_window_check(const char *prog, uint64_t from, uint64_t to)
{
	if (!to || from < to)
		return 0;
	fprintf(stderr, "%s: --from must come before --to\n", prog);
	return cli_usage_error(prog);
}

void cli_clock_event(struct cli_clock *c, const struct ptt_reader *r, struct ptt_event *ev)
{
	if (!c->known) {
		c->window = cli_window(r, &c->from, &c->to);
		c->known = 1;
	}
	ev->ns = ev->ns > c->from ? ev->ns - c->from : 0;
}

uint64_t cli_clock_end(struct cli_clock *c, const struct ptt_reader *r, uint64_t last_ns)
{
	/* the end is known only once the whole input is read (window_to_ns comes with the trace's end) */
	c->window = cli_window(r, &c->from, &c->to) || c->window;
	if (c->window && c->to > c->from && c->to - c->from > last_ns)
		return c->to - c->from;
	return last_ns;
}

void cli_print_version(const char *prog)
{
	printf("%s (ptt) %s\n", prog, PTT_VERSION);
}

int cli_usage_error(const char *prog)
{
	fprintf(stderr, "Try '%s --help' for more information.\n", prog);
	return 2;
}

int cli_skip_frames(const char *prog, const char *regex)
{
	char err[256];
	if (lockframes_skip(regex, err, sizeof err) == 0)
		return 0;
	fprintf(stderr, "%s: --skip-frames: %s: '%s'\n", prog, err, regex);
	return cli_usage_error(prog);
}

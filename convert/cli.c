/* cli.c - input opening, damage reporting and output checks for the filters. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

#define MAX_REPORTED 20

int cli_open(struct cli_input *in, const char *prog, const char *path)
{
	memset(in, 0, sizeof *in);
	in->prog = prog;
	if (!path || strcmp(path, "-") == 0) {
		in->name = "-";
		in->fd = 0;
	} else {
		in->name = path;
		in->fd = open(path, O_RDONLY | O_CLOEXEC);
		if (in->fd < 0) {
			fprintf(stderr, "%s: %s: %s\n", prog, path, strerror(errno));
			return -1;
		}
		struct stat st;
		if (fstat(in->fd, &st) == 0 && S_ISDIR(st.st_mode)) {
			fprintf(stderr, "%s: %s: %s\n", prog, path, strerror(EISDIR));
			close(in->fd);
			return -1;
		}
	}
	int rc = ptt_reader_open(&in->r, in->fd, in->name);
	if (rc) {
		const char *d = in->r ? ptt_reader_diag(in->r) : "";
		fprintf(stderr, "%s: %s: %s\n", prog, in->name, *d ? d : ptt_strerror(rc));
		ptt_reader_close(in->r);
		in->r = NULL;
		if (in->fd > 0)
			close(in->fd);
		return -1;
	}
	return 0;
}

/* Keep time non-decreasing for the converters that need it (states, Paje): one message per stretch. */
static void keep_order(struct cli_input *in, struct ptt_event *ev)
{
	if (ev->ns >= in->last_ns) {
		in->behind = 0;
		in->last_ns = ev->ns;
		return;
	}
	if (!in->behind && ++in->problems <= MAX_REPORTED)
		fprintf(stderr, "%s: %s: %s %" PRIu64 ": time goes back %" PRIu64 " ns, events moved forward\n", in->prog,
			in->name, ptt_reader_form(in->r) == PTT_FORM_TEXT ? "line" : "offset", ev->offset,
			in->last_ns - ev->ns);
	in->behind = 1;
	ev->ns = in->last_ns;
}

int cli_next(struct cli_input *in, struct ptt_event *ev)
{
	for (;;) {
		int rc = ptt_reader_next(in->r, ev);
		if (rc > 0 && in->ordered)
			keep_order(in, ev);
		if (rc >= 0)
			return rc;
		if (rc == PTT_E_VERSION) {
			fprintf(stderr, "%s: %s: %s\n", in->prog, in->name, ptt_reader_diag(in->r));
			in->problems++;
			return 0;
		}
		if (++in->problems <= MAX_REPORTED)
			fprintf(stderr, "%s: %s: %s\n", in->prog, in->name, ptt_reader_diag(in->r));
	}
}

int cli_close(struct cli_input *in)
{
	if (in->problems > MAX_REPORTED)
		fprintf(stderr, "%s: %s: %lu more damaged stretches not shown\n", in->prog, in->name,
			in->problems - MAX_REPORTED);
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

void cli_print_version(const char *prog)
{
	printf("%s (ptt) %s\n", prog, PTT_VERSION);
}

int cli_usage_error(const char *prog)
{
	fprintf(stderr, "Try '%s --help' for more information.\n", prog);
	return 2;
}

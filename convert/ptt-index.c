/*
 * ptt-index - copy a trace, adding snapshots of the state in force every N
 * events, so that a window with its context (ptt-filter --from, --first)
 * starts from the last snapshot before it instead of the trace's start.
 */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/cli.h"
#include "lib/filter_context.h"
#include "lib/pass.h"

static void usage(void)
{
	printf("Usage: ptt-index [OPTION]... [FILE|-]...\n"
	       "Copy a ptt trace (binary or text, from FILE or stdin) to stdout in binary form,\n"
	       "with snapshots of the state in force (live threads, held locks, waits) every N\n"
	       "events: a window of the copy with its context (ptt-filter --from, --first) is\n"
	       "then read from the last snapshot before it, not from the trace's start.\n"
	       "Several FILEs are read in order as one trace (the files of ptt-record -m).\n"
	       "\n"
	       "  -i, --interval=N      a snapshot every N events (default 100000)\n"
	       "  -z, --compress=LEVEL  zstd level 1-9 for the copy, 0 for none (default 1, with zlib\n"
	       "                        when the input's blocks are zlib's: the copy is then no\n"
	       "                        bigger than its input)\n"
	       "  -h, --help            show this help and exit\n"
	       "      --version         show the version and exit\n"
	       "\n"
	       "Exit status: 0 success, 1 damaged input (the intact events are copied),\n"
	       "2 usage error or unreadable input.\n");
}

static int parse_args(int argc, char **argv, uint64_t *interval, int *zlevel)
{
	static const struct option longopts[] = {
		{ "compress", required_argument, 0, 'z' }, { "help", no_argument, 0, 'h' },
		{ "interval", required_argument, 0, 'i' }, { "version", no_argument, 0, 'V' }, { 0, 0, 0, 0 },
	};
	int c;
	while ((c = getopt_long(argc, argv, "i:z:h", longopts, NULL)) != -1) {
		char *end;
		switch (c) {
		case 'i':
			*interval = strtoull(optarg, &end, 10);
			if (!*optarg || *end || *optarg == '-' || *interval == 0) {
				fprintf(stderr, "ptt-index: --interval: not a positive number: '%s'\n", optarg);
				return cli_usage_error("ptt-index");
			}
			break;
		case 'z':
			*zlevel = (int)strtol(optarg, &end, 10);
			if (*end || *zlevel < 0 || *zlevel > 9) {
				fprintf(stderr, "ptt-index: --compress: not a level 0-9: '%s'\n", optarg);
				return cli_usage_error("ptt-index");
			}
			break;
		case 'h': usage(); return 0;
		case 'V': cli_print_version("ptt-index"); return 0;
		default: return cli_usage_error("ptt-index");
		}
	}
	return -1;
}

static int put(void *w, unsigned kind, const struct ptt_event *ev)
{
	return ptt_writer_snapshot_add(w, kind, ev->pos, ev->words, ev->nwords);
}

/*
 * The sink, opened at the first event, once the reader has seen the input's
 * first block.  Without -z the copy is compressed at level 1, with zlib when
 * the input's blocks are, else with zstd, whether the input is compressed or
 * not: its snapshots add about 1.2 KiB each (0.1 % of a default trace at the
 * default interval), which the input's own coding leaves no room for.
 * Compressed, records are packed (ptt_block_pack), which zstd takes to a
 * sixth of the compact coding compressed (sqlite3: a 59 MB default trace
 * and its 4.6 MB -z trace give copies of 5.2 MB and 0.48 MB; compact and zstd:
 * 28 MB and 2.8 MB); uncompressed (-z 0), in the compact coding.
 */
static int open_sink(struct ptt_sink **sink, const struct ptt_reader *r, int zlevel)
{
	unsigned comp = r ? ptt_reader_compressed(r) : 0;
	int rc = ptt_sink_open(sink, stdout, PTT_FORM_BINARY, zlevel >= 0 ? zlevel : 1);
	if (!rc && zlevel == 0)
		rc = ptt_writer_set_compact(ptt_sink_writer(*sink), 1);
	if (!rc && zlevel < 0 && comp == PTT_BLOCK_ZLIB)
		rc = ptt_writer_set_compressor(ptt_sink_writer(*sink), PTT_COMP_ZLIB);
	return rc;
}

/* A snapshot of c after the first pos events (the latest at ticks); a too large one is left out (1). */
static int snapshot(struct ptt_sink *sink, struct fcontext *c, const struct ptt_reader *r, uint64_t pos, uint64_t ticks)
{
	struct ptt_writer *w = ptt_sink_writer(sink);
	int rc = ptt_writer_snapshot_begin(w, pos, ticks);
	if (!rc)
		rc = fcontext_snapshot(c, ptt_reader_types(r), put, w);
	if (!rc)
		rc = ptt_writer_snapshot_end(w);
	return rc == PTT_E_BADRECORD ? 1 : rc;
}

struct index {
	uint64_t interval;
	int zlevel;                 /* -1: as the input */
	struct ptt_sink *sink;
	struct fcontext *ctx;
	uint64_t written, max_ticks, left_out;
	int werr;
};

static int start(void *ctx, struct pass *p)
{
	struct index *x = ctx;
	(void)p;
	return (x->ctx = fcontext_new()) ? PASS_GO : PASS_FAIL;
}

/* Before the model takes ev: the sink at the first event, a snapshot of the state before ev every interval. */
static int event(void *ctx, struct pass *p, struct ptt_event *ev)
{
	struct index *x = ctx;
	(void)ev;
	if (!x->sink && (x->werr = open_sink(&x->sink, p->in.r, x->zlevel)) != 0)
		return PASS_FAIL;
	if (x->written && x->written % x->interval == 0 &&
	    (x->werr = snapshot(x->sink, x->ctx, p->in.r, x->written, x->max_ticks)) != 0) {
		if (x->werr < 0)
			return PASS_FAIL;
		x->left_out++;
		x->werr = 0;
	}
	return PASS_GO;
}

/* Once the model took it: ev kept in the context, and copied. */
static int after(void *ctx, struct pass *p, struct ptt_event *ev)
{
	struct index *x = ctx;
	fcontext_event(x->ctx, ev);
	if (ev->ticks > x->max_ticks)
		x->max_ticks = ev->ticks;
	if ((x->werr = ptt_sink_event(x->sink, p->in.r, ev)) != 0)
		return PASS_FAIL;
	x->written++;
	return PASS_GO;
}

static int report(void *ctx, struct pass *p)
{
	struct index *x = ctx;
	if (!x->sink && !x->werr)
		x->werr = open_sink(&x->sink, NULL, x->zlevel); /* no events: the header and end alone */
	if (x->sink) {
		int crc = ptt_sink_close(x->sink, p->in.r);
		if (!x->werr)
			x->werr = crc;
	}
	if (x->werr && x->werr != -EPIPE)
		fprintf(stderr, "ptt-index: write error: %s\n", ptt_strerror(x->werr));
	if (x->left_out)
		fprintf(stderr, "ptt-index: %llu snapshots left out (more than 4 MiB of state)\n",
			(unsigned long long)x->left_out);
	return x->werr ? PASS_FAIL : PASS_GO;
}

int main(int argc, char **argv)
{
	struct index x = { .interval = 100000, .zlevel = -1 };
	int rc = parse_args(argc, argv, &x.interval, &x.zlevel);
	if (rc >= 0)
		return rc;
	if (isatty(STDOUT_FILENO)) {
		fprintf(stderr, "ptt-index: the binary copy goes to stdout: redirect it to a file\n");
		return 2;
	}
	const struct pass_tool tool = { .prog = "ptt-index", .ctx = &x, .need = PASS_MODEL, .start = start,
					.event = event, .after = after, .report = report };
	struct pass p;
	rc = pass_run(&p, &tool, argc - optind, argv + optind);
	fcontext_free(x.ctx);
	return rc;
}

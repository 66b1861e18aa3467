/*
 * fuzz_snapshot.c - libFuzzer harness for snapshots (ptt-index(1),
 * ptt-trace(5) "Snapshot blocks"): the index at a file's end, the snapshot
 * blocks it leads to and the state they restore.
 *
 * Each input, a trace (the seeds: ptt-index copies of test/cli/fixtures),
 * is made right where checksums would stop a mutation (fuzz_fix_up: block
 * CRCs; the index's offsets hold while compressed payloads keep their
 * length), then read three ways, on a seekable file as a user's:
 *  1. the whole trace read, then ptt_reader_snapshot for windows that
 *     start inside it, each record of the snapshot formatted, then the rest
 *     of the trace read;
 *  2. ptt-filter's main() (built with -Dmain=ptt_filter_main), --from and
 *     --to that window: the snapshot's records restored into the model and
 *     the window's context written (to /dev/null), when the input's last
 *     byte is even;
 *  3. ptt-index's main() (its source included below as ptt_index_main),
 *     -i 7: the state in force, taken from the model every 7 events, written
 *     as snapshots, when the last byte is 1 mod 4.
 * 2 and 3 cost a few ms a run under ASan, 1 a tenth of that.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

#include "../formats/ptt_trace.h"
#include "fuzz.h"

int ptt_index_main(int argc, char **argv);
#undef main
#define main ptt_index_main
#include "../convert/ptt-index.c"
#undef main

int ptt_filter_main(int argc, char **argv);

static int input_fd = -1;

static int show(void *ctx, struct ptt_event *ev, unsigned kind)
{
	char line[4096];
	(void)ctx;
	(void)kind;
	ptt_text_format_event(ev, line, sizeof line);
	return 0;
}

/* Read the whole trace (from a snapshot before from_ns when one is asked); the first and last event's times. */
static void read_trace(int fd, int snap, uint64_t from_ns, uint64_t *first, uint64_t *last)
{
	struct ptt_reader *r = NULL;
	if (ptt_reader_open(&r, fd, "fuzz") == 0 && (!snap || ptt_reader_snapshot(r, from_ns, 0, show, NULL) >= 0)) {
		struct ptt_event ev;
		char line[4096];
		for (unsigned long n = 0; n < 10000000ul; n++) { /* a bound: a broken promise of progress is a hang */
			int rc = ptt_reader_next(r, &ev);
			if (rc == 0)
				break;
			if (rc < 0)
				continue;
			ptt_text_format_event(&ev, line, sizeof line);
			if (first && !*first)
				*first = ev.ns;
			if (last)
				*last = ev.ns;
		}
	}
	ptt_reader_close(r);
}

/* A tool's main() on the input, its output and its warnings to /dev/null (fd 2 stays libFuzzer's). */
static void run_main(int (*fn)(int, char **), char **argv, int argc)
{
	static FILE *null;
	if (!null && !(null = fopen("/dev/null", "w")))
		abort();
	if (!freopen("/dev/null", "w", stdout))
		abort();
	optind = 1;
	FILE *err = stderr;
	stderr = null;
	fn(argc, argv);
	stderr = err;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 16)
		return 0;
	size_t fsize;
	uint8_t *fixed = fuzz_fix_up(data, size, &fsize);
	const uint8_t *in = fixed ? fixed : data;
	if (fuzz_load_fd(&input_fd, in, fixed ? fsize : size) != 0) {
		free(fixed);
		return 0;
	}
	/* windows at a third and two thirds of the trace (the input's last byte moves them): the
	 * snapshots before them are found through the index, or by walking the blocks without one */
	unsigned last = data[size - 1];
	uint64_t t0 = 0, t1 = 0;
	read_trace(input_fd, 0, 0, &t0, &t1);
	uint64_t span = t1 > t0 ? t1 - t0 : 1, from_ns = t0 + span / 3 + span * last / 768;
	read_trace(input_fd, 1, from_ns, NULL, NULL);
	read_trace(input_fd, 1, t0 + 2 * span / 3, NULL, NULL);
	char path[64], from[32], to[32];
	snprintf(path, sizeof path, "/proc/self/fd/%d", input_fd);
	snprintf(from, sizeof from, "--from=%luns", (unsigned long)from_ns);
	snprintf(to, sizeof to, "--to=%luns", (unsigned long)(from_ns + span / 4));
	if (last % 2 == 0) {
		lseek(input_fd, 0, SEEK_SET);
		char *argv[] = { "ptt-filter", from, to, path, NULL };
		run_main(ptt_filter_main, argv, 4);
	} else if (last % 4 == 1) {
		lseek(input_fd, 0, SEEK_SET);
		char *argv[] = { "ptt-index", "-i", "7", path, NULL };
		run_main(ptt_index_main, argv, 4);
	}
	free(fixed);
	return 0;
}

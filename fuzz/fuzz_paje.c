/*
 * fuzz_paje.c - libFuzzer harness for one whole tool path: the reader, the
 * state model and the Paje writer, through ptt-paje's own main() (built
 * with -Dmain=ptt_paje_main), so that it follows ptt-paje whatever the
 * model behind it becomes.  The Paje and the warnings go to /dev/null;
 * --objects and --critical are on, the widest path (the critical path's
 * analysis runs in the first pass, on a model of its own: critical.h).
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

#include "fuzz.h"

int ptt_paje_main(int argc, char **argv);

static int input_fd = -1;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static FILE *null;
	if (!null && !(null = fopen("/dev/null", "w")))
		abort();
	/* a stdout never written yet, as ptt-paje's main expects (its setvbuf comes before any output) */
	if (!freopen("/dev/null", "w", stdout))
		abort();
	if (fuzz_load_fd(&input_fd, data, size) != 0)
		return 0;
	char path[64];
	snprintf(path, sizeof path, "/proc/self/fd/%d", input_fd);
	char *argv[] = { "ptt-paje", "--objects", "--critical", path, NULL };
	optind = 1;
	/* ptt-paje's warnings (one per damaged record) are formatted but not written: the stdio
	 * stream goes to /dev/null, fd 2 stays the sanitizers' and libFuzzer's */
	FILE *err = stderr;
	stderr = null;
	ptt_paje_main(4, argv);
	stderr = err;
	return 0;
}

/* record_opts.h - ptt-record's command line, environment and preflight checks. */
#ifndef PTT_RECORD_OPTS_H
#define PTT_RECORD_OPTS_H

#include <limits.h>
#include <stdint.h>

#include "../shm.h"

#ifndef PTT_VERSION
#define PTT_VERSION "0.1.0"
#endif

struct record_opts {
	const char *output;
	uint64_t ring_bytes;  /* per thread, a power of two */
	uint32_t nrings;
	int discard;
	int flight;           /* --flight: rings overwrite, written at the end and on SIGUSR1 */
	int zlevel;
	int compressor;       /* -Z: PTT_COMP_ZSTD (default) or PTT_COMP_ZLIB */
	int level;
	int quiet;
	int force;            /* binary to a terminal all the same */
	int out_is_pipe;
	int out_is_file;      /* a regular file: the closing summary reads it back */
	uint64_t max_size;    /* rotate output files at this size (0: one file) */
	uint32_t max_files;   /* keep only the last N files (0: all) */
	int stacks;           /* enum ptt_stack_mode (--stacks) */
	int streams;          /* --streams: the rings' spans written as they lie (format version 3), the readers merge;
			       * 2: --streams=coded, each thread codes its own records (PTT_SHM_CODED) */
	uint32_t class_mask;
	char classes[256];
	char libptt[PATH_MAX];
};

/* The rings' size when -b does not say (twice the L2 cache, 1 to 8 MiB). */
uint64_t record_default_ring_bytes(void);
/* Index of the program in argv; -1 after --help/--version, -2 on a usage error (reported). */
int record_parse_opts(struct record_opts *o, int argc, char **argv);
/* Warn about targets the runtime cannot enter (static, setuid). */
void record_preflight(const struct record_opts *o, const char *prog);
/* prog's path as execvp would find it, in out: 0, or -1 when none is an executable file. */
int record_find_program(const char *prog, char *out, size_t size);

#endif

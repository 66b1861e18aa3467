/* record_opts.c - ptt-record's options, PTHREAD_NPTL_TRACE, and checks on the target. */

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../formats/ptt_trace.h"
#include "record_opts.h"

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: ptt-record [OPTION]... [--] PROGRAM [ARG]...\n"
		"Run PROGRAM with its pthread calls traced; write the trace to a file.\n"
		"\n"
		"  -o, --output=FILE     write the trace to FILE (default trace.ptt; - for stdout, where\n"
		"                        the program's own stdout goes to stderr; see EXAMPLES in\n"
		"                        ptt-record(1) for a pipe that keeps it)\n"
		"      --force           write a binary trace to stdout even when it is a terminal\n"
		"  -b, --buffer=SIZE     ring size per thread, with k/M/G suffix (default twice the L2\n"
		"                        cache, 1M to 8M: %lluM here)\n"
		"  -t, --threads=N       cap on the threads alive at once that get a ring (default 65536;\n"
		"                        rings are added as threads need them)\n"
		"  -d, --discard         never make the program wait: drop (and count) events when a ring is full\n"
		"  -z, --compress[=LEVEL] compress blocks: at LEVEL 1-9, attached (-z5, --compress=5) or as\n"
		"                        the next argument if that is one digit (-z 5); without one, at the\n"
		"                        compressor's fastest (zstd -3, zlib 1); blocks the compressor has\n"
		"                        not done when the recorder needs room are written raw\n"
		"  -Z, --compressor=NAME with -z, compress with zstd (default) or zlib\n"
		"      --flight[=SIZE]   flight recorder: keep only each thread's last SIZE bytes of events\n"
		"                        (default as -b) in memory and write them when the program ends or dies,\n"
		"                        and to FILE.N (N = 1, 2, ...) on each SIGUSR1 to ptt-record\n"
		"  -e, --events=CLASSES  record only these classes (comma list of thread, mutex, cond,\n"
		"                        rwlock, barrier, sem, spin, futex, process, user; 'all'; default all\n"
		"                        but spin)\n"
		"  -l, --level=N         detail level 1-3 (default 2)\n"
		"      --stacks=WHICH    the callers' stacks: blocking (waits, the default), all (every\n"
		"                        lock acquisition too) or none\n"
		"  -m, --max-size=SIZE   split the trace into files FILE.0001, FILE.0002, ... of about SIZE\n"
		"                        bytes (k/M/G suffix); the filters read them, named in order, as one trace\n"
		"  -f, --max-files=N     with -m, keep only the last N files (with --streams, none removed\n"
		"                        before its successor's state in force is written)\n"
		"  -q, --quiet           no summary on stderr at the end (counts, files, contended locks)\n"
		"      --streams[=coded] write each thread's records as they lie in its ring (format version 3:\n"
		"                        readers merge the threads' streams); not with --flight; with -m,\n"
		"                        a part's state in force is written at its end once the part is read\n"
		"                        back at idle priority;\n"
		"                        coded: each thread codes its own records compactly (version 4;\n"
		"                        rings of at least 64k; -z compresses them at idle priority)\n"
		"  -h, --help            show this help and exit\n"
		"      --version         show the version and exit\n"
		"\n"
		"Exit status: the program's (128+N when it was killed by signal N), also when the\n"
		"trace could not be written while it ran; 1 when recording cannot start,\n"
		"2 on a usage error, 126/127 when PROGRAM cannot be run.\n",
		(unsigned long long)(record_default_ring_bytes() >> 20));
}

static int parse_size(const char *s, uint64_t *out)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || end == s)
		return -1;
	switch (*end) {
	case 'k': case 'K': v <<= 10; end++; break;
	case 'm': case 'M': v <<= 20; end++; break;
	case 'g': case 'G': v <<= 30; end++; break;
	}
	if (*end == 'B' || *end == 'b')
		end++;
	if (*end)
		return -1;
	*out = v;
	return 0;
}

static int parse_classes(struct record_opts *o, const char *list)
{
	uint32_t mask = 0;
	char buf[256];
	snprintf(buf, sizeof buf, "%s", list);
	for (char *save, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (strcmp(tok, "all") == 0) {
			mask |= ~0u;
			continue;
		}
		int c = ptt_class_from_name(tok);
		if (c < 0 || c == PTT_CLASS_META || c == PTT_CLASS_RECORDER)
			return -1;
		mask |= 1u << c;
	}
	if (!mask)
		return -1;
	o->class_mask = mask | 1u << PTT_CLASS_META | 1u << PTT_CLASS_PROCESS | 1u << PTT_CLASS_THREAD;
	snprintf(o->classes, sizeof o->classes, "%s", list);
	return 0;
}

/* libptt.so beside us: <bindir>/../lib/libptt.so, unless PTT_LIBPTT names it. */
static int find_libptt(struct record_opts *o)
{
	const char *env = getenv("PTT_LIBPTT");
	if (env && *env) {
		snprintf(o->libptt, sizeof o->libptt, "%s", env);
		return access(o->libptt, R_OK);
	}
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	if (n <= 0)
		return -1;
	exe[n] = 0;
	char *slash = strrchr(exe, '/');
	if (slash)
		*slash = 0;
	const char *cands[] = { "/../lib/libptt.so", "/../lib/ptt/libptt.so", "/libptt.so" };
	for (size_t i = 0; i < sizeof cands / sizeof cands[0]; i++) {
		char p[PATH_MAX + 64];
		snprintf(p, sizeof p, "%s%s", exe, cands[i]);
		if (realpath(p, o->libptt) && access(o->libptt, R_OK) == 0)
			return 0;
	}
	return -1;
}

/*
 * The seeds' PTHREAD_NPTL_TRACE=<handler>[:<args>][:<level>]: for ptt the
 * handler is "ptt" (the only one: ptt-record is the handler), args is a
 * class list as for -e, level as for -l.  Options given on the command line win.
 */
static int apply_nptl_trace(struct record_opts *o, int have_e, int have_l)
{
	const char *v = getenv("PTHREAD_NPTL_TRACE");
	if (!v || !*v)
		return 0;
	char buf[512];
	snprintf(buf, sizeof buf, "%s", v);
	char *handler = buf, *args = strchr(buf, ':'), *level = NULL;
	if (args) {
		*args++ = 0;
		level = strrchr(args, ':');
		if (level)
			*level++ = 0;
		else if (args[0] >= '0' && args[0] <= '9' && !args[1]) {
			level = args;
			args = NULL;
		}
	}
	if (strcmp(handler, "ptt") != 0) {
		fprintf(stderr, "ptt-record: PTHREAD_NPTL_TRACE: unknown handler '%s' (ptt knows 'ptt')\n", handler);
		return -1;
	}
	if (args && *args && !have_e && parse_classes(o, args) != 0) {
		fprintf(stderr, "ptt-record: PTHREAD_NPTL_TRACE: bad class list '%s'\n", args);
		return -1;
	}
	if (level && *level && !have_l) {
		o->level = atoi(level);
		if (o->level < 1 || o->level > 3) {
			fprintf(stderr, "ptt-record: PTHREAD_NPTL_TRACE: level must be 1-3\n");
			return -1;
		}
	}
	return 0;
}

/*
 * The rings' size when -b does not say: twice the processor's L2 cache, a
 * power of two from 1 MiB to 8 MiB (2 MiB when the cache is not told).  A
 * ring that fits in the writer's L2 stays there, so every line the recorder
 * reads is a dirty line of the other core's cache, and every line the writer
 * takes again on its next lap is one the recorder holds: measured on a
 * 1 MiB-L2 EPYC, the 1-thread lossless lock loop cost 23 ns an event with
 * 1 MiB rings and 16.5 (the trace path's own) with 2 MiB, the recorder 12-13
 * ns of processor time an event against 9-10, 2 threads 17 against 16.
 */
uint64_t record_default_ring_bytes(void)
{
	long l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
	uint64_t want = l2 > 0 ? 2 * (uint64_t)l2 : 2u << 20, bytes = 1u << 20;
	while (bytes < want && bytes < (8u << 20))
		bytes <<= 1;
	return bytes;
}

/* -b and --flight=SIZE: a power of two from 4k to 2G. */
static int parse_ring_size(const char *opt, const char *arg, uint64_t *out)
{
	if (parse_size(arg, out) || *out < 4096 || *out > (1ull << 31) || (*out & (*out - 1))) {
		fprintf(stderr, "ptt-record: %s: size must be a power of two from 4k to 2G: '%s'\n", opt, arg);
		return -1;
	}
	return 0;
}

/* -t and -f: a whole number from 1 to max. */
static int parse_count(const char *arg, long max, uint32_t *out)
{
	char *end;
	long n = strtol(arg, &end, 10);
	if (*end || n < 1 || n > max)
		return -1;
	*out = (uint32_t)n;
	return 0;
}

/* A word among a few (--stacks, -Z) and the value it stands for. */
struct choice {
	const char *word;
	int value;
};

static const struct choice stack_words[] = {
	{ "none", PTT_STACKS_NONE }, { "blocking", PTT_STACKS_BLOCKING }, { "all", PTT_STACKS_ALL }, { NULL, 0 },
};
static const struct choice compressor_words[] = { { "zstd", PTT_COMP_ZSTD }, { "zlib", PTT_COMP_ZLIB }, { NULL, 0 } };

/* *out: the value of arg among words; -1 (said, with the words in list) when it is none of them. */
static int parse_choice(const char *opt, const char *list, const struct choice *words, const char *arg, int *out)
{
	for (; words->word; words++)
		if (strcmp(arg, words->word) == 0) {
			*out = words->value;
			return 0;
		}
	fprintf(stderr, "ptt-record: %s: %s: '%s'\n", opt, list, arg);
	return -1;
}

/*
 * -z: getopt takes an optional argument only attached (-z5); a bare -z
 * also takes the next word when it is one digit, so -z 5 means level 5
 * rather than a program named "5" (-z -- 5 runs that one).
 */
static int parse_zlevel(struct record_opts *o, const char *arg, int argc, char **argv)
{
	if (!arg && optind < argc && argv[optind][0] >= '0' && argv[optind][0] <= '9' && !argv[optind][1])
		arg = argv[optind++];
	o->zlevel = arg && arg[0] >= '1' && arg[0] <= '9' && !arg[1] ? arg[0] - '0' : arg ? 0 : PTT_ZLEVEL_FAST;
	if (!o->zlevel) {
		fprintf(stderr, "ptt-record: -z: level must be 1-9: '%s'\n", arg);
		return -1;
	}
	return 0;
}

/* The options given, for the checks that go across them and for PTHREAD_NPTL_TRACE. */
struct opts_given {
	int e, l, z;
};

/* One option: 0, -1 after --help/--version, -2 on a usage error (said). */
static int take_option(struct record_opts *o, int c, int argc, char **argv, struct opts_given *given)
{
	int bad = 0;
	switch (c) {
	case 'o': o->output = optarg; break;
	case 'b': bad = parse_ring_size("-b", optarg, &o->ring_bytes); break;
	case 't':
		if ((bad = parse_count(optarg, PTT_MAX_RINGS, &o->nrings)))
			fprintf(stderr, "ptt-record: -t: a number from 1 to %d: '%s'\n", PTT_MAX_RINGS, optarg);
		break;
	case 'd': o->discard = 1; break;
	case 'S': bad = parse_choice("--stacks", "none, blocking or all", stack_words, optarg, &o->stacks); break;
	case 'R':
		o->flight = 1;
		bad = optarg && parse_ring_size("--flight", optarg, &o->ring_bytes);
		break;
	case 'z': bad = parse_zlevel(o, optarg, argc, argv); break;
	case 'Z':
		bad = parse_choice("-Z", "zstd or zlib", compressor_words, optarg, &o->compressor);
		given->z = 1;
		break;
	case 'e':
		given->e = 1;
		if ((bad = parse_classes(o, optarg)))
			fprintf(stderr, "ptt-record: -e: bad class list '%s'\n", optarg);
		break;
	case 'l':
		given->l = 1;
		o->level = atoi(optarg);
		if ((bad = o->level < 1 || o->level > 3 || optarg[1]))
			fprintf(stderr, "ptt-record: -l: level must be 1, 2 or 3\n");
		break;
	case 'q': o->quiet = 1; break;
	case 'm':
		if ((bad = parse_size(optarg, &o->max_size) || o->max_size < 65536))
			fprintf(stderr, "ptt-record: -m: a size of at least 64k: '%s'\n", optarg);
		break;
	case 'f':
		if ((bad = parse_count(optarg, 1000000, &o->max_files)))
			fprintf(stderr, "ptt-record: -f: a number of files from 1: '%s'\n", optarg);
		break;
	case 'h': usage(stdout); return -1;
	case 'V': printf("ptt-record (ptt) %s\n", PTT_VERSION); return -1;
	case 'F': o->force = 1; break;
	case 'T':
		if (!optarg)
			o->streams = 1;
		else if (strcmp(optarg, "coded") == 0)
			o->streams = 2;
		else {
			fprintf(stderr, "ptt-record: --streams: 'coded' or nothing: '%s'\n", optarg);
			bad = 1;
		}
		break;
	default:
		fprintf(stderr, "Try 'ptt-record --help' for more information.\n");
		return -2;
	}
	return bad ? -2 : 0;
}

/* The options that do not go together: 0, or -2 (said). */
static int check_options(const struct record_opts *o, const struct opts_given *given)
{
	const char *why = NULL;
	int to_stdout = strcmp(o->output, "-") == 0;
	if (o->max_size && to_stdout)
		why = "-m: cannot split a trace written to stdout";
	else if (to_stdout && isatty(1) && !o->force)
		why = "refusing to write a binary trace to a terminal: use -o FILE, a pipe, or --force";
	else if (o->flight && (o->max_size || o->discard || to_stdout))
		why = "--flight: writes one file at the end (not with -m, -d or -o -)";
	else if (given->z && !o->zlevel)
		why = "-Z needs -z";
	else if (o->max_files && !o->max_size)
		why = "-f needs -m";
	else if (o->streams && o->flight)
		why = "--streams: not with --flight (its file begins with the state in force, which the merge keeps)";
	else if (o->streams == 2 && o->ring_bytes < 65536)
		why = "--streams=coded: rings of at least 64k (-b)";
	if (why)
		fprintf(stderr, "ptt-record: %s\n", why);
	return why ? -2 : 0;
}

int record_parse_opts(struct record_opts *o, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "output", required_argument, 0, 'o' }, { "buffer", required_argument, 0, 'b' },
		{ "threads", required_argument, 0, 't' }, { "discard", no_argument, 0, 'd' },
		{ "compress", optional_argument, 0, 'z' }, { "events", required_argument, 0, 'e' },
		{ "level", required_argument, 0, 'l' }, { "quiet", no_argument, 0, 'q' },
		{ "max-size", required_argument, 0, 'm' }, { "max-files", required_argument, 0, 'f' },
		{ "flight", optional_argument, 0, 'R' }, { "stacks", required_argument, 0, 'S' },
		{ "help", no_argument, 0, 'h' }, { "version", no_argument, 0, 'V' },
		{ "force", no_argument, 0, 'F' }, { "compressor", required_argument, 0, 'Z' },
		{ "streams", optional_argument, 0, 'T' }, { 0, 0, 0, 0 },
	};
	memset(o, 0, sizeof *o);
	o->output = "trace.ptt";
	o->ring_bytes = record_default_ring_bytes();
	o->nrings = PTT_MAX_RINGS;
	o->level = 2;
	o->stacks = PTT_STACKS_BLOCKING;
	parse_classes(o, "process,thread,mutex,cond,rwlock,barrier,sem,user,futex");
	struct opts_given given = { 0, 0, 0 };
	int c, rc;
	while ((c = getopt_long(argc, argv, "+o:b:t:dz::Z:e:l:m:f:qh", longopts, NULL)) != -1)
		if ((rc = take_option(o, c, argc, argv, &given)))
			return rc;
	if (optind >= argc) {
		fprintf(stderr, "ptt-record: no program given\nTry 'ptt-record --help' for more information.\n");
		return -2;
	}
	if (check_options(o, &given) || apply_nptl_trace(o, given.e, given.l))
		return -2;
	if (find_libptt(o)) {
		fprintf(stderr, "ptt-record: cannot find libptt.so (set PTT_LIBPTT to its path)\n");
		return -2;
	}
	return optind;
}

int record_find_program(const char *prog, char *out, size_t size)
{
	if (strchr(prog, '/')) {
		snprintf(out, size, "%s", prog);
		return access(out, X_OK);
	}
	const char *path = getenv("PATH");
	char buf[4096];
	snprintf(buf, sizeof buf, "%s", path ? path : "/usr/bin:/bin");
	for (char *save, *dir = strtok_r(buf, ":", &save); dir; dir = strtok_r(NULL, ":", &save)) {
		snprintf(out, size, "%s/%s", *dir ? dir : ".", prog);
		if (access(out, X_OK) == 0)
			return 0;
	}
	return -1;
}

void record_preflight(const struct record_opts *o, const char *prog)
{
	char path[PATH_MAX + 256];
	struct stat st;
	(void)o;
	if (record_find_program(prog, path, sizeof path) || stat(path, &st))
		return; /* exec will say what is wrong */
	if ((st.st_mode & (S_ISUID | S_ISGID)) && geteuid() != 0)
		fprintf(stderr, "ptt-record: %s: set-user/group-ID program: the loader ignores LD_PRELOAD, the trace will hold no program events\n", prog);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	Elf64_Ehdr eh;
	if (read(fd, &eh, sizeof eh) == (ssize_t)sizeof eh && memcmp(eh.e_ident, ELFMAG, SELFMAG) == 0 &&
	    eh.e_ident[EI_CLASS] == ELFCLASS64) {
		int interp = 0;
		for (int i = 0; i < eh.e_phnum; i++) {
			Elf64_Phdr ph;
			if (pread(fd, &ph, sizeof ph, (off_t)(eh.e_phoff + (uint64_t)i * eh.e_phentsize)) != (ssize_t)sizeof ph)
				break;
			if (ph.p_type == PT_INTERP)
				interp = 1;
		}
		if (!interp)
			fprintf(stderr, "ptt-record: %s: statically linked: libptt.so cannot be preloaded, the trace will hold no program events\n", prog);
	}
	close(fd);
}

/* cli.h - what every ptt command-line filter shares: input, diagnostics, output checks. */
#ifndef PTT_CLI_H
#define PTT_CLI_H

#include <stdint.h>
#include <stdio.h>

#include "../../formats/ptt_trace.h"

#ifndef PTT_VERSION
#define PTT_VERSION "0.1.0"
#endif

struct cli_input {
	const char *prog;   /* program name for messages */
	const char *name;   /* the input being read, for messages */
	char label[512];    /* all the inputs, for summaries: "FILE" or "FILE (and N more)" */
	char **paths;       /* the inputs, read in order as one trace */
	int npaths, next_path;
	int fd;
	struct ptt_reader *r;
	unsigned long problems; /* damaged stretches seen */
	unsigned long damaged, reordered, shown; /* of them: reader damage, time going back; lines printed */
	/* progress on stderr, only when it is a terminal and stdout is not */
	int progress;
	unsigned long long events, next_check, file_size;
	double last_shown;
	int ordered;            /* set by the caller: deliver times that never decrease */
	struct loss *loss;      /* set by the caller: told every event and damaged stretch (fidelity.h) */
	int damage_open;        /* damage seen since the last good event */
	uint64_t good_ns;       /* time of the last good event */
	int behind;             /* the previous event was moved forward */
	uint64_t last_ns;
	struct ptt_limits limits; /* the trace's limit events, summed up (cli_say_limits) */
	int limits_said;
};

/*
 * Open the npaths inputs of paths (none: stdin; "-": stdin), to be read in
 * order as one trace (a rotated recording's files).  An input that cannot be
 * opened or is no trace is reported ("prog: name: reason") and skipped, and
 * counts as a problem; returns -1 when none of them can be read.
 */
int cli_open(struct cli_input *in, const char *prog, int npaths, char **paths);
/* Next event; damage is reported on stderr (the first 3 problems; cli_close sums up the rest) and skipped.
 * With in->ordered, an event earlier than one before it (a damaged or spliced
 * trace) is moved forward to that time, and each such stretch counts as a problem. */
int cli_next(struct cli_input *in, struct ptt_event *ev);
/*
 * The limits the trace met (its limit events: a table full, a string cut,
 * a join target not known), a sentence a line, each line starting with
 * prefix: the one place every tool reports them, once.  A tool with a
 * report of its own (ptt-dump --info and --check, ptt-stat) puts them in it;
 * for the others cli_close writes them on stderr ("prog: FILE: note: ...").
 * Call after the whole input is read.
 */
void cli_say_limits(struct cli_input *in, FILE *out, const char *prefix);
/* Close; when more problems were seen than shown, one line sums them all up; the limits not said yet
 * are said on stderr.  Returns 1 if the input had problems, else 0 (limits are not problems). */
int cli_close(struct cli_input *in);
/* Flush stdout and check for write errors: 0 or 1 (reported). */
int cli_finish_output(const char *prog);
void cli_print_version(const char *prog);
/*
 * The window a trace was cut to (ptt-filter writes window_from_ns in its
 * header and window_to_ns with its end): *from and *to set, each only when
 * known; 1 if the trace is a window, else 0.  Ask after the whole input is
 * read for the end.
 */
int cli_window(const struct ptt_reader *r, uint64_t *from, uint64_t *to);
/*
 * The one rule of --from/--to (ptt-critical, ptt-stat): an interval [*b, *e]
 * counts for its part inside [from, to] (0: no bound), clipped in place;
 * 1 when some of it (an instant too) lies inside, else 0.
 */
int cli_window_clip(uint64_t from, uint64_t to, uint64_t *b, uint64_t *e);
/* The argument of --from (is_from) or --to into *from or *to: 0, or the message on stderr and 2. */
int cli_window_arg(const char *prog, int is_from, const char *arg, uint64_t *from, uint64_t *to);
/* --from and --to read: 0, or "PROG: --from must come before --to" and 2. */
int cli_window_check(const char *prog, uint64_t from, uint64_t to);

/*
 * The time every timeline (ptt-paje, ptt-json, ptt-csv) shows: of a window
 * cut by ptt-filter, relative to the window's start, states running to its
 * end; else the trace's own.  cli_clock_event shifts an event just read;
 * cli_clock_end gives the time the states end, from the last event's.
 */
struct cli_clock {
	int known;             /* the header was read: window and from are set */
	int window;
	uint64_t from, to;
};
void cli_clock_event(struct cli_clock *c, const struct ptt_reader *r, struct ptt_event *ev);
uint64_t cli_clock_end(struct cli_clock *c, const struct ptt_reader *r, uint64_t last_ns);
/*
 * --skip-frames=REGEX, shared by every tool that names sites: the long
 * option's getopt value and its --help line.  cli_skip_frames adds the
 * pattern to the lock layer (lockframes.h): 0, or 2 after a usage message.
 */
#define CLI_OPT_SKIP_FRAMES 0x1001
#define CLI_SKIP_FRAMES_LONGOPT { "skip-frames", required_argument, 0, CLI_OPT_SKIP_FRAMES }
#define CLI_SKIP_FRAMES_HELP \
	"      --skip-frames=REGEX  a frame whose function matches REGEX is part of the lock layer:\n" \
	"                    the site named is the first frame of the stack past it (repeatable);\n" \
	"                    '!REGEX': never part of it (a wrapper the trace made one)\n"
int cli_skip_frames(const char *prog, const char *regex);
/* For usage errors: "Try 'prog --help'" and return 2. */
int cli_usage_error(const char *prog);

#endif

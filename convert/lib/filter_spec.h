/* filter_spec.h - ptt-filter's selection: parsing the options and matching events. */
#ifndef PTT_FILTER_SPEC_H
#define PTT_FILTER_SPEC_H

#include <stdint.h>

#include "../../formats/ptt_trace.h"
#include "symbols.h"

#define SPEC_MAX 64

struct filter_spec {
	uint32_t pids[SPEC_MAX];
	char *pid_hosts[SPEC_MAX]; /* HOST of --pid=N@HOST until spec_resolve_hosts, else NULL */
	uint8_t pid_exact[SPEC_MAX]; /* resolved N@HOST: that host's alone (else N on every host that has one) */
	unsigned npids;
	char *threads[SPEC_MAX]; /* tid or name */
	unsigned nthreads;
	char *objects[SPEC_MAX]; /* 0x address or name */
	const char *object_opts[SPEC_MAX]; /* the option each came with: --mutex or --object */
	unsigned nobjects;
	/* which pids, threads and objects matched some event of the input */
	uint8_t pid_seen[SPEC_MAX], thread_seen[SPEC_MAX], object_seen[SPEC_MAX];
	char *events[SPEC_MAX];  /* event name prefix or class name */
	unsigned nevents;
	uint64_t from_ns, to_ns;  /* to_ns UINT64_MAX: no end */
	uint64_t first, count;    /* count UINT64_MAX: no end */
	int invert;
	int has_window;           /* --from or --first given */
	/* what the trace has, for the nearest names of a refused value (spec_collect) */
	struct ptt_map seen_objects; /* ptt_obj_key(pid, addr) -> the first event's pid + 1 and addr (struct spec_obj) */
	struct ptt_map seen_threads; /* pid << 32 | tid -> (void *)1 */
	struct ptt_map seen_pids;    /* pid + 1 -> (void *)1 */
};

/* 1 when the selection names processes, threads or objects: they can be checked against the trace. */
int spec_has_names(const struct filter_spec *s);
/* Remember the processes, threads and objects of ev: the names a refusal offers (spec_warn_unseen). */
int spec_collect(struct filter_spec *s, const struct ptt_event *ev);

void spec_init(struct filter_spec *s);
struct hosts;
/* After a first reading (spec_collect): each --pid=N@HOST becomes the merged trace's number of N on
 * HOST (ptt-merge), seen or not.  0, or 1 with one line on stderr per host the trace does not have. */
int spec_resolve_hosts(struct filter_spec *s, const struct hosts *hs, const char *prog);
/* 1 when s keeps every event (no selection, no window, not inverted). */
int spec_selects_all(const struct filter_spec *s);
/* Add a comma list; returns 0 or -1 with a message on stderr. */
int spec_add_list(struct filter_spec *s, char **list, unsigned *n, const char *arg, const char *opt);
int spec_add_pids(struct filter_spec *s, const char *arg);
/* "1.5s", "200ms", "30us", "100ns", "2" (seconds); -1 if malformed */
int spec_parse_time(const char *arg, uint64_t *ns);
/*
 * Does ev satisfy the criteria (pid, thread, object, event; not the window,
 * not --invert)?  Threads and objects by number, given name, or, with syms
 * (may be NULL), the name the other tools print (symbol, module+0xoff).
 */
int spec_match(const struct filter_spec *s, const struct ptt_event *ev, const struct ptt_names *names, struct ptt_syms *syms);
/* Note which --pid, --thread and --object values ev matches (whatever the other criteria). */
void spec_note_seen(struct filter_spec *s, const struct ptt_event *ev, const struct ptt_names *names, struct ptt_syms *syms);
/*
 * Report each --pid, --thread or --object value that matched nothing read,
 * one line each, with the nearest names the trace has (from spec_collect:
 * a prefix, a substring, then a few edits away; at most 5) and where all
 * are listed; 1 if any.  syms may be NULL (no names offered).
 */
int spec_warn_unseen(const struct filter_spec *s, const char *prog, const struct ptt_names *names, struct ptt_syms *syms);
/* Events that define context (processes, threads, names): kept whatever the selection. */
int spec_is_definition(const struct ptt_event *ev);
/* Warn about each --event that names no class and begins no type name of the
 * trace (a typo selects nothing, silently otherwise); 1 if any did. */
int spec_warn_unknown_events(const struct filter_spec *s, const struct ptt_types *types, const char *prog);
void spec_free(struct filter_spec *s);

#endif

/* stat_table.h - ptt-stat's accounting: per object and per thread, bounded by live objects and threads. */
#ifndef PTT_STAT_TABLE_H
#define PTT_STAT_TABLE_H

#include <stdio.h>

#include "../../formats/ptt_trace.h"

enum stat_sort { STAT_SORT_WAIT, STAT_SORT_HOLD, STAT_SORT_COUNT, STAT_SORT_CONTENDED, STAT_SORT_CRITICAL };
struct stat_opts {
	enum stat_sort sort;
	unsigned top;
	int csv;
	unsigned sites; /* call sites shown under each object (0: none) */
};

struct stat_table;
struct model;
struct ptt_syms;
/* The accounts of the trace m replays (its observer: model_observe), named with syms (pass.h). */
struct stat_table *stat_new(struct ptt_syms *syms, struct model *m);
/* Each event, before m takes it. */
void stat_event(struct stat_table *st, const struct ptt_event *ev);
/* End of input, before m closes its states (model_finish, at the later of the last event and to_ns);
 * from_ns and to_ns: the window the trace was cut to (0 and 0: none). */
void stat_finish(struct stat_table *st, uint64_t from_ns, uint64_t to_ns);
void stat_print(const struct stat_table *st, const struct stat_opts *o, FILE *out);
/* The contended locks only, a line each, most waited-for first (o->top of them). */
void stat_print_brief(const struct stat_table *st, const struct stat_opts *o, FILE *out);
/* Where events were lost (fidelity.h), asked when printing: objects whose figures cover a lost stretch are marked. */
struct loss;
void stat_set_loss(struct stat_table *st, const struct loss *l);
/*
 * Sites named once the whole trace is read (at stat_finish), the lock layer's
 * wrappers learnt in the same pass (pass.h: PASS_WRAPPERS_ASREAD): one read
 * instead of two, the same tables (each object's first sites in the order of
 * their first events).  Not with a sampler (--pprof), which names each as it
 * comes: set before the first event, after stat_set_sampler; returns whether it is on.
 */
int stat_late_sites(struct stat_table *st);
/* Keep the wait and hold time per stack and object, for stat_print_folded (set before the first event). */
void stat_set_folding(struct stat_table *st, int on);
/* What the trace path adds per event in ps, when the trace says (END trace_path_ps): the holds' share of it. */
void stat_set_trace_cost(struct stat_table *st, double ps);
struct hosts;
/* A merged trace's hosts (host.h): each row says its host, pids and tids as their host gave them. */
void stat_set_hosts(struct stat_table *st, const struct hosts *hs);
/* Where what was read stops before the recording does (a rotated part continued in another file, a
 * window): the waits open there are not said to be blocked for ever.  NULL: at the recording's end. */
void stat_set_cut(struct stat_table *st, const char *where);
/*
 * Count [from_ns, to_ns] of the trace only (--from/--to; 0: no bound), by the
 * rule of cli_window_clip: a wait, hold or thread state for its part inside,
 * an acquisition or passage when it ends inside, a thread for its life inside
 * (one ended before from_ns has no row).  The caller reads no event past
 * to_ns and closes at to_ns (stat_finish); set before the first event.
 */
void stat_set_window(struct stat_table *st, uint64_t from_ns, uint64_t to_ns);
/*
 * The critical path of the same pass (critical.h), asked when printing: each
 * object's time on it (held + waited) in a column, --sort=critical, and
 * --brief's line naming the top object on it; cmd: how to ask ptt-critical
 * about the same input ("ptt-critical FILE").  NULL: no path (the column reads 0, no line).
 */
struct critical;
void stat_set_critical(struct stat_table *st, const struct critical *c, const char *cmd);
/* Folded stacks (flamegraph.pl, speedscope, inferno), in ns: of wait time, of hold time, or of the time
 * waited for locks alone (contention: the objects of the LOCKS table, not waiting for work). */
enum stat_fold { STAT_FOLD_WAIT, STAT_FOLD_HOLD, STAT_FOLD_LOCKS };
void stat_print_folded(const struct stat_table *st, enum stat_fold what, FILE *out);
/* The note saying the program's locks are out of ptt's sight (a JVM, a Go program, no traced process:
 * fidelity_blind_locks, ptt-deadlock's rule), or NULL when they are not known to be: exit status 7. */
const char *stat_blind_locks(const struct stat_table *st);
/*
 * Each wait (hold 0) or hold (hold 1) as it is counted in the tables, to fn (ptt-stat --pprof): ns of
 * thread tid on object obj of process pid, under model stack `stack` of that process (0: none, site is
 * then the call site that opened it).  Set before the first event.
 */
struct stat_sample {
	uint32_t pid, tid, stack;
	uint64_t site, obj, ns;
	int hold;
};
void stat_set_sampler(struct stat_table *st, void (*fn)(void *ctx, const struct stat_sample *s), void *ctx);
/* Is the object a lock (the LOCKS table: mutual exclusion), as the tables say once the input is read? */
int stat_is_lock(const struct stat_table *st, uint32_t pid, uint64_t obj);
/*
 * The accounts as they are so far, an object at a time, for a live view (ptt-top, which takes the
 * difference of two copies for an interval): stat_count objects, row i copied into r.
 */
#define STAT_HIST 256
struct stat_row {
	uint32_t pid;
	uint64_t addr;
	unsigned cls;
	int lock;                   /* mutual exclusion (the LOCKS table), as far as the trace says so far */
	uint64_t acq, contended, waits, wait_total, wait_max, holds, hold_total, hold_max;
	uint32_t wait_hist[STAT_HIST], hold_hist[STAT_HIST]; /* log histograms of the waits (every acquisition's,
							       0 when it did not block) and of the holds */
	char name[96], kind[16];
};
size_t stat_count(const struct stat_table *st);
void stat_row(const struct stat_table *st, size_t i, struct stat_row *r);
/* The p-th fraction (0.5, 0.99) of the n values of a STAT_HIST histogram whose largest is max. */
uint64_t stat_hist_percentile(const uint32_t *hist, uint64_t n, uint64_t max, double p);
/* Tracer stalls so far: how many, their ns summed, and the ns of waits they lengthened. */
void stat_stalls(const struct stat_table *st, uint64_t *n, uint64_t *ns, uint64_t *lengthened_ns);
void stat_free(struct stat_table *st);

#endif

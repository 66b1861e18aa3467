/*
 * critical.h - the critical path of a trace, and what shortening a lock's
 * holds would buy (ptt-critical(1)).
 *
 * The wait graph.  Each thread's life is segments: running (holding some
 * locks, or none), or waiting.  A wait that ended has an unblocking edge,
 * the event of another thread that let it go on, which the model names
 * (model.h: the thread a link comes from, model_ops.last): the release just
 * before an acquisition that waited (the last reader's for a writer), the
 * signal or broadcast that ended a condition wait (or the mutex's release
 * after it, when the waiter then waited for the mutex), the post that
 * satisfied a semaphore wait, the last arrival at a barrier, the joined
 * thread's end, the FUTEX_WAKE call that woke a futex wait; a thread's start
 * comes from its pthread_create.  A wait that ended without one is the
 * thread's own time when it timed out (or found a futex word changed), and
 * unknown otherwise (lost events, a waker ptt cannot see); running time over
 * a stretch of the thread's lost events is unknown too.  Nothing unknown is
 * guessed: it stays on the path as unknown time.
 *
 * The critical path ending at a thread's present is built forward, in one
 * pass: running extends it; a wait that ended by an edge continues the path
 * of the edge's thread as it was at the edge (then the hand-off's latency,
 * from the edge to the waiter's return, waiting on the object), when the edge
 * came after the wait began, else the waiter's own path with the whole wait.
 * The path of the run is the one ending where the last thread (or the chosen
 * one) ends.  Its segments are shared between threads' paths and freed when
 * no path holds them; a thread's own consecutive stretches are merged, so the
 * memory is proportional to the hand-offs on the paths alive, not to events.
 *
 * What if.  The same pass writes each thread's life as a program of steps
 * (whatif.h), replayed at the end with new times: each thread's running
 * time inside a hold of a chosen lock (or of a hold taken at a chosen site)
 * scaled, every other segment's length kept, a wait ending at its edge's new
 * time plus the hand-off's latency (or at once, when the edge now comes
 * before the wait), an acquisition without a wait never before the previous
 * holder's release.  A lock the what-if names is handed to its longest
 * waiter; every other hand-off keeps its recorded order.  Processors are not
 * modelled: a thread that ran is assumed to run as long again, however many
 * threads want the processors at once.
 */
#ifndef PTT_CRITICAL_H
#define PTT_CRITICAL_H

#include <stdint.h>
#include <stdio.h>

#include "../../formats/ptt_trace.h"

struct critical;
struct model;
struct ptt_syms;

/* An analysis observing m (model_observe_also: m's observer so far is kept), naming with syms. */
struct critical *critical_new(struct ptt_syms *syms, struct model *m);
/*
 * A what-if, before the first event: "NAME:-50%" scales the running time
 * inside the holds of the objects named NAME (their name as every tool
 * prints it, or an address 0x...), or of the holds taken at a site whose
 * function is NAME, by 1 - 0.5.  0, or -1 with the reason in err.
 */
int critical_what_if(struct critical *c, const char *spec, char *err, size_t errsize);
/* The path ends at thread tid's end (0: the thread that ends last, or exits the process). */
void critical_set_thread(struct critical *c, uint32_t tid);
/* What ptt's trace path adds per event in ps, when the trace says (END trace_path_ps): the path's share. */
void critical_set_trace_cost(struct critical *c, double ps);
/* The path explains [from_ns, to_ns] only (0, 0: the whole trace); set before the first event. */
void critical_set_window(struct critical *c, uint64_t from_ns, uint64_t to_ns);
/* Each event: before the model takes it, and after.  critical_event returns 1 when the window is over. */
int critical_event(struct critical *c, const struct ptt_event *ev);
void critical_after(struct critical *c, const struct ptt_event *ev);
/* End of input (the model not closed yet): the path is built. */
void critical_finish(struct critical *c, uint64_t end_ns);

/* The path's account: where its time went, object by object. */
struct critical_obj {
	uint32_t pid;
	uint64_t addr;
	unsigned cls;
	uint64_t held_ns;     /* running on the path inside a hold of it (nested holds count for each) */
	uint64_t waited_ns;   /* waiting on it on the path (hand-off latencies, own waits, unknown) */
	uint64_t total_wait_ns; /* waited on it by every thread, on the path or not */
	uint64_t waits;       /* waits on it that ended, by every thread */
};
/* The path's object of rank i (by held + waited on the path), or NULL past the last. */
const struct critical_obj *critical_object(const struct critical *c, unsigned i);
/* The path's length and its parts (ns): 0 when no path was built. */
/*
 * A hand-off's latency (from the release, signal, post, exit or wake that
 * ended a wait to the waiter running again) past this is the scheduler's
 * time, not the object's: a busy machine, or a joined thread slow to exit.
 * An idle CPU wakes a thread in tens of microseconds.
 */
#define CRITICAL_WAKE_SLOW_NS 1000000u

struct critical_sum {
	uint64_t from_ns, to_ns, length;
	uint64_t running, running_free; /* running; of it, holding no lock */
	uint64_t handoff, self, unknown, start;
	uint64_t self_timer;  /* of self, timed waits for a signal or a thread's end that timed out: timers (no object's) */
	uint64_t slow_wake;   /* of handoff, the part of each hand-off's latency past CRITICAL_WAKE_SLOW_NS */
	uint64_t slow_wakes;  /* the hand-offs that took longer */
	uint64_t events;      /* the path's threads' events on it (each lengthened it by the trace path's cost) */
	uint32_t end_tid, end_pid;
	int checked;          /* the segments cover the window end to end, each once */
	double predicted_ns;  /* what-if: the run's length predicted (0: none asked) */
	double actual_ns;     /* the run's length the prediction is compared with */
};
const struct critical_sum *critical_summary(const struct critical *c);
/* An object's name as the report prints it (a join's "join of THREAD"), into buf; returns buf. */
const char *critical_object_name(const struct critical *c, const struct critical_obj *o, char *buf, size_t size);
/* The path's object addr of process pid, or NULL when it is not on the path. */
const struct critical_obj *critical_object_of(const struct critical *c, uint32_t pid, uint64_t addr);
/*
 * The path's stretches, from its end back to its start: a stretch is one
 * thread's time [from, to] on the path, entered from thread from_tid at
 * `from` (a hand-off, a thread's start; 0: the path's start or the same
 * thread); running and waiting: its time of each kind (unknown, own waits
 * and start-up count as waiting).  fn returns non-zero to stop.
 */
struct critical_stretch {
	uint32_t pid, tid, from_tid;
	uint64_t from, to;
	uint64_t running, waiting;
};
int critical_foreach_stretch(const struct critical *c, int (*fn)(void *ctx, const struct critical_stretch *s), void *ctx);
/*
 * Keep every stretch for critical_foreach_stretch (call before the first
 * event): the path's memory then grows with its hand-offs.  By default the
 * stretches no other path shares are folded together as the trace is read,
 * and critical_foreach_stretch gives those folded (a stretch per fold).
 */
void critical_keep_stretches(struct critical *c);
/*
 * Every wait as it ends, and every thread's life, told to an observer (the
 * blame view, blame.h): the wait's edge as the path takes it.  kind: EDGE, the
 * thread edge_serial let it go at edge_t (in [begin, end], or before begin:
 * it was woken by an event before the wait); SELF, its own time (a timeout,
 * the last arrival at a barrier); UNKNOWN, no edge known; OPEN, still waiting
 * where the trace ends.  obj: the object waited for (0 for none).
 */
enum critical_wait_kind { CRITICAL_WAIT_EDGE, CRITICAL_WAIT_SELF, CRITICAL_WAIT_UNKNOWN, CRITICAL_WAIT_OPEN };
struct critical_wait {
	uint32_t pid, tid, serial, edge_serial;
	uint64_t begin, end, edge_t, obj;
	enum critical_wait_kind kind;
	uint64_t site;        /* where it waited (the first frame past the lock layer), 0 unknown */
};
struct critical_observer {
	void *ctx;
	void (*thread)(void *ctx, uint32_t serial, uint32_t pid, uint32_t tid, uint64_t ns, int ended); /* began or ended at ns */
	void (*wait)(void *ctx, const struct critical_wait *w);
};
/* Before the first event; the path is built as before. */
void critical_observe(struct critical *c, const struct critical_observer *o);
/*
 * Sites named once the whole trace is read (at critical_finish), the lock
 * layer's wrappers learnt in the same pass (pass.h: PASS_WRAPPERS_ASREAD):
 * one read instead of two.  Not with what-if specs, an observer or spans,
 * which name sites as the events come (then the first pass learns the layer):
 * called after those are set, returns whether it is on.
 */
int critical_late_sites(struct critical *c);
/*
 * Spans (ptt.h's ptt_span_begin/ptt_span_end, user events "ptt.span.KIND"):
 * with critical_spans on (before the first event), each span's critical path
 * is the path ending where the span ends, from its end back to its begin
 * (a span handed from thread to thread included), aggregated per kind as
 * it ends: the span's length and its critical time per object and site,
 * count, total, p50 and p99.  Percentiles come from log histograms (16
 * buckets per power of two: within 4.5 %); no path is kept past its span.
 * A stretch of another thread's that straddles the begin (running from
 * before it) is split pro rata across its holds, and the report says how
 * much was.
 */
void critical_spans(struct critical *c);
void critical_print_spans(const struct critical *c, unsigned top, FILE *out);
/* The path's time per hold or wait stack as folded lines ("frame;frame;object ns"), for flame graphs. */
void critical_print_folded(const struct critical *c, FILE *out);
/* The report of ptt-critical: the path, its parts, what to fix first (top rows of each table), what-if. */
void critical_print(const struct critical *c, unsigned top, FILE *out);
void critical_free(struct critical *c);

#endif

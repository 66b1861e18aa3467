/*
 * pass.h - the one reading pipeline of the filters: open the inputs (files,
 * stdin, the parts of a rotated recording, read in order as one trace), read
 * (damage and time going back reported and counted, loss accounted: cli.h,
 * fidelity.h), learn names and modules (symbols.h), replay the state model
 * (model.h) and hand the tool each event and the model's callbacks; then
 * close, check stdout and give the exit status.  A tool's main parses its
 * options, declares what it needs in a struct pass_tool and calls pass_run;
 * an analysis (stat_table.h, lockgraph.h, fidelity.h) observes the pass's
 * model and reads its names.
 *
 * Decided here once, for every tool:
 *  - a trace that starts mid-run (a later part of a rotated recording, a
 *    flight recording, a window cut by ptt-filter) is told to the model at
 *    its first event (model_starts_mid_run: what came before is no anomaly);
 *  - the end of the trace is its last event's time, or its window's end
 *    when later (pass.end_ns), the time the model closes its states at;
 *  - with PASS_CLOCK, a window's times count from its start (cli_clock).
 *
 * For each event, in this order: names learnt (PASS_SYMS), the tool's
 * event hook (the model is the trace before the event), the model
 * (PASS_MODEL: its callbacks run), the tool's after hook.  After the last:
 * the loss account finished, the end hook (the model as at the end), the
 * model closed (PASS_FINISH: its callbacks run again), the report hook.
 */
#ifndef PTT_PASS_H
#define PTT_PASS_H

#include <stdint.h>

#include "../../formats/ptt_trace.h"
#include "cli.h"
#include "model.h"

/* What a tool needs (pass_tool.need). */
#define PASS_SYMS        0x001 /* names and symbols (pass.syms), learnt from each event before the tool sees it */
#define PASS_NAMES_FIRST 0x002 /* the same learnt by a first pass over the whole input, before the real one (stdin
				  from a pipe is kept in a temporary file for it): a name is known from the start */
#define PASS_MODEL       0x004 /* the state model (pass.model), fed each event between the event and after hooks */
#define PASS_FINISH      0x008 /* the model closed at pass.end_ns once the input is read */
#define PASS_ORDERED     0x010 /* times never go back (an earlier event is moved forward: cli_next) */
#define PASS_LOSS        0x020 /* the loss account (pass.in.loss, fidelity.h), finished once the input is read */
#define PASS_LOSS_NOTE   0x040 /* with it, a line on stderr when events are known lost (loss_note) */
#define PASS_CLOCK       0x080 /* a window's times from its start (cli_clock_event) */
#define PASS_BUFFERED    0x100 /* stdout fully buffered in a large buffer */
#define PASS_SHARED      0x400 /* objects in shared memory made one across processes (shmap.h): their arguments
				  rewritten before the tool, the names and the model see the event */
#define PASS_WRAPPERS    0x200 /* the program's lock wrappers learnt by a first pass (lockframes_learn), which
				  PASS_NAMES_FIRST does too, without learning the names before the real pass */
#define PASS_WRAPPERS_ASREAD 0x800 /* the same learnt as the real pass reads the events, decided before the end
				  hook: one read, for a tool that names no site before its end (critical_late_sites) */

/*
 * What a hook returns.  PASS_SKIP (event hook): neither the model nor the
 * after hook sees this event.  PASS_STOP: read no more (from the start hook:
 * nothing); the end and report hooks still run.  PASS_FAIL: the same, and
 * the run failed (exit status 1); from the start hook, nothing more of the
 * tool runs.  PASS_QUIT (start hook): nothing more, exit status 2.
 */
enum { PASS_GO, PASS_SKIP, PASS_STOP, PASS_FAIL, PASS_QUIT };

struct pass;
struct pass_tool {
	const char *prog;               /* for messages: "prog: FILE: reason" */
	unsigned need;                  /* PASS_* */
	void *ctx;                      /* the tool's, given to every hook */
	struct model_ops ops;           /* the model's callbacks (an analysis may observe it instead: model_observe) */
	/* PASS_NAMES_FIRST: the first pass's own model with these callbacks (NULL: none), and each of its events */
	const struct model_ops *first_ops;
	void (*first_event)(void *ctx, const struct ptt_event *ev);
	/*
	 * With first_ops, an analysis run in the first pass (ptt-paje --critical: critical.h), on its model:
	 * first_start once the model is made, nothing read (the analysis may observe it: model_observe_also);
	 * first_after each event once that model took it; first_end once the input is read (the model not
	 * closed), end_ns the trace's end as the real pass finds it, before a window's clock (PASS_CLOCK).
	 * That pass keeps the real pass's rules: times in order (PASS_ORDERED), a trace that starts mid-run.
	 */
	int (*first_start)(void *ctx, struct pass *p, struct model *m);
	void (*first_after)(void *ctx, const struct ptt_event *ev);
	void (*first_end)(void *ctx, struct pass *p, uint64_t end_ns);
	/* Hooks, each optional; they return PASS_GO or as above. */
	int (*start)(void *ctx, struct pass *p);    /* the inputs open and the model made, nothing read yet */
	int (*event)(void *ctx, struct pass *p, struct ptt_event *ev);
	int (*after)(void *ctx, struct pass *p, struct ptt_event *ev);
	int (*end)(void *ctx, struct pass *p);      /* the input read; the model not closed yet */
	int (*report)(void *ctx, struct pass *p);   /* the model closed: print, close the tool's outputs */
};

struct pass {
	const struct pass_tool *tool;
	struct cli_input in;            /* in.r: the reader; in.loss: the loss account (PASS_LOSS) */
	struct ptt_syms *syms;          /* PASS_SYMS or PASS_NAMES_FIRST */
	struct shmap *shmap;            /* PASS_SHARED */
	struct model *model;            /* PASS_MODEL */
	struct cli_clock clock;         /* PASS_CLOCK */
	uint64_t shift;                 /* PASS_CLOCK: how far back the clock moved the event being handed */
	uint64_t last_ns;               /* the time of the last event handed (before the hooks of the next) */
	uint64_t end_ns;                /* from the end hook on: the end of the trace, or of its window when later;
					   the end hook may set it to the end of a window the tool stopped reading at */
	int mid_run;                    /* from the first event on: the trace starts mid-run */
	const char *mid_run_why;        /* with it, how (pass_mid_run) */
	int unknown_before;             /* with it, whatever came before is unknown (not a window, not a flight's cut threads) */
	int failed, damaged, write_error; /* after pass_run: a hook failed; the input had problems; stdout did not get out */
};

/*
 * Run the pass of tool t over the npaths inputs of paths (none: stdin).
 * Returns the exit status most tools give: 2 when no input could be read
 * (or the start hook quit), 1 when the input was damaged, stdout could not
 * be written or a hook failed, else 0; p keeps the details.
 */
int pass_run(struct pass *p, const struct pass_tool *t, int npaths, char **paths);
/*
 * Does the trace of r (its header read) start mid-run: a later part of a
 * rotated recording, a flight recording, a window?  NULL if not, else how,
 * in a phrase (in buf or a constant); *unknown_before 1 when everything
 * before the start is unknown (a later part: not a window left out by
 * choice, nor a flight recording, whose cut threads the loss account names).
 * The one decision: the pass tells the model from it (pass.mid_run),
 * ptt-dump --info says it.
 */
const char *pass_mid_run(const struct ptt_reader *r, char *buf, size_t size, int *unknown_before);
/* Learn from an event that is not read from the input (a snapshot's record, ptt-filter): names, model, a limit. */
void pass_learn(struct pass *p, const struct ptt_event *ev);

#endif

/*
 * fidelity.h - what the replay of a trace (the model) finds cannot have happened: two
 * holders of a mutex or write lock, an unlock by a non-holder, a cond wait
 * that does not release and re-take its mutex, a thread that begins before
 * its creation, events of a process that never began.
 */
#ifndef PTT_FIDELITY_H
#define PTT_FIDELITY_H

#include <stdio.h>

#include "../../formats/ptt_trace.h"

struct fidelity;
struct model;
/* Observe m's anomalies (its one observer, model_observe); a trace that starts mid-run is told to m
 * (model_starts_mid_run, by the pass: pass.h), whose rules then accept what came before the start. */
struct fidelity *fidelity_new(struct model *m);
/* After m took an event: the violation it found in it described in msg (returns 1), else returns 0.
 * Objects are named by syms (symbols.h; NULL: addresses only). */
struct ptt_syms;
int fidelity_add(struct fidelity *f, const struct ptt_event *ev, struct ptt_syms *syms, char *msg, size_t size);
unsigned long fidelity_violations(const struct fidelity *f);
/* Who and what the last violation found concerns, to judge it against the loss (below) once all is read. */
struct fidelity_culprit {
	uint64_t ns, obj;    /* when; the object (0: none) */
	uint32_t tid, other; /* the thread of the event; the thread in its way (0: none) */
};
void fidelity_last_culprit(const struct fidelity *f, struct fidelity_culprit *c);
struct loss;
/* Could a lost stretch of l explain violation c (the rule below)?  1 if so. */
int fidelity_loss_explains(const struct fidelity *f, const struct loss *l, const struct fidelity_culprit *c);
void fidelity_free(struct fidelity *f);

/*
 * Loss: where events are missing, the one rule every analysis asks before
 * it builds a finding.  A lost stretch is a thread's (tid) or any thread's
 * (tid 0) time span [from_ns, to_ns] in which events may be missing:
 *  - rec_lost records (discard mode, a ring never had, records torn by the
 *    program's death; a note without times covers everything before it);
 *  - damaged records or blocks, parts of a rotated recording missing
 *    between the files read, a trace cut short (no end, and not continued
 *    in a next part): any thread, from the last good event to the next (to
 *    the end);
 *  - a trace that starts mid-run (a later part read first, a flight
 *    recording): before its first event, any thread, and in a flight
 *    recording each thread before its own history begins.
 * A finding that depends on a thread's events over a span (a hold that
 * orders two locks, an object's waits and holds) is unverified when a lost
 * stretch of that thread, or of any thread, overlaps the span.
 * A violation of the replay (fidelity_add, ptt-dump --check) is set aside
 * (counted apart, not a failure) when a lost stretch that begins at or before
 * it could explain it (fidelity_loss_explains): a stretch of any thread
 * (damage, a cut), or of the violation's own thread, or of the thread in its
 * way (the holder an acquisition met, the parent of a thread that begins
 * unannounced), or of a thread that used the violation's object around the
 * stretch: touched it before the stretch ended and again after it began, or
 * held it (by its own records) when it last touched it; the lost events
 * themselves are unknown, the objects their thread used around them are the
 * ones they can have touched.  A violation elsewhere is still one.  The cut
 * before a trace's start is not such a stretch for it: the model told it starts
 * mid-run already accepts what came before.
 */
struct loss_span {
	uint32_t tid;            /* 0: any thread */
	uint64_t from_ns, to_ns; /* to_ns UINT64_MAX: to the end */
	uint64_t count;          /* events lost, 0: not known */
	const char *why;
};
struct loss;
struct loss *loss_new(void);
/* Feed every event read, in order. */
void loss_event(struct loss *l, const struct ptt_event *ev);
/* A damaged stretch (any thread) between two good events. */
void loss_damage(struct loss *l, uint64_t from_ns, uint64_t to_ns);
/* The input is read: the trace's own cuts (mid-run start, flight histories) from r's META lines. */
void loss_finish(struct loss *l, const struct ptt_reader *r);
/* Does a lost stretch of thread tid (or of any thread) overlap [from_ns, to_ns]?  tid 0: of any one thread. */
int loss_covers(const struct loss *l, uint32_t tid, uint64_t from_ns, uint64_t to_ns);
/* The lost stretches, in the order found; the events known lost in all. */
const struct loss_span *loss_spans(const struct loss *l, size_t *n);
uint64_t loss_events(const struct loss *l);
/* "loss: ..." lines: how many, where (threads, spans); nothing when nothing was lost.  1 if printed. */
int loss_print(const struct loss *l, FILE *out);
/* The timelines' (ptt-paje, ptt-json, ptt-csv) one line on err when events are known lost (rec_lost):
 * "prog: name: note: N events lost in M stretches (threads ...): figures there may be short".  1 if printed. */
int loss_note(const struct loss *l, const char *prog, const char *name, FILE *err);
void loss_free(struct loss *l);

/*
 * What the trace cannot show: a process that synchronises out of ptt's
 * sight, told from its module events (ptt-stat, ptt-stat --brief and so
 * ptt-record's summary, ptt-deadlock all print the same sentence):
 *  - a JVM (libjvm.so loaded): monitors and java.util.concurrent locks park
 *    threads with futex system calls made inside libjvm, not through pthread
 *    locks or syscall();
 *  - a Go program (the main program's ELF file has a .note.go.buildid
 *    section, read where the file still is; else the path is not looked at):
 *    goroutines synchronise in Go's runtime with inline futex calls;
 *  - a recording in which no process began (the program never loaded
 *    libptt.so: statically linked, as Go programs without cgo are);
 *  - a CPython whose Python frames were not recorded (a version whose
 *    layout the runtime does not know): its waits are named in the
 *    interpreter.
 * Memory: a few flags; at most one ELF file read per process.
 */
struct fidelity_blind {
	unsigned jvm : 1, go : 1, recorded : 1, processes : 1;
	char py_note[128];          /* a CPython whose Python frames were not recorded (py_runtime frames=0) */
	uint32_t last_pid;          /* the pid whose first module (its main program) was looked at */
};
void fidelity_blind_event(struct fidelity_blind *b, const struct ptt_event *ev);
/* 1 when locks of the program are known to be out of sight (a JVM, a Go program, no traced process):
 * "nothing found" is then no verdict (ptt-deadlock's exit status 7). */
int fidelity_blind_locks(const struct fidelity_blind *b);
/* The one plain line (no newline) saying what is invisible, or NULL when nothing is known to be. */
const char *fidelity_blind_note(const struct fidelity_blind *b);
/* 1 when path is an ELF file built by Go (a .note.go.buildid section), 0 otherwise or unreadable. */
int fidelity_elf_is_go(const char *path);

#endif

/*
 * lockframes.h - the lock layer of a stack: the frames of the functions
 * through which a program takes its locks (pthread itself, sqlite3's mutex
 * methods, CPython's PyThread_*, std::mutex, glib, MariaDB's mysql_mutex_*,
 * the JVM's park, ...; the list is in lockframes.c and ptt-stat(1)), plus
 * the user's own (--skip-frames=REGEX).  In a CPython's stack (Python
 * frames after the native ones) the native frames and the frames of
 * threading.py and queue.py are the layer.  "The site" every tool names for an
 * event with a stack is the first frame past that layer; without a stack,
 * the event's own call site.
 */
#ifndef PTT_LOCKFRAMES_H
#define PTT_LOCKFRAMES_H

#include <stdint.h>
#include <stdio.h>

#include "../../formats/ptt_trace.h"
#include "symbols.h"

/* Add a pattern (POSIX extended regex, matched against a frame's function name, or its
 * "module+0xoff" without one) to the lock layer: 0, or -1 with the reason in err. */
int lockframes_skip(const char *regex, char *err, size_t errsize);
/*
 * The program's own lock wrappers, learnt from a whole trace before the sites are named (pass.c's
 * first pass): each event in order, then lockframes_learn_end.  A function whose every lock is
 * released in one other function, never by its caller, both called by the same function where stacks
 * say, is a wrapper: it and its unlocker are the lock layer (lockframes.c).  lockframes_wrappers:
 * "app_lock/app_unlock, ..." for a note, NULL for none.  A --skip-frames='!REGEX' exempts a function.
 */
void lockframes_learn(struct ptt_syms *syms, const struct ptt_event *ev);
void lockframes_learn_end(void);
const char *lockframes_wrappers(void);
/* Has some learnt wrapper several unlockers (the note's "L/U1+U2")? A stripped program's names have a '+' of their own. */
int lockframes_wrappers_several_unlockers(void);
/* Is the frame at addr of process pid in the lock layer? */
int lockframes_is_lock(struct ptt_syms *syms, uint32_t pid, uint64_t addr);
/* The use of a futex word that a library's function at site (a futex wait's call site) waits on, where the
 * function says it (GLib's g_cond_wait: MF_SIGNAL, model.h); -1 where it does not. */
int lockframes_futex_use(struct ptt_syms *syms, uint32_t pid, uint64_t site);
/* The first frame of stack past the lock layer (its last frame if all are in it); 0 without a stack.
 * lockframes_site_of: the same of frames f[0, n) (a copy kept past an exec, which numbers stacks anew). */
uint64_t lockframes_site(struct ptt_syms *syms, const struct ptt_stacks *st, uint32_t pid, uint32_t stack);
uint64_t lockframes_site_of(struct ptt_syms *syms, uint32_t pid, const uint64_t *f, unsigned n);
/* The site of a model frame (a hold or a wait, model.h): with a stack, its first frame past the lock
 * layer; else the call site of the event that opened it (0: none).  lockframes_site_or_call: the same from
 * the frame's stack and its opening event's call address (ptt_syms_site_addr), kept to be named later. */
uint64_t lockframes_site_or_call(struct ptt_syms *syms, const struct ptt_stacks *st, uint32_t pid, uint32_t stack,
				 uint64_t call);
struct mframe;
uint64_t lockframes_frame_site(struct ptt_syms *syms, const struct ptt_stacks *st, uint32_t pid, const struct mframe *f);
/* A call site without a stack (the return address into the lock call), with the program's debug information
 * naming the functions inlined at it: its first inline level past the lock layer (the program's own line,
 * not the libstdc++ header's inlined into it: shm.cpp:28, not gthr-default.h:749), as a stack's frame is
 * walked; else addr itself. */
uint64_t lockframes_call_site(struct ptt_syms *syms, uint32_t pid, uint64_t addr);
/* The first frames of stack past the lock layer, "f <- caller <- its caller" (at most max of them), into
 * buf; returns its length (0 without a stack). */
size_t lockframes_past(struct ptt_syms *syms, const struct ptt_stacks *st, uint32_t pid, uint32_t stack, unsigned max,
		       char *buf, size_t size);
/* A frame's name for a folded stack or a short list: the function ("queue_push"), else "module+0xoff";
 * with no ';' (the folded format's separator) nor line breaks.  Written into buf; returns buf. */
const char *lockframes_name(struct ptt_syms *syms, uint32_t pid, uint64_t addr, char *buf, size_t size);

/* A stack's frames for a folded line, outermost first, each (and each inline level) followed by ';';
 * without a stack, the site alone (or "[no site]"). */
void lockframes_fold(struct ptt_syms *syms, const struct ptt_stacks *st, uint32_t pid, uint32_t stack, uint64_t site,
		     FILE *out);
void lockframes_fold_frames(struct ptt_syms *syms, uint32_t pid, const uint64_t *f, unsigned n, uint64_t site, FILE *out);
/* A name made a folded line's leaf word: ';', ' ' and line breaks become '_' (in place). */
char *lockframes_fold_word(char *name);

#endif

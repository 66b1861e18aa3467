/*
 * symbols.h - addresses of a traced program as a person reads them, and the
 * names of its processes, threads and objects: the one symboliser every tool
 * uses (libdwfl from elfutils), fed by the trace's own events.
 *
 * The recorder writes a module event (load base, path) for each loaded
 * object; ptt_syms_update() learns them per process (an exec starts over, a
 * fork copies the parent's), with process commands, thread start routines
 * and the names of thread_name/object_name events.  Lookups are cached.
 * Nothing here prints.
 */
#ifndef PTT_SYMBOLS_H
#define PTT_SYMBOLS_H

#include <stdint.h>

#include "../../formats/ptt_trace.h"

/* An address, symbolised.  Every string is owned by the cache: valid until ptt_syms_free(). */
struct ptt_sym {
	const char *func;   /* "queue_push", or NULL without a symbol */
	const char *where;  /* "queue_push+0x1a (prog)", "prog+0x1234" without a symbol,
			       "0x7f..." only when no module maps the address */
	const char *line;   /* "queue.c:42" where debug information exists, else NULL */
	const char *text;   /* the site in one piece: "queue_push+0x1a (prog) at queue.c:42" */
	unsigned levels;    /* code: the functions at the address, inlined ones included (DWARF's inline
			       chain), innermost first; 1 without inlining or debug information */
	const char *fn;     /* code: the function it is in, as one name: func; without a symbol, its start
			       as the unwind tables (.eh_frame) give it, "prog+0x1060" (a stripped program's
			       functions told apart, not named); NULL when neither is known */
	const char *next;   /* code without a symbol in a module that has some (a stripped library's static
			       function: only its exported ones are in .dynsym): the function symbol that
			       follows it, the exported function it most likely sits before in its source
			       file (the compiler emits a file's functions in order); else NULL */
};

struct ptt_syms;
struct ptt_syms *ptt_syms_new(void);
void ptt_syms_free(struct ptt_syms *s);
/*
 * Where a module's file cannot name its addresses (missing, unreadable, or not the file recorded:
 * its build-id differs from the trace's module_build_id), warn(ctx, path, reason) is called once
 * per file, when an address first falls in it; without a call to this, the reason is printed on
 * stderr as "PROG: PATH: REASON; its addresses are named by offset".  warn NULL: silent.
 */
void ptt_syms_set_warn(struct ptt_syms *s, void (*warn)(void *ctx, const char *path, const char *reason), void *ctx);
/* Learn from an event (module, module_build_id, process_begin/exec/fork, thread_begin/create, name events). */
void ptt_syms_update(struct ptt_syms *s, const struct ptt_event *ev);
/* Objects in shared memory (PTT_SHARED_ADDR) named by their mapping (shmap.h): "PATH+0xOFF". */
struct shmap;
void ptt_syms_set_shmap(struct ptt_syms *s, const struct shmap *m);
/* How many processes were seen begin (process_begin) so far: several, and names carry their process (entity_name.h). */
size_t ptt_syms_processes(const struct ptt_syms *s);
/* The names learnt from thread_name and object_name events. */
const struct ptt_names *ptt_syms_names(const struct ptt_syms *s);

/* A code address in process pid (a call site, a start routine).  Never NULL. */
const struct ptt_sym *ptt_syms_code(struct ptt_syms *s, uint32_t pid, uint64_t addr);
/*
 * An inline level of a code address: level 0 is the innermost function at it (the one the line
 * table names), level levels-1 the physical function (the ELF symbol).  ptt_syms_code() of the
 * returned address names that function alone, at its own line: "main::{{closure}} inlined in
 * __rust_begin_short_backtrace+0x171 (prog) at prog.rs:21"; the line of an outer level is where
 * it calls the inner one.  It is the address with the level in its top byte, so whatever keys
 * sites by address keeps working (two levels are two sites); a plain address (level byte 0) is
 * named as before, the physical symbol with the innermost line.
 */
#define PTT_SYMS_LEVEL_SHIFT 56
#define PTT_SYMS_ADDR(a) ((a) & ((UINT64_C(1) << PTT_SYMS_LEVEL_SHIFT) - 1))
uint64_t ptt_syms_level(uint64_t addr, unsigned level);

/* How many files had code named by offset (module+0x...) because they have no symbol table and no
 * debug information was found for them here (stripped, their -dbgsym not installed); paths: the first
 * max of them, a program's executable before libraries, else in the order met. */
size_t ptt_syms_stripped(const struct ptt_syms *s, const char **paths, size_t max);

/* The call site of an event: NULL when its type has no site (or it is 0). */
const struct ptt_sym *ptt_syms_site(struct ptt_syms *s, const struct ptt_event *ev);

/* The call site's address in the arguments arg of an event of type id seen by ptt_syms_update (an
 * opening event the model kept, struct mopen): 0 when its type has none. */
uint64_t ptt_syms_site_addr(const struct ptt_syms *s, unsigned id, const uint64_t *arg);

/* The text form's comment (ptt_sink_set_note): the event's site, symbolised; 0 without one.
 * ctx is the struct ptt_syms.  Every tool writing the text form uses it, so all agree. */
size_t ptt_syms_note(void *ctx, const struct ptt_event *ev, char *buf, size_t size);

/*
 * The site of an event as a phrase for a sentence: " at queue.c:42 in
 * queue_push", " in queue_push+0x1a (prog)" without line information,
 * " at prog+0x1234" without a symbol; "" when the event has no site.
 * Returns the length written into buf.
 */
size_t ptt_syms_site_phrase(struct ptt_syms *s, const struct ptt_event *ev, char *buf, size_t size);
/* The same for a call site's address in process pid ("" for 0). */
size_t ptt_syms_code_phrase(struct ptt_syms *s, uint32_t pid, uint64_t addr, char *buf, size_t size);

/*
 * Display names, written into buf (NUL-terminated, truncated to size):
 *   process: "pigz 4383" (command's base name and pid), else "process 4383";
 *   thread:  its given name, else its start routine's symbol ("worker_main"),
 *            else "thread TID" (the main thread: the process's command);
 *   object:  its given name (object_name: ELF symbol or user name), else the
 *            symbol of the address ("queue_lock", "buf+0x10"; CPython's GIL
 *            "CPython GIL (_PyRuntime+0x188)"), else
 *            "module+0xoff", else the address in hex.
 * Returns buf.
 */
/*
 * The one way a name is cut: as snprintf into buf, but a name longer than
 * size - 1 bytes ends with "\u2026" (at a character's boundary), so that every tool's
 * cut name shows it is one.  Returns the length written.
 */
size_t ptt_name_printf(char *buf, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* The same mark put after the first keep bytes of buf (at a character's boundary; buf holds keep + 4 bytes at
 * least): a name cut to a column's width.  Returns the length. */
size_t ptt_name_cut(char *buf, size_t keep);
const char *ptt_syms_process_name(struct ptt_syms *s, uint32_t pid, char *buf, size_t size);
const char *ptt_syms_thread_name(struct ptt_syms *s, uint32_t pid, uint32_t tid, char *buf, size_t size);
/* The same without the last resort: "" for a thread with no name, start routine or command (a table's NAME column). */
const char *ptt_syms_thread_known_name(struct ptt_syms *s, uint32_t pid, uint32_t tid, char *buf, size_t size);
/* The start routine given to the thread's pthread_create (its thread_begin or thread_create event), 0 unknown
 * (a main thread, a thread begun before the trace). */
uint64_t ptt_syms_thread_start(const struct ptt_syms *s, uint32_t pid, uint32_t tid);
const char *ptt_syms_object_name(struct ptt_syms *s, uint32_t pid, uint64_t addr, char *buf, size_t size);
/* The same without the last resort: "" for an object with no given name, symbol or module (one alone). */
const char *ptt_syms_object_known_name(struct ptt_syms *s, uint32_t pid, uint64_t addr, char *buf, size_t size);
/* 1 when addr lies inside CPython's _PyRuntime: a pthread object there is the GIL's (its cond, its
 * mutex; knownlock.h), named "CPython GIL (_PyRuntime+0x188)" by the functions above. */
int ptt_syms_is_gil(struct ptt_syms *s, uint32_t pid, uint64_t addr);

/*
 * A name made safe for an output form: CSV (a field, quoted when it holds
 * a comma, quote or line break), JSON (the inside of a string), PAJE (the
 * inside of a double-quoted field: no " \ or control characters, and & < >
 * replaced, as ViTE's SVG export writes names into XML unescaped).
 */
enum ptt_escape { PTT_ESC_CSV, PTT_ESC_JSON, PTT_ESC_PAJE };
const char *ptt_name_escape(const char *name, enum ptt_escape form, char *buf, size_t size);

#endif

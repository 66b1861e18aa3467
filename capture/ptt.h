/*
 * ptt.h - trace points for programs recorded with ptt-record(1).
 *
 * Link with -lptt (pkg-config --cflags --libs libptt).  Every call is a
 * cheap no-op when the program does not run under ptt-record.  See ptt(3).
 */
#ifndef PTT_H
#define PTT_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define PTT_API_VERSION 2 /* 2: spans (ptt_span_kind, ptt_span_begin, ptt_span_end) */

/*
 * Register an event type: name ([A-Za-z0-9_.-], at most 47 bytes), detail
 * level 1..3 (recorded when ptt-record -l is at least this), and the
 * arguments as "name:kind,..." with kind one of i32, u32, i64, u64, ptr
 * and str (a string, last argument only), or "" for none.
 * Returns the event id (>= 1024), or -1 if the definition is invalid or the
 * table of user types (3072: ids 1024 to 4095) is full.  Registering the
 * same name and arguments again returns the same id.
 */
int ptt_register_event(const char *name, int level, const char *args);

/* Record event id with nargs values, in the order of its arguments
 * (a str argument is passed as a const char * cast to uint64_t). */
void ptt_trace(int id, const uint64_t *args, unsigned nargs);

#define PTT_TRACE(id, ...) \
	ptt_trace((id), (const uint64_t[]){ 0, ##__VA_ARGS__ } + 1, \
		  (unsigned)(sizeof((const uint64_t[]){ 0, ##__VA_ARGS__ }) / sizeof(uint64_t) - 1))

/* Name an object (a mutex, condition variable, ...) by its address; the
 * name appears in every output and ptt-filter --object/--mutex accept it. */
void ptt_name_object(const void *object, const char *name);

/* Name the calling thread in the trace (pthread_setname_np is also recorded). */
void ptt_name_thread(const char *name);

/* 1 when the program is being recorded, else 0. */
int ptt_active(void);

/*
 * Spans: a request's (or any unit of work's) life, from a begin to an end
 * with the same kind and key, on one thread or handed from one to another
 * (begun by the thread that accepts a request, ended by the worker that
 * answers it).  ptt-critical --spans gives each kind's critical path.
 * ptt_span_kind registers a kind once (name as ptt_register_event's, at
 * most 38 bytes): it returns its id, or -1.  Begin and end are user events
 * of the type "ptt.span.NAME"; when not recorded they return at a branch.
 */
int ptt_span_kind(const char *name);
void ptt_span_begin(int kind, uint64_t key);
void ptt_span_end(int kind, uint64_t key);

#ifdef __cplusplus
}
#endif
#endif

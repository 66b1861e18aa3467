/*
 * model.h - what each thread is doing, replayed from the events: the state
 * stack (waiting for a mutex on top of holding another, ...), thread and
 * process life, object ownership.  Shared by the converters that show
 * states (ptt-paje, ptt-csv --states).  Memory is bounded by live threads,
 * processes and objects: ended threads are forgotten.
 */
#ifndef PTT_MODEL_H
#define PTT_MODEL_H

#include <stdint.h>

#include "../formats/ptt_trace.h"

enum mstate {
	MS_RUNNING, MS_MUTEX_WAIT, MS_MUTEX_HOLD, MS_COND_WAIT, MS_BARRIER, MS_JOIN, MS_SEM_WAIT,
	MS_RW_RD_WAIT, MS_RW_WR_WAIT, MS_RW_RD_HOLD, MS_RW_WR_HOLD, MS_SPIN_HOLD, MS_COUNT
};
extern const char *const mstate_name[MS_COUNT];   /* "Running", "Blocked on mutex", ... */
extern const char *const mstate_alias[MS_COUNT];  /* "R", "MW", ... */
extern const char *const mstate_key[MS_COUNT];    /* "running", "blocked_mutex", ... */

#define MODEL_STACK 32

struct mframe {
	uint8_t state;
	uint64_t obj;
	uint64_t since_ns;
};

struct mthread {
	uint32_t pid, tid;
	uint32_t serial;            /* unique per thread incarnation in this trace */
	uint64_t begin_ns;
	struct mframe stack[MODEL_STACK];
	unsigned depth;
	uint64_t running_since;
	void *user;                 /* for the converter */
};

struct mprocess {
	uint32_t pid;
	uint32_t serial;
	uint32_t live_threads;
	void *user;
};

struct model_ops {
	void *ctx;
	void (*process_begin)(void *ctx, struct mprocess *p, uint64_t ns);
	void (*process_end)(void *ctx, struct mprocess *p, uint64_t ns);
	void (*thread_begin)(void *ctx, struct mthread *t, struct mprocess *p, uint64_t ns);
	void (*thread_end)(void *ctx, struct mthread *t, struct mprocess *p, uint64_t ns);
	/* the top of t's stack changed from old (depth 0: running) */
	void (*state)(void *ctx, struct mthread *t, const struct mframe *old, const struct mframe *now, uint64_t ns);
	/* a link between two live threads (zero length, at ns): kind "create", "handoff", "wake", "join", "barrier" */
	void (*link)(void *ctx, struct mthread *from, struct mthread *to, const char *kind, uint64_t obj, uint64_t ns);
	/* a point event worth showing (unlock, signal, post, failed trylock, ...) */
	void (*point)(void *ctx, struct mthread *t, const struct ptt_event *ev);
};

struct model;
struct model *model_new(const struct model_ops *ops);
void model_event(struct model *m, const struct ptt_event *ev);
/* End of input at ns: close every state, thread and process. */
void model_finish(struct model *m, uint64_t ns);
struct mthread *model_thread(struct model *m, uint32_t pid, uint32_t tid);
void model_free(struct model *m);

#endif

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
	uint32_t joining;           /* tid this thread is blocked joining, 0 if none */
	uint64_t join_key;          /* a join link started towards this thread, not yet ended */
	uint64_t begin_ns;
	struct mframe stack[MODEL_STACK];
	unsigned depth;
	uint64_t running_since;
	void *user;                 /* for the converter */
};

/*
 * A synchronisation object, known from its first event until it is
 * destroyed (idle) or its process ends.  holders and waiters count the
 * frames of thread stacks on it (a recursive lock held twice counts two),
 * so they never go negative and return to 0 as threads end.
 */
struct mobject {
	uint32_t pid;
	uint32_t serial;            /* unique per object incarnation; 0 while not shown */
	uint64_t addr;
	uint8_t cls;                /* PTT_CLASS_MUTEX .. PTT_CLASS_SPIN */
	uint32_t holders, waiters;
	uint32_t last_tid;          /* last unlocker / signaller / poster / barrier arriver */
	void *user;
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
	/*
	 * A link whose two ends happen at different times (join: from the joined
	 * thread's end to the joiner's return), or from a thread that already
	 * ended (by serial).  Every started key is ended, at the latest when the
	 * receiving thread ends; keys are never reused.
	 */
	void (*link_start)(void *ctx, struct mprocess *p, uint32_t from_serial, const char *kind, uint64_t key, uint64_t ns);
	void (*link_end)(void *ctx, struct mprocess *p, uint32_t to_serial, const char *kind, uint64_t key, uint64_t ns);
	/* Objects are followed only when object_begin is set. */
	void (*object_begin)(void *ctx, struct mobject *o, struct mprocess *p, uint64_t ns);
	void (*object_end)(void *ctx, struct mobject *o, struct mprocess *p, uint64_t ns);
	/* o->holders (waiters = 0) or o->waiters (waiters = 1) changed */
	void (*object_count)(void *ctx, struct mobject *o, int waiters, uint64_t ns);
};

struct model;
struct model *model_new(const struct model_ops *ops);
void model_event(struct model *m, const struct ptt_event *ev);
/* End of input at ns: close every state, thread and process. */
void model_finish(struct model *m, uint64_t ns);
struct mthread *model_thread(struct model *m, uint32_t pid, uint32_t tid);
void model_free(struct model *m);

#endif

/*
 * model.h - the one state model of a trace: processes, threads (what each
 * holds and waits for, since when, opened by which event), objects (owner,
 * readers, holders and waiters, last releaser or poster), joins.  Every
 * analysis and converter reads the trace through it: ptt-dump --check and
 * --human, ptt-stat, ptt-deadlock, ptt-filter's window context, ptt-paje,
 * ptt-csv --states.  It prints nothing: it calls back and answers queries.
 * Memory is bounded by live threads, processes and objects: ended threads
 * are forgotten, destroyed objects too.
 *
 * What an event means comes from its role (formats/events.def) and class;
 * the model names event ids only for the structure of processes and threads
 * (begin, end, create, join).  The rules, each decided here once:
 *
 *  - Success.  An acquisition (role ACQUIRE, SHARED, TRY, TRY_SHARED) takes
 *    its object when ret is 0, or EOWNERDEAD (a robust mutex whose owner
 *    died: the caller holds it now, the dead owner's hold ends silently).
 *    Any other ret took nothing.  A semaphore wait succeeds on 0 only; a
 *    barrier wait on 0 and PTHREAD_BARRIER_SERIAL_THREAD; a join on 0.
 *  - Requests.  A request (role REQUEST, REQUEST_SHARED) opens a wait frame
 *    on its object (a join's on the target tid); the next outcome on the
 *    same object closes it.  A request made while the thread still has a
 *    wait open means the earlier call returned unseen (its outcome lost): the
 *    earlier wait is closed then.  An outcome without a request did not
 *    block (uncontended, or the request was not recorded).
 *  - Refused release.  A release (role RELEASE) with ret != 0 (EPERM, ...)
 *    releases nothing.  An rwlock release gives up the thread's write hold
 *    if it has one, else one read hold.
 *  - Spinlocks hold like mutexes; spinning leaves no record, so they never
 *    wait: they order locks but never block anyone in the model.
 *  - Condition waits.  The request releases the mutex (glibc's hidden
 *    unlock; a release like any other, ev is the request); the outcome,
 *    whatever its ret, holds the mutex again (the hidden re-lock; an
 *    acquisition whose ev has role WAIT_END).
 *  - Semaphores.  A successful wait takes a unit, a post gives one.  A
 *    semaphore is used as a lock when it was initialised to 1 (and stays one
 *    while its value stays at most 1), or, its sem_init not being in the
 *    trace, when a thread posts a semaphore it took itself: from then on a
 *    unit taken is a hold (MS_SEM_HOLD) released by the next post, of the
 *    taker or, when the poster holds none, of the thread that took it last;
 *    that post (by a thread that holds no unit, for another that took one)
 *    makes it a signal from then on: no hold, no lock order.  (CPython's
 *    locks are such semaphores; a Condition's waiter lock, released by the
 *    notifier, is a signal.)
 *  - Futexes (syscall(SYS_futex): Rust's std, InnoDB).  A wait request
 *    opens a wait on the futex word, its outcome closes it; a wake that
 *    woke someone is a post (the link from the waker).  No acquisition or
 *    release is seen, so a futex holds nothing and orders no lock.  A
 *    futex is a lock's word when a thread that returned from a wait on it
 *    is seen to wake it, that wait being its last futex wait: a lock's
 *    waiter leaves with
 *    the lock marked contended and wakes the next at its unlock (glibc's
 *    and Rust's mutexes, InnoDB's srw_lock).  Of the futexes whose waits
 *    returned and that none of their waiters woke: one whose waits
 *    expected two or more values, never decreasing (a wait that expected
 *    less than an earlier one and found the word changed, EAGAIN, read it
 *    before a notification another waiter saw: no decrease), is a signal (a Rust
 *    Condvar's counter: the notifier wakes, the waiters only wait, each
 *    expecting the count of notifications so far): waiting for work, not
 *    contention; one that a single thread waited on, always expecting the
 *    same value, is that thread's parking word (InnoDB's group-commit
 *    waiter, Rust's thread::park, parking_lot's parker): a hand-off, which
 *    the trace cannot tell a lock's from work's, counted with the locks and
 *    named as such.  Any other futex is a lock: one whose waits never
 *    returned (a deadlock), a word whose expected values go up and down
 *    (InnoDB's count of readers, waited on by a writer).
 *    model_futex_use says which.
 *  - Lock order (lockgraph.c, over this model).  Holding A (exclusive or
 *    shared, taken by any acquisition, a try too) while asking for B with a
 *    call that may block (request, blocking or timed acquisition; the cond
 *    wait's re-lock) orders A before B, when both are mutexes, rwlocks,
 *    spinlocks or semaphores used as locks.  A successful try of B orders
 *    A before B only when tries at its call site (or of B, without sites)
 *    are the fast path of a blocking acquisition: a try there failed and the
 *    same thread then asked for the object with a call that may block,
 *    before giving up any lock it held at the try (CPython: sem_trywait,
 *    then sem_wait).  A try after which the thread backs off is honest and
 *    orders nothing.  Threads blocked on each other when their process exits
 *    (process_exit) were deadlocked, as at the end of the trace.
 *  - Ownership (for anomalies and holder queries) is per object: the
 *    exclusive owner with its recursion depth, or a count of readers.  A
 *    thread that ends holding a lock leaves it owned by a dead thread (a
 *    normal mutex stays locked for ever); its frames end with it.
 *  - Anomalies (what cannot have happened): an exclusive acquisition of an
 *    object owned by another live or dead thread (but EOWNERDEAD), a write
 *    lock taken while readers hold it, a read lock while another thread
 *    write-holds it, a release by a thread that does not own it, a cond
 *    wait that ends still owning its mutex, a thread that begins with no
 *    thread_create announcing it, a process's first event other than
 *    process_begin.  Not anomalies: releases of objects never taken before,
 *    and threads that begin with their thread_create before the start, in a
 *    trace that starts mid-run (model_starts_mid_run: a later file of a
 *    recording, a flight recording, a window), nor there the cond wait
 *    requests of waiters whose mutex is free, nor in a flight recording
 *    (where each thread's history begins at its own time) a release by a
 *    thread of an object left free before its history began; releases by a
 *    forked child of locks its parent held at fork().  One per event.
 *  - Tracer stalls.  A tracer_stall record opens a frame MS_TRACER_STALL
 *    (the thread waited for room in its ring, in ptt-record's lossless
 *    mode: ptt's doing, not the program's), its tracer_stall_end closes it;
 *    it is no wait (mstate_is_wait).  When it closes, every wait open on an
 *    object the stalled thread holds is lengthened by the stall's overlap
 *    with it (the wait frame's stalled_ns, seen by acquire and wait_end).
 *  - Lost events.  A rec_lost record that names a thread (ptt-record -d
 *    dropped its events from from_ns to to_ns, or a signal handler's
 *    inside the tracer) marks every frame of that thread opened by to_ns
 *    as lost (mframe.lost), those it opens later in the span too (the
 *    span may hold several stretches, with records between them): its end
 *    may be among the lost events, so how long it lasted is not known.  Such a hold ends uncounted at the
 *    thread's next release of its object, or gives way, uncounted, when the
 *    thread takes the object again (the release was lost, not a recursive
 *    take); such a wait ends at the next outcome on its object as if the
 *    thread had not waited, and is no wait open at the end.  So events
 *    lost inside a hold or a wait make figures short, never long, and the
 *    frames the loss did not end go on without a violation.
 *  - Futexes (a futex word waited on through syscall()) are waited on, never
 *    held: a futex-based lock is taken by an atomic operation in the program,
 *    out of sight, so its holder is unknown.  A wait request opens the wait,
 *    its outcome closes it (ok on 0; EAGAIN: the word had changed); a wake
 *    that woke someone makes its thread the last to post (the "wake" link).
 *  - Events after a process's exit.  process_exit is written when the
 *    process calls exit(); its other threads run on until the kernel ends
 *    them, and may record a few events more (a pool thread woken by the
 *    exit's clean-up, its thread_end).  The model has ended them at
 *    process_exit (their waits open then are open at the exit): such late
 *    events of that pid are left out (model_after_exit counts them) until a
 *    process_begin reuses the pid, rather than starting the threads again
 *    (a second row of the same thread, living a few microseconds).
 *  - Objects are per process (a forked child has copies at the same
 *    addresses), but for those in shared memory (shmap.h: their address,
 *    PTT_SHARED_ADDR, is their mapping's, the same in every process): one
 *    object, held and waited for by threads of several processes, its
 *    hand-offs across them; not forgotten when one of them ends.  A successful destroy (role DESTROY) forgets an idle object
 *    (the address may be reused by a new one); INIT resets its ownership.
 */
#ifndef PTT_MODEL_H
#define PTT_MODEL_H

#include <stdint.h>

#include "../../formats/ptt_trace.h"

/* A thread's state: running (outside any traced blocking call), or the frame on top of its stack. */
enum mstate {
	MS_RUNNING, MS_MUTEX_WAIT, MS_MUTEX_HOLD, MS_COND_WAIT, MS_BARRIER, MS_JOIN, MS_SEM_WAIT,
	MS_RW_RD_WAIT, MS_RW_WR_WAIT, MS_RW_RD_HOLD, MS_RW_WR_HOLD, MS_SPIN_HOLD, MS_SEM_HOLD,
	MS_OTHER_WAIT, MS_TRACER_STALL, MS_FUTEX_WAIT, MS_COUNT
};
extern const char *const mstate_name[MS_COUNT];   /* the legend: "Running", "Blocked on mutex", ... */
extern const char *const mstate_alias[MS_COUNT];  /* "R", "MW", ... */
extern const char *const mstate_key[MS_COUNT];    /* "running", "blocked_mutex", ... */
int mstate_is_wait(unsigned s); /* a wait of the program's: not a stall (MS_TRACER_STALL) */
int mstate_is_hold(unsigned s);
unsigned mstate_class(unsigned s); /* the class of object a state is about (PTT_CLASS_META: none) */

/* The event that opened a frame, kept to tell it again (a window's context). */
struct mopen {
	uint16_t id;
	uint64_t ticks, pos;
	uint64_t arg[PTT_MAX_ARGS];
};

/* push (model.c) sets every field, without zeroing the frame first: a new field is set there too */
struct mframe {
	uint8_t state;
	uint64_t obj;               /* the object's address; a join's target tid */
	uint64_t since_ns;          /* start of the current interval on top of the stack */
	uint64_t begin_ns;          /* when the frame opened (a hold's acquisition, a wait's request) */
	uint64_t stalled_ns;        /* a wait: how long of it a holder of its object was stalled by the tracer */
	struct mopen open;
	uint32_t stack;             /* the caller's stack where it opened (model_stacks), 0 unknown; a hold
				       taken after a wait has the wait's */
	uint64_t events;            /* the thread's events when it opened, its opening one included (mthread.events) */
	uint8_t lost;               /* opened before a stretch of its thread's lost events ended: its end may be
				       among them (model.h: lost events) */
};

struct mthread {
	uint32_t pid, tid;
	uint32_t serial;            /* unique per thread incarnation in this trace */
	uint32_t joining;           /* tid this thread is blocked joining, 0 if none */
	uint64_t join_key;          /* a join link started towards this thread, not yet ended */
	uint64_t begin_ns;
	struct mframe *stack;       /* holds and waits, oldest first */
	unsigned depth, cap;
	uint64_t running_since;
	uint32_t pending_stack;     /* a stack event's id, for the thread's next event */
	uint64_t futex_waited;      /* the futex whose wait this thread returned from last (0: none) */
	uint64_t futex_lower;       /* the futex it waits on expecting less than the last value expected (0: none) */
	uint64_t events;            /* its events applied so far (the runtime's records of it; stacks not counted):
				       a hold's share of them is what ptt's own recording lengthened it by */
	uint64_t lost_to;           /* the end of the latest stretch of its events lost (0: none): a frame opened
				       by then is lost (mframe.lost) */
	void *user;                 /* for the converter */
};

/* What the model saw of a futex, for the futex rule (model_futex_use). */
struct mfutex {
	uint8_t returned;           /* a wait on it returned */
	uint8_t woken_by_waiter;    /* woken by a thread whose last futex wait was on it */
	uint8_t counter;            /* its waits expected 0 values, 1, 2 or more never decreasing, 3 not so */
	uint8_t waiters;            /* threads that waited on it: 0, 1 (waiter), 2 several */
	uint32_t val, waiter;       /* the value its last wait expected; its one waiter */
};
enum mfutex_use { MF_LOCK, MF_SIGNAL, MF_PARK };

/*
 * A synchronisation object, known from its first event until it is
 * destroyed (idle) or its process ends.  holders and waiters count the
 * frames of live threads' stacks on it (a recursive lock held twice counts
 * two), so they never go negative and return to 0 as threads end.
 */
struct mobject {
	uint32_t pid;
	uint32_t serial;            /* unique per shown incarnation (object_begin); 0 while not shown */
	uint64_t addr;
	uint8_t cls;                /* PTT_CLASS_MUTEX .. PTT_CLASS_SPIN or PTT_CLASS_FUTEX, as shown */
	uint32_t holders, waiters;
	uint32_t last_tid;          /* last unlocker / signaller / poster / barrier arriver */
	uint32_t owner, depth;      /* exclusive owner (maybe ended) and its recursion depth */
	uint32_t readers;
	uint32_t taker;             /* semaphore: the thread that took a unit last */
	uint32_t poster;            /* semaphore: the one thread that posted it, if posters == 1 */
	uint8_t posters;            /* 0, 1, 2 = several */
	uint8_t sem_lock;           /* a semaphore used as a lock */
	struct mfutex futex;        /* a futex's use, so far (the futex rule) */
	uint8_t value_known;        /* semaphore: its sem_init is in the trace, so value is right */
	int64_t value;
	uint8_t known;              /* taken or released at least once */
	uint64_t free_ns;           /* when it was last seen left free */
	void *user;
};

struct mprocess {
	uint32_t pid;
	uint32_t serial;
	uint32_t live_threads;
	void *user;
};

enum manomaly_kind {
	MA_NO_PROCESS_BEGIN, MA_UNANNOUNCED_THREAD, MA_TAKEN_WHILE_HELD, MA_WRITE_WHILE_READ,
	MA_READ_WHILE_WRITTEN, MA_RELEASE_NOT_HELD, MA_COND_KEPT_MUTEX,
};
struct manomaly {
	enum manomaly_kind kind;
	uint64_t obj;               /* the object concerned */
	uint32_t other;             /* the owner in the way (0: none, the object is free) */
	uint32_t count;             /* readers in the way */
};

struct model_ops {
	void *ctx;
	void (*process_begin)(void *ctx, struct mprocess *p, uint64_t ns);
	void (*process_end)(void *ctx, struct mprocess *p, uint64_t ns);
	void (*thread_begin)(void *ctx, struct mthread *t, struct mprocess *p, uint64_t ns);
	void (*thread_end)(void *ctx, struct mthread *t, struct mprocess *p, uint64_t ns);
	/* the top of t's stack changed from old (depth 0: running) */
	void (*state)(void *ctx, struct mthread *t, const struct mframe *old, const struct mframe *now, uint64_t ns);
	/* a link between two live threads (zero length, at ns): kind "create", "handoff", "wake", "join", "barrier", "post" */
	void (*link)(void *ctx, struct mthread *from, struct mthread *to, const char *kind, uint64_t obj, uint64_t ns);
	/* a point event worth showing: posts, releases, tries, failed acquisitions, joins, life cycle, user events */
	void (*point)(void *ctx, struct mthread *t, const struct ptt_event *ev);
	/*
	 * A link whose two ends happen at different times (join: from the joined
	 * thread's end to the joiner's return), or from a thread that already
	 * ended (by serial).  Every started key is ended, at the latest when the
	 * receiving thread ends; keys are never reused.
	 */
	void (*link_start)(void *ctx, struct mprocess *p, uint32_t from_serial, const char *kind, uint64_t key, uint64_t ns);
	void (*link_end)(void *ctx, struct mprocess *p, uint32_t to_serial, const char *kind, uint64_t key, uint64_t ns);
	/* Objects are shown (serial, object_begin/end/count) only when object_begin is set. */
	void (*object_begin)(void *ctx, struct mobject *o, struct mprocess *p, uint64_t ns);
	void (*object_end)(void *ctx, struct mobject *o, struct mprocess *p, uint64_t ns);
	/* o->holders (waiters = 0) or o->waiters (waiters = 1) changed */
	void (*object_count)(void *ctx, struct mobject *o, int waiters, uint64_t ns);
	/* t asks for o (a wait frame pushed) */
	void (*wait_begin)(void *ctx, struct mthread *t, struct mobject *o, const struct mframe *wait, const struct ptt_event *ev);
	/*
	 * t took o: hold is its new frame (NULL for a semaphore unit that is no
	 * hold), wait the request it waited in (NULL: it did not block).  For a
	 * cond wait's re-lock of its mutex, ev is the cond wait's outcome.
	 */
	void (*acquire)(void *ctx, struct mthread *t, struct mobject *o, const struct mframe *hold,
			const struct mframe *wait, const struct ptt_event *ev);
	/* t gave o up; held since hold->begin_ns */
	void (*release)(void *ctx, struct mthread *t, struct mobject *o, const struct mframe *hold, const struct ptt_event *ev);
	/* an outcome that took nothing (cond wait, barrier, join, failed acquisition); wait as for acquire */
	void (*wait_end)(void *ctx, struct mthread *t, struct mobject *o, const struct mframe *wait, int ok,
			 const struct ptt_event *ev);
	/*
	 * t became o's last releaser (a hold's release, a read unlock too), signaller,
	 * poster, waking futex caller or barrier arriver, at ev: the thread the next
	 * link on o (handoff, wake, post, barrier) comes from (o->last_tid).
	 */
	void (*last)(void *ctx, struct mthread *t, struct mobject *o, const struct ptt_event *ev);
	/* what cannot have happened (see the rules above); the event is applied all the same */
	void (*anomaly)(void *ctx, const struct ptt_event *ev, const struct manomaly *a);
};

struct model;
struct model *model_new(const struct model_ops *ops);
/* ops observe m from now on, in place of those model_new was given (an analysis made after the model
 * it observes, pass.h); before the first event. */
void model_observe(struct model *m, const struct model_ops *ops);
/* ops observe m as well as its observer now (both called, that one first); 0, or -1 out of memory. */
int model_observe_also(struct model *m, const struct model_ops *ops);
/* The trace starts mid-run (a later file of a rotated recording): see the anomalies above.
 * A flight recording (r's flight_thread lines) also says where each thread's history begins. */
void model_starts_mid_run(struct model *m, const struct ptt_reader *r);
void model_event(struct model *m, const struct ptt_event *ev);
/* End of input at ns: close every state, thread and process. */
void model_finish(struct model *m, uint64_t ns);
void model_free(struct model *m);

/* ---- queries ---- */
/* The stacks the trace defined so far (the frames of mframe.stack: ptt_stacks_get with the thread's pid). */
const struct ptt_stacks *model_stacks(const struct model *m);
/* A copy of the frames of process pid's stack (malloc'd into *frames: kept past an exec, which numbers stacks
 * anew); their number, 0 (and *frames NULL) without a stack or memory. */
unsigned model_stack_copy(const struct model *m, uint32_t pid, uint32_t stack, uint64_t **frames);
/* Stack events that said the runtime's stack table was full (those events have no stack). */
uint64_t model_stacks_full(const struct model *m);
/* Frames forgotten, the oldest of a thread holding and waiting on more than PTT_FRAMES_MAX at once (a limit, said as one). */
uint64_t model_frames_forgotten(const struct model *m);
/* The thread that forgot a frame last (0, 0: none did). */
void model_frames_forgot_by(const struct model *m, uint32_t *pid, uint32_t *tid);
/* Stack events whose stack the trace had not defined (its frames lost, overwritten in a flight
 * recording, or in a damaged block): those events are named at their call sites. */
uint64_t model_stacks_unknown(const struct model *m);
/* The objects whose first event is a release: held when the trace starts (a flight recording, a file
 * without the state at its head) or taken where events are lost; their holds before are unknown. */
uint64_t model_held_before(const struct model *m);
/* Events of a process after its process_exit, left out (model.h: events after a process's exit). */
uint64_t model_after_exit(const struct model *m);
/* Where a flight recording's history of thread tid begins when its older records were overwritten
 * (its flight_thread line says cut): its events before are lost.  0: not so. */
uint64_t model_history_cut(const struct model *m, uint32_t pid, uint32_t tid);
struct mthread *model_thread(const struct model *m, uint32_t pid, uint32_t tid);
/* Thread tid of process pid, else of any process (the recorder's notes, rec_lost, name a thread by tid only). */
struct mthread *model_thread_of_tid(const struct model *m, uint32_t pid, uint32_t tid);
struct mobject *model_object(const struct model *m, uint32_t pid, uint64_t addr);
/* Is o the object at addr in process pid?  Its own process's, or in shared memory (PTT_SHARED_ADDR: shmap.h) any process's. */
int model_object_is(const struct mobject *o, uint32_t pid, uint64_t addr);
/* The live thread tid that used o (its owner, last releaser, taker), asked from process pid: in that
 * process, or for an object in shared memory in whichever process has it; NULL if none. */
struct mthread *model_object_user(const struct model *m, const struct mobject *o, uint32_t pid, uint32_t tid);
/* The live thread holding addr in any mode (a reader too), other than not, or NULL. */
struct mthread *model_any_holder(const struct model *m, uint32_t pid, uint64_t addr, const struct mthread *not);
/* The frame on top of t's stack, or NULL when it runs; the topmost wait frame, or NULL. */
const struct mframe *model_top(const struct mthread *t);
const struct mframe *model_waiting(const struct mthread *t);
/* A futex's use by the futex rule above, from what the model saw of it (or a converter's copy). */
enum mfutex_use model_futex_use(const struct mfutex *f);
/* Fold what was seen of a futex since into a copy kept past the object's end (a converter's). */
void model_futex_merge(struct mfutex *into, const struct mfutex *seen);
/* Call fn for every live thread (in no particular order); stops at the first non-zero result. */
int model_foreach_thread(const struct model *m, int (*fn)(void *ctx, struct mthread *t), void *ctx);
/* Call fn for every open frame (hold or wait) of every live thread; stops at the first non-zero result. */
int model_foreach_open(const struct model *m, int (*fn)(void *ctx, struct mthread *t, const struct mframe *f), void *ctx);
/*
 * The waits an end cuts, given before the model takes it: ev a thread_end (that thread's) or a
 * process_exit (its process's), at ev's time; ev NULL: every wait still open at end_ns, the end of
 * the trace or window.  Any other ev: none.  A cut wait is a wait of the program's on an object (no
 * join, no call of unknown kind) opened by then, whose end is not among lost events: a thread
 * blocked for ever, or cut by the end.  ptt-stat counts them as contended up to that end, ptt-deadlock
 * reports them as blocked for ever: one rule for both.  Stops at fn's first non-zero result.
 */
int model_foreach_cut(const struct model *m, const struct ptt_event *ev, uint64_t end_ns,
		      int (*fn)(void *ctx, struct mthread *t, const struct mframe *f), void *ctx);
/* The event that opened f, rebuilt with the types of the trace and stamped at_ns/at_ticks; 0 or -1 (type unknown). */
int model_frame_event(const struct mthread *t, const struct mframe *f, const struct ptt_types *types,
		      uint64_t at_ns, uint64_t at_ticks, struct ptt_event *ev);

#endif

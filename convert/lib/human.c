/* human.c - sentences for ptt-dump --human, in the spirit of PTT's text mode. */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <string.h>

#include "host.h"
#include "human.h"
#include "model.h"
#include "symbols.h"

struct phrase {
	const char *event;
	const char *verb;  /* "%T" the thread, "%O" the first object argument, "%A" the second */
	const char *fail;  /* when the call failed (ret is an error number; rec_stop: a signal ended the program) */
};

/*
 * One per event type (a test checks that none is missing).  In verbs: %T the
 * thread, %P the process, %O the first object argument, %A the second, %S
 * the string, %a the first argument as a number, %c the parent, %k the
 * child, %j the target (or stream) thread, %{name} the argument called name,
 * %H ", held by thread N" when the model knows another holder, %C who
 * created the thread, %E how it ended, %G the signal as "signal 2 (SIGINT)",
 * %X the first object's address (where a name would only repeat %S), %J the
 * target thread's tid alone.  Threads and objects are named as the pictures
 * name them (symbols.h): "thread 4243 (worker_main)", "mutex queue_lock".
 * A failed call (ret an error number) takes the second verb, followed by
 * what the error means and its name: "does not get mutex m: timed out
 * (ETIMEDOUT)".  Never "ret 110" or "result -1": the numbers are raw.
 */
static const struct phrase phrases[] = {
	{ "pad", "(padding)", NULL },
	{ "process_begin", "process %P starts (parent %a): %S", NULL },
	{ "process_exit", "process %P exits with status %{status}", NULL },
	{ "process_fork", "%T forks process %a", NULL },
	{ "process_exec", "%T executes %S", "%T fails to execute %S" },
	{ "thread_begin", "%T begins (%C)", NULL },
	{ "thread_end", "%T ends%E", NULL },
	{ "thread_create", "%T creates thread %k", "%T fails to create a thread" },
	{ "thread_join_req", "%T waits to join thread %j", NULL },
	{ "thread_join", "%T joins thread %j", "%T does not join thread %j" },
	{ "thread_tryjoin", "%T tries to join thread %j and joins it", "%T tries to join thread %j and does not" },
	{ "thread_detach", "%T detaches thread %j", "%T fails to detach thread %j" },
	{ "thread_cancel", "%T cancels thread %j", "%T fails to cancel thread %j" },
	{ "thread_exit", "%T calls pthread_exit", NULL },
	{ "thread_name", "thread %J is named %S", NULL },
	{ "object_name", "object %O is named %S", NULL },
	{ "module", "process %P maps %S at %X", NULL },
	{ "module_build_id", "process %P's object at %X has build-id %S", NULL },
	{ "map_shared", "process %P maps shared memory %S at %X (%{len} bytes)", NULL },
	{ "unmap_shared", "process %P unmaps %{len} bytes at %X, shared memory among them", NULL },
	{ "mutex_init", "%T initialises mutex %O", "%T fails to initialise mutex %O" },
	{ "mutex_destroy", "%T destroys mutex %O", "%T fails to destroy mutex %O" },
	{ "mutex_lock_req", "%T waits for mutex %O%H", NULL },
	{ "mutex_lock", "%T holds mutex %O", "%T does not get mutex %O" },
	{ "mutex_trylock", "%T tries mutex %O and holds it", "%T tries mutex %O and does not get it" },
	{ "mutex_timedlock_req", "%T waits (with timeout) for mutex %O%H", NULL },
	{ "mutex_timedlock", "%T holds mutex %O", "%T does not get mutex %O" },
	{ "mutex_unlock", "%T releases mutex %O", "%T fails to release mutex %O" },
	{ "cond_init", "%T initialises condition %O", "%T fails to initialise condition %O" },
	{ "cond_destroy", "%T destroys condition %O", "%T fails to destroy condition %O" },
	{ "cond_wait_req", "%T releases mutex %A and waits on condition %O", NULL },
	{ "cond_timedwait_req", "%T releases mutex %A and waits (with timeout) on condition %O", NULL },
	{ "cond_wait", "%T wakes on condition %O and holds mutex %A", "%T stops waiting on condition %O and holds mutex %A" },
	{ "cond_signal", "%T signals condition %O", "%T fails to signal condition %O" },
	{ "cond_broadcast", "%T broadcasts condition %O", "%T fails to broadcast condition %O" },
	{ "rwlock_init", "%T initialises rwlock %O", "%T fails to initialise rwlock %O" },
	{ "rwlock_destroy", "%T destroys rwlock %O", "%T fails to destroy rwlock %O" },
	{ "rwlock_rdlock_req", "%T waits to read-lock %O%H", NULL },
	{ "rwlock_rdlock", "%T read-holds %O", "%T does not get a read lock on %O" },
	{ "rwlock_timedrdlock", "%T read-holds %O", "%T does not get a read lock on %O" },
	{ "rwlock_tryrdlock", "%T tries to read-lock %O and read-holds it", "%T tries to read-lock %O and does not get it" },
	{ "rwlock_wrlock_req", "%T waits to write-lock %O%H", NULL },
	{ "rwlock_wrlock", "%T write-holds %O", "%T does not get a write lock on %O" },
	{ "rwlock_timedwrlock", "%T write-holds %O", "%T does not get a write lock on %O" },
	{ "rwlock_trywrlock", "%T tries to write-lock %O and write-holds it", "%T tries to write-lock %O and does not get it" },
	{ "rwlock_unlock", "%T releases rwlock %O", "%T fails to release rwlock %O" },
	{ "barrier_init", "%T initialises barrier %O for %{count} threads", "%T fails to initialise barrier %O for %{count} threads" },
	{ "barrier_destroy", "%T destroys barrier %O", "%T fails to destroy barrier %O" },
	{ "barrier_wait_req", "%T arrives at barrier %O", NULL },
	{ "barrier_wait", "%T leaves barrier %O", NULL }, /* ret -1: the serial thread */
	{ "sem_init", "%T initialises semaphore %O to %{value}", "%T fails to initialise semaphore %O to %{value}" },
	{ "sem_destroy", "%T destroys semaphore %O", "%T fails to destroy semaphore %O" },
	{ "sem_open", "%T opens semaphore %S at %X", NULL },
	{ "sem_close", "%T closes semaphore %O", "%T fails to close semaphore %O" },
	{ "sem_unlink", "%T unlinks semaphore %S", "%T fails to unlink semaphore %S" },
	{ "sem_wait_req", "%T waits on semaphore %O%H", NULL },
	{ "sem_wait", "%T takes semaphore %O", "%T does not take semaphore %O" },
	{ "sem_timedwait", "%T takes semaphore %O", "%T does not take semaphore %O" },
	{ "sem_trywait", "%T tries semaphore %O and takes it", "%T tries semaphore %O and does not take it" },
	{ "sem_post", "%T posts semaphore %O", "%T fails to post semaphore %O" },
	{ "spin_lock", "%T holds spinlock %O", "%T does not get spinlock %O" },
	{ "spin_trylock", "%T tries spinlock %O and holds it", "%T tries spinlock %O and does not get it" },
	{ "spin_unlock", "%T releases spinlock %O", "%T fails to release spinlock %O" },
	{ "futex_wait_req", "%T waits on futex %O (if it still reads %{val})", NULL },
	{ "futex_wait", "%T is woken on futex %O", "%T returns from futex %O unwoken" },
	{ "futex_wake", "%T wakes futex %O: %{woken} woken (%{count} asked)", NULL },
	{ "wait_other", "%T waits in a call left out of the selection (on %O)", NULL },
	{ "wait_other_end", "%T returns from the call left out of the selection", NULL },
	{ "rec_start", "the recorder starts tracing process %{child} (rings of %{ring_bytes} bytes)", NULL },
	{ "rec_drain", "the recorder has drained %{events} events (%{bytes} bytes)", NULL },
	{ "rec_ring_full", "thread %j waited for room in its ring", NULL },
	{ "rec_lost", "the recorder lost %{count} events of thread %j", NULL },
	{ "tracer_stall", "%T is stalled by the tracer: it waits for room in its ring (the recorder is behind)", NULL },
	{ "tracer_stall_end", "%T goes on: its ring has room again", NULL },
	{ "rec_signal", "the recorder passes %G on to process %{child}", NULL },
	{ "limit", "%T meets a limit: table %{table}, %{count} dropped or cut (see ptt-dump --info)", NULL },
	{ "rec_stop", "the recorder stops: the program exited with status %{status}", "the recorder stops: the program was killed by %G" },
};

/*
 * The arguments the phrases name with %{name}, as numbers (enum ptt_argname),
 * in the order they appear in the verb [0] and the failure [1]: read from the
 * table once, so that no event compares argument names.
 */
#define NPHRASES (sizeof phrases / sizeof phrases[0])
#define NAMED_MAX 4
static uint8_t named[NPHRASES][2][NAMED_MAX];

static void named_init(void)
{
	static int ready;
	if (ready)
		return;
	for (size_t i = 0; i < NPHRASES; i++)
		for (int f = 0; f < 2; f++) {
			const char *p = f ? phrases[i].fail : phrases[i].verb;
			for (unsigned k = 0; p && (p = strstr(p, "%{")) != NULL && k < NAMED_MAX; k++) {
				char name[32];
				size_t len = strcspn(p += 2, "}");
				snprintf(name, sizeof name, "%.*s", (int)len, p);
				named[i][f][k] = (uint8_t)ptt_argname_from_string(name);
			}
		}
	ready = 1;
}

/* The phrase of an event type by its name, or NULL. */
static const struct phrase *phrase_named(const char *name)
{
	const struct phrase *ph = NULL;
	for (size_t i = 0; i < NPHRASES; i++)
		if (strcmp(phrases[i].event, name) == 0)
			ph = &phrases[i];
	return ph;
}

/* The same for a type: a built-in one's (the same id and name) looked up once per id, not per event. */
static const struct phrase *phrase_of(const struct ptt_type *t)
{
	static const struct phrase *by_id[PTT_EV_BUILTIN_COUNT];
	static uint8_t known[PTT_EV_BUILTIN_COUNT];
	const struct ptt_type *b = ptt_builtin_type(t->id);
	if (!b || (t != b && strcmp(t->name, b->name) != 0))
		return phrase_named(t->name);
	if (!known[t->id]) {
		by_id[t->id] = phrase_named(b->name);
		known[t->id] = 1;
	}
	return by_id[t->id];
}

/* "4243 (worker)": the tid and the name every picture gives the thread (symbols.h), when it has one */
static size_t thread_words(struct ptt_syms *syms, uint32_t pid, uint64_t tid, char *buf, size_t size)
{
	char n[PTT_MAX_STR];
	if (syms && tid)
		ptt_syms_thread_known_name(syms, pid, (uint32_t)tid, n, sizeof n);
	else
		n[0] = 0;
	uint64_t id = tid <= UINT32_MAX ? host_local((uint32_t)tid) : tid; /* as its host gave it (a merged trace) */
	int w = *n ? snprintf(buf, size, "%" PRIu64 " (%s)", id, n) : snprintf(buf, size, "%" PRIu64, id);
	return w < 0 ? 0 : (size_t)w;
}

/* the object as the pictures name it: its given name, symbol, module+0xoff, else its address */
static size_t object_words(struct ptt_syms *syms, uint32_t pid, uint64_t addr, char *buf, size_t size)
{
	char n[PTT_MAX_STR + 32];
	if (syms && addr)
		ptt_syms_object_name(syms, pid, addr, n, sizeof n);
	else
		snprintf(n, sizeof n, "0x%" PRIx64, addr);
	int w = snprintf(buf, size, "%s", n);
	return w < 0 ? 0 : (size_t)w;
}

static uint64_t nth_arg(const struct ptt_event *ev, unsigned kind_wanted, unsigned nth)
{
	for (unsigned a = 0; a < ev->nargs; a++)
		if (ev->type->argkind[a] == kind_wanted && nth-- == 0)
			return ev->arg[a];
	return 0;
}

/* ", held by thread N" when the model knows a live thread other than ev's that holds its first object */
static size_t holder_words(const struct ptt_event *ev, struct ptt_syms *syms, const struct model *m, char *buf,
			   size_t size)
{
	if (!m || !ev->nargs || ev->type->argkind[0] != PTT_ARG_PTR)
		return 0;
	struct mthread *t = model_thread(m, ev->pid, ev->tid);
	struct mthread *h = model_any_holder(m, ev->pid, ev->arg[0], t);
	struct mobject *o = model_object(m, ev->pid, ev->arg[0]);
	if (!h || (ev->type->cls == PTT_CLASS_SEM && !(o && o->sem_lock)))
		return 0;
	int w = snprintf(buf, size, ", held by thread ");
	size_t n = w < 0 ? 0 : (size_t)w;
	return n < size ? n + thread_words(syms, ev->pid, h->tid, buf + n, size - n) : n;
}

/* What an error number returned by a pthread call means to the reader ("timed out"). */
static const char *error_meaning(int e)
{
	switch (e) {
	case ETIMEDOUT: return "timed out";
	case EBUSY: return "busy";
	case EAGAIN: return "not available now";
	case EDEADLK: return "it would deadlock";
	case EPERM: return "the thread does not hold it";
	case EINTR: return "interrupted by a signal";
	case EINVAL: return "invalid";
	case ESRCH: return "no such thread";
	case ENOTRECOVERABLE: return "not recoverable (a holder died and left it inconsistent)";
	case ENOMEM: return "out of memory";
	case ECANCELED: return "cancelled";
	default: return strerror(e);
	}
}

/* ": timed out (ETIMEDOUT)" */
static size_t error_words(int e, char *buf, size_t size)
{
	const char *name = strerrorname_np(e);
	int w = name ? snprintf(buf, size, ": %s (%s)", error_meaning(e), name)
		     : snprintf(buf, size, ": %s (error %d)", error_meaning(e), e);
	return w < 0 ? 0 : (size_t)w;
}

/* "signal 2 (SIGINT)" */
static size_t signal_words(uint64_t sig, char *buf, size_t size)
{
	const char *abbrev = sig < 1024 ? sigabbrev_np((int)sig) : NULL;
	int w = abbrev ? snprintf(buf, size, "signal %" PRIu64 " (SIG%s)", sig, abbrev)
		       : snprintf(buf, size, "signal %" PRIu64, sig);
	return w < 0 ? 0 : (size_t)w;
}

/* Who started the thread: its creator, else what a parent of 0 means (capture/runtime/init.c). */
static size_t creator_words(const struct ptt_event *ev, struct ptt_syms *syms, char *buf, size_t size)
{
	uint64_t parent = ptt_event_argn(ev, PTT_ARGNAME_PARENT, 0);
	if (parent) {
		int w = snprintf(buf, size, "created by thread ");
		size_t n = w < 0 ? 0 : (size_t)w;
		return n < size ? n + thread_words(syms, ev->pid, parent, buf + n, size - n) : n;
	}
	int w = snprintf(buf, size, "%s",
			 ev->tid == ev->pid ? "the process's main thread" : "its creation was not traced");
	return w < 0 ? 0 : (size_t)w;
}

/* How a thread ended (capture/runtime/wrap_thread.c: 0 returned, 1 pthread_exit, 2 cancelled, 3 process exit). */
static size_t end_words(const struct ptt_event *ev, char *buf, size_t size)
{
	static const char *const how[] = { "", " (pthread_exit)", " (cancelled)", " with its process" };
	uint64_t h = ptt_event_argn(ev, PTT_ARGNAME_HOW, 0);
	int w = snprintf(buf, size, "%s", h < sizeof how / sizeof how[0] ? how[h] : "");
	return w < 0 ? 0 : (size_t)w;
}

/*
 * How the call came out: 0 success, 1 failed (the phrase's second verb and
 * the error), 2 success worth a word (the barrier's serial thread, a robust
 * mutex taken from a dead holder).
 */
static int outcome(const struct ptt_event *ev, int64_t *ret)
{
	if (ev->id == PTT_EV_REC_STOP) {
		*ret = 0;
		return ptt_event_argn(ev, PTT_ARGNAME_SIGNAL, 0) != 0;
	}
	int ri = ptt_type_arg_index(ev->type, PTT_ARGNAME_RET);
	*ret = ri >= 0 ? (int64_t)(int32_t)ev->arg[ri] : 0;
	if (*ret == 0)
		return 0;
	if ((ev->id == PTT_EV_BARRIER_WAIT && *ret == -1) || *ret == EOWNERDEAD)
		return 2;
	return 1;
}

void human_sentence(const struct ptt_event *ev, struct ptt_syms *syms, const struct model *m, char *buf,
		    size_t size)
{
	const struct phrase *ph = phrase_of(ev->type);
	size_t n = 0;
	int w = snprintf(buf, size, "%" PRIu64 ".%09" PRIu64 " ", ev->ns / 1000000000u, ev->ns % 1000000000u);
	n = w < 0 ? 0 : (size_t)w;
	if (!ph) {
		n += (size_t)snprintf(buf + n, size - n, "thread ");
		n += thread_words(syms, ev->pid, ev->tid, buf + n, size - n);
		char text[PTT_MAX_STR * 4 + 256];
		ptt_text_format_event(ev, text, sizeof text);
		const char *rest = strstr(text, ev->type->name);
		snprintf(buf + n, size - n, ": %s", rest ? rest : ev->type->name);
		return;
	}
	int64_t ret;
	int how = outcome(ev, &ret);
	int failed = how == 1 && ph->fail != NULL;
	unsigned nth = 0; /* the %{name} met so far */
	named_init();
	for (const char *p = failed ? ph->fail : ph->verb; *p && n + 1 < size; p++) {
		if (*p != '%') {
			buf[n++] = *p;
			continue;
		}
		char c = *++p;
		switch (c) {
		case 'T':
			n += (size_t)snprintf(buf + n, size - n, "thread ");
			n += thread_words(syms, ev->pid, ev->tid, buf + n, size - n);
			break;
		case 'P': n += (size_t)snprintf(buf + n, size - n, "%" PRIu32, host_local(ev->pid)); break;
		case 'O': n += object_words(syms, ev->pid, nth_arg(ev, PTT_ARG_PTR, 0), buf + n, size - n); break;
		case 'X': n += (size_t)snprintf(buf + n, size - n, "0x%" PRIx64, nth_arg(ev, PTT_ARG_PTR, 0)); break;
		case 'A': n += object_words(syms, ev->pid, nth_arg(ev, PTT_ARG_PTR, 1), buf + n, size - n); break;
		case 'S': n += ptt_text_quote(ev->str, buf + n, size - n); break;
		case 'a': { /* a pid (parent, forked child), as its host gave it in a merged trace; -1 (failed) kept */
			uint64_t v = ev->nargs ? ev->arg[0] : 0;
			n += (size_t)snprintf(buf + n, size - n, "%" PRIu64, v < UINT32_MAX ? host_local((uint32_t)v) : v);
			break;
		}
		case 'c': n += thread_words(syms, ev->pid, ptt_event_argn(ev, PTT_ARGNAME_PARENT, 0), buf + n, size - n); break;
		case 'k': n += thread_words(syms, ev->pid, ptt_event_argn(ev, PTT_ARGNAME_CHILD, 0), buf + n, size - n); break;
		case 'H': n += holder_words(ev, syms, m, buf + n, size - n); break;
		case 'C': n += creator_words(ev, syms, buf + n, size - n); break;
		case 'E': n += end_words(ev, buf + n, size - n); break;
		case 'G': n += signal_words(ptt_event_argn(ev, PTT_ARGNAME_SIGNAL, 0), buf + n, size - n); break;
		case '{': {
			size_t k = 0;
			while (p[1] && p[1] != '}' && k + 1 < 32)
				k++, p++;
			if (p[1] == '}')
				p++;
			int ai = nth < NAMED_MAX ? ptt_type_arg_index(ev->type, named[ph - phrases][failed][nth++]) : -1;
			if (ai >= 0 && (ev->type->argkind[ai] == PTT_ARG_I32 || ev->type->argkind[ai] == PTT_ARG_I64))
				n += (size_t)snprintf(buf + n, size - n, "%" PRId64, (int64_t)ev->arg[ai]);
			else if (ai >= 0)
				n += (size_t)snprintf(buf + n, size - n, "%" PRIu64, ev->arg[ai]);
			break;
		}
		case 'J': n += (size_t)snprintf(buf + n, size - n, "%" PRIu32, host_local((uint32_t)ptt_event_argn(ev, PTT_ARGNAME_TARGET, 0))); break;
		case 'j': {
			uint64_t t = ptt_event_argn(ev, PTT_ARGNAME_TARGET, UINT64_MAX);
			if (t == UINT64_MAX)
				t = ptt_event_argn(ev, PTT_ARGNAME_STREAM, 0);
			n += thread_words(syms, ev->pid, t, buf + n, size - n);
			break;
		}
		default: buf[n++] = c;
		}
		if (n >= size)
			n = size - 1;
	}
	if (n + 1 < size && how == 2 && ev->id == PTT_EV_BARRIER_WAIT)
		n += (size_t)snprintf(buf + n, size - n, " as the serial thread (PTHREAD_BARRIER_SERIAL_THREAD)");
	else if (n + 1 < size && how == 2)
		n += (size_t)snprintf(buf + n, size - n, ": its previous holder died holding it (EOWNERDEAD)");
	else if (n + 1 < size && how == 1 && ret > 0 && ret < 4096)
		n += error_words((int)ret, buf + n, size - n);
	else if (n + 1 < size && how == 1 && ret != 0)
		n += (size_t)snprintf(buf + n, size - n, " (result %" PRId64 ")", ret);
	buf[n < size ? n : size - 1] = 0;
}

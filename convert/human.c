/* human.c - sentences for ptt-dump --human, in the spirit of PTT's text mode. */
#include <inttypes.h>
#include <string.h>

#include "human.h"
#include "model.h"

struct phrase {
	const char *event;
	const char *verb;  /* "%T" the thread, "%O" the first object argument, "%A" the second */
};

/*
 * One per event type (a test checks that none is missing).  In verbs: %T the
 * thread, %P the process, %O the first object argument, %A the second, %S
 * the string, %a the first argument as a number, %c the parent, %k the
 * child, %j the target (or stream) thread, %{name} the argument called name,
 * %H ", held by thread N" when the model knows another holder.
 */
static const struct phrase phrases[] = {
	{ "pad", "(padding)" },
	{ "process_begin", "process %P starts (parent %a): %S" },
	{ "process_exit", "process %P exits" },
	{ "process_fork", "%T forks process %a" },
	{ "process_exec", "%T executes %S" },
	{ "thread_begin", "%T begins (created by thread %c)" },
	{ "thread_end", "%T ends" },
	{ "thread_create", "%T creates thread %k" },
	{ "thread_join_req", "%T waits to join thread %j" },
	{ "thread_join", "%T joins thread %j" },
	{ "thread_tryjoin", "%T tries to join thread %j" },
	{ "thread_detach", "%T detaches thread %j" },
	{ "thread_cancel", "%T cancels thread %j" },
	{ "thread_exit", "%T calls pthread_exit" },
	{ "thread_name", "thread %j is named %S" },
	{ "object_name", "object %O is named %S" },
	{ "module", "process %P maps %S at %O" },
	{ "mutex_init", "%T initialises mutex %O" },
	{ "mutex_destroy", "%T destroys mutex %O" },
	{ "mutex_lock_req", "%T waits for mutex %O%H" },
	{ "mutex_lock", "%T holds mutex %O" },
	{ "mutex_trylock", "%T tries mutex %O" },
	{ "mutex_timedlock_req", "%T waits (with timeout) for mutex %O%H" },
	{ "mutex_timedlock", "%T holds mutex %O" },
	{ "mutex_unlock", "%T releases mutex %O" },
	{ "cond_init", "%T initialises condition %O" },
	{ "cond_destroy", "%T destroys condition %O" },
	{ "cond_wait_req", "%T releases mutex %A and waits on condition %O" },
	{ "cond_timedwait_req", "%T releases mutex %A and waits (with timeout) on condition %O" },
	{ "cond_wait", "%T wakes on condition %O and holds mutex %A" },
	{ "cond_signal", "%T signals condition %O" },
	{ "cond_broadcast", "%T broadcasts condition %O" },
	{ "rwlock_init", "%T initialises rwlock %O" },
	{ "rwlock_destroy", "%T destroys rwlock %O" },
	{ "rwlock_rdlock_req", "%T waits to read-lock %O%H" },
	{ "rwlock_rdlock", "%T read-holds %O" },
	{ "rwlock_timedrdlock", "%T read-holds %O" },
	{ "rwlock_tryrdlock", "%T tries to read-lock %O" },
	{ "rwlock_wrlock_req", "%T waits to write-lock %O%H" },
	{ "rwlock_wrlock", "%T write-holds %O" },
	{ "rwlock_timedwrlock", "%T write-holds %O" },
	{ "rwlock_trywrlock", "%T tries to write-lock %O" },
	{ "rwlock_unlock", "%T releases rwlock %O" },
	{ "barrier_init", "%T initialises barrier %O for %{count} threads" },
	{ "barrier_destroy", "%T destroys barrier %O" },
	{ "barrier_wait_req", "%T arrives at barrier %O" },
	{ "barrier_wait", "%T leaves barrier %O" },
	{ "sem_init", "%T initialises semaphore %O to %{value}" },
	{ "sem_destroy", "%T destroys semaphore %O" },
	{ "sem_open", "%T opens semaphore %S as %O" },
	{ "sem_close", "%T closes semaphore %O" },
	{ "sem_unlink", "%T unlinks semaphore %S" },
	{ "sem_wait_req", "%T waits on semaphore %O%H" },
	{ "sem_wait", "%T takes semaphore %O" },
	{ "sem_timedwait", "%T takes semaphore %O" },
	{ "sem_trywait", "%T tries semaphore %O" },
	{ "sem_post", "%T posts semaphore %O" },
	{ "spin_lock", "%T holds spinlock %O" },
	{ "spin_trylock", "%T tries spinlock %O" },
	{ "spin_unlock", "%T releases spinlock %O" },
	{ "wait_other", "%T waits in a call left out of the selection (on %O)" },
	{ "wait_other_end", "%T returns from the call left out of the selection" },
	{ "rec_start", "the recorder starts tracing process %{child} (rings of %{ring_bytes} bytes)" },
	{ "rec_drain", "the recorder has drained %{events} events (%{bytes} bytes)" },
	{ "rec_ring_full", "thread %j waited for room in its ring" },
	{ "rec_lost", "the recorder lost %{count} events of thread %j" },
	{ "rec_signal", "the recorder passes signal %{signal} on to process %{child}" },
	{ "rec_stop", "the recorder stops (exit status %{status}, signal %{signal})" },
};

static size_t thread_words(const struct ptt_names *names, uint64_t tid, char *buf, size_t size)
{
	const char *n = names ? ptt_names_thread(names, (uint32_t)tid) : NULL;
	int w = n ? snprintf(buf, size, "%" PRIu64 " (%s)", tid, n) : snprintf(buf, size, "%" PRIu64, tid);
	return w < 0 ? 0 : (size_t)w;
}

static size_t object_words(const struct ptt_names *names, uint64_t addr, char *buf, size_t size)
{
	const char *n = names ? ptt_names_object(names, addr) : NULL;
	int w = n ? snprintf(buf, size, "%s", n) : snprintf(buf, size, "0x%" PRIx64, addr);
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
static size_t holder_words(const struct ptt_event *ev, const struct ptt_names *names, const struct model *m, char *buf,
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
	return n < size ? n + thread_words(names, h->tid, buf + n, size - n) : n;
}

void human_sentence(const struct ptt_event *ev, const struct ptt_names *names, const struct model *m, char *buf,
		    size_t size)
{
	const struct phrase *ph = NULL;
	for (size_t i = 0; i < sizeof phrases / sizeof phrases[0]; i++)
		if (strcmp(phrases[i].event, ev->type->name) == 0)
			ph = &phrases[i];
	size_t n = 0;
	int w = snprintf(buf, size, "%" PRIu64 ".%09" PRIu64 " ", ev->ns / 1000000000u, ev->ns % 1000000000u);
	n = w < 0 ? 0 : (size_t)w;
	if (!ph) {
		n += (size_t)snprintf(buf + n, size - n, "thread ");
		n += thread_words(names, ev->tid, buf + n, size - n);
		char text[PTT_MAX_STR * 4 + 256];
		ptt_text_format_event(ev, text, sizeof text);
		const char *rest = strstr(text, ev->type->name);
		snprintf(buf + n, size - n, ": %s", rest ? rest : ev->type->name);
		return;
	}
	for (const char *p = ph->verb; *p && n + 1 < size; p++) {
		if (*p != '%') {
			buf[n++] = *p;
			continue;
		}
		char c = *++p;
		switch (c) {
		case 'T':
			n += (size_t)snprintf(buf + n, size - n, "thread ");
			n += thread_words(names, ev->tid, buf + n, size - n);
			break;
		case 'P': n += (size_t)snprintf(buf + n, size - n, "%" PRIu32, ev->pid); break;
		case 'O': n += object_words(names, nth_arg(ev, PTT_ARG_PTR, 0), buf + n, size - n); break;
		case 'A': n += object_words(names, nth_arg(ev, PTT_ARG_PTR, 1), buf + n, size - n); break;
		case 'S': n += ptt_text_quote(ev->str, buf + n, size - n); break;
		case 'a': n += (size_t)snprintf(buf + n, size - n, "%" PRIu64, ev->nargs ? ev->arg[0] : 0); break;
		case 'c': n += thread_words(names, ptt_event_arg(ev, "parent", 0), buf + n, size - n); break;
		case 'k': n += thread_words(names, ptt_event_arg(ev, "child", 0), buf + n, size - n); break;
		case 'H': n += holder_words(ev, names, m, buf + n, size - n); break;
		case '{': {
			char name[32];
			size_t k = 0;
			while (p[1] && p[1] != '}' && k + 1 < sizeof name)
				name[k++] = *++p;
			name[k] = 0;
			if (p[1] == '}')
				p++;
			int ai = ptt_event_argindex(ev, name);
			if (ai >= 0 && (ev->type->argkind[ai] == PTT_ARG_I32 || ev->type->argkind[ai] == PTT_ARG_I64))
				n += (size_t)snprintf(buf + n, size - n, "%" PRId64, (int64_t)ev->arg[ai]);
			else if (ai >= 0)
				n += (size_t)snprintf(buf + n, size - n, "%" PRIu64, ev->arg[ai]);
			break;
		}
		case 'j': {
			uint64_t t = ptt_event_arg(ev, "target", UINT64_MAX);
			if (t == UINT64_MAX)
				t = ptt_event_arg(ev, "stream", 0);
			n += thread_words(names, t, buf + n, size - n);
			break;
		}
		default: buf[n++] = c;
		}
		if (n >= size)
			n = size - 1;
	}
	int ri = ptt_event_argindex(ev, "ret");
	if (ri >= 0 && ev->arg[ri] != 0 && n + 1 < size) {
		int64_t ret = (int64_t)ev->arg[ri];
		if (ret > 0 && ret < 4096)
			n += (size_t)snprintf(buf + n, size - n, " (failed: %s)", strerror((int)ret));
		else
			n += (size_t)snprintf(buf + n, size - n, " (result %" PRId64 ")", ret);
	}
	buf[n < size ? n : size - 1] = 0;
}

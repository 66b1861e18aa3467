/* lockframes.c - which frames of a stack are the lock layer, and the site past it. */
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lockframes.h"
#include "model.h"

/*
 * Functions through which programs take their locks, matched against the
 * symbol's demangled name (anchored at its start).  A wrapper that the
 * compiler inlined has no frame of its own: its caller is then the site,
 * as it should be.
 */
static const char *const builtin[] = {
	/* libc and the pthread implementation; C11 threads */
	"^_*pthread_", "^__GI_", "^_*lll_", "^__futex", "^futex_", "^do_futex_wait", "^_*new_sem_", "^_*sem_",
	"^sem_", "^_*mtx_", "^_*cnd_", "^thrd_join", "^__libc_", "^syscall$",
	/* sqlite3 */
	"^pthreadMutex", "^sqlite3_mutex_", "^sqlite3Mutex", "^unixEnterMutex", "^unixLeaveMutex",
	/* CPython: its locks, the GIL, the parking lot */
	"^PyThread_", "^_PyThread_", "^take_gil", "^drop_gil", "^PyMutex", "^_PyMutex", "^_PySemaphore", "^_PyParkingLot",
	"^PyCOND_", "^PyMUTEX_", "^acquire_timed", "^lock_PyThread_", "^rlock_acquire", "^_PyEval_AcquireLock",
	"^PyEval_RestoreThread", "^PyEval_AcquireThread", "^_PyEval_ReInitThreads",
	/* libstdc++ and libc++ */
	"^std::mutex::", "^std::recursive_mutex::", "^std::timed_mutex::", "^std::recursive_timed_mutex::",
	"^std::shared_mutex::", "^std::shared_timed_mutex::", "^std::__shared_mutex", "^std::unique_lock<", "^std::lock_guard<",
	"^std::scoped_lock<", "^std::shared_lock<", "^std::condition_variable", "^std::_V2::condition_variable",
	"^std::__condvar", "^std::__gthread", "^__gthread_", "^std::__glibcxx_rwlock", "^__glibcxx_rwlock", "^__gthrw_", "^std::thread::join", "^std::__1::mutex::",
	"^std::__1::condition_variable", "^std::__1::__libcpp_",
	/* glib */
	"^g_mutex_", "^g_cond_", "^g_rec_mutex_", "^g_rw_lock_", "^g_bit_lock", "^g_bit_unlock", "^g_pointer_bit_lock",
	"^g_thread_join",
	/* MariaDB / MySQL */
	"^mysql_mutex_", "^inline_mysql_", "^rw_pr_", "^psi_", "^my_pthread_", "^safe_mutex_", "^mysql_rwlock_",
	"^mysql_cond_", "^mysql_prlock_", "^my_cond_", "^native_(mutex|rw|cond)_", "^PolicyMutex<", "^TTASEventMutex<", "^srw_lock",
	"^ssux_lock", "^srw_mutex",
	/* the JVM */
	"^os::PlatformEvent::", "^os::PlatformParker::", "^os::PlatformMonitor::", "^Parker::park", "^ObjectMonitor::",
	"^ObjectSynchronizer::", "^Monitor::", "^Mutex::", "^PlatformMonitor::", "^ParkEvent::", "^Unsafe_Park",
	"^JavaThread::block", "^ThreadBlockInVM",
	/* folly, abseil, boost */
	"^folly::SharedMutex", "^folly::detail::", "^folly::DistributedMutex", "^folly::MicroLock", "^folly::Baton",
	"^folly::futex", "^folly::fibers::Baton", "^absl::(lts_[0-9_]+::)?Mutex::", "^absl::(lts_[0-9_]+::)?CondVar::",
	"^absl::(lts_[0-9_]+::)?synchronization_internal::", "^absl::(lts_[0-9_]+::)?base_internal::SpinLock",
	"^AbslInternalPerThreadSem", "^boost::mutex::", "^boost::recursive_mutex::", "^boost::shared_mutex::",
	"^boost::unique_lock<", "^boost::lock_guard<", "^boost::condition_variable", "^boost::detail::",
	"^boost::thread::join",
	/* Rust's std and parking_lot */
	"^std::sys::sync::", "^std::sys::.*::(locks|mutex|rwlock|condvar|futex)::", "^std::sync::(mutex|rwlock|condvar|poison|once|Mutex|RwLock|Condvar)",
	"^<std::sync::", "^<std::sys::sync::", "^<std::sys::.*::(locks|mutex|rwlock|condvar|futex)::",
	"^<std::thread::JoinInner", "^<std::thread::JoinHandle", "^parking_lot::", "^parking_lot_core::", "^lock_api::", "^<parking_lot::", "^<lock_api::",
	"^std::thread::JoinHandle<.*>::join", "^std::thread::JoinInner", "^std::thread::.*::Join(Inner|Handle)<.*>::join$",
	"^<std::sys::.*::Thread>::join$",
	/* Rust before 1.64 (Debian 12's 1.63): the futex locks behind std::sys_common's wrappers, legacy mangling */
	"^std::sys_common::(mutex|rwlock|condvar|remutex|lazy_box|thread_parker|once)::", "^<std::sys_common::(mutex|rwlock|condvar|remutex)::",
	"^std::sys::.*::thread::Thread::join$",
	/* ptt's own */
	"^ptt_",
};
/* modules whose every frame is the lock layer (code without symbols there too) */
static const char *const builtin_modules[] = { "(libc.so", "(libpthread.so", "(libptt.so", "libc.so.6+", "libptt.so+" };
/*
 * Python's own lock modules, by the file of a Python frame ("Condition.wait (threading.py)"): a program
 * cannot have its own threading.py or queue.py beside it without hiding the standard ones.  In a stack
 * with Python frames the native frames (the interpreter's, C extensions') are all the lock layer: the
 * program's own logic is its Python code.  The built-in patterns above are for native names only.
 */
static const char *const builtin_py_files[] = { " (threading.py)", " (queue.py)" };

static regex_t *patterns;
static size_t npatterns, cap, nbuiltin;
static int builtin_done;
static regex_t *keeps; /* --skip-frames='!REGEX': never the lock layer (a wrapper the trace made one) */
static size_t nkeeps, capkeeps;
static int learnt_wrapper(const char *func);

static int add(const char *re, char *err, size_t errsize)
{
	if (PTT_GROW(patterns, &cap, npatterns + 1) != 0) {
		snprintf(err, errsize, "out of memory");
		return -1;
	}
	int rc = regcomp(&patterns[npatterns], re, REG_EXTENDED | REG_NOSUB);
	if (rc) {
		regerror(rc, &patterns[npatterns], err, errsize);
		return -1;
	}
	npatterns++;
	return 0;
}

static void load_builtin(void)
{
	char err[128];
	builtin_done = 1;
	for (size_t i = 0; i < sizeof builtin / sizeof builtin[0]; i++)
		add(builtin[i], err, sizeof err); /* fixed patterns: they compile */
	nbuiltin = npatterns;
}

static int ends_with(const char *s, const char *tail)
{
	size_t n = strlen(s), t = strlen(tail);
	return n >= t && strcmp(s + n - t, tail) == 0;
}

int lockframes_skip(const char *regex, char *err, size_t errsize)
{
	if (!builtin_done)
		load_builtin();
	if (regex[0] != '!')
		return add(regex, err, errsize);
	if (PTT_GROW(keeps, &capkeeps, nkeeps + 1) != 0) {
		snprintf(err, errsize, "out of memory");
		return -1;
	}
	int rc = regcomp(&keeps[nkeeps], regex + 1, REG_EXTENDED | REG_NOSUB);
	if (rc) {
		regerror(rc, &keeps[nkeeps], err, errsize);
		return -1;
	}
	nkeeps++;
	return 0;
}

static int is_lock(struct ptt_syms *syms, uint32_t pid, uint64_t addr);

/* (pid, address) -> 1 + whether it is in the lock layer, found once (the patterns are many, the frames few);
 * emptied when the layer changes (the learnt wrappers) */
static struct ptt_map lock_cache;

int lockframes_is_lock(struct ptt_syms *syms, uint32_t pid, uint64_t addr)
{
	uint64_t key = (addr ^ (uint64_t)pid * 0x9e3779b97f4a7c15ull) | 1;
	uintptr_t hit = (uintptr_t)ptt_map_get(&lock_cache, key);
	if (hit && hit >> 1 == addr)
		return (int)(hit & 1);
	int r = is_lock(syms, pid, addr);
	if (!hit && addr && !(addr >> 62))
		ptt_map_put(&lock_cache, key, (void *)(uintptr_t)(addr << 1 | (uint64_t)r)); /* no memory: asked again */
	return r;
}

static int is_lock(struct ptt_syms *syms, uint32_t pid, uint64_t addr)
{
	if (!builtin_done)
		load_builtin();
	const struct ptt_sym *s = ptt_syms_code(syms, pid, addr);
	int py = PTT_IS_PYFRAME(addr);
	for (size_t i = 0; py && i < sizeof builtin_py_files / sizeof builtin_py_files[0]; i++)
		if (ends_with(s->where, builtin_py_files[i]))
			return 1;
	for (size_t i = 0; !py && i < sizeof builtin_modules / sizeof builtin_modules[0]; i++)
		if (strstr(s->where, builtin_modules[i]))
			return 1;
	const char *name = s->func ? s->func : s->where;
	for (size_t i = 0; i < nkeeps; i++)
		if (regexec(&keeps[i], name, 0, NULL, 0) == 0)
			return 0;
	if (!py && learnt_wrapper(s->fn))
		return 1;
	for (size_t i = py ? nbuiltin : 0; i < npatterns; i++)
		if (regexec(&patterns[i], name, 0, NULL, 0) == 0)
			return 1;
	/*
	 * Code without a symbol in a library stripped to its exported functions (Debian's libglib: its
	 * g_mutex_lock jumps to a static g_mutex_lock_slowpath that .dynsym does not name): it is the lock
	 * layer when the function that follows it is a built-in lock function, as the compiler puts a
	 * source file's static functions beside its exported ones (gthread-posix.c's slow paths sit just
	 * before g_rec_mutex_init).  Built-in patterns only: a --skip-frames names what the user sees.
	 */
	if (!py && !s->func && s->next)
		for (size_t i = 0; i < nbuiltin; i++)
			if (regexec(&patterns[i], s->next, 0, NULL, 0) == 0)
				return 1;
	return 0;
}

/*
 * Futex words of libraries whose use their functions say: GLib's GCond is a
 * counter of signals (g_cond_wait sleeps on it, g_cond_signal adds one and
 * wakes): its waits are waiting for work, whatever the futex rule makes of
 * one wait (a single waiter, one value: a park).  GMutex's slow path, and
 * g_bit_lock, are locks; GRWLock, GRecMutex and GPrivate are pthread's
 * (traced as such), GOnce a mutex and a condition of GLib's own.
 */
static const char *const futex_signal_funcs[] = { "^g_cond_wait", "^g_cond_wait_until$" };
static regex_t futex_signal_re[sizeof futex_signal_funcs / sizeof futex_signal_funcs[0]];
static int futex_re_done;

int lockframes_futex_use(struct ptt_syms *syms, uint32_t pid, uint64_t site)
{
	if (!site)
		return -1;
	if (!futex_re_done) {
		futex_re_done = 1;
		for (size_t i = 0; i < sizeof futex_signal_funcs / sizeof futex_signal_funcs[0]; i++)
			regcomp(&futex_signal_re[i], futex_signal_funcs[i], REG_EXTENDED | REG_NOSUB); /* fixed: compiles */
	}
	const struct ptt_sym *s = ptt_syms_code(syms, pid, site);
	if (!s->func || !strstr(s->where, "(libglib-2.0.so"))
		return -1;
	for (size_t i = 0; i < sizeof futex_signal_funcs / sizeof futex_signal_funcs[0]; i++)
		if (regexec(&futex_signal_re[i], s->func, 0, NULL, 0) == 0)
			return MF_SIGNAL;
	return -1;
}

/*
 * (pid, frames) -> the site past the lock layer, found once (a site is never 0).  Keyed by the
 * frames, not the stack's id: after an exec the same pid numbers its stacks from 1 again.
 */
static struct ptt_map site_cache;

static uint64_t frames_key(uint32_t pid, const uint64_t *f, unsigned n)
{
	uint64_t h = 0xcbf29ce484222325ull ^ pid ^ (uint64_t)n << 32; /* FNV-1a over the words, then mixed */
	for (unsigned i = 0; i < n; i++) {
		h ^= f[i];
		h *= 0x100000001b3ull;
		h ^= h >> 29;
	}
	return h;
}

/*
 * The first function at frame addr, innermost first over its inline chain, that is not in the
 * lock layer: the address itself without inlining, else its inline level (ptt_syms_level);
 * 0 when all are in the layer (the outermost level for the last frame of a stack, last).
 */
static uint64_t first_level(struct ptt_syms *syms, uint32_t pid, uint64_t addr, int last)
{
	unsigned levels = ptt_syms_code(syms, pid, addr)->levels;
	if (levels <= 1)
		return !lockframes_is_lock(syms, pid, addr) || last ? addr : 0;
	for (unsigned l = 0; l < levels; l++) {
		uint64_t lv = ptt_syms_level(addr, l);
		if (!lockframes_is_lock(syms, pid, lv))
			return lv;
	}
	return last ? ptt_syms_level(addr, levels - 1) : 0;
}

uint64_t lockframes_site(struct ptt_syms *syms, const struct ptt_stacks *st, uint32_t pid, uint32_t stack)
{
	const uint64_t *f = NULL;
	unsigned n = stack ? ptt_stacks_get(st, pid, stack, &f) : 0;
	return lockframes_site_of(syms, pid, f, n);
}

uint64_t lockframes_site_of(struct ptt_syms *syms, uint32_t pid, const uint64_t *f, unsigned n)
{
	if (!n)
		return 0;
	uint64_t key = frames_key(pid, f, n);
	void *hit = ptt_map_get(&site_cache, key);
	if (hit)
		return (uint64_t)(uintptr_t)hit;
	uint64_t site = f[n - 1];
	unsigned from = 0; /* a CPython's stack: its native frames are the layer, the site a Python frame */
	while (from < n && !PTT_IS_PYFRAME(f[from]))
		from++;
	if (from == n)
		from = 0;
	for (unsigned i = from; i < n; i++) {
		uint64_t lv = first_level(syms, pid, f[i], i + 1 == n);
		if (lv) {
			site = lv;
			break;
		}
	}
	if (site)
		ptt_map_put(&site_cache, key, (void *)(uintptr_t)site); /* no memory: found again next time */
	return site;
}

const char *lockframes_name(struct ptt_syms *syms, uint32_t pid, uint64_t addr, char *buf, size_t size)
{
	const struct ptt_sym *s = ptt_syms_code(syms, pid, addr);
	snprintf(buf, size, "%s", s->func ? s->func : s->where);
	for (char *p = buf; *p; p++)
		if (*p == ';' || *p == '\n' || *p == '\r')
			*p = ':';
	return buf;
}

size_t lockframes_past(struct ptt_syms *syms, const struct ptt_stacks *st, uint32_t pid, uint32_t stack, unsigned max,
		       char *buf, size_t size)
{
	const uint64_t *f;
	unsigned n = stack ? ptt_stacks_get(st, pid, stack, &f) : 0;
	size_t len = 0;
	if (size)
		buf[0] = 0;
	if (!n || !size)
		return 0;
	/* the frames expanded into their inline levels, innermost first, from the site on */
	uint64_t site = lockframes_site(syms, st, pid, stack);
	int started = 0;
	unsigned k = 0;
	for (unsigned i = 0; i < n && k < max && len + 1 < size; i++) {
		unsigned levels = ptt_syms_code(syms, pid, f[i])->levels;
		for (unsigned l = 0; l < levels && k < max && len + 1 < size; l++) {
			uint64_t lv = levels > 1 ? ptt_syms_level(f[i], l) : f[i];
			if (!started && lv != site)
				continue;
			started = 1;
			char name[256];
			int w = snprintf(buf + len, size - len, "%s%s", k ? " <- " : "", lockframes_name(syms, pid, lv, name, sizeof name));
			if (w < 0)
				return len;
			len += (size_t)w;
			k++;
		}
	}
	return len < size ? len : size - 1;
}

void lockframes_fold(struct ptt_syms *syms, const struct ptt_stacks *st, uint32_t pid, uint32_t stack, uint64_t site,
		     FILE *out)
{
	const uint64_t *f = NULL;
	unsigned n = stack ? ptt_stacks_get(st, pid, stack, &f) : 0;
	lockframes_fold_frames(syms, pid, f, n, site, out);
}

void lockframes_fold_frames(struct ptt_syms *syms, uint32_t pid, const uint64_t *f, unsigned n, uint64_t site, FILE *out)
{
	char name[512];
	for (unsigned k = n; k-- > 0;) {
		/* a frame's inline levels are frames too, outermost (the physical function) first */
		unsigned levels = ptt_syms_code(syms, pid, f[k])->levels;
		for (unsigned l = levels; l-- > 0;)
			fprintf(out, "%s;", lockframes_name(syms, pid, levels > 1 ? ptt_syms_level(f[k], l) : f[k], name, sizeof name));
	}
	if (!n)
		fprintf(out, "%s;", site ? lockframes_name(syms, pid, site, name, sizeof name) : "[no site]");
}

char *lockframes_fold_word(char *name)
{
	for (char *p = name; *p; p++)
		if (*p == ';' || *p == ' ' || *p == '\n')
			*p = '_';
	return name;
}

uint64_t lockframes_site_or_call(struct ptt_syms *syms, const struct ptt_stacks *st, uint32_t pid, uint32_t stack,
				 uint64_t call)
{
	uint64_t site = stack ? lockframes_site(syms, st, pid, stack) : 0;
	return site ? site : lockframes_call_site(syms, pid, call);
}

uint64_t lockframes_frame_site(struct ptt_syms *syms, const struct ptt_stacks *st, uint32_t pid, const struct mframe *f)
{
	return lockframes_site_or_call(syms, st, pid, f->stack, ptt_syms_site_addr(syms, f->open.id, f->open.arg));
}

/* (pid, call site) -> its inline level past the lock layer, found once */
static struct ptt_map call_cache;

uint64_t lockframes_call_site(struct ptt_syms *syms, uint32_t pid, uint64_t addr)
{
	if (!addr || PTT_IS_PYFRAME(addr) || ptt_syms_code(syms, pid, addr)->levels <= 1)
		return addr;
	uint64_t key = frames_key(pid, &addr, 1);
	void *hit = ptt_map_get(&call_cache, key);
	if (hit)
		return (uint64_t)(uintptr_t)hit;
	uint64_t site = first_level(syms, pid, addr, 1);
	if (site)
		ptt_map_put(&call_cache, key, (void *)(uintptr_t)site); /* no memory: found again next time */
	return site ? site : addr;
}

/*
 * The program's own lock wrappers, found from the trace (the first pass of
 * pass.c): a function L whose every lock it takes (a mutex, rwlock or
 * spinlock, at a call site in L) is released in one other function U, never
 * in L, U never being L's caller nor above it in the acquisition's stack (a
 * function that returns a lock taken for its caller, who unlocks it
 * himself, perhaps by a tail call, is no wrapper: hand-over-hand), L's
 * caller seen in one stack at least (evidence, not its absence), and, where
 * both stacks are known, L's caller for the acquisition being U's caller
 * for the release.  L and U are then the lock layer too, so that
 * sites name their callers: app_lock/app_unlock around pthread_mutex_*.
 */
#define WRAP_UNLOCKERS 4
struct wfunc {
	char *name;                 /* L, the function of the acquisition's call site */
	char *unlocker[WRAP_UNLOCKERS]; /* U: the functions that released its locks (yarn's release and twist) */
	unsigned nunlockers;
	uint32_t other_unlockers;   /* releases in yet another function, past WRAP_UNLOCKERS */
	uint32_t released_here;     /* releases in L itself */
	uint32_t caller_unlocks;    /* releases in L's caller */
	uint32_t callers_differ;    /* releases whose caller is not the acquisition's */
	uint32_t holds;             /* releases seen */
	uint32_t callers_seen;      /* releases whose acquisition's stack showed L's caller */
	int wrapper;
	struct wfunc *next;
};
struct whold { uint64_t site; uint32_t stack, pid; struct whold *next; };

/* A release's functions (lockframes_learn): the acquisition's and the release's, by their sites. */
struct wpair {
	uint64_t lsite, usite;
	uint32_t pid;
	struct wfunc *w;            /* the acquiring function's (NULL: none) */
	const char *u;              /* the releasing function (NULL: none) */
	int8_t same;                /* u is w's own function (-1: not asked yet) */
	int8_t unl;                 /* u is w's unlocker unl (-1: not known yet): w's list only grows */
};

static struct {
	struct ptt_map funcs;       /* name hash -> wfunc (a chain) */
	struct ptt_map pairs;       /* hash of (pid, lsite, usite) -> wpair: asked again for every release of a loop */
	struct ptt_map holds;       /* (tid, object) -> whold: the acquisition of a lock held */
	struct ptt_map pending;     /* (pid, tid) -> the stack of the thread's next event */
	struct ptt_map unlockers;   /* name hash -> the name of a wrapper's unlocker */
	struct whold *spare;        /* holds let go, for the next (one per lock taken: malloc was a third of learning) */
	struct ptt_stacks *stacks;
	int decided;
	int several;                /* a wrapper with more than one unlocker */
	char note[512];
} learn;

static uint64_t name_hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ull;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
	return h ? h : 1;
}

static struct wfunc *wfunc_of(const char *name, int create)
{
	uint64_t h = name_hash(name);
	struct wfunc *head = ptt_map_get(&learn.funcs, h), *w;
	for (w = head; w; w = w->next)
		if (strcmp(w->name, name) == 0)
			return w;
	if (!create || !(w = calloc(1, sizeof *w)) || !(w->name = strdup(name))) {
		free(w);
		return NULL;
	}
	if (head) {
		w->next = head->next;
		head->next = w;
	} else if (ptt_map_put(&learn.funcs, h, w)) {
		free(w->name);
		free(w);
		return NULL;
	}
	return w;
}

/* The function of a plain code address, NULL without a symbol or in the lock layer already. */
static const char *program_func(struct ptt_syms *syms, uint32_t pid, uint64_t addr)
{
	if (!addr || PTT_IS_PYFRAME(addr) || lockframes_is_lock(syms, pid, addr))
		return NULL;
	return ptt_syms_code(syms, pid, addr)->fn;
}

/* The function calling the one at the first frame past the built-in lock layer of a stack (NULL: unknown);
 * *above: whether func is that caller or any function above it (NULL func: not asked). */
static const char *caller_of_site(struct ptt_syms *syms, uint32_t pid, uint32_t stack, const char *func, int *above)
{
	const uint64_t *f;
	unsigned n = stack && learn.stacks ? ptt_stacks_get(learn.stacks, pid, stack, &f) : 0;
	for (unsigned i = 0; i + 1 < n; i++)
		if (!lockframes_is_lock(syms, pid, f[i])) {
			for (unsigned k = i + 1; func && above && k < n; k++) {
				const char *c = ptt_syms_code(syms, pid, f[k])->fn;
				if (c && strcmp(c, func) == 0)
					*above = 1;
			}
			return ptt_syms_code(syms, pid, f[i + 1])->fn;
		}
	return NULL;
}

static uint64_t hold_key(const struct ptt_event *ev, uint64_t obj)
{
	return ptt_obj_key(ev->pid, obj) ^ (uint64_t)ev->tid * 0x9e3779b97f4a7c15ull;
}

static void learn_release(struct ptt_syms *syms, const struct ptt_event *ev, const struct whold *h, uint32_t stack,
			  struct wpair *pr);

/* The hold of obj by ev's thread, made if new (NULL: no memory). */
static struct whold *hold_of(const struct ptt_event *ev, uint64_t obj)
{
	struct whold *h = ptt_map_get(&learn.holds, hold_key(ev, obj));
	if (h)
		return h;
	if ((h = learn.spare))
		learn.spare = h->next;
	else if (!(h = malloc(sizeof *h)))
		return NULL;
	*h = (struct whold){ 0 };
	if (ptt_map_put(&learn.holds, hold_key(ev, obj), h)) {
		free(h);
		return NULL;
	}
	return h;
}

void lockframes_learn(struct ptt_syms *syms, const struct ptt_event *ev)
{
	const struct ptt_type *ty = ev->type;
	if (!ty || learn.decided)
		return;
	if (ev->id == PTT_EV_STACK_FRAMES && ty->role == PTT_ROLE_META) {
		if (!learn.stacks)
			learn.stacks = ptt_stacks_new();
		if (learn.stacks)
			ptt_stacks_update(learn.stacks, ev);
		return;
	}
	uint64_t tk = (uint64_t)ev->pid << 32 | ev->tid;
	if (ev->id == PTT_EV_STACK && ty->role == PTT_ROLE_META && ev->nargs >= 1) {
		uint64_t id = ptt_event_argn(ev, PTT_ARGNAME_STACK, 0);
		if (id && id != PTT_STACK_ID_FULL)
			ptt_map_put(&learn.pending, tk, (void *)(uintptr_t)id);
		return;
	}
	if (ev->id == PTT_EV_PROCESS_EXEC || ev->id == PTT_EV_MODULE || ev->id == PTT_EV_PROCESS_BEGIN)
		ptt_map_free_with(&learn.pairs, free); /* a site may name another function now */
	if (ty->role == PTT_ROLE_META || ty->role == PTT_ROLE_NAME)
		return;
	uint32_t stack = learn.pending.used ? (uint32_t)(uintptr_t)ptt_map_del(&learn.pending, tk) : 0;
	if (ty->cls != PTT_CLASS_MUTEX && ty->cls != PTT_CLASS_RWLOCK && ty->cls != PTT_CLASS_SPIN)
		return;
	uint64_t obj = ty->nargs && ty->argkind[0] == PTT_ARG_PTR ? ev->arg[0] : 0;
	uint64_t site = ptt_syms_site_addr(syms, ev->id, ev->arg);
	if (!obj)
		return;
	unsigned role = ty->role;
	if (role == PTT_ROLE_REQUEST || role == PTT_ROLE_REQUEST_SHARED) {
		/* the acquisition after a wait has no stack of its own: the request's */
		struct whold *h = hold_of(ev, obj);
		if (h) {
			h->site = site;
			h->stack = stack;
			h->pid = 0; /* not taken yet */
		}
		return;
	}
	if (role == PTT_ROLE_ACQUIRE || role == PTT_ROLE_SHARED || role == PTT_ROLE_TRY || role == PTT_ROLE_TRY_SHARED) {
		if ((int64_t)ptt_event_argn(ev, PTT_ARGNAME_RET, 0) != 0)
			return;
		struct whold *h = hold_of(ev, obj);
		if (!h)
			return;
		if (h->pid || !h->stack)
			h->stack = stack;
		h->site = site ? site : h->site;
		h->pid = ev->pid;
		return;
	}
	if (role != PTT_ROLE_RELEASE)
		return;
	struct whold *h = ptt_map_del(&learn.holds, hold_key(ev, obj));
	if (!h)
		return;
	/* the functions of the two sites, once per pair of sites (a sqlite3 trace: 8 % of ptt-critical's time) */
	uint64_t pk = (ptt_obj_key(ev->pid, h->site) * 0x9e3779b97f4a7c15ull ^ site) * 0xff51afd7ed558ccdull | 1;
	struct wpair *pr = ptt_map_get(&learn.pairs, pk), np;
	if (!pr || pr->pid != ev->pid || pr->lsite != h->site || pr->usite != site) {
		/* the names kept are wfunc's own copies: a symbol's may not outlive the next lookup */
		const char *l = program_func(syms, ev->pid, h->site), *u = program_func(syms, ev->pid, site);
		struct wfunc *wu = u ? wfunc_of(u, 1) : NULL;
		np = (struct wpair){ h->site, site, ev->pid, l ? wfunc_of(l, 1) : NULL, wu ? wu->name : NULL, -1, -1 };
		if (!pr && (pr = malloc(sizeof *pr)) && ptt_map_put(&learn.pairs, pk, pr)) {
			free(pr);
			pr = NULL;
		}
		if (pr)
			*pr = np;
		else
			pr = &np; /* no memory: worked out again next time */
	}
	learn_release(syms, ev, h, stack, pr);
	h->next = learn.spare;
	learn.spare = h;
}

/* A release of a hold h taken in pr's w's function, by its u (lockframes_learn): the evidence counted.  The pair's
 * names are compared once (pr->same, pr->unl): the string compares of every release were 1.5 % of ptt-stat's
 * instructions on a sqlite3 trace. */
static void learn_release(struct ptt_syms *syms, const struct ptt_event *ev, const struct whold *h, uint32_t stack,
			  struct wpair *pr)
{
	struct wfunc *w = pr->w;
	const char *u = pr->u;
	if (w && u) {
		/* a caller that unlocks: the acquisition's caller, or one above it (its release a tail call) */
		int above = 0;
		const char *lc = caller_of_site(syms, ev->pid, h->stack, u, &above), *uc = caller_of_site(syms, ev->pid, stack, NULL, NULL);
		if (pr->same < 0)
			pr->same = strcmp(u, w->name) == 0;
		if (pr->same)
			w->released_here++;
		else if (above)
			w->caller_unlocks++;
		else if (pr->unl < 0) { /* else u is a known unlocker of w's: nothing to count */
			unsigned k = 0;
			while (k < w->nunlockers && strcmp(w->unlocker[k], u) != 0)
				k++;
			if (k == w->nunlockers && k < WRAP_UNLOCKERS && (w->unlocker[k] = strdup(u)) != NULL)
				w->nunlockers++;
			else if (k == w->nunlockers)
				w->other_unlockers++;
			if (k < w->nunlockers)
				pr->unl = (int8_t)k;
		}
		if (lc && uc && strcmp(lc, uc) != 0)
			w->callers_differ++;
		w->callers_seen += lc != NULL;
		w->holds++;
	}
}

static void learn_done(void)
{
	struct ptt_map_iter it;
	void *v;
	size_t len = 0, n = 0;
	learn.note[0] = 0;
	learn.several = 0;
	for (ptt_map_iter_init(&it, &learn.funcs); ptt_map_next(&it, NULL, &v);)
		for (struct wfunc *w = v; w; w = w->next) {
			/* evidence, not its absence: a caller seen at least once (a stack), none unlocking */
			w->wrapper = w->nunlockers && w->callers_seen && !w->released_here && !w->caller_unlocks &&
				     !w->callers_differ && !w->other_unlockers;
			for (size_t i = 0; w->wrapper && i < nkeeps; i++) { /* --skip-frames='!REGEX' */
				int kept = regexec(&keeps[i], w->name, 0, NULL, 0) == 0;
				for (unsigned k = 0; k < w->nunlockers && !kept; k++)
					kept = regexec(&keeps[i], w->unlocker[k], 0, NULL, 0) == 0;
				w->wrapper = !kept;
			}
			if (!w->wrapper)
				continue;
			n++;
			learn.several |= w->nunlockers > 1;
			size_t need = strlen(w->name) + 4;
			for (unsigned k = 0; k < w->nunlockers; k++)
				need += strlen(w->unlocker[k]) + 1;
			if (len + need >= sizeof learn.note)
				continue;
			len += (size_t)snprintf(learn.note + len, sizeof learn.note - len, "%s%s/", n > 1 ? ", " : "", w->name);
			for (unsigned k = 0; k < w->nunlockers; k++)
				len += (size_t)snprintf(learn.note + len, sizeof learn.note - len, "%s%s", k ? "+" : "",
							w->unlocker[k]);
		}
	/* the unlockers are the layer too (a release's site), and nothing cached before counts */
	for (ptt_map_iter_init(&it, &learn.funcs); ptt_map_next(&it, NULL, &v);)
		for (struct wfunc *w = v; w; w = w->next)
			for (unsigned k = 0; w->wrapper && k < w->nunlockers; k++)
				if (!ptt_map_get(&learn.unlockers, name_hash(w->unlocker[k])))
					ptt_map_put(&learn.unlockers, name_hash(w->unlocker[k]), w->unlocker[k]); /* no memory: not skipped */
	ptt_map_free_with(&learn.holds, free);
	for (struct whold *h = learn.spare, *next; h; h = next) {
		next = h->next;
		free(h);
	}
	learn.spare = NULL;
	ptt_map_free_with(&learn.pairs, free);
	ptt_map_free(&learn.pending);
	ptt_stacks_free(learn.stacks);
	learn.stacks = NULL;
	ptt_map_free(&site_cache);
	ptt_map_free(&call_cache);
	ptt_map_free(&lock_cache);
	learn.decided = 1;
}

void lockframes_learn_end(void)
{
	if (!learn.decided)
		learn_done();
}

const char *lockframes_wrappers(void) { return learn.note[0] ? learn.note : NULL; }
int lockframes_wrappers_several_unlockers(void) { return learn.several; }

/* A learnt wrapper (lockframes_learn), not exempted by a --skip-frames='!REGEX'. */
static int learnt_wrapper(const char *func)
{
	if (!learn.decided || !func)
		return 0;
	struct wfunc *w = wfunc_of(func, 0);
	if (w && w->wrapper)
		return 1;
	const char *u = ptt_map_get(&learn.unlockers, name_hash(func));
	return u && strcmp(u, func) == 0;
}

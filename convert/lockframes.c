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
	"^std::__condvar", "^std::__gthread", "^__gthread_", "^__gthrw_", "^std::thread::join", "^std::__1::mutex::",
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
	return add(regex, err, errsize);
}

int lockframes_is_lock(struct ptt_syms *syms, uint32_t pid, uint64_t addr)
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
	const uint64_t *f;
	unsigned n = stack ? ptt_stacks_get(st, pid, stack, &f) : 0;
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
	char name[512];
	const uint64_t *f = NULL;
	unsigned n = stack ? ptt_stacks_get(st, pid, stack, &f) : 0;
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

uint64_t lockframes_frame_site(struct ptt_syms *syms, const struct ptt_stacks *st, uint32_t pid, const struct mframe *f)
{
	uint64_t site = f->stack ? lockframes_site(syms, st, pid, f->stack) : 0;
	return site ? site : ptt_syms_site_addr(syms, f->open.id, f->open.arg);
}

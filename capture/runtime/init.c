/*
 * init.c - attaching libptt.so to the ring that ptt-record shares with the
 * program, resolving the real pthread functions, and the process-level
 * events: begin, fork, exec (through re-attachment), exit.
 */

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runtime.h"

struct ptt_real ptt_real;
int ptt_resolving;

void ptt_debug(const char *msg)
{
	static int on = -1;
	if (on < 0)
		on = getenv("PTT_DEBUG") != NULL;
	if (!on)
		return;
	ssize_t rc = write(2, "libptt: ", 8);
	rc = write(2, msg, strlen(msg));
	rc = write(2, "\n", 1);
	(void)rc;
}

void ptt_die(const char *msg)
{
	ssize_t rc = write(2, "libptt: fatal: ", 15);
	rc = write(2, msg, strlen(msg));
	rc = write(2, "\n", 1);
	(void)rc;
	abort();
}

void *ptt_dlsym(const char *name, const char *version)
{
	void *p = version ? dlvsym(RTLD_NEXT, name, version) : NULL;
	if (!p)
		p = dlsym(RTLD_NEXT, name);
	return p;
}

#define RESOLVE(f) do { \
		ptt_real.f = (__typeof__(ptt_real.f))ptt_dlsym(#f, NULL); \
		if (!ptt_real.f) ptt_die("cannot resolve " #f); \
	} while (0)

/* Resolve every real function once.  Called from the constructor and lazily
 * from any wrapper that runs first (another library's constructor). */
void ptt_resolve(void)
{
	if (ptt_real.pthread_mutex_unlock || ptt_resolving)
		return;
	ptt_resolving = 1;
	RESOLVE(pthread_create);
	RESOLVE(pthread_join);
	RESOLVE(pthread_tryjoin_np);
	RESOLVE(pthread_timedjoin_np);
	RESOLVE(pthread_clockjoin_np);
	RESOLVE(pthread_detach);
	RESOLVE(pthread_cancel);
	RESOLVE(pthread_exit);
	RESOLVE(pthread_setname_np);
	RESOLVE(pthread_mutex_init);
	RESOLVE(pthread_mutex_destroy);
	RESOLVE(pthread_mutex_lock);
	RESOLVE(pthread_mutex_trylock);
	RESOLVE(pthread_mutex_timedlock);
	RESOLVE(pthread_mutex_clocklock);
	RESOLVE(fork);
	RESOLVE(syscall);
	RESOLVE(pthread_mutex_unlock); /* last: its presence means "resolved" */
	ptt_resolving = 0;
}

static void enable_events(const struct ptt_shm *s)
{
	for (unsigned id = 0; id < PTT_EV_BUILTIN_COUNT; id++) {
		const struct ptt_type *t = ptt_builtin_type(id);
		ptt_on[id] = t->source == PTT_SRC_PTHREAD && t->level <= s->level &&
			     (s->class_mask & (1u << t->cls)) != 0;
	}
	/* events stamped before the call they record need no serialized clock read */
	for (unsigned id = 0; id < PTT_EV_BUILTIN_COUNT; id++)
		ptt_early_ok[id] = (uint8_t)ptt_role_stamped_before(ptt_builtin_type(id)->role);
	/* bookkeeping the decoders rely on is always recorded */
	ptt_on[PTT_EV_PROCESS_BEGIN] = ptt_on[PTT_EV_THREAD_BEGIN] = ptt_on[PTT_EV_THREAD_END] = 1;
	ptt_on[PTT_EV_THREAD_NAME] = ptt_on[PTT_EV_OBJECT_NAME] = 1;
	ptt_stack_init(s->stacks);
}

/* The command line from /proc (syscalls are fine here: not the trace path); its whole length
 * in bytes, of which buf holds what fits. */
static size_t read_cmdline(char *buf, size_t size)
{
	buf[0] = 0;
	int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	ssize_t n = read(fd, buf, size - 1);
	size_t whole = n > 0 ? (size_t)n : 0;
	char rest[512], last = n > 0 ? buf[n - 1] : 0;
	ssize_t more;
	while (n == (ssize_t)size - 1 && (more = read(fd, rest, sizeof rest)) > 0) {
		whole += (size_t)more;
		last = rest[more - 1];
	}
	close(fd);
	if (n <= 0)
		return 0;
	for (ssize_t i = 0; i < n - 1; i++)
		if (buf[i] == 0)
			buf[i] = ' ';
	buf[n] = 0;
	return last == 0 ? whole - 1 : whole; /* without the last argument's NUL */
}

/*
 * Loaded objects already announced in a module event, by load address and
 * name (a library unloaded and another loaded at its address is new), and
 * the loader's count of loads when they were last looked at.  An
 * open-addressing set in mmap'd memory (no malloc in the traced program)
 * that doubles when half full: any number of objects.  Written only under
 * modules_busy.  A set that cannot grow (no memory) still announces every
 * object, perhaps again, and says so once in a limit event.
 */
struct module_key { uint64_t base, name_hash; }; /* name_hash is never 0: {0, 0} is an empty slot */
static struct module_key *modules;
static size_t modules_cap; /* slots, a power of two (0: none yet) */
static size_t nmodules;
static int modules_full;   /* the set could not grow: reported */
static unsigned long long modules_adds;
static int modules_busy;

static uint64_t name_hash(const char *s)
{
	uint64_t h = 1469598103934665603u;
	while (*s)
		h = (h ^ (unsigned char)*s++) * 1099511628211u;
	return h | 1;
}

static struct module_key *module_slot(struct module_key *set, size_t cap, uint64_t base, uint64_t h)
{
	size_t i = (size_t)((h ^ base * 0x9E3779B97F4A7C15u) >> 17) & (cap - 1);
	while (set[i].name_hash && (set[i].base != base || set[i].name_hash != h))
		i = (i + 1) & (cap - 1);
	return &set[i];
}

/* Double the set (mmap, not malloc: this runs inside the traced program): 0, or -1 without memory. */
static int modules_grow(void)
{
	size_t cap = modules_cap ? modules_cap * 2 : 512;
	struct module_key *set = mmap(NULL, cap * sizeof *set, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (set == MAP_FAILED)
		return -1;
	for (size_t i = 0; i < modules_cap; i++)
		if (modules[i].name_hash)
			*module_slot(set, cap, modules[i].base, modules[i].name_hash) = modules[i];
	if (modules)
		munmap(modules, modules_cap * sizeof *modules);
	modules = set;
	modules_cap = cap;
	return 0;
}

/* 1 the first time (base, name) is seen; remembered */
static int module_is_new(uint64_t base, const char *name)
{
	uint64_t h = name_hash(name);
	if (modules_cap) {
		struct module_key *k = module_slot(modules, modules_cap, base, h);
		if (k->name_hash)
			return 0;
	}
	if (2 * (nmodules + 1) > modules_cap && modules_grow() != 0) {
		if (!modules_full) { /* announced anyway, maybe again at the next look: said once */
			modules_full = 1;
			ptt_emit_limit(PTT_LIMIT_MODULES, 1, nmodules, 0);
		}
		return 1;
	}
	struct module_key *k = module_slot(modules, modules_cap, base, h);
	k->base = base;
	k->name_hash = h;
	nmodules++;
	return 1;
}

/* Every loaded object not yet announced, with its load address: the recorder names global
 * mutexes from their symbols, the converters call sites. */
static int module_event(struct dl_phdr_info *info, size_t size, void *data)
{
	int *first = data;
	char path[PATH_MAX];
	const char *name = info->dlpi_name;
	if (size >= offsetof(struct dl_phdr_info, dlpi_subs))
		modules_adds = info->dlpi_adds;
	if (*first) {
		*first = 0; /* the main program has no name here */
		ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
		path[n > 0 ? n : 0] = 0;
		name = path;
	}
	if (!name || !*name || strstr(name, "linux-vdso") || !module_is_new((uint64_t)info->dlpi_addr, name))
		return 0;
	uint32_t a[2];
	ptt_put64(a, (uint64_t)info->dlpi_addr);
	ptt_emit_str(PTT_EV_MODULE, a, 2, name);
	return 0;
}

static int read_adds(struct dl_phdr_info *info, size_t size, void *data)
{
	if (size >= offsetof(struct dl_phdr_info, dlpi_subs))
		*(unsigned long long *)data = info->dlpi_adds;
	return 1; /* the count is the same in every entry: the first is enough */
}

/* Announce every object loaded since the last look (dlopen after the start), once. */
static void announce_modules(void)
{
	if (__atomic_exchange_n(&modules_busy, 1, __ATOMIC_ACQUIRE))
		return; /* another thread is looking */
	int first = 1;
	dl_iterate_phdr(module_event, &first);
	ptt_py_announce(); /* a CPython's modules are known now */
	__atomic_store_n(&modules_busy, 0, __ATOMIC_RELEASE);
}

void ptt_modules_refresh(void)
{
	unsigned long long adds = 0;
	if (!ptt_on[PTT_EV_MODULE])
		return;
	dl_iterate_phdr(read_adds, &adds);
	if (adds != __atomic_load_n(&modules_adds, __ATOMIC_RELAXED))
		announce_modules();
}

static void process_begin(void)
{
	char cmd[PTT_MAX_STR]; /* what a record keeps: a longer command line is reported cut */
	size_t whole = read_cmdline(cmd, sizeof cmd);
	uint32_t a[1] = { (uint32_t)getppid() };
	int begun = ptt_tls.begun;
	ptt_tls.begun = 1; /* process_begin comes first, then this thread's begin */
	ptt_emit_str_len(PTT_EV_PROCESS_BEGIN, a, 1, cmd, whole);
	if (!begun) {
		uint32_t b[5] = { 0 };
		ptt_put64(b, (uint64_t)pthread_self());
		ptt_emit(PTT_EV_THREAD_BEGIN, b, 5);
	}
	announce_modules();
}

/* An exec'd image keeps the pid: the rings of its previous image's threads are orphans. */
static void close_stale_rings(struct ptt_shm *s, uint32_t pid)
{
	uint32_t n = __atomic_load_n(&s->nrings, __ATOMIC_ACQUIRE);
	for (uint32_t i = 0; i < n; i++) {
		struct ptt_ring *r = &s->rings[i];
		if (__atomic_load_n(&r->state, __ATOMIC_ACQUIRE) == PTT_RING_ACTIVE && r->pid == pid)
			__atomic_store_n(&r->state, PTT_RING_CLOSED, __ATOMIC_RELEASE);
	}
}

static void child_after_fork(void)
{
	if (!ptt_shm)
		return;
	struct ptt_tls *t = &ptt_tls;
	t->ring = NULL; /* the parent's ring stays the parent's */
	t->no_ring = 0;
	t->guard = 0;
	t->begun = 0;
	t->pid = (uint32_t)getpid();
	t->tid = ptt_gettid();
	__atomic_fetch_add(&ptt_shm->attached, 1, __ATOMIC_RELAXED);
	if (modules) /* a new process: its modules are announced under its pid (the set is its own copy) */
		memset(modules, 0, modules_cap * sizeof *modules);
	nmodules = 0;
	modules_full = 0;
	modules_busy = 0;
	ptt_stack_after_fork();
	process_begin();
}

static int exit_done;

/* The process's last events: once, from whichever exit path comes first. */
static void process_exit(int status)
{
	if (!ptt_shm)
		return;
	int saved = errno;
	if (ptt_tls.pid && (uint32_t)getpid() != ptt_tls.pid) {
		errno = saved;
		return; /* a vfork child leaving: its parent's ring and ids are not its own */
	}
	if (__atomic_exchange_n(&exit_done, 1, __ATOMIC_ACQ_REL)) {
		errno = saved;
		return;
	}
	uint32_t a[1] = { (uint32_t)status };
	ptt_emit(PTT_EV_PROCESS_EXIT, a, 1);
	struct ptt_tls *t = &ptt_tls;
	if (t->ring && !t->ended && t->tid == t->pid)
		ptt_thread_end(NULL, 3); /* how 3: the process exited */
	errno = saved;
}

/* on_exit sees the status of exit() and of a return from main alike (glibc's
 * start code calls exit without going through the PLT, out of a wrapper's sight). */
static void note_exit_status(int status, void *unused)
{
	(void)unused;
	process_exit(status);
}

/*
 * Registered from main's wrapper, after glibc registered the loader's
 * finalizer, so it runs before the destructors (ours included).
 */
static int (*program_main)(int, char **, char **);

static int main_wrapper(int argc, char **argv, char **envp)
{
	on_exit(note_exit_status, NULL);
	return program_main(argc, argv, envp);
}

int __libc_start_main(int (*main)(int, char **, char **), int argc, char **argv,
		      void (*init)(void), void (*fini)(void), void (*rtld_fini)(void), void *stack_end);

PTT_EXPORT int __libc_start_main(int (*main)(int, char **, char **), int argc, char **argv,
				 void (*init)(void), void (*fini)(void), void (*rtld_fini)(void), void *stack_end)
{
	int (*real)(int (*)(int, char **, char **), int, char **, void (*)(void), void (*)(void), void (*)(void), void *) =
		(__typeof__(real))ptt_dlsym("__libc_start_main", NULL);
	if (!real)
		ptt_die("cannot resolve __libc_start_main");
	program_main = main;
	return real(main_wrapper, argc, argv, init, fini, rtld_fini, stack_end);
}

PTT_EXPORT void _exit(int status)
{
	static void (*real)(int) __attribute__((noreturn));
	if (!real)
		real = (__typeof__(real))ptt_dlsym("_exit", NULL);
	process_exit(status);
	real(status);
}

PTT_EXPORT void _Exit(int status)
{
	_exit(status);
}

__attribute__((constructor)) static void ptt_init(void)
{
	ptt_resolve();
	const char *e = getenv(PTT_SHM_ENV);
	if (!e || !*e)
		return; /* not under ptt-record: every wrapper passes straight through */
	char *end;
	long fd = strtol(e, &end, 10);
	struct stat st;
	if (*end || fd < 0 || fstat((int)fd, &st) != 0 || (size_t)st.st_size < sizeof(struct ptt_shm)) {
		ptt_debug("PTT_SHM_FD does not name the shared ring; not tracing");
		return;
	}
	/* the control page says how much to map: itself, the descriptors and the first segment */
	struct ptt_shm *s = mmap(NULL, sizeof *s, PROT_READ, MAP_SHARED, (int)fd, 0);
	if (s == MAP_FAILED) {
		ptt_debug("cannot map the shared ring; not tracing");
		return;
	}
	uint64_t size = s->size;
	int ok = s->magic == PTT_SHM_MAGIC && s->version == PTT_SHM_VERSION && s->seg_rings &&
		 s->max_rings <= PTT_MAX_RINGS && size <= (uint64_t)st.st_size && ptt_shm_file_bytes(s) == (uint64_t)st.st_size;
	munmap(s, sizeof *s);
	if (!ok) {
		ptt_debug("shared ring from another ptt version; not tracing");
		return;
	}
	s = mmap(NULL, (size_t)size, PROT_READ | PROT_WRITE, MAP_SHARED, (int)fd, 0);
	if (s == MAP_FAILED) {
		ptt_debug("cannot map the shared ring; not tracing");
		return;
	}
	ptt_shm_fd = (int)fd; /* kept open: later segments are mapped from it */
	close_stale_rings(s, (uint32_t)getpid());
	enable_events(s);
	ptt_shm = s;
	pthread_atfork(NULL, NULL, child_after_fork);
	__atomic_fetch_add(&s->attached, 1, __ATOMIC_RELAXED);
	uint32_t zero = 0;
	__atomic_compare_exchange_n(&s->handshake, &zero, (uint32_t)getpid(), 0, __ATOMIC_RELEASE, __ATOMIC_RELAXED);
	process_begin();
	ptt_debug("attached");
}

PTT_EXPORT pid_t fork(void)
{
	pid_t pid = REAL(fork)();
	if (pid > 0 && ptt_on[PTT_EV_PROCESS_FORK]) {
		int saved = errno;
		uint32_t a[1] = { (uint32_t)pid };
		ptt_emit(PTT_EV_PROCESS_FORK, a, 1);
		errno = saved;
	}
	return pid;
}

/* Runs at exit() or return from main: the last events of the process. */
__attribute__((destructor)) static void ptt_fini(void)
{
	if (!ptt_shm)
		return;
	process_exit(-1); /* when no exit path told us the status (exit from a destructor) */
}

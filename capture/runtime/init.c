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
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "runtime.h"

struct ptt_real ptt_real;
static int resolving, resolved;

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

static void *real_dlsym(const char *name, const char *version)
{
	void *p = version ? dlvsym(RTLD_NEXT, name, version) : NULL;
	if (!p)
		p = dlsym(RTLD_NEXT, name);
	return p;
}

/* Resolve every real function once (runtime.h, PTT_REAL_FUNCTIONS).  Called from the
 * constructor and, through REAL, from any wrapper that runs first (another library's
 * constructor).  A function this glibc lacks stays NULL: REAL aborts when it is called. */
void ptt_resolve(void)
{
	if (__atomic_load_n(&resolved, __ATOMIC_ACQUIRE) || resolving)
		return;
	resolving = 1;
#define RESOLVE(name, ret, params, version) \
	ptt_real.name = (ret (*) params)real_dlsym(#name, version);
	PTT_REAL_FUNCTIONS(RESOLVE)
#undef RESOLVE
	resolving = 0;
	__atomic_store_n(&resolved, 1, __ATOMIC_RELEASE);
}

/*
 * The system call itself, for the moment before the real syscall() is
 * resolved (a library's constructor running before ours, or a call made
 * while dlsym resolves): -errno on failure, as the kernel returns it.
 */
static long raw_syscall(long n, long a1, long a2, long a3, long a4, long a5, long a6)
{
#if defined(__x86_64__)
	long ret;
	register long r10 __asm__("r10") = a4;
	register long r8 __asm__("r8") = a5;
	register long r9 __asm__("r9") = a6;
	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "a"(n), "D"(a1), "S"(a2), "d"(a3), "r"(r10), "r"(r8), "r"(r9)
			 : "rcx", "r11", "memory");
	return ret;
#elif defined(__aarch64__)
	register long x8 __asm__("x8") = n;
	register long x0 __asm__("x0") = a1;
	register long x1 __asm__("x1") = a2;
	register long x2 __asm__("x2") = a3;
	register long x3 __asm__("x3") = a4;
	register long x4 __asm__("x4") = a5;
	register long x5 __asm__("x5") = a6;
	__asm__ volatile("svc 0" : "+r"(x0) : "r"(x8), "r"(x1), "r"(x2), "r"(x3), "r"(x4), "r"(x5) : "memory");
	return x0;
#else
	(void)n, (void)a1, (void)a2, (void)a3, (void)a4, (void)a5, (void)a6;
	return -ENOSYS;
#endif
}

/* The stand-ins, for calls made while ptt_resolve looks the real functions up (from inside
 * dlsym: its allocator's locks and system calls).  The process is single-threaded then:
 * a mutex has nothing to exclude. */
static int boot_mutex(pthread_mutex_t *m)
{
	(void)m;
	return 0;
}

static long boot_syscall(long n, ...)
{
	long arg[6];
	va_list ap;
	va_start(ap, n);
	ptt_syscall_args(ap, arg);
	va_end(ap);
	long r = raw_syscall(n, arg[0], arg[1], arg[2], arg[3], arg[4], arg[5]);
	if (r < 0 && r > -4096) {
		errno = (int)-r;
		return -1;
	}
	return r;
}

static void *boot_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	long r = raw_syscall(SYS_mmap, (long)addr, (long)len, prot, flags, fd, (long)off);
	if (r < 0 && r > -4096) {
		errno = (int)-r;
		return MAP_FAILED;
	}
	return (void *)r;
}

static int boot_munmap(void *addr, size_t len)
{
	long r = raw_syscall(SYS_munmap, (long)addr, (long)len, 0, 0, 0, 0);
	if (r < 0) {
		errno = (int)-r;
		return -1;
	}
	return 0;
}

static const struct ptt_real stand_in = {
	.mmap = boot_mmap,
	.mmap64 = boot_mmap,
	.munmap = boot_munmap,
	.pthread_mutex_unlock = boot_mutex,
	.pthread_mutex_trylock = boot_mutex,
	.pthread_mutex_lock = boot_mutex,
	.syscall = boot_syscall,
};

ptt_fn ptt_real_slow(size_t off, const char *name)
{
	ptt_fn f;
	ptt_resolve();
	/* the entry at off, whatever its type: every entry is a function pointer */
	memcpy(&f, (const char *)&ptt_real + off, sizeof f);
	if (!f && resolving) /* a call from inside the look-ups */
		memcpy(&f, (const char *)&stand_in + off, sizeof f);
	if (!f) {
		char msg[96] = "cannot resolve ";
		strncat(msg, name, sizeof msg - strlen(msg) - 1);
		ptt_die(msg);
	}
	return f;
}

long ptt_syscall(long n, long a1, long a2, long a3, long a4, long a5, long a6)
{
	return REAL(syscall)(n, a1, a2, a3, a4, a5, a6);
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
	ptt_on[PTT_EV_MAP_SHARED] = ptt_on[PTT_EV_UNMAP_SHARED] = 1; /* objects in shared memory are one (wrap_mmap.c) */
	ptt_stack_init(s->stacks);
	/* the wrappers' fast path (runtime.h): recorded, no stack, rdtsc; serialized or not */
	for (unsigned id = 0; id < PTT_EV_BUILTIN_COUNT; id++)
		ptt_fast[id] = !ptt_on[id]                                           ? 0
			       : ptt_stack_on[id] || !PTT_HAVE_TSC || !s->use_tsc ? PTT_FAST_NO
			       : ptt_early_ok[id]                                 ? PTT_FAST_EARLY
										  : PTT_FAST_SERIAL;
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

/*
 * The module_build_id event of a loaded object: the extent of its loadable segments and its GNU
 * build-id, read from its program headers and notes where the loader mapped them (no file is
 * opened: what is named later is the object that ran).  A reader checks the file it finds against
 * the build-id before naming from it, and names addresses in the extent module+0xoff when it cannot.
 */
/* Is the note segment ph inside a loaded segment's file bytes (so mapped and readable)?  A note
 * left out of every PT_LOAD exists only in the file: reading it would fault in the program. */
static int note_is_mapped(const struct dl_phdr_info *info, const ElfW(Phdr) *ph)
{
	for (unsigned i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ld = &info->dlpi_phdr[i];
		if (ld->p_type == PT_LOAD && (ld->p_flags & PF_R) && ph->p_vaddr >= ld->p_vaddr &&
		    ph->p_vaddr + ph->p_filesz <= ld->p_vaddr + ld->p_filesz)
			return 1;
	}
	return 0;
}

static void module_build_id(const struct dl_phdr_info *info)
{
	uint64_t lo = UINT64_MAX, hi = 0;
	char hex[2 * 64 + 1];
	size_t len = 0;
	for (unsigned i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type == PT_LOAD) {
			uint64_t from = info->dlpi_addr + (ph->p_vaddr & ~(uint64_t)4095);
			uint64_t to = info->dlpi_addr + ph->p_vaddr + ph->p_memsz;
			lo = from < lo ? from : lo;
			hi = to > hi ? to : hi;
		}
		if (ph->p_type != PT_NOTE || len || !note_is_mapped(info, ph))
			continue;
		const unsigned char *p = (const unsigned char *)(info->dlpi_addr + ph->p_vaddr), *end = p + ph->p_filesz;
		while (p + sizeof(ElfW(Nhdr)) <= end) { /* notes: header, name and descriptor, each 4-aligned */
			const ElfW(Nhdr) *nh = (const ElfW(Nhdr) *)(const void *)p;
			const unsigned char *name = p + sizeof *nh, *desc = name + ((nh->n_namesz + 3) & ~3u);
			if (desc + nh->n_descsz > end)
				break;
			if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 && memcmp(name, "GNU", 4) == 0) {
				static const char digits[] = "0123456789abcdef";
				for (unsigned k = 0; k < nh->n_descsz && k < 64; k++) {
					hex[len++] = digits[desc[k] >> 4];
					hex[len++] = digits[desc[k] & 15];
				}
				break;
			}
			p = desc + ((nh->n_descsz + 3) & ~3u);
		}
	}
	hex[len] = 0;
	if (lo >= hi)
		lo = hi = 0;
	uint32_t a[6];
	ptt_put64(a, (uint64_t)info->dlpi_addr);
	ptt_put64(a + 2, lo);
	ptt_put64(a + 4, hi);
	ptt_emit_str(PTT_EV_MODULE_BUILD_ID, a, 6, hex);
}

/* Every loaded object not yet announced, with its load address and build-id: the converters
 * name call sites and global objects from their symbols. */
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
	if (ptt_on[PTT_EV_MODULE_BUILD_ID])
		module_build_id(info);
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
	t->ring = NULL; /* the parent's ring stays the parent's, and so does its record open (fork's) */
	t->fast_end = 0;
	t->no_ring = 0;
	t->guard = 0;
	t->deferring = t->defer_open = t->ndefer = 0;
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
	ptt_maps_after_fork();
}

/*
 * The shared ring's descriptor, as the runtime found it at attach.  The
 * runtime itself never uses it again (segments are remapped from memory:
 * shm.c), but a new image started by exec attaches from it, and a program
 * may have closed it (a daemon closing every descriptor) or used its number
 * since.  Closed: it is opened again before the exec, as a new descriptor
 * of the recorder's own (/proc/RECORDER/fd/N, allowed where the program may
 * look at its recorder's descriptors: same user), at the same number.
 * Taken by a file of the program's: left alone, and the exec said to be
 * untraced (a limit event).
 */
static int attach_fd = -1;
static dev_t attach_dev;
static ino_t attach_ino;

int ptt_is_ring_file(dev_t dev, ino_t ino)
{
	return attach_fd >= 0 && dev == attach_dev && ino == attach_ino;
}

static int is_ring_fd(int fd)
{
	struct stat st;
	return fstat(fd, &st) == 0 && st.st_dev == attach_dev && st.st_ino == attach_ino;
}

/* "/proc/PID/fd/FD" into buf (no stdio in the traced program) */
static void proc_fd_path(char *buf, uint32_t pid, uint32_t fd)
{
	static const char pre[] = "/proc/";
	char *p = buf;
	memcpy(p, pre, sizeof pre - 1);
	p += sizeof pre - 1;
	uint32_t v[2] = { pid, fd };
	for (int k = 0; k < 2; k++) {
		char digits[12];
		int n = 0;
		do
			digits[n++] = (char)('0' + v[k] % 10);
		while ((v[k] /= 10) != 0);
		while (n)
			*p++ = digits[--n];
		if (k == 0) {
			memcpy(p, "/fd/", 4);
			p += 4;
		}
	}
	*p = 0;
}

int ptt_exec_ring_fd(int *reopened)
{
	*reopened = 0;
	if (attach_fd < 0 || !ptt_shm)
		return 1;
	int saved = errno, ok = 0;
	if (fcntl(attach_fd, F_GETFD) >= 0) {
		ok = is_ring_fd(attach_fd); /* open: ours still, or the program's now */
	} else if (errno == EBADF) {
		char path[48];
		proc_fd_path(path, ptt_shm->recorder_pid, ptt_shm->recorder_fd);
		int fd = open(path, O_RDWR); /* no O_CLOEXEC: for the new image */
		if (fd >= 0 && fd != attach_fd) {
			int d = dup2(fd, attach_fd);
			close(fd);
			fd = d;
		}
		ok = fd == attach_fd && is_ring_fd(fd);
		if (fd >= 0 && !ok)
			close(fd);
		*reopened = ok;
	}
	if (!ok)
		ptt_debug("the program closed the shared ring's descriptor (or used its number): "
			  "the image it execs is not traced");
	errno = saved;
	return ok;
}

void ptt_exec_ring_fd_close(void)
{
	int saved = errno;
	close(attach_fd);
	errno = saved;
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
	program_main = main;
	return REAL(__libc_start_main)(main_wrapper, argc, argv, init, fini, rtld_fini, stack_end);
}

PTT_EXPORT void _exit(int status)
{
	process_exit(status);
	REAL(_exit)(status);
	__builtin_unreachable(); /* the table's entry is not declared noreturn */
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
	ptt_shm_huge(s, (char *)s + s->ring_offset, size - s->ring_offset);
	attach_fd = (int)fd;
	attach_dev = st.st_dev;
	attach_ino = st.st_ino;
	/* the descriptor is left to exec (a new image attaches from it) and never used again here: the
	 * program may close it (a daemon closing every descriptor) or reuse its number; later
	 * segments are mapped from this mapping (shm.c, seg_remap) */
	close_stale_rings(s, (uint32_t)getpid());
	enable_events(s);
	ptt_shm = s;
	pthread_atfork(NULL, NULL, child_after_fork);
	ptt_thread_end_key();
	__atomic_fetch_add(&s->attached, 1, __ATOMIC_RELAXED);
	uint32_t zero = 0;
	__atomic_compare_exchange_n(&s->handshake, &zero, (uint32_t)getpid(), 0, __ATOMIC_RELEASE, __ATOMIC_RELAXED);
	process_begin();
	ptt_calibrate(s);
	ptt_debug("attached");
}

/*
 * fork: process_fork once it returned, not held open across it as vfork's and posix_spawn's are
 * (wrap_exec.c): fork runs the program's pthread_atfork handlers, and an allocator's lock every
 * mutex it has there (jemalloc: dozens), more than a record held open can keep behind it.  So the
 * child's first events may be stamped before it.
 */
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

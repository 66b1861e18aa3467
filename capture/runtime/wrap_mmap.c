/*
 * wrap_mmap.c - where the program's shared memory is: map_shared for each
 * MAP_SHARED mapping it makes (mmap, mmap64), unmap_shared for a munmap over
 * one, so that a process-shared mutex, rwlock, barrier, semaphore or futex
 * word inside it is one object across the processes that use it
 * (ptt-trace(5), SHARED OBJECTS).
 *
 * Why here and not in the recorder (reading /proc/PID/maps): the recorder
 * reads the rings when it drains them, after the fact; a mapping made, used
 * and unmapped between two reads (or by a process that exited) would never
 * be seen, and the order of a map against the lock events in it would be a
 * guess.  The wrapper sees each mapping as it is made, in the thread's own
 * stream, before any lock event in it.  mmap and munmap are system calls
 * already: the fstat and readlink added here cost as much again, on calls
 * that are never on a lock's path (no lock event pays anything).
 *
 * An anonymous shared mapping has no file to name it: its identity is the
 * process that made it and its address there (dev 0, ino the pid, off the
 * address).  A forked child shares it (and every file mapping) at the same
 * address: child_after_fork calls ptt_maps_after_fork, which repeats the
 * process's table of shared mappings under the child's pid, the same
 * identities.  The table is fixed (no allocation in the traced program);
 * mappings beyond it are still told, only not repeated in children
 * (a limit event, PTT_LIMIT_SHARED_MAPS, says how many).
 *
 * glibc's own mappings (sem_open's, made inside libc) do not come through
 * here: sem_open's wrapper tells its mapping with ptt_maps_sem_open (the
 * file under /dev/shm that holds the semaphore), and sem_close's with
 * ptt_maps_sem_close when libc unmapped it, so that a named semaphore is
 * one object in every process that opened it or inherited it.
 */
#include <errno.h>
#include <inttypes.h>
#include <semaphore.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runtime.h"

#define PTT_SHARED_MAPS 64
#define PTT_MAP_PATH 64

struct shared_map {
	uint64_t addr, len, dev, ino, off;
	char path[PTT_MAP_PATH];
};

/* The process's shared mappings, for its forked children; under maps_lock (mmap and munmap only). */
static struct shared_map maps[PTT_SHARED_MAPS];
static unsigned nmaps;
static uint64_t maps_dropped;
static int maps_lock;

static void lock_maps(void)
{
	while (__atomic_exchange_n(&maps_lock, 1, __ATOMIC_ACQUIRE))
		while (__atomic_load_n(&maps_lock, __ATOMIC_RELAXED))
			;
}

static void unlock_maps(void) { __atomic_store_n(&maps_lock, 0, __ATOMIC_RELEASE); }

static void emit_map(const struct shared_map *m)
{
	uint32_t a[10];
	ptt_put64(a, m->addr);
	ptt_put64(a + 2, m->len);
	ptt_put64(a + 4, m->dev);
	ptt_put64(a + 6, m->ino);
	ptt_put64(a + 8, m->off);
	ptt_emit_str(PTT_EV_MAP_SHARED, a, 10, m->path);
}

/* "/proc/self/fd/N"'s target into path (cut, NUL-terminated); "" when it cannot be read. */
static void fd_path(int fd, char *path, size_t size)
{
	char link[32] = "/proc/self/fd/", digits[12];
	size_t at = strlen(link);
	int n = 0;
	unsigned v = (unsigned)fd;
	do
		digits[n++] = (char)('0' + v % 10);
	while ((v /= 10) != 0);
	while (n)
		link[at++] = digits[--n];
	link[at] = 0;
	ssize_t got = readlink(link, path, size - 1);
	path[got > 0 ? got : 0] = 0;
}

/* m told, and kept for the children. */
static void keep_map(const struct shared_map *in)
{
	struct shared_map m = *in;
	lock_maps();
	int kept = 0;
	for (unsigned i = 0; i < nmaps && !kept; i++)
		if (maps[i].addr == m.addr) /* MAP_FIXED over one we knew */
			maps[i] = m, kept = 1;
	if (!kept && nmaps < PTT_SHARED_MAPS)
		maps[nmaps++] = m, kept = 1;
	int dropped = !kept;
	maps_dropped += (uint64_t)dropped;
	unlock_maps();
	emit_map(&m);
	if (dropped)
		ptt_emit_limit(PTT_LIMIT_SHARED_MAPS, 1, PTT_SHARED_MAPS, 0);
}

/* A MAP_SHARED mapping made at addr: told, and kept for the children. */
static void note_map(void *addr, size_t len, int flags, int fd, off_t off)
{
	struct shared_map m = { .addr = (uintptr_t)addr, .len = len };
	if (flags & MAP_ANONYMOUS || fd < 0) {
		m.dev = 0;
		m.ino = ptt_tls.pid ? ptt_tls.pid : (uint32_t)getpid();
		m.off = (uintptr_t)addr;
	} else {
		struct stat st;
		if (fstat(fd, &st) != 0 || ptt_is_ring_file(st.st_dev, st.st_ino))
			return; /* the runtime's own ring (its later segments), or a descriptor fstat refuses */
		m.dev = st.st_dev;
		m.ino = st.st_ino;
		m.off = (uint64_t)off;
		fd_path(fd, m.path, sizeof m.path);
	}
	keep_map(&m);
}

void ptt_maps_sem_open(const void *s, const char *name)
{
	if (!ptt_shm || !ptt_on[PTT_EV_MAP_SHARED] || !name)
		return;
	/* glibc maps the file /dev/shm/sem.NAME (NAME without its leading slashes) from its offset 0,
	 * one sem_t at a page's start. The mapping's own file first (/proc/self/map_files: the one mapped,
	 * even if the name was unlinked or made again since); its name where that cannot be read. */
	long page = sysconf(_SC_PAGESIZE);
	uint64_t lo = (uintptr_t)s & ~(uint64_t)(page - 1);
	struct shared_map m = { .addr = (uintptr_t)s, .len = sizeof(sem_t), .off = (uintptr_t)s - lo };
	while (*name == '/')
		name++;
	/* sem_open is neither async-signal-safe nor a trace path: snprintf will do */
	snprintf(m.path, sizeof m.path, "/dev/shm/sem.%s", name);
	char link[64];
	snprintf(link, sizeof link, "/proc/self/map_files/%" PRIx64 "-%" PRIx64, lo, lo + (uint64_t)page);
	struct stat st;
	if (stat(link, &st) != 0 && stat(m.path, &st) != 0)
		return;
	m.dev = st.st_dev;
	m.ino = st.st_ino;
	keep_map(&m);
}

static void *mmap_common(void *(*real)(void *, size_t, int, int, int, off_t), void *addr, size_t len, int prot,
			 int flags, int fd, off_t off)
{
	void *p = real(addr, len, prot, flags, fd, off);
	if (p != MAP_FAILED && ptt_shm && (flags & MAP_TYPE) != MAP_PRIVATE && ptt_on[PTT_EV_MAP_SHARED]) {
		int saved = errno;
		note_map(p, len, flags, fd, off);
		errno = saved;
	}
	return p;
}

PTT_EXPORT void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	return mmap_common(REAL(mmap), addr, len, prot, flags, fd, off);
}

PTT_EXPORT void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	return mmap_common(REAL(mmap64), addr, len, prot, flags, fd, off);
}

/* [lo, lo + len) unmapped: the shared mappings in it forgotten, unmap_shared told if any was. */
static void forget_maps(uint64_t lo, uint64_t len)
{
	int told = 0;
	uint64_t hi = lo + len;
	lock_maps();
	for (unsigned i = 0; i < nmaps;) {
		struct shared_map *m = &maps[i];
		if (m->addr < hi && lo < m->addr + m->len) {
			told = 1;
			if (lo <= m->addr && m->addr + m->len <= hi) { /* all of it: forgotten */
				maps[i] = maps[--nmaps];
				continue;
			}
		}
		i++;
	}
	unlock_maps();
	if (told) {
		uint32_t a[4];
		ptt_put64(a, lo);
		ptt_put64(a + 2, len);
		ptt_emit(PTT_EV_UNMAP_SHARED, a, 4);
	}
}

PTT_EXPORT int munmap(void *addr, size_t len)
{
	int ret = REAL(munmap)(addr, len);
	if (ret != 0 || !ptt_shm || !ptt_on[PTT_EV_UNMAP_SHARED])
		return ret;
	int saved = errno;
	forget_maps((uintptr_t)addr, len);
	errno = saved;
	return ret;
}

void ptt_maps_sem_close(const void *s)
{
	if (!ptt_shm || !ptt_on[PTT_EV_UNMAP_SHARED])
		return;
	/* libc unmaps a named semaphore at its last sem_close in the process (an earlier one only counts
	 * down): told when its page is gone (mincore says ENOMEM for an address nothing maps; msync would
	 * too, but it is a cancellation point and sem_close is none) */
	long page = sysconf(_SC_PAGESIZE);
	uint64_t lo = (uintptr_t)s & ~(uint64_t)(page - 1);
	unsigned char in;
	if (mincore((void *)(uintptr_t)lo, (size_t)page, &in) == 0 || errno != ENOMEM)
		return;
	forget_maps((uintptr_t)s, sizeof(sem_t));
}

void ptt_maps_after_fork(void)
{
	maps_lock = 0; /* the fork's thread alone now: a lock held by another thread at fork is gone with it */
	if (!ptt_on[PTT_EV_MAP_SHARED])
		return;
	for (unsigned i = 0; i < nmaps; i++)
		emit_map(&maps[i]);
	if (maps_dropped)
		ptt_emit_limit(PTT_LIMIT_SHARED_MAPS, maps_dropped, PTT_SHARED_MAPS, 0);
}

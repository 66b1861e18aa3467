/*
 * wrap_futex.c - glibc's syscall(), for the futexes that programs wait on
 * and wake themselves (class "futex"): Rust's std Mutex, RwLock and Condvar
 * (since Rust 1.62), parking_lot, InnoDB's srw_lock, libstdc++'s atomic
 * waits.  Every other system call passes straight through.
 *
 * What stays out of sight: futex calls issued inline (the `syscall`
 * instruction in the program's own code: glibc's own locks, Go, the JVM's
 * park, musl), futex_waitv, and who holds a futex-based lock (acquiring one
 * uncontended is an atomic operation in the program: no call at all).
 */
#include <errno.h>
#include <linux/futex.h>
#include <stdarg.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "runtime.h"

#ifndef FUTEX_LOCK_PI2
#define FUTEX_LOCK_PI2 13
#endif

/* A timeout as ns, -1 for none (the word at t is the caller's: the kernel reads it too). */
static int64_t timeout_ns(const struct timespec *t)
{
	return t ? (int64_t)t->tv_sec * 1000000000 + t->tv_nsec : -1;
}

/*
 * The blocking request of a futex wait, stamped before the call: the one
 * place a futex wait's REQUEST record is written (a hook that adds the
 * waiting thread's stack belongs here).
 */
static __attribute__((noinline)) void futex_wait_request(const uint32_t *uaddr, uint32_t val, uint32_t op,
							 int64_t timeout, const void *site)
{
	struct ptt_rec rec;
	enum { N = 6 + PTT_SITE_WORDS };
	if (__builtin_expect(ptt_stack_on[PTT_EV_FUTEX_WAIT_REQ], 0)) { /* with the caller's stack (--stacks) */
		uint32_t w[N];
		ptt_put64(w, (uint64_t)(uintptr_t)uaddr);
		w[2] = val;
		w[3] = op;
		ptt_put64(w + 4, (uint64_t)timeout);
		ptt_put_site(w + 6, site);
		ptt_emit_stacked(PTT_EV_FUTEX_WAIT_REQ, w, N, ptt_stack_here());
		return;
	}
	if (ptt_rec_open_site(&rec, PTT_EV_FUTEX_WAIT_REQ, N, site) != 0)
		return;
	uint32_t *a = rec.p + PTT_REC_HDR_WORDS;
	ptt_put64(a, (uint64_t)(uintptr_t)uaddr);
	a[2] = val;
	a[3] = op;
	ptt_put64(a + 4, (uint64_t)timeout);
	ptt_rec_close(&rec);
}

/* The call with syscall()'s six arguments after the number, arg[0] (the futex) to arg[5]. */
static long futex_call(const long *arg)
{
	return REAL(syscall)(SYS_futex, arg[0], arg[1], arg[2], arg[3], arg[4], arg[5]);
}

static long futex_wait(const long *arg, unsigned cmd, const void *site)
{
	const uint32_t *uaddr = (const uint32_t *)arg[0];
	uint32_t op = (uint32_t)arg[1] & ~(uint32_t)FUTEX_PRIVATE_FLAG;
	int saved = errno;
	int has_val = cmd == FUTEX_WAIT || cmd == FUTEX_WAIT_BITSET || cmd == FUTEX_WAIT_REQUEUE_PI;
	futex_wait_request(uaddr, has_val ? (uint32_t)arg[2] : 0, op, timeout_ns((const struct timespec *)arg[3]), site);
	errno = saved;
	long r = futex_call(arg);
	saved = errno;
	ptt_obj_ret(PTT_EV_FUTEX_WAIT, uaddr, r < 0 ? saved : 0, site);
	errno = saved;
	return r;
}

/* A wake, stamped before the call (what it wakes runs after); woken is its result. */
static long futex_wake(const long *arg, unsigned cmd, const void *site)
{
	struct ptt_rec rec;
	enum { N = 5 + PTT_SITE_WORDS };
	if (ptt_rec_open_site(&rec, PTT_EV_FUTEX_WAKE, N, site) != 0)
		return futex_call(arg);
	uint32_t *a = rec.p + PTT_REC_HDR_WORDS;
	ptt_put64(a, (uint64_t)arg[0]);
	a[2] = cmd == FUTEX_UNLOCK_PI ? 1u : (uint32_t)arg[2];
	a[3] = (uint32_t)arg[1] & ~(uint32_t)FUTEX_PRIVATE_FLAG;
	a[4] = 0;
	long r = futex_call(arg);
	int saved = errno;
	a[4] = (uint32_t)(r < 0 ? -saved : (int32_t)r);
	ptt_rec_close(&rec);
	errno = saved;
	return r;
}

PTT_EXPORT long syscall(long n, ...)
{
	long arg[6];
	va_list ap;
	va_start(ap, n);
	ptt_syscall_args(ap, arg);
	va_end(ap);
	/* before the look-ups (a constructor that runs before ours) no event is on: REAL(syscall)
	 * below resolves, or stands in while dlsym runs */
	if (__builtin_expect(n != SYS_futex || ptt_tls.guard, 1))
		return REAL(syscall)(n, arg[0], arg[1], arg[2], arg[3], arg[4], arg[5]);
	unsigned cmd = (unsigned)arg[1] & FUTEX_CMD_MASK;
	switch (cmd) {
	case FUTEX_WAIT:
	case FUTEX_WAIT_BITSET:
	case FUTEX_LOCK_PI:
	case FUTEX_LOCK_PI2:
	case FUTEX_WAIT_REQUEUE_PI:
		if (ptt_on[PTT_EV_FUTEX_WAIT])
			return futex_wait(arg, cmd, PTT_SITE);
		break;
	case FUTEX_WAKE:
	case FUTEX_WAKE_BITSET:
	case FUTEX_WAKE_OP:
	case FUTEX_UNLOCK_PI:
	case FUTEX_REQUEUE:
	case FUTEX_CMP_REQUEUE:
	case FUTEX_CMP_REQUEUE_PI:
		if (ptt_on[PTT_EV_FUTEX_WAKE])
			return futex_wake(arg, cmd, PTT_SITE);
		break;
	default:
		break;
	}
	return futex_call(arg);
}

/*
 * blocked.h - for the examples that must wait until another of their threads
 * really sleeps on a lock (so that a trace shows its wait whatever the
 * scheduler does): is thread tid inside a futex wait on a word of the object
 * at obj (size bytes)?  Read from /proc/self/task/TID/syscall.
 */
#ifndef PTT_EXAMPLE_BLOCKED_H
#define PTT_EXAMPLE_BLOCKED_H
#include <stdint.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <time.h>

/* 1: blocked on obj; 0: not (yet); -1: not known here (no /proc) */
static inline int blocked_on(pid_t tid, const void *obj, size_t size)
{
	char path[64];
	unsigned long nr = 0, a0 = 0;
	snprintf(path, sizeof path, "/proc/self/task/%d/syscall", (int)tid);
	FILE *f = tid ? fopen(path, "r") : NULL;
	if (!f)
		return -1;
	int yes = fscanf(f, "%lu %lx", &nr, &a0) == 2 && nr == SYS_futex && a0 >= (uintptr_t)obj &&
		  a0 < (uintptr_t)obj + size;
	fclose(f);
	return yes;
}

/* Wait until thread tid is blocked on obj: 10 s at most, 20 ms when that cannot be known. */
static inline void wait_blocked_on(pid_t tid, const void *obj, size_t size)
{
	const struct timespec ms = { 0, 1000000 };
	for (int i = 0; i < 10000; i++) {
		int b = blocked_on(tid, obj, size);
		if (b > 0)
			return;
		if (b < 0 && i >= 20)
			return;
		nanosleep(&ms, NULL);
	}
}
#endif

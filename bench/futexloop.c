/*
 * futexloop - the futex class's cost: ITER calls each of syscall(SYS_getppid)
 * (a system call libptt passes through), syscall(SYS_futex, FUTEX_WAKE) on a
 * word nobody waits on (a futex_wake record) and a FUTEX_WAIT whose word
 * has changed (EAGAIN at once: a request and an outcome record).  stdout: ns
 * per call of each, "passthrough wake wait", the least of ROUNDS rounds (a
 * loaded machine only ever adds time), for scripts.
 *
 *   futexloop ITER [ROUNDS]
 */
#include <linux/futex.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static unsigned word = 1;

int main(int argc, char **argv)
{
	long iter = argc > 1 ? atol(argv[1]) : 100000, rounds = argc > 2 ? atol(argv[2]) : 5;
	double best[3] = { 1e30, 1e30, 1e30 };
	for (long r = 0; r < rounds; r++) {
	double t[4];
	t[0] = now();
	for (long i = 0; i < iter; i++)
		syscall(SYS_getppid);
	t[1] = now();
	for (long i = 0; i < iter; i++)
		syscall(SYS_futex, &word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
	t[2] = now();
	for (long i = 0; i < iter; i++)
		syscall(SYS_futex, &word, FUTEX_WAIT_PRIVATE, 0, NULL, NULL, 0); /* word is 1: EAGAIN */
	t[3] = now();
	for (int k = 0; k < 3; k++)
		if ((t[k + 1] - t[k]) / (double)iter < best[k])
			best[k] = (t[k + 1] - t[k]) / (double)iter;
	}
	printf("%.1f %.1f %.1f\n", best[0], best[1], best[2]);
	return 0;
}

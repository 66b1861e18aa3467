/*
 * ring_memory - a thread pool that grows and shrinks, and what the rings'
 * shared memory does: THREADS threads lock and unlock a mutex PAIRS times
 * each (enough to write through a good part of their rings) and end; the
 * program then watches, for up to 30 s, how much memory the recorder's
 * memfd ("/memfd:ptt-ring", found in /proc/self/fd) still holds.
 *
 *   ring_memory [THREADS [PAIRS]]   (default 64 threads, 20000 pairs)
 *
 * Prints "threads N pairs P" and, when traced, the memfd's allocated KiB
 * when the threads had ended and when the watch ended ("untraced" when
 * there is no memfd).
 */
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static long pairs;

static void *work(void *arg)
{
	pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
	for (long i = 0; i < pairs; i++) {
		pthread_mutex_lock(&m);
		pthread_mutex_unlock(&m);
	}
	return arg;
}

/* The rings' memfd, or -1. */
static int ring_fd(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int fd = -1;
	while (d && fd < 0 && (e = readdir(d))) {
		char path[300], target[256];
		snprintf(path, sizeof path, "/proc/self/fd/%s", e->d_name);
		ssize_t n = readlink(path, target, sizeof target - 1);
		if (n > 0) {
			target[n] = 0;
			if (strncmp(target, "/memfd:ptt-ring", 15) == 0)
				fd = atoi(e->d_name);
		}
	}
	if (d)
		closedir(d);
	return fd;
}

static long long allocated_kib(int fd)
{
	struct stat st;
	return fstat(fd, &st) == 0 ? (long long)st.st_blocks / 2 : -1;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 64;
	pairs = argc > 2 ? atol(argv[2]) : 20000;
	if (n < 1 || n > 4096 || pairs < 0) {
		fprintf(stderr, "usage: ring_memory [THREADS [PAIRS]] (THREADS 1-4096)\n");
		return 2;
	}
	pthread_t *t = calloc((size_t)n, sizeof *t);
	if (!t)
		return 1;
	for (long i = 0; i < n; i++)
		if (pthread_create(&t[i], NULL, work, NULL) != 0) {
			perror("ring_memory: pthread_create");
			return 1;
		}
	for (long i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	free(t);
	printf("threads %ld pairs %ld\n", n, pairs);
	int fd = ring_fd();
	if (fd < 0) {
		printf("untraced\n");
		return 0;
	}
	long long at_end = allocated_kib(fd), now = at_end;
	/* watch until at most a tenth is left, or 30 s */
	for (int i = 0; i < 300 && now > at_end / 10; i++) {
		struct timespec ts = { 0, 100000000 };
		nanosleep(&ts, NULL);
		now = allocated_kib(fd);
	}
	printf("ring memory when the threads had ended: %lld KiB\n", at_end);
	printf("ring memory after the watch: %lld KiB\n", now);
	return 0;
}

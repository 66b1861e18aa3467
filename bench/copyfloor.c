/*
 * copyfloor.c - the least a recorder that copies the program's bytes to a
 * file pays per byte on this machine (issue 36's floor): one thread writes
 * a 1 MiB ring flat out, 64 KiB at a time, each chunk published with a
 * store-release; another thread, on the other processor, takes each chunk
 * as it is published and (mode) only reads it into a buffer (copy), or
 * copies it and hands it to write(2) on a regular file (write), or the same
 * with the file opened O_DIRECT, written in aligned 1 MiB pieces (direct).
 * Prints the reading thread's CPU time per byte moved, in ns, its waits for
 * the next chunk left out.
 *
 * usage: copyfloor copy|write|direct MIB FILE
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define RING (1u << 20)
#define CHUNK (64u << 10)
#define OUT (1u << 20)

static unsigned char *ring;
static uint64_t published, taken, total;

static void *producer(void *arg)
{
	(void)arg;
	uint64_t v = 1;
	for (uint64_t pos = 0; pos < total; pos += CHUNK) {
		while (pos + CHUNK - __atomic_load_n(&taken, __ATOMIC_ACQUIRE) > RING)
			;
		uint64_t *p = (uint64_t *)(void *)(ring + (pos & (RING - 1)));
		for (unsigned i = 0; i < CHUNK / 8; i++)
			p[i] = v++ * 0x9e3779b97f4a7c15ull; /* records' worth of stores, as a program's thread makes */
		__atomic_store_n(&published, pos + CHUNK, __ATOMIC_RELEASE);
	}
	return NULL;
}

static double thread_cpu_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return t.tv_sec * 1e9 + t.tv_nsec;
}

int main(int argc, char **argv)
{
	if (argc != 4)
		return fprintf(stderr, "usage: copyfloor copy|write|direct MIB FILE\n"), 2;
	int mode = strcmp(argv[1], "copy") == 0 ? 0 : strcmp(argv[1], "write") == 0 ? 1 : 2;
	total = strtoull(argv[2], NULL, 10) << 20;
	int fd = -1;
	if (mode) {
		fd = open(argv[3], O_WRONLY | O_CREAT | O_TRUNC | (mode == 2 ? O_DIRECT : 0), 0644);
		if (fd < 0)
			return perror(argv[3]), 1;
	}
	unsigned char *out;
	if (posix_memalign((void **)&ring, 4096, RING) || posix_memalign((void **)&out, 4096, OUT))
		return 1;
	memset(ring, 0, RING);
	pthread_t th;
	pthread_create(&th, NULL, producer, NULL);
	double cpu = 0;
	size_t used = 0;
	for (uint64_t pos = 0; pos < total; pos += CHUNK) {
		while (__atomic_load_n(&published, __ATOMIC_ACQUIRE) < pos + CHUNK)
			;
		double c0 = thread_cpu_ns(); /* the waiting above is no part of the cost */
		memcpy(out + used, ring + (pos & (RING - 1)), CHUNK);
		used += CHUNK;
		__atomic_store_n(&taken, pos + CHUNK, __ATOMIC_RELEASE);
		if (used == OUT) {
			if (mode && write(fd, out, used) != (ssize_t)used)
				return perror("write"), 1;
			used = 0;
		}
		cpu += thread_cpu_ns() - c0;
	}
	pthread_join(th, NULL);
	if (fd >= 0) {
		close(fd);
		unlink(argv[3]);
	}
	printf("%.3f\n", cpu / (double)total);
	return 0;
}

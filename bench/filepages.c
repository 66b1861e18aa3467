/*
 * filepages - what "rings that are the file's own pages" (issue 36, doc/recorder.md
 * section 7) would cost: one thread stamps and stores floor.c's 36-byte records
 * either into a private ring (today's trace path, before the recorder reads it)
 * or straight into a shared mapping of the trace file, which nobody reads: the
 * kernel writes its pages back.  Prints, per event: the wall time, the process's
 * own CPU (user + system: the stores, the page faults and the final fdatasync),
 * and the kernel threads' CPU meanwhile (the writeback's workers), from one run.
 *
 *   filepages MODE EVENTS FILE
 *     ring       a 1 MiB private ring, written round and round (the floor)
 *     file       FILE's pages mapped shared, each page faulted in by its first store
 *     populate   the same, a second thread populating 4 MiB ahead of the writer
 *                (madvise MADV_POPULATE_WRITE): the faults off the writer's path
 *     compact    populate's, but each record coded compactly by the writing thread
 *                itself (cpt_encode, as the recorder codes it today) before its store:
 *                a lock loop's records (lock, unlock of one mutex, alternating; 11 words)
 *
 * FILE is created (O_EXCL: never a file that exists) and removed at the end.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../capture/shm.h"
#include "../formats/compact.h"
#include "../formats/ptt_trace.h"

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

enum { REC = 36, AHEAD = 4 << 20 };

static char *map;
static size_t len;
static volatile size_t written; /* bytes the writer has reached */
static volatile int done;

static void *populate(void *arg)
{
	(void)arg;
	size_t at = 0;
	while (!done && at < len) {
		while (!done && at > written + AHEAD)
			usleep(50);
		size_t n = len - at < (1 << 20) ? len - at : (1 << 20);
		if (madvise(map + at, n, MADV_POPULATE_WRITE)) {
			perror("filepages: madvise(MADV_POPULATE_WRITE)");
			return NULL;
		}
		at += n;
	}
	return NULL;
}

/* the kernel's own threads' CPU so far, ns (the writeback's workers among them):
 * utime + stime of every process whose parent is kthreadd (pid 2) */
static double kthreads_ns(void)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	unsigned long long sum = 0;
	while (d && (e = readdir(d))) {
		char path[300], buf[1024];
		if (*e->d_name < '0' || *e->d_name > '9')
			continue;
		snprintf(path, sizeof path, "/proc/%s/stat", e->d_name);
		FILE *f = fopen(path, "r");
		if (!f)
			continue;
		size_t k = fread(buf, 1, sizeof buf - 1, f);
		fclose(f);
		buf[k] = 0;
		char *q = strrchr(buf, ')');
		int ppid;
		unsigned long long ut, st;
		if (q && sscanf(q + 2, "%*c %d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ppid, &ut, &st) == 3 &&
		    ppid == 2)
			sum += ut + st;
	}
	if (d)
		closedir(d);
	return sum * (1e9 / sysconf(_SC_CLK_TCK));
}

static double cpu_ns(void)
{
	struct rusage u;
	getrusage(RUSAGE_SELF, &u);
	return (u.ru_utime.tv_sec + u.ru_stime.tv_sec) * 1e9 + (u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1e3;
}

static double now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e9 + t.tv_nsec;
}

int main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: filepages ring|file|populate|compact EVENTS FILE\n");
		return 2;
	}
	const char *mode = argv[1];
	long n = atol(argv[2]);
	int fd = -1;
	int ring = !strcmp(mode, "ring");
	if (ring) {
		len = 1 << 20;
		map = calloc(1, len);
	} else {
		len = (size_t)n * REC;
		fd = open(argv[3], O_RDWR | O_CREAT | O_EXCL, 0600);
		if (fd < 0 || ftruncate(fd, (off_t)len)) {
			fprintf(stderr, "filepages: %s: %s\n", argv[3], strerror(errno));
			return 1;
		}
		map = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (map == MAP_FAILED) {
			perror("filepages: mmap");
			unlink(argv[3]);
			return 1;
		}
	}
	pthread_t helper;
	int helping = (!strcmp(mode, "populate") || !strcmp(mode, "compact")) && !pthread_create(&helper, NULL, populate, NULL);
	if (helping)
		usleep(20000); /* let it get ahead */
	double w0 = now_ns(), c0 = cpu_ns(), b0 = kthreads_ns();
	size_t pos = 0;
	if (!strcmp(mode, "compact")) {
		static struct ptt_compact c;
		cpt_reset(&c, ptt_rdtsc_early());
		uint32_t rec[PTT_REC_MIN_WORDS + 5] = { 0 };
		rec[3] = 1;
		rec[4] = 2;
		rec[5] = 0x601040; /* the mutex */
		rec[7] = 0x401234; /* the site */
		for (long i = 0; i < n; i++) {
			uint64_t ts = ptt_rdtsc_early();
			rec[0] = ptt_rec_word0(i & 1 ? PTT_EV_MUTEX_UNLOCK : PTT_EV_MUTEX_LOCK, PTT_REC_MIN_WORDS + 5);
			rec[1] = (uint32_t)ts;
			rec[2] = (uint32_t)(ts >> 32);
			rec[PTT_REC_MIN_WORDS + 4] = (uint32_t)i; /* the checksum's word: differs each time */
			if (pos + CPT_MAX_BYTES > len)
				break;
			pos = (size_t)(cpt_encode(&c, (unsigned char *)map + pos, rec, PTT_REC_MIN_WORDS + 5) -
				       (unsigned char *)map);
			if (!(i & 1023))
				written = pos;
		}
		printf("(compact: %.2f bytes/event) ", (double)pos / n);
	}
	for (long i = 0; strcmp(mode, "compact") && i < n; i++) {
		uint32_t *p = (uint32_t *)(map + pos);
		uint64_t ts = ptt_rdtsc_early();
		p[0] = 0xA7090000u | 18;
		p[1] = (uint32_t)ts;
		p[2] = (uint32_t)(ts >> 32);
		p[3] = 1;
		p[4] = 2;
		p[5] = (uint32_t)i;
		p[6] = 0;
		p[7] = 0;
		p[8] = 0;
		pos += REC;
		if (ring && pos + REC > len)
			pos = 0;
		if (!(i & 1023))
			written = pos;
		__asm__ __volatile__("" ::: "memory");
	}
	double w1 = now_ns();
	done = 1;
	if (helping)
		pthread_join(helper, NULL);
	if (!ring && fdatasync(fd))
		perror("filepages: fdatasync");
	double c1 = cpu_ns(), b1 = kthreads_ns();
	printf("%s: %.2f ns/event wall, %.2f ns/event process CPU, %.2f ns/event kernel threads (the writeback)\n",
	       mode, (w1 - w0) / n, (c1 - c0) / n, (b1 - b0) / n);
	if (!ring) {
		munmap(map, len);
		close(fd);
		unlink(argv[3]);
	}
	return 0;
}

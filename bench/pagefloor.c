/*
 * pagefloor - what a program's first store to a page of its ring costs on
 * this machine (issue 36): the rings are a shared mapping of the recorder's
 * memfd, and each thread's first lap stores into pages nobody has stored to
 * in this process.  Prints, in microseconds per 4 KiB page, the median of
 * ROUNDS rounds of PAGES pages each:
 *
 *   fresh      the first store to a page of a new shared memfd mapping (what
 *              a ring's first lap costs its writer)
 *   populated  the same after madvise(MADV_POPULATE_WRITE) made every page
 *              present: what is left once the memory is allocated and mapped
 *              ahead (the populate itself is timed apart: "populate")
 *   again      a store to a page already stored to (the ring's later laps)
 *   huge       the first store to a page of a mapping advised MADV_HUGEPAGE,
 *              as ptt asks for its rings (capture/shm.c, ptt_shm_huge), and
 *              the page faults per 2 MiB it took: 512 where the host keeps
 *              shared memory in 4 KiB pages (shmem_enabled never, Debian's
 *              default), about 1 where it allows huge ones
 *
 *   pagefloor [PAGES [ROUNDS]]     defaults 4096 and 5
 *
 * A bare-metal Linux takes well under a microsecond for "fresh" (a page
 * zeroed and mapped); a guest whose page tables the hypervisor shadows
 * takes an exit per page, which "populated" shows: the page is there, its
 * mapping is not yet in the hardware's tables.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

static double now_us(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof *v, cmp);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* the time of one store to each of n pages from p, in us per page */
static double store_each(volatile char *p, long n)
{
	double t = now_us();
	for (long i = 0; i < n; i++)
		p[i * 4096L] = 1;
	return (now_us() - t) / (double)n;
}

int main(int argc, char **argv)
{
	long pages = argc > 1 ? atol(argv[1]) : 4096;
	int rounds = argc > 2 ? atoi(argv[2]) : 5;
	if (pages <= 0 || rounds <= 0 || rounds > 100) {
		fprintf(stderr, "usage: pagefloor [PAGES [ROUNDS]]\n");
		return 2;
	}
	double fresh[100], pop[100], populate[100], again[100], huge[100], hfaults[100];
	size_t len = (size_t)pages * 4096u;
	for (int r = 0; r < rounds; r++) {
		int fd = memfd_create("pagefloor", MFD_CLOEXEC);
		if (fd < 0 || ftruncate(fd, (off_t)(2 * len)) != 0) {
			perror("pagefloor: memfd");
			return 1;
		}
		char *a = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		char *b = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)len);
		if (a == MAP_FAILED || b == MAP_FAILED) {
			perror("pagefloor: mmap");
			return 1;
		}
		fresh[r] = store_each(a, pages);
		again[r] = store_each(a, pages);
		double t = now_us();
		if (madvise(b, len, MADV_POPULATE_WRITE) != 0) {
			perror("pagefloor: madvise(MADV_POPULATE_WRITE)");
			return 1;
		}
		populate[r] = (now_us() - t) / (double)pages;
		pop[r] = store_each(b, pages);
		munmap(a, len);
		munmap(b, len);
		close(fd);
		/* the huge-page advice: a fresh memfd, its mapping on a 2 MiB bound as the kernel places
		 * one it can back with huge pages */
		fd = memfd_create("pagefloor", MFD_CLOEXEC);
		char *h = fd < 0 || ftruncate(fd, (off_t)len) != 0 ? MAP_FAILED
								  : mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (h == MAP_FAILED) {
			perror("pagefloor: memfd");
			return 1;
		}
		madvise(h, len, MADV_HUGEPAGE); /* refused or ignored: 4 KiB pages, as the rings' */
		struct rusage u0, u1;
		getrusage(RUSAGE_SELF, &u0);
		huge[r] = store_each(h, pages);
		getrusage(RUSAGE_SELF, &u1);
		hfaults[r] = (double)(u1.ru_minflt - u0.ru_minflt) * 512.0 / (double)pages;
		munmap(h, len);
		close(fd);
	}
	printf("fresh %.3f\npopulated %.3f\npopulate %.3f\nagain %.3f\nhuge %.3f %.1f\n", median(fresh, rounds),
	       median(pop, rounds), median(populate, rounds), median(again, rounds), median(huge, rounds),
	       median(hfaults, rounds));
	return 0;
}

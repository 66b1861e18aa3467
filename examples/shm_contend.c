/*
 * shm_contend - two processes contending on one process-shared mutex that
 * lives in a POSIX shared-memory object (shm_open + mmap, each process
 * mapping it itself): ptt must see one mutex, handed over between the
 * processes in both directions.  It prints its own ground truth from the
 * shared memory: each process's locks, and how many times each took the
 * lock last held by the other (a hand-off across processes).
 *
 * shm_contend [ROUNDS]   (2000 by default)
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

struct shared {
	pthread_mutex_t lock;
	int last;          /* which process held the lock last: 0 the parent, 1 the child, -1 none yet */
	long locks[2];     /* each process's acquisitions */
	long taken[2];     /* each process's acquisitions of a lock the other held last */
	volatile long work;
};

static struct shared *map_shared(const char *name)
{
	int fd = shm_open(name, O_RDWR, 0600);
	if (fd < 0) {
		perror("shm_open");
		exit(1);
	}
	struct shared *s = mmap(NULL, sizeof *s, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (s == MAP_FAILED) {
		perror("mmap");
		exit(1);
	}
	return s;
}

static void run(struct shared *s, int me, long rounds)
{
	for (long i = 0; i < rounds; i++) {
		pthread_mutex_lock(&s->lock);
		if (s->last >= 0 && s->last != me)
			s->taken[me]++;
		s->last = me;
		s->locks[me]++;
		for (int k = 0; k < 2000; k++) /* hold it a while: the other process comes to wait */
			s->work++;
		pthread_mutex_unlock(&s->lock);
		if (i % 8 == 0)
			nanosleep(&(struct timespec){ 0, 1000 }, NULL);
	}
}

int main(int argc, char **argv)
{
	long rounds = argc > 1 ? strtol(argv[1], NULL, 10) : 2000;
	char name[64];
	snprintf(name, sizeof name, "/ptt_shm_contend.%d", (int)getpid());
	int fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL, 0600);
	if (fd < 0 || ftruncate(fd, sizeof(struct shared)) != 0) {
		perror("shm_open");
		return 1;
	}
	close(fd);
	struct shared *s = map_shared(name);
	pthread_mutexattr_t a;
	pthread_mutexattr_init(&a);
	pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
	pthread_mutex_init(&s->lock, &a);
	s->last = -1;
	munmap(s, sizeof *s);
	pid_t child = fork();
	if (child < 0) {
		perror("fork");
		return 1;
	}
	s = map_shared(name); /* each process maps it itself: not an inherited mapping */
	run(s, child == 0, rounds);
	if (child == 0)
		return 0;
	int status;
	waitpid(child, &status, 0);
	shm_unlink(name);
	printf("parent %d: locks %ld, taken from the child %ld\n", (int)getpid(), s->locks[0], s->taken[0]);
	printf("child %d: locks %ld, taken from the parent %ld\n", (int)child, s->locks[1], s->taken[1]);
	printf("hand-offs across processes %ld\n", s->taken[0] + s->taken[1]);
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}

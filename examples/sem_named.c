/*
 * sem_named - two processes taking turns on one named semaphore (sem_open)
 * used as a lock: ptt must see one semaphore, handed over between the
 * processes in both directions, although libc maps it itself (not through
 * the program's mmap).  It prints its own ground truth, kept in an
 * anonymous shared mapping: each process's acquisitions, and how many
 * times each took the semaphore last held by the other.
 *
 * sem_named [inherit|each] [ROUNDS]
 *   inherit  the parent opens it, the child inherits it at fork (default)
 *   each     each process opens it itself after the fork
 * Both processes close it at the end (libc unmaps it then).
 *
 * sem_named early [ROUNDS]
 *   the parent opens it, takes it ROUNDS times and exits; its child takes
 *   it ROUNDS times once the parent is gone (a shared object outlives the
 *   process that used it first)
 *
 * sem_named deadlock
 *   two named semaphores (value 1) taken by the two processes in opposite
 *   orders: both block for ever (stop it with SIGINT).  Neither is ever
 *   posted, so only their first value (sem_open's, not in a trace) says
 *   they are locks.
 */
#include <fcntl.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

struct truth {
	pthread_barrier_t both_hold; /* deadlock: both processes hold their first semaphore */
	int last;      /* which process held it last: 0 the parent, 1 the child, -1 none yet */
	long locks[2]; /* each process's acquisitions */
	long taken[2]; /* each process's acquisitions of the semaphore the other held last */
	volatile long work;
};

static sem_t *open_sem(const char *name)
{
	sem_t *s = sem_open(name, O_CREAT, 0600, 1);
	if (s == SEM_FAILED) {
		perror("sem_open");
		exit(1);
	}
	return s;
}

static void run(sem_t *s, struct truth *t, int me, long rounds)
{
	for (long i = 0; i < rounds; i++) {
		while (sem_wait(s) != 0)
			;
		if (t->last >= 0 && t->last != me)
			t->taken[me]++;
		t->last = me;
		t->locks[me]++;
		for (int k = 0; k < 2000; k++) /* hold it a while: the other process comes to wait */
			t->work++;
		sem_post(s);
		if (i % 8 == 0)
			nanosleep(&(struct timespec){ 0, 1000 }, NULL);
	}
}

static int deadlock(struct truth *t, const char *name)
{
	char a[80], b[80];
	snprintf(a, sizeof a, "%s.a", name);
	snprintf(b, sizeof b, "%s.b", name);
	pthread_barrierattr_t ba;
	pthread_barrierattr_init(&ba);
	pthread_barrierattr_setpshared(&ba, PTHREAD_PROCESS_SHARED);
	pthread_barrier_init(&t->both_hold, &ba, 2);
	pid_t child = fork();
	if (child < 0) {
		perror("fork");
		return 1;
	}
	sem_t *mine = open_sem(child ? a : b), *theirs = open_sem(child ? b : a);
	while (sem_wait(mine) != 0)
		;
	pthread_barrier_wait(&t->both_hold);
	if (child) {
		sem_unlink(a); /* open in both processes by now: no name is left behind */
		sem_unlink(b);
		fprintf(stderr, "deadlocking now: parent %d takes %s, child %d takes %s\n", (int)getpid(), b, (int)child, a);
	}
	while (sem_wait(theirs) != 0) /* never returns */
		;
	return 0;
}

static int early(const char *name, long rounds)
{
	sem_t *s = open_sem(name);
	pid_t parent = getpid(), child = fork();
	if (child < 0) {
		perror("fork");
		return 1;
	}
	if (child == 0)
		while (getppid() == parent) /* the parent gone: the child is the semaphore's only user */
			nanosleep(&(struct timespec){ 0, 1000000 }, NULL);
	for (long i = 0; i < rounds; i++) {
		while (sem_wait(s) != 0)
			;
		sem_post(s);
	}
	if (child == 0) {
		sem_unlink(name);
		printf("child %d: %ld locks after its parent %d exited\n", (int)getpid(), rounds, (int)parent);
	}
	return 0;
}

int main(int argc, char **argv)
{
	int each = argc > 1 && strcmp(argv[1], "each") == 0;
	long rounds = argc > 2 ? strtol(argv[2], NULL, 10) : 2000;
	char name[64];
	snprintf(name, sizeof name, "/ptt_sem_named.%d", (int)getpid());
	struct truth *t = mmap(NULL, sizeof *t, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (t == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	t->last = -1;
	if (argc > 1 && strcmp(argv[1], "deadlock") == 0)
		return deadlock(t, name);
	if (argc > 1 && strcmp(argv[1], "early") == 0)
		return early(name, argc > 2 ? strtol(argv[2], NULL, 10) : 2000);
	sem_t *s = each ? NULL : open_sem(name);
	pid_t child = fork();
	if (child < 0) {
		perror("fork");
		return 1;
	}
	if (each)
		s = open_sem(name);
	run(s, t, child == 0, rounds);
	sem_close(s);
	if (child == 0)
		return 0;
	int status;
	waitpid(child, &status, 0);
	sem_unlink(name);
	printf("parent %d: locks %ld, taken from the child %ld\n", (int)getpid(), t->locks[0], t->taken[0]);
	printf("child %d: locks %ld, taken from the parent %ld\n", (int)child, t->locks[1], t->taken[1]);
	printf("hand-offs across processes %ld\n", t->taken[0] + t->taken[1]);
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}

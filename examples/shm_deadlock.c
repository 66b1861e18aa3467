/*
 * shm_deadlock - a deadlock across two processes: two process-shared
 * mutexes in an anonymous shared mapping (MAP_SHARED | MAP_ANONYMOUS) made
 * before fork, inherited by the child.  The parent takes A, the child B;
 * both meet at a process-shared barrier in the same mapping; then the
 * parent asks for B and the child for A.  Neither returns: it hangs until
 * it is killed (under ptt-record, SIGINT).  It says "deadlocking now" on
 * stderr first, with both pids.
 */
#include <pthread.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

struct shared {
	pthread_mutex_t a, b;
	pthread_barrier_t both_hold;
};

int main(void)
{
	struct shared *s = mmap(NULL, sizeof *s, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (s == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	pthread_mutexattr_t ma;
	pthread_mutexattr_init(&ma);
	pthread_mutexattr_setpshared(&ma, PTHREAD_PROCESS_SHARED);
	pthread_mutex_init(&s->a, &ma);
	pthread_mutex_init(&s->b, &ma);
	pthread_barrierattr_t ba;
	pthread_barrierattr_init(&ba);
	pthread_barrierattr_setpshared(&ba, PTHREAD_PROCESS_SHARED);
	pthread_barrier_init(&s->both_hold, &ba, 2);
	pid_t child = fork();
	if (child < 0) {
		perror("fork");
		return 1;
	}
	pthread_mutex_t *mine = child ? &s->a : &s->b, *theirs = child ? &s->b : &s->a;
	pthread_mutex_lock(mine);
	pthread_barrier_wait(&s->both_hold);
	if (child)
		fprintf(stderr, "deadlocking now: parent %d takes B, child %d takes A\n", (int)getpid(), (int)child);
	pthread_mutex_lock(theirs); /* never returns */
	pthread_mutex_unlock(theirs);
	pthread_mutex_unlock(mine);
	if (child)
		waitpid(child, NULL, 0);
	return 0;
}

/*
 * exec_waits - one wait for a mutex in wait_first(), then an exec of itself
 * (same pid) that waits once more in wait_second(): after the exec the
 * process numbers its stacks from 1 again, and each wait must still be
 * named at its own site.  Prints "waits 2" in the second program.
 *
 * Usage: exec_waits
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_barrier_t held;

static void *holder(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&lock);
	pthread_barrier_wait(&held);
	usleep(20000); /* the main thread is blocked on lock by now */
	pthread_mutex_unlock(&lock);
	return NULL;
}

/* Wait once for lock (held by another thread) through fn. */
static void contend(void (*fn)(void))
{
	pthread_t t;
	pthread_barrier_init(&held, NULL, 2);
	pthread_create(&t, NULL, holder, NULL);
	pthread_barrier_wait(&held);
	fn();
	pthread_join(t, NULL);
}

static __attribute__((noinline)) void wait_first(void)
{
	pthread_mutex_lock(&lock);
	pthread_mutex_unlock(&lock);
}

static __attribute__((noinline)) void wait_second(void)
{
	pthread_mutex_lock(&lock);
	pthread_mutex_unlock(&lock);
}

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "second") == 0) {
		contend(wait_second);
		printf("waits 2\n");
		return 0;
	}
	contend(wait_first);
	fflush(stdout);
	char *args[] = { argv[0], "second", NULL };
	execv("/proc/self/exe", args);
	perror("exec_waits: execv");
	return 1;
}

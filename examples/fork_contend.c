/*
 * fork_contend - two processes (a parent and the child it forks) whose
 * threads contend on a lock at the same address (a static mutex, copied by
 * fork), as a pre-forking server's children do: a trace holds two objects
 * at one address, and every output must tell them apart by process.
 *
 * Prints its ground truth: each process's pid and the acquisitions it made.
 *
 * Usage: fork_contend [ROUNDS]   (default 2000 per thread, 2 threads a process)
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static pthread_mutex_t shared_lock = PTHREAD_MUTEX_INITIALIZER;
static volatile unsigned long counter;
static int rounds = 2000;

static void *worker(void *arg)
{
	(void)arg;
	for (int i = 0; i < rounds; i++) {
		pthread_mutex_lock(&shared_lock);
		for (int k = 0; k < 5000; k++)
			counter++;
		pthread_mutex_unlock(&shared_lock);
	}
	return NULL;
}

static void run(const char *who)
{
	pthread_t th[2];
	for (int i = 0; i < 2; i++)
		pthread_create(&th[i], NULL, worker, NULL);
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	printf("%s %d: %d acquisitions of shared_lock\n", who, (int)getpid(), 2 * rounds);
	fflush(stdout);
}

int main(int argc, char **argv)
{
	if (argc > 1 && (rounds = atoi(argv[1])) < 1) {
		fprintf(stderr, "usage: fork_contend [ROUNDS]\n");
		return 2;
	}
	fflush(stdout);
	pid_t child = fork();
	if (child < 0) {
		perror("fork_contend: fork");
		return 1;
	}
	run(child == 0 ? "child" : "parent");
	if (child == 0)
		return 0;
	int status;
	waitpid(child, &status, 0);
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}

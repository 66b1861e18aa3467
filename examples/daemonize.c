/*
 * daemonize - a program that turns into a daemon the classic way (fork,
 * setsid, fork, the parents exit) and keeps locking in the daemon for a
 * moment: ptt-record must go on recording after the process it started
 * has exited.
 *
 *   daemonize [MS]    the daemon's two threads lock for MS milliseconds (300)
 *
 * The daemon closes its standard streams, as daemons do, so that a shell or
 * a test reading the program's output does not wait for it.
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static pthread_mutex_t daemon_lock = PTHREAD_MUTEX_INITIALIZER;
static long counter;
static double until;

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void *locker(void *arg)
{
	(void)arg;
	while (now_s() < until) {
		pthread_mutex_lock(&daemon_lock);
		counter++;
		pthread_mutex_unlock(&daemon_lock);
		usleep(1000);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	long ms = argc > 1 ? atol(argv[1]) : 300;
	pid_t p = fork();
	if (p < 0)
		return 1;
	if (p > 0)
		return 0; /* the parent: what the shell (and ptt-record) started, gone at once */
	setsid();
	p = fork();
	if (p < 0)
		_exit(1);
	if (p > 0)
		_exit(0);
	int null = open("/dev/null", O_RDWR);
	if (null >= 0) {
		dup2(null, 0);
		dup2(null, 1);
		dup2(null, 2);
		if (null > 2)
			close(null);
	}
	until = now_s() + (double)ms / 1000;
	pthread_t th[2];
	for (int i = 0; i < 2; i++)
		pthread_create(&th[i], NULL, locker, NULL);
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	return counter > 0 ? 0 : 1;
}

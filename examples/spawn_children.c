/*
 * spawn_children - a parent that starts a child in each of the four ways:
 * fork, vfork, posix_spawn and posix_spawnp, each child running this
 * program again (exec) to lock a mutex LOCKS times.  The parent waits for
 * each and prints the way and the child's pid, its own ground truth for
 * the trace's process_fork events; a child prints nothing.  Last, a
 * posix_spawn of a file that does not exist, which starts no child: the
 * parent prints the error it returned.
 *
 *   spawn_children [LOCKS]     (default 3)
 *   spawn_children -child LOCKS   (what each child runs)
 */
#include <pthread.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;

static int child(long n)
{
	for (long i = 0; i < n; i++) {
		pthread_mutex_lock(&m);
		pthread_mutex_unlock(&m);
	}
	return 0;
}

static int reap(const char *how, pid_t pid)
{
	int st;
	if (pid <= 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		fprintf(stderr, "spawn_children: %s: the child failed\n", how);
		return 1;
	}
	printf("%s %d\n", how, (int)pid);
	fflush(stdout);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && strcmp(argv[1], "-child") == 0)
		return child(atol(argv[2]));
	const char *locks = argc > 1 ? argv[1] : "3";
	char self[4096];
	ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
	if (len <= 0)
		return 1;
	self[len] = 0;
	char *args[] = { self, "-child", (char *)locks, NULL };
	int bad = 0;
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		execv(self, args);
		_exit(127);
	}
	bad |= reap("fork", pid);
	pid = vfork();
	if (pid == 0) {
		execv(self, args);
		_exit(127);
	}
	bad |= reap("vfork", pid);
	pid = 0;
	bad |= posix_spawn(&pid, self, NULL, NULL, args, environ) != 0 || reap("posix_spawn", pid);
	pid = 0;
	bad |= posix_spawnp(&pid, self, NULL, NULL, args, environ) != 0 || reap("posix_spawnp", pid);
	int err = posix_spawn(&pid, "/nonexistent/spawn_children", NULL, NULL, args, environ);
	printf("posix_spawn /nonexistent: %s\n", strerror(err));
	return bad;
}

/*
 * many_modules - loads N copies of a shared object (each a file of its own,
 * so the loader keeps N objects), creating a thread after every BATCH
 * loads: the tracer looks for new objects at each thread creation.
 * Prints its ground truth.
 *
 *   many_modules SO DIR N [BATCH]   (copies SO to DIR/m00000.so ..., default batch 256)
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static void *nothing(void *arg)
{
	return arg;
}

static int copy(const char *from, const char *to)
{
	static char buf[1 << 16];
	int in = open(from, O_RDONLY), out = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0755);
	ssize_t n = 0;
	while (in >= 0 && out >= 0 && (n = read(in, buf, sizeof buf)) > 0)
		if (write(out, buf, (size_t)n) != n)
			n = -1;
	int ok = in >= 0 && out >= 0 && n == 0;
	if (in >= 0)
		close(in);
	if (out >= 0)
		close(out);
	return ok ? 0 : -1;
}

int main(int argc, char **argv)
{
	long n = argc > 3 ? atol(argv[3]) : 0, batch = argc > 4 ? atol(argv[4]) : 256, loaded = 0, threads = 0;
	if (n < 1 || batch < 1) {
		fprintf(stderr, "usage: many_modules SO DIR N [BATCH]\n");
		return 2;
	}
	for (long i = 0; i < n; i++) {
		char path[4096];
		snprintf(path, sizeof path, "%s/m%05ld.so", argv[2], i);
		if (copy(argv[1], path) != 0) {
			perror(path);
			return 1;
		}
		if (!dlopen(path, RTLD_NOW | RTLD_LOCAL)) {
			fprintf(stderr, "many_modules: %s\n", dlerror());
			return 1;
		}
		loaded++;
		if (loaded % batch == 0 || i == n - 1) {
			pthread_t t;
			if (pthread_create(&t, NULL, nothing, NULL) != 0 || pthread_join(t, NULL) != 0)
				return 1;
			threads++;
		}
	}
	printf("modules %ld loaded, %ld threads\n", loaded, threads);
	return 0;
}

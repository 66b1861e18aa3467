/*
 * mcload - a small load for memcached on loopback (bench/servers.sh): CLIENTS
 * threads, each with its own connection, send "set" then "get" of a key of
 * their own (KEYS keys each, VALUE bytes) for SECONDS, one request at a time,
 * and the requests done per second are printed.
 *
 *   mcload PORT [CLIENTS [SECONDS [KEYS [VALUE]]]]     (defaults 8 5 1000 100)
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static int port, seconds = 5, keys = 1000, value = 100;
static volatile int stop;

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Read until the reply ends with end (a whole reply: the protocol's own end marks). */
static int reply(int fd, const char *end)
{
	char buf[4096];
	size_t n = 0, el = strlen(end);
	for (;;) {
		ssize_t r = read(fd, buf + n, sizeof buf - n);
		if (r <= 0)
			return -1;
		n += (size_t)r;
		if (n >= el && !memcmp(buf + n - el, end, el))
			return 0;
		if (n == sizeof buf)
			return -1;
	}
}

static void *client(void *arg)
{
	long id = (long)arg, done = 0;
	int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1;
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof a)) {
		perror("mcload: connect");
		exit(1);
	}
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	char *val = malloc((size_t)value + 1), req[512];
	memset(val, 'x', (size_t)value);
	val[value] = 0;
	for (long i = 0; !stop; i++) {
		int k = (int)(i % keys);
		int len = snprintf(req, sizeof req, "set k%ld.%d 0 0 %d\r\n%s\r\n", id, k, value, val);
		if (write(fd, req, (size_t)len) != len || reply(fd, "STORED\r\n"))
			break;
		len = snprintf(req, sizeof req, "get k%ld.%d\r\n", id, k);
		if (write(fd, req, (size_t)len) != len || reply(fd, "END\r\n"))
			break;
		done += 2;
	}
	close(fd);
	free(val);
	return (void *)done;
}

int main(int argc, char **argv)
{
	if (argc < 2 || argc > 6) {
		fprintf(stderr, "usage: mcload PORT [CLIENTS [SECONDS [KEYS [VALUE]]]]\n");
		return 2;
	}
	port = atoi(argv[1]);
	int clients = argc > 2 ? atoi(argv[2]) : 8;
	seconds = argc > 3 ? atoi(argv[3]) : 5;
	keys = argc > 4 ? atoi(argv[4]) : 1000;
	value = argc > 5 ? atoi(argv[5]) : 100;
	if (port <= 0 || clients <= 0 || clients > 1024 || seconds <= 0 || keys <= 0 || value <= 0 || value > 400) {
		fprintf(stderr, "mcload: bad argument\n");
		return 2;
	}
	pthread_t *t = calloc((size_t)clients, sizeof *t);
	double t0 = now();
	for (long i = 0; i < clients; i++)
		pthread_create(&t[i], NULL, client, (void *)i);
	sleep((unsigned)seconds);
	stop = 1;
	long total = 0;
	for (int i = 0; i < clients; i++) {
		void *r;
		pthread_join(t[i], &r);
		total += (long)r;
	}
	printf("mcload: %ld requests in %.2f s: %.0f requests/s (%d clients)\n", total, now() - t0, total / (now() - t0),
	       clients);
	free(t);
	return 0;
}

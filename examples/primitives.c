/*
 * primitives - one scenario per pthread primitive, with the counts the
 * program made itself printed on stderr, so a trace can be checked exactly:
 *
 *   primitives rwlock|barrier|sem|spin|trylock|timed|cancel|fork|detach
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define THREADS 3
#define ROUNDS 200

static pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;
static pthread_barrier_t barrier;
static sem_t sem;
static pthread_spinlock_t spin;
static pthread_mutex_t mutex = PTHREAD_MUTEX_INITIALIZER;
static long count_a, count_b, serial;

static void *rwlock_worker(void *arg)
{
	long id = (long)arg;
	for (int i = 0; i < ROUNDS; i++) {
		if (id == 0) {
			pthread_rwlock_wrlock(&rw);
			count_a++;
		} else {
			pthread_rwlock_rdlock(&rw);
		}
		pthread_rwlock_unlock(&rw);
	}
	return NULL;
}

static void *barrier_worker(void *arg)
{
	(void)arg;
	for (int i = 0; i < ROUNDS; i++)
		if (pthread_barrier_wait(&barrier) == PTHREAD_BARRIER_SERIAL_THREAD)
			__atomic_fetch_add(&serial, 1, __ATOMIC_RELAXED);
	return NULL;
}

static void *sem_worker(void *arg)
{
	long id = (long)arg;
	for (int i = 0; i < ROUNDS; i++) {
		if (id == 0)
			sem_post(&sem);
		else
			sem_wait(&sem);
	}
	return NULL;
}

static void *spin_worker(void *arg)
{
	(void)arg;
	for (int i = 0; i < ROUNDS; i++) {
		pthread_spin_lock(&spin);
		count_a++;
		pthread_spin_unlock(&spin);
	}
	return NULL;
}

static void *sleeper(void *arg)
{
	(void)arg;
	prctl(PR_SET_NAME, "sleeper");
	pthread_mutex_lock(&mutex);
	pthread_mutex_unlock(&mutex);
	for (;;)
		pause(); /* a cancellation point */
	return NULL;
}

static void run(void *(*fn)(void *), int n)
{
	pthread_t th[THREADS];
	for (long i = 0; i < n; i++)
		pthread_create(&th[i], NULL, fn, (void *)i);
	for (int i = 0; i < n; i++)
		pthread_join(th[i], NULL);
}

int main(int argc, char **argv)
{
	const char *what = argc > 1 ? argv[1] : "";
	if (!strcmp(what, "rwlock")) {
		run(rwlock_worker, THREADS);
		fprintf(stderr, "wrlock %d\nrdlock %d\nunlock %d\n", ROUNDS, ROUNDS * (THREADS - 1), ROUNDS * THREADS);
	} else if (!strcmp(what, "barrier")) {
		pthread_barrier_init(&barrier, NULL, THREADS);
		run(barrier_worker, THREADS);
		pthread_barrier_destroy(&barrier);
		fprintf(stderr, "barrier_wait %d\nserial %ld\n", ROUNDS * THREADS, serial);
	} else if (!strcmp(what, "sem")) {
		sem_init(&sem, 0, 0);
		run(sem_worker, 2);
		sem_destroy(&sem);
		sem_t *named = sem_open("/ptt-primitives", O_CREAT, 0600, 1);
		if (named != SEM_FAILED) {
			sem_wait(named);
			sem_post(named);
			sem_close(named);
			sem_unlink("/ptt-primitives");
		}
		fprintf(stderr, "sem_post %d\nsem_wait %d\n", ROUNDS + 1, ROUNDS + 1);
	} else if (!strcmp(what, "spin")) {
		pthread_spin_init(&spin, 0);
		run(spin_worker, THREADS);
		fprintf(stderr, "spin_lock %d\n", ROUNDS * THREADS);
	} else if (!strcmp(what, "trylock")) {
		int busy = 0, got = 0;
		pthread_mutex_lock(&mutex);
		for (int i = 0; i < 10; i++)
			busy += pthread_mutex_trylock(&mutex) == EBUSY; /* a normal mutex: EBUSY when held */
		pthread_mutex_unlock(&mutex);
		got = pthread_mutex_trylock(&mutex) == 0;
		pthread_mutex_unlock(&mutex);
		fprintf(stderr, "trylock_busy %d\ntrylock_ok %d\n", busy, got);
	} else if (!strcmp(what, "timed")) {
		struct timespec t;
		clock_gettime(CLOCK_REALTIME, &t);
		t.tv_nsec += 2000000;
		if (t.tv_nsec >= 1000000000) {
			t.tv_sec++;
			t.tv_nsec -= 1000000000;
		}
		pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
		pthread_mutex_lock(&mutex);
		int r = pthread_cond_timedwait(&cond, &mutex, &t);
		pthread_mutex_unlock(&mutex);
		fprintf(stderr, "timedwait %s\n", r == ETIMEDOUT ? "ETIMEDOUT" : "other");
	} else if (!strcmp(what, "cancel")) {
		pthread_t th;
		pthread_create(&th, NULL, sleeper, NULL);
		usleep(20000);
		pthread_cancel(th);
		void *ret;
		pthread_join(th, &ret);
		fprintf(stderr, "cancelled %d\n", ret == PTHREAD_CANCELED);
	} else if (!strcmp(what, "fork")) {
		pthread_mutex_lock(&mutex);
		pthread_mutex_unlock(&mutex);
		pid_t child = fork();
		for (int i = 0; i < 100; i++) {
			pthread_mutex_lock(&mutex);
			count_b++;
			pthread_mutex_unlock(&mutex);
		}
		if (child == 0)
			_exit(0);
		int st;
		waitpid(child, &st, 0);
		fprintf(stderr, "locks_per_process %d\n", 100);
	} else {
		fprintf(stderr, "usage: primitives rwlock|barrier|sem|spin|trylock|timed|cancel|fork\n");
		return 2;
	}
	return 0;
}

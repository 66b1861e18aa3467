/*
 * prodcons - producers and consumers around a bounded queue (a mutex, two
 * condition variables and a start barrier).  It counts its own lock
 * operations and prints them with -v, so a trace can be checked against it.
 *
 *   prodcons [-p PRODUCERS] [-c CONSUMERS] [-n ITEMS_PER_PRODUCER] [-v]
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ptt.h"

#define QUEUE_SIZE 16

static struct {
	pthread_mutex_t lock;
	pthread_cond_t not_empty, not_full;
	long items[QUEUE_SIZE];
	int head, count, producers_left;
} queue = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, PTHREAD_COND_INITIALIZER, { 0 }, 0, 0, 0 };

static pthread_barrier_t start;
static long items_per_producer = 1000;
static long lock_count, wait_count; /* updated under queue.lock */
static long consumed_sum;
static int item_event = -1;

static void *producer(void *arg)
{
	long id = (long)arg;
	char name[16];
	snprintf(name, sizeof name, "producer-%ld", id);
	pthread_setname_np(pthread_self(), name);
	pthread_barrier_wait(&start);
	for (long i = 0; i < items_per_producer; i++) {
		pthread_mutex_lock(&queue.lock);
		lock_count++;
		while (queue.count == QUEUE_SIZE) {
			wait_count++;
			pthread_cond_wait(&queue.not_full, &queue.lock);
		}
		queue.items[(queue.head + queue.count++) % QUEUE_SIZE] = i;
		pthread_cond_signal(&queue.not_empty);
		pthread_mutex_unlock(&queue.lock);
	}
	pthread_mutex_lock(&queue.lock);
	lock_count++;
	queue.producers_left--;
	pthread_cond_broadcast(&queue.not_empty);
	pthread_mutex_unlock(&queue.lock);
	return NULL;
}

static void *consumer(void *arg)
{
	long id = (long)arg, got = 0;
	char name[16];
	snprintf(name, sizeof name, "consumer-%ld", id);
	pthread_setname_np(pthread_self(), name);
	pthread_barrier_wait(&start);
	for (;;) {
		pthread_mutex_lock(&queue.lock);
		lock_count++;
		while (queue.count == 0 && queue.producers_left > 0) {
			wait_count++;
			pthread_cond_wait(&queue.not_empty, &queue.lock);
		}
		if (queue.count == 0) {
			pthread_mutex_unlock(&queue.lock);
			break;
		}
		long item = queue.items[queue.head];
		queue.head = (queue.head + 1) % QUEUE_SIZE;
		queue.count--;
		consumed_sum += item;
		pthread_cond_signal(&queue.not_full);
		pthread_mutex_unlock(&queue.lock);
		if (++got % 256 == 0)
			PTT_TRACE(item_event, (uint64_t)id, (uint64_t)got);
	}
	return (void *)got;
}

int main(int argc, char **argv)
{
	int producers = 2, consumers = 2, verbose = 0, c;
	while ((c = getopt(argc, argv, "p:c:n:v")) != -1) {
		switch (c) {
		case 'p': producers = atoi(optarg); break;
		case 'c': consumers = atoi(optarg); break;
		case 'n': items_per_producer = atol(optarg); break;
		case 'v': verbose = 1; break;
		default:
			fprintf(stderr, "usage: prodcons [-p PRODUCERS] [-c CONSUMERS] [-n ITEMS] [-v]\n");
			return 2;
		}
	}
	if (producers < 1 || consumers < 1 || producers + consumers > 64 || items_per_producer < 0) {
		fprintf(stderr, "prodcons: 1..64 threads in all, ITEMS >= 0\n");
		return 2;
	}
	ptt_name_object(&queue.lock, "queue_lock");
	ptt_name_object(&queue.not_empty, "not_empty");
	ptt_name_object(&queue.not_full, "not_full");
	item_event = ptt_register_event("consumer_progress", 1, "consumer:u32,items:u64");
	queue.producers_left = producers;
	pthread_barrier_init(&start, NULL, (unsigned)(producers + consumers));
	pthread_t th[64];
	int n = 0;
	for (long i = 0; i < producers; i++)
		pthread_create(&th[n++], NULL, producer, (void *)i);
	for (long i = 0; i < consumers; i++)
		pthread_create(&th[n++], NULL, consumer, (void *)i);
	long total = 0;
	for (int i = 0; i < n; i++) {
		void *got;
		pthread_join(th[i], &got);
		if (i >= producers)
			total += (long)got;
	}
	pthread_barrier_destroy(&start);
	printf("consumed %ld items, sum %ld\n", total, consumed_sum);
	if (verbose)
		fprintf(stderr, "locks %ld\nwaits %ld\nthreads %d\n", lock_count, wait_count, n);
	return 0;
}

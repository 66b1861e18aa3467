/*
 * addr_reuse - one address, two mutexes: the first is locked inside g and
 * destroyed, the second is initialised in the same storage and locked
 * around g.  No lock order is inverted (they are different objects), so
 * ptt-deadlock must report nothing; without the destroy and init in the
 * trace the two would look like one mutex taken in both orders.
 */
#include <pthread.h>
#include <stdio.h>

static pthread_mutex_t g = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t slot; /* the storage both objects live in */

static void *g_then_slot(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&g);
	pthread_mutex_lock(&slot);
	pthread_mutex_unlock(&slot);
	pthread_mutex_unlock(&g);
	return NULL;
}

static void *slot_then_g(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&slot);
	pthread_mutex_lock(&g);
	pthread_mutex_unlock(&g);
	pthread_mutex_unlock(&slot);
	return NULL;
}

static void run(void *(*fn)(void *))
{
	pthread_t t;
	pthread_create(&t, NULL, fn, NULL);
	pthread_join(t, NULL);
}

int main(void)
{
	pthread_mutex_init(&slot, NULL);
	run(g_then_slot);
	pthread_mutex_destroy(&slot);
	pthread_mutex_init(&slot, NULL); /* a new mutex at the old one's address */
	run(slot_then_g);
	pthread_mutex_destroy(&slot);
	puts("done");
	return 0;
}

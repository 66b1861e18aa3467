/*
 * self_cancel - a thread that cancels itself with asynchronous cancellation
 * enabled: pthread_cancel never returns to its caller, so a tracer that
 * writes the cancel after the call loses it (and the thread's end).
 */
#include <pthread.h>
#include <stdio.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;

static void *cancel_self(void *arg)
{
	pthread_mutex_lock(&m);
	pthread_mutex_unlock(&m);
	pthread_setcanceltype(PTHREAD_CANCEL_ASYNCHRONOUS, NULL);
	pthread_cancel(pthread_self());
	for (;;)
		; /* cancelled here, if not already inside pthread_cancel */
	return arg;
}

int main(void)
{
	pthread_t t;
	void *ret = NULL;
	pthread_create(&t, NULL, cancel_self, NULL);
	pthread_join(t, &ret);
	puts(ret == PTHREAD_CANCELED ? "cancelled" : "returned");
	return ret != PTHREAD_CANCELED;
}

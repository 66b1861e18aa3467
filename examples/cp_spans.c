/*
 * cp_spans - critical-path ground truth for spans (ptt_span_begin/ptt_span_end,
 * ptt-critical --spans): requests begun by one thread and ended by another,
 * and a span that stays on one thread.
 *
 *   cp_spans [-r ROUNDS] [DB_MS [WORK_MS [LOG_MS [REQUESTS]]]]     (defaults 2 3 1 20)
 *
 * main, for each of REQUESTS requests (times ROUNDS): begins span "request"
 * with the request's number as its key, queues the request (req_lock,
 * req_cond) and waits for its reply (done_lock, done_cond); then begins span
 * "flush" (same key), works LOG_MS holding log_lock, and ends it.  The
 * worker (spans-worker) takes each request, works DB_MS holding db_lock, then
 * WORK_MS holding no lock, ends span "request" and replies.  One thread runs
 * at a time (main waits for each reply).
 *
 * Expected, per span (hand-computed; N = ROUNDS * REQUESTS, d w l = the arguments):
 *   request: N spans, each d + w long (begun on main, ended on the worker);
 *            on its critical path db_lock d (held by the worker), running w
 *            outside any lock, and the hand-off from main to the worker
 *            (microseconds)
 *   flush:   N spans, each l long, on main alone: log_lock l
 */
#include <pthread.h>

#include "cp_work.h"
#include "ptt.h"

pthread_mutex_t req_lock = PTHREAD_MUTEX_INITIALIZER, done_lock = PTHREAD_MUTEX_INITIALIZER;
pthread_cond_t req_cond = PTHREAD_COND_INITIALIZER, done_cond = PTHREAD_COND_INITIALIZER;
pthread_mutex_t db_lock = PTHREAD_MUTEX_INITIALIZER, log_lock = PTHREAD_MUTEX_INITIALIZER;
static long queued = -1, answered = -1; /* the last request queued, answered (under req_lock, done_lock) */
static long requests;
static double db_ms, work_ms;
static int span_request;

static void *worker(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "spans-worker");
	for (long i = 0; i < requests; i++) {
		pthread_mutex_lock(&req_lock);
		while (queued < i)
			pthread_cond_wait(&req_cond, &req_lock);
		pthread_mutex_unlock(&req_lock);
		pthread_mutex_lock(&db_lock);
		CP_WORK(db_ms);
		pthread_mutex_unlock(&db_lock);
		CP_WORK(work_ms);
		ptt_span_end(span_request, (uint64_t)i);
		pthread_mutex_lock(&done_lock);
		answered = i;
		pthread_cond_signal(&done_cond);
		pthread_mutex_unlock(&done_lock);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	double t0 = cp_now_ms();
	long rounds = cp_rounds(&argc, &argv, 1);
	db_ms = cp_arg(argc, argv, 1, 2);
	work_ms = cp_arg(argc, argv, 2, 3);
	double log_ms = cp_arg(argc, argv, 3, 1);
	requests = rounds * (long)cp_arg(argc, argv, 4, 20);
	if (argc > 5) {
		fprintf(stderr, "usage: cp_spans [-r ROUNDS] [DB_MS [WORK_MS [LOG_MS [REQUESTS]]]]\n");
		return 2;
	}
	span_request = ptt_span_kind("request");
	int span_flush = ptt_span_kind("flush");
	pthread_t t;
	cp_thread(&t, worker, NULL);
	for (long i = 0; i < requests; i++) {
		ptt_span_begin(span_request, (uint64_t)i);
		pthread_mutex_lock(&req_lock);
		queued = i;
		pthread_cond_signal(&req_cond);
		pthread_mutex_unlock(&req_lock);
		pthread_mutex_lock(&done_lock);
		while (answered < i)
			pthread_cond_wait(&done_cond, &done_lock);
		pthread_mutex_unlock(&done_lock);
		ptt_span_begin(span_flush, (uint64_t)i);
		pthread_mutex_lock(&log_lock);
		CP_WORK(log_ms);
		pthread_mutex_unlock(&log_lock);
		ptt_span_end(span_flush, (uint64_t)i);
	}
	pthread_join(t, NULL);
	double n = (double)requests;
	cp_truth("cp_spans", "wall", NULL, cp_now_ms() - t0);
	cp_truth("cp_spans", "spans", "request", n);
	cp_truth("cp_spans", "span-length", "request", db_ms + work_ms);
	cp_truth("cp_spans", "span-on-path", "request:db_lock", db_ms);
	cp_truth("cp_spans", "span-on-path", "request:running", work_ms);
	cp_truth("cp_spans", "spans", "flush", n);
	cp_truth("cp_spans", "span-length", "flush", log_ms);
	cp_truth("cp_spans", "span-on-path", "flush:log_lock", log_ms);
	return 0;
}

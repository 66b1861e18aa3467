/*
 * cp_chain - critical-path ground truth: a three-thread lock chain in which the
 * owner a waiter finds at the start of its wait is not the thread it really
 * waits for.
 *
 *   cp_chain [-r ROUNDS] [A_MS [B_MS [C_MS [T_MS]]]]     (defaults 20 30 10 10)
 *
 * Each round: thread chain-A takes the global mutex chain_lock and works A_MS
 * holding it.  While it does, chain-B asks for chain_lock and sleeps in it;
 * then chain-C asks and sleeps too (the program waits until each really sleeps
 * on the lock's futex before going on).  A's unlock wakes B (the futex wakes
 * its first sleeper, and nobody else runs to barge), B works B_MS holding the
 * lock, B's unlock wakes C, C works C_MS holding it, releases it, and works
 * T_MS more outside any lock (the tail is the last acquirer's, whoever it is: the
 * futex's wake order is the kernel's, first come first woken in practice, and
 * "PROG: order X Y Z" in the ground truth names the last round's acquirers).
 * main joins the three, and the next round starts.
 * At most 2 threads are runnable at once (main polling, and the one holder):
 * the machine has 2 CPUs.  A_MS must exceed ~1 ms, for B and C to ask while A
 * holds the lock (main polls each 50 us; more under load).
 *
 * Expected critical path (hand-computed; R = ROUNDS, a b c t = the arguments):
 *   path     = R * (a + b + c + t)
 *              main -> create A -> A's hold a -> A's unlock ends B's wait ->
 *              B's hold b -> B's unlock ends C's wait -> C's hold c -> C's work t
 *              -> C's exit ends main's join
 *   on path: chain_lock  R * (a + b + c)   (held by chain-A a, chain-B b, chain-C c)
 *            running     R * t             (chain-C, outside the lock)
 *   C waits a + b per round, begun while chain-A held the lock: its real blocker
 *   is chain-B (the release just before C's acquisition), not chain-A.
 *   B waits ~a per round, ended by chain-A.
 *   what-if chain_lock:-50% = R * ((a + b + c) / 2 + t)
 *   (the real change: cp_chain a/2 b/2 c/2 t)
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <sys/syscall.h>

#include "blocked.h"
#include "cp_work.h"

pthread_mutex_t chain_lock = PTHREAD_MUTEX_INITIALIZER;

struct link {
	const char *name;
	double hold;		/* ms held in chain_lock */
	atomic_int tid;		/* published before asking for the lock */
	atomic_int holding;	/* set once the lock is taken */
};
static double tail_ms;
static int acquired;		/* acquisitions this round: under chain_lock */
static const char *order[3];	/* the round's acquirers, in order: under chain_lock */

static void *link_run(void *arg)
{
	struct link *l = arg;
	pthread_setname_np(pthread_self(), l->name);
	atomic_store(&l->tid, (int)syscall(SYS_gettid));
	pthread_mutex_lock(&chain_lock);
	int last = acquired == 2;
	order[acquired++] = l->name;
	atomic_store(&l->holding, 1);
	CP_WORK(l->hold);
	pthread_mutex_unlock(&chain_lock);
	if (last) {
		CP_WORK(tail_ms);
		CP_PROGRESS;
	}
	return NULL;
}

static const struct timespec tick = { 0, 50000 };

static void until_set(atomic_int *v)
{
	while (!atomic_load(v))
		nanosleep(&tick, NULL);
}

/* Wait until link l sleeps on chain_lock's futex, polled finely (blocked.h's
 * wait_blocked_on polls each ms): 10 s at most, 20 ms when that cannot be known. */
static void until_asleep(struct link *l)
{
	until_set(&l->tid);
	for (int i = 0; i < 200000; i++) {
		int b = blocked_on(atomic_load(&l->tid), &chain_lock, sizeof chain_lock);
		if (b > 0 || (b < 0 && i >= 400))
			return;
		nanosleep(&tick, NULL);
	}
}

int main(int argc, char **argv)
{
	double t0 = cp_now_ms();
	long rounds = cp_rounds(&argc, &argv, 1);
	double a = cp_arg(argc, argv, 1, 20), b = cp_arg(argc, argv, 2, 30);
	double c = cp_arg(argc, argv, 3, 10), t = tail_ms = cp_arg(argc, argv, 4, 10);
	if (argc > 5) {
		fprintf(stderr, "usage: cp_chain [-r ROUNDS] [A_MS [B_MS [C_MS [T_MS]]]]\n");
		return 2;
	}
	for (long r = 0; r < rounds; r++) {
		struct link la = { "chain-A", a, 0, 0 }, lb = { "chain-B", b, 0, 0 }, lc = { "chain-C", c, 0, 0 };
		acquired = 0;
		pthread_t ta, tb, tc;
		cp_thread(&ta, link_run, &la);
		until_set(&la.holding);
		cp_thread(&tb, link_run, &lb);
		until_asleep(&lb);
		cp_thread(&tc, link_run, &lc);
		until_asleep(&lc);
		pthread_join(ta, NULL);
		pthread_join(tb, NULL);
		pthread_join(tc, NULL);
	}
	double R = (double)rounds;
	cp_truth("cp_chain", "wall", NULL, cp_now_ms() - t0);
	if (cp_truth_wanted())
		fprintf(stderr, "cp_chain: order %s %s %s\n", order[0], order[1], order[2]);
	cp_truth("cp_chain", "path", NULL, R * (a + b + c + t));
	cp_truth("cp_chain", "on-path", "chain_lock", R * (a + b + c));
	cp_truth("cp_chain", "on-path", "running", R * t);
	cp_truth("cp_chain", "what-if", "chain_lock:-50%", R * ((a + b + c) / 2 + t));
	return 0;
}

/*
 * glib_pool - a GThreadPool of 4 threads doing TASKS tasks; each task adds to
 * a total under a GMutex (tally_add) and counts down under another
 * (task_done), whose last one signals a GCond the main thread waits on
 * (wait_all): the main thread waits for work, the workers contend on the
 * mutexes.  Each task also visits a GRWLock and a GRecMutex (table_visit),
 * which GLib builds on pthread's rwlock and recursive mutex.  GLib's GMutex and GCond are futexes of its own (no pthread
 * call): ptt sees their waits as futex waits inside libglib.
 *
 * Prints its ground truth: the tasks run, the total, the main thread's
 * waits on the condition (almost always one), and
 * how many times tally_add found its lock taken.
 *
 * Usage: glib_pool [TASKS]   (default 400)
 */
#include <glib.h>
#include <stdio.h>
#include <stdlib.h>

static GMutex tally_lock, done_lock;
static GCond all_done;
static GRWLock table_lock; /* a pthread rwlock inside GLib */
static GRecMutex nest_lock; /* a recursive pthread mutex inside GLib */
static unsigned long table_reads, nested;
static unsigned long total;
static int left, tasks_run, tally_busy;

/* tally_busy: the calls that found tally_lock taken (0: no futex wait on it can have been made; one
 * call may wait several times, woken and beaten to the lock) */
__attribute__((noinline)) static void tally_add(int n)
{
	if (!g_mutex_trylock(&tally_lock)) {
		g_atomic_int_inc(&tally_busy);
		g_mutex_lock(&tally_lock);
	}
	for (volatile int i = 0; i < 20000; i++) /* held a while: the others wait */
		total += (unsigned long)n;
	g_mutex_unlock(&tally_lock);
}

__attribute__((noinline)) static void task_done(void)
{
	g_mutex_lock(&done_lock);
	tasks_run++;
	if (--left == 0)
		g_cond_signal(&all_done);
	g_mutex_unlock(&done_lock);
}

/* a task reads the table (every 8th writes it) and takes nest_lock twice over */
__attribute__((noinline)) static void table_visit(int n)
{
	if (n % 8 == 0) {
		g_rw_lock_writer_lock(&table_lock);
		table_reads = 0;
		g_rw_lock_writer_unlock(&table_lock);
	} else {
		g_rw_lock_reader_lock(&table_lock);
		g_atomic_pointer_add(&table_reads, 1);
		g_rw_lock_reader_unlock(&table_lock);
	}
	g_rec_mutex_lock(&nest_lock);
	g_rec_mutex_lock(&nest_lock);
	nested++;
	g_rec_mutex_unlock(&nest_lock);
	g_rec_mutex_unlock(&nest_lock);
}

static void work(gpointer data, gpointer user)
{
	(void)user;
	table_visit(GPOINTER_TO_INT(data));
	tally_add(GPOINTER_TO_INT(data));
	task_done();
}

__attribute__((noinline)) static int wait_all(void)
{
	int waits = 0;
	g_mutex_lock(&done_lock);
	while (left > 0) {
		g_cond_wait(&all_done, &done_lock);
		waits++;
	}
	g_mutex_unlock(&done_lock);
	return waits;
}

int main(int argc, char **argv)
{
	int tasks = argc > 1 ? atoi(argv[1]) : 400;
	if (tasks < 1) {
		fprintf(stderr, "usage: glib_pool [TASKS]\n");
		return 2;
	}
	left = tasks;
	GError *err = NULL;
	GThreadPool *pool = g_thread_pool_new(work, NULL, 4, TRUE, &err);
	if (!pool) {
		fprintf(stderr, "glib_pool: %s\n", err->message);
		return 1;
	}
	for (int i = 1; i <= tasks; i++)
		g_thread_pool_push(pool, GINT_TO_POINTER(i), NULL);
	int waits = wait_all();
	g_thread_pool_free(pool, FALSE, TRUE);
	printf("tasks run: %d (expected %d)\n", tasks_run, tasks);
	printf("total: %lu (expected %lu)\n", total / 20000, (unsigned long)tasks * (tasks + 1) / 2);
	printf("condition waits: %d\n", waits);
	printf("tally_lock found taken: %d\n", g_atomic_int_get(&tally_busy));
	printf("nest_lock passes: %lu (expected %d)\n", nested, tasks);
	return 0;
}

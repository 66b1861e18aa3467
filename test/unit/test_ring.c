/*
 * test_ring.c - the ring protocol under concurrent writers: N threads x M
 * events through the runtime's writer (capture/runtime/trace_path.c) and the
 * recorder's merge (capture/recorder/drain.c) into a file, read back: exactly N x M
 * records, valid checksums, per-thread order, global time order; in the
 * lossless mode with a ring small enough to fill, and in discard mode with
 * an exact lost count.  A hook writes records of its own (drain_set_hook
 * allows it) before the records it sees, the others going by in runs
 * (ptt_writer_run, compact and plain), and the recorder's event count must
 * include them.  Then 64
 * short-lived writers through 8 rings and a slow recorder: lossless, new
 * threads wait for the rings of ended ones, and nothing is lost.  Every
 * other event goes through the wrappers' fast path (runtime.h,
 * ptt_fast_objret_open), which falls back to the general one at each
 * ring's end and when out of room: both must write the same valid records.
 * Linked directly so it runs under ASan too.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../../capture/recorder/drain.h"
#include "../../capture/runtime/runtime.h"
#include "tap.h"

#define THREADS 4 /* at once */
#define EVENTS 200000

static volatile int writers_done;
static uint32_t events_per_writer = EVENTS;
static useconds_t drain_pause = 200; /* between the drainer's passes */
static uint64_t fast_written; /* events the fast path wrote (atomic) */

static void *writer(void *arg)
{
	uint32_t me = (uint32_t)(uintptr_t)arg;
	for (uint32_t i = 0; i < events_per_writer; i++) {
		struct ptt_fast_rec fr;
		const void *obj = (const void *)(uintptr_t)(((uint64_t)me << 32) | i);
		if (i % 2 && ptt_fast_objret_open(&fr, PTT_EV_MUTEX_LOCK, PTT_FAST_SERIAL, obj, (const void *)0x401000u) == 0) {
			ptt_fast_objret_close(&fr, 0);
			__atomic_fetch_add(&fast_written, 1, __ATOMIC_RELAXED);
			continue;
		}
		uint32_t a[5];
		ptt_put64(a, ((uint64_t)me << 32) | i);
		a[2] = 0;
		ptt_put64(a + 3, 0x401000u); /* a call site */
		/* of the same layout: locks for the hook to see, unlocks written in runs that it does not */
		ptt_emit(i % 1000 == 0 ? PTT_EV_MUTEX_LOCK : PTT_EV_MUTEX_UNLOCK, a, 5);
	}
	if (ptt_tls.ring)
		__atomic_store_n(&ptt_tls.ring->state, PTT_RING_CLOSED, __ATOMIC_RELEASE);
	return NULL;
}

struct drainer {
	struct drain *d;
};

/* A hook that writes records of its own: an object_name before every 1000th lock. */
static int naming_hook(void *ctx, const uint32_t *rec, struct ptt_writer *w)
{
	uint64_t *named = ctx;
	if (ptt_rec_id(rec[0]) != PTT_EV_MUTEX_LOCK || rec[5] % 1000 != 0)
		return 0;
	struct ptt_event *ev = calloc(1, sizeof *ev);
	if (!ev)
		return -ENOMEM;
	ev->type = ptt_builtin_type(PTT_EV_OBJECT_NAME);
	ev->id = PTT_EV_OBJECT_NAME;
	ev->ticks = (uint64_t)rec[2] << 32 | rec[1];
	ev->pid = rec[3];
	ev->tid = rec[4];
	ev->arg[0] = (uint64_t)rec[6] << 32 | rec[5];
	snprintf(ev->str, sizeof ev->str, "lock%u", rec[5]);
	int rc = ptt_event_encode(ev);
	if (!rc)
		rc = ptt_writer_record(w, ev->words, ev->nwords);
	free(ev);
	if (!rc)
		(*named)++;
	return rc;
}

static void *drainer(void *arg)
{
	struct drainer *dr = arg;
	while (!__atomic_load_n(&writers_done, __ATOMIC_ACQUIRE)) {
		drain_pass(dr->d, 0);
		usleep(drain_pause);
	}
	drain_pass(dr->d, 0);
	drain_pass(dr->d, 1);
	return NULL;
}

/*
 * waves: groups of THREADS writers, one after another, through 8 rings: from
 * the third wave on, new threads find every ring taken until the recorder
 * frees those of the threads that ended (lossless: they wait for one).
 */
static void run(int discard, unsigned waves, uint32_t events)
{
	const char *mode = discard ? (waves > 1 ? "discard, churn" : "discard") : (waves > 1 ? "lossless, churn" : "lossless");
	unsigned writers = THREADS * waves;
	events_per_writer = events;
	drain_pause = waves > 1 ? 5000 : 200; /* churn: threads end faster than rings are freed */
	uint64_t off;
	uint32_t words = 4096; /* 16 KiB rings: they fill up all the time */
	uint64_t size = ptt_shm_bytes(8, 8, words, &off);
	struct ptt_shm *s = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	s->magic = PTT_SHM_MAGIC;
	s->version = PTT_SHM_VERSION;
	s->size = size;
	s->nrings = s->max_rings = s->seg_rings = 8; /* a cap: no segment to grow into */
	s->ring_words = words;
	s->ring_offset = off;
	s->flags = discard ? PTT_SHM_DISCARD : 0;
	s->use_tsc = PTT_HAVE_TSC;
	s->start_ticks = PTT_HAVE_TSC ? ptt_rdtsc() : 0;
	ptt_shm = s;
	memset(ptt_on, 1, PTT_EV_BUILTIN_COUNT);
	ptt_fast[PTT_EV_MUTEX_LOCK] = PTT_HAVE_TSC ? PTT_FAST_SERIAL : PTT_FAST_NO;
	fast_written = 0;
	FILE *f = tmpfile();
	struct ptt_writer *w;
	ptt_writer_open(&w, fileno(f), 0);
	ptt_writer_set_compact(w, !discard); /* both writers' runs (ptt_writer_run) */
	char meta[64];
	snprintf(meta, sizeof meta, "clock_hz 2000000000\nstart_ticks %llu\n", (unsigned long long)s->start_ticks);
	ptt_writer_meta(w, meta, strlen(meta));
	struct ptt_clock clk;
	ptt_clock_init(&clk, s->start_ticks, 2000000000u);
	struct drainer dr = { drain_new(s, w, &clk) };
	uint64_t named = 0;
	static uint8_t sees[PTT_EV_BUILTIN_COUNT];
	sees[PTT_EV_MUTEX_LOCK] = 1;
	drain_set_hook(dr.d, naming_hook, &named, sees);
	writers_done = 0;
	pthread_t th[THREADS], dt;
	pthread_create(&dt, NULL, drainer, &dr);
	for (unsigned wave = 0; wave < waves; wave++) {
		for (uintptr_t i = 0; i < THREADS; i++)
			pthread_create(&th[i], NULL, writer, (void *)(wave * THREADS + i));
		for (int i = 0; i < THREADS; i++)
			pthread_join(th[i], NULL);
	}
	__atomic_store_n(&writers_done, 1, __ATOMIC_RELEASE);
	pthread_join(dt, NULL);
	const struct drain_stats *st = drain_stats(dr.d);
	uint64_t lost = st->lost, counted = st->events;
	ptt_writer_end(w, "events 0\n", 9);
	ptt_writer_close(w);
	drain_free(dr.d);

	fflush(f);
	lseek(fileno(f), 0, SEEK_SET);
	struct ptt_reader *r;
	ok(ptt_reader_open(&r, fileno(f), "ring") == 0, "%s: trace opens", mode);
	struct ptt_event *ev = malloc(sizeof *ev);
	uint64_t n = 0, all = 0, errors = 0, order_bad = 0, time_bad = 0, last_ns = 0, reported_lost = 0;
	int64_t *next = calloc(writers, sizeof *next);
	int rc;
	while ((rc = ptt_reader_next(r, ev)) != 0) {
		if (rc < 0) {
			errors++;
			continue;
		}
		all++;
		if (ev->ns < last_ns)
			time_bad++;
		last_ns = ev->ns;
		if (ev->id == PTT_EV_REC_LOST)
			reported_lost += ptt_event_argn(ev, PTT_ARGNAME_COUNT, 0);
		if (ev->id != PTT_EV_MUTEX_LOCK && ev->id != PTT_EV_MUTEX_UNLOCK)
			continue;
		uint32_t who = (uint32_t)(ev->arg[0] >> 32), seq = (uint32_t)ev->arg[0];
		if (who >= writers || (discard ? (int64_t)seq < next[who] : (int64_t)seq != next[who]))
			order_bad++;
		if (who < writers)
			next[who] = (int64_t)seq + 1;
		n++;
	}
	ptt_reader_close(r);
	free(ev);
	free(next);
	fclose(f);
	uint64_t total = (uint64_t)writers * events;
	ok(errors == 0, "%s: no bad records", mode);
	ok(order_bad == 0, "%s: per-thread order kept", mode);
	ok(time_bad == 0, "%s: global time order", mode);
	ok(!PTT_HAVE_TSC || fast_written > 0, "%s: %llu records by the fast path", mode, (unsigned long long)fast_written);
	if (discard)
		ok(n + lost == total && reported_lost == lost, "%s: %llu written + %llu lost == %llu, lost reported in the trace",
		   mode, (unsigned long long)n, (unsigned long long)lost, (unsigned long long)total);
	else
		ok(n == total && lost == 0, "%s: exactly %llu records, 0 lost", mode, (unsigned long long)n);
	ok(named > 0 && counted == all, "%s: the event count (%llu) includes the hook's %llu records (%llu in the file)",
	   mode, (unsigned long long)counted, (unsigned long long)named, (unsigned long long)all);
	munmap(s, size);
	ptt_shm = NULL;
}

/*
 * The merge's order, deterministic: three closed rings of 4 KiB (their records wrapping past a pad
 * at the ring's end) whose records interleave in runs of 1 to 4, at times that tie across rings,
 * with records taken one at a time among them (a trylock, which the hook sees); one pass.  The
 * file holds what one record at a time in (time, tid) order makes, byte for byte: the writer's
 * merge of two rings (ptt_writer_merge), its runs and the heap agree.
 */
static int no_hook(void *ctx, const uint32_t *rec, struct ptt_writer *w)
{
	(void)ctx;
	(void)rec;
	(void)w;
	return 0;
}

struct mrec {
	uint64_t ts;
	uint32_t tid, ring, words[11];
};

static int mrec_cmp(const void *a, const void *b)
{
	const struct mrec *x = a, *y = b;
	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return x->ring < y->ring ? -1 : x->ring > y->ring;
}

static char *file_bytes(FILE *f, size_t *size)
{
	fflush(f);
	*size = (size_t)lseek(fileno(f), 0, SEEK_END);
	char *buf = malloc(*size + 1);
	if (buf && pread(fileno(f), buf, *size, 0) != (ssize_t)*size)
		*size = 0;
	return buf;
}

static void merge_order(uint32_t rings)
{
	enum { RINGS = 3, PER = 600, WORDS = 8192 };
	/* what each ring's thread takes and releases, changed now and then: with 64 places, its
	 * references share the table with the other threads' (ptt_writer_merge must see it) */
	static const uint32_t take[] = { PTT_EV_MUTEX_LOCK, PTT_EV_MUTEX_TIMEDLOCK, PTT_EV_SPIN_LOCK, PTT_EV_RWLOCK_RDLOCK,
					 PTT_EV_RWLOCK_WRLOCK };
	static const uint32_t give[] = { PTT_EV_MUTEX_UNLOCK, PTT_EV_MUTEX_UNLOCK, PTT_EV_SPIN_UNLOCK, PTT_EV_RWLOCK_UNLOCK,
					 PTT_EV_RWLOCK_UNLOCK };
	uint32_t kind[RINGS] = { 0 }, place[RINGS] = { 0 };
	uint64_t lock[RINGS] = { 0x4000, 0x4000, 0x4000 };
	static const uint32_t tids[RINGS] = { 30, 20, 10 }; /* not in the rings' order */
	/* the rings are the last of the segment, a page no one may read after it: a ring's span that
	 * ends at the ring's end is read no further */
	uint64_t off, size = ptt_shm_bytes(8, 8, WORDS, &off);
	struct ptt_shm *s = mmap(NULL, size + 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	mprotect((char *)s + size, 4096, PROT_NONE);
	uint32_t at0 = 8 - rings; /* the first ring's index */
	s->magic = PTT_SHM_MAGIC;
	s->version = PTT_SHM_VERSION;
	s->size = size;
	s->nrings = s->max_rings = s->seg_rings = 8;
	s->rings_used = 8;
	s->ring_words = WORDS;
	s->ring_offset = off;
	s->use_tsc = 0;
	static struct mrec all[RINGS * PER];
	uint32_t n = 0, count[RINGS] = { 0 }, seed = 9, ring = 0, left = 0;
	uint64_t ts = 1000, pos[RINGS];
	for (uint32_t i = 0; i < rings; i++) {
		struct ptt_ring *r = &s->rings[at0 + i];
		/* each wraps within the pass, at another time: past a pad of 6 words or more (room for
		 * a record's first words: what follows it is no record), the last ring with no pad, its
		 * records up to its very end */
		pos[i] = r->consumed = r->first = (uint64_t)WORDS * 5 - (i == rings - 1 ? 4400 : i ? 2306 : 304);
		r->pid = 100;
		r->tid = tids[i];
		r->state = PTT_RING_CLOSED;
		memset(ptt_ring_data(s, at0 + i), 0xa5, WORDS * 4); /* the words of an earlier lap, past a pad */
	}
	while (n < rings * PER) {
		seed = seed * 1103515245u + 12345u;
		if (left-- == 0) { /* runs of 1 to 4, the third ring now and then */
			ring = rings == 3 && (seed >> 16) % 8 == 0 ? 2 : ring == 0 ? 1 : 0;
			left = (seed >> 20) % 4;
		}
		if (count[ring] == PER)
			ring = count[0] < PER ? 0 : count[1] < PER ? 1 : 2; /* the third only when there are three */
		ts += (seed >> 24) % 3 == 0 ? 0 : (seed >> 26) % 5; /* ties across rings */
		struct mrec *m = &all[n++];
		uint32_t k = count[ring]++, *w = m->words;
		if ((seed >> 5) % 6 == 0) {
			kind[ring] = (seed >> 7) % 5;
			place[ring] = (seed >> 10) % 64;
			lock[ring] = 0x4000 + (seed >> 3) % 4 * 64;
		}
		uint32_t id = (seed >> 12) % 23 == 0 ? PTT_EV_MUTEX_TRYLOCK : k % 2 ? give[kind[ring]] : take[kind[ring]];
		uint64_t mutex = lock[ring], site = 0x401000 + place[ring] * 16 + k % 2 * 8;
		w[0] = ptt_rec_word0(id, 11);
		w[1] = (uint32_t)ts;
		w[2] = (uint32_t)(ts >> 32);
		w[3] = 100;
		w[4] = tids[ring];
		ptt_put64(w + 5, mutex);
		w[7] = 0;
		ptt_put64(w + 8, site);
		w[10] = ptt_rec_checksum(w, 10);
		m->ts = ts;
		m->tid = tids[ring];
		m->ring = ring;
		uint32_t *data = ptt_ring_data(s, at0 + ring), at = (uint32_t)(pos[ring] & (WORDS - 1));
		if (at + 11 > WORDS) { /* a pad to the ring's end */
			data[at] = ptt_rec_word0(PTT_EV_PAD, 0);
			pos[ring] += WORDS - at;
			at = 0;
		}
		memcpy(data + at, w, 44);
		pos[ring] += 11;
	}
	for (uint32_t i = 0; i < rings; i++)
		s->rings[at0 + i].reserved = s->rings[at0 + i].committed = pos[i];
	ptt_shm = s;
	const char *meta = "clock_hz 1000000000\nstart_ticks 0\n";
	struct ptt_clock clk;
	ptt_clock_init(&clk, 0, 1000000000u);
	FILE *f = tmpfile(), *g = tmpfile();
	struct ptt_writer *w, *v;
	ptt_writer_open(&w, fileno(f), 0);
	ptt_writer_set_compact(w, 1);
	ptt_writer_meta(w, meta, strlen(meta));
	struct drain *d = drain_new(s, w, &clk);
	static uint8_t sees[PTT_EV_BUILTIN_COUNT];
	sees[PTT_EV_MUTEX_TRYLOCK] = 1;
	drain_set_hook(d, no_hook, NULL, sees);
	long got = drain_pass(d, 0);
	ptt_writer_end(w, "", 0);
	ptt_writer_close(w);
	drain_free(d);
	qsort(all, n, sizeof *all, mrec_cmp);
	ptt_writer_open(&v, fileno(g), 0);
	ptt_writer_set_compact(v, 1);
	ptt_writer_meta(v, meta, strlen(meta));
	for (uint32_t i = 0; i < n; i++)
		ptt_writer_record(v, all[i].words, 11);
	ptt_writer_end(v, "", 0);
	ptt_writer_close(v);
	size_t fs, gs;
	char *fb = file_bytes(f, &fs), *gb = file_bytes(g, &gs);
	ok(got == (long)n && fb && gb && fs == gs && memcmp(fb, gb, fs) == 0,
	   "%u rings merged in one pass: %ld records, the bytes of one record at a time in (time, tid) order (%zu, %zu)",
	   rings, got, fs, gs);
	free(fb);
	free(gb);
	fclose(f);
	fclose(g);
	munmap(s, size + 4096);
	ptt_shm = NULL;
}

/*
 * The record layout through the runtime's own writers (ptt_emit_plain for every argument length,
 * ptt_emit_stacked's stack record and event, ptt_objret_open/close, the fast lock record), read
 * back from the ring with formats' ptt_trace.h (ptt_rec_sound, ptt_rec_len/id, ptt_rec_ticks/
 * pid/tid): a writer that restated the layout or the checksum otherwise fails here.
 */
static uint32_t layout_bad, layout_seen, layout_fast;
static void *layout_writer(void *arg)
{
	(void)arg;
	uint32_t a[PTT_REC_MAX_WORDS] = { 0 };
	for (unsigned k = 0; k <= PTT_REC_MAX_WORDS - PTT_REC_MIN_WORDS; k++) {
		for (unsigned i = 0; i < k; i++)
			a[i] = k * 1000 + i;
		ptt_emit_plain(PTT_EV_MUTEX_LOCK, a, k);
	}
	ptt_emit_stacked(PTT_EV_MUTEX_UNLOCK, a, 5, 77);
	struct ptt_rec rec;
	if (ptt_objret_open(&rec, PTT_EV_MUTEX_LOCK, (const void *)0x1234567890ull, (const void *)0x401000u) == 0)
		ptt_objret_close(&rec, -3);
	struct ptt_fast_rec fr;
	if (PTT_HAVE_TSC && ptt_fast_objret_open(&fr, PTT_EV_MUTEX_LOCK, PTT_FAST_SERIAL, (const void *)0x1234567890ull,
						 (const void *)0x401000u) == 0) {
		ptt_fast_objret_close(&fr, -4);
		layout_fast = 1;
	}
	struct ptt_tls *t = &ptt_tls;
	uint64_t end = t->ring ? __atomic_load_n(&t->ring->committed, __ATOMIC_ACQUIRE) : 0, last = 0;
	unsigned k = 0, objrets = 0;
	for (uint64_t pos = 0; pos < end;) {
		const uint32_t *w = t->data + pos;
		uint32_t n = ptt_rec_len(w[0]), id = ptt_rec_id(w[0]);
		if (!ptt_rec_w0_sound(w[0]) || pos + n > end) {
			layout_bad++;
			break;
		}
		layout_seen++;
		int bad = !ptt_rec_sound(w, n) || ptt_rec_pid(w) != t->pid || ptt_rec_tid(w) != t->tid || ptt_rec_ticks(w) < last;
		last = ptt_rec_ticks(w);
		if (id == PTT_EV_MUTEX_LOCK && k <= PTT_REC_MAX_WORDS - PTT_REC_MIN_WORDS) { /* ptt_emit_plain's, in turn */
			bad |= n != PTT_REC_MIN_WORDS + k;
			for (unsigned i = 0; i < k && !bad; i++)
				bad |= w[PTT_REC_HDR_WORDS + i] != k * 1000 + i;
			k++;
		} else if (id == PTT_EV_STACK) {
			bad |= n != PTT_REC_MIN_WORDS + 1 || w[PTT_REC_HDR_WORDS] != 77;
		} else if (id == PTT_EV_MUTEX_UNLOCK) {
			bad |= n != PTT_REC_MIN_WORDS + 5 || ptt_rec_id(w[-(PTT_REC_MIN_WORDS + 1)]) != PTT_EV_STACK;
		} else if (id == PTT_EV_MUTEX_LOCK) { /* the two (object, result, site) records */
			bad |= n != PTT_REC_MIN_WORDS + PTT_OBJRET_WORDS || w[PTT_REC_HDR_WORDS] != 0x34567890u ||
			       w[PTT_REC_HDR_WORDS + 1] != 0x12u || (int32_t)w[PTT_REC_HDR_WORDS + 2] != -3 - (int32_t)objrets;
			objrets++;
		}
		layout_bad += bad;
		pos += n;
	}
	layout_bad += k != PTT_REC_MAX_WORDS - PTT_REC_MIN_WORDS + 1 || objrets != 1 + layout_fast;
	if (t->ring)
		__atomic_store_n(&t->ring->state, PTT_RING_CLOSED, __ATOMIC_RELEASE);
	return NULL;
}

static void layout(void)
{
	uint64_t off;
	uint32_t words = 65536; /* every length once (32 625 words) and the rest, without a wrap */
	uint64_t size = ptt_shm_bytes(1, 1, words, &off);
	struct ptt_shm *s = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	s->magic = PTT_SHM_MAGIC;
	s->version = PTT_SHM_VERSION;
	s->size = size;
	s->nrings = s->max_rings = s->seg_rings = 1;
	s->ring_words = words;
	s->ring_offset = off;
	s->flags = PTT_SHM_DISCARD;
	s->use_tsc = PTT_HAVE_TSC;
	s->start_ticks = PTT_HAVE_TSC ? ptt_rdtsc() : 0;
	ptt_shm = s;
	memset(ptt_on, 1, PTT_EV_BUILTIN_COUNT);
	ptt_fast[PTT_EV_MUTEX_LOCK] = PTT_HAVE_TSC ? PTT_FAST_SERIAL : PTT_FAST_NO;
	pthread_t th;
	pthread_create(&th, NULL, layout_writer, NULL);
	pthread_join(th, NULL);
	ok(layout_seen >= PTT_REC_MAX_WORDS - PTT_REC_MIN_WORDS + 4 && layout_bad == 0,
	   "layout: %u records of the runtime's writers (lengths 6-255, a stack record and its event, %u (object, result, "
	   "site) records) read back through ptt_trace.h's layout and checksum, %u wrong",
	   layout_seen, 1 + layout_fast, layout_bad);
	munmap(s, size);
	ptt_shm = NULL;
}

int main(void)
{
	layout();
	merge_order(3);
	merge_order(2); /* without a third ring's head to stop at */
	run(0, 1, EVENTS);
	run(1, 1, EVENTS);
	run(0, 16, 300); /* 64 short-lived writers through 8 rings, a slow recorder */
	run(1, 16, 300);
	return tap_done();
}

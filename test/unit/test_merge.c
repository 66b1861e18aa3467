/*
 * test_merge.c - format version 3: the merge of per-thread streams
 * (formats/merge.c) by itself, and through the writer and the reader:
 * streams with interleaved times, an idle thread, ties, marks that release
 * records with bounded memory, a trace cut short (the recorder killed), the
 * asynchronous compressing writer, and the writer's refusals.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../formats/merge.h"
#include "../../formats/ptt_trace.h"
#include "tap.h"

/* One mutex_lock record of tid at ticks, its object obj. */
static void rec(uint32_t *words, uint32_t *n, uint64_t ticks, uint32_t tid, uint64_t obj)
{
	struct ptt_event ev;
	memset(&ev, 0, sizeof ev);
	ev.type = ptt_builtin_type(PTT_EV_MUTEX_LOCK);
	ev.id = PTT_EV_MUTEX_LOCK;
	ev.ticks = ticks;
	ev.pid = 100;
	ev.tid = tid;
	ev.nargs = ev.type->nargs;
	ev.arg[0] = obj;
	ptt_event_encode(&ev);
	memcpy(words, ev.words, ev.nwords * 4);
	*n = ev.nwords;
}

static uint64_t ticks_of(const uint32_t *w) { return (uint64_t)w[2] << 32 | w[1]; }

/* the merge alone: what a mark releases, in order, ties by tid then stream, the rest at the end */
static void test_merge_alone(void)
{
	struct ptt_merge *m = ptt_merge_new();
	uint32_t w[PTT_REC_MAX_WORDS], n;
	uint64_t off;
	/* stream 1 (tid 10): 10 20 30 40; stream 2 (tid 11): 15 20 35; stream 3 (tid 12) idle */
	uint64_t t1[] = { 10, 20, 30, 40 }, t2[] = { 15, 20, 35 };
	for (int i = 0; i < 4; i++) {
		rec(w, &n, t1[i], 10, 1);
		ptt_merge_add(m, 1, w, n, (uint64_t)i);
	}
	for (int i = 0; i < 3; i++) {
		rec(w, &n, t2[i], 11, 2);
		ptt_merge_add(m, 2, w, n, 100 + (uint64_t)i);
	}
	ok(ptt_merge_held(m) == 7 && ptt_merge_next(m, w, &n, &off) == 0, "nothing goes before a mark (7 held)");
	ptt_merge_mark(m, 30); /* before 30: 10 15 20(tid 10) 20(tid 11) */
	uint64_t got[8];
	uint32_t tids[8];
	int k = 0;
	while (k < 8 && ptt_merge_next(m, w, &n, &off)) {
		got[k] = ticks_of(w);
		tids[k++] = w[4];
	}
	ok(k == 4 && got[0] == 10 && got[1] == 15 && got[2] == 20 && tids[2] == 10 && got[3] == 20 && tids[3] == 11,
	   "a mark at 30 releases the 4 records before it, ties by tid (%d released)", k);
	ok(ptt_merge_held(m) == 3, "the 3 records from 30 on are held");
	ptt_merge_mark(m, 25); /* a later mark never takes back an earlier one */
	ok(ptt_merge_next(m, w, &n, &off) == 0, "a lower mark releases nothing more");
	rec(w, &n, 36, 12, 3); /* the idle thread's first record, after the mark */
	ptt_merge_add(m, 3, w, n, 200);
	ptt_merge_all(m);
	k = 0;
	while (k < 8 && ptt_merge_next(m, w, &n, &off))
		got[k++] = ticks_of(w);
	ok(k == 4 && got[0] == 30 && got[1] == 35 && got[2] == 36 && got[3] == 40, "at the end the rest goes in time order");
	ok(ptt_merge_held(m) == 0, "nothing held after the end");
	/* a stream used up and refilled many times: its arrays are reused, memory stays bounded */
	int order_ok = 1;
	uint64_t last = 0;
	for (uint64_t base = 1000; base < 1000 + 20000; base += 10) {
		rec(w, &n, base, 10, 1);
		ptt_merge_add(m, 1, w, n, 0);
		rec(w, &n, base + 5, 11, 2);
		ptt_merge_add(m, 2, w, n, 0);
		ptt_merge_mark(m, base + 6);
		while (ptt_merge_next(m, w, &n, &off)) {
			order_ok &= ticks_of(w) >= last;
			last = ticks_of(w);
		}
		order_ok &= ptt_merge_held(m) == 0;
	}
	ok(order_ok, "4000 records released mark by mark, in order, none held between marks");
	ptt_merge_free(m);
}

/* each record's file offset comes back with it: runs that share one (a compact block's), runs that step
 * by the record's bytes (a raw block's), both broken, across the chunks a long stream takes */
static void test_merge_offsets(void)
{
	struct ptt_merge *m = ptt_merge_new();
	uint32_t w[PTT_REC_MAX_WORDS], n;
	uint64_t off, want[3][20000];
	int k[3] = { 0, 0, 0 }, good = 1;
	for (int i = 0; i < 20000; i++) {
		uint64_t t = 10 * (uint64_t)i;
		rec(w, &n, t, 10, 1); /* stream 1: a block of 100 records sharing an offset, then the next */
		want[0][i] = 1000000 + 48 * (uint64_t)(i / 100);
		ptt_merge_add(m, 1, w, n, want[0][i]);
		rec(w, &n, t + 1, 11, 2); /* stream 2: raw, each record after the one before, a gap every 700 */
		want[1][i] = (uint64_t)1 << 40 | (4 * n * (uint64_t)i + 48 * (uint64_t)(i / 700));
		ptt_merge_add(m, 2, w, n, want[1][i]);
		rec(w, &n, t + 2, 12, 3); /* stream 3: offsets that follow no rule */
		want[2][i] = (uint64_t)i * 7919 % 10007;
		ptt_merge_add(m, 3, w, n, want[2][i]);
		if (i % 5000 == 4999) { /* a mark now and then: some released, some held over */
			ptt_merge_mark(m, t - 500);
			while (ptt_merge_next(m, w, &n, &off)) {
				int s = (int)w[4] - 10;
				good &= off == want[s][k[s]];
				k[s]++;
			}
		}
	}
	ptt_merge_all(m);
	while (ptt_merge_next(m, w, &n, &off)) {
		int s = (int)w[4] - 10;
		good &= k[s] < 20000 && off == want[s][k[s]];
		k[s]++;
	}
	ok(good && k[0] == 20000 && k[1] == 20000 && k[2] == 20000 && ptt_merge_held(m) == 0,
	   "60000 records of three streams give back their offsets: shared, stepping, and neither");
	ptt_merge_free(m);
}

/*
 * A version 3 trace: nthreads streams whose records interleave (thread t at
 * times 10 * i + t), one idle stream that writes once at the end, a mark
 * after every pass of passlen records per thread.  cut: bytes to leave out
 * at the file's end (0: whole).  Its fd at 0.
 */
static int write_streams(int nthreads, int passes, int passlen, int async, int zlevel, size_t cut, uint64_t *records)
{
	char path[] = "/tmp/ptt-test-XXXXXX";
	int fd = mkstemp(path);
	unlink(path);
	struct ptt_writer *w;
	ptt_writer_open(&w, fd, zlevel);
	ok(ptt_writer_set_streams(w, 1) == 0, "streams set before anything is written");
	if (async)
		ptt_writer_async(w);
	const char *meta = "clock ns\nclock_hz 1000000000\nstart_ticks 0\n";
	ptt_writer_meta(w, meta, strlen(meta));
	uint32_t span[4096], n;
	*records = 0;
	for (int p = 0; p < passes; p++) {
		for (int t = 0; t < nthreads; t++) {
			size_t used = 0;
			for (int i = 0; i < passlen; i++) {
				uint64_t ts = 10 * (uint64_t)(p * passlen + i) + (uint64_t)t;
				rec(span + used, &n, ts, 20 + (uint32_t)t, (uint64_t)t);
				used += n;
			}
			uint64_t first = 10 * (uint64_t)(p * passlen) + (uint64_t)t;
			ptt_writer_span(w, (uint32_t)t + 1, span, used, (uint32_t)passlen, first,
					first + 10 * (uint64_t)(passlen - 1), 0);
			*records += (uint64_t)passlen;
		}
		/* every thread's next record comes at 10 * (p + 1) * passlen or later */
		ptt_writer_mark(w, 10 * (uint64_t)(p + 1) * (uint64_t)passlen);
	}
	/* the idle thread (stream 99) wakes at the end */
	uint64_t ts = 10 * (uint64_t)(passes * passlen) + 1;
	rec(span, &n, ts, 99, 99);
	ptt_writer_span(w, 99, span, n, 1, ts, ts, 0);
	(*records)++;
	ptt_writer_end(w, "events 1\n", 9);
	ptt_writer_close(w);
	off_t size = lseek(fd, 0, SEEK_END);
	if (cut && ftruncate(fd, size - (off_t)cut) != 0)
		ok(0, "truncate");
	lseek(fd, 0, SEEK_SET);
	return fd;
}

/* Read fd: events, whether in (time, tid) order, errors, the last error. */
static uint64_t read_all(int fd, int *in_order, int *errors, int *last_rc)
{
	struct ptt_reader *r;
	uint64_t n = 0, last = 0;
	uint32_t last_tid = 0;
	*in_order = 1;
	*errors = 0;
	*last_rc = 0;
	if (ptt_reader_open(&r, fd, "t") != 0) {
		ptt_reader_close(r);
		*errors = -1;
		return 0;
	}
	struct ptt_event *ev = malloc(sizeof *ev);
	int rc;
	while ((rc = ptt_reader_next(r, ev)) != 0) {
		if (rc < 0) {
			(*errors)++;
			*last_rc = rc;
			continue;
		}
		if (ev->ticks < last || (ev->ticks == last && ev->tid < last_tid))
			*in_order = 0;
		last = ev->ticks;
		last_tid = ev->tid;
		n++;
	}
	free(ev);
	ptt_reader_close(r);
	return n;
}

static void test_round_trip(void)
{
	uint64_t records;
	int in_order, errors, last_rc;
	char first[16];
	int fd = write_streams(3, 20, 100, 0, 0, 0, &records);
	ok(pread(fd, first, 16, 0) == 16 && first[8] == PTT_FORMAT_VERSION_STREAMS && PTT_FORMAT_VERSION_STREAMS == 3, "the file says version 3");
	uint64_t n = read_all(fd, &in_order, &errors, &last_rc);
	ok(n == records && in_order && errors == 0, "3 interleaved streams and an idle one read merged: %" PRIu64 " of %" PRIu64
	   " events, in order, %d errors", n, records, errors);
	close(fd);
	fd = write_streams(3, 20, 100, 1, PTT_ZLEVEL_FAST, 0, &records);
	n = read_all(fd, &in_order, &errors, &last_rc);
	ok(n == records && in_order && errors == 0, "the same through the compressing async writer: %" PRIu64 " events, in order", n);
	close(fd);
	/* the recorder killed: the file ends inside a block, without END */
	fd = write_streams(2, 10, 200, 0, 0, 3000, &records);
	n = read_all(fd, &in_order, &errors, &last_rc);
	ok(n > records - 200 && n < records && in_order && errors >= 1 && last_rc == PTT_E_TRUNCATED,
	   "a trace cut short: %" PRIu64 " of %" PRIu64 " events read in order, then the cut said (%d)", n, records, last_rc);
	close(fd);
}

static void test_writer_refusals(void)
{
	struct ptt_writer *w;
	ptt_writer_open(&w, -1, 0);
	ptt_writer_set_compact(w, 1);
	ok(ptt_writer_set_streams(w, 1) == -EINVAL, "streams refused with the compact form");
	ptt_writer_close(w);
	ptt_writer_open(&w, -1, 0);
	uint32_t words[PTT_REC_MAX_WORDS], n;
	rec(words, &n, 5, 1, 1);
	ok(ptt_writer_span(w, 1, words, n, 1, 5, 5, 0) == -EINVAL && ptt_writer_mark(w, 5) == -EINVAL,
	   "spans and marks refused without streams");
	ptt_writer_close(w);
}

int main(void)
{
	test_merge_alone();
	test_merge_offsets();
	test_round_trip();
	test_writer_refusals();
	return tap_done();
}

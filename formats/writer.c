/* writer.c - the binary trace writer: file header, META/EVENTS/END blocks. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "ptt_trace.h"

#define BLOCK_TARGET (64u * 1024u) /* payload bytes per EVENTS block */
#define BLOCK_BUF (BLOCK_TARGET + PTT_REC_MAX_WORDS * 4)
#define ASYNC_BUFS 8 /* blocks being filled, queued or compressed (ptt_writer_async) */

/* A full EVENTS block waiting for the writer's thread. */
struct queued {
	uint32_t *buf;
	size_t used;
	uint32_t count, lost;
	uint64_t first, last;
};

/*
 * ptt_writer_async: EVENTS blocks are compressed and written by a thread of
 * the writer's own, in order, while the caller fills the next one.  Every
 * other block (META, END, snapshots, the index) is written by the caller
 * once the queue is empty, so the file's order and offsets are the ones a
 * synchronous writer makes.  The thread owns fd, the deflate state and the
 * byte count while blocks are queued.
 */
struct async {
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct queued q[ASYNC_BUFS];
	unsigned head, len;        /* queue; the head stays queued while the thread writes it */
	uint32_t *spare[ASYNC_BUFS];
	unsigned nspare;
	int err, stop;
};

struct ptt_writer {
	int fd;
	int zlevel;
	int header_done;
	uint32_t *buf; /* pending EVENTS payload */
	size_t used;   /* bytes in buf */
	uint32_t count, lost;
	uint64_t first, last;
	unsigned char *zbuf;
	size_t zcap;
	z_stream zs; /* one deflate state for every block (reset, not rebuilt: compress2 allocated
		      * and cleared some 270 KiB of tables per 64 KiB block) */
	int zs_ready;
	struct async *as;
	uint64_t bytes, events;
	/* the snapshot being built (ptt_writer_snapshot_*) */
	uint32_t *snap;
	size_t snap_used, snap_cap; /* words */
	uint64_t snap_ticks;
	int snap_bad;
	/* the index written after the END block when there are snapshots: META and snapshot blocks */
	struct { uint64_t off, pos, ticks; uint32_t kind; } *idx;
	size_t nidx, idx_cap, nsnaps;
};

/* Remember a block about to be written at the current offset (kind PTT_SNAP_INDEX_*). */
static void index_block(struct ptt_writer *w, uint32_t kind, uint64_t pos, uint64_t ticks)
{
	if (w->nidx == w->idx_cap) {
		size_t cap = w->idx_cap ? w->idx_cap * 2 : 64;
		void *n = realloc(w->idx, cap * sizeof *w->idx);
		if (!n)
			return; /* the index is an aid: without it, readers walk the block headers */
		w->idx = n;
		w->idx_cap = cap;
	}
	w->idx[w->nidx].off = w->bytes;
	w->idx[w->nidx].pos = pos;
	w->idx[w->nidx].ticks = ticks;
	w->idx[w->nidx++].kind = kind;
}

static int write_all(struct ptt_writer *w, const void *p, size_t n)
{
	const char *c = p;
	while (n) {
		ssize_t k = write(w->fd, c, n);
		if (k < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		c += k;
		n -= (size_t)k;
		__atomic_fetch_add(&w->bytes, (uint64_t)k, __ATOMIC_RELAXED); /* read while a thread writes (async) */
	}
	return 0;
}

int ptt_writer_open(struct ptt_writer **wp, int fd, int zlevel)
{
	struct ptt_writer *w = calloc(1, sizeof *w);
	if (!w)
		return PTT_E_NOMEM;
	w->fd = fd;
	w->zlevel = zlevel < 0 ? 0 : zlevel > 9 ? 9 : zlevel;
	w->buf = malloc(BLOCK_BUF);
	if (!w->buf) {
		free(w);
		return PTT_E_NOMEM;
	}
	*wp = w;
	return 0;
}

static int file_header(struct ptt_writer *w)
{
	if (w->header_done)
		return 0;
	struct ptt_file_header h;
	memcpy(h.magic, PTT_FILE_MAGIC, 8);
	h.version = PTT_FORMAT_VERSION;
	h.byte_order = PTT_BYTE_ORDER_MARK;
	w->header_done = 1;
	return write_all(w, &h, sizeof h);
}

/* payload is only written to when it is a packable EVENTS block (the writer's own buffer) */
static int put_block(struct ptt_writer *w, unsigned kind, unsigned extra_flags, const void *payload, size_t len,
		     uint32_t count, uint32_t lost, uint64_t first, uint64_t last)
{
	int pack = kind == PTT_BLOCK_EVENTS && !extra_flags && w->zlevel > 0 && len > 0;
	int rc = file_header(w);
	if (rc)
		return rc;
	struct ptt_block_header h;
	memset(&h, 0, sizeof h);
	h.magic = PTT_BLOCK_MAGIC;
	h.kind = (uint16_t)kind;
	h.raw_len = (uint32_t)len;
	h.count = count;
	if (kind != PTT_BLOCK_EVENTS) {
		/* the text has no record checksums: a flipped digit of clock_hz would shift every time silently */
		h.flags = PTT_BLOCK_CRC;
		h.count = (uint32_t)crc32(0, (const Bytef *)payload, (uInt)len);
	}
	h.flags |= (uint16_t)extra_flags;
	h.lost = lost;
	h.first_ticks = first;
	h.last_ticks = last;
	const void *data = payload;
	size_t stored = len;
	if (w->zlevel > 0 && len > 0) {
		uLongf zlen = compressBound((uLong)len);
		if (zlen > w->zcap) {
			unsigned char *nb = realloc(w->zbuf, zlen);
			if (!nb)
				return PTT_E_NOMEM;
			w->zbuf = nb;
			w->zcap = zlen;
		}
		if (pack)
			ptt_block_pack((uint32_t *)payload, len / 4, first);
		int zrc = w->zs_ready ? deflateReset(&w->zs) : deflateInit(&w->zs, w->zlevel);
		w->zs_ready = 1;
		if (zrc == Z_OK) {
			w->zs.next_in = (Bytef *)payload;
			w->zs.avail_in = (uInt)len;
			w->zs.next_out = w->zbuf;
			w->zs.avail_out = (uInt)zlen;
			zrc = deflate(&w->zs, Z_FINISH) == Z_STREAM_END ? Z_OK : Z_BUF_ERROR;
			zlen = w->zs.total_out;
		} else {
			w->zs_ready = 0;
		}
		if (zrc == Z_OK && zlen < len) {
			data = w->zbuf;
			stored = zlen;
			h.flags |= (uint16_t)(PTT_BLOCK_ZLIB | (pack ? PTT_BLOCK_PACKED : 0));
		} else if (pack) {
			ptt_block_unpack((uint32_t *)payload, len / 4, first); /* stored as it was */
		}
		if (zrc != Z_OK)
			return PTT_E_ZLIB;
	}
	h.payload_len = (uint32_t)stored;
	h.header_crc = (uint32_t)crc32(0, (const Bytef *)&h, offsetof(struct ptt_block_header, header_crc));
	rc = write_all(w, &h, sizeof h);
	return rc ? rc : write_all(w, data, stored);
}

int ptt_writer_meta(struct ptt_writer *w, const char *lines, size_t len)
{
	int rc = ptt_writer_flush(w); /* keep META before the events that use it */
	if (!rc)
		rc = ptt_writer_sync(w);
	if (!rc)
		rc = file_header(w);
	if (!rc)
		index_block(w, PTT_SNAP_INDEX_META, 0, 0);
	return rc ? rc : put_block(w, PTT_BLOCK_META, 0, lines, len, 0, 0, 0, 0);
}

int ptt_writer_record(struct ptt_writer *w, const uint32_t *words, uint32_t nwords)
{
	if (w->used >= BLOCK_TARGET) {
		int rc = ptt_writer_flush(w);
		if (rc)
			return rc;
	}
	uint64_t ticks = (uint64_t)words[2] << 32 | words[1];
	if (w->count == 0)
		w->first = ticks;
	w->last = ticks;
	if (ptt_rec_id(words[0]) == PTT_EV_REC_LOST && nwords >= 9)
		w->lost += words[6]; /* count, low word; lost counts beyond 2^32 per record do not occur */
	memcpy((char *)w->buf + w->used, words, (size_t)nwords * 4);
	w->used += (size_t)nwords * 4;
	w->count++;
	w->events++;
	return 0;
}

static void *async_main(void *arg)
{
	struct ptt_writer *w = arg;
	struct async *a = w->as;
	pthread_mutex_lock(&a->mu);
	for (;;) {
		while (!a->len && !a->stop)
			pthread_cond_wait(&a->cv, &a->mu);
		if (!a->len)
			break;
		struct queued b = a->q[a->head];
		pthread_mutex_unlock(&a->mu);
		int rc = a->err ? 0 : put_block(w, PTT_BLOCK_EVENTS, 0, b.buf, b.used, b.count, b.lost, b.first, b.last);
		pthread_mutex_lock(&a->mu);
		if (rc && !a->err)
			a->err = rc;
		a->head = (a->head + 1) % ASYNC_BUFS;
		a->len--;
		a->spare[a->nspare++] = b.buf;
		pthread_cond_broadcast(&a->cv);
	}
	pthread_mutex_unlock(&a->mu);
	return NULL;
}

int ptt_writer_async(struct ptt_writer *w)
{
	if (w->as)
		return 0;
	struct async *a = calloc(1, sizeof *a);
	if (!a)
		return PTT_E_NOMEM;
	for (; a->nspare < ASYNC_BUFS - 1; a->nspare++)
		if (!(a->spare[a->nspare] = malloc(BLOCK_BUF)))
			break;
	int rc = file_header(w); /* written by the caller: the thread only appends blocks */
	if (!rc && a->nspare == ASYNC_BUFS - 1) {
		pthread_mutex_init(&a->mu, NULL);
		pthread_cond_init(&a->cv, NULL);
		w->as = a;
		sigset_t all, old; /* the thread takes no signals: they stay with the caller's threads */
		sigfillset(&all);
		pthread_sigmask(SIG_SETMASK, &all, &old);
		int made = pthread_create(&a->thread, NULL, async_main, w) == 0;
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		if (made)
			return 0;
		w->as = NULL;
		pthread_mutex_destroy(&a->mu);
		pthread_cond_destroy(&a->cv);
	}
	for (unsigned i = 0; i < a->nspare; i++)
		free(a->spare[i]);
	free(a);
	return rc ? rc : PTT_E_NOMEM;
}

int ptt_writer_sync(struct ptt_writer *w)
{
	struct async *a = w->as;
	if (!a)
		return 0;
	pthread_mutex_lock(&a->mu);
	while (a->len)
		pthread_cond_wait(&a->cv, &a->mu);
	int rc = a->err;
	pthread_mutex_unlock(&a->mu);
	return rc;
}

/* Queue the current block for the thread and go on in a spare buffer (waiting for one if need be). */
static int queue_block(struct ptt_writer *w)
{
	struct async *a = w->as;
	pthread_mutex_lock(&a->mu);
	while (!a->nspare)
		pthread_cond_wait(&a->cv, &a->mu);
	int rc = a->err;
	if (!rc) {
		struct queued *b = &a->q[(a->head + a->len) % ASYNC_BUFS];
		b->buf = w->buf;
		b->used = w->used;
		b->count = w->count;
		b->lost = w->lost;
		b->first = w->first;
		b->last = w->last;
		a->len++;
		w->buf = a->spare[--a->nspare];
		pthread_cond_broadcast(&a->cv);
	}
	pthread_mutex_unlock(&a->mu);
	return rc;
}

int ptt_writer_flush(struct ptt_writer *w)
{
	int rc = w->as ? 0 : file_header(w);
	if (rc || w->count == 0)
		return rc;
	rc = w->as ? queue_block(w)
		   : put_block(w, PTT_BLOCK_EVENTS, 0, w->buf, w->used, w->count, w->lost, w->first, w->last);
	w->used = 0;
	w->count = 0;
	w->lost = 0;
	return rc;
}

static void snap_wrap(struct ptt_writer *w, unsigned kind, uint64_t pos, const uint32_t *words, uint32_t nwords);

/* After the END block, the index of the META and snapshot blocks, its offset in its last record. */
static int put_index(struct ptt_writer *w)
{
	uint64_t at = w->bytes;
	w->snap_used = 0;
	w->snap_bad = 0;
	w->snap_ticks = 0;
	for (size_t i = 0; i < w->nidx; i++) {
		uint32_t e[4] = { (uint32_t)w->idx[i].off, (uint32_t)(w->idx[i].off >> 32), (uint32_t)w->idx[i].ticks,
				  (uint32_t)(w->idx[i].ticks >> 32) };
		snap_wrap(w, w->idx[i].kind, w->idx[i].pos, e, 4);
	}
	snap_wrap(w, PTT_SNAP_INDEX_END, at, NULL, 0);
	if (w->snap_bad)
		return 0; /* too large: readers walk the block headers */
	int z = w->zlevel;
	w->zlevel = 0; /* stored as is: its last record is found from the file's end */
	int rc = put_block(w, PTT_BLOCK_EVENTS, PTT_BLOCK_SNAPSHOT, w->snap, w->snap_used * 4, 0, 0, 0, 0);
	w->zlevel = z;
	return rc;
}

int ptt_writer_end(struct ptt_writer *w, const char *lines, size_t len)
{
	int rc = ptt_writer_flush(w);
	if (!rc)
		rc = ptt_writer_sync(w);
	if (!rc)
		rc = put_block(w, PTT_BLOCK_END, 0, lines, len, 0, 0, 0, 0);
	if (!rc && w->nsnaps)
		rc = put_index(w);
	return rc;
}

uint64_t ptt_writer_bytes(const struct ptt_writer *w) { return __atomic_load_n(&w->bytes, __ATOMIC_RELAXED); }

int ptt_writer_switch(struct ptt_writer *w, int fd)
{
	int rc = ptt_writer_flush(w);
	if (!rc)
		rc = ptt_writer_sync(w);
	if (rc)
		return rc;
	w->fd = fd;
	w->header_done = 0;
	w->bytes = 0;
	w->nidx = w->nsnaps = 0;
	return w->as ? file_header(w) : 0; /* the thread only appends blocks */
}
uint64_t ptt_writer_events(const struct ptt_writer *w) { return w->events; }

int ptt_writer_close(struct ptt_writer *w)
{
	if (!w)
		return 0;
	int rc = 0;
	struct async *a = w->as;
	if (a) { /* blocks still queued are written (ptt_writer_end has synced already, as a rule) */
		pthread_mutex_lock(&a->mu);
		a->stop = 1;
		pthread_cond_broadcast(&a->cv);
		pthread_mutex_unlock(&a->mu);
		pthread_join(a->thread, NULL);
		rc = a->err;
		for (unsigned i = 0; i < a->nspare; i++)
			free(a->spare[i]);
		pthread_mutex_destroy(&a->mu);
		pthread_cond_destroy(&a->cv);
		free(a);
	}
	if (w->zs_ready)
		deflateEnd(&w->zs);
	free(w->buf);
	free(w->zbuf);
	free(w->snap);
	free(w->idx);
	free(w);
	return rc;
}

/* Append one pad record wrapping words (see PTT_SNAP_MAGIC in ptt_trace.h). */
static void snap_wrap(struct ptt_writer *w, unsigned kind, uint64_t pos, const uint32_t *words, uint32_t nwords)
{
	uint32_t n = PTT_SNAP_WRAP_WORDS + nwords;
	if (w->snap_bad || n > PTT_REC_MAX_WORDS || (w->snap_used + n) * 4 > 4 * PTT_BLOCK_MAX_PAYLOAD) {
		w->snap_bad = 1;
		return;
	}
	if (w->snap_used + n > w->snap_cap) {
		size_t cap = (w->snap_used + n) * 2;
		uint32_t *nb = realloc(w->snap, cap * 4);
		if (!nb) {
			w->snap_bad = 1;
			return;
		}
		w->snap = nb;
		w->snap_cap = cap;
	}
	uint32_t *r = w->snap + w->snap_used;
	r[0] = ptt_rec_word0(PTT_EV_PAD, n);
	r[1] = (uint32_t)w->snap_ticks;
	r[2] = (uint32_t)(w->snap_ticks >> 32);
	r[3] = r[4] = 0;
	r[5] = PTT_SNAP_MAGIC;
	r[6] = kind;
	r[7] = (uint32_t)pos;
	r[8] = (uint32_t)(pos >> 32);
	if (nwords)
		memcpy(r + 9, words, (size_t)nwords * 4);
	r[n - 1] = ptt_rec_checksum(r, n - 1);
	w->snap_used += n;
}

int ptt_writer_snapshot_begin(struct ptt_writer *w, uint64_t pos, uint64_t ticks)
{
	w->snap_used = 0;
	w->snap_bad = 0;
	w->snap_ticks = ticks;
	snap_wrap(w, 0, pos, NULL, 0);
	return w->snap_bad ? PTT_E_NOMEM : 0;
}

int ptt_writer_snapshot_add(struct ptt_writer *w, unsigned kind, uint64_t pos, const uint32_t *words, uint32_t nwords)
{
	snap_wrap(w, kind, pos, words, nwords);
	return 0; /* a failure is told by ptt_writer_snapshot_end */
}

int ptt_writer_snapshot_end(struct ptt_writer *w)
{
	int rc = ptt_writer_flush(w); /* the snapshot follows the events it sums up */
	if (!rc)
		rc = ptt_writer_sync(w);
	if (rc)
		return rc;
	if (w->snap_bad)
		return PTT_E_BADRECORD;
	rc = file_header(w);
	if (rc)
		return rc;
	index_block(w, PTT_SNAP_INDEX_SNAPSHOT, ((uint64_t)w->snap[8] << 32) | w->snap[7], w->snap_ticks);
	w->nsnaps++;
	return put_block(w, PTT_BLOCK_EVENTS, PTT_BLOCK_SNAPSHOT, w->snap, w->snap_used * 4, 0, 0, w->snap_ticks,
			 w->snap_ticks);
}

/* writer.c - the binary trace writer: file header, META/EVENTS/END blocks. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include "ptt_trace.h"
#include "compact.h"

#define BLOCK_TARGET (64u * 1024u) /* payload bytes per EVENTS block */
#define BLOCK_BUF (BLOCK_TARGET + CPT_MAX_BYTES + 64) /* a plain record (1020 bytes) or a coded one past the target */
/* a compact block is cut at BLOCK_TARGET coded bytes, or when its records take this many once expanded
 * (what a reader holds for it) */
#define COMPACT_RAW_TARGET (512u * 1024u)
/*
 * Bytes gathered before one write(2): the blocks and headers go out in
 * writes of about 1 MiB rather than two (a header, a 64 KiB payload) per
 * block.  In ext4's page cache a write's cost is mostly per call and per
 * folio, and a 1 MiB write takes larger folios: measured on this kernel
 * (6.18), 220 MB as 48 B + 64 KiB pairs cost 85-110 ms of system time, as
 * 1 MiB writes 45-60 ms, the copy into this buffer included: some 8 ns of
 * the recorder's time per 44-byte event.  What is gathered goes out on
 * every ptt_writer_flush (the recorder calls it at least every 100 ms, and
 * on every pass to stdout), _sync, _switch, _end and _close.  Only for a
 * regular file: a pipe or FIFO gets every block at once, as before.
 */
#define OUT_BUF (1024u * 1024u) /* mapped by big_grow */
/* A payload this large goes to the file from where it lies (one more write(2), no copy): the
 * coded streams' spans (--streams=coded), whose copy into the gathered bytes was 17 % of the
 * recorder's processor time on sqlite3 (perf) */
#define DIRECT_MIN (64u * 1024u)
/* A coded span this large whose bytes are also a file's (ptt_writer_coded_at) is copied file to file */
#define SRC_MIN 4096u
#define PREALLOC_AHEAD (1024u * 1024u) /* a regular file's blocks allocated this far past its writes: prealloc */
/* blocks being filled, queued or compressed (ptt_writer_async): 2 MiB, so that an idle-priority
 * compressor catches up in the gaps of a busy run before its blocks must go raw */
#define ASYNC_BUFS 32
/* the buffers of coded blocks (ptt_writer_coded: up to 1 MiB each, copied into buffers of their own,
 * a power of two from 64 KiB) queued and kept for the next ones, in all: past it the oldest blocks
 * are written, raw where the thread has not reached them, and a written block's buffer is freed */
#define ASYNC_CODED_BYTES (8u * 1024u * 1024u)
/* kept, at most (a buffer malloc'd and freed per block cost the recorder an mmap, its page faults and
 * an munmap: 2-3 ns an event on sqlite3) */
#define ASYNC_BIG_SPARES 16

/*
 * One compressor's state, kept from block to block: the writer's own and
 * the async thread's (deflateInit or a zstd context per block allocated and
 * cleared some 270 KiB of tables per 64 KiB block).
 */
struct zctx {
	z_stream zs;
	int zs_ready;
	ZSTD_CCtx *cc;
	int cc_level;
	uint32_t *pack; /* the packed copy of an EVENTS block: the block itself is never changed */
	size_t pack_cap;
	unsigned char *out;
	size_t out_cap;
};

/* A full EVENTS block in the queue of ptt_writer_async. */
enum { Q_WAIT, Q_WORK, Q_DONE };
struct queued {
	uint32_t *buf;
	size_t used;
	uint32_t count, lost;
	uint64_t first, last;
	uint64_t seq;        /* which block the slot holds now: the thread's result is for this one only */
	int state;
	unsigned char *z;    /* Q_DONE: the compressed payload (zflags 0: store raw) */
	size_t zlen, zcap;
	unsigned zflags;
	uint16_t compact;    /* PTT_BLOCK_COMPACT (| PTT_BLOCK_CODED): its records coded, compressed as they are */
	size_t own;          /* not 0: buf is a coded block's copy (queue_coded) of this capacity, not a spare */
	uint16_t kind;       /* PTT_BLOCK_EVENTS, or PTT_BLOCK_MARK (never compressed) */
	uint32_t stream;     /* the block header's stream (ptt_writer_span) */
};

/*
 * ptt_writer_async: a thread of the writer's own compresses queued EVENTS
 * blocks, oldest first; the caller writes every block, in order, when it
 * queues the next: compressed if the thread is done with it, raw if the
 * caller needs its buffer back first (the thread behind).  So compression
 * never makes the caller wait, and the file's order and offsets are the
 * ones a synchronous writer makes.  The lock guards the queue, the spares
 * and the slots' states; a slot in Q_WORK belongs to the thread (its buf is
 * only read, by both), one in Q_DONE to the caller.
 */
struct async {
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct queued q[ASYNC_BUFS];
	unsigned head, len;
	uint64_t seq;
	uint32_t *spare[ASYNC_BUFS];
	unsigned nspare;
	size_t coded_bytes, big_bytes; /* the capacities of the queued coded blocks' buffers, of those kept */
	/* an own buffer the caller writes raw while the thread reads it (write_head), and the one the
	 * thread let go meanwhile: the caller releases it once written (buf_release) */
	uint32_t *writing, *orphan;
	struct { uint32_t *buf; size_t cap; } big[ASYNC_BIG_SPARES]; /* coded blocks' buffers, free */
	unsigned nbig;
	int stop;
	int comp, level;
	struct zctx z; /* the thread's */
};

struct ptt_writer {
	int fd;
	int zlevel;
	int comp;
	int header_done;
	int compact;   /* EVENTS blocks in the compact form (ptt_writer_set_compact), compressed as they are with -z */
	int streams;   /* per-stream spans and MARK blocks (ptt_writer_set_streams): 1 version 3; 2 (PTT_STREAMS_CODED)
			* coded streams' blocks too (ptt_writer_coded), version 4 */
	uint32_t stream; /* the current block's stream (0: merged records) */
	/* ptt_writer_coded_at: its bytes (src) are also the file src_fd's at src_off */
	const void *src;
	int src_fd, no_sendfile; /* no_sendfile: sendfile(2) could not, once: never again */
	uint64_t src_off;
	uint16_t kind;   /* the current block's kind: PTT_BLOCK_EVENTS, or PTT_BLOCK_MARK while one is queued */
	struct ptt_compact *cpt;
	size_t raw_used; /* compact: bytes of the block's records once expanded */
	uint32_t *buf; /* pending EVENTS payload */
	unsigned char *payload; /* where the block's records go: buf, or (uncompressed, synchronous) out, after
				 * room for the block's header, so that they are copied once on their way to write(2) */
	unsigned char *out; /* bytes counted as written but not yet handed to write(2) (OUT_BUF) */
	size_t out_used;
	int gather;         /* the fd is a regular file: gather into out (a pipe's reader sees each block at once) */
	/* a regular file: where the next write(2) goes, and how far ahead its blocks are allocated (prealloc) */
	uint64_t off, alloc_end;
	size_t used;   /* bytes in buf */
	uint32_t count, lost;
	uint64_t first, last;
	struct zctx z;
	struct async *as;
	uint64_t bytes, events;
	uint64_t blocks, behind; /* EVENTS blocks written; stored raw because the thread was behind */
	/* the snapshot being built (ptt_writer_snapshot_*) */
	uint32_t *snap;
	size_t snap_used, snap_cap; /* words */
	uint64_t snap_ticks;
	int snap_bad;
	/* ptt_writer_hold: the bytes held back, from the file header on, until ptt_writer_unhold */
	unsigned char *held;
	size_t held_used, held_cap;
	int holding;
	/* the index written after the END block when there are snapshots: META and snapshot blocks */
	struct { uint64_t off, pos, ticks; uint32_t kind; } *idx;
	size_t nidx, idx_cap, nsnaps;
};

/* Remember a block about to be written at the current offset (kind PTT_SNAP_INDEX_*). */
static void index_block(struct ptt_writer *w, uint32_t kind, uint64_t pos, uint64_t ticks)
{
	if (PTT_GROW(w->idx, &w->idx_cap, w->nidx + 1) != 0)
		return; /* the index is an aid: without it, readers walk the block headers */
	w->idx[w->nidx].off = w->bytes;
	w->idx[w->nidx].pos = pos;
	w->idx[w->nidx].ticks = ticks;
	w->idx[w->nidx++].kind = kind;
}

/*
 * Allocate a regular file's blocks ahead of its writes, as ext4 would one
 * write at a time (delayed allocation: a reservation per block, buffer
 * heads per folio): measured here (kernel 6.18, ext4), 64 MiB written in
 * 1 MiB pieces cost 205-240 ns of system time a KiB, 140-155 with the
 * space allocated 1, 4, 8 or 16 MiB at a time (the fallocate included).
 * 1 MiB ahead of the write: what is left past the file's end is small, and
 * prealloc_trim gives it back (FALLOC_FL_KEEP_SIZE leaves the size to the
 * writes).  Where the file system cannot (NFS, some FUSE), nothing changes.
 */
static void prealloc(struct ptt_writer *w, size_t n)
{
	if (w->off + n <= w->alloc_end || w->alloc_end == UINT64_MAX)
		return;
	uint64_t from = w->alloc_end > w->off ? w->alloc_end : w->off, to = w->off + n + PREALLOC_AHEAD;
	if (fallocate(w->fd, FALLOC_FL_KEEP_SIZE, (off_t)from, (off_t)(to - from)) != 0)
		w->alloc_end = UINT64_MAX; /* not here: write as before */
	else
		w->alloc_end = to;
}

/* Where the writes to fd begin: their blocks are allocated from there on (prealloc). */
static void prealloc_at(struct ptt_writer *w)
{
	off_t o = w->gather ? lseek(w->fd, 0, SEEK_CUR) : -1;
	w->off = w->alloc_end = o < 0 ? UINT64_MAX : (uint64_t)o;
}

/* Give back the blocks allocated past the file's end (its size, not what this writer wrote, is kept). */
static void prealloc_trim(struct ptt_writer *w)
{
	struct stat st;
	if (w->alloc_end != UINT64_MAX && w->alloc_end > w->off && fstat(w->fd, &st) == 0 &&
	    ftruncate(w->fd, st.st_size) == 0)
		w->alloc_end = w->off;
}

/*
 * Memory of the writer's own that each byte goes through once (the bytes
 * gathered for write(2), what is held back): mapped, its pages left to
 * come by faults as the bytes reach them.  Held back, it grows by mremap
 * (no copy).  Making the pages at once (MADV_POPULATE_WRITE) saved no time
 * a page here (1.1 us a page either way, zeroing included) and made pages a
 * short program never used: 0.6 ms a MiB at every recorder's start, a
 * quarter of its fixed cost (doc/recorder.md, section 5).
 */
#define BIG_STEP (1024u * 1024u)
static void *big_grow(void *old, size_t oldn, size_t n)
{
	unsigned char *p = old ? mremap(old, oldn, n, MREMAP_MAYMOVE)
			       : mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

static void big_free(void *p, size_t n)
{
	if (p)
		munmap(p, n);
}

static int write_fd(struct ptt_writer *w, const void *p, size_t n, int count)
{
	if (w->holding) {
		size_t cap = w->held_cap;
		if (cap < w->held_used + n) {
			while (cap < w->held_used + n)
				cap += BIG_STEP;
			unsigned char *nb = big_grow(w->held, w->held_cap, cap);
			if (!nb)
				return PTT_E_NOMEM;
			w->held = nb;
			w->held_cap = cap;
		}
		memcpy(w->held + w->held_used, p, n);
		w->held_used += n;
		if (count)
			__atomic_fetch_add(&w->bytes, (uint64_t)n, __ATOMIC_RELAXED);
		return 0;
	}
	const char *c = p;
	if (w->gather)
		prealloc(w, n);
	while (n) {
		ssize_t k = write(w->fd, c, n);
		if (k < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		c += k;
		n -= (size_t)k;
		w->off += (uint64_t)k;
		if (count)
			__atomic_fetch_add(&w->bytes, (uint64_t)k, __ATOMIC_RELAXED); /* read by another thread (rotation) */
	}
	return 0;
}

static int flush_block(struct ptt_writer *w);

/* An EVENTS block being filled in place among the gathered bytes (block_start) is
 * closed before anything else is gathered or written: the bytes stay in order. */
static inline int close_in_place(struct ptt_writer *w)
{
	return w->count && w->payload != (unsigned char *)w->buf ? flush_block(w) : 0;
}

/* Hand what is gathered to write(2) (its bytes were counted when gathered). */
static int out_push(struct ptt_writer *w)
{
	int rc = close_in_place(w);
	if (rc)
		return rc;
	size_t n = w->out_used;
	w->out_used = 0;
	return n ? write_fd(w, w->out, n, 0) : 0;
}

/*
 * n bytes that are also the file src_fd's at off, copied file to file
 * (ptt_writer_coded_at): 0, or 1 when sendfile(2) copied nothing (the bytes
 * are then written from memory), or an error after a part was copied.
 * Measured here (kernel 6.18, a paravirtual guest), 64 MiB from a memfd to
 * ext4 in 64 KiB pieces: sendfile 0.41-0.52 ns a byte; write(2) from a
 * mapping of the memfd 0.27-0.31 once this process has touched its pages,
 * 1.56-1.81 before (a fault a page: the recorder touches each page of a
 * ring's first lap once, the whole trace of a short run).
 */
static int copy_from_file(struct ptt_writer *w, int src_fd, uint64_t off, size_t n)
{
	int copied = 0;
	while (n) {
		off_t o = (off_t)off;
		ssize_t k = sendfile(w->fd, src_fd, &o, n);
		if (k <= 0) {
			if (k < 0 && errno == EINTR)
				continue;
			if (!copied) /* not this source (a pipe: ESPIPE; no splice: EINVAL), or the output's error,
				      * which a write(2) of the bytes from memory meets again and reports */
				return 1;
			return k < 0 ? -errno : -EIO;
		}
		copied = 1;
		off += (uint64_t)k;
		n -= (size_t)k;
		w->off += (uint64_t)k;
		__atomic_fetch_add(&w->bytes, (uint64_t)k, __ATOMIC_RELAXED);
	}
	return 0;
}

/*
 * n bytes into dst, read from the file they are also in (ptt_writer_coded_at: pread, not through this
 * process's mapping of them, for the reason copy_from_file gives), else copied from memory.  Short
 * spans too: node's coded recorder gathers many spans of under 4 KiB from rings' first laps, and
 * touching their pages cost it 78 page faults a run of 60 us each here; read with pread, its
 * processor time was 0.88 of the copy's (20 interleaved pairs, 17 lower; CPython and sqlite3 1.00
 * and 1.02 of 10, the program's time unchanged).
 */
static void copy_in(struct ptt_writer *w, void *dst, const void *bytes, size_t n)
{
	size_t got = 0;
	if (bytes == w->src && !w->no_sendfile)
		while (got < n) {
			ssize_t k = pread(w->src_fd, (char *)dst + got, n - got, (off_t)(w->src_off + got));
			if (k < 0 && errno == EINTR)
				continue;
			if (k <= 0)
				break;
			got += (size_t)k;
		}
	if (got < n)
		memcpy((char *)dst + got, (const char *)bytes + got, n - got);
}

/* Write n bytes after every byte before them: gathered, or at once when large. */
static int write_all(struct ptt_writer *w, const void *p, size_t n)
{
	int rc = close_in_place(w);
	if (rc)
		return rc;
	if (p == w->src && w->gather && !w->holding && n >= SRC_MIN) { /* file to file (ptt_writer_coded_at) */
		if ((rc = out_push(w)) != 0)
			return rc;
		prealloc(w, n);
		if ((rc = copy_from_file(w, w->src_fd, w->src_off, n)) <= 0)
			return rc;
		w->no_sendfile = 1; /* from memory, from now on */
	}
	if (!w->gather)
		return write_fd(w, p, n, 1);
	if (n >= DIRECT_MIN) { /* written from where it lies, after the bytes gathered before it */
		rc = out_push(w);
		return rc ? rc : write_fd(w, p, n, 1);
	}
	if (w->out_used + n > OUT_BUF) {
		rc = out_push(w);
		if (rc)
			return rc;
		if (n >= OUT_BUF / 2)
			return write_fd(w, p, n, 1);
	}
	copy_in(w, w->out + w->out_used, p, n);
	w->out_used += n;
	__atomic_fetch_add(&w->bytes, (uint64_t)n, __ATOMIC_RELAXED);
	return 0;
}

/* Gather only for a regular file: a pipe (-o -, a FIFO) gets each block as it is made, so its
 * reader is not kept waiting and a reader that stops holds the writer back at once. */
static int is_file(int fd)
{
	struct stat st;
	return fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
}

int ptt_writer_open(struct ptt_writer **wp, int fd, int zlevel)
{
	struct ptt_writer *w = calloc(1, sizeof *w);
	if (!w)
		return PTT_E_NOMEM;
	w->fd = fd;
	w->gather = is_file(fd);
	prealloc_at(w);
	w->zlevel = zlevel < 0 ? 0 : zlevel > PTT_ZLEVEL_FAST ? 9 : zlevel;
	w->comp = PTT_COMP_ZSTD;
	w->buf = malloc(BLOCK_BUF);
	w->payload = (unsigned char *)w->buf;
	w->out = big_grow(NULL, 0, OUT_BUF);
	if (!w->buf || !w->out) {
		free(w->buf);
		big_free(w->out, OUT_BUF);
		free(w);
		return PTT_E_NOMEM;
	}
	*wp = w;
	return 0;
}

int ptt_writer_set_compressor(struct ptt_writer *w, int comp)
{
	if (comp != PTT_COMP_ZSTD && comp != PTT_COMP_ZLIB)
		return -EINVAL;
	w->comp = comp;
	if (w->as)
		w->as->comp = comp;
	return 0;
}

int ptt_writer_set_compact(struct ptt_writer *w, int on)
{
	if (!on || w->header_done) {
		w->compact = 0;
		return on ? -EINVAL : 0;
	}
	if (!w->cpt && !(w->cpt = calloc(1, sizeof *w->cpt)))
		return PTT_E_NOMEM;
	w->compact = 1;
	return 0;
}

int ptt_writer_set_streams(struct ptt_writer *w, int on)
{
	if (w->header_done || (on && w->compact))
		return -EINVAL;
	w->streams = on == PTT_STREAMS_CODED ? 2 : on != 0;
	return 0;
}

void ptt_writer_block_counts(const struct ptt_writer *w, uint64_t *blocks, uint64_t *behind)
{
	*blocks = w->blocks;
	*behind = w->behind;
}

static void zctx_free(struct zctx *z)
{
	if (z->zs_ready)
		deflateEnd(&z->zs);
	ZSTD_freeCCtx(z->cc);
	free(z->pack);
	free(z->out);
}

static int grow(void *pp, size_t *cap, size_t n)
{
	if (n <= *cap)
		return 0;
	void *nb = realloc(*(void **)pp, n);
	if (!nb)
		return PTT_E_NOMEM;
	*(void **)pp = nb;
	*cap = n;
	return 0;
}

/*
 * Compress len bytes at payload into z->out with comp at level, packing
 * them first (in z's copy: payload is only read) when pack is set.  0 with
 * *flags the block's compression flags and *zlen the stored length, or
 * flags 0 when compression would not make the block smaller (stored raw);
 * a negative code on failure.
 */
/* ptt-record's bare -z with zstd: on CPython under load, -z time / default time 0.997 against 1.053 at
 * level 1 (12 paired rounds), files about a fifth larger */
#define ZSTD_FAST_LEVEL (-3)

static int compress_payload(struct zctx *z, int comp, int level, const void *payload, size_t len, int pack,
			    uint64_t first, size_t *zlen, unsigned *flags)
{
	if (level == PTT_ZLEVEL_FAST) /* zstd's negative levels trade a little size for much less processor time */
		level = comp == PTT_COMP_ZLIB ? 1 : ZSTD_FAST_LEVEL;
	*flags = 0;
	*zlen = len;
	const void *src = payload;
	if (pack) {
		if (grow(&z->pack, &z->pack_cap, len))
			return PTT_E_NOMEM;
		memcpy(z->pack, payload, len);
		ptt_block_pack(z->pack, len / 4, first);
		src = z->pack;
	}
	size_t cap = comp == PTT_COMP_ZLIB ? compressBound((uLong)len) : ZSTD_compressBound(len);
	if (grow(&z->out, &z->out_cap, cap))
		return PTT_E_NOMEM;
	size_t n;
	if (comp == PTT_COMP_ZLIB) {
		int zrc = z->zs_ready ? deflateReset(&z->zs) : deflateInit(&z->zs, level);
		z->zs_ready = zrc == Z_OK;
		if (zrc != Z_OK)
			return PTT_E_ZLIB;
		z->zs.next_in = (Bytef *)(uintptr_t)src;
		z->zs.avail_in = (uInt)len;
		z->zs.next_out = z->out;
		z->zs.avail_out = (uInt)cap;
		if (deflate(&z->zs, Z_FINISH) != Z_STREAM_END)
			return PTT_E_ZLIB;
		n = z->zs.total_out;
	} else {
		if (!z->cc && !(z->cc = ZSTD_createCCtx()))
			return PTT_E_NOMEM;
		if (z->cc_level != level) {
			/* the frame's checksum stands in for the packed records' own (ptt-trace(5)) */
			if (ZSTD_isError(ZSTD_CCtx_setParameter(z->cc, ZSTD_c_compressionLevel, level)) ||
			    ZSTD_isError(ZSTD_CCtx_setParameter(z->cc, ZSTD_c_checksumFlag, 1)))
				return PTT_E_ZLIB;
			z->cc_level = level;
		}
		n = ZSTD_compress2(z->cc, z->out, cap, src, len);
		if (ZSTD_isError(n))
			return PTT_E_ZLIB;
	}
	if (n < len) {
		*zlen = n;
		*flags = (comp == PTT_COMP_ZLIB ? PTT_BLOCK_ZLIB : PTT_BLOCK_ZSTD) | (pack ? PTT_BLOCK_PACKED : 0);
	}
	return 0;
}

static int file_header(struct ptt_writer *w)
{
	if (w->header_done)
		return 0;
	struct ptt_file_header h;
	memcpy(h.magic, PTT_FILE_MAGIC, 8);
	/* readers of version 1 read what is neither compact nor in streams, of version 3 streams not coded */
	h.version = w->streams == 2 ? PTT_FORMAT_VERSION
		    : w->streams    ? PTT_FORMAT_VERSION_STREAMS
		    : w->compact    ? PTT_FORMAT_VERSION_COMPACT
				    : PTT_FORMAT_VERSION_PLAIN;
	h.byte_order = PTT_BYTE_ORDER_MARK;
	w->header_done = 1;
	return write_all(w, &h, sizeof h);
}

/* Complete a block's header h (all but the lengths and header crc). */
static void seal_header(struct ptt_writer *w, struct ptt_block_header *h, size_t raw_len, size_t stored)
{
	h->magic = PTT_BLOCK_MAGIC;
	h->raw_len = (uint32_t)raw_len;
	h->payload_len = (uint32_t)stored;
	h->header_crc = (uint32_t)crc32(0, (const Bytef *)h, offsetof(struct ptt_block_header, header_crc));
	if (h->kind == PTT_BLOCK_EVENTS && !(h->flags & PTT_BLOCK_SNAPSHOT))
		w->blocks++;
}

/* Write a block: its header h (all but the lengths and header crc) and the stored payload. */
static int write_block(struct ptt_writer *w, struct ptt_block_header *h, size_t raw_len, const void *data, size_t stored)
{
	int rc = file_header(w);
	if (rc)
		return rc;
	seal_header(w, h, raw_len, stored);
	rc = write_all(w, h, sizeof *h);
	return rc ? rc : write_all(w, data, stored);
}

static void events_header(struct ptt_block_header *h, uint32_t count, uint32_t lost, uint64_t first, uint64_t last)
{
	memset(h, 0, sizeof *h);
	h->kind = PTT_BLOCK_EVENTS;
	h->count = count;
	h->lost = lost;
	h->first_ticks = first;
	h->last_ticks = last;
}

/* A block compressed here, now (every block but the EVENTS blocks of ptt_writer_async), of stream. */
static int put_stream_block(struct ptt_writer *w, unsigned kind, unsigned extra_flags, const void *payload, size_t len,
			    uint32_t count, uint32_t lost, uint64_t first, uint64_t last)
{
	struct ptt_block_header h;
	events_header(&h, count, lost, first, last);
	h.kind = (uint16_t)kind;
	h.stream = kind == PTT_BLOCK_EVENTS ? w->stream : 0;
	if (kind == PTT_BLOCK_MARK) {
		h.first_ticks = h.last_ticks = first;
		return write_block(w, &h, len, payload, len);
	}
	if (kind != PTT_BLOCK_EVENTS) {
		/* the text has no record checksums: a flipped digit of clock_hz would shift every time silently */
		h.flags = PTT_BLOCK_CRC;
		h.count = (uint32_t)crc32(0, (const Bytef *)payload, (uInt)len);
	}
	h.flags |= (uint16_t)extra_flags;
	const void *data = payload;
	size_t stored = len;
	if (w->zlevel > 0 && len > 0) {
		int pack = kind == PTT_BLOCK_EVENTS && !extra_flags;
		unsigned zflags;
		int rc = compress_payload(&w->z, w->comp, w->zlevel, payload, len, pack, first, &stored, &zflags);
		if (rc)
			return rc;
		if (zflags)
			data = w->z.out;
		h.flags |= (uint16_t)zflags;
	}
	return write_block(w, &h, len, data, stored);
}

static int put_block(struct ptt_writer *w, unsigned kind, unsigned extra_flags, const void *payload, size_t len,
		     uint32_t count, uint32_t lost, uint64_t first, uint64_t last)
{
	return put_stream_block(w, kind, extra_flags, payload, len, count, lost, first, last);
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

/*
 * Where a new EVENTS block's records go.  Uncompressed and synchronous:
 * straight into the gathered bytes, after room for the block's header,
 * which flush_block fills in; nothing else is gathered meanwhile (every
 * other block is written after a flush of this one).  Otherwise buf.
 */
static int block_start(struct ptt_writer *w)
{
	w->payload = (unsigned char *)w->buf;
	if (w->as || w->zlevel > 0 || !w->gather)
		return 0;
	int rc = file_header(w);
	if (!rc && w->out_used + sizeof(struct ptt_block_header) + BLOCK_BUF > OUT_BUF)
		rc = out_push(w);
	if (!rc)
		w->payload = w->out + w->out_used + sizeof(struct ptt_block_header);
	return rc;
}

/* ptt_writer_record for a compact writer: the record coded into the block (compact.h). */
static int record_compact(struct ptt_writer *w, const uint32_t *words, uint32_t nwords)
{
	if (__builtin_expect(nwords < PTT_REC_MIN_WORDS || nwords > PTT_REC_MAX_WORDS, 0))
		return PTT_E_BADRECORD; /* no record: the coding has no form for it */
	if (w->used >= BLOCK_TARGET || w->raw_used >= COMPACT_RAW_TARGET) {
		int rc = flush_block(w);
		if (rc)
			return rc;
	}
	uint64_t ticks = ptt_rec_ticks(words);
	if (w->count == 0) {
		int rc = block_start(w);
		if (rc)
			return rc;
		w->first = ticks;
		cpt_reset(w->cpt, ticks);
		w->used = 4; /* the expanded length, set by flush_block */
		w->raw_used = 0;
	}
	w->last = ticks;
	if (__builtin_expect(ptt_rec_id(words[0]) == PTT_EV_REC_LOST, 0) && nwords >= 9)
		w->lost += words[6];
	w->used = (size_t)(cpt_encode(w->cpt, w->payload + w->used, words, nwords) - w->payload);
	w->raw_used += (size_t)nwords * 4;
	w->count++;
	w->events++;
	return 0;
}

int ptt_writer_record(struct ptt_writer *w, const uint32_t *words, uint32_t nwords)
{
	if (w->compact)
		return record_compact(w, words, nwords);
	if (w->used >= BLOCK_TARGET) {
		int rc = flush_block(w);
		if (rc)
			return rc;
	}
	if (w->count == 0) {
		int rc = block_start(w);
		if (rc)
			return rc;
	}
	uint64_t ticks = ptt_rec_ticks(words);
	if (w->count == 0)
		w->first = ticks;
	w->last = ticks;
	if (ptt_rec_id(words[0]) == PTT_EV_REC_LOST && nwords >= 9)
		w->lost += words[6]; /* count, low word; lost counts beyond 2^32 per record do not occur */
	memcpy(w->payload + w->used, words, (size_t)nwords * 4);
	w->used += (size_t)nwords * 4;
	w->count++;
	w->events++;
	return 0;
}

static int queue_block(struct ptt_writer *w);
static int queue_coded(struct ptt_writer *w, uint32_t stream, const void *bytes, size_t n, uint32_t count,
		       uint64_t first, uint64_t last);

int ptt_writer_span(struct ptt_writer *w, uint32_t stream, const uint32_t *words, size_t nwords, uint32_t count,
		    uint64_t first, uint64_t last, uint32_t lost)
{
	size_t bytes = nwords * 4;
	if (!w->streams || !stream || bytes > BLOCK_TARGET)
		return -EINVAL; /* the caller cuts a span at records, a block's size at most */
	if (w->count && (w->stream != stream || w->used + bytes > BLOCK_TARGET)) {
		int rc = flush_block(w);
		if (rc)
			return rc;
	}
	if (!count)
		return 0;
	if (w->count == 0) {
		int rc = block_start(w);
		if (rc)
			return rc;
		w->first = first;
		w->stream = stream;
	}
	w->last = last;
	w->lost += lost;
	memcpy(w->payload + w->used, words, bytes);
	w->used += bytes;
	w->count += count;
	w->events += count;
	return 0;
}

int ptt_writer_coded(struct ptt_writer *w, uint32_t stream, const void *bytes, size_t n, uint32_t count,
		     uint64_t first, uint64_t last)
{
	if (w->streams != 2 || !stream || n > PTT_BLOCK_MAX_PAYLOAD)
		return -EINVAL; /* a file that says version 3 has no coded block */
	int rc = flush_block(w);
	if (rc || !n)
		return rc;
	if (w->as) { /* after the blocks queued before it, as every block of its stream */
		rc = queue_coded(w, stream, bytes, n, count, first, last);
		if (!rc)
			w->events += count;
		return rc;
	}
	w->stream = stream;
	rc = put_stream_block(w, PTT_BLOCK_EVENTS, PTT_BLOCK_COMPACT | PTT_BLOCK_CODED, bytes, n, count, 0, first, last);
	w->stream = 0;
	w->events += count;
	return rc;
}

int ptt_writer_coded_at(struct ptt_writer *w, uint32_t stream, const void *bytes, size_t n, int fd, uint64_t off,
			uint32_t count, uint64_t first, uint64_t last)
{
	if (fd < 0 || w->no_sendfile)
		return ptt_writer_coded(w, stream, bytes, n, count, first, last);
	w->src = bytes;
	w->src_fd = fd;
	w->src_off = off;
	int rc = ptt_writer_coded(w, stream, bytes, n, count, first, last);
	w->src = NULL;
	return rc;
}

int ptt_writer_mark(struct ptt_writer *w, uint64_t ticks)
{
	if (!w->streams)
		return -EINVAL;
	int rc = flush_block(w);
	if (rc)
		return rc;
	if (!w->as)
		return put_block(w, PTT_BLOCK_MARK, 0, &ticks, sizeof ticks, 0, 0, ticks, ticks);
	/* through the queue, so that it follows the blocks queued before it in the file */
	memcpy(w->buf, &ticks, sizeof ticks);
	w->used = sizeof ticks;
	w->count = 0;
	w->lost = 0;
	w->first = w->last = ticks;
	w->kind = PTT_BLOCK_MARK;
	rc = queue_block(w);
	w->kind = 0;
	w->used = 0;
	return rc;
}

/*
 * Whether a run takes the record whose first word is w0, with left words
 * from it on: sound (marked, at least a record's least words, no more than
 * left) and not stopped (ids from nstop on count as marked: ptt_run).
 */
static inline int run_takes(uint32_t w0, size_t left, const uint8_t *stop, uint32_t nstop)
{
	uint32_t n = ptt_rec_len(w0), id = ptt_rec_id(w0);
	return ptt_rec_w0_sound(w0) && n <= left &&
	       id < nstop && !stop[id];
}

/*
 * A thread's records being coded in a run (code_known_thread, merge_compact):
 * its thread (words 3 and 4 as one) and slot, the slot's key
 * (cpt_key(c, 0, slot, 0)), and the two records before in the run, the
 * references they were coded against (NULL: none) and their tags.  A record
 * that repeats the one before the last, its first word and its arguments (a
 * lock taken and released in a loop), whose reference the last did not use,
 * has that reference as it was left, unless a record of another thread
 * merged in between took its place (ptt_writer_merge: its key says so): it
 * codes as cpt_encode_rest codes it, without the look-up.  Its first word
 * is one run_takes took in this run.
 */
struct run_state {
	uint64_t pt, key0;
	uint32_t slot;
	const uint32_t *r2, *r1;
	const struct cpt_ref *ref2, *ref1;
	unsigned tag2, tag1;
};

/* The run of the thread of the record at p, which the block has a slot for: 1, or 0 (a thread new to the block). */
static inline int run_begin(struct ptt_compact *cpt, struct run_state *s, const uint32_t *p)
{
	memcpy(&s->pt, p + 3, 8);
	if (!cpt_thread_known(cpt, p, s->pt))
		return 0;
	s->key0 = cpt->last_key;
	s->slot = cpt->last_slot;
	s->r2 = s->r1 = NULL;
	s->ref2 = s->ref1 = NULL;
	s->tag2 = s->tag1 = 0;
	return 1;
}

/*
 * Code the record at p, first word w0, of left words from it on, at *outp
 * (room for 8 bytes a word of it) if the run takes it (run_takes, not a lost
 * count, of the run's thread, at most max_ticks): 1, *outp and *prev (the
 * block's last time) past it; else 0, nothing written.
 */
static inline __attribute__((always_inline)) int code_one(struct ptt_compact *cpt, struct run_state *s, const uint32_t *p,
							  uint32_t w0, size_t left, const uint8_t *stop, uint32_t nstop,
							  uint64_t max_ticks, unsigned char **outp, uint64_t *prev)
{
	uint32_t n = ptt_rec_len(w0);
	uint64_t tn, ptn;
	const struct cpt_ref *ref;
	unsigned tag;
	memcpy(&tn, p + 1, 8);
	memcpy(&ptn, p + 3, 8);
	/* the call site's low word first (the last argument of most events): where records seldom
	 * repeat the one before the last (sqlite3's, 12 %), the look stops there */
	if (s->r2 && w0 == s->r2[0] && n <= left && p[n - 3] == s->r2[n - 3] && s->ref2 && s->ref2 != s->ref1 &&
	    s->ref2->key == (s->key0 | ptt_rec_idlen(w0)) && cpt_same_args(p + PTT_REC_HDR_WORDS, s->r2 + PTT_REC_HDR_WORDS, n)) {
		if (tn > max_ticks || ptn != s->pt)
			return 0;
		tag = s->tag2 | CPT_REF;
		*outp = cpt_encode_repeat(*outp, tag, w0, prev, tn, p[n - 1]);
		ref = s->ref2;
	} else {
		if (!run_takes(w0, left, stop, nstop) || ptt_rec_id(w0) == PTT_EV_REC_LOST || tn > max_ticks || ptn != s->pt)
			return 0;
		*outp = cpt_encode_rest(cpt, *outp, *outp + 1, s->slot, s->slot, s->key0, prev, p, n, &ref, &tag);
	}
	s->r2 = s->r1;
	s->r1 = p;
	s->ref2 = s->ref1;
	s->ref1 = ref;
	s->tag2 = s->tag1;
	s->tag1 = tag;
	return 1;
}

/*
 * The records of the run s from *pp on while code_one takes them, ending by
 * lim, at most left of them, while the coded bytes are short of out_end:
 * how many; *pp, *outp and *prev (the last one's time) follow.
 */
static inline __attribute__((always_inline)) uint32_t code_span(struct ptt_compact *cpt, struct run_state *s,
								 const uint32_t **pp, const uint32_t *lim,
								 unsigned char **outp, const unsigned char *out_end,
								 const uint8_t *stop, uint32_t nstop, uint64_t max_ticks,
								 uint32_t left, uint64_t *prev)
{
	const uint32_t *p = *pp;
	unsigned char *out = *outp;
	uint32_t did = 0;
	if (out >= out_end)
		return 0;
	/* one bound for the records' words: at most left records (each of PTT_REC_MIN_WORDS words at
	 * least), and coded bytes short of out_end (a record of n words codes to 4 n + 2 bytes at most,
	 * its thread known: < 8 bytes a word) */
	size_t room = lim > p ? (size_t)(lim - p) : 0, most = (size_t)(out_end - out) >> 3;
	if (room > most)
		room = most;
	if ((size_t)left * PTT_REC_MIN_WORDS < room)
		room = (size_t)left * PTT_REC_MIN_WORDS;
	lim = p + room;
	while (lim - p >= PTT_REC_MIN_WORDS) {
		uint32_t w0 = p[0];
		if (!code_one(cpt, s, p, w0, (size_t)(lim - p), stop, nstop, max_ticks, &out, prev))
			break;
		p += ptt_rec_len(w0);
		did++;
	}
	*pp = p;
	*outp = out;
	return did;
}

/*
 * The common case of a run, in a loop of its own: records of one thread that
 * the block has a slot for (slot_of finds it), built-in, sound, ending by lim
 * (the block's raw limit or the run's end: what goes past it, the loop below
 * sees), while the block's coded bytes are short of out_end, each coded as
 * cpt_encode codes it.  The first that is not, it leaves to run_compact's
 * loop, which sees it afresh.  Returns how many it coded (at most left);
 * *pp, *outp and *ts (the last one's time) follow.
 */
static __attribute__((noinline)) uint32_t code_known_thread(struct ptt_compact *cpt, const uint32_t **pp, const uint32_t *lim,
							    unsigned char **outp, const unsigned char *out_end,
							    const uint8_t *stop, uint32_t nstop, uint64_t max_ticks,
							    uint32_t left, uint64_t *ts)
{
	struct run_state s;
	if (*outp >= out_end || lim - *pp < PTT_REC_MIN_WORDS || !run_begin(cpt, &s, *pp))
		return 0; /* a thread new to the block: cpt_encode's */
	uint64_t prev = cpt->prev_ts;
	uint32_t did = code_span(cpt, &s, pp, lim, outp, out_end, stop, nstop, max_ticks, left, &prev);
	if (did)
		cpt->prev_ts = *ts = prev;
	return did;
}

/*
 * ptt_writer_run for a compact writer: the loop of record_compact with the
 * block's state in registers; a block's end or start goes through
 * record_compact itself, so blocks are cut where one record at a time cuts them.
 */
static int run_compact(struct ptt_writer *w, struct ptt_run *run)
{
	/* in locals: the coded bytes' stores may alias anything, and would have them read again */
	const uint32_t *p = run->words, *end = p + run->nwords;
	const uint8_t *stop = run->stop;
	uint32_t nstop = run->nstop, k = 0, slow = 0, max = run->max_records;
	uint64_t ts = 0, max_ticks = run->max_ticks, t = 0;
	int rc = 0, past = 0;
	struct ptt_compact *cpt = w->cpt;
	unsigned char *payload = w->payload;
	size_t used = w->used, used_max = w->count ? BLOCK_TARGET : 0; /* a block to begin: record_compact's */
	uint32_t count = w->count;
	/* the block's raw bytes are raw0 + 4 (p - p0): it has room for them up to raw_end */
	const uint32_t *p0 = p, *raw_end;
	size_t raw0 = w->raw_used;
#define RAW_END() (raw0 >= COMPACT_RAW_TARGET ? p0 : p0 + (COMPACT_RAW_TARGET - raw0 + 3) / 4)
	raw_end = RAW_END();
	while (k < max && end - p >= PTT_REC_MIN_WORDS) {
		if (used < used_max) {
			unsigned char *out = payload + used;
			uint32_t did = code_known_thread(cpt, &p, raw_end < end ? raw_end : end, &out, payload + used_max, stop,
							nstop, max_ticks, max - k, &ts);
			used = (size_t)(out - payload);
			count += did;
			k += did;
		}
		if (k == max || end - p < PTT_REC_MIN_WORDS)
			break;
		uint32_t w0 = p[0], n = ptt_rec_len(w0), id = ptt_rec_id(w0);
		if (!run_takes(w0, (size_t)(end - p), stop, nstop))
			break;
		t = ptt_rec_ticks(p);
		if (t > max_ticks) {
			past = 1;
			break;
		}
		if (__builtin_expect(used >= used_max || p >= raw_end || id == PTT_EV_REC_LOST, 0)) {
			w->used = used;
			w->raw_used = raw0 + (size_t)(p - p0) * 4;
			w->count = count;
			if (k)
				w->last = ts; /* the block's last time, should this record end it */
			rc = record_compact(w, p, n);
			payload = w->payload;
			used = w->used;
			count = w->count;
			if (rc) {
				p0 = p; /* what record_compact left stands */
				raw0 = w->raw_used;
				break;
			}
			used_max = BLOCK_TARGET;
			slow++; /* counted by record_compact */
			p0 = p + n;
			raw0 = w->raw_used;
			raw_end = RAW_END();
		} else {
			used = (size_t)(cpt_encode(cpt, payload + used, p, n) - payload);
			count++;
		}
		ts = t;
		p += n;
		k++;
	}
#undef RAW_END
	w->used = used;
	w->raw_used = raw0 + (size_t)(p - p0) * 4;
	w->count = count;
	if (k)
		w->last = ts;
	w->events += k - slow;
	run->used = (size_t)(p - run->words);
	run->records = k;
	run->last_ticks = ts;
	run->next_ticks = t;
	run->past = past;
	return rc;
}

/*
 * ptt_writer_merge for a compact writer: both runs' records in time order
 * while each run's next record is one that code_one takes and the block has
 * room (the first record of each thread known to it: records that begin a
 * block or a thread are record_compact's).
 */
static int merge_compact(struct ptt_writer *w, struct ptt_run *run[2], int first0)
{
	struct ptt_compact *cpt = w->cpt;
	struct run_state st[2];
	const uint32_t *p[2], *lim[2];
	uint64_t head[2];
	uint32_t done[2] = { 0, 0 };
	for (int j = 0; j < 2; j++) {
		p[j] = run[j]->words;
		lim[j] = p[j] + run[j]->nwords;
	}
	if (!w->count || w->used >= BLOCK_TARGET || w->raw_used >= COMPACT_RAW_TARGET)
		return 0; /* a block to begin or end first */
	for (int j = 0; j < 2; j++) {
		if (lim[j] - p[j] < PTT_REC_MIN_WORDS || !run_takes(p[j][0], (size_t)(lim[j] - p[j]), run[j]->stop, run[j]->nstop) ||
		    !run_begin(cpt, &st[j], p[j]))
			return 0;
		memcpy(&head[j], p[j] + 1, 8);
	}
	unsigned char *out = w->payload + w->used;
	const unsigned char *out_end = w->payload + BLOCK_TARGET;
	size_t raw_left = (COMPACT_RAW_TARGET - w->raw_used + 3) / 4; /* words the block takes still */
	uint64_t prev = cpt->prev_ts;
	uint32_t k = 0, max = run[0]->max_records;
	int last = 0;
	for (;;) {
		/* the run whose head comes first, its records up to the other's head: to its time when it
		 * goes first at equal times, else to a tick before */
		int j = head[0] < head[1] || (head[0] == head[1] && first0) ? 0 : 1;
		uint64_t upto = head[1 - j] - ((j == 0) != first0);
		if (upto > run[j]->max_ticks)
			upto = run[j]->max_ticks;
		struct run_state s = st[j]; /* in registers while the run goes on */
		const uint32_t *q = p[j], *lj = (size_t)(lim[j] - q) > raw_left ? q + raw_left : lim[j];
		uint32_t did = code_span(cpt, &s, &q, lj, &out, out_end, run[j]->stop, run[j]->nstop, upto, max - k, &prev);
		st[j] = s;
		if (!did)
			break;
		raw_left -= (size_t)(q - p[j]);
		p[j] = q;
		run[j]->last_ticks = prev;
		done[j] += did;
		k += did;
		last = j;
		/* why it stopped: its next record comes after the other's head (the other's turn), or
		 * anything else (no room, a record it does not take, a pad, the end of its words: the
		 * merge ends); at a ring's end past its words are another ring's or none */
		uint64_t t;
		if (k == max || lim[j] - q < PTT_REC_MIN_WORDS || !run_takes(q[0], (size_t)(lim[j] - q), run[j]->stop, run[j]->nstop))
			break;
		memcpy(&t, q + 1, 8);
		if (t <= upto || t > run[j]->max_ticks)
			break;
		head[j] = t;
	}
	if (!k)
		return 0;
	/* the block as record_compact leaves it, its last record's thread the encoder's */
	w->used = (size_t)(out - w->payload);
	size_t words = 0;
	for (int i = 0; i < 2; i++) {
		run[i]->used = (size_t)(p[i] - run[i]->words);
		run[i]->records = done[i];
		words += run[i]->used;
	}
	w->raw_used += words * 4;
	w->count += k;
	w->events += k;
	w->last = prev;
	cpt->prev_ts = prev;
	cpt->last_pt = st[last].pt;
	cpt->last_slot = st[last].slot;
	cpt->last_key = st[last].key0;
	return 0;
}

int ptt_writer_merge(struct ptt_writer *w, struct ptt_run *a, struct ptt_run *b, int a_first)
{
	struct ptt_run *run[2] = { a, b };
	a->used = b->used = 0;
	a->records = b->records = 0;
	a->past = b->past = 0;
	return w->compact ? merge_compact(w, run, a_first) : 0; /* a plain writer: ptt_writer_run's */
}

int ptt_writer_run(struct ptt_writer *w, struct ptt_run *run)
{
	if (w->compact)
		return run_compact(w, run);
	const uint32_t *p = run->words;
	size_t left = run->nwords;
	uint32_t k = 0;
	int rc = 0;
	run->last_ticks = 0;
	run->past = 0;
	while (k < run->max_records && left >= PTT_REC_MIN_WORDS) {
		uint32_t w0 = p[0], n = ptt_rec_len(w0);
		if (!run_takes(w0, left, run->stop, run->nstop))
			break;
		uint64_t t = ptt_rec_ticks(p);
		if (t > run->max_ticks) {
			run->next_ticks = t;
			run->past = 1;
			break;
		}
		if ((rc = ptt_writer_record(w, p, n)) != 0)
			break;
		run->last_ticks = t;
		p += n;
		left -= n;
		k++;
	}
	run->used = (size_t)(p - run->words);
	run->records = k;
	return rc;
}

/* A written block's buffer (a->mu held): back to the spares, or, a coded block's own (of capacity
 * own), kept for the next one or freed. */
static void buf_release(struct async *a, uint32_t *buf, size_t own)
{
	if (!own) {
		a->spare[a->nspare++] = buf;
		return;
	}
	/* full: the smallest kept go first, so that the large blocks of a busy run find a buffer */
	while (a->nbig && (a->nbig == ASYNC_BIG_SPARES || a->coded_bytes + a->big_bytes + own > ASYNC_CODED_BYTES)) {
		unsigned k = 0;
		for (unsigned i = 1; i < a->nbig; i++)
			k = a->big[i].cap < a->big[k].cap ? i : k;
		if (a->big[k].cap >= own)
			break;
		free(a->big[k].buf);
		a->big_bytes -= a->big[k].cap;
		a->big[k] = a->big[--a->nbig];
	}
	if (a->nbig < ASYNC_BIG_SPARES && a->coded_bytes + a->big_bytes + own <= ASYNC_CODED_BYTES) {
		a->big[a->nbig].buf = buf;
		a->big[a->nbig++].cap = own;
		a->big_bytes += own;
	} else {
		free(buf);
	}
}

static void *async_main(void *arg)
{
	struct async *a = arg;
	/* compression takes only processor time that nobody else wants (the traced program, the
	 * drain): when it gets none, blocks are written raw (queue_block) */
	struct sched_param idle = { 0 };
	if (pthread_setschedparam(pthread_self(), SCHED_IDLE, &idle) != 0)
		setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), 19);
	pthread_setname_np(pthread_self(), "ptt-compress"); /* its processor time told apart (top -H, bench/streams.sh) */
	pthread_mutex_lock(&a->mu);
	for (;;) {
		struct queued *b = NULL;
		for (unsigned i = 0; i < a->len && !b; i++)
			if (a->q[(a->head + i) % ASYNC_BUFS].state == Q_WAIT)
				b = &a->q[(a->head + i) % ASYNC_BUFS];
		if (!b) {
			if (a->stop)
				break;
			pthread_cond_wait(&a->cv, &a->mu);
			continue;
		}
		if (b->kind == PTT_BLOCK_MARK) { /* 8 bytes, stored as they are */
			b->zflags = 0;
			b->state = Q_DONE;
			continue;
		}
		b->state = Q_WORK;
		uint64_t seq = b->seq;
		const uint32_t *buf = b->buf;
		size_t own = b->own;
		size_t used = b->used, zlen;
		uint64_t first = b->first;
		int comp = a->comp, level = a->level, pack = !b->compact;
		unsigned zflags;
		pthread_mutex_unlock(&a->mu);
		int rc = compress_payload(&a->z, comp, level, buf, used, pack, first, &zlen, &zflags);
		pthread_mutex_lock(&a->mu);
		if (b->seq == seq && b->state == Q_WORK) {
			/* hand the output over: the slot's buffer becomes the thread's next one */
			unsigned char *out = a->z.out;
			size_t cap = a->z.out_cap;
			a->z.out = b->z;
			a->z.out_cap = b->zcap;
			b->z = out;
			b->zcap = cap;
			b->zlen = zlen;
			b->zflags = rc ? 0 : zflags; /* a compressor's failure costs the gain, not the block */
			b->state = Q_DONE;
		} else if (own && a->writing == buf) {
			a->orphan = a->writing; /* being written raw by the caller, which frees it */
		} else {
			buf_release(a, (uint32_t *)(uintptr_t)buf, own); /* written raw meanwhile: the buffer is free now */
		}
		pthread_cond_broadcast(&a->cv);
	}
	pthread_mutex_unlock(&a->mu);
	return NULL;
}

int ptt_writer_async(struct ptt_writer *w)
{
	if (w->as)
		return 0;
	int crc = close_in_place(w);
	if (crc)
		return crc;
	struct async *a = calloc(1, sizeof *a);
	if (!a)
		return PTT_E_NOMEM;
	for (; a->nspare < ASYNC_BUFS - 1; a->nspare++)
		if (!(a->spare[a->nspare] = malloc(BLOCK_BUF)))
			break;
	a->comp = w->comp;
	a->level = w->zlevel;
	if (a->nspare == ASYNC_BUFS - 1) {
		pthread_mutex_init(&a->mu, NULL);
		pthread_cond_init(&a->cv, NULL);
		w->as = a;
		sigset_t all, old; /* the thread takes no signals: they stay with the caller's threads */
		sigfillset(&all);
		pthread_sigmask(SIG_SETMASK, &all, &old);
		int made = pthread_create(&a->thread, NULL, async_main, a) == 0;
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
	return PTT_E_NOMEM;
}

/*
 * Write the queue's oldest block (a->len > 0, a->mu held, released while
 * writing): compressed when the thread is done with it, else raw (the
 * thread, if it is compressing it, drops its result and frees the buffer).
 */
static int write_head(struct ptt_writer *w)
{
	struct async *a = w->as;
	struct queued *b = &a->q[a->head];
	int done = b->state == Q_DONE, working = b->state == Q_WORK;
	a->head = (a->head + 1) % ASYNC_BUFS;
	a->len--;
	b->seq = 0; /* the thread's result, if it is working on it, is not wanted */
	a->coded_bytes -= b->own;
	struct ptt_block_header h;
	events_header(&h, b->count, b->lost, b->first, b->last);
	h.kind = b->kind;
	h.stream = b->kind == PTT_BLOCK_EVENTS ? b->stream : 0;
	if (b->kind == PTT_BLOCK_MARK) {
		h.first_ticks = h.last_ticks = b->first;
		done = 1; /* never compressed, never behind */
		b->zflags = 0;
	}
	if (!done)
		w->behind++;
	if (working && b->own)
		a->writing = b->buf;
	pthread_mutex_unlock(&a->mu);
	int rc;
	if (done && b->zflags) {
		h.flags = (uint16_t)(b->zflags | b->compact);
		rc = write_block(w, &h, b->used, b->z, b->zlen);
	} else {
		h.flags = b->compact;
		rc = write_block(w, &h, b->used, b->buf, b->used);
	}
	pthread_mutex_lock(&a->mu);
	if (!working) {
		buf_release(a, b->buf, b->own);
	} else if (b->own) { /* the thread frees it when it is done with it, unless it was done meanwhile */
		a->writing = NULL;
		if (a->orphan == b->buf) {
			buf_release(a, a->orphan, b->own);
			a->orphan = NULL;
		}
	}
	return rc;
}

/*
 * Write out every queued block (lock held): when finishing, compressed,
 * those the thread has not begun by the caller itself (the thread may be
 * starved of processor time: it runs at idle priority); else raw where the
 * thread is not done.
 */
static int drain_queue(struct ptt_writer *w, int finishing)
{
	struct async *a = w->as;
	int rc = 0;
	while (a->len && !rc) {
		struct queued *b = &a->q[a->head];
		if (finishing && b->state == Q_WORK) {
			pthread_cond_wait(&a->cv, &a->mu);
			continue;
		}
		if (!finishing || b->state == Q_DONE || b->kind == PTT_BLOCK_MARK) {
			rc = write_head(w);
			continue;
		}
		a->head = (a->head + 1) % ASYNC_BUFS;
		a->len--;
		b->seq = 0;
		a->coded_bytes -= b->own;
		pthread_mutex_unlock(&a->mu);
		uint32_t stream = w->stream; /* the queued block's, for its header */
		w->stream = b->stream;
		rc = put_block(w, PTT_BLOCK_EVENTS, b->compact, b->buf, b->used, b->count, b->lost, b->first, b->last);
		w->stream = stream;
		pthread_mutex_lock(&a->mu);
		buf_release(a, b->buf, b->own);
	}
	return rc;
}

int ptt_writer_sync(struct ptt_writer *w)
{
	struct async *a = w->as;
	if (!a)
		return out_push(w);
	pthread_mutex_lock(&a->mu);
	int rc = drain_queue(w, 0);
	pthread_mutex_unlock(&a->mu);
	return rc ? rc : out_push(w);
}

/*
 * Queue the current block for the thread and go on in a spare buffer.  The
 * blocks the thread has compressed are written first; when no buffer is
 * spare, the oldest blocks are written raw until one is: the caller (the
 * recorder's drain) never waits for the compressor.
 */
static int queue_block(struct ptt_writer *w)
{
	struct async *a = w->as;
	int rc = 0;
	pthread_mutex_lock(&a->mu);
	while (!rc && a->len && a->q[a->head].state == Q_DONE)
		rc = write_head(w);
	while (!rc && (!a->nspare || a->len >= ASYNC_BUFS - 1)) { /* the coded blocks' own buffers take slots too */
		if (a->len)
			rc = write_head(w);
		else /* the only buffer not spare is the one the thread still reads: a block's time at most */
			pthread_cond_wait(&a->cv, &a->mu);
	}
	if (!rc) {
		struct queued *b = &a->q[(a->head + a->len) % ASYNC_BUFS];
		b->buf = w->buf;
		b->used = w->used;
		b->count = w->count;
		b->lost = w->lost;
		b->first = w->first;
		b->last = w->last;
		b->compact = w->compact ? PTT_BLOCK_COMPACT : 0;
		b->kind = w->kind ? w->kind : PTT_BLOCK_EVENTS;
		b->stream = w->stream;
		b->own = 0;
		b->seq = ++a->seq;
		b->state = Q_WAIT;
		a->len++;
		w->buf = a->spare[--a->nspare];
		w->payload = (unsigned char *)w->buf;
		pthread_cond_broadcast(&a->cv);
	}
	pthread_mutex_unlock(&a->mu);
	return rc;
}

/*
 * A coded stream's block (ptt_writer_coded) queued for the thread, its n
 * bytes copied into a buffer of its own (up to 1 MiB, a block's buffer is
 * 64 KiB; the caller's bytes are the ring's, given back to its thread when
 * this returns).  As queue_block, the caller never waits: the blocks the
 * thread is done with are written first, and the oldest are written (raw
 * where the thread has not reached them) while the queue has no slot or
 * holds ASYNC_CODED_BYTES.
 */
static int queue_coded(struct ptt_writer *w, uint32_t stream, const void *bytes, size_t n, uint32_t count,
		       uint64_t first, uint64_t last)
{
	struct async *a = w->as;
	size_t cap = 64u * 1024u;
	while (cap < n)
		cap *= 2;
	uint32_t *copy = NULL;
	pthread_mutex_lock(&a->mu);
	for (unsigned i = 0; i < a->nbig && !copy; i++)
		if (a->big[i].cap >= n) {
			copy = a->big[i].buf;
			cap = a->big[i].cap;
			a->big_bytes -= cap;
			a->big[i] = a->big[--a->nbig];
		}
	pthread_mutex_unlock(&a->mu);
	if (!copy && !(copy = malloc(cap)))
		return PTT_E_NOMEM;
	copy_in(w, copy, bytes, n);
	int rc = 0;
	pthread_mutex_lock(&a->mu);
	while (!rc && a->len && a->q[a->head].state == Q_DONE)
		rc = write_head(w);
	while (!rc && a->len && (a->len >= ASYNC_BUFS - 1 || a->coded_bytes + cap > ASYNC_CODED_BYTES))
		rc = write_head(w);
	if (!rc) {
		struct queued *b = &a->q[(a->head + a->len) % ASYNC_BUFS];
		b->buf = copy;
		b->own = cap;
		b->used = n;
		b->count = count;
		b->lost = 0;
		b->first = first;
		b->last = last;
		b->compact = PTT_BLOCK_COMPACT | PTT_BLOCK_CODED; /* stays with the compressor's flag */
		b->kind = PTT_BLOCK_EVENTS;
		b->stream = stream;
		b->seq = ++a->seq;
		b->state = Q_WAIT;
		a->len++;
		a->coded_bytes += cap;
		pthread_cond_broadcast(&a->cv);
	}
	if (rc)
		buf_release(a, copy, cap);
	pthread_mutex_unlock(&a->mu);
	return rc;
}

/* Finish the current block: written (gathered), or queued for the compressor. */
static int flush_block(struct ptt_writer *w)
{
	int rc = w->as ? 0 : file_header(w);
	if (rc || w->count == 0)
		return rc;
	uint16_t compact = w->compact ? PTT_BLOCK_COMPACT : 0;
	if (compact) {
		uint32_t raw = (uint32_t)w->raw_used;
		memcpy(w->payload, &raw, 4);
	}
	if (w->payload != (unsigned char *)w->buf) { /* gathered in place (block_start): its header before it */
		struct ptt_block_header h;
		events_header(&h, w->count, w->lost, w->first, w->last);
		h.flags = compact;
		h.stream = w->stream;
		seal_header(w, &h, w->used, w->used);
		memcpy(w->out + w->out_used, &h, sizeof h);
		w->out_used += sizeof h + w->used;
		__atomic_fetch_add(&w->bytes, (uint64_t)(sizeof h + w->used), __ATOMIC_RELAXED);
		w->payload = (unsigned char *)w->buf;
	} else {
		rc = w->as ? queue_block(w)
			   : put_stream_block(w, PTT_BLOCK_EVENTS, compact, w->buf, w->used, w->count, w->lost, w->first, w->last);
	}
	w->used = 0;
	w->count = 0;
	w->lost = 0;
	return rc;
}

int ptt_writer_flush(struct ptt_writer *w)
{
	int rc = flush_block(w);
	return rc ? rc : out_push(w);
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

int ptt_writer_hold(struct ptt_writer *w)
{
	if (w->header_done || w->holding)
		return -EINVAL;
	w->holding = 1;
	return 0;
}

size_t ptt_writer_held(const struct ptt_writer *w) { return w->holding ? w->held_used : 0; }

int ptt_writer_unhold(struct ptt_writer *w, const char *lines, size_t len)
{
	if (!w->holding)
		return -EINVAL;
	int rc = ptt_writer_flush(w); /* every block made so far into the held bytes */
	if (!rc)
		rc = ptt_writer_sync(w);
	if (rc)
		return rc;
	w->holding = 0;
	if (!w->header_done) /* nothing held */
		return ptt_writer_meta(w, lines, len);
	/* the held bytes: the file header, then blocks counted from its end on; the META block goes
	 * between them, and what the index knows of the held blocks moves by its size */
	size_t hdr = sizeof(struct ptt_file_header), nidx = w->nidx;
	uint64_t held_end = w->bytes;
	rc = write_fd(w, w->held, hdr, 0);
	if (rc)
		return rc;
	w->bytes = hdr;
	index_block(w, PTT_SNAP_INDEX_META, 0, 0);
	if (w->nidx > nidx) { /* it comes first */
		__typeof__(*w->idx) e = w->idx[nidx];
		memmove(w->idx + 1, w->idx, nidx * sizeof e);
		w->idx[0] = e;
	}
	rc = put_block(w, PTT_BLOCK_META, 0, lines, len, 0, 0, 0, 0);
	if (!rc)
		rc = out_push(w);
	uint64_t meta = w->bytes - hdr;
	for (size_t i = w->nidx > nidx ? 1 : 0; i < w->nidx; i++)
		w->idx[i].off += meta;
	w->bytes = held_end + meta;
	if (!rc)
		rc = write_fd(w, w->held + hdr, w->held_used - hdr, 0);
	big_free(w->held, w->held_cap);
	w->held = NULL;
	w->held_used = w->held_cap = 0;
	return rc;
}

int ptt_writer_settle(struct ptt_writer *w)
{
	int rc = ptt_writer_flush(w);
	if (!rc && w->as) { /* the events are all in: nothing is waiting for the compressor any more */
		pthread_mutex_lock(&w->as->mu);
		rc = drain_queue(w, 1);
		pthread_mutex_unlock(&w->as->mu);
	}
	return rc ? rc : out_push(w);
}

int ptt_writer_end(struct ptt_writer *w, const char *lines, size_t len)
{
	int rc = ptt_writer_settle(w);
	if (!rc)
		rc = put_block(w, PTT_BLOCK_END, 0, lines, len, 0, 0, 0, 0);
	if (!rc && w->nsnaps)
		rc = put_index(w);
	if (!rc)
		rc = out_push(w);
	prealloc_trim(w);
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
	prealloc_trim(w);
	w->fd = fd;
	w->gather = is_file(fd);
	prealloc_at(w);
	w->header_done = 0;
	w->bytes = 0;
	w->nidx = w->nsnaps = 0;
	return 0;
}
uint64_t ptt_writer_events(const struct ptt_writer *w) { return w->events; }

int ptt_writer_close(struct ptt_writer *w)
{
	if (!w)
		return 0;
	int rc = 0;
	struct async *a = w->as;
	if (a) { /* blocks still queued are written (ptt_writer_end has written them already, as a rule) */
		pthread_mutex_lock(&a->mu);
		rc = drain_queue(w, 0);
		a->stop = 1;
		pthread_cond_broadcast(&a->cv);
		pthread_mutex_unlock(&a->mu);
		pthread_join(a->thread, NULL);
		for (unsigned i = 0; i < a->nspare; i++)
			free(a->spare[i]);
		for (unsigned i = 0; i < a->nbig; i++)
			free(a->big[i].buf);
		for (unsigned i = 0; i < ASYNC_BUFS; i++)
			free(a->q[i].z);
		zctx_free(&a->z);
		pthread_mutex_destroy(&a->mu);
		pthread_cond_destroy(&a->cv);
		free(a);
	}
	int prc = rc ? 0 : out_push(w); /* ptt_writer_end has, as a rule */
	if (!rc)
		rc = prc;
	prealloc_trim(w);
	zctx_free(&w->z);
	big_free(w->held, w->held_cap);
	free(w->cpt);
	free(w->buf);
	big_free(w->out, OUT_BUF);
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
	if (PTT_GROW(w->snap, &w->snap_cap, w->snap_used + n) != 0) {
		w->snap_bad = 1;
		return;
	}
	uint32_t *r = w->snap + w->snap_used;
	ptt_rec_put_header(r, ptt_rec_word0(PTT_EV_PAD, n), w->snap_ticks, 0, 0);
	r[5] = PTT_SNAP_MAGIC;
	r[6] = kind;
	r[7] = (uint32_t)pos;
	r[8] = (uint32_t)(pos >> 32);
	if (nwords)
		memcpy(r + 9, words, (size_t)nwords * 4);
	ptt_rec_seal(r, n);
	w->snap_used += n;
}

/* A snapshot begun: its header, wrapping n words (none but in a part's head). */
static int snap_begin(struct ptt_writer *w, uint64_t pos, uint64_t ticks, const uint32_t *words, uint32_t n)
{
	w->snap_used = 0;
	w->snap_bad = 0;
	w->snap_ticks = ticks;
	snap_wrap(w, 0, pos, words, n);
	return w->snap_bad ? PTT_E_NOMEM : 0;
}

int ptt_writer_snapshot_begin(struct ptt_writer *w, uint64_t pos, uint64_t ticks) { return snap_begin(w, pos, ticks, NULL, 0); }

int ptt_writer_head_begin(struct ptt_writer *w, uint64_t ticks, uint64_t before_last)
{
	uint32_t last[2] = { (uint32_t)before_last, (uint32_t)(before_last >> 32) }; /* the part before's latest time */
	return snap_begin(w, 0, ticks, last, 2);
}

int ptt_writer_snapshot_add(struct ptt_writer *w, unsigned kind, uint64_t pos, const uint32_t *words, uint32_t nwords)
{
	snap_wrap(w, kind, pos, words, nwords);
	return 0; /* a failure is told by ptt_writer_snapshot_end */
}

/* The snapshot begun as a block after the events written so far, listed in the index as kind. */
static int snapshot_put(struct ptt_writer *w, uint32_t kind)
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
	index_block(w, kind, ((uint64_t)w->snap[8] << 32) | w->snap[7], w->snap_ticks);
	w->nsnaps++;
	/* compressed even in an uncompressed trace (level 1 of the writer's compressor; readers take any
	 * block's compression flags): a snapshot repeats module paths and names and its records' wrapping,
	 * 2.6 KiB raw in sqlite3's trace, 1.1 KiB compressed */
	int z = w->zlevel;
	if (!z)
		w->zlevel = 1;
	rc = put_block(w, PTT_BLOCK_EVENTS, PTT_BLOCK_SNAPSHOT, w->snap, w->snap_used * 4, 0, 0, w->snap_ticks,
		       w->snap_ticks);
	w->zlevel = z;
	return rc;
}

int ptt_writer_snapshot_end(struct ptt_writer *w) { return snapshot_put(w, PTT_SNAP_INDEX_SNAPSHOT); }

int ptt_writer_open_end(struct ptt_writer **wp, int fd, uint64_t size)
{
	int rc = ptt_writer_open(wp, fd, 0);
	if (rc)
		return rc;
	(*wp)->header_done = 1; /* the part has its header: offsets in the index count from it */
	(*wp)->bytes = size;
	return 0;
}

int ptt_writer_head_end(struct ptt_writer *w)
{
	int rc = snapshot_put(w, PTT_SNAP_INDEX_HEAD);
	if (!rc)
		rc = put_index(w); /* only the head: what the part's writer indexed (nothing, in streams) is not known here */
	if (!rc)
		rc = out_push(w);
	prealloc_trim(w);
	return rc;
}

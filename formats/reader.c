/*
 * reader.c - reads a trace in either form (binary blocks or ptt-dump text)
 * from a file or a pipe, one event at a time, with bounded memory.
 *
 * Damage never stops the reader while intact data follows: a bad block
 * header makes it scan for the next block magic with a valid header crc, a
 * bad record makes it scan word by word for the next record whose mark,
 * length and checksum agree.  Each damaged stretch yields one error return
 * with its offset (ptt_reader_diag) and reading goes on.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include "merge.h"
#include "ptt_trace.h"
#include "compact.h"

int ptt__decode_args(struct ptt_event *ev);

#define IN_CAP (4u << 20)     /* the input buffer at most: a block payload or a text line fits */
#define IN_CAP_FIRST (64u << 10) /* at first: a short trace costs no 4 MiB (grown on demand) */
#define IN_CAP_MIN (4u << 10)    /* ... and a file shorter than 64 KiB no more than its size */
#define META_CHUNK 4000          /* the META lines' text is kept in chunks of this size (or one line's) */

/* Text of META lines, packed: a chunk never moves, so a line handed out stays valid until close. */
struct meta_chunk {
	struct meta_chunk *next;
	size_t used, cap;
	char text[];
};

/*
 * The structure of the current input as read so far (structure_*): a META
 * block before its events, EVENTS blocks in time order and each once, a
 * clock rate that is one, each block's record count true.
 */
struct ptt_structure {
	int meta_seen;          /* a META block was read in this input */
	int events_seen;        /* an EVENTS block was read in this input: last_ticks, last_crc are its */
	uint64_t last_ticks;    /* the last EVENTS block's last timestamp */
	uint32_t last_crc;      /* ... and its header's crc: the same block again has the same */
	int clock_bad, clock_said; /* the header's clock_hz is no clock rate (times are ticks taken as ns) */
	char clock_text[24];
	uint32_t blk_count;     /* the current EVENTS block's header count */
	uint32_t blk_records;   /* records found in it so far */
	int blk_damaged;        /* damage was found in it: its count cannot be checked */
	int blk_open;           /* an EVENTS block whose count is still to check */
};

struct ptt_reader {
	int fd;
	int form;
	int eof;          /* read() returned 0 */
	int saw_end;
	char name[256];
	char diag[512];
	unsigned char *in; /* input buffer */
	size_t in_cap, in_start, in_len;
	uint64_t in_offset; /* file offset of in[in_start] */
	/* current block (binary) */
	unsigned char *blk;
	size_t blk_cap, blk_len, blk_pos;
	struct ptt_compact **scpt; /* coded streams (PTT_BLOCK_CODED): each stream's history, by stream */
	uint32_t nscpt;
	unsigned char *cblk; /* a compact block's coded payload, expanded into blk */
	size_t cblk_cap;
	struct ptt_compact *cpt;
	uint64_t blk_offset; /* file offset of the payload */
	uint64_t blk_first;  /* the block's first timestamp */
	int blk_zlib;
	int blk_compact; /* a compact block: its damage is one stretch, said once (records depend on those before) */
	unsigned compressed; /* PTT_BLOCK_ZLIB | PTT_BLOCK_ZSTD: what the blocks read so far used */
	uint32_t version;    /* the binary file header's: a coded block in a file before version 4 is damage */
	int in_damage; /* inside a damaged stretch of records: report once */
	/* metadata */
	char **meta;
	size_t nmeta, meta_cap;
	struct meta_chunk *meta_text;
	uint64_t clock_hz, start_ticks; /* the META lines' values so far (0: none) */
	z_stream zs; /* inflates every zlib block (inflate_block): set up once, not per block */
	int zs_ready;
	ZSTD_DCtx *zd; /* decompresses every zstd block, likewise */
	struct ptt_types types;
	struct ptt_clock clock;
	uint64_t pos;
	uint64_t line_no;
	uint64_t skip_ns, skip_pos; /* ptt_reader_skip: EVENTS blocks entirely before these are not decoded */
	int skipping; /* no EVENTS block kept since ptt_reader_skip: read headers only, seek over payloads */
	int skip_names;    /* ptt_reader_skip_names: a block passed over is still read for its naming records, */
	uint64_t names_budget; /* while these bytes of payload last; */
	uint64_t names_gap_ns; /* then the first block passed over unread begins here (0: none) */
	int blk_names_only; /* the current block is one of those: its other records are counted, not delivered */
	int seekable;
	int end_reported;
	/* ptt_reader_set_next: the inputs that follow this one */
	int (*next)(void *arg);
	void *next_arg;
	/* ptt_reader_set_wait: asked at the end of the input whether more will come (a file being written) */
	int (*wait)(void *arg);
	void *wait_arg;
	uint64_t bytes_before; /* bytes consumed in the inputs before this one */
	/* the parts of a rotated recording (ptt-trace(5)): "part N", "head K", "continued FILE" */
	unsigned inputs;       /* inputs begun: files, and traces concatenated in one */
	uint64_t part, last_part; /* the current input's part number (1 without a line), the previous input's */
	uint64_t head_left;    /* events of the current input's head still to skip */
	int head_names_only;   /* a part is missing before it: its head's names are delivered */
	int continued;         /* the current input says the next part follows it */
	int gap_pending;       /* report the missing parts before the next event */
	uint64_t input_at;     /* the current input's file header's offset in its file (0: a file of its own) */
	int prev_continued;    /* the input before said the next part follows it */
	int hist_said;         /* a coded stream's block without its history (a part read alone) was said */
	int follows;           /* the current input is that part (its "part" the previous one's plus one) */
	/* "head end": a part's head at its end, read when the part is read alone (head_at_end) */
	uint32_t *head_q;      /* its records, one after the other, delivered before the part's events */
	size_t head_q_len, head_q_pos, head_q_cap; /* words */
	uint64_t head_off;     /* its snapshot block's offset (the records' offset) */
	int head_ready;        /* loaded while a META block was read: delivered before what follows it */
	int head_alone;        /* a "head end" part read without the part before it (ptt_reader_part_overlap_to) */
	uint64_t head_before;  /* the head's latest time of the part before (ticks), UINT64_MAX: not known */
	char head_lost[200];   /* why it cannot be read: said once, as damage, before the part's events */
	/* version 3: the records of stream blocks, merged (merge.h) */
	uint32_t blk_stream;   /* the current block's stream (0: records merged already) */
	uint64_t mark_ticks;   /* the MARK block just read */
	struct ptt_merge *merge;
	unsigned merge_inputs; /* the input whose streams are held */
	struct ptt_structure st; /* what no checksum sees: blocks out of place, headers that contradict the data */
};

static void set_diag(struct ptt_reader *r, const char *fmt_offset_kind, uint64_t where, const char *what)
{
	snprintf(r->diag, sizeof r->diag, "%s %" PRIu64 ": %s", fmt_offset_kind, where, what);
}

/* Ensure n bytes are buffered from in_start; returns how many are (may be fewer at EOF). */
static size_t fill(struct ptt_reader *r, size_t n)
{
	if (r->in_len >= n || r->eof)
		return r->in_len < n ? r->in_len : n;
	if (r->in_start + n > r->in_cap) {
		memmove(r->in, r->in + r->in_start, r->in_len);
		r->in_start = 0;
	}
	if (n > r->in_cap) {
		size_t cap = r->in_cap;
		while (cap < n && cap < IN_CAP)
			cap *= 2;
		unsigned char *nb = realloc(r->in, cap);
		if (!nb) {
			r->eof = 1;
			snprintf(r->diag, sizeof r->diag, "offset %" PRIu64 ": %s", r->in_offset + r->in_len, ptt_strerror(PTT_E_NOMEM));
			return r->in_len;
		}
		r->in = nb;
		r->in_cap = cap;
	}
	while (r->in_len < n && !r->eof) {
		size_t room = r->in_cap - r->in_start - r->in_len;
		/* while passing blocks over, read no more than asked: the payloads are seeked over */
		if (r->skipping && r->seekable && room > n - r->in_len)
			room = n - r->in_len;
		ssize_t k = read(r->fd, r->in + r->in_start + r->in_len, room);
		if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) && r->wait)
			k = 0; /* a pipe read without blocking (ptt-top -): nothing yet, as at a file's end */
		if (k < 0) {
			if (errno == EINTR)
				continue;
			r->eof = 1;
			snprintf(r->diag, sizeof r->diag, "offset %" PRIu64 ": %s", r->in_offset + r->in_len, strerror(errno));
			break;
		}
		if (k == 0 && r->wait) {
			int more = r->wait(r->wait_arg);
			if (more > 0)
				continue; /* the writer has more to come: a block half-written is waited for, not damage */
			if (more < 0)
				r->end_reported = 1; /* left by choice: no cut to report */
		}
		if (k == 0)
			r->eof = 1;
		r->in_len += (size_t)k;
	}
	return r->in_len < n ? r->in_len : n;
}

/* As uncompress(): the whole zlib stream src[0, n) into dst, *raw bytes at most; 0 and *raw set, or -1. */
static int inflate_block(struct ptt_reader *r, unsigned char *dst, uLongf *raw, const unsigned char *src, size_t n)
{
	if (!r->zs_ready) {
		if (inflateInit(&r->zs) != Z_OK)
			return -1;
		r->zs_ready = 1;
	} else if (inflateReset(&r->zs) != Z_OK) {
		return -1;
	}
	r->zs.next_in = (Bytef *)(uintptr_t)src;
	r->zs.avail_in = (uInt)n;
	r->zs.next_out = dst;
	r->zs.avail_out = (uInt)*raw;
	int zr = inflate(&r->zs, Z_FINISH);
	*raw = r->zs.total_out;
	return zr == Z_STREAM_END ? 0 : -1;
}

/* A compressed block's flags: zlib, zstd, or neither; both (or a compressor this
 * version does not know) is no block it can read. */
#define COMPRESSED(flags) ((flags) & (PTT_BLOCK_ZLIB | PTT_BLOCK_ZSTD))
static int flags_readable(unsigned flags)
{
	return !(flags & ~PTT_BLOCK_KNOWN_FLAGS) && COMPRESSED(flags) != (PTT_BLOCK_ZLIB | PTT_BLOCK_ZSTD);
}

/* The compressed payload src[0, n) of a block with these flags into dst, *raw bytes at most;
 * 0 and *raw set, or -1. */
static int decompress_block(struct ptt_reader *r, unsigned flags, unsigned char *dst, uLongf *raw,
			    const unsigned char *src, size_t n)
{
	if (flags & PTT_BLOCK_ZLIB)
		return inflate_block(r, dst, raw, src, n);
	if (!r->zd && !(r->zd = ZSTD_createDCtx()))
		return -1;
	size_t k = ZSTD_decompressDCtx(r->zd, dst, *raw, src, n);
	if (ZSTD_isError(k))
		return -1;
	*raw = (uLongf)k;
	return 0;
}

static void consume(struct ptt_reader *r, size_t n)
{
	r->in_start += n;
	r->in_len -= n;
	r->in_offset += n;
	if (r->in_len == 0)
		r->in_start = 0;
}

/* ---- structure: what no checksum sees (ptt-trace(5), "Structure") -------- */

/* A clock rate outside these is no clock a trace was timed with (a damaged or hand-made header). */
#define CLOCK_HZ_MIN 1000u                /* 1 kHz: no lock is timed by a slower one */
#define CLOCK_HZ_MAX 100000000000ull      /* 100 GHz */

static void structure_begin_input(struct ptt_reader *r)
{
	memset(&r->st, 0, sizeof r->st);
}

/* The value of a clock_hz line: the rate, or 0 (the times are then ticks taken as ns), said once by structure_said. */
static uint64_t structure_clock(struct ptt_reader *r, const char *text)
{
	char *end;
	errno = 0;
	uint64_t hz = strtoull(text, &end, 10);
	int bad = errno || end == text || *end || text[0] == '-' || hz < CLOCK_HZ_MIN || hz > CLOCK_HZ_MAX;
	r->st.clock_bad = bad;
	if (bad) {
		snprintf(r->st.clock_text, sizeof r->st.clock_text, "%s", text);
		r->st.clock_said = 0;
	}
	return bad ? 0 : hz;
}

/*
 * Where the block whose header h (at offset at) was just consumed belongs:
 * 0 it is read; 1 it is passed over unsaid (a snapshot: ptt_reader_snapshot's);
 * PTT_E_STRUCTURE it is passed over and said (diag set): a kind or flag this
 * version does not know, events before the header, a block out of order or
 * repeated.  Whatever such a block holds is lost: no finding rests on it.
 */
static int structure_block(struct ptt_reader *r, const struct ptt_block_header *h, uint64_t at)
{
	struct ptt_structure *st = &r->st;
	const char *s = h->count == 1 ? "" : "s";
	char what[200];
	if (h->kind > PTT_BLOCK_MARK) {
		snprintf(what, sizeof what, "block of kind %u, which this version does not know, skipped: %" PRIu32 " record%s lost",
			 h->kind, h->count, s);
	} else if (h->kind == PTT_BLOCK_MARK) { /* a good one was read before (next_block) */
		snprintf(what, sizeof what, "MARK block of %" PRIu32 " bytes, not 8, skipped", h->payload_len);
	} else if (h->kind != PTT_BLOCK_EVENTS) {
		return 0;
	} else if (h->flags & PTT_BLOCK_SNAPSHOT) {
		if (h->count == 0)
			return 1;
		snprintf(what, sizeof what, "snapshot block that counts events, skipped: %" PRIu32 " event%s lost", h->count, s);
	} else if ((h->flags & PTT_BLOCK_CODED) && (!h->stream || !(h->flags & PTT_BLOCK_COMPACT))) {
		/* a thread's coded bytes are a stream's and compact: on a merged or plain block the flag lies */
		snprintf(what, sizeof what, "coded EVENTS block %s, skipped: %" PRIu32 " event%s lost",
			 h->stream ? "that is not compact" : "that names no stream", h->count, s);
	} else if ((h->flags & PTT_BLOCK_CODED) && r->version < PTT_FORMAT_VERSION) {
		/* coded streams came with version 4: the flag on an older file's block is a flipped bit */
		snprintf(what, sizeof what, "coded EVENTS block in a file of version %" PRIu32 " (coded streams are version %d's), skipped: %" PRIu32
			 " event%s lost", r->version, PTT_FORMAT_VERSION, h->count, s);
	} else if (!st->meta_seen) {
		snprintf(what, sizeof what, "EVENTS block before the trace's header (META block), skipped: %" PRIu32
			 " event%s lost (no clock known yet)", h->count, s);
	} else if (h->count && st->events_seen && h->header_crc == st->last_crc) {
		snprintf(what, sizeof what, "EVENTS block repeated (the block before it again), skipped: its %" PRIu32
			 " event%s read once", h->count, s);
	} else if (h->count && st->events_seen && h->stream == 0 && h->last_ticks < st->last_ticks) {
		/* a block that ends before the one before it ends (swapped, spliced); times that go back a little
		 * across a block's start are the records' to show (cli_next), not a block out of place */
		snprintf(what, sizeof what, "EVENTS block out of order (it ends %" PRIu64 " ticks before the block before it), skipped: %" PRIu32
			 " event%s lost", st->last_ticks - h->last_ticks, h->count, s);
	} else {
		if (h->count && h->stream == 0) {
			st->events_seen = 1;
			st->last_ticks = h->last_ticks;
			st->last_crc = h->header_crc;
		}
		return 0;
	}
	set_diag(r, "offset", at, what);
	return PTT_E_STRUCTURE;
}

/* An EVENTS block was loaded: count its records against its header's count (trunc: it cannot be). */
static void structure_count_begin(struct ptt_reader *r, uint32_t count, int trunc)
{
	r->st.blk_count = count;
	r->st.blk_records = 0;
	r->st.blk_damaged = trunc;
	r->st.blk_open = 1;
}

/* The block's records are all read: 1 when its header's count said otherwise (diag set), else 0. */
static int structure_count_end(struct ptt_reader *r)
{
	struct ptt_structure *st = &r->st;
	st->blk_open = 0;
	if (st->blk_damaged || st->blk_records == st->blk_count)
		return 0;
	char what[160];
	snprintf(what, sizeof what, "EVENTS block counts %" PRIu32 " records in its header and holds %" PRIu32
		 " (each read: the header is wrong)", st->blk_count, st->blk_records);
	set_diag(r, "block at offset", r->blk_offset - sizeof(struct ptt_block_header), what);
	return 1;
}

/* The header's clock rate is no rate (structure_clock): 1 the first time after it was read (diag set). */
static int structure_said(struct ptt_reader *r)
{
	if (!r->st.clock_bad || r->st.clock_said)
		return 0;
	r->st.clock_said = 1;
	char what[160];
	snprintf(what, sizeof what, "clock_hz %s is no clock rate: the times shown are its ticks taken as nanoseconds",
		 r->st.clock_text);
	set_diag(r, "offset", r->in_offset, what);
	return 1;
}

/*
 * The head at the end of the current input (META "head end", ptt-trace(5)):
 * the index in its last 40 bytes, its HEAD entry, that snapshot block, each
 * wrapped record sound.  Its records into head_q: their count, or -1 when
 * there is none (the recorder never wrote it), -2 when damaged.
 */
static int decompress_block(struct ptt_reader *r, unsigned flags, unsigned char *dst, uLongf *raw,
			    const unsigned char *src, size_t n);
static int header_ok(const struct ptt_block_header *h);
static int flags_readable(unsigned flags);
static char *meta_store(struct ptt_reader *r, const char *line, size_t len);

static long load_head(struct ptt_reader *r)
{
	struct stat st;
	uint32_t t[PTT_SNAP_WRAP_WORDS];
	struct ptt_block_header h;
	if (fstat(r->fd, &st) != 0 || st.st_size < (off_t)(sizeof t + sizeof h) ||
	    pread(r->fd, t, sizeof t, st.st_size - (off_t)sizeof t) != (ssize_t)sizeof t)
		return -1;
	uint64_t at = (uint64_t)t[8] << 32 | t[7];
	if (t[0] != ptt_rec_word0(PTT_EV_PAD, PTT_SNAP_WRAP_WORDS) || ptt_rec_checksum(t, PTT_SNAP_WRAP_WORDS - 1) != t[9] ||
	    t[5] != PTT_SNAP_MAGIC || t[6] != PTT_SNAP_INDEX_END || at >= (uint64_t)st.st_size)
		return -1;
	if (pread(r->fd, &h, sizeof h, (off_t)at) != (ssize_t)sizeof h || !header_ok(&h) ||
	    at + sizeof h + h.payload_len != (uint64_t)st.st_size)
		return -2;
	long rc = -1;
	uint32_t *idx = malloc(h.payload_len + 4), *blk = NULL;
	unsigned char *z = NULL;
	if (!idx || pread(r->fd, idx, h.payload_len, (off_t)(at + sizeof h)) != (ssize_t)h.payload_len)
		goto out;
	uint64_t off = UINT64_MAX;
	for (size_t p = 0; p + 14 <= h.payload_len / 4 && idx[p] == ptt_rec_word0(PTT_EV_PAD, 14); p += 14)
		if (idx[p + 6] == PTT_SNAP_INDEX_HEAD && ptt_rec_checksum(idx + p, 13) == idx[p + 13])
			off = (uint64_t)idx[p + 10] << 32 | idx[p + 9];
	rc = -2;
	if (off == UINT64_MAX || off >= at || pread(r->fd, &h, sizeof h, (off_t)off) != (ssize_t)sizeof h ||
	    !header_ok(&h) || !(h.flags & PTT_BLOCK_SNAPSHOT) || !flags_readable(h.flags) || off + sizeof h + h.payload_len > at)
		goto out;
	size_t n = COMPRESSED(h.flags) ? h.raw_len : h.payload_len;
	if (!(blk = malloc(n + 4)) || !(z = malloc(h.payload_len + 4)) ||
	    pread(r->fd, z, h.payload_len, (off_t)(off + sizeof h)) != (ssize_t)h.payload_len)
		goto out;
	uLongf raw = n;
	if (COMPRESSED(h.flags) ? decompress_block(r, h.flags, (unsigned char *)blk, &raw, z, h.payload_len) != 0 || raw != n
				: (memcpy(blk, z, n), 0))
		goto out;
	n /= 4;
	if (PTT_GROW(r->head_q, &r->head_q_cap, n) != 0)
		goto out;
	size_t used = 0;
	long count = 0;
	for (size_t p = 0; p < n;) {
		uint32_t len = ptt_rec_len(blk[p]);
		if (!ptt_rec_marked(blk[p]) || len < PTT_SNAP_WRAP_WORDS || p + len > n || !ptt_rec_sound(blk + p, len) ||
		    ptt_rec_id(blk[p]) != PTT_EV_PAD || blk[p + 5] != PTT_SNAP_MAGIC)
			goto out;
		uint32_t k = len - PTT_SNAP_WRAP_WORDS;
		const uint32_t *rec = blk + p + 9;
		if (blk[p + 6] == 0) { /* the header: in a head of this writer's, the part before's latest time */
			if (k == 2)
				r->head_before = (uint64_t)rec[1] << 32 | rec[0];
		} else { /* a record, sound by itself */
			if (k < PTT_REC_MIN_WORDS || ptt_rec_len(rec[0]) != k || !ptt_rec_sound(rec, k))
				goto out;
			memcpy(r->head_q + used, rec, (size_t)k * 4);
			used += k;
			count++;
		}
		p += len;
	}
	r->head_q_len = used;
	r->head_q_pos = 0;
	r->head_off = off;
	rc = count;
out:
	free(idx);
	free(blk);
	free(z);
	return rc;
}

/*
 * "head end": the part's head is at its end (ptt-record --streams -m).  Read
 * after the part before it, it is known already; read alone, or after a
 * missing part (the rule of "head K"), it is loaded and delivered first
 * (after a missing part: its names only), and the line becomes "head K"
 * (a copy of what is read has its head at its start).  On a pipe, or where
 * the recorder never wrote it, the loss is said once, as damage.
 */
static void head_at_end(struct ptt_reader *r, char **line)
{
	if (r->form != PTT_FORM_BINARY || (r->inputs > 1 && r->part == r->last_part + 1))
		return;
	r->head_alone = 1;
	r->head_before = UINT64_MAX;
	long k = -1;
	const char *why = NULL;
	if (!r->seekable)
		why = "is at its end, which cannot be read from a pipe";
	else if (r->input_at)
		why = "is at its end, which cannot be read in a concatenation of parts";
	else if ((k = load_head(r)) == -1)
		why = "was never written (the recorder did not finish)";
	else if (k < 0)
		why = "at its end is damaged";
	if (why)
		snprintf(r->head_lost, sizeof r->head_lost,
			 "part %" PRIu64 "'s state in force %s: the names and holds in force before it are unknown", r->part, why);
	r->head_ready = k > 0;
	if (r->inputs > 1) { /* after a missing part: as "head K" */
		r->head_left = k > 0 ? (uint64_t)k : 0;
		r->head_names_only = 1;
		r->gap_pending = 1;
	}
	char text[32];
	int n = snprintf(text, sizeof text, "head %ld", k > 0 ? k : 0);
	char *now = meta_store(r, text, (size_t)n);
	if (now)
		*line = now;
}

/* A copy of line[0, len) with its NUL, kept until close; NULL without memory. */
static char *meta_store(struct ptt_reader *r, const char *line, size_t len)
{
	struct meta_chunk *c = r->meta_text;
	if (!c || c->cap - c->used < len + 1) {
		size_t cap = len + 1 > META_CHUNK ? len + 1 : META_CHUNK;
		if (!(c = malloc(sizeof *c + cap)))
			return NULL;
		c->next = r->meta_text;
		c->used = 0;
		c->cap = cap;
		r->meta_text = c;
	}
	char *copy = c->text + c->used;
	c->used += len + 1;
	memcpy(copy, line, len);
	copy[len] = 0;
	return copy;
}

static int add_meta(struct ptt_reader *r, const char *line, size_t len)
{
	while (len && (line[len - 1] == '\n' || line[len - 1] == '\r'))
		len--;
	if (len == 0)
		return 0;
	if (PTT_GROW(r->meta, &r->meta_cap, r->nmeta + 1) != 0)
		return PTT_E_NOMEM;
	char *copy = meta_store(r, line, len);
	if (!copy)
		return PTT_E_NOMEM;
	r->meta[r->nmeta++] = copy;
	if (strncmp(copy, "type ", 5) == 0) {
		struct ptt_type t;
		int rc = ptt_text_parse_type(copy + 5, &t);
		if (rc == 0)
			rc = ptt_types_define(&r->types, &t);
		return rc;
	}
	if (strncmp(copy, "part ", 5) == 0) {
		r->part = strtoull(copy + 5, NULL, 10);
		r->follows = r->inputs > 1 && r->prev_continued && r->part == r->last_part + 1;
		r->hist_said = 0;
		for (uint32_t k = 0; !r->follows && k < r->nscpt; k++) { /* after a missing part: no history holds */
			free(r->scpt[k]);
			r->scpt[k] = NULL;
		}
	}
	if (strncmp(copy, "continued ", 10) == 0)
		r->continued = 1;
	if (strcmp(copy, "head end") == 0)
		head_at_end(r, &r->meta[r->nmeta - 1]);
	else if (strncmp(copy, "head ", 5) == 0 && r->inputs > 1) {
		/* the names in force at a part's start: already read in the part before, else (a part is
		 * missing) the names are still true, the rest of the head not (the model would start anew) */
		r->head_left = strtoull(copy + 5, NULL, 10);
		r->head_names_only = r->part != r->last_part + 1;
		r->gap_pending = r->head_names_only;
	}
	/* the last definition wins (ptt_reader_meta): this one */
	int hz = strncmp(copy, "clock_hz ", 9) == 0, st = strncmp(copy, "start_ticks ", 12) == 0;
	if (hz)
		r->clock_hz = structure_clock(r, copy + 9);
	if (st)
		r->start_ticks = strtoull(copy + 12, NULL, 10);
	if (hz || st)
		ptt_clock_init(&r->clock, r->start_ticks, r->clock_hz);
	return 0;
}

/* Split a META/END payload into lines. */
static int add_meta_block(struct ptt_reader *r, const char *p, size_t len)
{
	int bad = 0;
	while (len) {
		const char *nl = memchr(p, '\n', len);
		size_t l = nl ? (size_t)(nl - p) + 1 : len;
		if (add_meta(r, p, l) != 0)
			bad = PTT_E_BADTYPE;
		p += l;
		len -= l;
	}
	return bad;
}

const char *ptt_reader_meta(const struct ptt_reader *r, const char *key)
{
	size_t kl = strlen(key);
	const char *found = NULL;
	for (size_t i = 0; i < r->nmeta; i++)
		if (strncmp(r->meta[i], key, kl) == 0 && r->meta[i][kl] == ' ')
			found = r->meta[i] + kl + 1; /* the last definition wins */
	return found;
}

size_t ptt_reader_meta_count(const struct ptt_reader *r) { return r->nmeta; }
uint64_t ptt_reader_part_overlap_next(const struct ptt_reader *r)
{
	if (!r->continued || r->version < PTT_FORMAT_VERSION_STREAMS)
		return UINT64_MAX; /* the trace ends here, or its parts were cut at one time (merged) */
	return r->mark_ticks ? ptt_clock_ns(&r->clock, r->mark_ticks) : 0;
}

uint64_t ptt_reader_part_overlap_to(const struct ptt_reader *r)
{
	if (!r->head_alone)
		return 0;
	uint64_t ns = r->head_before != UINT64_MAX ? ptt_clock_ns(&r->clock, r->head_before) : UINT64_MAX;
	return ns ? ns : 1; /* 0 says no such part */
}
const char *ptt_reader_meta_line(const struct ptt_reader *r, size_t i) { return i < r->nmeta ? r->meta[i] : NULL; }
const char *ptt_reader_diag(const struct ptt_reader *r) { return r->diag; }
int ptt_reader_form(const struct ptt_reader *r) { return r->form; }
const struct ptt_types *ptt_reader_types(const struct ptt_reader *r) { return &r->types; }
const struct ptt_clock *ptt_reader_clock(const struct ptt_reader *r) { return &r->clock; }
uint64_t ptt_reader_bytes(const struct ptt_reader *r) { return r->bytes_before + r->in_offset; }
unsigned ptt_reader_compressed(const struct ptt_reader *r)
{
	return r->compressed;
}

int ptt_reader_saw_end(const struct ptt_reader *r) { return r->saw_end; }
const char *ptt_reader_continued(const struct ptt_reader *r)
{
	return r->continued ? ptt_reader_meta(r, "continued") : NULL;
}

static int file_header(struct ptt_reader *r, int *form);

int ptt_reader_open(struct ptt_reader **rp, int fd, const char *name)
{
	struct ptt_reader *r = calloc(1, sizeof *r);
	if (!r)
		return PTT_E_NOMEM;
	*rp = r;
	r->fd = fd;
	r->inputs = 1;
	r->part = 1;
	snprintf(r->name, sizeof r->name, "%s", name ? name : "-");
	r->in_cap = IN_CAP_FIRST;
	struct stat st;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) /* a short file: a buffer its size (grown if it grows) */
		while (r->in_cap > IN_CAP_MIN && (off_t)r->in_cap / 2 >= st.st_size)
			r->in_cap /= 2;
	r->in = malloc(r->in_cap);
	if (!r->in)
		return PTT_E_NOMEM;
	ptt_types_init_builtin(&r->types);
	ptt_clock_init(&r->clock, 0, 1000000000u);
	return file_header(r, &r->form);
}

/*
 * Recognise the form of the input just opened from its first bytes: *form
 * set and 0 (a binary file header is consumed, text is left for next_text),
 * or a negative code with the diag set.
 */
static int file_header(struct ptt_reader *r, int *form)
{
	size_t got = fill(r, 16);
	if (r->diag[0])
		return -EIO;
	if (got == 0) {
		snprintf(r->diag, sizeof r->diag, "empty input, not a ptt trace");
		return PTT_E_TRUNCATED;
	}
	const unsigned char *in = r->in + r->in_start;
	if (got >= strlen(PTT_TEXT_MAGIC) && memcmp(in, PTT_TEXT_MAGIC, strlen(PTT_TEXT_MAGIC)) == 0) {
		*form = PTT_FORM_TEXT;
		return 0;
	}
	if (got < 8 || memcmp(in, PTT_FILE_MAGIC, 8) != 0) {
		snprintf(r->diag, sizeof r->diag, "offset 0: %s", ptt_strerror(PTT_E_BADMAGIC));
		return PTT_E_BADMAGIC;
	}
	if (got < 16) {
		snprintf(r->diag, sizeof r->diag, "offset %zu: file header truncated", got);
		return PTT_E_TRUNCATED;
	}
	struct ptt_file_header h;
	memcpy(&h, in, sizeof h);
	if (h.byte_order != PTT_BYTE_ORDER_MARK) {
		snprintf(r->diag, sizeof r->diag, "offset 12: %s", ptt_strerror(PTT_E_BYTEORDER));
		return PTT_E_BYTEORDER;
	}
	if (h.version < PTT_FORMAT_VERSION_PLAIN || h.version > PTT_FORMAT_VERSION) {
		snprintf(r->diag, sizeof r->diag, "offset 8: format version %" PRIu32 ", this tool reads versions %d to %d",
			 h.version, PTT_FORMAT_VERSION_PLAIN, PTT_FORMAT_VERSION);
		return PTT_E_VERSION;
	}
	*form = PTT_FORM_BINARY;
	r->version = h.version;
	consume(r, 16);
	struct stat st;
	r->seekable = fstat(r->fd, &st) == 0 && S_ISREG(st.st_mode) && lseek(r->fd, 0, SEEK_CUR) >= 0;
	return 0;
}

void ptt_reader_set_next(struct ptt_reader *r, int (*next)(void *arg), void *arg)
{
	r->next = next;
	r->next_arg = arg;
}

void ptt_reader_set_wait(struct ptt_reader *r, int (*wait)(void *arg), void *arg)
{
	r->wait = wait;
	r->wait_arg = arg;
}

/* Leave the rest of the current input unread: reading goes on with the next one. */
static void drop_input(struct ptt_reader *r)
{
	r->in_start = r->in_len = 0;
	r->eof = 1;
}

/*
 * The current input is used up (at a block or line boundary): go on with
 * the next one.  1 switched, 0 no more input, or a negative code when the
 * next input is not a trace of the same form (diag set, that input dropped).
 */
/* A new input begins (a file, or a trace concatenated to the one before). */
static void begin_input(struct ptt_reader *r)
{
	r->inputs++;
	r->last_part = r->part;
	r->part = 1;
	r->head_left = 0;
	r->prev_continued = r->continued;
	r->follows = 0;
	r->continued = 0;
	structure_begin_input(r);
}

static int next_input(struct ptt_reader *r)
{
	int fd = r->next ? r->next(r->next_arg) : -1;
	if (fd < 0)
		return 0;
	begin_input(r);
	r->bytes_before += r->in_offset;
	r->fd = fd;
	r->eof = 0;
	r->in_start = r->in_len = 0;
	r->in_offset = 0;
	r->input_at = 0;
	r->line_no = 0;
	r->seekable = 0;
	int form = r->form;
	int rc = file_header(r, &form);
	if (!rc && form != r->form) {
		snprintf(r->diag, sizeof r->diag, "offset 0: a %s trace after a %s one, input skipped",
			 form == PTT_FORM_TEXT ? "text" : "binary", r->form == PTT_FORM_TEXT ? "text" : "binary");
		rc = PTT_E_BADMAGIC;
	}
	if (rc) {
		drop_input(r);
		return rc;
	}
	return 1;
}

static int header_ok(const struct ptt_block_header *h)
{
	if (h->magic != PTT_BLOCK_MAGIC)
		return 0;
	uint32_t crc = (uint32_t)crc32(0, (const Bytef *)h, offsetof(struct ptt_block_header, header_crc));
	return crc == h->header_crc && h->kind >= PTT_BLOCK_META && /* a newer kind is passed over */
	       h->payload_len <= 4 * PTT_BLOCK_MAX_PAYLOAD && h->raw_len <= 4 * PTT_BLOCK_MAX_PAYLOAD;
}

/* Skip to the next plausible block header; returns bytes skipped. */
static uint64_t resync_block(struct ptt_reader *r)
{
	uint64_t skipped = 0;
	int skipping = r->skipping;
	r->skipping = 0; /* scanning byte by byte: read ahead in big chunks */
	for (;;) {
		size_t got = fill(r, sizeof(struct ptt_block_header));
		if (got < sizeof(struct ptt_block_header)) {
			skipped += got;
			consume(r, got);
			break;
		}
		struct ptt_block_header h;
		memcpy(&h, r->in + r->in_start, sizeof h);
		if (header_ok(&h))
			break;
		consume(r, 1);
		skipped++;
	}
	r->skipping = skipping;
	return skipped;
}

/* Pass over a block's payload without decoding it: a seek on files, a read on pipes. */
static void skip_payload(struct ptt_reader *r, uint64_t len)
{
	if (r->in_len >= len) {
		consume(r, (size_t)len);
		return;
	}
	len -= r->in_len;
	r->in_offset += r->in_len;
	r->in_len = r->in_start = 0;
	if (r->seekable && lseek(r->fd, (off_t)len, SEEK_CUR) >= 0) {
		r->in_offset += len;
		return;
	}
	while (len && !r->eof) {
		size_t want = len < r->in_cap ? (size_t)len : r->in_cap;
		size_t got = fill(r, want);
		consume(r, got);
		len -= got;
		if (got < want)
			break;
	}
}

static int ensure_blk(struct ptt_reader *r, size_t n)
{
	if (n <= r->blk_cap)
		return 0;
	unsigned char *nb = realloc(r->blk, n);
	if (!nb)
		return PTT_E_NOMEM;
	r->blk = nb;
	r->blk_cap = n;
	return 0;
}

/* The coded bytes of the block in blk move to cblk; blk takes the records expanded from them. */
static void coded_to_cblk(struct ptt_reader *r)
{
	unsigned char *t = r->cblk;
	size_t tc = r->cblk_cap;
	r->cblk = r->blk;
	r->cblk_cap = r->blk_cap;
	r->blk = t;
	r->blk_cap = tc;
}

/* words records expanded into blk: the block to parse (damaged: a zero word after them, which starts
 * no record, so that the parser reports the damage; not where the trace is cut there).  Returns 1. */
static int expanded(struct ptt_reader *r, size_t words, int damaged, int trunc)
{
	if (damaged && !trunc) {
		memset(r->blk + words * 4, 0, 4);
		words++;
	}
	r->blk_len = words * 4;
	r->blk_pos = 0;
	r->blk_zlib = 1; /* a record's offset is its block's */
	r->blk_compact = 1;
	return 1;
}

/*
 * A compact EVENTS block's payload (in blk, n = blk_len bytes: the length of
 * its records once expanded, then the coded records) into plain records in
 * blk, which the record parser then reads as any block's.  Where the coding
 * does not decode (damage), one word that starts no record follows the
 * records expanded so far: the parser reports the rest of the block as one
 * damaged stretch.  1, or <= 0 as load_block when nothing is left.
 */
static int expand_block(struct ptt_reader *r, uint64_t at, int trunc)
{
	uint32_t raw;
	size_t n = r->blk_len;
	if (n < 4 || (memcpy(&raw, r->blk, 4), raw > 4 * PTT_BLOCK_MAX_PAYLOAD)) {
		r->blk_len = 0;
		set_diag(r, "offset", at, trunc ? "truncated block, trace ends here" : "bad compact block, block skipped");
		return trunc ? PTT_E_TRUNCATED : PTT_E_BADBLOCK;
	}
	if (!r->cpt && !(r->cpt = calloc(1, sizeof *r->cpt)))
		return PTT_E_NOMEM;
	coded_to_cblk(r);
	int rc = ensure_blk(r, (size_t)raw + 8);
	if (rc)
		return rc;
	int bad;
	size_t words = cpt_expand(r->cpt, r->cblk + 4, n - 4, (uint32_t *)(void *)r->blk, raw / 4, r->blk_first, &bad);
	return expanded(r, words, bad || words * 4 != raw, trunc);
}

/*
 * A coded stream's block (PTT_BLOCK_CODED, in blk: n = blk_len coded bytes
 * and nothing else) expanded with its stream's history, which goes on from
 * the stream's block before (compact.h).  A record takes at least 8 coded
 * bytes and at most 64 expanded through a reference, 3 times its coded
 * bytes written out: 8 times the coded bytes bound the expansion.  Damage
 * as expand_block's; the stream's later blocks then read with a history
 * that may be wrong, and say so by their checksums.
 */
static int expand_stream_block(struct ptt_reader *r, uint32_t stream, int trunc)
{
	size_t n = r->blk_len;
	if (stream >= r->nscpt) {
		uint32_t k = stream + 16;
		struct ptt_compact **v = realloc(r->scpt, k * sizeof *v);
		if (!v)
			return PTT_E_NOMEM;
		memset(v + r->nscpt, 0, (k - r->nscpt) * sizeof *v);
		r->scpt = v;
		r->nscpt = k;
	}
	if (!r->scpt[stream] && !(r->scpt[stream] = calloc(1, sizeof *r->scpt[stream])))
		return PTT_E_NOMEM;
	coded_to_cblk(r);
	int rc = ensure_blk(r, 8 * n + 8);
	if (rc)
		return rc;
	int bad;
	size_t words = cpt_expand_more(r->scpt[stream], r->cblk, n, (uint32_t *)(void *)r->blk, 2 * n, 1, &bad);
	return expanded(r, words, bad, trunc);
}

/*
 * The payload of the block whose header h (at offset at) was just consumed:
 * 1 an EVENTS block loaded into blk, 0 a block used up (META, END, empty
 * EVENTS), or a negative code (diag set).
 */
static int load_block(struct ptt_reader *r, const struct ptt_block_header *hp, uint64_t at)
{
	struct ptt_block_header h = *hp;
	if (h.kind == PTT_BLOCK_EVENTS)
		r->skipping = 0; /* the window has begun: back to big reads */
	size_t n = fill(r, h.payload_len);
	int rc = ensure_blk(r, (COMPRESSED(h.flags) ? h.raw_len : h.payload_len) + 4);
	if (rc)
		return rc;
	r->blk_offset = r->in_offset;
	r->blk_first = h.first_ticks;
	r->blk_stream = h.kind == PTT_BLOCK_EVENTS ? h.stream : 0;
	r->blk_compact = 0;
	r->blk_zlib = COMPRESSED(h.flags) != 0;
	r->compressed |= COMPRESSED(h.flags);
	int trunc = n < h.payload_len;
	if (!flags_readable(h.flags)) {
		consume(r, n);
		set_diag(r, "offset", at, "block compressed in a way this version does not know, block skipped");
		return trunc ? PTT_E_TRUNCATED : PTT_E_ZLIB;
	}
	if (r->blk_zlib) {
		uLongf raw = h.raw_len;
		int bad = trunc || decompress_block(r, h.flags, r->blk, &raw, r->in + r->in_start, n) != 0;
		consume(r, n);
		if (bad || raw != h.raw_len) {
			set_diag(r, "offset", at, trunc ? "truncated compressed block, block skipped" : "corrupt compressed block, block skipped");
			return trunc ? PTT_E_TRUNCATED : PTT_E_ZLIB;
		}
		n = raw;
		if (h.kind == PTT_BLOCK_EVENTS && (h.flags & PTT_BLOCK_PACKED))
			ptt_block_unpack((uint32_t *)r->blk, n / 4, h.first_ticks);
	} else {
		memcpy(r->blk, r->in + r->in_start, n);
		consume(r, n);
	}
	r->blk_len = n;
	r->blk_pos = 0;
	if (h.kind == PTT_BLOCK_EVENTS && (h.flags & PTT_BLOCK_CODED) && h.stream && r->part > 1 &&
	    (h.stream >= r->nscpt || !r->scpt[h.stream]) && (!n || r->blk[0] != CPT_STREAM_RESET)) {
		/* a later part read without the one before: the stream's history is there, up to its next reset */
		r->blk_len = 0;
		if (r->hist_said)
			return 0;
		r->hist_said = 1;
		char what[240];
		snprintf(what, sizeof what, "part %" PRIu64 " read without the part before it: the records of each thread's "
			 "coded stream up to its next history reset (at most 128 KiB of its coded bytes) cannot be decoded, skipped",
			 r->part);
		set_diag(r, "block at offset", at, what);
		return PTT_E_TRUNCATED;
	}
	if (h.kind == PTT_BLOCK_EVENTS && (h.flags & PTT_BLOCK_COMPACT)) {
		rc = h.flags & PTT_BLOCK_CODED && h.stream ? expand_stream_block(r, h.stream, trunc)
							    : expand_block(r, at, trunc);
		if (rc <= 0)
			return rc;
		n = r->blk_len;
	}
	if (h.kind == PTT_BLOCK_EVENTS) {
		if (trunc) {
			/* deliver the records that made it; the diag comes with the cut record */
			r->blk_len = n & ~(size_t)3;
		}
		if (r->blk_len) {
			structure_count_begin(r, h.count, trunc);
			return 1;
		}
		if (trunc) {
			set_diag(r, "offset", at, "truncated block, trace ends here");
			return PTT_E_TRUNCATED;
		}
		return 0;
	}
	if (h.kind == PTT_BLOCK_META)
		r->st.meta_seen = 1;
	if (h.kind == PTT_BLOCK_END) {
		r->saw_end = 1;
		add_meta(r, "end", 3);
	}
	rc = add_meta_block(r, (const char *)r->blk, n);
	r->blk_len = 0;
	if (trunc) {
		set_diag(r, "offset", at, "truncated header block, trace ends here");
		return PTT_E_TRUNCATED;
	}
	if ((h.flags & PTT_BLOCK_CRC) && (uint32_t)crc32(0, r->blk, (uInt)n) != h.count) {
		/* kept: without its clock every time would be wrong, with it most likely only one value is */
		set_diag(r, "offset", at, "bad checksum in header block, its values may be wrong");
		return PTT_E_CHECKSUM;
	}
	if (rc) {
		set_diag(r, "offset", at, "bad event type definition in header, ignored");
		return rc;
	}
	return 0;
}

/* Load the next block into blk; 1 loaded, 0 end of input, <0 damage (diag set). */
static int next_block(struct ptt_reader *r)
{
	for (;;) {
		uint64_t at = r->in_offset;
		size_t got = fill(r, sizeof(struct ptt_block_header));
		if (got == 0) {
			int rc = next_input(r);
			if (rc > 0)
				continue;
			return rc;
		}
		struct ptt_block_header h;
		if (got < sizeof h) {
			set_diag(r, "offset", at, "truncated block header, trace ends here");
			consume(r, got);
			return PTT_E_TRUNCATED;
		}
		memcpy(&h, r->in + r->in_start, sizeof h);
		if (memcmp(&h, PTT_FILE_MAGIC, 8) == 0) {
			/* concatenated traces (cat rotated files): the next file's header */
			struct ptt_file_header fh;
			memcpy(&fh, &h, sizeof fh);
			if (fh.version >= PTT_FORMAT_VERSION_PLAIN && fh.version <= PTT_FORMAT_VERSION && fh.byte_order == PTT_BYTE_ORDER_MARK) {
				r->input_at = r->in_offset;
				consume(r, sizeof fh);
				r->version = fh.version;
				begin_input(r);
				continue;
			}
		}
		if (!header_ok(&h)) {
			uint64_t skipped = resync_block(r);
			r->st.meta_seen = 1; /* the header may be what was lost: said already, its events not lost again */
			char what[128];
			snprintf(what, sizeof what, "bad block header, %" PRIu64 " bytes skipped", skipped);
			set_diag(r, "offset", at, what);
			return PTT_E_BADBLOCK;
		}
		consume(r, sizeof h);
		if (h.kind == PTT_BLOCK_MARK && h.payload_len == 8 && fill(r, 8) == 8) {
			memcpy(&r->mark_ticks, r->in + r->in_start, 8);
			consume(r, 8);
			return 2;
		}
		int out = structure_block(r, &h, at);
		if (out) {
			skip_payload(r, h.payload_len); /* a snapshot: only ptt_reader_snapshot wants it */
			if (out < 0)
				return out;
			continue;
		}
		/* a stream's block is never passed over: where its records fall is the merge's to say */
		int passed = h.kind == PTT_BLOCK_EVENTS && h.count && !h.stream &&
			     (r->pos + h.count <= r->skip_pos || ptt_clock_ns(&r->clock, h.last_ticks) < r->skip_ns);
		if (passed && r->skip_names && r->names_budget < h.payload_len) {
			r->skip_names = 0; /* the budget spent: from here on by the headers alone, said */
			r->names_gap_ns = ptt_clock_ns(&r->clock, h.first_ticks);
		}
		if (passed && !r->skip_names) {
			skip_payload(r, h.payload_len);
			/* a part's head opens it (head_skipped): its records passed over here are not
			 * numbered, and not skipped again from the first block read */
			uint64_t head = r->head_left < h.count ? r->head_left : h.count;
			r->head_left -= head;
			r->pos += h.count - head;
			continue;
		}
		if (passed)
			r->names_budget -= h.payload_len;
		int rc = load_block(r, &h, at);
		r->blk_names_only = passed;
		if (passed)
			r->skipping = 1; /* still before the window: load_block thought it had begun */
		if (rc)
			return rc;
		if (r->head_ready || r->head_lost[0])
			return 3; /* a part's head at its end: delivered (or its loss said) before what follows */
	}
}

/* Is there a valid record at word offset p of the block? Returns its length or 0. */
static uint32_t valid_record_at(const struct ptt_reader *r, size_t p)
{
	if (p + PTT_REC_MIN_WORDS * 4 > r->blk_len)
		return 0;
	uint32_t w0;
	memcpy(&w0, r->blk + p, 4);
	uint32_t n = ptt_rec_len(w0);
	if (!ptt_rec_marked(w0) || n < PTT_REC_MIN_WORDS || p + (size_t)n * 4 > r->blk_len)
		return 0;
	/* summed where it lies (p is a multiple of 4 in the malloc'd block, which ptt_block_unpack reads as
	 * words too): a copy to the stack first was a rep movs for a few words, more than the sum itself */
	const uint32_t *words = (const uint32_t *)(const void *)(r->blk + p);
	return ptt_rec_sound(words, n) ? n : 0;
}

/*
 * A part's head (the names in force at its start, "head K") read after the
 * part before it: already known, skipped, and not counted: positions are
 * those of the events delivered, so that a rotated set and its one-file copy
 * (ptt-index) number every event alike (a snapshot's state, numbered as the
 * set was read, came after the copy's own events in a window's context: a
 * hold before the waits whose mutex it took).  After a missing part, its
 * names are delivered, the rest skipped.
 */
static int head_skipped(struct ptt_reader *r, const struct ptt_event *ev)
{
	if (!r->head_left)
		return 0;
	r->head_left--;
	if (r->head_names_only && ev->type && ev->type->role == PTT_ROLE_NAME)
		return 0;
	return 1;
}

/* A part of a rotated recording is missing before this one: said once, as damage. */
static int gap_reported(struct ptt_reader *r)
{
	if (!r->gap_pending)
		return 0;
	r->gap_pending = 0;
	char what[160];
	snprintf(what, sizeof what, "part %" PRIu64 " follows part %" PRIu64 ": the events of the parts between are lost",
		 r->part, r->last_part);
	set_diag(r, "offset", r->in_offset, what);
	return 1;
}

/*
 * The next sound record in file order into ev (words, nwords, offset):
 * 1 (*stream its block's stream, 0 outside streams), 2 a MARK block read
 * (r->mark_ticks), 3 a part's head at its end was loaded or found lost
 * (head_at_end), 0 at the end, or a negative code (diag set).
 */
static int next_record(struct ptt_reader *r, struct ptt_event *ev, uint32_t *stream)
{
	for (;;) {
		if (r->blk_pos >= r->blk_len) {
			if (r->st.blk_open && structure_count_end(r))
				return PTT_E_STRUCTURE;
			int rc = next_block(r);
			if (rc == 2 || rc == 3)
				return rc;
			if (rc == 0 && !r->saw_end && !r->continued && !r->end_reported) {
				/* a recorder always ends its trace: without the END block it was cut short */
				r->end_reported = 1;
				set_diag(r, "offset", r->in_offset, "the trace ends without its end block (cut short)");
				return PTT_E_TRUNCATED;
			}
			if (rc <= 0)
				return rc;
			r->in_damage = 0;
		}
		if (__builtin_expect(r->gap_pending, 0) && gap_reported(r))
			return PTT_E_TRUNCATED;
		if (__builtin_expect(r->st.clock_bad, 0) && structure_said(r))
			return PTT_E_STRUCTURE;
		size_t p = r->blk_pos;
		uint32_t n = valid_record_at(r, p);
		if (n == 0) {
			/* skip word by word to the next record that checks out */
			size_t q = p + 4;
			while (q < r->blk_len && !valid_record_at(r, q))
				q += 4;
			r->blk_pos = q;
			r->st.blk_damaged = 1;
			uint64_t where = r->blk_offset + p;
			if (r->in_damage)
				continue;
			r->in_damage = 1;
			char what[160];
			uint32_t w0 = 0;
			if (p + 4 <= r->blk_len)
				memcpy(&w0, r->blk + p, 4);
			if (q >= r->blk_len && p + (size_t)ptt_rec_len(w0) * 4 > r->blk_len && ptt_rec_marked(w0))
				snprintf(what, sizeof what, "truncated record, %zu bytes skipped", q - p);
			else
				snprintf(what, sizeof what, "bad checksum, record skipped (%zu bytes)", q - p);
			if (r->blk_zlib)
				set_diag(r, "block at offset", r->blk_offset - sizeof(struct ptt_block_header), what);
			else
				set_diag(r, "offset", where, what);
			return PTT_E_CHECKSUM;
		}
		if (!r->blk_compact)
			r->in_damage = 0;
		memcpy(ev->words, r->blk + p, (size_t)n * 4);
		r->blk_pos = p + (size_t)n * 4;
		r->st.blk_records++;
		ev->nwords = n;
		if (ptt_rec_id(ev->words[0]) == PTT_EV_PAD)
			continue;
		ev->offset = r->blk_zlib ? r->blk_offset - sizeof(struct ptt_block_header) : r->blk_offset + p;
		*stream = r->blk_stream;
		return 1;
	}
}

/* ev's record (words, nwords, offset set) decoded: 1, 0 when it is skipped (a part's head), or a negative code. */
static int decode_record(struct ptt_reader *r, struct ptt_event *ev)
{
	{
		ev->id = (uint16_t)ptt_rec_id(ev->words[0]);
		uint32_t n = ev->nwords;
		ev->ticks = ptt_rec_ticks(ev->words);
		ev->ns = ptt_clock_ns(&r->clock, ev->ticks);
		ev->pid = ptt_rec_pid(ev->words);
		ev->tid = ptt_rec_tid(ev->words);
		ev->type = ptt_types_get(&r->types, ev->id);
		if (!ev->type) {
			char what[96];
			snprintf(what, sizeof what, "unknown event type %u, record skipped", ev->id);
			set_diag(r, "offset", ev->offset, what);
			return PTT_E_UNKNOWN_TYPE;
		}
		if ((uint32_t)PTT_REC_MIN_WORDS + ev->type->words > n || ptt__decode_args(ev) != 0) {
			set_diag(r, "offset", ev->offset, "record too short for its event type, skipped");
			return PTT_E_BADRECORD;
		}
		if (head_skipped(r, ev))
			return 0;
		if (r->blk_names_only && !ptt_record_tells_names(ev->id, ev->type->role)) {
			r->pos++; /* passed over, numbered as if read */
			return 0;
		}
		ev->pos = r->pos++;
		return 1;
	}
}

/*
 * The next of a part's head read from its end (head_at_end): 1 ev, 0 none left (skipped ones
 * too), or PTT_E_TRUNCATED once when it could not be read (diag set).
 */
static int head_next(struct ptt_reader *r, struct ptt_event *ev)
{
	if (r->head_lost[0]) {
		set_diag(r, "offset", r->in_offset, r->head_lost);
		r->head_lost[0] = 0;
		return PTT_E_TRUNCATED;
	}
	while (r->head_q_pos < r->head_q_len) {
		const uint32_t *w = r->head_q + r->head_q_pos;
		uint32_t n = ptt_rec_len(w[0]);
		r->head_q_pos += n;
		memcpy(ev->words, w, (size_t)n * 4);
		ev->nwords = n;
		ev->offset = r->head_off;
		int rc = decode_record(r, ev);
		if (rc)
			return rc;
	}
	r->head_ready = 0;
	r->head_q_len = r->head_q_pos = 0;
	return 0;
}

/*
 * Records in merged order: those outside streams as they come; those of a
 * version 3 trace's streams through the merge, released by its MARK blocks
 * and, all of them, at the input's end (merge.h).  Damage is said where it
 * is met, ahead of the merged records around it.
 */
static int next_binary(struct ptt_reader *r, struct ptt_event *ev)
{
	for (;;) {
		int rc;
		if (r->merge && ptt_merge_next(r->merge, ev->words, &ev->nwords, &ev->offset)) {
			if ((rc = decode_record(r, ev)) != 0)
				return rc;
			continue;
		}
		if (__builtin_expect(r->head_ready || r->head_lost[0], 0) && !ptt_merge_held(r->merge)) {
			if ((rc = head_next(r, ev)) != 0)
				return rc;
			continue;
		}
		uint32_t stream = 0;
		rc = next_record(r, ev, &stream);
		if (rc == 3) { /* what is held goes first: the records of the inputs before */
			if (ptt_merge_held(r->merge) && r->inputs != r->merge_inputs)
				ptt_merge_all(r->merge);
			continue;
		}
		if (rc == 2) {
			if (r->merge)
				ptt_merge_mark(r->merge, r->mark_ticks);
			continue;
		}
		int held = ptt_merge_held(r->merge) > 0;
		if (rc == 1 && held && stream && r->inputs != r->merge_inputs && r->follows)
			r->merge_inputs = r->inputs; /* the next part of a --streams -m recording: its streams go on */
		if (rc == 1 && held && (!stream || r->inputs != r->merge_inputs)) {
			/* a record outside the streams, or another input's: what is held goes first */
			ptt_merge_all(r->merge);
			if ((rc = ptt_merge_add(r->merge, stream, ev->words, ev->nwords, ev->offset)) != 0)
				return rc;
			r->merge_inputs = r->inputs;
			continue;
		}
		if (rc == 1 && stream) {
			if (!r->merge && !(r->merge = ptt_merge_new()))
				return PTT_E_NOMEM;
			if (!held)
				r->merge_inputs = r->inputs;
			if ((rc = ptt_merge_add(r->merge, stream, ev->words, ev->nwords, ev->offset)) != 0)
				return rc;
			continue;
		}
		if (rc == 1) {
			if ((rc = decode_record(r, ev)) != 0)
				return rc;
			continue;
		}
		if (rc == 0 && held) { /* the end: everything held goes, in order */
			ptt_merge_all(r->merge);
			continue;
		}
		return rc;
	}
}

/* Next text line into buf (without newline); 0 at end, <0 when the next input is bad. */
static int text_line(struct ptt_reader *r, char **line, size_t *len)
{
	for (;;) {
		unsigned char *start = r->in + r->in_start;
		unsigned char *nl = memchr(start, '\n', r->in_len);
		if (nl || (r->eof && r->in_len)) {
			size_t l = nl ? (size_t)(nl - start) : r->in_len;
			*line = (char *)start;
			*len = l;
			return 1;
		}
		if (r->eof) {
			int rc = next_input(r);
			if (rc > 0)
				continue;
			return rc;
		}
		if (r->in_len >= IN_CAP / 2) {
			*line = (char *)start; /* an absurdly long line: hand it over as is, it will not parse */
			*len = r->in_len;
			return 1;
		}
		fill(r, r->in_len + 1);
	}
}

static int next_text(struct ptt_reader *r, struct ptt_event *ev)
{
	char *line;
	size_t len;
	int more;
	while ((more = text_line(r, &line, &len)) > 0) {
		char buf[PTT_MAX_STR * 4 + 1024];
		size_t l = len < sizeof buf - 1 ? len : sizeof buf - 1;
		memcpy(buf, line, l);
		buf[l] = 0;
		int too_long = len >= sizeof buf - 1;
		uint64_t line_no = ++r->line_no;
		consume(r, len + (r->in_len > len ? 1 : 0));
		if (l && buf[l - 1] == '\r')
			buf[--l] = 0;
		if (buf[0] == '#') {
			const char *p = buf + 1;
			while (*p == ' ')
				p++;
			if (strncmp(p, "ptt-trace ", 10) == 0) {
				long v = strtol(p + 10, NULL, 10);
				if (v != PTT_TEXT_VERSION) {
					snprintf(r->diag, sizeof r->diag, "line %" PRIu64 ": text form version %ld, this tool reads version %d",
						 line_no, v, PTT_TEXT_VERSION);
					drop_input(r);
					return PTT_E_VERSION;
				}
				continue;
			}
			if (strcmp(p, "end") == 0)
				r->saw_end = 1;
			if (add_meta(r, p, strlen(p)) != 0) {
				set_diag(r, "line", line_no, "bad event type definition, ignored");
				return PTT_E_BADTYPE;
			}
			continue;
		}
		if (l == 0)
			continue;
		int rc = too_long ? PTT_E_BADTEXT : ptt_text_parse_event(&r->types, buf, ev);
		if (rc) {
			char what[96];
			snprintf(what, sizeof what, "%s, line skipped", ptt_strerror(rc));
			set_diag(r, "line", line_no, what);
			return rc;
		}
		ev->offset = line_no;
		if (head_skipped(r, ev))
			continue;
		if (__builtin_expect(r->gap_pending, 0) && gap_reported(r))
			return PTT_E_TRUNCATED; /* this line is lost with the gap it follows: rare, and said */
		ev->pos = r->pos++;
		ptt_event_encode(ev);
		return 1;
	}
	return more;
}

/* Go on reading at file offset off (a seekable input): 0 or -1. */
static int seek_to(struct ptt_reader *r, uint64_t off)
{
	if (lseek(r->fd, (off_t)off, SEEK_SET) < 0)
		return -1;
	r->in_start = r->in_len = 0;
	r->in_offset = off;
	r->eof = 0;
	return 0;
}

/* Call fn for each record of the snapshot block at off (header h); 1, 0 if damaged, or fn's result. */
static int use_snapshot(struct ptt_reader *r, uint64_t off, const struct ptt_block_header *h,
			int (*fn)(void *ctx, struct ptt_event *ev, unsigned kind), void *ctx)
{
	if (seek_to(r, off + sizeof *h) != 0)
		return 0;
	size_t n = fill(r, h->payload_len);
	int rc = ensure_blk(r, (COMPRESSED(h->flags) ? h->raw_len : h->payload_len) + 4);
	if (rc || n < h->payload_len || !flags_readable(h->flags))
		return rc;
	if (COMPRESSED(h->flags)) {
		uLongf raw = h->raw_len;
		if (decompress_block(r, h->flags, r->blk, &raw, r->in + r->in_start, n) != 0 || raw != h->raw_len)
			return 0;
		n = raw;
	} else {
		memcpy(r->blk, r->in + r->in_start, n);
	}
	consume(r, h->payload_len);
	r->blk_len = n; /* for valid_record_at */
	r->blk_names_only = 0; /* the snapshot's records are all delivered, whatever block came before */
	static struct ptt_event ev; /* 1.6 KiB: not on the stack of a library call */
	uint64_t pos = UINT64_MAX;
	/* check the whole block before calling fn once: a damaged snapshot is not used at all */
	for (int pass = 0; pass < 2; pass++) {
		size_t p = 0;
		while (p < n) {
			uint32_t len = valid_record_at(r, p);
			uint32_t w[PTT_SNAP_WRAP_WORDS];
			if (len < PTT_SNAP_WRAP_WORDS)
				return 0;
			memcpy(w, r->blk + p, sizeof w);
			if (ptt_rec_id(w[0]) != PTT_EV_PAD || w[5] != PTT_SNAP_MAGIC)
				return 0;
			uint64_t at = (uint64_t)w[8] << 32 | w[7];
			if (w[6] == 0) {
				pos = at;
			} else if (pass == 1) {
				ev.nwords = len - PTT_SNAP_WRAP_WORDS;
				memcpy(ev.words, r->blk + p + 9 * 4, (size_t)ev.nwords * 4);
				if (ptt_event_decode(&r->types, &ev) == 0) {
					ev.ns = ptt_clock_ns(&r->clock, ev.ticks);
					ev.pos = at;
					ev.offset = off;
					rc = fn(ctx, &ev, w[6]);
					if (rc)
						return rc < 0 ? rc : -rc;
				}
			}
			p += (size_t)len * 4;
		}
		if (pos == UINT64_MAX)
			return 0;
	}
	r->pos = pos;
	return 1;
}

/* Read n bytes at file offset off without moving the reader: 0 or -1. */
static int read_at(struct ptt_reader *r, void *buf, size_t n, uint64_t off)
{
	return pread(r->fd, buf, n, (off_t)off) == (ssize_t)n ? 0 : -1;
}

/*
 * Use the index after the END block (ptt_trace.h): the last snapshot the
 * window allows, after the META blocks before it.  1 used; 0 no index or no
 * such snapshot (nothing changed); 2 failed after META blocks were read.
 */
static int from_index(struct ptt_reader *r, uint64_t start, uint64_t min_ns, uint64_t min_pos,
		      int (*fn)(void *ctx, struct ptt_event *ev, unsigned kind), void *ctx)
{
	struct stat st;
	uint32_t t[PTT_SNAP_WRAP_WORDS];
	if (fstat(r->fd, &st) != 0 || st.st_size < (off_t)(sizeof t + sizeof(struct ptt_block_header)) ||
	    read_at(r, t, sizeof t, (uint64_t)st.st_size - sizeof t) != 0)
		return 0;
	uint64_t at = (uint64_t)t[8] << 32 | t[7];
	if (t[0] != ptt_rec_word0(PTT_EV_PAD, PTT_SNAP_WRAP_WORDS) || ptt_rec_checksum(t, PTT_SNAP_WRAP_WORDS - 1) != t[9] ||
	    t[5] != PTT_SNAP_MAGIC || t[6] != PTT_SNAP_INDEX_END || at >= (uint64_t)st.st_size)
		return 0;
	struct ptt_block_header h;
	if (read_at(r, &h, sizeof h, at) != 0 || !header_ok(&h) || COMPRESSED(h.flags) ||
	    at + sizeof h + h.payload_len != (uint64_t)st.st_size)
		return 0;
	uint32_t *idx = malloc(h.payload_len + 4);
	if (!idx || read_at(r, idx, h.payload_len, at + sizeof h) != 0) {
		free(idx);
		return 0;
	}
	size_t n = h.payload_len / 4, best = SIZE_MAX;
	for (size_t p = 0; p + 14 <= n && idx[p] == ptt_rec_word0(PTT_EV_PAD, 14); p += 14) {
		uint64_t pos = (uint64_t)idx[p + 8] << 32 | idx[p + 7], ticks = (uint64_t)idx[p + 12] << 32 | idx[p + 11];
		if (idx[p + 6] == PTT_SNAP_INDEX_SNAPSHOT && ptt_rec_checksum(idx + p, 13) == idx[p + 13] &&
		    (pos <= min_pos || ptt_clock_ns(&r->clock, ticks) < min_ns))
			best = p; /* events before it are all before the window */
	}
	int rc = 0;
	if (best != SIZE_MAX) {
		uint64_t snap_off = (uint64_t)idx[best + 10] << 32 | idx[best + 9];
		rc = 1;
		for (size_t p = 0; p < best && rc == 1; p += 14) {
			uint64_t off = (uint64_t)idx[p + 10] << 32 | idx[p + 9];
			if (idx[p + 6] != PTT_SNAP_INDEX_META || off < start)
				continue; /* the header's META blocks are read already */
			struct ptt_block_header mh;
			if (seek_to(r, off) != 0 || fill(r, sizeof mh) < sizeof mh)
				rc = 2;
			memcpy(&mh, r->in + r->in_start, sizeof mh);
			if (rc == 1 && (!header_ok(&mh) || mh.kind != PTT_BLOCK_META))
				rc = 2;
			if (rc == 1) {
				consume(r, sizeof mh);
				rc = load_block(r, &mh, off) == 0 ? 1 : 2;
			}
		}
		struct ptt_block_header sh;
		if (rc == 1 && (read_at(r, &sh, sizeof sh, snap_off) != 0 || !header_ok(&sh) || !(sh.flags & PTT_BLOCK_SNAPSHOT)))
			rc = 2;
		if (rc == 1) {
			rc = use_snapshot(r, snap_off, &sh, fn, ctx);
			if (rc == 0)
				rc = 2;
		}
	}
	free(idx);
	return rc;
}

int ptt_reader_snapshot(struct ptt_reader *r, uint64_t min_ns, uint64_t min_pos,
			int (*fn)(void *ctx, struct ptt_event *ev, unsigned kind), void *ctx)
{
	if (r->form != PTT_FORM_BINARY || !r->seekable || r->pos || r->blk_len)
		return 0;
	uint64_t start = r->in_offset, cand = 0, pos = 0;
	struct ptt_block_header ch = { 0 };
	int have = 0, passed = 0, rc = 0;
	r->skipping = 1; /* read headers only */
	for (;;) {
		uint64_t at = r->in_offset;
		struct ptt_block_header h;
		if (fill(r, sizeof h) < sizeof h)
			break;
		memcpy(&h, r->in + r->in_start, sizeof h);
		if (!header_ok(&h))
			break;
		if (h.kind == PTT_BLOCK_META && !passed) {
			/* the header: read as usual (the clock and types are needed from here on) */
			consume(r, sizeof h);
			if (load_block(r, &h, at) != 0)
				break; /* damaged: read again from there, and reported, by ptt_reader_next */
			start = r->in_offset;
			continue;
		}
		if (!passed) {
			/* the header is read: an index finds the snapshot without walking the blocks */
			passed = 1;
			rc = from_index(r, start, min_ns, min_pos, fn, ctx);
			if (rc == 1 || rc < 0) {
				r->skipping = 0;
				r->blk_len = r->blk_pos = 0;
				return rc;
			}
			if (rc == 2) {
				have = 0;
				rc = 0;
				break; /* damaged: the whole trace is read */
			}
			if (seek_to(r, start) != 0)
				break;
			continue;
		}
		if (h.kind == PTT_BLOCK_META || h.kind == PTT_BLOCK_END)
			break; /* a META block after events (or the END): re-reading it would define twice */
		int snap = h.kind == PTT_BLOCK_EVENTS && (h.flags & PTT_BLOCK_SNAPSHOT);
		if (!snap && h.kind == PTT_BLOCK_EVENTS && h.count && pos + h.count > min_pos && ptt_clock_ns(&r->clock, h.last_ticks) >= min_ns)
			break; /* the window may begin in this block */
		if (snap) {
			cand = at;
			ch = h;
			have = 1;
		}
		pos += h.kind == PTT_BLOCK_EVENTS ? h.count : 0;
		passed = 1;
		consume(r, sizeof h);
		skip_payload(r, h.payload_len);
	}
	r->skipping = 0;
	if (have)
		rc = use_snapshot(r, cand, &ch, fn, ctx);
	r->blk_len = r->blk_pos = 0;
	if (rc == 0) {
		r->blk_len = r->blk_pos = 0;
		if (seek_to(r, start) != 0) {
			snprintf(r->diag, sizeof r->diag, "offset %" PRIu64 ": %s", start, strerror(errno));
			return -EIO;
		}
		r->pos = 0;
	}
	return rc;
}

void ptt_reader_skip(struct ptt_reader *r, uint64_t min_ns, uint64_t min_pos)
{
	r->skip_ns = min_ns;
	r->skip_pos = min_pos;
	r->skipping = min_ns || min_pos;
	r->skip_names = 0;
}

void ptt_reader_skip_names(struct ptt_reader *r, uint64_t min_ns, uint64_t max_bytes)
{
	ptt_reader_skip(r, min_ns, 0);
	r->skip_names = min_ns != 0;
	r->names_budget = max_bytes;
	r->names_gap_ns = 0;
}

uint64_t ptt_reader_names_gap(const struct ptt_reader *r) { return r->names_gap_ns; }

int ptt_reader_next(struct ptt_reader *r, struct ptt_event *ev)
{
	r->diag[0] = 0;
	return r->form == PTT_FORM_TEXT ? next_text(r, ev) : next_binary(r, ev);
}

void ptt_reader_close(struct ptt_reader *r)
{
	if (!r)
		return;
	for (struct meta_chunk *c = r->meta_text, *next; c; c = next) {
		next = c->next;
		free(c);
	}
	free(r->meta);
	ptt_types_free(&r->types);
	if (r->zs_ready)
		inflateEnd(&r->zs);
	ZSTD_freeDCtx(r->zd);
	free(r->in);
	free(r->blk);
	for (uint32_t k = 0; k < r->nscpt; k++)
		free(r->scpt[k]);
	free(r->scpt);
	free(r->cblk);
	free(r->cpt);
	free(r->head_q);
	ptt_merge_free(r->merge);
	free(r);
}

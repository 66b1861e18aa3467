/*
 * fuzz_compact.c - libFuzzer harness for compact EVENTS blocks (format
 * version 2, ptt-trace(5)), the form of every trace ptt-record writes.
 *
 * Each input is a block's first timestamp (8 bytes), a byte (how the block
 * is stored in 2, and its record count), then a compact block's payload as
 * ptt-trace(5) has it (the length once expanded, 4 bytes, then the coded
 * records; the seeds are the blocks of test/cli/fixtures), used three ways,
 * 1 always, 2 and 3 when byte 8 says so (its value mod 16 is 15, 14): they
 * cost 2 and 4 ms a run under ASan, 1 costs 0.13 ms, and 10 M runs of 1 take
 * half an hour on one core:
 *  1. its coded records expanded by cpt_expand: no read or write
 *     out of bounds, and what it expands, coded again by cpt_encode and
 *     expanded again, gives the same words (the encoder's history and the
 *     decoder's agree even on records no writer made);
 *  2. as the payload of a compact EVENTS block (raw, or compressed by the
 *     harness with zlib or zstd) of a trace whose META block defines the
 *     built-in types and whose block CRCs are right, read by ptt_reader: the
 *     length word, the damage report, the checksums behind the expansion;
 *  3. as a script of records (threads, ids, lengths, times, arguments that
 *     repeat or differ) written by ptt_writer in the compact form, raw or
 *     compressed, and read back by ptt_reader: every record read as written.
 * A disagreement in 1 or 3 aborts (a crash for libFuzzer).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include "../formats/compact.h"
#include "../formats/ptt_trace.h"
#include "fuzz.h"

#define MAX_WORDS (1u << 16) /* what one input can expand to, at most (8 KiB of input) */

static int input_fd = -1, out_fd = -1;
static struct ptt_compact *ca, *cb;
static uint32_t *w1, *w2;
static unsigned char *code;
static char *meta;
static size_t meta_len;

static void setup(void)
{
	ca = calloc(1, sizeof *ca);
	cb = calloc(1, sizeof *cb);
	w1 = malloc(MAX_WORDS * 4);
	w2 = malloc(MAX_WORDS * 4);
	code = malloc((size_t)MAX_WORDS / 6 * CPT_MAX_BYTES + CPT_MAX_BYTES);
	size_t cap = 64 * 1024;
	meta = malloc(cap);
	if (!ca || !cb || !w1 || !w2 || !code || !meta)
		abort();
	meta_len = (size_t)snprintf(meta, cap, "clock monotonic\nclock_hz 1000000000\nstart_ticks 0\npid 1\n");
	for (unsigned id = 0; id < PTT_EV_BUILTIN_COUNT && cap - meta_len > 512; id++) { /* as ptt-record */
		meta_len += ptt_text_format_type(ptt_builtin_type(id), meta + meta_len, cap - meta_len);
		meta[meta_len++] = '\n';
	}
	for (unsigned id = 2000; id < 2008; id++) /* 3's records: types of no argument, any length */
		meta_len += (size_t)snprintf(meta + meta_len, cap - meta_len, "type %u fuzz%u user 1 program -\n", id, id);
}

/* 1: expand, code again, expand again: the same records. */
static void expand_twice(const uint8_t *data, size_t size)
{
	if (size < 13)
		return;
	uint64_t first;
	memcpy(&first, data, 8);
	int bad;
	size_t n = cpt_expand(ca, data + 13, size - 13, w1, MAX_WORDS, first, &bad);
	cpt_reset(cb, first);
	unsigned char *p = code;
	for (size_t o = 0; o < n;) {
		uint32_t len = ptt_rec_len(w1[o]);
		if (len < PTT_REC_MIN_WORDS || o + len > n)
			abort(); /* cpt_expand wrote a record it cannot have read */
		p = cpt_encode(cb, p, w1 + o, len);
		o += len;
	}
	size_t m = cpt_expand(ca, code, (size_t)(p - code), w2, MAX_WORDS, first, &bad);
	if (bad || m != n || memcmp(w1, w2, n * 4) != 0)
		abort(); /* coded again, the records do not read back as they were */
}

static void put_block(uint8_t *out, size_t *o, unsigned kind, unsigned flags, const void *payload, size_t len,
		      size_t raw_len, uint32_t count, uint64_t first, uint64_t last)
{
	struct ptt_block_header h = { .magic = PTT_BLOCK_MAGIC, .kind = (uint16_t)kind, .flags = (uint16_t)flags,
				      .payload_len = (uint32_t)len, .raw_len = (uint32_t)raw_len, .count = count,
				      .first_ticks = first, .last_ticks = last };
	h.header_crc = (uint32_t)crc32(0, (const Bytef *)&h, offsetof(struct ptt_block_header, header_crc));
	memcpy(out + *o, &h, sizeof h);
	memcpy(out + *o + sizeof h, payload, len);
	*o += sizeof h + len;
}

static void read_trace(int fd)
{
	struct ptt_reader *r = NULL;
	if (ptt_reader_open(&r, fd, "fuzz") == 0) {
		struct ptt_event ev;
		char line[4096];
		for (unsigned long k = 0; k < 10000000ul; k++) {
			int rc = ptt_reader_next(r, &ev);
			if (rc == 0)
				break;
			if (rc > 0)
				ptt_text_format_event(&ev, line, sizeof line);
		}
	}
	ptt_reader_close(r);
}

/* 2: the payload as a compact block of a trace (byte 8: raw, zlib or zstd, and its record count). */
static void read_as_block(const uint8_t *data, size_t size)
{
	if (size < 9)
		return;
	uint64_t first;
	memcpy(&first, data, 8);
	unsigned how = data[8] % 3;
	uint32_t count = data[8] / 3u * 7u;
	data += 9;
	size -= 9;
	size_t cap = 16 + 48 + meta_len + 48 + ZSTD_compressBound(size) + compressBound((uLong)size) + 48;
	uint8_t *out = malloc(cap), *z = malloc(cap);
	if (!out || !z)
		abort();
	struct ptt_file_header fh = { .version = PTT_FORMAT_VERSION, .byte_order = PTT_BYTE_ORDER_MARK };
	memcpy(fh.magic, PTT_FILE_MAGIC, 8);
	memcpy(out, &fh, 16);
	size_t o = 16;
	put_block(out, &o, PTT_BLOCK_META, PTT_BLOCK_CRC, meta, meta_len, meta_len,
		  (uint32_t)crc32(0, (const Bytef *)meta, (uInt)meta_len), 0, 0);
	const void *payload = data;
	size_t len = size;
	unsigned flags = PTT_BLOCK_COMPACT;
	if (how == 1) {
		uLongf zl = (uLongf)(cap - o - 96);
		if (compress2(z, &zl, data, (uLong)size, 1) == Z_OK) {
			payload = z;
			len = zl;
			flags |= PTT_BLOCK_ZLIB;
		}
	} else if (how == 2) {
		size_t k = ZSTD_compress(z, cap - o - 96, data, size, -5);
		if (!ZSTD_isError(k)) {
			payload = z;
			len = k;
			flags |= PTT_BLOCK_ZSTD;
		}
	}
	put_block(out, &o, PTT_BLOCK_EVENTS, flags, payload, len, size, count, first, first + size);
	if (fuzz_load_fd(&input_fd, out, o) == 0)
		read_trace(input_fd);
	free(out);
	free(z);
}

/* The next byte of the script, 0 past its end. */
static unsigned next(const uint8_t **p, const uint8_t *end)
{
	return *p < end ? *(*p)++ : 0;
}

/* 3: records made from the input, written compact, read back as written. */
static void write_and_read(const uint8_t *data, size_t size)
{
	const uint8_t *p = data, *end = data + size;
	unsigned mode = next(&p, end);
	if (fuzz_load_fd(&out_fd, NULL, 0) != 0)
		return;
	struct ptt_writer *w = NULL;
	int zlevel = mode % 3 ? 1 : 0;
	if (ptt_writer_open(&w, out_fd, zlevel) != 0)
		return;
	int ok = ptt_writer_set_compact(w, 1) == 0 && (mode % 3 != 2 || ptt_writer_set_compressor(w, PTT_COMP_ZLIB) == 0) &&
		 ptt_writer_meta(w, meta, meta_len) == 0;
	uint32_t *recs = w1, last[32][24] = { { 0 } };
	size_t nw = 0;
	uint64_t ts = 1000;
	while (ok && p < end && nw + 256 < MAX_WORDS) {
		unsigned th = next(&p, end) % 20; /* more threads than a block has slots */
		unsigned id = 2000 + next(&p, end) % 8;  /* user ids no type defines: read as they are */
		unsigned len = PTT_REC_MIN_WORDS + next(&p, end) % 18; /* some beyond CPT_REF_WORDS */
		unsigned b = next(&p, end);
		ts += b & 0x80 ? (uint64_t)next(&p, end) << (b & 31) : b & 3;
		uint32_t *r = recs + nw;
		r[0] = ptt_rec_word0(id, len);
		r[1] = (uint32_t)ts;
		r[2] = (uint32_t)(ts >> 32);
		r[3] = 100 + th / 10;
		r[4] = 200 + th;
		uint32_t *prev = last[(th * 8 + id) % 32];
		for (unsigned i = PTT_REC_HDR_WORDS; i + 1 < len; i++) {
			unsigned c = next(&p, end);
			prev[i] = c & 1 ? prev[i] : (c & 2 ? c * 0x01010101u : (uint32_t)i);
			r[i] = prev[i];
		}
		r[len - 1] = ptt_rec_checksum(r, len - 1);
		ok = ptt_writer_record(w, r, len) == 0;
		nw += len;
	}
	ok = ok && ptt_writer_end(w, "exit_status 0\n", 14) == 0;
	if (ptt_writer_close(w) != 0 || !ok)
		return;
	if (lseek(out_fd, 0, SEEK_SET) != 0)
		return;
	struct ptt_reader *rd = NULL;
	if (ptt_reader_open(&rd, out_fd, "fuzz") != 0)
		abort(); /* the writer's own trace */
	struct ptt_event ev;
	size_t o = 0;
	int rc;
	while ((rc = ptt_reader_next(rd, &ev)) > 0) {
		if (ev.id < 2000)
			continue; /* the recorder's own records, none here */
		if (o >= nw)
			abort(); /* more records than were written */
		uint32_t len = ptt_rec_len(recs[o]);
		if (ev.nwords != len || memcmp(ev.words, recs + o, len * 4) != 0)
			abort(); /* not the record written there */
		o += len;
	}
	if (rc < 0 || o != nw)
		abort(); /* a record lost, or damage in the writer's own trace */
	ptt_reader_close(rd);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!ca)
		setup();
	expand_twice(data, size);
	if (size > 8 && data[8] % 16 == 15)
		read_as_block(data, size);
	if (size > 8 && data[8] % 16 == 14)
		write_and_read(data, size);
	return 0;
}

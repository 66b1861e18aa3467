/*
 * fuzz_blocks.c - libFuzzer harness for a trace's structure: whole blocks
 * duplicated, swapped, dropped, moved, retagged, reflagged and recounted,
 * every header crc made right again, so that only what no checksum sees is
 * wrong (ptt-trace(5), "Structure"), then read through ptt_reader_*: from
 * the start, after ptt_reader_skip, or from a snapshot (ptt_reader_snapshot).
 *
 * An input is a binary trace, or "PTTB", a count N and N operations of 3
 * bytes (op, i, j) followed by a binary trace; a bare trace gets operations
 * drawn from its own bytes (so the fixtures, taken as they are, are mutated
 * too).  One promise is checked beyond the sanitizers': an EVENTS block
 * repeated right after itself in a trace that reads cleanly is said, and
 * its events are read once.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "../formats/ptt_trace.h"
#include "fuzz.h"

#define MAX_BLOCKS 512
#define MAX_OPS 8

struct blk {
	size_t at, len; /* header and payload in the input */
	struct ptt_block_header h;
};

enum op { OP_DUP, OP_SWAP, OP_DROP, OP_MOVE, OP_RETAG, OP_FLAG, OP_COUNT, OP_SWAP_NEXT, OP_NUM };

static int input_fd = -1;

/* The blocks of the trace at data (after its 16-byte file header); their number. */
static size_t walk(const uint8_t *data, size_t size, struct blk *b)
{
	size_t n = 0, p = 16;
	while (n < MAX_BLOCKS && p + sizeof b->h <= size) {
		memcpy(&b[n].h, data + p, sizeof b->h);
		size_t len = b[n].h.payload_len <= size - p - sizeof b->h ? b[n].h.payload_len : size - p - sizeof b->h;
		b[n].at = p;
		b[n].len = sizeof b->h + len;
		p += b[n].len;
		n++;
	}
	return n;
}

/* Apply one operation to the list of n blocks (room for MAX_BLOCKS); the new count. */
static size_t apply(struct blk *b, size_t n, unsigned op, unsigned i, unsigned j)
{
	if (n == 0)
		return n;
	i %= n;
	j %= n;
	struct blk t;
	switch (op % OP_NUM) {
	case OP_DUP:
		if (n == MAX_BLOCKS)
			break;
		memmove(b + i + 1, b + i, (n - i) * sizeof *b);
		return n + 1;
	case OP_SWAP:
		t = b[i], b[i] = b[j], b[j] = t;
		break;
	case OP_SWAP_NEXT:
		if (i + 1 < n)
			t = b[i], b[i] = b[i + 1], b[i + 1] = t;
		break;
	case OP_DROP:
		memmove(b + i, b + i + 1, (n - i - 1) * sizeof *b);
		return n - 1;
	case OP_MOVE:
		t = b[i];
		memmove(b + i, b + i + 1, (n - i - 1) * sizeof *b);
		memmove(b + j + 1, b + j, (n - 1 - j) * sizeof *b);
		b[j] = t;
		break;
	case OP_RETAG:
		b[i].h.kind = (uint16_t)(j % 6);
		break;
	case OP_FLAG:
		b[i].h.flags ^= (uint16_t)(1u << (j % 8));
		break;
	case OP_COUNT:
		b[i].h.count += (uint32_t)(int)(j % 5) - 2;
		break;
	}
	return n;
}

/* The mutated trace: the file header, then each block with its header crc made right (malloc'd). */
static uint8_t *assemble(const uint8_t *data, const struct blk *b, size_t n, size_t *outsize)
{
	size_t total = 16;
	for (size_t k = 0; k < n; k++)
		total += b[k].len;
	uint8_t *out = malloc(total ? total : 1);
	if (!out)
		return NULL;
	memcpy(out, data, 16);
	size_t o = 16;
	for (size_t k = 0; k < n; k++) {
		struct ptt_block_header h = b[k].h;
		if (h.magic == PTT_BLOCK_MAGIC)
			h.header_crc = (uint32_t)crc32(0, (const Bytef *)&h, offsetof(struct ptt_block_header, header_crc));
		memcpy(out + o, &h, sizeof h);
		memcpy(out + o + sizeof h, data + b[k].at + sizeof h, b[k].len - sizeof h);
		o += b[k].len;
	}
	*outsize = o;
	return out;
}

static int no_record(void *ctx, struct ptt_event *ev, unsigned kind)
{
	(void)ctx, (void)ev, (void)kind;
	return 0;
}

/* Read the whole trace (how: 0 from the start, 1 after a skip, 2 from a snapshot); events and errors. */
static void read_trace(const uint8_t *data, size_t size, int how, unsigned long *events, unsigned long *errors)
{
	*events = *errors = 0;
	if (fuzz_load_fd(&input_fd, data, size) != 0)
		return;
	struct ptt_reader *r = NULL;
	if (ptt_reader_open(&r, input_fd, "fuzz") != 0) {
		(*errors)++; /* no trace at all (a version this reader does not know): nothing to compare */
	} else {
		if (how == 1)
			ptt_reader_skip(r, (uint64_t)size * 1000u, size / 64);
		if (how == 2 && ptt_reader_snapshot(r, (uint64_t)size * 1000u, size / 64, no_record, NULL) < 0)
			(*errors)++;
		static struct ptt_event ev;
		/* the reader promises progress; a bound turns a broken promise into a hang report */
		for (unsigned long k = 0; k < 10000000ul; k++) {
			int rc = ptt_reader_next(r, &ev);
			if (rc == 0)
				break;
			if (rc > 0)
				(*events)++;
			else
				(*errors)++, (void)ptt_reader_diag(r);
		}
	}
	ptt_reader_close(r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t ops[3 * MAX_OPS];
	size_t nops = 0;
	if (size >= 5 && memcmp(data, "PTTB", 4) == 0) {
		nops = data[4] % (MAX_OPS + 1);
		if (size < 5 + 3 * nops)
			return 0;
		memcpy(ops, data + 5, 3 * nops);
		data += 5 + 3 * nops;
		size -= 5 + 3 * nops;
	} else if (size >= 16) {
		uint32_t c = (uint32_t)crc32(0, data, (uInt)size); /* drawn from the trace itself */
		nops = 1 + c % 3;
		for (size_t k = 0; k < 3 * nops; k++)
			ops[k] = (uint8_t)(c >> (8 * (k % 4))) ^ (uint8_t)(k * 37);
	}
	if (size < 16 || memcmp(data, PTT_FILE_MAGIC, 8) != 0)
		return 0;
	static struct blk b[MAX_BLOCKS];
	size_t n = walk(data, size, b);
	struct ptt_block_header dup = { 0 };
	for (size_t k = 0; k < nops; k++) {
		unsigned i = n ? ops[3 * k + 1] % n : 0;
		if (k == 0 && nops == 1 && ops[0] % OP_NUM == OP_DUP && n)
			dup = b[i].h;
		n = apply(b, n, ops[3 * k], ops[3 * k + 1], ops[3 * k + 2]);
	}
	size_t msize;
	uint8_t *m = assemble(data, b, n, &msize);
	if (!m)
		return 0;
	unsigned long events, errors;
	read_trace(m, msize, (int)(size % 3), &events, &errors);
	if (dup.magic == PTT_BLOCK_MAGIC && dup.kind == PTT_BLOCK_EVENTS && dup.count && !(dup.flags & PTT_BLOCK_SNAPSHOT) &&
	    dup.stream == 0 && size % 3 == 0) {
		/* an EVENTS block written twice in a row in a trace that reads cleanly: said, read once */
		unsigned long events0, errors0;
		read_trace(data, size, 0, &events0, &errors0);
		if (errors0 == 0 && (errors == 0 || events != events0))
			abort();
	}
	free(m);
	return 0;
}

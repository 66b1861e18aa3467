/* fuzz_common.c - helpers shared by the harnesses. */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include "../formats/ptt_trace.h"
#include "fuzz.h"

int fuzz_load_fd(int *fd, const uint8_t *data, size_t size)
{
	if (*fd < 0)
		*fd = memfd_create("ptt-fuzz", MFD_CLOEXEC);
	if (*fd < 0 || ftruncate(*fd, 0) != 0)
		return -1;
	size_t done = 0;
	while (done < size) {
		ssize_t k = pwrite(*fd, data + done, size - done, (off_t)done);
		if (k <= 0)
			return -1;
		done += (size_t)k;
	}
	return lseek(*fd, 0, SEEK_SET) == 0 ? 0 : -1;
}

/*
 * As compress2(), at level 0: stored blocks, a copy (a real deflate cost a third of each run).
 * What it is for is getting mutated records behind the ZLIB flag to the unpacker; compressed
 * data reaches inflate from the zlib seeds (kept as they are) and the raw pass.  Made once.
 */
static int compress_small(uint8_t *dst, uLongf *dlen, const uint8_t *src, size_t len)
{
	static z_stream z;
	static int ready;
	if (!ready) {
		if (deflateInit2(&z, 0, Z_DEFLATED, 9, 1, Z_DEFAULT_STRATEGY) != Z_OK)
			return -1;
		ready = 1;
	} else if (deflateReset(&z) != Z_OK) {
		return -1;
	}
	z.next_in = (Bytef *)(uintptr_t)src;
	z.avail_in = (uInt)len;
	z.next_out = dst;
	z.avail_out = (uInt)*dlen;
	if (deflate(&z, Z_FINISH) != Z_STREAM_END)
		return -1;
	*dlen = z.total_out;
	return 0;
}

/* Walk the blocks of a binary file, recomputing CRCs and compressing ZLIB and ZSTD payloads; NULL if not binary. */
uint8_t *fuzz_fix_up(const uint8_t *data, size_t size, size_t *outsize)
{
	if (size < 16 || memcmp(data, PTT_FILE_MAGIC, 8) != 0)
		return NULL;
	size_t cap = size * 2 + 1024, o = 16, p = 16;
	uint8_t *out = malloc(cap);
	if (!out)
		return NULL;
	memcpy(out, data, 16);
	while (p + sizeof(struct ptt_block_header) <= size) {
		struct ptt_block_header h;
		memcpy(&h, data + p, sizeof h);
		p += sizeof h;
		size_t len = h.payload_len <= size - p ? h.payload_len : size - p;
		const uint8_t *payload = data + p;
		p += len;
		uLongf zlen = compressBound((uLong)len);
		if (ZSTD_compressBound(len) > zlen)
			zlen = (uLongf)ZSTD_compressBound(len);
		if (o + sizeof h + zlen > cap)
			break;
		uint8_t *dst = out + o + sizeof h;
		int zlib = (h.flags & PTT_BLOCK_ZLIB) != 0;
		int zstd = !zlib && (h.flags & PTT_BLOCK_ZSTD) != 0;
		int already = zlib && len >= 2 && (payload[0] & 0x0f) == 8 && ((payload[0] << 8) | payload[1]) % 31 == 0;
		if (zstd) /* a zstd frame's magic, 0xFD2FB528 little-endian */
			already = len >= 4 && payload[0] == 0x28 && payload[1] == 0xb5 && payload[2] == 0x2f && payload[3] == 0xfd;
		if ((h.flags & PTT_BLOCK_CRC) && h.kind != PTT_BLOCK_EVENTS && !already)
			h.count = (uint32_t)crc32(0, payload, (uInt)len);
		if (zlib && !already) {
			if (compress_small(dst, &zlen, payload, len) != 0)
				break;
			h.raw_len = (uint32_t)len;
			h.payload_len = (uint32_t)zlen;
		} else if (zstd && !already) { /* zstd's fastest level: what matters is reaching the unpacker */
			size_t k = ZSTD_compress(dst, zlen, payload, len, -5);
			if (ZSTD_isError(k))
				break;
			h.raw_len = (uint32_t)len;
			h.payload_len = (uint32_t)k;
		} else {
			memcpy(dst, payload, len);
			h.payload_len = (uint32_t)len;
		}
		h.magic = PTT_BLOCK_MAGIC;
		h.header_crc = (uint32_t)crc32(0, (const Bytef *)&h, offsetof(struct ptt_block_header, header_crc));
		memcpy(out + o, &h, sizeof h);
		o += sizeof h + h.payload_len;
	}
	*outsize = o;
	return out;
}

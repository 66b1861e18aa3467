/* pack.c - the reversible transform of EVENTS blocks before zlib (see ptt_block_pack). */
#include "ptt_trace.h"

/* words of the well-formed record at w[p], or 0 */
static uint32_t record_at(const uint32_t *w, size_t p, size_t nwords)
{
	uint32_t len = ptt_rec_len(w[p]);
	if (!ptt_rec_marked(w[p]) || len < PTT_REC_MIN_WORDS || p + len > nwords)
		return 0;
	return len;
}

void ptt_block_pack(uint32_t *w, size_t nwords, uint64_t first_ticks)
{
	uint64_t prev = first_ticks;
	uint32_t len;
	for (size_t p = 0; p < nwords && (len = record_at(w, p, nwords)); p += len) {
		uint64_t ts = (uint64_t)w[p + 2] << 32 | w[p + 1], d = ts - prev;
		prev = ts;
		w[p + 1] = (uint32_t)d;
		w[p + 2] = (uint32_t)(d >> 32);
		w[p + len - 1] = 0;
	}
}

void ptt_block_unpack(uint32_t *w, size_t nwords, uint64_t first_ticks)
{
	uint64_t ts = first_ticks;
	uint32_t len;
	for (size_t p = 0; p < nwords && (len = record_at(w, p, nwords)); p += len) {
		ts += (uint64_t)w[p + 2] << 32 | w[p + 1];
		w[p + 1] = (uint32_t)ts;
		w[p + 2] = (uint32_t)(ts >> 32);
		ptt_rec_seal(w + p, len);
	}
}

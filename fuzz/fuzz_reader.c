/*
 * fuzz_reader.c - libFuzzer harness for the trace reader: plain, packed and
 * zlib and zstd EVENTS blocks, META/END text, the text form, damage and resync.
 *
 * Each input is read twice: as the file it is (damage handling: checksums,
 * block CRCs, resync), then "fixed up" so that mutations reach the decoders
 * behind the integrity checks: every block header found by walking the file
 * gets its CRCs recomputed, and a block flagged ZLIB whose payload is not
 * already a zlib stream is compressed by the harness (so flipping a plain
 * EVENTS block's flags to ZLIB|PACKED feeds mutated records to the unpacker).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../formats/ptt_trace.h"
#include "fuzz.h"

static int input_fd = -1;

static void read_all(const uint8_t *data, size_t size, int skip)
{
	if (fuzz_load_fd(&input_fd, data, size) != 0)
		return;
	struct ptt_reader *r = NULL;
	if (ptt_reader_open(&r, input_fd, "fuzz") == 0) {
		if (skip)
			ptt_reader_skip(r, (uint64_t)size * 1000u, size / 64);
		struct ptt_event ev;
		char line[4096];
		/* the reader promises progress; a bound turns a broken promise into a hang report */
		for (unsigned long n = 0; n < 10000000ul; n++) {
			int rc = ptt_reader_next(r, &ev);
			if (rc == 0)
				break;
			if (rc > 0)
				ptt_text_format_event(&ev, line, sizeof line);
			else
				(void)ptt_reader_diag(r);
		}
		for (size_t i = 0; i < ptt_reader_meta_count(r); i++)
			(void)ptt_reader_meta_line(r, i);
	}
	ptt_reader_close(r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	read_all(data, size, 0);
	size_t fsize;
	uint8_t *fixed = fuzz_fix_up(data, size, &fsize);
	if (fixed) {
		read_all(fixed, fsize, size % 3 == 0);
		free(fixed);
	}
	return 0;
}

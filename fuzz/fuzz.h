/* fuzz.h - what the libFuzzer harnesses share. */
#ifndef PTT_FUZZ_H
#define PTT_FUZZ_H

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
/* Put data in a memory file (created on first use in *fd), offset 0: a seekable input like a trace file. 0 or -1. */
int fuzz_load_fd(int *fd, const uint8_t *data, size_t size);

/*
 * A binary trace's copy with every block header's CRC (and a META or END block's text CRC)
 * made right, and ZLIB- or ZSTD-flagged payloads that are not compressed compressed by the
 * harness, so that mutations reach the decoders behind the integrity checks (malloc'd; the
 * caller frees it).  NULL when data is not a binary trace.
 */
uint8_t *fuzz_fix_up(const uint8_t *data, size_t size, size_t *outsize);

#endif

/* fuzz.h - what the libFuzzer harnesses share. */
#ifndef PTT_FUZZ_H
#define PTT_FUZZ_H

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
/* Put data in a memory file (created on first use in *fd), offset 0: a seekable input like a trace file. 0 or -1. */
int fuzz_load_fd(int *fd, const uint8_t *data, size_t size);

#endif

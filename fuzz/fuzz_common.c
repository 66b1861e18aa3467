/* fuzz_common.c - helpers shared by the harnesses. */
#include <sys/mman.h>
#include <unistd.h>

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

/* wrap_prctl.c - prctl(PR_SET_NAME) names the calling thread, like pthread_setname_np. */
#include <errno.h>
#include <stdarg.h>
#include <sys/prctl.h>

#include "runtime.h"

PTT_EXPORT int prctl(int option, ...)
{
	va_list ap;
	va_start(ap, option);
	unsigned long a2 = va_arg(ap, unsigned long), a3 = va_arg(ap, unsigned long);
	unsigned long a4 = va_arg(ap, unsigned long), a5 = va_arg(ap, unsigned long);
	va_end(ap);
	int ret = REAL(prctl)(option, a2, a3, a4, a5);
	if (ret == 0 && option == PR_SET_NAME && ptt_shm && a2) {
		char name[17];
		const char *src = (const char *)a2;
		unsigned i = 0;
		for (; i < 16 && src[i]; i++)
			name[i] = src[i];
		name[i] = 0;
		int saved = errno;
		uint32_t a[1] = { ptt_tls.tid ? ptt_tls.tid : ptt_gettid() };
		ptt_emit_str(PTT_EV_THREAD_NAME, a, 1, name);
		errno = saved;
	}
	return ret;
}

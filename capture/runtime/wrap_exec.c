/*
 * wrap_exec.c - the exec family: a process_exec event before the image is
 * replaced (the new image's runtime then starts with process_begin under
 * the same pid), and another with the error if exec returned.  glibc's
 * execvp and execl* do not call execve through the PLT, so each is wrapped.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <unistd.h>

#include "runtime.h"

/* A vfork child shares its parent's memory, ring and cached ids: it records nothing. */
static int in_vfork_child(void)
{
	return ptt_tls.pid && (uint32_t)getpid() != ptt_tls.pid;
}

static void exec_event(int ret, const char *path)
{
	if (!ptt_on[PTT_EV_PROCESS_EXEC])
		return;
	int saved = errno;
	if (in_vfork_child()) {
		errno = saved;
		return;
	}
	uint32_t a[1] = { (uint32_t)ret };
	ptt_emit_str(PTT_EV_PROCESS_EXEC, a, 1, path ? path : "");
	errno = saved;
}

/* The old image ends here: its ring is done (the new image gets fresh ones). */
static void before_exec(const char *path)
{
	exec_event(0, path);
}

static int after_failed_exec(int ret, const char *path)
{
	exec_event(errno, path);
	return ret;
}

PTT_EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
	before_exec(path);
	return after_failed_exec(REAL(execve)(path, argv, envp), path);
}

PTT_EXPORT int execv(const char *path, char *const argv[])
{
	before_exec(path);
	return after_failed_exec(REAL(execv)(path, argv), path);
}

PTT_EXPORT int execvp(const char *file, char *const argv[])
{
	before_exec(file);
	return after_failed_exec(REAL(execvp)(file, argv), file);
}

PTT_EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
	before_exec(file);
	return after_failed_exec(REAL(execvpe)(file, argv, envp), file);
}

PTT_EXPORT int fexecve(int fd, char *const argv[], char *const envp[])
{
	before_exec("(fexecve)");
	return after_failed_exec(REAL(fexecve)(fd, argv, envp), "(fexecve)");
}

/* execl*: collect the variadic arguments into an argv on the stack, as glibc does. */
#define COLLECT_ARGS(arg0, ap, argv, envp_out) \
	size_t argc = 1; \
	va_start(ap, arg0); \
	while (va_arg(ap, const char *)) \
		argc++; \
	va_end(ap); \
	const char **argv = __builtin_alloca((argc + 1) * sizeof *argv); \
	argv[0] = arg0; \
	va_start(ap, arg0); \
	for (size_t i = 1; i <= argc; i++) \
		argv[i] = va_arg(ap, const char *); \
	envp_out; \
	va_end(ap)

PTT_EXPORT int execl(const char *path, const char *arg, ...)
{
	va_list ap;
	COLLECT_ARGS(arg, ap, argv, (void)0);
	return execv(path, (char *const *)argv);
}

PTT_EXPORT int execlp(const char *file, const char *arg, ...)
{
	va_list ap;
	COLLECT_ARGS(arg, ap, argv, (void)0);
	return execvp(file, (char *const *)argv);
}

PTT_EXPORT int execle(const char *path, const char *arg, ...)
{
	va_list ap;
	char *const *envp;
	COLLECT_ARGS(arg, ap, argv, envp = va_arg(ap, char *const *));
	return execve(path, (char *const *)argv, envp);
}

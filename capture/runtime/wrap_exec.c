/*
 * wrap_exec.c - the exec family: a process_exec event before the image is
 * replaced (the new image's runtime then starts with process_begin under
 * the same pid), and another with the error if exec returned.  glibc's
 * execvp and execl* do not call execve through the PLT, so each is wrapped.
 * And the children started without fork(): posix_spawn, posix_spawnp and
 * vfork, which glibc makes with clone(CLONE_VM | CLONE_VFORK) and which
 * init.c's fork wrapper never sees: their process_fork in the parent.
 */
#include <errno.h>
#include <spawn.h>
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

/* The old image ends here: its ring is done (the new image gets fresh ones).  And the new image
 * attaches from the ring's descriptor, if the program left it (ptt_exec_ring_fd); when it did not,
 * the trace says so (a vfork child, whose descriptors are its own but whose memory is its
 * parent's, only mends its descriptor).  1 when the descriptor was opened again for this exec. */
static int before_exec(const char *path)
{
	int reopened = 0, child = in_vfork_child();
	if (!ptt_exec_ring_fd(&reopened) && !child)
		ptt_emit_limit(PTT_LIMIT_EXEC_UNTRACED, 1, 0, 0);
	exec_event(0, path);
	return reopened;
}

/* after an exec that returned: the descriptor as the program left it, and the error */
static int after_failed_exec(int ret, const char *path, int reopened)
{
	if (reopened)
		ptt_exec_ring_fd_close();
	exec_event(errno, path);
	return ret;
}

PTT_EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
	int reopened = before_exec(path);
	return after_failed_exec(REAL(execve)(path, argv, envp), path, reopened);
}

PTT_EXPORT int execv(const char *path, char *const argv[])
{
	int reopened = before_exec(path);
	return after_failed_exec(REAL(execv)(path, argv), path, reopened);
}

PTT_EXPORT int execvp(const char *file, char *const argv[])
{
	int reopened = before_exec(file);
	return after_failed_exec(REAL(execvp)(file, argv), file, reopened);
}

PTT_EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
	int reopened = before_exec(file);
	return after_failed_exec(REAL(execvpe)(file, argv, envp), file, reopened);
}

PTT_EXPORT int fexecve(int fd, char *const argv[], char *const envp[])
{
	int reopened = before_exec("(fexecve)");
	return after_failed_exec(REAL(fexecve)(fd, argv, envp), "(fexecve)", reopened);
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

/*
 * The process_fork of a child that shares the parent's memory until it
 * execs or exits (posix_spawn, vfork): the record is opened before the
 * child exists and closed with its pid once the parent runs again, so that
 * it is stamped before anything the child's new image records, and the
 * recorder, which holds the merge back at a ring with a record open, writes
 * nothing of the child's before it.  The child itself writes nothing (the
 * exec wrappers and _exit know a vfork child: its pid is not the one the
 * shared thread-local state holds).  A failed start gives the record's room
 * back: no event.  (fork's is written after the call: init.c.)
 */
int ptt_fork_open(struct ptt_rec *rec)
{
	if (!ptt_on[PTT_EV_PROCESS_FORK] || in_vfork_child() || ptt_rec_open(rec, PTT_EV_PROCESS_FORK, 1) != 0)
		return 0;
	ptt_defer_begin(); /* events traced inside the call wait for the record */
	return 1;
}

void ptt_fork_close(struct ptt_rec *rec, pid_t pid)
{
	int saved = errno;
	if (pid > 0) {
		rec->p[PTT_REC_HDR_WORDS] = (uint32_t)pid;
		ptt_defer_close(rec);
	} else {
		ptt_defer_cancel(rec);
	}
	errno = saved;
}

/* The child's image attaches from the ring's descriptor, as an exec's (before_exec): opened again
 * for the call if the program closed it (1: to be closed after), a limit if that cannot be. */
static int spawn_ring_fd(void)
{
	int reopened = 0;
	if (ptt_shm && !ptt_exec_ring_fd(&reopened))
		ptt_emit_limit(PTT_LIMIT_EXEC_UNTRACED, 1, 0, 0);
	return reopened;
}

typedef int spawn_fn(pid_t *, const char *, const posix_spawn_file_actions_t *, const posix_spawnattr_t *,
		     char *const[], char *const[]);

/* posix_spawn or posix_spawnp (real), its process_fork opened before the child exists and closed with its pid. */
static int spawn_traced(spawn_fn *real, pid_t *pid, const char *path, const posix_spawn_file_actions_t *actions,
			const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
	struct ptt_rec rec;
	pid_t child = 0;
	int reopened = spawn_ring_fd();
	int open = ptt_fork_open(&rec);
	int ret = real(&child, path, actions, attr, argv, envp);
	if (ret == 0 && pid)
		*pid = child;
	if (open)
		ptt_fork_close(&rec, ret == 0 ? child : 0);
	if (reopened)
		ptt_exec_ring_fd_close();
	return ret;
}

PTT_EXPORT int posix_spawn(pid_t *pid, const char *path, const posix_spawn_file_actions_t *actions,
			   const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
	return spawn_traced(REAL(posix_spawn), pid, path, actions, attr, argv, envp);
}

PTT_EXPORT int posix_spawnp(pid_t *pid, const char *file, const posix_spawn_file_actions_t *actions,
			    const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
	return spawn_traced(REAL(posix_spawnp), pid, file, actions, attr, argv, envp);
}

#if defined(__x86_64__)
/*
 * vfork: the child runs on the parent's stack until it execs or exits, so
 * the wrapper cannot be C (a C frame's return address and saved registers
 * would be the child's to overwrite): it makes the system call itself, as
 * glibc's vfork does, keeping its return address in a register (%rdi: the
 * child's registers are its own), and calls C only in the parent, before
 * the call (ptt_vfork_open: the record opened) and after it
 * (ptt_vfork_close: the child's pid, or the error).  The child returns 0
 * having touched nothing.  The record is thread-local: one vfork at a time
 * per thread.
 */
static __thread struct ptt_rec vfork_rec __attribute__((tls_model("initial-exec")));
static __thread int vfork_open __attribute__((tls_model("initial-exec")));

void ptt_vfork_open(void) PTT_HIDDEN;
long ptt_vfork_close(long ret) PTT_HIDDEN;

void ptt_vfork_open(void)
{
	int saved = errno;
	vfork_open = ptt_fork_open(&vfork_rec);
	errno = saved;
}

/* The parent's side after the system call: ret is the child's pid or -errno; vfork's value. */
long ptt_vfork_close(long ret)
{
	if (vfork_open) {
		vfork_open = 0;
		ptt_fork_close(&vfork_rec, ret > 0 ? (pid_t)ret : 0);
	}
	if (ret < 0) {
		errno = (int)-ret;
		return -1;
	}
	return ret;
}

__asm__(".text\n"
	".globl vfork\n"
	".type vfork, @function\n"
	"vfork:\n"
	"	.cfi_startproc\n"
	"	subq $8, %rsp\n"            /* the call below wants %rsp 16-aligned */
	"	.cfi_adjust_cfa_offset 8\n"
	"	call ptt_vfork_open\n"
	"	addq $8, %rsp\n"
	"	.cfi_adjust_cfa_offset -8\n"
	"	popq %rdi\n"                 /* the return address, out of the child's reach */
	"	.cfi_adjust_cfa_offset -8\n"
	"	.cfi_register %rip, %rdi\n"
	"	movl $58, %eax\n"            /* SYS_vfork */
	"	syscall\n"
	"	pushq %rdi\n"
	"	.cfi_adjust_cfa_offset 8\n"
	"	.cfi_rel_offset %rip, 0\n"
	"	testq %rax, %rax\n"
	"	jz 1f\n"                     /* the child: nothing of the parent's touched */
	"	movq %rax, %rdi\n"
	"	subq $8, %rsp\n"
	"	.cfi_adjust_cfa_offset 8\n"
	"	call ptt_vfork_close\n"
	"	addq $8, %rsp\n"
	"	.cfi_adjust_cfa_offset -8\n"
	"1:	ret\n"
	"	.cfi_endproc\n"
	".size vfork, .-vfork\n");
#endif

/* demangle.c - C++ and Rust symbols as their authors wrote them, for the readers' symboliser. */
#include <dlfcn.h>
#include <libiberty/demangle.h>
#include <stdlib.h>
#include <string.h>

#include "ptt_trace.h"

/*
 * The demangler is libstdc++'s, looked up at run time: nothing here depends
 * on C++, and without libstdc++ names stay mangled.
 */
char *ptt_demangle(const char *sym)
{
	static char *(*cxa_demangle)(const char *, char *, size_t *, int *);
	static int tried;
	/* Rust's v0 mangling (_R..., rustc >= 1.59 with -C symbol-mangling-version=v0, and its std since
	 * 1.79): libiberty's demangler, which reads it as rustc-demangle does:
	 * <std::sys::sync::mutex::futex::Mutex>::lock_contended */
	if (sym && strncmp(sym, "_R", 2) == 0)
		return cplus_demangle(sym, DMGL_PARAMS | DMGL_ANSI | DMGL_RUST);
	if (!sym || strncmp(sym, "_Z", 2) != 0)
		return NULL;
	/* Rust's legacy mangling is C++'s with a last part "h" and 16 hex digits: libiberty knows it
	 * (NULL for any other symbol), with its escapes ($u7b$ is {) and without the hash */
	char *rust = cplus_demangle(sym, DMGL_PARAMS | DMGL_ANSI | DMGL_RUST);
	if (rust)
		return rust;
	if (!tried) {
		tried = 1;
		void *lib = dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_LOCAL);
		if (lib)
			cxa_demangle = (__typeof__(cxa_demangle))dlsym(lib, "__cxa_demangle");
	}
	int status = -1;
	char *out = cxa_demangle ? cxa_demangle(sym, NULL, NULL, &status) : NULL;
	if (status != 0) {
		free(out);
		return NULL;
	}
	/* Rust's legacy mangling is C++'s with a last part "h" and 16 hex digits, a hash
	 * that Rust's own demangler leaves out: rust_mutex::RUST_LOCK::h0123456789abcdef */
	size_t n = strlen(out);
	if (n > 19 && strncmp(out + n - 19, "::h", 3) == 0 && strspn(out + n - 16, "0123456789abcdef") == 16)
		out[n - 19] = 0;
	return out;
}

/*
 * test_pylayout.c - capture/runtime/pyframes_layout.h against CPython's own
 * headers: every offset the runtime reads, for the version of the headers
 * this file is compiled with (-I.../include/python3.X -I.../internal, and
 * -DPTT_PY_HEADERS).  Without them (no python3-dev) it skips.
 * test/cli/37-python-frames.bats compiles it against every CPython found.
 */
#include <stdio.h>

#ifndef PTT_PY_HEADERS
int main(void)
{
	printf("1..0 # SKIP compiled without CPython's headers (python3-dev)\n");
	return 0;
}
#else
#define Py_BUILD_CORE 1
#include <Python.h>
#include <internal/pycore_frame.h>
#include <stddef.h>
#include <string.h>

#include "../../capture/runtime/pyframes_layout.h"

static int failed, n;
#define ok(cond, ...) do { n++; if (!(cond)) failed = 1; printf("%sok %d - ", (cond) ? "" : "not ", n); \
		printf(__VA_ARGS__); printf("\n"); } while (0)
#define SAME(field, expr) ok(L->field == (int)(expr), "%s: %d (headers: %d)", #field, L->field, (int)(expr))

static unsigned state_bits(int compact, int ascii, int kind)
{
	PyASCIIObject a;
	unsigned st;
	memset(&a, 0, sizeof a);
	a.state.compact = compact;
	a.state.ascii = ascii;
	a.state.kind = kind;
	memcpy(&st, (char *)&a + offsetof(PyASCIIObject, state), sizeof st);
	return st;
}

int main(void)
{
	const struct ptt_py_layout *L = NULL;
	for (size_t i = 0; i < sizeof ptt_py_layouts / sizeof ptt_py_layouts[0]; i++)
		if (ptt_py_layouts[i].version == (PY_VERSION_HEX >> 16))
			L = &ptt_py_layouts[i];
	printf("# CPython %s headers\n", PY_VERSION);
	if (!L) {
		printf("1..0 # SKIP no layout for CPython %d.%d in pyframes_layout.h\n", PY_MAJOR_VERSION, PY_MINOR_VERSION);
		return 0;
	}
#if PY_VERSION_HEX < 0x030D0000
	SAME(ts_cframe, offsetof(PyThreadState, cframe));
	SAME(current_frame, offsetof(_PyCFrame, current_frame));
	SAME(fr_code, offsetof(_PyInterpreterFrame, f_code));
	SAME(fr_instr, offsetof(_PyInterpreterFrame, prev_instr));
#else
	ok(L->ts_cframe == -1, "ts_cframe: none");
	SAME(current_frame, offsetof(PyThreadState, current_frame));
	SAME(fr_code, offsetof(_PyInterpreterFrame, f_executable));
	SAME(fr_instr, offsetof(_PyInterpreterFrame, instr_ptr));
#endif
	SAME(fr_previous, offsetof(_PyInterpreterFrame, previous));
	SAME(fr_owner, offsetof(_PyInterpreterFrame, owner));
	ok(sizeof(((_PyInterpreterFrame *)0)->owner) == 1, "owner is a byte");
	SAME(co_firstlineno, offsetof(PyCodeObject, co_firstlineno));
	SAME(co_filename, offsetof(PyCodeObject, co_filename));
	SAME(co_qualname, offsetof(PyCodeObject, co_qualname));
	SAME(co_linetable, offsetof(PyCodeObject, co_linetable));
	SAME(co_firsttraceable, offsetof(PyCodeObject, _co_firsttraceable));
	SAME(co_code, offsetof(PyCodeObject, co_code_adaptive));
	SAME(str_ascii_data, sizeof(PyASCIIObject));
	SAME(str_compact_data, sizeof(PyCompactUnicodeObject));
	ok(PTT_PY_OB_TYPE == offsetof(PyObject, ob_type), "ob_type");
	ok(PTT_PY_OB_SIZE == offsetof(PyVarObject, ob_size), "ob_size");
	ok(PTT_PY_BYTES_DATA == offsetof(PyBytesObject, ob_sval), "ob_sval");
	ok(PTT_PY_STR_LENGTH == offsetof(PyASCIIObject, length), "str length");
	ok(PTT_PY_STR_STATE == offsetof(PyASCIIObject, state), "str state");
	ok(state_bits(1, 0, 0) == PTT_PY_STR_COMPACT, "compact bit");
	ok(state_bits(0, 1, 0) == PTT_PY_STR_ASCII, "ascii bit");
	ok(PTT_PY_STR_KIND(state_bits(0, 0, 4)) == 4 && PTT_PY_STR_KIND(state_bits(0, 0, 1)) == 1, "kind bits");
	ok(PTT_PY_OWNED_BY_GENERATOR == FRAME_OWNED_BY_GENERATOR, "FRAME_OWNED_BY_GENERATOR");
#if PY_VERSION_HEX >= 0x030C0000
	ok(PTT_PY_OWNED_BY_CSTACK == FRAME_OWNED_BY_CSTACK, "FRAME_OWNED_BY_CSTACK");
#endif
	ok(sizeof(_Py_CODEUNIT) == 2, "a code unit is 2 bytes");
	printf("1..%d\n", n);
	return failed;
}
#endif

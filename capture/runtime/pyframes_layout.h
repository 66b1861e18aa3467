/*
 * pyframes_layout.h - where CPython keeps what pyframes.c reads, per version,
 * as plain numbers: libptt.so never includes Python's headers (the program
 * brings its own interpreter, of any version).  The numbers are offsetof()s
 * from each version's headers (Include/cpython/pystate.h, Include/internal/
 * pycore_frame.h, Include/cpython/code.h, Include/cpython/unicodeobject.h)
 * for 64-bit builds with the GIL; test/unit/test_pylayout.c checks them
 * against the headers it is compiled with (test/cli/37-python-frames.bats
 * compiles it against every CPython found on the machine).
 */
#ifndef PTT_PYFRAMES_LAYOUT_H
#define PTT_PYFRAMES_LAYOUT_H

#include <stdint.h>

struct ptt_py_layout {
	uint16_t version;           /* major << 8 | minor */
	int16_t ts_cframe;          /* PyThreadState.cframe; -1: none (3.13: the frame is in the thread state) */
	int16_t current_frame;      /* _PyCFrame.current_frame, or PyThreadState.current_frame without a cframe */
	int16_t fr_code;            /* _PyInterpreterFrame.f_code (3.13: f_executable) */
	int16_t fr_previous;        /* _PyInterpreterFrame.previous */
	int16_t fr_instr;           /* _PyInterpreterFrame.prev_instr (3.13: instr_ptr): the instruction executing */
	int16_t fr_owner;           /* _PyInterpreterFrame.owner (a char) */
	int16_t co_firstlineno;     /* PyCodeObject.co_firstlineno (an int) */
	int16_t co_filename;        /* PyCodeObject.co_filename (a str) */
	int16_t co_qualname;        /* PyCodeObject.co_qualname (a str) */
	int16_t co_linetable;       /* PyCodeObject.co_linetable (bytes, the 3.11 location table) */
	int16_t co_firsttraceable;  /* PyCodeObject._co_firsttraceable (an int, code units) */
	int16_t co_code;            /* PyCodeObject.co_code_adaptive: the instructions, 2 bytes a unit */
	int16_t str_ascii_data;     /* sizeof(PyASCIIObject): a compact ASCII string's bytes */
	int16_t str_compact_data;   /* sizeof(PyCompactUnicodeObject): a compact non-ASCII string's code points */
};

/* The same in every version listed: PyObject.ob_type, PyVarObject.ob_size, PyBytesObject.ob_sval,
 * PyASCIIObject.length and .state (interned:2, kind:3, compact:1, ascii:1, ...), the frame owners. */
#define PTT_PY_OB_TYPE 8
#define PTT_PY_OB_SIZE 16
#define PTT_PY_BYTES_DATA 32
#define PTT_PY_STR_LENGTH 16
#define PTT_PY_STR_STATE 32
#define PTT_PY_STR_KIND(state) (((state) >> 2) & 7u)
#define PTT_PY_STR_COMPACT 0x20u
#define PTT_PY_STR_ASCII 0x40u
#define PTT_PY_OWNED_BY_GENERATOR 1
#define PTT_PY_OWNED_BY_CSTACK 3 /* 3.12 on: a shim frame of the C stack, no code of its own */

static const struct ptt_py_layout ptt_py_layouts[] = {
	/* version  cframe cur  code prev instr owner first file qual ltab trace adapt ascii compact */
	{ 0x030b,   56,    8,   32,  48,  56,   69,   72,   112, 128, 136, 168,  184,  48,   72 },
	{ 0x030c,   56,    0,   0,   8,   56,   70,   68,   112, 128, 136, 176,  192,  40,   56 },
	{ 0x030d,   -1,    72,  0,   8,   56,   70,   68,   112, 128, 136, 184,  200,  40,   56 },
};

#endif

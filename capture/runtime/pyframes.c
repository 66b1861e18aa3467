/*
 * pyframes.c - the Python frames of a CPython thread's stack (stack.c adds
 * them after the native frames of a stack taken on a blocking path).
 *
 * A Python program's locks (threading.Lock, Queue, Condition) are semaphores
 * taken from C inside the interpreter: the native stack ends in
 * _PyEval_EvalFrameDefault and names no line of the program.  So when the
 * process is a CPython whose layout we know (pyframes_layout.h), each stack
 * also gets the calling thread's Python frames, innermost first: the code
 * object (described once by a py_code event, under an id of this process)
 * and the line executing in it.
 *
 * Why reading them here is safe:
 *  - the thread reads its own frame chain only (PyGILState_GetThisThreadState:
 *    a pthread_getspecific, no lock, NULL before Py_Initialize and after
 *    finalization).  A thread that waits in C has released the GIL, but only
 *    it pushes and pops its frames, and the frames, their code objects and
 *    those objects' names and line tables stay alive and unchanged while it
 *    is inside the call: every field read is set when the object is made.
 *  - no call into CPython after start-up except that one (and
 *    Py_IsFinalizing, an atomic load): the strings are read from compact
 *    str objects' own bytes, the line from the code object's location table
 *    (decoded here, as PyCode_Addr2Line would, without its lazily built
 *    _co_linearray, which a thread holding the GIL may be creating).  Every
 *    object's type is checked against PyCode_Type, PyUnicode_Type or
 *    PyBytes_Type before its fields are read.
 *  - no allocation, lock or system call: the code table is mapped at
 *    start-up; a code object is claimed with one compare-and-swap, as stack.c
 *    claims a stack.  At most PTT_PY_DEPTH frames, 256 links followed.
 *  - one window stays: when the interpreter finalizes, the main thread frees
 *    the thread states of daemon threads still running C code.  A daemon
 *    thread that begins a wait at that very moment could read a frame being
 *    unmapped; Py_IsFinalizing() is checked first, which leaves the
 *    microseconds between its load and the reads.
 *  - an unknown version (older than 3.11, newer than the table, a
 *    free-threaded build) records no frames; py_runtime says which it was.
 */
#include <dlfcn.h>
#include <link.h>
#include <string.h>
#include <sys/mman.h>

#include "pyframes_layout.h"
#include "runtime.h"

#define PTT_PY_SLOTS 8192u /* code objects described per process; a power of two */

struct code_slot {
	uint64_t hash;  /* 0: empty; claimed by compare-and-swap */
	uint32_t ready; /* 1 once the fields and the py_code event are written (release) */
	uint32_t id;
	uintptr_t code, file, name;
	int32_t first;
	uint64_t memo;  /* the last line found: (offset + 1) << 32 | line; a hint, read and written relaxed */
};

static const struct ptt_py_layout *layout; /* the running CPython's, once known (release) */
uintptr_t ptt_py_eval_lo, ptt_py_eval_hi;
static void *(*this_thread_state)(void);
static int (*finalizing)(void);
static uintptr_t code_type, str_type, bytes_type;
static unsigned long version;
static int wanted, detected, announced;
static struct code_slot *codes;
static uint32_t next_code, codes_used, full_said; /* full_said: the limit event of a full table is written */

#define AT(p, off, T) (*(T const *)((const char *)(p) + (off)))

static int is_a(uintptr_t obj, uintptr_t type)
{
	return obj && (obj & 7) == 0 && AT(obj, PTT_PY_OB_TYPE, uintptr_t) == type;
}

/* A str object's text as UTF-8 into out (at most room bytes): its length.  Spaces become '_'
 * when nospace (a qualified name is followed by a space and the file in py_code). */
static size_t str_utf8(uintptr_t s, char *out, size_t room, int nospace)
{
	if (!is_a(s, str_type))
		return 0;
	uint32_t st = AT(s, PTT_PY_STR_STATE, uint32_t);
	int64_t len = AT(s, PTT_PY_STR_LENGTH, int64_t);
	unsigned kind = PTT_PY_STR_KIND(st);
	if (!(st & PTT_PY_STR_COMPACT) || len < 0 || (kind != 1 && kind != 2 && kind != 4))
		return 0; /* a legacy (not compact) string: never a code object's names */
	const unsigned char *d = (const unsigned char *)s + ((st & PTT_PY_STR_ASCII) ? layout->str_ascii_data
											: layout->str_compact_data);
	size_t n = 0;
	for (int64_t i = 0; i < len; i++) {
		uint32_t c = kind == 1 ? d[i] : kind == 2 ? ((const uint16_t *)d)[i] : ((const uint32_t *)d)[i];
		unsigned char b[4];
		unsigned k;
		if (c < 0x80) {
			b[0] = (unsigned char)(nospace && c == ' ' ? '_' : c);
			k = 1;
		} else if (c < 0x800) {
			b[0] = (unsigned char)(0xc0 | c >> 6);
			b[1] = (unsigned char)(0x80 | (c & 0x3f));
			k = 2;
		} else if (c < 0x10000) {
			b[0] = (unsigned char)(0xe0 | c >> 12);
			b[1] = (unsigned char)(0x80 | (c >> 6 & 0x3f));
			b[2] = (unsigned char)(0x80 | (c & 0x3f));
			k = 3;
		} else {
			b[0] = (unsigned char)(0xf0 | (c >> 18 & 7));
			b[1] = (unsigned char)(0x80 | (c >> 12 & 0x3f));
			b[2] = (unsigned char)(0x80 | (c >> 6 & 0x3f));
			b[3] = (unsigned char)(0x80 | (c & 0x3f));
			k = 4;
		}
		if (n + k > room)
			break;
		memcpy(out + n, b, k);
		n += k;
	}
	return n;
}

/* The location table's varints (Objects/locations.md): 6 bits a byte, 0x40 when more follow. */
static uint32_t varint(const uint8_t **pp, const uint8_t *end)
{
	const uint8_t *p = *pp;
	uint32_t v = 0;
	unsigned shift = 0;
	while (p < end && shift < 32) {
		uint8_t b = *p++;
		v |= (uint32_t)(b & 63) << shift;
		shift += 6;
		if (!(b & 64))
			break;
	}
	*pp = p;
	return v;
}

/*
 * The line of the instruction at byte offset addr of code object co: the 3.11 location
 * table (co_linetable, the same in 3.12 and 3.13), walked from the start as
 * PyCode_Addr2Line does; 0 when the instruction has no line.
 */
static int32_t code_line(uintptr_t co, int64_t addr)
{
	int32_t line = AT(co, layout->co_firstlineno, int32_t);
	uintptr_t lt = AT(co, layout->co_linetable, uintptr_t);
	if (addr < 0)
		return line;
	if (!is_a(lt, bytes_type))
		return 0;
	int64_t size = AT(lt, PTT_PY_OB_SIZE, int64_t);
	const uint8_t *p = (const uint8_t *)lt + PTT_PY_BYTES_DATA, *end = p + (size > 0 ? size : 0);
	int64_t start = 0;
	while (p < end) {
		uint8_t b = *p;
		unsigned code = b >> 3 & 15;
		int64_t len = ((b & 7) + 1) * 2;
		if (code == 13 || code == 14) { /* no columns, long form: a signed line delta */
			const uint8_t *q = p + 1;
			uint32_t v = varint(&q, end);
			line += (v & 1) ? -(int32_t)(v >> 1) : (int32_t)(v >> 1);
		} else if (code >= 10 && code <= 12) { /* one-line forms: the delta is in the code */
			line += (int32_t)code - 10;
		}
		if (addr < start + len)
			return code == 15 || line < 0 ? 0 : line; /* 15: no location */
		start += len;
		do
			p++;
		while (p < end && !(*p & 128));
	}
	return 0;
}

static uint64_t mix(uint64_t h, uint64_t v)
{
	h ^= v;
	h *= 0x100000001b3ull;
	return h ^ h >> 29;
}

/* py_code for a new code object: "qualname file" (the name's spaces made '_'). */
static void describe(uint32_t id, uintptr_t name, uintptr_t file, int32_t first)
{
	char s[PTT_MAX_STR * 2];
	size_t n = str_utf8(name, s, PTT_MAX_STR - 2, 1);
	if (!n)
		s[n++] = '?';
	s[n++] = ' ';
	n += str_utf8(file, s + n, sizeof s - 1 - n, 0);
	s[n] = 0;
	for (size_t i = 0; i < n; i++)
		if (!s[i])
			s[i] = '?'; /* a NUL inside a name would end the string early */
	uint32_t a[2] = { id, (uint32_t)first };
	ptt_emit_str(PTT_EV_PY_CODE, a, 2, s);
}

/* The slot of code object co, described once (py_code) under this process; NULL when the table is full. */
static struct code_slot *code_slot(uintptr_t co)
{
	uintptr_t file = AT(co, layout->co_filename, uintptr_t), name = AT(co, layout->co_qualname, uintptr_t);
	int32_t first = AT(co, layout->co_firstlineno, int32_t);
	/* the address with what names it: a code object freed and another made at its address is another */
	uint64_t h = mix(mix(mix(mix(0xcbf29ce484222325ull, co), file), name), (uint32_t)first) | 1;
	/* probed to the end: at most 3/4 of the slots are used, so a code object not there meets an empty one
	 * (a probe that gave up after 32 slots left a code object "not described", silently) */
	for (unsigned k = 0, i = (unsigned)h & (PTT_PY_SLOTS - 1); k < PTT_PY_SLOTS; k++, i = (i + 1) & (PTT_PY_SLOTS - 1)) {
		struct code_slot *s = &codes[i];
		uint64_t sh = __atomic_load_n(&s->hash, __ATOMIC_ACQUIRE);
		if (sh == 0) {
			if (__atomic_load_n(&codes_used, __ATOMIC_RELAXED) >= PTT_PY_SLOTS / 4 * 3) {
				/* said once per process: later code objects' frames are "not described" (code id 0) */
				if (!__atomic_exchange_n(&full_said, 1, __ATOMIC_RELAXED))
					ptt_emit_limit(PTT_LIMIT_PY_CODES, 1, PTT_PY_SLOTS / 4 * 3, 0);
				return NULL;
			}
			if (__atomic_compare_exchange_n(&s->hash, &sh, h, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
				__atomic_fetch_add(&codes_used, 1, __ATOMIC_RELAXED);
				uint32_t id = __atomic_add_fetch(&next_code, 1, __ATOMIC_RELAXED) & 0xffffffu;
				s->code = co;
				s->file = file;
				s->name = name;
				s->first = first;
				s->id = id;
				describe(id, name, file, first); /* before any stack can name it */
				__atomic_store_n(&s->ready, 1, __ATOMIC_RELEASE);
				return s;
			}
		}
		if (sh != h)
			continue;
		/* another thread may be describing it: wait a little, never for long (stack.c does the same) */
		for (unsigned spin = 0; spin < (1u << 16) && !__atomic_load_n(&s->ready, __ATOMIC_ACQUIRE); spin++)
			__asm__ volatile("" ::: "memory");
		if (!__atomic_load_n(&s->ready, __ATOMIC_ACQUIRE))
			return NULL;
		if (s->code == co && s->file == file && s->name == name && s->first == first)
			return s;
	}
	return NULL;
}

/*
 * The line at byte offset off of code object co (slot s, or NULL): decoding the location table costs
 * about 1 ns an entry, so the slot keeps the last answer (a thread waiting again at the same place, the
 * common case, pays one load); a racing writer leaves one whole answer or the other, both true.
 */
static int32_t frame_line(struct code_slot *s, uintptr_t co, int64_t off)
{
	if (!s || off < 0 || off >= INT32_MAX)
		return code_line(co, off);
	uint64_t m = __atomic_load_n(&s->memo, __ATOMIC_RELAXED);
	if (m >> 32 == (uint64_t)off + 1)
		return (int32_t)(uint32_t)m;
	int32_t line = code_line(co, off);
	__atomic_store_n(&s->memo, ((uint64_t)off + 1) << 32 | (uint32_t)line, __ATOMIC_RELAXED);
	return line;
}

unsigned ptt_py_frames(uintptr_t *out, unsigned max)
{
	const struct ptt_py_layout *L = __atomic_load_n(&layout, __ATOMIC_ACQUIRE);
	if (!L || !max || (finalizing && finalizing()))
		return 0;
	uintptr_t ts = (uintptr_t)this_thread_state(), fr;
	if (!ts)
		return 0;
	if (L->ts_cframe >= 0) {
		uintptr_t cf = AT(ts, L->ts_cframe, uintptr_t);
		fr = cf ? AT(cf, L->current_frame, uintptr_t) : 0;
	} else {
		fr = AT(ts, L->current_frame, uintptr_t);
	}
	unsigned n = 0;
	for (unsigned hops = 0; fr && (fr & 7) == 0 && n < max && hops < 256; hops++, fr = AT(fr, L->fr_previous, uintptr_t)) {
		int owner = AT(fr, L->fr_owner, char);
		uintptr_t co = AT(fr, L->fr_code, uintptr_t);
		if (owner == PTT_PY_OWNED_BY_CSTACK && L->version >= 0x030c)
			continue; /* a shim between C and Python */
		if (!is_a(co, code_type))
			continue;
		const char *code0 = (const char *)co + L->co_code, *instr = AT(fr, L->fr_instr, const char *);
		if (owner != PTT_PY_OWNED_BY_GENERATOR && instr < code0 + 2 * (int64_t)AT(co, L->co_firsttraceable, int32_t))
			continue; /* pushed, not yet running (_PyFrame_IsIncomplete) */
		struct code_slot *s = code_slot(co);
		out[n++] = (uintptr_t)PTT_PYFRAME(s ? s->id : 0, frame_line(s, co, instr - code0));
	}
	return n;
}

/* Is this process a CPython, and one whose frames we can read?  Once; from announce_modules (start-up,
 * and after a dlopen seen at pthread_create), never on a lock's path. */
static void detect(void)
{
	void *gts = dlsym(RTLD_DEFAULT, "PyGILState_GetThisThreadState");
	if (!gts)
		return;
	detected = 1;
	const unsigned long *v = dlsym(RTLD_DEFAULT, "Py_Version");
	version = v ? *v : 0;
	const char *(*get_version)(void) = (const char *(*)(void))dlsym(RTLD_DEFAULT, "Py_GetVersion");
	if (!v && get_version) {
		/* before 3.11: "3.10.13 (main, ...)", formatted into a static buffer (start-up, not a lock's path) */
		const char *p = get_version();
		unsigned part[3] = { 0 }, k = 0;
		for (; p && k < 3 && *p >= '0' && *p <= '9'; p++) {
			part[k] = part[k] * 10 + (unsigned)(*p - '0');
			if (p[1] == '.') {
				k++;
				p++;
			} else if (p[1] < '0' || p[1] > '9') {
				break;
			}
		}
		version = (unsigned long)(part[0] & 0xff) << 24 | (part[1] & 0xff) << 16 | (part[2] & 0xff) << 8;
	}
	const struct ptt_py_layout *L = NULL;
	for (size_t i = 0; i < sizeof ptt_py_layouts / sizeof ptt_py_layouts[0]; i++)
		if (v && ptt_py_layouts[i].version == (version >> 16 & 0xffff))
			L = &ptt_py_layouts[i];
	code_type = (uintptr_t)dlsym(RTLD_DEFAULT, "PyCode_Type");
	str_type = (uintptr_t)dlsym(RTLD_DEFAULT, "PyUnicode_Type");
	bytes_type = (uintptr_t)dlsym(RTLD_DEFAULT, "PyBytes_Type");
	finalizing = (int (*)(void))dlsym(RTLD_DEFAULT, "Py_IsFinalizing");
	if (!finalizing)
		finalizing = (int (*)(void))dlsym(RTLD_DEFAULT, "_Py_IsFinalizing");
	/* a free-threaded build (3.13t) lays its objects out otherwise; so does a 32-bit one */
	if (sizeof(void *) != 8 || dlsym(RTLD_DEFAULT, "_Py_MergeZeroLocalRefcount") || !code_type || !str_type || !bytes_type)
		L = NULL;
	if (!L)
		return;
	void *m = mmap(NULL, sizeof(struct code_slot) * PTT_PY_SLOTS, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (m == MAP_FAILED)
		return;
	codes = m;
	this_thread_state = (void *(*)(void))gts;
	/* the interpreter loop: a native unwind stops at its first frame (stack.c), the frames beyond it
	 * being the interpreter's own, which the Python frames tell (a CPython stack unwound 24 native
	 * frames at some 0.4 us each, three quarters of them in older calls of this loop) */
	void *eval = dlsym(RTLD_DEFAULT, "_PyEval_EvalFrameDefault");
	Dl_info info;
	const ElfW(Sym) *sym = NULL;
	if (eval && dladdr1(eval, &info, (void **)&sym, RTLD_DL_SYMENT) && sym && sym->st_size) {
		ptt_py_eval_lo = (uintptr_t)eval;
		ptt_py_eval_hi = (uintptr_t)eval + sym->st_size;
	}
	__atomic_store_n(&layout, L, __ATOMIC_RELEASE);
}

void ptt_py_init(void)
{
	wanted = 1;
}

void ptt_py_announce(void)
{
	if (!wanted)
		return; /* no stacks recorded: nothing to add to them */
	if (!detected)
		detect();
	if (!detected || announced)
		return;
	announced = 1;
	ptt_on[PTT_EV_PY_RUNTIME] = ptt_on[PTT_EV_PY_CODE] = 1;
	uint32_t a[2] = { (uint32_t)version, layout != NULL };
	ptt_emit(PTT_EV_PY_RUNTIME, a, 2);
}

void ptt_py_after_fork(void)
{
	/* the child's code ids start afresh under its pid, as its stacks do; announce_modules says py_runtime again */
	announced = 0;
	if (codes)
		madvise(codes, sizeof(struct code_slot) * PTT_PY_SLOTS, MADV_DONTNEED);
	next_code = codes_used = full_said = 0;
}

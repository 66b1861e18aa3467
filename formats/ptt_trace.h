/*
 * ptt_trace.h - the ptt trace format: layout, event types, reader, writers.
 *
 * One library (libpttformat.a) behind this header serves every tool.  It
 * never prints and never exits: functions return a negative errno-style
 * code (or PTT_E_*), described by ptt_strerror(); readers keep a one-line
 * diagnostic with the offset of the last problem (ptt_reader_diag()).
 *
 * The on-disk layout is specified in ptt-trace(5).
 */
#ifndef PTT_TRACE_H
#define PTT_TRACE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "map.h" /* the containers: the hash map and the growth of arrays */

/* Binary format versions: 2 adds compact EVENTS blocks, which a writer uses only when asked
 * (ptt_writer_set_compact); a file without them says version 1, which every reader reads.
 * 3 adds per-thread streams (EVENTS blocks whose header names a stream, each stream in time
 * order by itself, merged by the reader) and MARK blocks (ptt_writer_set_streams).
 * 4 adds coded streams (PTT_BLOCK_CODED: blocks of a stream coded by its writing thread,
 * decoded across the stream's blocks; ptt_writer_set_streams(w, PTT_STREAMS_CODED)), which a
 * reader of version 3 would skip one by one as flags it does not know: it refuses the file. */
#define PTT_FORMAT_VERSION 4
#define PTT_FORMAT_VERSION_STREAMS 3
#define PTT_FORMAT_VERSION_COMPACT 2
#define PTT_FORMAT_VERSION_PLAIN 1
#define PTT_TEXT_VERSION 1 /* the text form's "# ptt-trace N" */
#define PTT_FILE_MAGIC "\x89PTT\r\n\x1a\n"   /* 8 bytes, PNG-style: catches text-mode mangling */
#define PTT_BYTE_ORDER_MARK 0x01020304u
#define PTT_BLOCK_MAGIC 0x42545450u          /* "PTTB" little-endian */
#define PTT_TEXT_MAGIC "# ptt-trace "         /* first line of ptt-dump's text form */

/* ---- records ------------------------------------------------------------ */

/*
 * A record is a sequence of 32-bit words:
 *   w0 = id (bits 0-15) | length in words (bits 16-23) | PTT_REC_MARK (24-31)
 *   w1, w2 = timestamp ticks, low and high word
 *   w3 = pid, w4 = tid (kernel thread id)
 *   w5 .. wN-2 = arguments (64-bit values as two words, low first)
 *   wN-1 = checksum of w0 .. wN-2 (ptt_rec_checksum)
 * Stated here once, in the functions below, and in ptt-trace(5) (Records):
 * every writer (the runtime's trace path and fast lock record, the
 * recorder, the coders) and every reader packs and unpacks the words with
 * them (test_format's and test_ring's "layout" tests hold the runtime's writers to them).
 */
#define PTT_REC_MARK 0xA7u
#define PTT_REC_HDR_WORDS 5
#define PTT_REC_MIN_WORDS 6
#define PTT_REC_MAX_WORDS 255
#define PTT_MAX_ARGS 8
#define PTT_MAX_STR 512
#define PTT_USER_ID_BASE 1024 /* user-registered event types start here */
#define PTT_MAX_TYPES 4096

static inline uint32_t ptt_rec_word0(uint32_t id, uint32_t nwords)
{
	return (id & 0xffffu) | ((nwords & 0xffu) << 16) | (PTT_REC_MARK << 24);
}
static inline uint32_t ptt_rec_id(uint32_t w0) { return w0 & 0xffffu; }
static inline uint32_t ptt_rec_len(uint32_t w0) { return (w0 >> 16) & 0xffu; }
static inline int ptt_rec_marked(uint32_t w0) { return (w0 >> 24) == PTT_REC_MARK; }
/* marked and at least PTT_REC_MIN_WORDS long, in one compare: what falls short wraps around */
static inline int ptt_rec_w0_sound(uint32_t w0)
{
	return (w0 >> 16) - (PTT_REC_MARK << 8 | PTT_REC_MIN_WORDS) <= 255u - PTT_REC_MIN_WORDS;
}
static inline uint32_t ptt_rec_idlen(uint32_t w0) { return w0 & 0xffffffu; } /* id and length, no mark */
/* Words 1-4, written and read through these only (the runtime, the recorder, the coders, the reader). */
static inline void ptt_rec_put_header(uint32_t *w, uint32_t w0, uint64_t ticks, uint32_t pid, uint32_t tid)
{
	w[0] = w0;
	w[1] = (uint32_t)ticks;
	w[2] = (uint32_t)(ticks >> 32);
	w[3] = pid;
	w[4] = tid;
}
static inline uint64_t ptt_rec_ticks(const uint32_t *w) { return (uint64_t)w[2] << 32 | w[1]; }
static inline uint32_t ptt_rec_pid(const uint32_t *w) { return w[3]; }
static inline uint32_t ptt_rec_tid(const uint32_t *w) { return w[4]; }

/*
 * The record checksum: a rotate-xor over the words, finished with one
 * multiply.  zlib's crc32 cost 8-12 ns per 32-byte record here, more than
 * the rest of the trace path together; this costs about one cycle per word
 * and still detects every single-bit error, zeroed or torn records and
 * shifted words.  Seeded so that an all-zero record never verifies.
 */
#define PTT_REC_SUM_SEED 0x50545431u
static inline uint32_t ptt_rotl32(uint32_t x, unsigned r)
{
	return (x << (r & 31)) | (x >> (-r & 31));
}
static inline uint32_t ptt_rec_sum_finish(uint32_t h)
{
	h *= 0x9E3779B1u;
	return h ^ (h >> 16);
}
/* One word into the running sum h (a writer that has the header's state and adds the arguments). */
static inline uint32_t ptt_rec_sum_word(uint32_t h, uint32_t w) { return ptt_rotl32(h, 7) ^ w; }
static inline uint32_t ptt_rec_checksum(const uint32_t *w, uint32_t nwords_without_sum)
{
	uint32_t h = PTT_REC_SUM_SEED;
	for (uint32_t i = 0; i < nwords_without_sum; i++)
		h = ptt_rec_sum_word(h, w[i]);
	return ptt_rec_sum_finish(h);
}
/* The last word of an n-word record: written (seal), checked (sound). */
static inline void ptt_rec_seal(uint32_t *w, uint32_t n) { w[n - 1] = ptt_rec_checksum(w, n - 1); }
static inline int ptt_rec_sound(const uint32_t *w, uint32_t n) { return ptt_rec_checksum(w, n - 1) == w[n - 1]; }
/*
 * The same sum in closed form: rotation distributes over xor, so after m
 * words h = rotl(seed, 7m) ^ (xor over i of rotl(w[i], 7(m-1-i))).  Each
 * word's term is independent of the others: a writer may add them in any
 * order, from registers, as the values become known (the runtime does,
 * capture/runtime/runtime.h), and the dependency chain is a tree instead of two
 * operations per word.  ptt_rec_sum_term(w, k): the term of a word followed
 * by k more words before the checksum; ptt_rec_sum_term64(v, k): both
 * words of a 64-bit value (low word first) followed by k more words.
 */
static inline uint32_t ptt_rec_sum_term(uint32_t w, unsigned k)
{
	return ptt_rotl32(w, 7 * k);
}
static inline uint32_t ptt_rec_sum_term64(uint64_t v, unsigned k)
{
	return ptt_rotl32(ptt_rotl32((uint32_t)v, 7) ^ (uint32_t)(v >> 32), 7 * k);
}
/*
 * The header's part of the closed form, stated here once for every writer
 * that sums from registers (the runtime's trace path and its fast lock
 * record): ptt_rec_sum_seed(m), the seed's term in a sum of m words;
 * ptt_rec_sum_ids(pid, tid), the term of words 3-4 as last header words;
 * ptt_rec_sum_hdr(w0, ts, ids, k): words 0-4 followed by k more words.
 */
static inline uint32_t ptt_rec_sum_seed(unsigned m) { return ptt_rotl32(PTT_REC_SUM_SEED, 7 * m); }
/* a state h (the sum of some words) as a term: followed by k more words */
static inline uint32_t ptt_rec_sum_more(uint32_t h, unsigned k) { return ptt_rotl32(h, 7 * k); }
static inline uint32_t ptt_rec_sum_ids(uint32_t pid, uint32_t tid) { return ptt_rotl32(pid, 7) ^ tid; }
static inline uint32_t ptt_rec_sum_hdr(uint32_t w0, uint64_t ts, uint32_t ids, unsigned k)
{
	return ptt_rec_sum_term(w0, k + 4) ^ ptt_rec_sum_term64(ts, k + 2) ^ ptt_rec_sum_term(ids, k);
}

/* ---- blocks ------------------------------------------------------------- */

enum ptt_block_kind {
	PTT_BLOCK_META = 1,   /* text lines: header keys and event types */
	PTT_BLOCK_EVENTS = 2, /* records in time order */
	PTT_BLOCK_END = 3,    /* text lines: summary, written when the trace is finalized */
	PTT_BLOCK_MARK = 4,   /* version 3: 8 bytes, ticks T: every record before T of every stream is in
			       * the blocks before this one (the reader may release them, merged) */
};
#define PTT_BLOCK_ZLIB 0x1u   /* payload is a zlib stream of raw_len bytes */
#define PTT_BLOCK_CRC 0x2u    /* META/END: count holds the crc32 of the raw_len bytes of text */
#define PTT_BLOCK_PACKED 0x4u /* EVENTS, with ZLIB or ZSTD: records packed before compression (ptt_block_pack) */
#define PTT_BLOCK_SNAPSHOT 0x8u /* EVENTS with count 0: a snapshot of the state, as pad records (ptt-trace(5)) */
#define PTT_BLOCK_ZSTD 0x10u  /* payload is one zstd frame of raw_len bytes (never with ZLIB) */
#define PTT_BLOCK_COMPACT 0x20u /* EVENTS (version 2): records coded against the block's history (ptt-trace(5)) */
/* EVENTS of a stream (version 4), with COMPACT: coded by the writing thread, decoded with the
 * history the stream's blocks before it left (ptt-trace(5), compact.h's coded streams) */
#define PTT_BLOCK_CODED 0x40u
/* Every flag this version knows: a block with another one (a newer compressor) is skipped, and said so. */
#define PTT_BLOCK_KNOWN_FLAGS 0x7fu
/* The compressors of ptt_writer_set_compressor (a block's flag says which one made it). */
enum ptt_compressor { PTT_COMP_ZSTD, PTT_COMP_ZLIB };
/*
 * A snapshot block's records are pad records (id 0, which every reader
 * skips), each wrapping one record of the snapshot:
 *   w0 = pad id | length, w1 w2 = the snapshot's ticks, w3 = w4 = 0,
 *   w5 = PTT_SNAP_MAGIC, w6 = kind (0: the snapshot's own header),
 *   w7 w8 = position of the wrapped record (header: events before the snapshot),
 *   w9 .. = the wrapped record as it was stored (header: nothing), last = checksum.
 */
#define PTT_SNAP_MAGIC 0x53545450u /* "PTTS" */
/*
 * The index after the END block (a trace with snapshots): one such block of
 * pad records, kind META or SNAPSHOT with w7 w8 = the snapshot's position
 * and w9 w10 = the block's offset, w11 w12 = its ticks; then kind END with
 * w7 w8 = the offset of the index block itself, the last 40 bytes of the file.
 * Kind HEAD: the snapshot that is a part's head, written at its end ("head end":
 * ptt_writer_head_end), found by readers of that part alone.
 */
#define PTT_SNAP_INDEX_META 4u
#define PTT_SNAP_INDEX_SNAPSHOT 5u
#define PTT_SNAP_INDEX_END 6u
#define PTT_SNAP_INDEX_HEAD 7u
#define PTT_SNAP_WRAP_WORDS 10

struct ptt_block_header {
	uint32_t magic;       /* PTT_BLOCK_MAGIC */
	uint16_t kind;        /* enum ptt_block_kind */
	uint16_t flags;       /* PTT_BLOCK_* */
	uint32_t payload_len; /* bytes stored after this header */
	uint32_t raw_len;     /* bytes once decompressed */
	uint32_t count;       /* records in an EVENTS block; crc32 of the text of META/END with PTT_BLOCK_CRC */
	uint32_t lost;        /* events reported lost by rec_lost records in this block */
	uint64_t first_ticks; /* timestamp of the first and last record */
	uint64_t last_ticks;
	uint32_t stream;      /* 0: merged from every thread, in time order; else (version 3) one stream's
			       * records, in time order within the stream only (ptt_writer_span) */
	uint32_t header_crc;  /* zlib crc32 of the 44 bytes before it */
};
_Static_assert(sizeof(struct ptt_block_header) == 48, "block header is 48 bytes");

/*
 * Packing an EVENTS block for compression: each record's timestamp becomes
 * its difference from the previous record's (the first's from first_ticks)
 * and its checksum word 0, which the compressor's own check of the whole
 * payload replaces (zlib's adler32, zstd's content checksum).  Both would otherwise be the incompressible part of a record
 * (8.6 bytes per event with zlib, 4.5 packed).  Unpacking restores them; it
 * stops at the first word that does not start a well-formed record.
 */
void ptt_block_pack(uint32_t *words, size_t nwords, uint64_t first_ticks);
void ptt_block_unpack(uint32_t *words, size_t nwords, uint64_t first_ticks);

/*
 * Numbers as text, without printf: each writes at p and returns the end
 * (no NUL).  u64/i64: decimal, at most 20 bytes; hex: "0x" and lower-case
 * digits, at most 18; time: ns as seconds "S.NNNNNNNNN", at most 30.  The
 * digits are made 8 or 16 at a time: p must have room for that most
 * whatever the value (bytes past the end returned are scratch).
 */
char *ptt_fmt_u64(char *p, uint64_t v);
char *ptt_fmt_i64(char *p, int64_t v);
char *ptt_fmt_hex(char *p, uint64_t v);
char *ptt_fmt_time(char *p, uint64_t ns);

struct ptt_file_header {
	char magic[8];       /* PTT_FILE_MAGIC */
	uint32_t version;    /* PTT_FORMAT_VERSION */
	uint32_t byte_order; /* PTT_BYTE_ORDER_MARK as written by the producer */
};
_Static_assert(sizeof(struct ptt_file_header) == 16, "file header is 16 bytes");

#define PTT_BLOCK_MAX_PAYLOAD (1u << 20)

/* ---- event types -------------------------------------------------------- */

enum ptt_class {
	PTT_CLASS_META, PTT_CLASS_PROCESS, PTT_CLASS_THREAD, PTT_CLASS_MUTEX,
	PTT_CLASS_COND, PTT_CLASS_RWLOCK, PTT_CLASS_BARRIER, PTT_CLASS_SEM,
	PTT_CLASS_SPIN, PTT_CLASS_USER, PTT_CLASS_RECORDER, PTT_CLASS_FUTEX, PTT_CLASS_COUNT
};
enum ptt_source { PTT_SRC_PTHREAD, PTT_SRC_RECORDER, PTT_SRC_PROGRAM, PTT_SRC_COUNT };
/* What an event means to the program's state: see formats/events.def.  POINT is 0, so
 * a type unknown to this library (a user event, a newer built-in) changes nothing. */
enum ptt_role {
	PTT_ROLE_POINT, PTT_ROLE_META, PTT_ROLE_NAME, PTT_ROLE_LIFE, PTT_ROLE_INIT, PTT_ROLE_DESTROY,
	PTT_ROLE_REQUEST, PTT_ROLE_REQUEST_SHARED, PTT_ROLE_ACQUIRE, PTT_ROLE_SHARED, PTT_ROLE_TRY,
	PTT_ROLE_TRY_SHARED, PTT_ROLE_RELEASE, PTT_ROLE_WAIT_END, PTT_ROLE_POST, PTT_ROLE_RECORDER,
	PTT_ROLE_COUNT
};
enum ptt_arg_kind { PTT_ARG_I32, PTT_ARG_U32, PTT_ARG_TID, PTT_ARG_PTR, PTT_ARG_U64, PTT_ARG_I64, PTT_ARG_STR, PTT_ARG_KIND_COUNT };

enum ptt_event_id {
#define PTT_EVENT(e, name, cls, lvl, src, role, args) e,
#include "events.def"
#undef PTT_EVENT
	PTT_EV_BUILTIN_COUNT
};

/*
 * Argument names as numbers: every name that an argument of a built-in type
 * has in events.def (a unit test holds the list to it: a name appended there
 * is added here).  A type learnt from text (ptt_type_parse_args: the built-in
 * table, a trace's header, a user registration) carries where each of these
 * names sits among its arguments, so a decoder reads an argument through its
 * number (ptt_event_argn), at the position the trace's own definition gives
 * it, and no event pays for comparing names.
 */
#define PTT_ARGNAME_LIST(X) \
	X(PPID, "ppid") X(CMD, "cmd") X(STATUS, "status") X(CHILD, "child") X(RET, "ret") X(PATH, "path") \
	X(HANDLE, "handle") X(START, "start") X(PARENT, "parent") X(RETVAL, "retval") X(HOW, "how") \
	X(SITE, "site") X(TARGET, "target") X(NAME, "name") X(OBJECT, "object") X(MUTEX, "mutex") \
	X(TYPE, "type") X(COND, "cond") X(RWLOCK, "rwlock") X(BARRIER, "barrier") X(COUNT, "count") \
	X(SEM, "sem") X(VALUE, "value") X(SPIN, "spin") X(RING_BYTES, "ring_bytes") X(EVENTS, "events") \
	X(BYTES, "bytes") X(STREAM, "stream") X(WAITS, "waits") X(FROM_NS, "from_ns") X(TO_NS, "to_ns") \
	X(SIGNAL, "signal") X(BASE, "base") X(EVENT, "event") X(TABLE, "table") X(LIMIT, "limit") \
	X(NEED, "need") X(POLLS, "polls") X(FUTEX, "futex") X(VAL, "val") X(OP, "op") \
	X(TIMEOUT_NS, "timeout_ns") X(WOKEN, "woken") X(STACK, "stack") X(AT, "at") \
	X(A, "a") X(B, "b") X(C, "c") X(D, "d") X(E, "e") X(F, "f") \
	X(LO, "lo") X(HI, "hi") X(BUILD_ID, "build_id") \
	X(CODE, "code") X(FIRST, "first") X(VERSION, "version") X(FRAMES, "frames") \
	X(ADDR, "addr") X(LEN, "len") X(DEV, "dev") X(INO, "ino") X(OFF, "off")
enum ptt_argname {
	PTT_ARGNAME_NONE, /* a name not in the list (a user type's own) */
#define PTT_ARGNAME_ENUM(e, s) PTT_ARGNAME_##e,
	PTT_ARGNAME_LIST(PTT_ARGNAME_ENUM)
#undef PTT_ARGNAME_ENUM
	PTT_ARGNAMES /* how many, NONE included */
};
/* "ret" for PTT_ARGNAME_RET ("" for NONE or out of range), and back (NONE if not listed). */
const char *ptt_argname_string(unsigned name);
enum ptt_argname ptt_argname_from_string(const char *s);

struct ptt_type {
	uint16_t id;
	uint8_t cls;    /* enum ptt_class */
	uint8_t level;  /* 1 essential .. 3 everything */
	uint8_t source; /* enum ptt_source */
	uint8_t nargs;
	uint8_t words;  /* argument words before any str argument */
	uint8_t role;   /* enum ptt_role: from the built-in table, never from the file */
	char name[48];
	char argname[PTT_MAX_ARGS][24];
	uint8_t argkind[PTT_MAX_ARGS];
	/* set from argname by ptt_type_parse_args (a type filled otherwise has no name known) */
	uint8_t argid[PTT_MAX_ARGS];  /* enum ptt_argname of each argument (NONE: a name not listed) */
	uint8_t argpos[PTT_ARGNAMES]; /* 1 + the position of the first argument of each name, 0: none;
				       * read it through ptt_type_arg_index */
};
/* Position of t's argument called name (its first, should two share it), or -1 if none: one load. */
static inline int ptt_type_arg_index(const struct ptt_type *t, enum ptt_argname name)
{
	return (int)t->argpos[name] - 1;
}

const char *ptt_class_name(unsigned cls);
int ptt_class_from_name(const char *name); /* -1 if unknown */
const char *ptt_source_name(unsigned src);
const char *ptt_role_name(unsigned role); /* "request", "acquire", ... */
/* The role of a type that a trace defines: the built-in one with the same id and name, else POINT. */
unsigned ptt_type_role(const struct ptt_type *t);
/* Roles that are stamped before the call they record (releases, posts, requests). */
static inline int ptt_role_is_request(unsigned role)
{
	return role == PTT_ROLE_REQUEST || role == PTT_ROLE_REQUEST_SHARED;
}
int ptt_role_stamped_before(unsigned role);
/*
 * A stack record (PTT_EV_STACK) describes its thread's next event: the next
 * one of that thread whose role takes it, not a name (the recorder's
 * object_name, stamped as the event it names) nor another meta record.  The
 * one statement of that pairing, for the recorder's heads (formats/inforce.c), the model and
 * ptt-filter's windows.
 */
static inline int ptt_role_takes_stack(unsigned role)
{
	return role != PTT_ROLE_NAME && role != PTT_ROLE_META;
}
/*
 * A record that a reader passing over a stretch still delivers (ptt_reader_skip_names): what names or
 * tells apart what comes after it (names, modules, interned stacks and code, the lives of processes and
 * threads); not a stack record, which belongs to its thread's next event, passed over too.
 */
static inline int ptt_record_tells_names(unsigned id, unsigned role)
{
	return role == PTT_ROLE_NAME || role == PTT_ROLE_LIFE || (role == PTT_ROLE_META && id != PTT_EV_STACK);
}
/*
 * What a record of its thread does to the thread's stack record waiting for
 * its event: PTT_STACK_HOLD, it is one (a later one replaces it);
 * PTT_STACK_TAKE, it is that event (the stack is its, or it did not want
 * one); PTT_STACK_PASS, neither (a name or another meta record).  typed: the
 * record's type is known (an unknown one is an event of its thread, and
 * takes it).  The one pairing of a stack with its event, called by the
 * recorder's heads (formats/inforce.c), the model and ptt-filter.
 */
enum { PTT_STACK_PASS, PTT_STACK_HOLD, PTT_STACK_TAKE };
static inline int ptt_stack_pairing(unsigned id, int typed, unsigned role, unsigned nargs)
{
	if (id == PTT_EV_STACK && typed && role == PTT_ROLE_META && nargs >= 1)
		return PTT_STACK_HOLD;
	return !typed || ptt_role_takes_stack(role) ? PTT_STACK_TAKE : PTT_STACK_PASS;
}
int ptt_source_from_name(const char *name);
const char *ptt_arg_kind_name(unsigned kind);
unsigned ptt_arg_kind_words(unsigned kind); /* 0 for str */

/* Fill a type from its textual definition; returns 0 or PTT_E_BADTYPE. */
int ptt_type_parse_args(struct ptt_type *t, const char *argspec);
/* "name:kind,..." of a type, into buf. */
void ptt_type_format_args(const struct ptt_type *t, char *buf, size_t size);
/* The built-in type with this id, or NULL. */
const struct ptt_type *ptt_builtin_type(unsigned id);

/*
 * A table of types: built-ins plus those a trace defines.  Sized to use:
 * initialising it allocates nothing (the built-ins are shared, constant), a
 * definition grows the id table and a name index over the defined types
 * only.  Read it through ptt_types_get / ptt_types_find_name.
 */
struct ptt_types {
	struct ptt_type **defined; /* [ncap]: the trace's own definitions, NULL where none */
	unsigned ncap;
	struct ptt_map index; /* a name's 64-bit hash -> the defined type of lowest id among those whose name has it */
};
void ptt_types_init_builtin(struct ptt_types *ts);
int ptt_types_define(struct ptt_types *ts, const struct ptt_type *t);
/* The type with this id: the trace's definition, else the built-in one, else NULL. */
const struct ptt_type *ptt_types_get(const struct ptt_types *ts, unsigned id);
/* The type of lowest id with this name, or NULL. */
const struct ptt_type *ptt_types_find_name(const struct ptt_types *ts, const char *name);
void ptt_types_free(struct ptt_types *ts);

/* ---- errors ------------------------------------------------------------- */

enum {
	PTT_E_BADMAGIC = -1000, PTT_E_VERSION, PTT_E_BYTEORDER, PTT_E_TRUNCATED,
	PTT_E_CHECKSUM, PTT_E_BADBLOCK, PTT_E_BADRECORD, PTT_E_BADTYPE,
	PTT_E_BADTEXT, PTT_E_ZLIB, PTT_E_UNKNOWN_TYPE, PTT_E_NOMEM,
	PTT_E_STRUCTURE, /* blocks out of place, a header contradicting the data: what no checksum sees */
};
const char *ptt_strerror(int err);

/* ---- decoded events ----------------------------------------------------- */

struct ptt_event {
	uint64_t ns;        /* nanoseconds since the trace start */
	uint64_t ticks;     /* raw timestamp (binary input; equals ns for text input) */
	uint64_t pos;       /* 0-based position of the event in the trace */
	uint64_t offset;    /* byte offset of the record (binary) or line number (text) */
	uint32_t pid, tid;
	uint16_t id;
	uint8_t nargs;
	const struct ptt_type *type;
	uint64_t arg[PTT_MAX_ARGS]; /* integers; str arguments are in str */
	char str[PTT_MAX_STR];
	uint32_t nwords;            /* the record, as it was stored (binary input) */
	uint32_t words[PTT_REC_MAX_WORDS];
};

/*
 * What a limit event (PTT_EV_LIMIT: table, count, limit, need) says was
 * dropped or cut.  The values are part of the file format (ptt-trace(5)):
 * only append.
 */
enum ptt_limit {
	PTT_LIMIT_TARGET_UNKNOWN = 1, /* count joins, detaches, cancels or names of a thread whose tid was not known */
	PTT_LIMIT_MODULES = 2,        /* count loaded objects the runtime could not remember (limit: objects held) */
	PTT_LIMIT_USER_TYPES = 3,     /* count event type registrations refused (limit: types the table holds) */
	PTT_LIMIT_STRING = 4,         /* count strings cut to limit bytes (need: the longest one's length) */
	PTT_LIMIT_RINGS = 5,          /* count events of threads that found every one of limit rings taken */
	PTT_LIMIT_RING_MAP = 6,       /* count events of threads whose ring the kernel refused to map (limit: rings announced) */
	PTT_LIMIT_EXEC_UNTRACED = 7,  /* count execs whose new image cannot attach: the ring's descriptor is gone or its number reused */
	PTT_LIMIT_SHARED_MAPS = 8,    /* count shared mappings a process could not remember for its forked children (limit: held) */
	PTT_LIMIT_STACK_DEPTH = 9,    /* count distinct stacks cut at limit frames (their last frame PTT_FRAME_CUT) */
	PTT_LIMIT_FRAMES = 10,        /* count holds and waits in force forgotten, the oldest of a thread that had more than
					 limit at once */
	PTT_LIMIT_PY_CODES = 11,      /* count processes whose table of limit CPython code objects filled (later frames: code 0) */
	PTT_LIMIT_PY_DEPTH = 12,      /* count distinct stacks whose Python frames were cut at limit (their last frame
					 PTT_FRAME_CUT(limit)) */
	PTT_LIMIT_COUNT
};
/*
 * The holds and waits in force per thread that the recorder (the heads of
 * rotated files) and the readers' model keep at most: one cap for both, far
 * above real nesting, a guard against hostile traces (a release looks
 * through its thread's frames).  Deeper, the oldest is forgotten and counted
 * (PTT_LIMIT_FRAMES): the recorder writes a limit event where the frames
 * would have been told, a reader says it with the trace's limits.
 */
#define PTT_FRAMES_MAX 1024
/*
 * The limit events of a trace summed up, one entry per table: every reader
 * reports them through this, once, however many limit events there were.
 */
struct ptt_limits {
	uint64_t count[PTT_LIMIT_COUNT], limit[PTT_LIMIT_COUNT], need[PTT_LIMIT_COUNT];
};
/* Add ev if it is a limit event: 1 if it was, else 0. */
int ptt_limits_add(struct ptt_limits *l, const struct ptt_event *ev);
/* The same for a record of n words as written (a writer's view: PTT_EV_LIMIT of this table). */
int ptt_limits_add_record(struct ptt_limits *l, const uint32_t *rec, uint32_t n);
/* A limit a reader met itself (count things of table dropped): said as the trace's own, the larger count kept
 * (the reader's model forgets again the frames the recorder forgot). */
void ptt_limits_met(struct ptt_limits *l, unsigned table, uint64_t count, uint64_t limit, uint64_t need);
/* The i-th table met (i from 0), as a plain sentence in buf: 1, or 0 when there are no more. */
int ptt_limits_sentence(const struct ptt_limits *l, unsigned i, char *buf, size_t size);

/*
 * Value of the argument called name, or dflt when the event's type has none
 * (or the event none): where the trace's definition of the type puts it.
 * Decoders use this on every event; ptt_event_arg, which compares names, is
 * for the names outside enum ptt_argname (a user type's own).
 */
static inline uint64_t ptt_event_argn(const struct ptt_event *ev, enum ptt_argname name, uint64_t dflt)
{
	int i = ev->type ? ptt_type_arg_index(ev->type, name) : -1;
	return i < 0 ? dflt : ev->arg[i];
}
/* The same by the name as text, and its position (-1 if none). */
uint64_t ptt_event_arg(const struct ptt_event *ev, const char *name, uint64_t dflt);
int ptt_event_argindex(const struct ptt_event *ev, const char *name);

/* Build ev->words/nwords from the decoded fields (used to write text input as binary). */
int ptt_event_encode(struct ptt_event *ev);
/* The reverse: id, type, ticks, pid, tid and arguments from ev->words/nwords (ns and pos are
 * left to the caller); 0, PTT_E_UNKNOWN_TYPE or PTT_E_BADRECORD. */
int ptt_event_decode(const struct ptt_types *ts, struct ptt_event *ev);

/* ---- clock -------------------------------------------------------------- */

struct ptt_clock {
	uint64_t start_ticks; /* the trace's time zero */
	uint64_t hz;          /* ticks per second (1000000000 for ns clocks) */
	uint64_t mult;        /* ns = ((ticks - start) * mult) >> 32 */
};
void ptt_clock_init(struct ptt_clock *c, uint64_t start_ticks, uint64_t hz);
uint64_t ptt_clock_ns(const struct ptt_clock *c, uint64_t ticks);
uint64_t ptt_clock_ticks(const struct ptt_clock *c, uint64_t ns); /* the first tick at ns or later; UINT64_MAX: none */

/* ---- reader ------------------------------------------------------------- */

enum ptt_input_form { PTT_FORM_BINARY, PTT_FORM_TEXT };

struct ptt_reader;

/*
 * Open a reader on fd (a file or a pipe; the form, binary or text, is
 * detected from the first bytes).  name is used in diagnostics only.
 * Returns 0, or a negative code with the reason in *diag (static text).
 */
int ptt_reader_open(struct ptt_reader **r, int fd, const char *name);
/*
 * Next event in trace order: 1 and *ev filled, 0 at the end, or a negative
 * code after skipping damaged input (see ptt_reader_diag); reading may go
 * on after an error.  Damaged data never makes the reader stop early while
 * intact data follows.
 */
int ptt_reader_next(struct ptt_reader *r, struct ptt_event *ev);
const char *ptt_reader_diag(const struct ptt_reader *r); /* "offset 4096: bad checksum, record skipped" */
int ptt_reader_form(const struct ptt_reader *r);
const struct ptt_types *ptt_reader_types(const struct ptt_reader *r);
const struct ptt_clock *ptt_reader_clock(const struct ptt_reader *r);
/* Header value for key ("cmdline", "pid", "clock", ...) or NULL. */
const char *ptt_reader_meta(const struct ptt_reader *r, const char *key);
/* The header as "key value" lines, in the order read (including "type" lines).
 * The count is of the lines read so far: it grows as reading goes on, with a
 * META block met mid-stream (types defined late, a later part's header) and
 * with the END block's lines ("end" first). */
size_t ptt_reader_meta_count(const struct ptt_reader *r);
/*
 * Where an input was a part of ptt-record --streams -m (META "head end")
 * read without the part before it: each thread's stream was cut where the
 * recorder's copy stood, so the part before may hold events later than this
 * part's first ones, which this reading does not see (ptt-trace(5)).  The
 * latest time, in ns, of a record in that part (its head says it), or
 * UINT64_MAX where not known (a head from an earlier writer, or none); 0 when
 * no input was such a part.
 */
uint64_t ptt_reader_part_overlap_to(const struct ptt_reader *r);
/* Once read: where the last input is a --streams part whose next part was not read after it, the
 * time (ns) of its last MARK, after which that part may hold earlier events of any thread (0: no
 * mark read); else UINT64_MAX. */
uint64_t ptt_reader_part_overlap_next(const struct ptt_reader *r);
const char *ptt_reader_meta_line(const struct ptt_reader *r, size_t i);
uint64_t ptt_reader_bytes(const struct ptt_reader *r); /* bytes consumed */
int ptt_reader_saw_end(const struct ptt_reader *r); /* an END block / "# end" line was read */
/* The current input said the next part of a rotated recording follows it ("continued FILE", read at its
 * end): that FILE as written, or NULL.  Reset when the next input begins. */
const char *ptt_reader_continued(const struct ptt_reader *r);
/* PTT_BLOCK_ZLIB and/or PTT_BLOCK_ZSTD: the compressors of the blocks read so far (0: none) */
unsigned ptt_reader_compressed(const struct ptt_reader *r);
/*
 * Promise that events before time min_ns or before position min_pos are
 * not wanted: whole EVENTS blocks that end before them are passed over
 * using their headers only (lseek on files), so a time or position window
 * of a large binary trace reads only the blocks it needs.  Events of a
 * block that straddles the limit are still returned: filter them as usual.
 * Positions stay exact (blocks carry their record counts).  No effect on
 * text input.
 */
void ptt_reader_skip(struct ptt_reader *r, uint64_t min_ns, uint64_t min_pos);
/* The same for a time, the blocks passed over still read for the records ptt_record_tells_names keeps
 * (the others counted in the positions, not delivered), while max_bytes of their payloads last, so that
 * what comes after is named as a whole read would (a program's modules and first threads are told at its
 * start); past that budget, by their headers alone: ptt_reader_names_gap is then the time from which names
 * were not read (0: none). */
void ptt_reader_skip_names(struct ptt_reader *r, uint64_t min_ns, uint64_t max_bytes);
uint64_t ptt_reader_names_gap(const struct ptt_reader *r);
/*
 * Read several inputs as one trace, in order, as if concatenated (the files
 * of a rotated recording): when the current input is used up, next(arg)
 * returns the fd of the following one, or -1 when there is none.  Each input
 * starts with its own file header (or text first line) and must be of the
 * first one's form; one that is not is reported and skipped.  Offsets and
 * line numbers in diagnostics restart at 0 in each input; the caller names
 * the input.  The reader never closes an fd.
 */
void ptt_reader_set_next(struct ptt_reader *r, int (*next)(void *arg), void *arg);
/*
 * Follow an input that is still being written (ptt-top): where read(2)
 * finds its end, wait(arg) is asked; 1 when it waited and more may have
 * come (read again), 0 when the input ends there, -1 when the caller stops
 * reading there by choice (an input without its end block is then not
 * reported cut short).  A block whose bytes are not all written yet is so
 * waited for rather than read as damage.  A pipe read without blocking
 * (O_NONBLOCK) with nothing in it yet is asked about the same way.
 */
void ptt_reader_set_wait(struct ptt_reader *r, int (*wait)(void *arg), void *arg);
/*
 * Start from a snapshot (ptt-trace(5), ptt-index(1)) instead of the trace's
 * beginning, for a window that begins at time min_ns and position min_pos
 * (the same promise as ptt_reader_skip): on a seekable binary file, before
 * the first ptt_reader_next, the block headers are walked (payloads seeked
 * over) up to the first EVENTS block the window may need, or the first
 * META block after the header; the last snapshot passed is decoded and fn
 * called for each of its records (kind PTT_SNAP_CONTEXT or PTT_SNAP_STATE,
 * with their original time and position, in position order).  Reading then
 * goes on after the snapshot, with positions as in a full read.  Returns 1
 * when a snapshot was used, 0 when there is none (or it is damaged: then
 * nothing was called and reading starts where it would have), or the first
 * non-zero result of fn (negative).
 */
#define PTT_SNAP_CONTEXT 1u /* a record that opened what is in force (a definition, a hold, a wait) */
#define PTT_SNAP_STATE 2u   /* a record the state depends on (an object's init) */
int ptt_reader_snapshot(struct ptt_reader *r, uint64_t min_ns, uint64_t min_pos,
			int (*fn)(void *ctx, struct ptt_event *ev, unsigned kind), void *ctx);
void ptt_reader_close(struct ptt_reader *r);

/* ---- text form ---------------------------------------------------------- */

/*
 * One event as a ptt-dump line (without newline):
 *   SECONDS.NANOSECONDS PID TID SOURCE EVENT [ARG=VALUE ...]
 * ptr as 0x hex, integers in decimal, str as a C-quoted string; a line
 * may end with a comment ("  # ..."), which the parser skips.  A last
 * argument "site" (a call site) may be left out: it reads as 0, unknown.
 * Returns the length written (truncated to size-1 like snprintf).
 */
size_t ptt_text_format_event(const struct ptt_event *ev, char *buf, size_t size);
/* Parse such a line back; 0 or PTT_E_BADTEXT/PTT_E_UNKNOWN_TYPE. */
int ptt_text_parse_event(const struct ptt_types *ts, const char *line, struct ptt_event *ev);
/* "# type ID NAME CLASS LEVEL SOURCE ARGSPEC" */
size_t ptt_text_format_type(const struct ptt_type *t, char *buf, size_t size);
int ptt_text_parse_type(const char *defn, struct ptt_type *t); /* defn after "type " */
/* C-quote s into buf ("..." with \\, \", \n, \xHH). */
size_t ptt_text_quote(const char *s, char *buf, size_t size);

/* ---- writers ------------------------------------------------------------ */

struct ptt_writer;

/* Binary writer on fd: zlevel 0 = no compression, 1..9 the compressor's level (zstd unless set),
 * PTT_ZLEVEL_FAST the compressor's fastest useful level (zstd -3, zlib 1). */
#define PTT_ZLEVEL_FAST 10
int ptt_writer_open(struct ptt_writer **w, int fd, int zlevel);
/* Compress with zstd (the default) or zlib: 0, or -EINVAL for another value. */
int ptt_writer_set_compressor(struct ptt_writer *w, int comp);
/*
 * Write EVENTS blocks in the compact form (format version 2, ptt-trace(5)):
 * about a fifth of the bytes of plain records, every record's checksum
 * kept; with compression, the compact blocks are compressed as they are
 * (about a fifth of the compressor's work).  Before anything is written:
 * 0, or -EINVAL.
 */
int ptt_writer_set_compact(struct ptt_writer *w, int on);
/* EVENTS blocks written so far, and of those, how many were stored raw because the
 * compressing thread was behind (ptt_writer_async); blocks that compression did not
 * make smaller are not counted. */
void ptt_writer_block_counts(const struct ptt_writer *w, uint64_t *blocks, uint64_t *behind);
/* A META block holding these "key value\n" lines (header or later types). */
int ptt_writer_meta(struct ptt_writer *w, const char *lines, size_t len);
/*
 * Per-thread streams (format version 3, ptt-trace(5)): records are written
 * as spans of one stream each (ptt_writer_span), the stream in time order by
 * itself, and readers merge the streams by time, releasing what precedes
 * each MARK block (ptt_writer_mark).  Not with the compact form.  on
 * PTT_STREAMS_CODED: the streams' blocks may also be coded ones
 * (ptt_writer_coded), and the file says version 4.  Before anything is
 * written: 0, or -EINVAL.
 */
#define PTT_STREAMS_CODED 2
int ptt_writer_set_streams(struct ptt_writer *w, int on);
/*
 * nwords words of count checksummed records of stream (not 0), as they lie
 * (pad records excluded), first and last their first and last times, lost
 * the events their rec_lost records count: copied into the current block
 * (cut first when it is another stream's or full).  0 or an error.
 */
int ptt_writer_span(struct ptt_writer *w, uint32_t stream, const uint32_t *words, size_t nwords, uint32_t count,
		    uint64_t first, uint64_t last, uint32_t lost);
/*
 * n bytes of a coded stream (PTT_BLOCK_CODED: count records coded by their
 * own thread, whole, the stream's history going on from its block before)
 * as one EVENTS block of stream, its bytes as they are (compressed, with
 * ptt_writer_async, by the compressor's thread when it gets to them, else
 * stored as they are: the caller never waits for it; without it, with a
 * level, compressed here); first and last bound its records' times.  n at
 * most PTT_BLOCK_MAX_PAYLOAD; the writer set with PTT_STREAMS_CODED.  0 or
 * an error (-EINVAL: not set so).
 */
int ptt_writer_coded(struct ptt_writer *w, uint32_t stream, const void *bytes, size_t n, uint32_t count,
		     uint64_t first, uint64_t last);
/*
 * ptt_writer_coded, with the same n bytes also at offset off of the file
 * fd (the ring's memfd): where the writer would write(2) them from memory,
 * to a regular file, uncompressed, it copies them file to file
 * (sendfile(2)), not through this process's mapping of them.  fd < 0: as
 * ptt_writer_coded.
 */
int ptt_writer_coded_at(struct ptt_writer *w, uint32_t stream, const void *bytes, size_t n, int fd, uint64_t off,
			uint32_t count, uint64_t first, uint64_t last);
/* A MARK block after the blocks written so far: no record before ticks is still to come. */
int ptt_writer_mark(struct ptt_writer *w, uint64_t ticks);
/* Append one checksummed record; blocks are cut at the block size. */
int ptt_writer_record(struct ptt_writer *w, const uint32_t *words, uint32_t nwords);
/*
 * A run of records lying one after another (a span of a ring): ptt_writer_run
 * writes them as ptt_writer_record would one at a time, and stops before the
 * first that is not sound (not marked, shorter than a record's least, longer
 * than what is left of the span: a pad stops it), whose time is after
 * max_ticks or whose id stop marks (ids from nstop on count as marked), or
 * once it has written max_records.  The checksums are not checked.
 */
struct ptt_run {
	const uint32_t *words;
	size_t nwords;
	uint64_t max_ticks;
	const uint8_t *stop;
	uint32_t nstop;
	uint32_t max_records;
	size_t used;         /* out: the words of the records written */
	uint32_t records;    /* out: how many */
	uint64_t last_ticks; /* out: the time of the last one (records > 0) */
	uint64_t next_ticks; /* out: past set: the time of the record it stopped at, */
	int past;            /* which is sound and not marked, and after max_ticks */
};
/* 0 (run->records may be 0: the first record stops it), or an error of the writer. */
int ptt_writer_run(struct ptt_writer *w, struct ptt_run *run);
/*
 * Two runs (of two threads' rings) merged in time order, a's record first
 * of two at the same time when a_first: each run's records as
 * ptt_writer_run takes them (up to its own max_ticks), at most
 * a->max_records in all, while each run has a next record that it takes and
 * the block has room.  Sets used and records of each (past 0: the caller
 * reads what follows); both 0 when it cannot (a plain writer, a block to
 * begin or end, a thread new to the block: ptt_writer_run's).  0 or an
 * error of the writer.
 */
int ptt_writer_merge(struct ptt_writer *w, struct ptt_run *a, struct ptt_run *b, int a_first);
int ptt_writer_flush(struct ptt_writer *w); /* finish the current block and write it out (async: queue it) */
/*
 * Hold what is written back, in memory, from the file header on, until
 * ptt_writer_unhold: for a writer whose header META is known only after
 * its first records (a recorder measuring its clock while it drains).
 * Only before anything is written: 0, or -EINVAL.
 */
int ptt_writer_hold(struct ptt_writer *w);
size_t ptt_writer_held(const struct ptt_writer *w); /* bytes held back so far */
/* Write the file header, a META block of these lines, then what was held: the file
 * ptt_writer_meta(lines) first would have made.  0 or an error. */
int ptt_writer_unhold(struct ptt_writer *w, const char *lines, size_t len);
/* Flush, then write out every queued block (compressed by the caller where the thread had not):
 * every event is in the file and ptt_writer_block_counts counts them all.  ptt_writer_end does it too. */
int ptt_writer_settle(struct ptt_writer *w);
/*
 * Compress EVENTS blocks on a thread of the writer's own while the caller
 * fills the next (for a recorder that must not stop draining while the
 * compressor works).  The caller writes every block, in order: compressed
 * when the thread has done it, raw when the thread is behind and the
 * caller needs the buffer: it never waits for the compressor (but in
 * ptt_writer_end, where the events are all in, it compresses what the
 * thread has not begun itself).  The thread runs at idle priority
 * (SCHED_IDLE): it takes only processor time that nobody else wants.
 * Other blocks, _switch and _sync write the queue out first.  0 or an
 * error (the writer then stays synchronous).
 */
int ptt_writer_async(struct ptt_writer *w);
int ptt_writer_sync(struct ptt_writer *w); /* write every queued block out (raw where not compressed yet); 0 or an error */
/* Write the END block with these summary lines, flush; w stays valid for close. */
int ptt_writer_end(struct ptt_writer *w, const char *lines, size_t len);
uint64_t ptt_writer_bytes(const struct ptt_writer *w); /* bytes written to the current file (some perhaps still gathered: out by the next flush) */
/* Flush, then continue in a new file on fd (a file header comes first; the caller repeats the META). */
int ptt_writer_switch(struct ptt_writer *w, int fd);
uint64_t ptt_writer_events(const struct ptt_writer *w);
/*
 * A snapshot of the state after the first pos events (the latest at ticks):
 * begin, add each record (kind PTT_SNAP_CONTEXT or PTT_SNAP_STATE, its
 * position in the trace), end writes it as one block after the events
 * written so far.  A record longer than 245 words, or a snapshot of more
 * than 4 MiB, makes end return PTT_E_BADRECORD and write nothing.
 */
int ptt_writer_snapshot_begin(struct ptt_writer *w, uint64_t pos, uint64_t ticks);
int ptt_writer_snapshot_add(struct ptt_writer *w, unsigned kind, uint64_t pos, const uint32_t *words, uint32_t nwords);
/* A part's head (ptt_writer_head_end) begun as ptt_writer_snapshot_begin(w, 0, ticks) does, its
 * header holding before_last: the latest time of a record in the part before (ptt-trace(5)). */
int ptt_writer_head_begin(struct ptt_writer *w, uint64_t ticks, uint64_t before_last);
int ptt_writer_snapshot_end(struct ptt_writer *w);
/*
 * A rotated part whose head is at its end (META "head end", ptt-record
 * --streams -m): a writer that appends to the finished part on fd, whose
 * size is size (fd's offset there), then, between ptt_writer_snapshot_begin
 * and ptt_writer_head_end, the head's records (kind PTT_SNAP_CONTEXT, their
 * positions from 0), written as a snapshot block and the index after it
 * that finds it from the file's end (kind PTT_SNAP_INDEX_HEAD).  0 or an error.
 */
int ptt_writer_open_end(struct ptt_writer **w, int fd, uint64_t size);
int ptt_writer_head_end(struct ptt_writer *w);
int ptt_writer_close(struct ptt_writer *w); /* frees; does not close fd */

/*
 * The output side of a filter: writes events in the form given (binary:
 * header meta and types first, then records; text: ptt-dump lines).
 * Meta is copied from the reader the first time an event is written and
 * whenever the reader learned new types.  Text lines are gathered in the
 * sink and handed to out a block at a time, the rest on ptt_sink_close:
 * nothing else may write to out in between (a write error shows at a later
 * call, or at close, and in ferror(out)).
 */
struct ptt_sink;
int ptt_sink_open(struct ptt_sink **s, FILE *out, int form, int zlevel);
int ptt_sink_event(struct ptt_sink *s, const struct ptt_reader *r, struct ptt_event *ev);
int ptt_sink_close(struct ptt_sink *s, const struct ptt_reader *r); /* writes END if the input had one */
/* "key value\n" lines of the filter's own, written with the header (or the next META) and
 * with the END lines; each call replaces the previous lines of its kind. */
int ptt_sink_meta(struct ptt_sink *s, const char *lines);
int ptt_sink_end_meta(struct ptt_sink *s, const char *lines);
struct ptt_writer *ptt_sink_writer(struct ptt_sink *s); /* NULL for text output */
/* Text form: note(ctx, ev, buf, size) may write a comment for the event (its length, 0 for none),
 * put after the line as "  # NOTE" (ptt-dump's symbolised call sites); readers skip it. */
void ptt_sink_set_note(struct ptt_sink *s, size_t (*note)(void *ctx, const struct ptt_event *ev, char *buf, size_t size),
		       void *ctx);

/* ---- names ------------------------------------------------------------- */

/* Thread and object names, from thread_name and object_name events. */
struct ptt_names;
struct ptt_names *ptt_names_new(void);
int ptt_names_update(struct ptt_names *n, const struct ptt_event *ev); /* learns from name events */
const char *ptt_names_thread(const struct ptt_names *n, uint32_t tid);   /* NULL if unnamed */
const char *ptt_names_object(const struct ptt_names *n, uint64_t addr);
int ptt_names_find_object(const struct ptt_names *n, const char *name, uint64_t *addr); /* 1 if found */
void ptt_names_free(struct ptt_names *n);

/* ---- stacks ------------------------------------------------------------ */

/*
 * The callers' stacks a trace defines (ptt-trace(5)): stack_frames events
 * give a stack's return addresses, innermost first, under an id that is
 * unique in its process (an exec starts the ids again: a later definition
 * replaces an earlier one); a stack event names the stack of its thread's
 * next event.  PTT_STACK_ID_FULL: the runtime's table was full, no stack.
 */
#define PTT_STACK_MAX 64
#define PTT_STACK_ID_FULL 0xffffffffu
/*
 * A Python frame among a stack's frames (CPython, ptt-trace(5)): top byte
 * 0xfe (never a user-space address, nor an inline level of one), the code
 * object's id of a py_code event in bits 32..55 (0: not described, the
 * runtime's table was full), its line in bits 0..31 (0: unknown).  The
 * runtime writes a stack's Python frames after its native ones, innermost
 * first.
 */
/*
 * An object in shared memory, as a reader names it (convert/lib/shmap.h, ptt-trace(5), SHARED OBJECTS):
 * top byte 0xfd (never a user-space address), the mapping's identity (its file, or the anonymous
 * mapping's maker) in bits 40..55, the object's offset in that file in bits 0..39.  Never written in
 * a trace: readers make it from map_shared events, the same in every process that maps the object.
 */
#define PTT_SHARED_TAG 0xfdu
#define PTT_SHARED_IDS 0xffffu
#define PTT_SHARED_OFF_MAX ((UINT64_C(1) << 40) - 1)
#define PTT_SHARED_ADDR(id, off) ((uint64_t)PTT_SHARED_TAG << 56 | (uint64_t)((id) & 0xffffu) << 40 | (uint64_t)(off))
#define PTT_IS_SHARED(a) ((uint64_t)(a) >> 56 == PTT_SHARED_TAG)
#define PTT_SHARED_ID(a) ((uint32_t)((uint64_t)(a) >> 40) & 0xffffu)
#define PTT_SHARED_OFF(a) ((uint64_t)(a) & PTT_SHARED_OFF_MAX)
#define PTT_PYFRAME_TAG 0xfeu
#define PTT_PYFRAME(code, line) \
	((uint64_t)PTT_PYFRAME_TAG << 56 | (uint64_t)((code) & 0xffffffu) << 32 | (uint64_t)(uint32_t)(line))
#define PTT_IS_PYFRAME(f) ((uint64_t)(f) >> 56 == PTT_PYFRAME_TAG)
#define PTT_PYFRAME_CODE(f) ((uint32_t)((uint64_t)(f) >> 32) & 0xffffffu)
#define PTT_PYFRAME_LINE(f) ((uint32_t)(f))
/*
 * The last frame of a stack the runtime cut at its depth (ptt-trace(5)):
 * top byte 0xfd (never a user-space address, nor an inline level of one),
 * the depth kept in bits 0..31.  It follows the frames kept (the Python
 * frames, if any, after it); readers show it as "\u2026(cut at N frames)".
 */
#define PTT_FRAME_CUT_TAG 0xfdu
#define PTT_FRAME_CUT(depth) ((uint64_t)PTT_FRAME_CUT_TAG << 56 | (uint64_t)(uint32_t)(depth))
#define PTT_IS_FRAME_CUT(f) ((uint64_t)(f) >> 56 == PTT_FRAME_CUT_TAG)
struct ptt_stacks;
struct ptt_stacks *ptt_stacks_new(void);
/* Learn from a stack_frames event: 1 if it was one, 0 if not, or PTT_E_NOMEM. */
int ptt_stacks_update(struct ptt_stacks *s, const struct ptt_event *ev);
/* The frames of stack id in process pid (*frames set, NULL if unknown); their count, 0 if unknown. */
unsigned ptt_stacks_get(const struct ptt_stacks *s, uint32_t pid, uint32_t id, const uint64_t **frames);
void ptt_stacks_free(struct ptt_stacks *s);

/* A C++ symbol demangled ("_ZN4pool4lockE" -> "pool::lock"), malloc'd; NULL if not
 * mangled or libstdc++'s demangler is not there (looked up at run time). */
char *ptt_demangle(const char *sym);

#include "inforce.h" /* the records in force at a point of a trace */

#endif

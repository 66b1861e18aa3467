/* test_format.c - records, checksums, text form, writer and reader round trips, damage recovery. */
#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <zlib.h>

#include "../../formats/ptt_trace.h"
#include "../../formats/compact.h"
#include "tap.h"

static struct ptt_event make_event(unsigned id, uint64_t ticks, uint32_t tid, uint64_t obj, int ret)
{
	struct ptt_event ev;
	memset(&ev, 0, sizeof ev);
	ev.type = ptt_builtin_type(id);
	ev.id = (uint16_t)id;
	ev.ticks = ticks;
	ev.pid = 100;
	ev.tid = tid;
	ev.nargs = ev.type->nargs;
	ev.arg[0] = obj;
	ev.arg[1] = (uint64_t)(int64_t)ret;
	return ev;
}

/* The EVENTS blocks of the trace at fd (left at 0) with each flag: [0] raw, [1] zlib, [2] zstd, [3] packed. */
static void count_blocks(int fd, unsigned n[4])
{
	struct ptt_block_header h;
	off_t at = sizeof(struct ptt_file_header);
	n[0] = n[1] = n[2] = n[3] = 0;
	while (pread(fd, &h, sizeof h, at) == (ssize_t)sizeof h && h.magic == PTT_BLOCK_MAGIC) {
		if (h.kind == PTT_BLOCK_EVENTS && h.count) {
			n[h.flags & PTT_BLOCK_ZLIB ? 1 : h.flags & PTT_BLOCK_ZSTD ? 2 : 0]++;
			n[3] += (h.flags & PTT_BLOCK_PACKED) != 0;
		}
		at += (off_t)(sizeof h + h.payload_len);
	}
}

/* Write n mutex_lock records to a temp file with this compressor (-1: the writer's default), synchronous
 * or async (blocks written by the writer's thread); its fd at 0. */
static int write_trace_comp(int n, int zlevel, int comp, int async, size_t *size)
{
	char path[] = "/tmp/ptt-test-XXXXXX";
	int fd = mkstemp(path);
	unlink(path);
	struct ptt_writer *w;
	ptt_writer_open(&w, fd, zlevel);
	if (comp >= 0)
		ptt_writer_set_compressor(w, comp);
	if (async)
		ptt_writer_async(w);
	const char *meta = "clock ns\nclock_hz 1000000000\nstart_ticks 0\ntype 1024 my_event user 1 program a:u64,s:str\n";
	ptt_writer_meta(w, meta, strlen(meta));
	for (int i = 0; i < n; i++) {
		struct ptt_event ev = make_event(PTT_EV_MUTEX_LOCK, 1000 + (uint64_t)i, 7, 0xabc0 + (uint64_t)i, 0);
		ptt_event_encode(&ev);
		ptt_writer_record(w, ev.words, ev.nwords);
	}
	ptt_writer_end(w, "events 1\n", 9);
	ptt_writer_close(w);
	*size = (size_t)lseek(fd, 0, SEEK_END);
	lseek(fd, 0, SEEK_SET);
	return fd;
}

static int write_trace_mode(int n, int zlevel, int async, size_t *size) { return write_trace_comp(n, zlevel, -1, async, size); }

static int write_trace(int n, int zlevel, size_t *size) { return write_trace_mode(n, zlevel, 0, size); }

/* A temp file holding buf; returns its fd positioned at 0. */
static int write_buf(const char *buf, size_t size)
{
	int fd = fileno(tmpfile());
	ssize_t put = write(fd, buf, size);
	(void)put;
	lseek(fd, 0, SEEK_SET);
	return fd;
}

/* ptt_reader_set_next: hands out the fds of a list, then -1 */
struct fd_list {
	int fd[4];
	int n, next;
};
static int next_fd(void *arg)
{
	struct fd_list *l = arg;
	return l->next < l->n ? l->fd[l->next++] : -1;
}

static int count_events(int fd, int *errors, uint64_t *last_arg)
{
	struct ptt_reader *r;
	int n = 0;
	*errors = 0;
	if (ptt_reader_open(&r, fd, "t") != 0) {
		ptt_reader_close(r);
		return -1;
	}
	struct ptt_event *ev = malloc(sizeof *ev);
	int rc;
	while ((rc = ptt_reader_next(r, ev)) != 0) {
		if (rc < 0) {
			(*errors)++;
			continue;
		}
		n++;
		*last_arg = ev->arg[0];
	}
	free(ev);
	ptt_reader_close(r);
	return n;
}

/* the built-in table, and the type table: by id, by name (the lowest id of that name), definitions that rename or repeat */
static void test_types(void)
{
	int bad = 0;
	for (unsigned id = 0; id < PTT_EV_BUILTIN_COUNT; id++)
		bad += ptt_builtin_type(id) == NULL || ptt_builtin_type(id)->id != id;
	ok(bad == 0, "built-in event table is consistent");

	/* Rust's legacy symbols lose their hash as Rust's demangler leaves it out; C++ names are kept whole */
	{
		char *r = ptt_demangle("_ZN10rust_mutex9RUST_LOCK17h0123456789abcdefE");
		char *c = ptt_demangle("_ZN4pool4lockE");
		ok(!r || strcmp(r, "rust_mutex::RUST_LOCK") == 0, "Rust legacy symbol without its hash: %s", r ? r : "(no libstdc++)");
		ok(!c || strcmp(c, "pool::lock") == 0, "C++ symbol unchanged: %s", c ? c : "(no libstdc++)");
		free(r);
		free(c);
	}

	struct ptt_types tt;
	ptt_types_init_builtin(&tt);
	const struct ptt_type *lock = ptt_types_find_name(&tt, "mutex_lock");
	ok(lock && lock == ptt_types_get(&tt, PTT_EV_MUTEX_LOCK) && !ptt_types_get(&tt, PTT_EV_BUILTIN_COUNT) &&
	   !ptt_types_find_name(&tt, "no_such_type"), "built-in types by id and by name, without a definition");
	struct ptt_type t = *lock;
	t.id = 4000;
	snprintf(t.name, sizeof t.name, "user_point");
	int rc = ptt_types_define(&tt, &t);
	const struct ptt_type *u = ptt_types_find_name(&tt, "user_point");
	ok(rc == 0 && u && u->id == 4000 && ptt_types_get(&tt, 4000) == u, "a defined type by id 4000 and by name");
	t.id = 3000; /* the same name at a lower id: the lowest wins, as a scan by id found it */
	rc = ptt_types_define(&tt, &t);
	ok(rc == 0 && ptt_types_find_name(&tt, "user_point")->id == 3000, "a name defined twice: the lowest id");
	int renames = 0;
	for (unsigned i = 0; i < 1000; i++) { /* id 3000 renamed again and again: stale index entries are dropped */
		snprintf(t.name, sizeof t.name, "renamed_%u", i);
		renames += ptt_types_define(&tt, &t) == 0;
	}
	ok(renames == 1000 && ptt_types_find_name(&tt, "user_point")->id == 4000 &&
	   !ptt_types_find_name(&tt, "renamed_998") && ptt_types_find_name(&tt, "renamed_999")->id == 3000,
	   "renamed types are found by their new name only");
	t = *lock;
	snprintf(t.name, sizeof t.name, "mutex_lock_v2");
	ok(ptt_types_define(&tt, &t) == 0 && !ptt_types_find_name(&tt, "mutex_lock") &&
	   ptt_types_find_name(&tt, "mutex_lock_v2")->id == PTT_EV_MUTEX_LOCK, "a built-in id redefined");
	ptt_types_free(&tt);
}

/* the record checksum catches every single-bit flip; its closed form is the same sum */
static void test_checksum(void)
{
	/* checksum catches every single-bit flip of a record */
	struct ptt_event ev = make_event(PTT_EV_MUTEX_UNLOCK, 123456789, 42, 0xdeadbeef, 0);
	ok(ptt_event_encode(&ev) == 0 && ev.nwords == 11, "mutex_unlock encodes to 11 words (with its call site)");
	int undetected = 0;
	for (unsigned w = 0; w < ev.nwords - 1; w++)
		for (unsigned b = 0; b < 32; b++) {
			uint32_t copy[16];
			memcpy(copy, ev.words, ev.nwords * 4);
			copy[w] ^= 1u << b;
			undetected += ptt_rec_checksum(copy, ev.nwords - 1) == ev.words[ev.nwords - 1];
		}
	ok(undetected == 0, "checksum detects all single-bit flips");
	uint32_t zeros[9] = { 0 };
	ok(ptt_rec_checksum(zeros, 8) != 0, "an all-zero record does not verify");

	/* the closed form the runtime adds up from registers is the same sum, whatever the length,
	 * word by word (ptt_rec_sum_term) or a 64-bit value's two words at once (ptt_rec_sum_term64) */
	int differ = 0;
	srand(15);
	for (uint32_t m = 0; m < 40; m++)
		for (int round = 0; round < 50; round++) {
			uint32_t w[40];
			for (uint32_t i = 0; i < m; i++)
				w[i] = (uint32_t)rand() ^ (uint32_t)rand() << 16;
			uint32_t h = ptt_rotl32(PTT_REC_SUM_SEED, 7 * m), h64 = h;
			for (uint32_t i = 0; i < m; i++)
				h ^= ptt_rec_sum_term(w[i], m - 1 - i);
			uint32_t i = 0;
			for (; i + 1 < m; i += 2)
				h64 ^= ptt_rec_sum_term64((uint64_t)w[i + 1] << 32 | w[i], m - 2 - i);
			if (i < m)
				h64 ^= ptt_rec_sum_term(w[i], 0);
			differ += ptt_rec_sum_finish(h) != ptt_rec_checksum(w, m) || ptt_rec_sum_finish(h64) != ptt_rec_checksum(w, m);
		}
	ok(differ == 0, "the checksum's closed form (32- and 64-bit terms) equals the word-by-word sum");
}

/*
 * The record layout, stated once in ptt_trace.h: a record the runtime writes (its header words
 * stored one by one, its checksum summed in closed form from registers: trace_path.c's put_header
 * and rec_checksum, runtime.h's fast lock record) must be the record every reader decodes
 * (ptt_event_decode, ptt_rec_sound), for every length; and the words of one record are pinned,
 * so that a change to the one statement (which old traces could not be read through) fails too.
 */
static void test_layout(void)
{
	struct ptt_types ts;
	ptt_types_init_builtin(&ts);
	int differ = 0, undecoded = 0;
	srand(34);
	for (uint32_t n = PTT_REC_MIN_WORDS; n <= PTT_REC_MAX_WORDS; n++) {
		uint32_t w[PTT_REC_MAX_WORDS], id = n % 3 ? PTT_EV_MUTEX_LOCK : PTT_EV_STACK;
		uint64_t ts0 = (uint64_t)rand() << 33 ^ (uint64_t)rand(), site = (uint64_t)rand() << 20;
		uint32_t pid = (uint32_t)rand(), tid = (uint32_t)rand();
		/* as trace_path.c's put_header: words one by one, the header's state in closed form */
		uint32_t w0 = ptt_rec_word0(id, n);
		w[0] = w0;
		w[1] = (uint32_t)ts0;
		w[2] = (uint32_t)(ts0 >> 32);
		w[3] = pid;
		w[4] = tid;
		uint32_t h = ptt_rec_sum_seed(PTT_REC_HDR_WORDS) ^ ptt_rec_sum_hdr(w0, ts0, ptt_rec_sum_ids(pid, tid), 0);
		for (uint32_t i = PTT_REC_HDR_WORDS; i < n - 1; i++)
			w[i] = (uint32_t)rand();
		if (n >= PTT_REC_HDR_WORDS + 4) { /* the site in the last argument words, as rec_open_site */
			w[n - 3] = (uint32_t)site;
			w[n - 2] = (uint32_t)(site >> 32);
		}
		uint32_t g = h;
		for (uint32_t i = PTT_REC_HDR_WORDS; i < n - 1; i++)
			g = ptt_rec_sum_word(g, w[i]);
		w[n - 1] = ptt_rec_sum_finish(g);
		/* as ptt_objret_open/close and ptt_obj_event: the header's state moved past the arguments */
		uint32_t k = n - 1 - PTT_REC_HDR_WORDS, terms = ptt_rec_sum_more(h, k);
		for (uint32_t i = PTT_REC_HDR_WORDS; i < n - 1; i++)
			terms ^= ptt_rec_sum_term(w[i], n - 2 - i);
		/* as ptt_fast_objret_open: the whole closed form, pid and tid as one term */
		uint32_t fast = ptt_rec_sum_seed(n - 1) ^ ptt_rec_sum_hdr(w0, ts0, ptt_rec_sum_ids(pid, tid), n - 6);
		for (uint32_t i = PTT_REC_HDR_WORDS; i < n - 1; i++)
			fast ^= ptt_rec_sum_term(w[i], n - 2 - i);
		uint32_t ref[PTT_REC_MAX_WORDS];
		memcpy(ref, w, n * 4);
		ptt_rec_put_header(ref, ptt_rec_word0(id, n), ts0, pid, tid);
		ptt_rec_seal(ref, n);
		differ += memcmp(ref, w, n * 4) != 0 || !ptt_rec_sound(w, n) || ptt_rec_sum_finish(terms) != w[n - 1] ||
			  ptt_rec_sum_finish(fast) != w[n - 1] || !ptt_rec_w0_sound(w0) || ptt_rec_len(w0) != n ||
			  ptt_rec_idlen(w0) != (id | n << 16);
		struct ptt_event ev;
		memset(&ev, 0, sizeof ev);
		memcpy(ev.words, w, n * 4);
		ev.nwords = n;
		int rc = ptt_event_decode(&ts, &ev);
		if (n < (uint32_t)PTT_REC_MIN_WORDS + ptt_types_get(&ts, id)->words) { /* shorter than its arguments */
			undecoded += rc != PTT_E_BADRECORD;
			continue;
		}
		undecoded += rc != 0 || ev.id != id || ev.ticks != ts0 || ev.pid != pid || ev.tid != tid ||
			     ev.arg[0] != (id == PTT_EV_STACK ? w[5] : ((uint64_t)w[6] << 32 | w[5])) ||
			     ptt_rec_ticks(w) != ts0 || ptt_rec_pid(w) != pid || ptt_rec_tid(w) != tid;
	}
	ok(differ == 0, "layout: the runtime's header and closed-form checksums equal ptt_rec_put_header + ptt_rec_seal, lengths 6-255");
	ok(undecoded == 0, "layout: the reader decodes id, ticks, pid, tid and the first argument of every length back (too short: refused)");
	uint32_t bad = ptt_rec_word0(1, PTT_REC_MIN_WORDS - 1);
	ok(!ptt_rec_w0_sound(bad) && !ptt_rec_w0_sound(ptt_rec_word0(1, 6) ^ 1u << 30) && ptt_rec_w0_sound(ptt_rec_word0(1, 255)),
	   "layout: a first word too short or unmarked is not sound");
	/* one record's words, pinned: mutex_lock of object 0x1000, ret 0, no site, at tick 2^32+5 */
	uint32_t one[9];
	ptt_rec_put_header(one, ptt_rec_word0(PTT_EV_MUTEX_LOCK, 9), 0x100000005ull, 7, 8);
	one[5] = 0x1000;
	one[6] = one[7] = 0;
	ptt_rec_seal(one, 9);
	uint32_t pinned[9] = { 0xA7090000u | PTT_EV_MUTEX_LOCK, 5, 1, 7, 8, 0x1000, 0, 0, 0 };
	uint32_t hh = 0x50545431u;
	for (int i = 0; i < 8; i++)
		hh = (hh << 7 | hh >> 25) ^ pinned[i];
	hh *= 0x9E3779B1u;
	pinned[8] = hh ^ hh >> 16;
	ok(memcmp(one, pinned, sizeof one) == 0, "layout: a record's words as ptt-trace(5) states them (0x%08x)", one[8]);
	ptt_types_free(&ts);
}

/* text form: a round trip, including a hostile string; what the writer never writes is rejected */
static void test_text_events(void)
{
	struct ptt_types ts;
	ptt_types_init_builtin(&ts);
	struct ptt_event nm = make_event(PTT_EV_OBJECT_NAME, 5, 1, 0x10, 0);
	strcpy(nm.str, "we\"ird \\name\n\x01");
	char line[4096];
	ptt_text_format_event(&nm, line, sizeof line);
	struct ptt_event back;
	memset(&back, 0, sizeof back);
	ok(ptt_text_parse_event(&ts, line, &back) == 0 && strcmp(back.str, nm.str) == 0 && back.arg[0] == 0x10,
	   "text form round trip keeps a hostile string: %s", line);
	ok(ptt_text_parse_event(&ts, "0.1 1 2 pthread mutex_lock mutex=0x1 ret=0", &back) != 0, "short fraction rejected");
	ok(ptt_text_parse_event(&ts, "0.000000001 1 2 pthread no_such_event", &back) == PTT_E_UNKNOWN_TYPE, "unknown event rejected");
	/* values the writer never produces are malformed, not wrapped or cut */
	static const char *const wrapped[] = {
		"99999999999999.999999999 1 2 pthread mutex_lock mutex=0x1 ret=0", /* past 2^64 ns */
		"-0.000000001 1 2 pthread mutex_lock mutex=0x1 ret=0",
		"0.-00000001 1 2 pthread mutex_lock mutex=0x1 ret=0",
		"0.000000001 4294967297 2 pthread mutex_lock mutex=0x1 ret=0",
		"0.000000001 1 -2 pthread mutex_lock mutex=0x1 ret=0",
		"0.000000001 1 2 pthread mutex_lock mutex=0x1 ret=4294967296",
		"0.000000001 1 2 pthread thread_end retval=0x0 how=-1",
		"0.000000001 1 2 pthread thread_join_req handle=0x1 target=4294967296",
	};
	int accepted = 0;
	for (size_t i = 0; i < sizeof wrapped / sizeof wrapped[0]; i++)
		if (ptt_text_parse_event(&ts, wrapped[i], &back) != PTT_E_BADTEXT) {
			accepted++;
			printf("# accepted: %s\n", wrapped[i]);
		}
	ok(accepted == 0, "out-of-range times, ids and arguments rejected");
	ok(ptt_text_parse_event(&ts, "18446744072.999999999 4294967295 2 pthread thread_end retval=0x0 how=4294967295", &back) == 0 &&
	   back.ns == 18446744072999999999u && back.pid == 4294967295u && back.arg[1] == 4294967295u,
	   "the largest values still parse");
	ok(ptt_text_parse_event(&ts, "0.000000001 1 2 pthread mutex_lock mutex=0x1 ret=-11 site=0x2", &back) == 0 &&
	   (int64_t)back.arg[1] == -11, "negative i32 parses");
	ptt_types_free(&ts);
}

/* number writers against printf: each side of every power of 10 and of 2, and random values of every length */
static void test_number_writers(void)
{
	srand(16);
	int numbad = 0;
	for (int i = 0; i < 20000 + 3 * 84; i++) {
		uint64_t v = 1;
		if (i < 3 * 20)
			for (int k = 0; k < i / 3; k++)
				v *= 10;
		else if (i < 3 * 84)
			v <<= (i - 3 * 20) / 3;
		else if (i == 3 * 84)
			v = UINT64_MAX;
		else
			v = ((uint64_t)rand() << 42 ^ (uint64_t)rand() << 21 ^ (uint64_t)rand()) >> (i % 64);
		if (i < 3 * 84)
			v += (uint64_t)(i % 3) - 1; /* v - 1, v, v + 1 */
		char want[64], got[64];
		memset(got, 'X', sizeof got);
		snprintf(want, sizeof want, "%" PRIu64, v);
		*ptt_fmt_u64(got, v) = 0;
		numbad += strcmp(want, got) != 0;
		snprintf(want, sizeof want, "%" PRId64, (int64_t)v);
		*ptt_fmt_i64(got, (int64_t)v) = 0;
		numbad += strcmp(want, got) != 0;
		snprintf(want, sizeof want, "0x%" PRIx64, v);
		*ptt_fmt_hex(got, v) = 0;
		numbad += strcmp(want, got) != 0;
		snprintf(want, sizeof want, "%" PRIu64 ".%09" PRIu64, v / 1000000000u, v % 1000000000u);
		*ptt_fmt_time(got, v) = 0;
		numbad += strcmp(want, got) != 0;
		if (numbad && numbad < 4)
			printf("# %s: %s\n", want, got);
	}
	ok(numbad == 0, "decimal, hex and time writers say what printf says");
}

/* a line cut short at every size is the full line's beginning, as snprintf would cut it */
static void test_line_cut(void)
{
	struct ptt_event lk = make_event(PTT_EV_MUTEX_LOCK, 0, 4294967295u, UINT64_MAX, -2147483647 - 1);
	lk.ns = UINT64_MAX;
	lk.arg[2] = 0x401a2b;
	char full[512], cut[512];
	size_t fn = ptt_text_format_event(&lk, full, sizeof full);
	int cutbad = fn != strlen(full);
	for (size_t size = 0; size <= fn + 1; size++) {
		memset(cut, 'X', sizeof cut);
		size_t n = ptt_text_format_event(&lk, cut, size);
		size_t want = size ? (fn < size ? fn : size - 1) : 0;
		cutbad += n != want || (size && (memcmp(cut, full, want) || cut[want])) || cut[size] != 'X';
	}
	ok(cutbad == 0 && strcmp(full, "18446744073.709551615 100 4294967295 pthread mutex_lock mutex=0xffffffffffffffff "
				     "ret=-2147483648 site=0x401a2b") == 0,
	   "a line at its widest, and cut at every size: %s", full);
}

/* type definitions of a header */
static void test_type_definitions(void)
{
	struct ptt_type t;
	ok(ptt_text_parse_type("1024 my_event user 1 program a:u64,s:str", &t) == 0 && t.nargs == 2 && t.words == 2,
	   "user type definition parses");
	ok(ptt_text_parse_type("1024 my_event user 1 program s:str,a:u64", &t) != 0, "str not last is rejected");
	ok(ptt_text_parse_type("1024 my_event user 1 program a:u64", &t) == 0 && t.role == PTT_ROLE_POINT,
	   "a user type is a point");
	ok(ptt_text_parse_type("18 mutex_lock mutex 1 pthread mutex:ptr,ret:i32", &t) == 0 && t.role == PTT_ROLE_ACQUIRE,
	   "a header's built-in type takes its role from the table");
	ok(ptt_text_parse_type("18 not_mutex_lock mutex 1 pthread mutex:ptr,ret:i32", &t) == 0 && t.role == PTT_ROLE_POINT,
	   "a type whose name is not the built-in one is a point");
}

/* roles: every "_req" is a request and nothing else is; every role has a name */
static void test_roles(void)
{
	int badrole = 0;
	for (unsigned id = 0; id < PTT_EV_BUILTIN_COUNT; id++) {
		const struct ptt_type *b = ptt_builtin_type(id);
		size_t len = strlen(b->name);
		int req = len > 4 && strcmp(b->name + len - 4, "_req") == 0;
		if ((req != ptt_role_is_request(b->role) && b->cls != PTT_CLASS_META) || b->role >= PTT_ROLE_COUNT ||
		    (b->source == PTT_SRC_RECORDER) != (b->role == PTT_ROLE_RECORDER)) {
			badrole++;
			printf("# %s: role %s\n", b->name, ptt_role_name(b->role));
		}
	}
	ok(badrole == 0, "every request is a _req (but ptt-filter's markers), every recorder event a recorder note");
	ok(strcmp(ptt_role_name(PTT_ROLE_TRY_SHARED), "try_shared") == 0 && strcmp(ptt_role_name(PTT_ROLE_COUNT), "?") == 0,
	   "role names");
}

/* writer/reader round trip, plain and compressed */
static void test_round_trip(void)
{
	for (int z = 0; z <= 6; z += 6) {
		size_t size;
		int fd = write_trace(20000, z, &size);
		int errors;
		uint64_t last = 0;
		int n = count_events(fd, &errors, &last);
		ok(n == 20000 && errors == 0 && last == 0xabc0 + 19999, "zlevel %d: 20000 events read back (%zu bytes)", z, size);
		close(fd);
	}
}

/* limit events: summed per table, said once, in order, an unknown table in general words last */
static void test_limits(void)
{
	struct ptt_types ts;
	ptt_types_init_builtin(&ts);
	static const char *const lim[] = {
		"0.000000001 1 2 recorder limit table=4 count=1 limit=511 need=700",
		"0.000000002 1 2 recorder limit table=4 count=2 limit=511 need=2000",
		"0.000000003 1 2 recorder limit table=99 count=1 limit=0 need=0",
		"0.000000004 1 2 recorder limit table=1 count=3 limit=0 need=0",
		"0.000000005 1 2 pthread mutex_lock mutex=0x1 ret=0 site=0x2",
	};
	struct ptt_limits l;
	memset(&l, 0, sizeof l);
	int added = 0, parsed = 0;
	for (size_t i = 0; i < sizeof lim / sizeof lim[0]; i++) {
		struct ptt_event le;
		memset(&le, 0, sizeof le);
		parsed += ptt_text_parse_event(&ts, lim[i], &le) == 0;
		added += ptt_limits_add(&l, &le);
	}
	char s0[256] = "", s1[256] = "", s2[256] = "", s3[256] = "";
	int n = ptt_limits_sentence(&l, 0, s0, sizeof s0) + ptt_limits_sentence(&l, 1, s1, sizeof s1) +
		ptt_limits_sentence(&l, 2, s2, sizeof s2) + ptt_limits_sentence(&l, 3, s3, sizeof s3);
	ok(parsed == 5 && added == 4 && n == 3 &&
	   !strcmp(s0, "3 joins, detaches, cancels or names of a thread whose tid was not known (target 0)") &&
	   !strcmp(s1, "3 strings (names, paths, commands) cut to 511 bytes, the longest was 2000") &&
	   !strcmp(s2, "1 limit event of a kind this reader does not know"),
	   "limit events summed per table and said once each: '%s' '%s' '%s'", s0, s1, s2);
}

/* zstd (the default) and zlib, synchronous and on the writer's thread */
static void test_compressors(void)
{
	/* zstd (the default) and zlib, synchronous and on the writer's thread: every block compressed
	 * and packed with its compressor's flag, every event read back */
	for (int comp = PTT_COMP_ZSTD; comp <= PTT_COMP_ZLIB; comp++)
		for (int async = 0; async <= 1; async++) {
			size_t size;
			int fd = write_trace_comp(50000, 1, comp, async, &size);
			unsigned nb[4];
			count_blocks(fd, nb);
			int errors;
			uint64_t last = 0;
			int n = count_events(fd, &errors, &last);
			unsigned mine = comp == PTT_COMP_ZSTD ? nb[2] : nb[1], other = comp == PTT_COMP_ZSTD ? nb[1] : nb[2];
			/* async: a block may go raw when the thread is behind, but the writer's end compresses what is left */
			ok(n == 50000 && errors == 0 && last == 0xabc0 + 49999 && mine >= 1 && mine == nb[3] && other == 0 &&
			   (async || nb[0] == 0) && size < 50000 * 44 / 4,
			   "%s%s: 50000 events read back from %u compressed and %u raw blocks (%zu bytes)",
			   comp == PTT_COMP_ZSTD ? "zstd" : "zlib", async ? ", async" : "", mine, nb[0], size);
			close(fd);
		}
	{
		struct ptt_writer *w;
		ptt_writer_open(&w, -1, 1);
		ok(ptt_writer_set_compressor(w, 7) == -EINVAL, "an unknown compressor is refused");
		ptt_writer_close(w);
	}
}

/* packing for zlib: varied lengths, timestamps jumping forward past 2^32 and back */
static void test_packing(void)
{
	uint32_t blk[4096], orig[4096];
	size_t nw = 0;
	uint64_t when = 5;
	for (int i = 0; i < 300 && nw + 20 < 4096; i++) {
		struct ptt_event e = make_event(i % 3 ? PTT_EV_MUTEX_LOCK : PTT_EV_MUTEX_UNLOCK, when, 7 + (uint32_t)i % 5,
						 0x1000 + (uint64_t)i * 64, i % 7);
		ptt_event_encode(&e);
		memcpy(blk + nw, e.words, e.nwords * 4);
		nw += e.nwords;
		when += i % 50 == 0 ? (1ull << 33) + 3 : i % 17 == 0 ? (uint64_t)-2 : (uint64_t)i;
	}
	memcpy(orig, blk, nw * 4);
	uint64_t first = (uint64_t)blk[2] << 32 | blk[1];
	ptt_block_pack(blk, nw, first);
	int zeroed = blk[ptt_rec_len(blk[0]) - 1] == 0 && blk[1] == 0 && blk[2] == 0;
	ptt_block_unpack(blk, nw, first);
	ok(zeroed && memcmp(blk, orig, nw * 4) == 0, "pack then unpack restores %zu words exactly", nw);
	/* a block cut inside its last record: that record is left as it is, no overrun */
	ptt_block_pack(blk, nw - 2, first);
	ptt_block_unpack(blk, nw - 2, first);
	ok(memcmp(blk, orig, (nw - 4) * 4) == 0, "a malformed tail stops packing and unpacking alike");
}

/* n mutex_lock records written as a trace (write_trace), in memory: malloc'd, its size in *size */
static char *trace_bytes(int n, size_t *size)
{
	int fd = write_trace(n, 0, size);
	char *buf = malloc(*size);
	ssize_t got = buf ? pread(fd, buf, *size, 0) : -1;
	close(fd);
	if (got != (ssize_t)*size) {
		free(buf);
		return NULL;
	}
	return buf;
}

/* count_events over size bytes of buf (a temp file of them) */
static int count_buf(const char *buf, size_t size, int *errors)
{
	uint64_t last = 0;
	int fd = write_buf(buf, size);
	int n = count_events(fd, errors, &last);
	close(fd);
	return n;
}

/* damage to records and block headers: what is intact still comes, each damage is one error */
static void test_damage(void)
{
	size_t size;
	char *buf = trace_bytes(20000, &size);
	ok(buf != NULL, "read back trace");
	if (!buf)
		return;
	int errors;
	/* a flipped byte in the middle loses a record, not the rest */
	buf[size / 2] ^= 0x40;
	int n = count_buf(buf, size, &errors);
	ok(n == 19999 && errors == 1, "flipped byte: %d events, %d error", n, errors);
	/* truncation */
	n = count_buf(buf, size / 3, &errors);
	ok(n > 6000 && n < 7000 && errors >= 1, "truncated to a third: %d events, %d errors", n, errors);
	/* a damaged block header: the next block is found */
	buf[size / 2] ^= 0x40; /* undo */
	buf[16 + 4] ^= 0x1; /* META block header */
	n = count_buf(buf, size, &errors);
	ok(n == 20000 && errors == 1, "damaged header block skipped: %d events, %d errors", n, errors);
	buf[16 + 4] ^= 0x1; /* undo */
	free(buf);
}

/* The records of test_compact: varied threads (20, past a block's 15 slots, and a second process), types,
 * strings, a user type, times that go back and jump past 2^56; flat, record i at words + at[i].  burst:
 * each thread's records come 1 to 40 in a row, as a recorder's runs take them from a ring. */
/* A record of type 1024 a:u64,s:str (s of 4 bytes at most), by hand: the built-in table does not have it.  Its words. */
static size_t user_record(uint32_t *w, uint64_t when, uint32_t tid, uint64_t a, const char *str)
{
	w[0] = ptt_rec_word0(1024, 11);
	w[1] = (uint32_t)when;
	w[2] = (uint32_t)(when >> 32);
	w[3] = 100;
	w[4] = tid;
	w[5] = (uint32_t)a;
	w[6] = (uint32_t)(a >> 32);
	w[7] = w[8] = w[9] = 0;
	memcpy(w + 7, str, strlen(str) + 1);
	w[10] = ptt_rec_checksum(w, 10);
	return 11;
}

/*
 * burst 2's records: a thread's loop (a lock taken at one place and released at another, a wait, a
 * user event, a name), each record most often the one two before it again (as a lock loop's), with
 * what must not be taken for a repeat: another lock at the same place between the two (the same
 * reference, other words), a result that differs, another thread's record.
 */
static void loop_record(int kind, uint64_t when, uint32_t tid, uint32_t *w, size_t *nwords)
{
	struct ptt_event e;
	switch (kind) {
	case 0: case 1: case 2: case 5:
		e = make_event(kind == 1 ? PTT_EV_MUTEX_UNLOCK : PTT_EV_MUTEX_LOCK, when, tid, kind == 2 ? 0x3000 : 0x1000,
			       kind == 5 ? 35 : 0);
		e.arg[2] = kind == 1 ? 0x401100 : 0x401000; /* site */
		break;
	case 3:
		e = make_event(PTT_EV_COND_WAIT, when, tid, 0x2000, 0);
		e.arg[1] = 0x1000;
		e.arg[3] = 0x401200;
		break;
	case 4: /* an id past a byte's 127 */
		*nwords = user_record(w, when, tid, 77, "loop");
		return;
	default:
		e = make_event(PTT_EV_THREAD_NAME, when, tid, tid, 0);
		snprintf(e.str, sizeof e.str, "loop-%u", tid);
		break;
	}
	ptt_event_encode(&e);
	memcpy(w, e.words, e.nwords * 4);
	*nwords = e.nwords;
}

static uint32_t *compact_records_of(int n, size_t *at, int burst)
{
	uint32_t ti = 0, row = 0, seed = 5;
	int kind2 = 0, kind1 = 1;
	uint32_t *words = malloc((size_t)n * 24 * 4);
	uint64_t when = 1000;
	size_t o = 0;
	for (int i = 0; words && i < n; i++) {
		if (!burst)
			ti = (uint32_t)i;
		else if (row-- == 0) {
			ti++;
			row = (ti * 2654435761u >> 7) % 40;
		}
		uint32_t tid = 1 + (ti * 7) % 20, *w = words + o;
		struct ptt_event e;
		if (burst == 2) {
			seed = seed * 1103515245u + 12345u;
			int kind = (seed >> 16) % 4 ? kind2 : (int)((seed >> 20) % 7);
			kind2 = kind1;
			kind1 = kind;
			size_t nw;
			loop_record(kind, when, tid, w, &nw);
			at[i] = o;
			o += nw;
			goto next;
		}
		switch (i % 6) {
		case 0: case 1:
			e = make_event(i % 6 ? PTT_EV_MUTEX_UNLOCK : PTT_EV_MUTEX_LOCK, when, tid, 0x1000 + (uint64_t)(i % 3) * 64, 0);
			e.arg[2] = 0x401000 + (uint64_t)(i % 4) * 16; /* site */
			break;
		case 2:
			e = make_event(PTT_EV_COND_WAIT, when, tid, 0x2000, 0);
			e.arg[1] = 0x1000;
			e.arg[2] = (uint64_t)(i % 5 == 0 ? 110 : 0);
			e.arg[3] = 0x7f0000401000ull + (uint64_t)i; /* a new site each time: words that differ */
			break;
		case 3:
			e = make_event(PTT_EV_THREAD_NAME, when, tid, tid, 0);
			snprintf(e.str, sizeof e.str, "worker-%d%s", i, i % 4 ? "" : "-with-a-longer-name");
			break;
		case 4:
			e = make_event(PTT_EV_MUTEX_LOCK, when, tid, (uint64_t)i << 20, i % 2 ? 35 : 0);
			e.pid = i % 100 ? 100 : 200;
			break;
		default:
			at[i] = o;
			o += user_record(w, when, tid, (uint64_t)i << 32 | (uint32_t)i * 2654435761u, "user");
			goto next;
		}
		ptt_event_encode(&e);
		memcpy(w, e.words, e.nwords * 4);
		at[i] = o;
		o += e.nwords;
next:
		when += i % 5000 == 4999 ? (1ull << 58) : i % 17 == 0 ? (uint64_t)-3 : (uint64_t)(i % 300);
	}
	return words;
}

static uint32_t *compact_records(int n, size_t *at) { return compact_records_of(n, at, 0); }

/*
 * Write records i on of words, n in all, with ptt_writer_run as a recorder's merge does: runs cut at
 * random times, lengths and spans (some ending inside a record), thread names and user types one at a
 * time (marked, and past the table), a record that stops a run written by itself.
 */
static int runs_past_bad;
static void write_runs(struct ptt_writer *w, const uint32_t *words, const size_t *at, int n)
{
	static uint8_t stop[PTT_EV_BUILTIN_COUNT];
	stop[PTT_EV_THREAD_NAME] = 1;
	size_t all = at[n - 1] + ptt_rec_len(words[at[n - 1]]);
	srand(11);
	for (int i = 0; i < n;) {
		int m = 1 + rand() % 40;
		const uint32_t *rec = words + at[i];
		uint64_t ticks = (uint64_t)rec[2] << 32 | rec[1];
		struct ptt_run run = { rec, (i + m < n ? at[i + m] : all) - at[i] + (rand() % 4 == 0 ? 3 : 0),
				       rand() % 4 ? ticks + (uint64_t)(rand() % 2000) : UINT64_MAX, stop, PTT_EV_BUILTIN_COUNT,
				       (uint32_t)(1 + rand() % 30), 0, 0, 0, 0, 0 };
		if (run.nwords > all - at[i])
			run.nwords = all - at[i];
		ptt_writer_run(w, &run);
		const uint32_t *next = rec + run.used; /* past: the record it stopped at, after the bound */
		if (run.past && (i + (int)run.records >= n || next != words + at[i + (int)run.records] ||
				 ((uint64_t)next[2] << 32 | next[1]) != run.next_ticks || run.next_ticks <= run.max_ticks))
			runs_past_bad++;
		if (run.records == 0)
			ptt_writer_record(w, rec, ptt_rec_len(rec[0]));
		i += run.records ? (int)run.records : 1;
	}
}

/* A trace of those records in memory (malloc'd, *size): compact 0 plain, 1 compact, 2 compact and
 * compressed (zstd), 3 compact and compressed on the writer's own thread (ptt_writer_async); 4 compact
 * and 5 plain, written in runs (write_runs) */
/* The bytes of the file fd (closed): *size of them, or NULL. */
static char *file_bytes(int fd, size_t *size)
{
	*size = (size_t)lseek(fd, 0, SEEK_END);
	char *buf = malloc(*size);
	if (buf && pread(fd, buf, *size, 0) != (ssize_t)*size) {
		free(buf);
		buf = NULL;
	}
	close(fd);
	return buf;
}

static char *compact_trace(const uint32_t *words, const size_t *at, int n, int compact, size_t *size)
{
	char path[] = "/tmp/ptt-test-XXXXXX";
	int fd = mkstemp(path);
	unlink(path);
	struct ptt_writer *w;
	ptt_writer_open(&w, fd, compact == 2 || compact == 3);
	if (compact && compact != 5)
		ptt_writer_set_compact(w, 1);
	if (compact == 3)
		ptt_writer_async(w);
	const char *meta = "clock ns\nclock_hz 1000000000\nstart_ticks 0\ntype 1024 my_event user 1 program a:u64,s:str\n";
	ptt_writer_meta(w, meta, strlen(meta));
	if (compact >= 4)
		write_runs(w, words, at, n);
	for (int i = 0; compact < 4 && i < n; i++)
		ptt_writer_record(w, words + at[i], ptt_rec_len(words[at[i]]));
	ptt_writer_end(w, "events 1\n", 9);
	ptt_writer_close(w);
	return file_bytes(fd, size);
}

/* Read size bytes of buf: the events read (*errors: error returns; *made_up: events that are not the next
 * records, in order, of the n written: damage may cost records, never make one up or reorder them). */
static int compact_read(const char *buf, size_t size, const uint32_t *words, const size_t *at, int n, int *errors,
			int *made_up)
{
	struct ptt_reader *r;
	int fd = write_buf(buf, size), got = 0, next = 0;
	*errors = *made_up = 0;
	if (ptt_reader_open(&r, fd, "t") != 0) {
		ptt_reader_close(r);
		close(fd);
		return -1;
	}
	struct ptt_event *ev = malloc(sizeof *ev);
	int rc;
	while ((rc = ptt_reader_next(r, ev)) != 0) {
		if (rc < 0) {
			(*errors)++;
			continue;
		}
		got++;
		int k = next;
		while (k < n && (ev->nwords != ptt_rec_len(words[at[k]]) || memcmp(ev->words, words + at[k], ev->nwords * 4)))
			k++;
		if (k == n)
			(*made_up)++;
		else
			next = k + 1;
	}
	free(ev);
	ptt_reader_close(r);
	close(fd);
	return got;
}

/* compact blocks: every record back word for word, a fraction of the bytes, damage kept to a block */
static void test_compact(void)
{
	enum { N = 40000 };
	size_t *at = malloc(N * sizeof *at), csize, psize;
	uint32_t *words = compact_records(N, at);
	char *cbuf = words ? compact_trace(words, at, N, 1, &csize) : NULL;
	char *pbuf = words ? compact_trace(words, at, N, 0, &psize) : NULL;
	ok(cbuf && pbuf, "compact and plain traces written");
	if (!cbuf || !pbuf)
		return;
	uint32_t version;
	memcpy(&version, cbuf + 8, 4);
	unsigned ncompact = 0, nblocks = 0;
	size_t second = 0, second_len = 0;
	uint32_t second_count = 0;
	for (size_t o = 16; o + 48 <= csize;) {
		struct ptt_block_header h;
		memcpy(&h, cbuf + o, sizeof h);
		if (h.kind == PTT_BLOCK_EVENTS && h.count) {
			ncompact += (h.flags & PTT_BLOCK_COMPACT) != 0;
			if (++nblocks == 2) {
				second = o;
				second_len = h.payload_len;
				second_count = h.count;
			}
		}
		o += 48 + h.payload_len;
	}
	int errors, differ;
	int n = compact_read(cbuf, csize, words, at, N, &errors, &differ);
	ok(n == N && errors == 0 && differ == 0 && version == 2 && ncompact == nblocks && nblocks >= 3,
	   "compact: %d of %d records read back exactly (%d differ, %d errors), version %u, %u of %u blocks compact", n, N,
	   differ, errors, version, ncompact, nblocks);
	memcpy(&version, pbuf + 8, 4);
	n = compact_read(pbuf, psize, words, at, N, &errors, &differ);
	ok(n == N && errors == 0 && version == 1 && csize * 3 < psize * 2, "plain: version 1, %zu bytes; compact %zu bytes", psize,
	   csize);
	/* a flipped byte in the second block's coded records: at most that block's records lost, said once */
	for (int k = 1; k <= 9; k++) {
		size_t where = second + 48 + 4 + (second_len - 4) * (size_t)k / 10;
		cbuf[where] ^= 0x21;
		n = compact_read(cbuf, csize, words, at, N, &errors, &differ);
		cbuf[where] ^= 0x21;
		if (!(errors == 1 && n < N && n >= N - (int)second_count)) {
			ok(0, "flip at %zu: %d events, %d errors (block of %u)", where, n, errors, second_count);
			break;
		}
		if (k == 9)
			ok(1, "a flipped byte in a compact block: one error, at most its %u records lost (9 places)", second_count);
	}
	/* random damage in the coded records and truncations: no crash, no overrun (ASan), no event made up */
	srand(7);
	int made_up = 0;
	for (int k = 0; k < 300; k++) {
		char *d = malloc(csize);
		memcpy(d, cbuf, csize);
		for (int j = 0, flips = 1 + k % 8; j < flips; j++)
			d[second + 48 + (size_t)rand() % second_len] = (char)rand();
		size_t len = k % 10 == 9 ? csize / 2 + (size_t)k : csize;
		n = compact_read(d, len, words, at, N, &errors, &differ);
		made_up += n > N || differ > 0;
		free(d);
	}
	ok(made_up == 0, "300 damaged and cut copies read without a made-up event");
	/* compact blocks compressed as they are, in the caller and on the writer's thread */
	for (int mode = 2; mode <= 3; mode++) {
		size_t zsize;
		char *zbuf = compact_trace(words, at, N, mode, &zsize);
		unsigned nz = 0, nc = 0;
		for (size_t o = 16; zbuf && o + 48 <= zsize;) {
			struct ptt_block_header h;
			memcpy(&h, zbuf + o, sizeof h);
			if (h.kind == PTT_BLOCK_EVENTS && h.count) {
				nc += (h.flags & PTT_BLOCK_COMPACT) != 0;
				nz += (h.flags & (PTT_BLOCK_ZLIB | PTT_BLOCK_ZSTD)) != 0;
			}
			o += 48 + h.payload_len;
		}
		n = zbuf ? compact_read(zbuf, zsize, words, at, N, &errors, &differ) : -1;
		ok(n == N && errors == 0 && differ == 0 && nc >= 3 && (mode == 3 || nz == nc) && zsize < csize,
		   "compact and compressed%s: %d records back exactly, %u of %u compact blocks compressed, %zu bytes",
		   mode == 3 ? " on the writer's thread" : "", n, nz, nc, zsize);
		free(zbuf);
	}
	/* runs (ptt_writer_run): the very bytes of one record at a time, compact and plain */
	for (int mode = 4; mode <= 5; mode++) {
		size_t rsize;
		char *rbuf = compact_trace(words, at, N, mode, &rsize);
		const char *want = mode == 4 ? cbuf : pbuf;
		size_t wsize = mode == 4 ? csize : psize;
		ok(rbuf && rsize == wsize && memcmp(rbuf, want, wsize) == 0 && runs_past_bad == 0,
		   "%s, written in runs: the same %zu bytes, every stop past the bound told", mode == 4 ? "compact" : "plain",
		   wsize);
		free(rbuf);
	}
	/* runs of one thread's records (as a ring gives them), and a thread's loop, its records most often
	 * repeating the one before the last (code_known_thread codes those without the reference's
	 * look-up): the bytes of one record at a time, read back exactly */
	for (int burst = 1; burst <= 2; burst++) {
		size_t *bat = malloc(N * sizeof *bat), bsize, rsize;
		uint32_t *bwords = compact_records_of(N, bat, burst);
		char *bbuf = bwords ? compact_trace(bwords, bat, N, 1, &bsize) : NULL;
		char *rbuf = bwords ? compact_trace(bwords, bat, N, 4, &rsize) : NULL;
		n = bbuf ? compact_read(bbuf, bsize, bwords, bat, N, &errors, &differ) : -1;
		ok(bbuf && rbuf && rsize == bsize && memcmp(rbuf, bbuf, bsize) == 0 && runs_past_bad == 0 && n == N &&
			   errors == 0 && differ == 0,
		   "%s, written in runs: the same %zu bytes (%zu in turn), %d records back exactly",
		   burst == 1 ? "one thread's records in a row" : "a thread's loop", bsize, csize, n);
		free(bbuf);
		free(rbuf);
		free(bwords);
		free(bat);
	}
	/* held back (ptt_writer_hold), the header META given last: the file of META first, compact and
	 * plain, a type's META among the held records, to a file (gathered) and to a pipe (not) */
	for (int mode = 0; mode < 4; mode++) {
		char *out[2] = { NULL, NULL };
		size_t len[2] = { 0, 0 };
		for (int held = 0; held < 2; held++) {
			int fds[2] = { -1, -1 }, fd;
			char path[] = "/tmp/ptt-test-XXXXXX";
			if (mode & 2) {
				if (pipe(fds) != 0)
					break;
				fd = fds[1];
			} else {
				fd = mkstemp(path);
				unlink(path);
			}
			struct ptt_writer *hw;
			ptt_writer_open(&hw, fd, 0);
			ptt_writer_set_compact(hw, !(mode & 1));
			const char *head = "clock ns\nclock_hz 1000000000\nstart_ticks 0\n";
			const char *type = "type 1024 my_event user 1 program a:u64,s:str\n";
			int hrc = held ? ptt_writer_hold(hw) : ptt_writer_meta(hw, head, strlen(head));
			for (int i = 0; i < 600 && !hrc; i++) { /* what a pipe holds unread */
				if (i == 200)
					hrc = ptt_writer_meta(hw, type, strlen(type));
				if (i == 200 && held)
					hrc = hrc || ptt_writer_held(hw) == 0;
				if (!hrc)
					hrc = ptt_writer_record(hw, words + at[i], ptt_rec_len(words[at[i]]));
			}
			if (held && !hrc)
				hrc = ptt_writer_unhold(hw, head, strlen(head));
			if (!hrc)
				hrc = ptt_writer_end(hw, "events 1\n", 9);
			ptt_writer_close(hw);
			if (hrc)
				break;
			if (mode & 2) {
				close(fds[1]);
				out[held] = malloc(4 << 20);
				ssize_t got;
				while (out[held] && (got = read(fds[0], out[held] + len[held], (4 << 20) - len[held])) > 0)
					len[held] += (size_t)got;
				close(fds[0]);
			} else {
				len[held] = (size_t)lseek(fd, 0, SEEK_END);
				out[held] = malloc(len[held]);
				if (out[held] && pread(fd, out[held], len[held], 0) != (ssize_t)len[held])
					len[held] = 0;
				close(fd);
			}
		}
		ok(out[0] && out[1] && len[0] > 4096 && len[0] == len[1] && memcmp(out[0], out[1], len[0]) == 0,
		   "held back, the header META given last: the same %zu bytes (%s, to a %s)", len[0],
		   mode & 1 ? "plain" : "compact", mode & 2 ? "pipe" : "file");
		free(out[0]);
		free(out[1]);
	}
	/* compact is chosen before anything is written */
	struct ptt_writer *w;
	ptt_writer_open(&w, -1, 1);
	ok(ptt_writer_set_compact(w, 0) == 0, "compact off is always taken");
	ptt_writer_close(w);
	free(cbuf);
	free(pbuf);
	free(words);
	free(at);
}

/* the header and end blocks' text: its own crc32, and a writer's META block without it */
/*
 * A coded stream (ptt-record --streams=coded): records coded by their writer
 * as one history across blocks, with its marks (a reset where a new owner
 * begins, a pad where the ring's end cuts a block), written by
 * ptt_writer_coded, read back word for word; a flipped byte costs records
 * up to the next reset, never makes one up.
 */
enum { CODED_PER_BLOCK = 997 };
/* how coded_stream_trace hands its blocks over: 0 ptt_writer_coded; ptt_writer_coded_at with the bytes
 * also in a memfd (1: copied file to file) or with a pipe's end (2: which sendfile cannot read) */
static int coded_src_mode;
/* level > 0: compressed, by the writer's thread when async (ptt-record --streams=coded -z) */
static char *coded_stream_trace(const uint32_t *words, const size_t *at, int n, int per_block, int level, int async,
				enum ptt_compressor comp, size_t *size)
{
	char path[] = "/tmp/ptt-test-XXXXXX";
	int fd = mkstemp(path);
	unlink(path);
	struct ptt_writer *w;
	ptt_writer_open(&w, fd, level);
	ptt_writer_set_compressor(w, comp);
	ptt_writer_set_streams(w, PTT_STREAMS_CODED);
	if (async)
		ptt_writer_async(w);
	const char *meta = "clock ns\nclock_hz 1000000000\nstart_ticks 0\ntype 1024 my_event user 1 program a:u64,s:str\n";
	ptt_writer_meta(w, meta, strlen(meta));
	struct ptt_compact *c = calloc(1, sizeof *c);
	unsigned char *buf = malloc((size_t)per_block * CPT_MAX_BYTES);
	int src = -1, pipe_fds[2] = { -1, -1 };
	uint64_t src_off = 0;
	if (coded_src_mode == 1)
		src = memfd_create("ptt-test", 0);
	else if (coded_src_mode == 2 && pipe(pipe_fds) == 0)
		src = pipe_fds[0];
	for (int i = 0, b = 0; c && buf && i < n; b++) {
		unsigned char *o = buf;
		if (b == 0 || b == 10) { /* a thread claims the ring */
			*o++ = CPT_STREAM_RESET;
			cpt_reset(c, 0);
		}
		int k = 0;
		uint64_t first = ptt_rec_ticks(words + at[i]), last = first;
		for (; k < per_block && i < n; k++, i++) {
			last = ptt_rec_ticks(words + at[i]);
			o = cpt_encode(c, o, words + at[i], ptt_rec_len(words[at[i]]));
		}
		if (b == 3 || b == 7) { /* the ring's end: a pad, and what the ring held after it */
			*o++ = CPT_STREAM_PAD;
			memset(o, 0xa5, 40);
			o += 40;
		}
		if (coded_src_mode == 1 && pwrite(src, buf, (size_t)(o - buf), (off_t)src_off) != o - buf)
			break;
		if (coded_src_mode)
			ptt_writer_coded_at(w, 1, buf, (size_t)(o - buf), src, src_off, (uint32_t)k, first, last);
		else
			ptt_writer_coded(w, 1, buf, (size_t)(o - buf), (uint32_t)k, first, last);
		src_off += (uint64_t)(o - buf);
	}
	if (src >= 0)
		close(src);
	if (pipe_fds[1] >= 0)
		close(pipe_fds[1]);
	ptt_writer_mark(w, UINT64_MAX);
	ptt_writer_end(w, "events 1\n", 9);
	ptt_writer_close(w);
	free(c);
	free(buf);
	return file_bytes(fd, size);
}

static void test_coded_stream(void)
{
	enum { N = 20000 };
	size_t *at = malloc(N * sizeof *at), size;
	uint32_t *words = compact_records(N, at);
	char *buf = words ? coded_stream_trace(words, at, N, CODED_PER_BLOCK, 0, 0, PTT_COMP_ZSTD, &size) : NULL;
	ok(buf != NULL, "coded stream trace written");
	if (!buf)
		return;
	uint32_t version;
	memcpy(&version, buf + 8, 4);
	unsigned coded = 0;
	for (size_t o = 16; o + 48 <= size;) {
		struct ptt_block_header h;
		memcpy(&h, buf + o, sizeof h);
		coded += h.kind == PTT_BLOCK_EVENTS && h.stream == 1 &&
			 (h.flags & (PTT_BLOCK_COMPACT | PTT_BLOCK_CODED)) == (PTT_BLOCK_COMPACT | PTT_BLOCK_CODED);
		o += 48 + h.payload_len;
	}
	int errors, made_up;
	int n = compact_read(buf, size, words, at, N, &errors, &made_up);
	ok(n == N && errors == 0 && made_up == 0 && version == 4 && coded == (N + CODED_PER_BLOCK - 1) / CODED_PER_BLOCK,
	   "coded stream: %d of %d records read back exactly across %u blocks, resets and pads (%d differ, %d errors), version %u",
	   n, N, coded, made_up, errors, version);
	/* a flipped byte in block 5: records lost up to the reset at block 10 at most, none made up */
	size_t o = 16;
	for (unsigned b = 0; o + 48 <= size;) {
		struct ptt_block_header h;
		memcpy(&h, buf + o, sizeof h);
		if (h.kind == PTT_BLOCK_EVENTS && h.stream == 1 && b++ == 5) {
			buf[o + 48 + h.payload_len / 2] ^= 0x21;
			break;
		}
		o += 48 + h.payload_len;
	}
	n = compact_read(buf, size, words, at, N, &errors, &made_up);
	ok(made_up == 0 && errors >= 1 && n >= N - 5 * CODED_PER_BLOCK && n < N,
	   "coded stream, a byte flipped: %d of %d records read, %d errors, %d made up", n, N, errors, made_up);
	free(buf);
	/* the blocks' bytes also a file's (ptt-record's rings in their memfd): copied file to file, the trace the
	 * same byte for byte; from a file sendfile cannot read (a pipe), written from memory, the same */
	buf = coded_stream_trace(words, at, N, CODED_PER_BLOCK, 0, 0, PTT_COMP_ZSTD, &size);
	for (coded_src_mode = 1; buf && coded_src_mode <= 2; coded_src_mode++) {
		size_t size2;
		char *buf2 = coded_stream_trace(words, at, N, CODED_PER_BLOCK, 0, 0, PTT_COMP_ZSTD, &size2);
		ok(buf2 && size2 == size && memcmp(buf, buf2, size) == 0,
		   "coded stream, its bytes %s: the same trace (%zu bytes, %zu from memory)",
		   coded_src_mode == 1 ? "copied from a memfd (sendfile)" : "from memory (sendfile cannot read a pipe)", size2, size);
		free(buf2);
	}
	/* short spans (under the 4 KiB that go file to file) gathered with pread from the memfd: the same */
	coded_src_mode = 0;
	char *sbuf = coded_stream_trace(words, at, N, 40, 0, 0, PTT_COMP_ZSTD, &size);
	coded_src_mode = 1;
	size_t ssize;
	char *sbuf2 = sbuf ? coded_stream_trace(words, at, N, 40, 0, 0, PTT_COMP_ZSTD, &ssize) : NULL;
	ok(sbuf2 && ssize == size && memcmp(sbuf, sbuf2, size) == 0,
	   "coded stream in short spans, read from a memfd: the same trace (%zu bytes, %zu from memory)", ssize, size);
	free(sbuf);
	free(sbuf2);
	/* compressed by the writer's thread, its copy of each block read from the memfd (pread) */
	coded_src_mode = 1;
	char *zbuf = coded_stream_trace(words, at, N, CODED_PER_BLOCK, 1, 1, PTT_COMP_ZSTD, &size);
	coded_src_mode = 0;
	n = zbuf ? compact_read(zbuf, size, words, at, N, &errors, &made_up) : -1;
	ok(n == N && errors == 0 && made_up == 0,
	   "coded stream compressed by the writer's thread, its copies read from a memfd: %d of %d records back (%d differ, %d errors)",
	   n, N, made_up, errors);
	free(zbuf);
	free(buf);
	free(words);
	free(at);
}

/* A coded block's compressor flag, and whether the block is still COMPACT|CODED of stream 1. */
static unsigned coded_blocks(const char *buf, size_t size, unsigned *zstd, unsigned *zlib, size_t *largest)
{
	unsigned coded = 0;
	*zstd = *zlib = 0;
	*largest = 0;
	for (size_t o = 16; o + 48 <= size;) {
		struct ptt_block_header h;
		memcpy(&h, buf + o, sizeof h);
		if (h.kind == PTT_BLOCK_EVENTS && h.stream == 1 &&
		    (h.flags & (PTT_BLOCK_COMPACT | PTT_BLOCK_CODED)) == (PTT_BLOCK_COMPACT | PTT_BLOCK_CODED)) {
			coded++;
			*zstd += (h.flags & PTT_BLOCK_ZSTD) != 0;
			*zlib += (h.flags & PTT_BLOCK_ZLIB) != 0;
			if (h.raw_len > *largest)
				*largest = h.raw_len;
		}
		o += 48 + h.payload_len;
	}
	return coded;
}

/*
 * ptt-record --streams=coded -z: coded blocks compressed by the writer's
 * idle thread (blocks past its 64 KiB buffers in buffers of their own) or
 * synchronously, each keeping COMPACT|CODED, in order, read back word for
 * word; a writer that was not set for coded streams (version 3) takes none.
 */
static void test_coded_stream_compressed(void)
{
	enum { N = 20000 };
	size_t *at = malloc(N * sizeof *at), size, largest;
	uint32_t *words = compact_records(N, at);
	if (!words)
		return;
	struct { int per, level, async; enum ptt_compressor comp; const char *what; } v[] = {
		{ CODED_PER_BLOCK, PTT_ZLEVEL_FAST, 1, PTT_COMP_ZSTD, "zstd, by the writer's thread" },
		{ 9001, 3, 1, PTT_COMP_ZSTD, "zstd, blocks larger than the queue's buffers" },
		{ CODED_PER_BLOCK, 6, 0, PTT_COMP_ZLIB, "zlib, in the writer" },
	};
	for (unsigned t = 0; t < sizeof v / sizeof v[0]; t++) {
		char *buf = coded_stream_trace(words, at, N, v[t].per, v[t].level, v[t].async, v[t].comp, &size);
		if (!buf)
			continue;
		unsigned zstd, zlib, coded = coded_blocks(buf, size, &zstd, &zlib, &largest);
		int errors, made_up;
		int n = compact_read(buf, size, words, at, N, &errors, &made_up);
		unsigned z = v[t].comp == PTT_COMP_ZLIB ? zlib : zstd;
		ok(n == N && errors == 0 && made_up == 0 && coded == (unsigned)((N + v[t].per - 1) / v[t].per) && z >= 1 &&
			   (v[t].per < 5000 || largest > 70000),
		   "coded stream compressed (%s): %d of %d records read back in %u blocks, %u compressed, the largest %zu bytes "
		   "(%d differ, %d errors)", v[t].what, n, N, coded, z, largest, made_up, errors);
		free(buf);
	}
	char path[] = "/tmp/ptt-test-XXXXXX";
	int fd = mkstemp(path);
	unlink(path);
	struct ptt_writer *w;
	ptt_writer_open(&w, fd, 0);
	ptt_writer_set_streams(w, 1);
	unsigned char b[8] = { CPT_STREAM_RESET };
	ok(ptt_writer_coded(w, 1, b, 1, 0, 0, 0) == -EINVAL, "a coded block refused by a writer of version 3 streams");
	ptt_writer_close(w);
	close(fd);
	free(words);
	free(at);
}

static void test_header_text(void)
{
	size_t size;
	char *buf = trace_bytes(20000, &size);
	int errors, n;
	if (!buf)
		return;
	/* header text has its own crc32: a flipped digit of clock_hz is reported, the events still come */
	ok(memcmp(buf + 64 + 9, "clock_hz 1", 10) == 0, "META text where expected");
	buf[64 + 18] = '2';
	n = count_buf(buf, size, &errors);
	ok(n == 20000 && errors == 1, "flipped META text: %d events, %d error", n, errors);
	buf[64 + 18] = '1';
	buf[size - 2] = '7'; /* END: "events 1" */
	n = count_buf(buf, size, &errors);
	ok(n == 20000 && errors == 1, "flipped END text: %d events, %d error", n, errors);
	buf[size - 2] = '1';
	/* a META block of a writer without PTT_BLOCK_CRC still reads cleanly */
	struct ptt_block_header bh;
	memcpy(&bh, buf + 16, sizeof bh);
	ok((bh.flags & PTT_BLOCK_CRC) && bh.count != 0, "META block carries its crc32");
	bh.flags = 0;
	bh.count = 0;
	bh.header_crc = (uint32_t)crc32(0, (const Bytef *)&bh, offsetof(struct ptt_block_header, header_crc));
	memcpy(buf + 16, &bh, sizeof bh);
	n = count_buf(buf, size, &errors);
	ok(n == 20000 && errors == 0, "META block without crc: %d events, %d errors", n, errors);
	free(buf);
}

/* random bytes are no trace; two traces concatenated (rotated files through cat) read as one */
static void test_not_a_trace_and_concatenated(void)
{
	char junk[4096];
	int errors;
	srand(17);
	for (int i = 0; i < 4096; i++)
		junk[i] = (char)rand();
	ok(count_buf(junk, sizeof junk, &errors) == -1, "random bytes are not a trace");
	size_t size;
	char *buf = trace_bytes(20000, &size), *two = buf ? malloc(2 * size) : NULL;
	if (!two) {
		free(buf);
		return;
	}
	memcpy(two, buf, size);
	memcpy(two + size, buf, size);
	int n = count_buf(two, 2 * size, &errors);
	ok(n == 40000 && errors == 0, "concatenated traces: %d events, %d errors", n, errors);
	free(two);
	free(buf);
}

/* skipping whole blocks by position and by time: positions stay exact */
static void test_skip(void)
{
	size_t size;
	int fd = write_trace(20000, 0, &size);
	struct ptt_reader *r;
	ptt_reader_open(&r, fd, "t");
	ptt_reader_skip(r, 0, 15000);
	struct ptt_event *e = malloc(sizeof *e);
	uint64_t first_pos = UINT64_MAX, last_pos = 0, nread = 0, bad_pos = 0;
	while (ptt_reader_next(r, e) > 0) {
		if (first_pos == UINT64_MAX)
			first_pos = e->pos;
		bad_pos += e->arg[0] != 0xabc0 + e->pos;
		last_pos = e->pos;
		nread++;
	}
	ok(first_pos <= 15000 && first_pos > 13000 && last_pos == 19999 && bad_pos == 0 && ptt_reader_bytes(r) == size,
	   "skip to position 15000: first decoded %llu, %llu decoded", (unsigned long long)first_pos, (unsigned long long)nread);
	ptt_reader_close(r);
	/* and by time (ticks are ns here: event i at 1000 + i ns) */
	lseek(fd, 0, SEEK_SET);
	ptt_reader_open(&r, fd, "t");
	ptt_reader_skip(r, 1000 + 18000, 0);
	first_pos = UINT64_MAX;
	while (ptt_reader_next(r, e) > 0)
		if (first_pos == UINT64_MAX)
			first_pos = e->pos;
	ok(first_pos <= 18000 && first_pos > 16000, "skip to 18000 ns: first decoded %llu", (unsigned long long)first_pos);
	ptt_reader_close(r);
	free(e);
	close(fd);
}

/* several inputs read as one: a trace, a second, then junk (reported, skipped), then a third */
static void test_several_inputs(void)
{
	size_t size, size2, size3;
	int fd = write_trace(20000, 0, &size), fa = write_trace(3000, 0, &size2), fb = write_trace(5000, 0, &size3), rc;
	int junk = write_buf("hello\n", 6);
	struct fd_list l = { { fa, junk, fb }, 3, 0 };
	struct ptt_reader *r;
	struct ptt_event *e = malloc(sizeof *e);
	ptt_reader_open(&r, fd, "t");
	ptt_reader_set_next(r, next_fd, &l);
	ptt_reader_skip(r, 0, 21000); /* skipping goes on across inputs */
	uint64_t nev = 0, pos_bad = 0, junk_errors = 0, other_errors = 0, first_pos = UINT64_MAX;
	while ((rc = ptt_reader_next(r, e)) != 0) {
		if (rc < 0) {
			if (l.next == 2 && strcmp(ptt_reader_diag(r), "offset 0: not a ptt trace (bad magic)") == 0)
				junk_errors++;
			else
				other_errors++;
			continue;
		}
		if (first_pos == UINT64_MAX)
			first_pos = e->pos;
		pos_bad += e->pos >= 23000 ? e->arg[0] != 0xabc0 + e->pos - 23000 : e->pos >= 20000 ? e->arg[0] != 0xabc0 + e->pos - 20000 : 1;
		nev++;
	}
	ok(junk_errors == 1 && other_errors == 0 && pos_bad == 0 && first_pos > 19000 && first_pos <= 21000 &&
	   e->pos == 27999 && ptt_reader_saw_end(r) && ptt_reader_bytes(r) == size + size2 + size3,
	   "three traces and junk read as one: first decoded %llu, %llu decoded, %llu junk errors, %llu others",
	   (unsigned long long)first_pos, (unsigned long long)nev, (unsigned long long)junk_errors,
	   (unsigned long long)other_errors);
	ptt_reader_close(r);
	close(fa);
	close(fb);
	close(junk);
	free(e);
	close(fd);
}

/* the writer's thread (ptt_writer_async) writes the file a synchronous writer writes, byte for byte */
static void test_async_writer(void)
{
	/* the writer's thread (ptt_writer_async) writes the file a synchronous writer writes, byte for byte,
	 * unless it was behind and some blocks went raw: then the same events */
	size_t sync_size, async_size;
	int sfd = write_trace_mode(100000, 1, 0, &sync_size), afd = write_trace_mode(100000, 1, 1, &async_size);
	unsigned nb[4];
	count_blocks(afd, nb);
	char *sb = malloc(sync_size + 1), *ab = malloc(async_size + 1);
	int same = sb && ab && sync_size == async_size && read(sfd, sb, sync_size) == (ssize_t)sync_size &&
		   read(afd, ab, async_size) == (ssize_t)async_size && memcmp(sb, ab, sync_size) == 0;
	if (nb[0]) {
		int e1, e2;
		uint64_t l1 = 0, l2 = 0;
		lseek(sfd, 0, SEEK_SET);
		lseek(afd, 0, SEEK_SET);
		same = count_events(sfd, &e1, &l1) == 100000 && count_events(afd, &e2, &l2) == 100000 && !e1 && !e2 && l1 == l2;
	}
	ok(same && sync_size > 100000, "-z on the writer's thread: the same %zu bytes as without it (or, %u blocks "
	   "raw, the same events)", sync_size, nb[0]);
	free(sb);
	free(ab);
	lseek(afd, 0, SEEK_SET);
	int aerr = 0;
	uint64_t alast = 0;
	ok(count_events(afd, &aerr, &alast) == 100000 && aerr == 0 && alast == 0xabc0 + 99999,
	   "-z on the writer's thread: every event read back, in order");
	close(sfd);
	close(afd);
}

int main(void)
{
	test_types();
	test_checksum();
	test_layout();
	test_text_events();
	test_limits();
	test_number_writers();
	test_line_cut();
	test_type_definitions();
	test_roles();
	test_round_trip();
	test_compressors();
	test_packing();
	test_damage();
	test_compact();
	test_coded_stream();
	test_coded_stream_compressed();
	test_header_text();
	test_not_a_trace_and_concatenated();
	test_skip();
	test_several_inputs();
	test_async_writer();
	return tap_done();
}

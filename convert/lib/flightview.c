/* flightview.c - a live flight recording's rings, read in place (flightview.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../../capture/shm.h"
#include "../../formats/ptt_trace.h"
#include "flightview.h"

/* What the view knows of a ring: its owner, and the position read up to. */
struct fring {
	uint64_t pos, first;
	uint64_t last_ts;        /* the time of its last record taken */
	uint32_t pid, tid;
	int known;
};

/* A thread's records overwritten before a sweep read them: told as the recorder tells lost events
 * (rec_lost: its thread, count 0, unknown, and the stretch), so that the model forgets what the
 * thread held and waited for there rather than keep a hold whose release it never saw. */
#define NOTE_WORDS (PTT_REC_HDR_WORDS + 7 + 1)

/* A record of a sweep's copy: its time, place, and words (in the copy). */
struct vrec {
	uint64_t ts, at; /* at: its position in its ring */
	uint32_t tid, ring, seq;
	const uint32_t *w;
	int note;        /* a rec_lost of ours (lost_note): never held back nor late */
};

struct flightview {
	const struct ptt_shm *s;
	void *map;
	size_t map_len;
	int out;                 /* the view's trace, a memory file */
	struct ptt_writer *w;
	uint64_t hz, slack;
	struct fring *rings;     /* max_rings */
	uint64_t cut;            /* records stamped before it were written (the previous sweep's cut) */
	uint32_t types_seen;
	int ended, started;     /* started: the first sweep is done */
	struct flightview_counts c;
	uint32_t **copies;       /* a sweep's copies, per ring */
	uint32_t (*notes)[NOTE_WORDS]; /* a sweep's rec_lost records, per ring */
	pid_t rec;
	struct vrec *recs;
	size_t nrecs, cap;
};

static uint64_t view_ticks(const struct flightview *v)
{
	if (v->s->use_tsc)
		return ptt_rdtsc();
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t ns_of(const struct flightview *v, uint64_t ticks)
{
	uint64_t d = ticks > v->s->start_ticks ? ticks - v->s->start_ticks : 0;
	return (uint64_t)((long double)d * 1e9L / (long double)v->hz);
}

/* The time-stamp counter's rate against CLOCK_MONOTONIC, over 50 ms (the recorder's own is not in the memory). */
static uint64_t calibrate(const struct flightview *v)
{
	if (!v->s->use_tsc)
		return 1000000000u;
	struct timespec a, b, nap = { 0, 50000000 };
	clock_gettime(CLOCK_MONOTONIC, &a);
	uint64_t t0 = ptt_rdtsc();
	nanosleep(&nap, NULL);
	clock_gettime(CLOCK_MONOTONIC, &b);
	uint64_t t1 = ptt_rdtsc();
	double s = (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9;
	return s > 0 ? (uint64_t)((double)(t1 - t0) / s) : 0;
}

/* The recorder's memory file, open read-only from its /proc fd: its descriptor, or -1 (err set). */
static int open_rings(pid_t rec, char *err, size_t err_size)
{
	char dir[64];
	snprintf(dir, sizeof dir, "/proc/%d/fd", (int)rec);
	DIR *d = opendir(dir);
	if (!d) {
		snprintf(err, err_size, "%s: %s", dir, strerror(errno));
		return -1;
	}
	struct dirent *de;
	int fd = -1, why = ENOENT;
	while (fd < 0 && (de = readdir(d))) {
		char link[384], target[256];
		snprintf(link, sizeof link, "%s/%.255s", dir, de->d_name);
		ssize_t k = readlink(link, target, sizeof target - 1);
		if (k <= 0)
			continue;
		target[k] = 0;
		if (strncmp(target, "/memfd:ptt-ring", 15) != 0)
			continue;
		if ((fd = open(link, O_RDONLY | O_CLOEXEC)) < 0)
			why = errno;
	}
	closedir(d);
	if (fd < 0)
		snprintf(err, err_size, "%s: the recorder's rings (memfd ptt-ring): %s", dir, strerror(why));
	return fd;
}

/* The program's user types announced since the last call, as META lines. */
static int sync_types(struct flightview *v)
{
	uint32_t n = __atomic_load_n(&v->s->ntypes, __ATOMIC_ACQUIRE);
	char buf[4096];
	size_t len = 0;
	if (n > PTT_MAX_USER_TYPES)
		n = PTT_MAX_USER_TYPES;
	while (v->types_seen < n && __atomic_load_n(&v->s->types[v->types_seen].ready, __ATOMIC_ACQUIRE) &&
	       len < sizeof buf - 512) {
		const struct ptt_shm_type *st = &v->s->types[v->types_seen++];
		struct ptt_type t = { .id = st->id, .cls = PTT_CLASS_USER, .level = st->level, .source = PTT_SRC_PROGRAM };
		snprintf(t.name, sizeof t.name, "%.47s", st->name);
		if (ptt_type_parse_args(&t, st->args) == 0) {
			len += ptt_text_format_type(&t, buf + len, sizeof buf - len);
			buf[len++] = '\n';
		}
	}
	return len ? ptt_writer_meta(v->w, buf, len) : 0;
}

/* The view's header: the recording's clock (calibrated here), its program, the built-in types. */
static int header(struct flightview *v, pid_t rec)
{
	struct timespec rt;
	clock_gettime(CLOCK_REALTIME, &rt);
	uint64_t now = view_ticks(v), real = (uint64_t)rt.tv_sec * 1000000000u + (uint64_t)rt.tv_nsec;
	uint64_t since = ns_of(v, now);
	size_t size = 64 * 1024, n = 0;
	char *h = malloc(size), cmd[4096] = "", f[64];
	if (!h)
		return PTT_E_NOMEM;
	uint32_t pid = v->s->handshake;
	snprintf(f, sizeof f, "/proc/%u/cmdline", pid);
	int fd = open(f, O_RDONLY | O_CLOEXEC);
	ssize_t k = fd >= 0 ? read(fd, cmd, sizeof cmd - 1) : 0;
	if (fd >= 0)
		close(fd);
	n += (size_t)snprintf(h, size,
			      "clock %s\nclock_hz %" PRIu64 "\nstart_ticks %" PRIu64 "\nrealtime_ns %" PRIu64 "\npid %u\n"
			      "recorder ptt-top (the flight rings of ptt-record %d, read in place)\nmode flight\nflight 0\n"
			      "level %u\ncmdline",
			      v->s->use_tsc ? "tsc" : "monotonic", v->hz, v->s->start_ticks, real > since ? real - since : 0,
			      pid, (int)rec, v->s->level);
	for (ssize_t i = 0; i < k && n + 1 < size / 2; i += (ssize_t)strlen(cmd + i) + 1) {
		h[n++] = ' ';
		n += ptt_text_quote(cmd + i, h + n, size / 2 - n);
	}
	h[n++] = '\n';
	for (unsigned id = 0; id < PTT_EV_BUILTIN_COUNT && n < size - 512; id++) {
		n += ptt_text_format_type(ptt_builtin_type(id), h + n, size - n);
		h[n++] = '\n';
	}
	int rc = ptt_writer_meta(v->w, h, n);
	free(h);
	return rc ? rc : sync_types(v);
}

static int by_time(const void *a, const void *b)
{
	const struct vrec *x = a, *y = b;
	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if (x->ring != y->ring)
		return x->ring < y->ring ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int add_rec(struct flightview *v, const uint32_t *w, uint64_t at, uint32_t ring, uint32_t seq)
{
	if (PTT_GROW(v->recs, &v->cap, v->nrecs + 1) != 0)
		return PTT_E_NOMEM;
	v->recs[v->nrecs++] = (struct vrec){ ptt_rec_ticks(w), at, ptt_rec_tid(w), ring, seq, w, 0 };
	return 0;
}

/* The names and stacks logs' records stamped before `before`: the names in force where the view starts. */
static int log_records(struct flightview *v, const struct ptt_shm_log *log, const uint32_t *words, uint32_t cap,
		       uint64_t before)
{
	uint64_t used = __atomic_load_n(&log->used, __ATOMIC_ACQUIRE), pos = 0;
	if (used > cap)
		used = cap;
	const uint32_t *rec;
	uint32_t n;
	while ((rec = ptt_log_next(words, used, &pos, &n))) /* up to one still being written */
		if (ptt_rec_sound(rec, n) && ptt_rec_ticks(rec) < before &&
		    add_rec(v, rec, 0, UINT32_MAX, (uint32_t)(rec - words)))
			return PTT_E_NOMEM;
	return 0;
}

/* A rec_lost record at w (NOTE_WORDS), stamped ts: count events (0: not known) of thread tid lost
 * between the times from and to (ticks). */
static void put_lost(const struct flightview *v, uint32_t *w, uint64_t ts, uint32_t tid, uint64_t count, uint64_t from,
		     uint64_t to)
{
	ptt_rec_put_header(w, ptt_rec_word0(PTT_EV_REC_LOST, NOTE_WORDS), ts, (uint32_t)v->rec, (uint32_t)v->rec);
	uint32_t *a = w + PTT_REC_HDR_WORDS;
	a[0] = tid;
	ptt_put64(a + 1, count);
	ptt_put64(a + 3, ns_of(v, from));
	ptt_put64(a + 5, ns_of(v, to));
	ptt_rec_seal(w, NOTE_WORDS);
}

/*
 * Ring i's owner overwrote records the view had not read, between its last record taken and the
 * record at time after (UINT64_MAX: none this sweep): a rec_lost record, stamped just before after.
 */
static int lost_note(struct flightview *v, uint32_t i, const struct fring *fr, uint64_t after)
{
	uint64_t ts = after != UINT64_MAX && after > 0 ? after - 1 : fr->last_ts + 1 > v->cut ? fr->last_ts + 1 : v->cut;
	uint64_t to = after != UINT64_MAX ? after - 1 : ts;
	if (ts < fr->last_ts)
		ts = fr->last_ts;
	uint32_t *w = v->notes[i];
	put_lost(v, w, ts, fr->tid, 0, fr->last_ts, to); /* how many records: not known */
	if (add_rec(v, w, 0, i, UINT32_MAX))
		return PTT_E_NOMEM;
	v->recs[v->nrecs - 1].note = 1;
	return 0;
}

/*
 * A record of ring i stamped before the last sweep's cut (its writer was preempted between its
 * clock and its record, across a sweep): the view has written past its time, so it is told as a
 * loss of one record of its thread at the cut, as the recorder tells lost events, and the model
 * forgets what the thread held and waited for rather than miss the release it carried.
 */
static int late_note(struct flightview *v, const struct vrec *r)
{
	uint32_t w[NOTE_WORDS];
	put_lost(v, w, v->cut, r->tid, 1, r->ts, r->ts);
	return ptt_writer_record(v->w, w, NOTE_WORDS);
}

/*
 * Ring i's records since the view's position, copied, then checked against
 * `consumed` read again: the part its owner may have overwritten meanwhile
 * is left out (counted), the rest kept while checksums hold.  *bound: no
 * later record of the ring is older (the cut, or its last record when its
 * owner is inside one).
 */
static int read_ring(struct flightview *v, uint32_t i, uint64_t cut, int last, uint64_t *bound)
{
	const struct ptt_shm *s = v->s;
	const struct ptt_ring *r = &s->rings[i];
	struct fring *fr = &v->rings[i];
	uint32_t size = s->ring_words;
	const uint32_t *data = (const uint32_t *)((const char *)s + s->ring_offset) + (uint64_t)i * size;
	*bound = UINT64_MAX;
	uint32_t st = __atomic_load_n(&r->state, __ATOMIC_ACQUIRE);
	if (st != PTT_RING_ACTIVE && st != PTT_RING_CLOSED)
		return 0;
	uint64_t first = __atomic_load_n(&r->first, __ATOMIC_ACQUIRE);
	uint32_t pid = r->pid, tid = r->tid;
	if (!fr->known || fr->first != first || fr->pid != pid || fr->tid != tid) { /* a new owner */
		*fr = (struct fring){ first, first, 0, pid, tid, 1 };
	}
	uint64_t c0 = __atomic_load_n(&r->consumed, __ATOMIC_ACQUIRE), end = __atomic_load_n(&r->committed, __ATOMIC_ACQUIRE);
	uint64_t reserved = __atomic_load_n(&r->reserved, __ATOMIC_ACQUIRE);
	int busy = !last && reserved != end && st == PTT_RING_ACTIVE;
	if (!busy && !last)
		*bound = cut;
	uint64_t from = fr->pos > c0 ? fr->pos : c0;
	uint64_t gap = 0; /* words of the ring overwritten before they were read */
	if (c0 > fr->pos && v->started) /* at the view's start, what was overwritten before is no loss of it */
		gap += c0 - fr->pos;
	fr->pos = from;
	if (end <= from || end - from > size) {
		v->c.overwritten += gap;
		return gap ? lost_note(v, i, fr, UINT64_MAX) : 0;
	}
	uint32_t *copy = malloc((end - from) * 4);
	if (!copy)
		return PTT_E_NOMEM;
	ptt_ring_copy(copy, data, size, from, end);
	__atomic_thread_fence(__ATOMIC_SEQ_CST); /* as the snapshot (flight.c): pairs with the owner's fence */
	uint64_t c1 = __atomic_load_n(&r->consumed, __ATOMIC_ACQUIRE), pos = from;
	v->copies[i] = copy;
	if (c1 > from) {
		gap += (c1 < end ? c1 : end) - from;
		pos = c1;
	}
	v->c.overwritten += gap;
	size_t gap_at = v->nrecs;
	uint32_t seq = 0;
	uint64_t lastts = 0;
	while (pos < end) {
		uint32_t off = (uint32_t)pos & (size - 1);
		const uint32_t *p = copy + (pos - from);
		if (p[0] == ptt_rec_word0(PTT_EV_PAD, 0)) {
			pos += size - off;
			continue;
		}
		uint32_t n = ptt_ring_rec_len(p, pos, end, size, pid, tid);
		if (!n || !ptt_rec_sound(p, n)) {
			v->c.torn++;
			break;
		}
		if (add_rec(v, p, pos, i, seq++))
			return PTT_E_NOMEM;
		lastts = ptt_rec_ticks(p);
		pos += n;
	}
	if (gap && lost_note(v, i, fr, v->nrecs > gap_at ? v->recs[gap_at].ts : UINT64_MAX))
		return PTT_E_NOMEM;
	if (seq)
		fr->last_ts = lastts;
	fr->pos = end; /* moved back by the sweep to the first record it leaves for the next */
	if (busy && seq)
		*bound = lastts;
	else if (busy)
		*bound = cut; /* nothing of it this time: its record in the works comes after the cut's slack */
	return 0;
}

static void free_copies(struct flightview *v)
{
	for (uint32_t i = 0; i < v->s->max_rings; i++) {
		free(v->copies[i]);
		v->copies[i] = NULL;
	}
	v->nrecs = 0;
}

/* One sweep; first: the view's start (names from the logs, ring records from v->c.from_ticks). */
static int sweep(struct flightview *v, int first, int last, int whole)
{
	const struct ptt_shm *s = v->s;
	uint64_t cut = view_ticks(v);
	if (!last) { /* every record stamped before the cut is committed by now, or its writer is inside it */
		struct timespec nap = { 0, 200000 };
		nanosleep(&nap, NULL);
	}
	uint32_t n = __atomic_load_n(&s->rings_used, __ATOMIC_ACQUIRE);
	if (n > s->max_rings)
		n = s->max_rings;
	uint64_t upto = UINT64_MAX;
	int rc = 0;
	for (uint32_t i = 0; !rc && i < n; i++) {
		uint64_t b;
		size_t before = v->nrecs;
		rc = read_ring(v, i, cut, last, &b);
		if (b < upto)
			upto = b;
		/* -a: where every ring's history is whole, the latest first record of a ring that turned over */
		if (first && whole && v->nrecs > before && v->recs[before].at != v->rings[i].first &&
		    v->recs[before].ts > v->c.from_ticks)
			v->c.from_ticks = v->recs[before].ts;
	}
	if (first) {
		v->c.from_ns = ns_of(v, v->c.from_ticks);
		if (!rc)
			rc = log_records(v, &s->names_log, s->names, PTT_NAMES_WORDS, v->c.from_ticks);
		if (!rc)
			rc = log_records(v, &s->stacks_log, s->stack_recs, PTT_STACKS_WORDS, v->c.from_ticks);
	}
	if (!rc)
		rc = sync_types(v);
	if (rc) {
		free_copies(v);
		return rc;
	}
	qsort(v->recs, v->nrecs, sizeof *v->recs, by_time);
	long wrote = 0;
	for (size_t k = 0; !rc && k < v->nrecs; k++) {
		const struct vrec *r = &v->recs[k];
		int from_log = r->ring == UINT32_MAX;
		if (r->ts > upto && !r->note) { /* for the next sweep: its ring is read again from here */
			if (!from_log && r->at < v->rings[r->ring].pos)
				v->rings[r->ring].pos = r->at;
			continue;
		}
		if (!from_log && first && r->ts < v->c.from_ticks)
			continue; /* before the view's start: its names are in the logs */
		if (!from_log && !first && r->ts < v->cut && !r->note) {
			v->c.late++;
			rc = late_note(v, r);
			continue;
		}
		if (r->note) { /* in the order written: within this sweep's cut, not before the last one's */
			uint64_t ts = upto != UINT64_MAX && r->ts > upto ? upto : r->ts;
			uint32_t *w = v->notes[r->ring];
			if (ts < v->cut)
				ts = v->cut;
			w[1] = (uint32_t)ts;
			w[2] = (uint32_t)(ts >> 32);
			ptt_rec_seal(w, NOTE_WORDS);
		}
		rc = ptt_writer_record(v->w, r->w, ptt_rec_len(r->w[0]));
		wrote++;
		v->c.records += !from_log && !r->note;
	}
	if (upto != UINT64_MAX && upto > v->cut)
		v->cut = upto;
	v->started = 1;
	free_copies(v);
	if (!rc && last) {
		char end[128];
		int len = snprintf(end, sizeof end, "end_ticks %" PRIu64 "\nevents %" PRIu64 "\nlost 0\n", view_ticks(v),
				   v->c.records);
		rc = ptt_writer_end(v->w, end, (size_t)len);
		v->ended = 1;
	} else if (!rc)
		rc = ptt_writer_flush(v->w);
	return rc ? rc : wrote > 0;
}

struct flightview *flightview_open(pid_t rec, int whole, uint64_t back_ns, char *path, size_t path_size, char *err,
				   size_t err_size)
{
	int fd = open_rings(rec, err, err_size);
	if (fd < 0)
		return NULL;
	struct stat sb;
	struct flightview *v = calloc(1, sizeof *v);
	void *map = MAP_FAILED;
	const struct ptt_shm *s = NULL;
	if (v && fstat(fd, &sb) == 0 && sb.st_size >= (off_t)sizeof *s)
		map = mmap(NULL, (size_t)sb.st_size, PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	if (map != MAP_FAILED) {
		s = map;
		if (s->magic != PTT_SHM_MAGIC || s->version != PTT_SHM_VERSION || !(s->flags & PTT_SHM_FLIGHT) ||
		    ptt_shm_file_bytes(s) > (uint64_t)sb.st_size || s->ring_words & (s->ring_words - 1)) {
			snprintf(err, err_size, "the recorder's rings are not of this ptt (memory layout %u, ptt-top's %u)",
				 s->version, PTT_SHM_VERSION);
			munmap(map, (size_t)sb.st_size);
			free(v);
			return NULL;
		}
	} else {
		snprintf(err, err_size, "the recorder's rings: %s", v ? strerror(errno) : "out of memory");
		free(v);
		return NULL;
	}
	v->s = s;
	v->map = map;
	v->map_len = (size_t)sb.st_size;
	v->out = memfd_create("ptt-top-flight", MFD_CLOEXEC);
	v->rings = calloc(s->max_rings, sizeof *v->rings);
	v->copies = calloc(s->max_rings, sizeof *v->copies);
	v->notes = calloc(s->max_rings, sizeof *v->notes);
	v->rec = rec;
	v->hz = calibrate(v);
	v->slack = v->hz / 5000;
	if (v->out < 0 || !v->rings || !v->copies || !v->notes || !v->hz || ptt_writer_open(&v->w, v->out, 0) != 0 ||
	    header(v, rec) != 0) {
		snprintf(err, err_size, "the view of the rings: %s", v->out < 0 ? strerror(errno) : "cannot start it");
		flightview_close(v);
		return NULL;
	}
	uint64_t now = view_ticks(v), back = (uint64_t)((long double)back_ns * v->hz / 1e9L);
	v->c.from_ticks = whole ? s->start_ticks : now > back ? now - back : 0;
	if (sweep(v, 1, 0, whole) < 0) {
		snprintf(err, err_size, "the view of the rings: cannot write it");
		flightview_close(v);
		return NULL;
	}
	snprintf(path, path_size, "/proc/self/fd/%d", v->out);
	return v;
}

int flightview_sweep(struct flightview *v, int last)
{
	if (v->ended)
		return 0;
	return sweep(v, 0, last, 0);
}

void flightview_read_to(struct flightview *v, uint64_t offset)
{
	offset &= ~(uint64_t)4095;
	if (offset)
		fallocate(v->out, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0, (off_t)offset);
}

const struct flightview_counts *flightview_counts(const struct flightview *v) { return &v->c; }

void flightview_close(struct flightview *v)
{
	if (!v)
		return;
	if (v->w)
		ptt_writer_close(v->w);
	if (v->out >= 0)
		close(v->out);
	if (v->copies)
		free_copies(v);
	if (v->map)
		munmap(v->map, v->map_len);
	free(v->copies);
	free(v->notes);
	free(v->rings);
	free(v->recs);
	free(v);
}

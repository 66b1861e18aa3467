/* fidelity.c - ptt-dump --check: the model's anomalies as sentences (the rules are in model.h);
 * and what a trace cannot show (a JVM, a Go program), said the same way by every tool. */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fidelity.h"
#include "model.h"
#include "symbols.h"

/* A thread's use of an object: when it first and last touched it, and whether it holds it by its own records. */
struct touch {
	uint64_t first, last;
	int held;
};

struct fidelity {
	struct manomaly last;  /* the anomaly of the event the model took last */
	int have;
	unsigned long violations;
	struct ptt_map touches;   /* ptt_obj_key(tid, object) -> struct touch */
	struct fidelity_culprit culprit; /* of the last violation */
};

static void on_anomaly(void *ctx, const struct ptt_event *ev, const struct manomaly *a)
{
	struct fidelity *f = ctx;
	(void)ev;
	f->last = *a;
	f->have = 1;
}

struct fidelity *fidelity_new(struct model *m)
{
	struct fidelity *f = calloc(1, sizeof *f);
	if (!f)
		return NULL;
	struct model_ops ops = { .ctx = f, .anomaly = on_anomaly };
	model_observe(m, &ops);
	return f;
}

unsigned long fidelity_violations(const struct fidelity *f) { return f->violations; }

void fidelity_free(struct fidelity *f)
{
	if (!f)
		return;
	ptt_map_free_with(&f->touches, free);
	free(f);
}

/* tid touched obj at ns; held: 1 took it, 0 gave it up, -1 neither (fidelity.h: loss). */
static void touch(struct fidelity *f, uint32_t tid, uint64_t obj, uint64_t ns, int held)
{
	if (!obj)
		return;
	uint64_t k = ptt_obj_key(tid, obj);
	struct touch *t = ptt_map_get(&f->touches, k);
	if (!t) {
		t = calloc(1, sizeof *t);
		if (!t || ptt_map_put(&f->touches, k, t)) {
			free(t);
			return; /* memory is short: a violation on obj is judged by the other rules only */
		}
		t->first = ns;
	}
	t->last = ns;
	if (held >= 0)
		t->held = held;
}

/* The objects ev's thread touches, and whether it takes or gives them up, by role. */
static void touches_of(struct fidelity *f, const struct ptt_event *ev)
{
	const struct ptt_type *ty = ev->type;
	if (!ty || ty->source != PTT_SRC_PTHREAD || !ty->nargs || ty->argkind[0] != PTT_ARG_PTR)
		return;
	int64_t ret = (int64_t)ptt_event_argn(ev, PTT_ARGNAME_RET, 0);
	uint64_t obj = ev->arg[0], mutex = ty->cls == PTT_CLASS_COND ? ptt_event_argn(ev, PTT_ARGNAME_MUTEX, 0) : 0;
	switch (ty->role) {
	case PTT_ROLE_ACQUIRE: case PTT_ROLE_SHARED: case PTT_ROLE_TRY: case PTT_ROLE_TRY_SHARED:
		touch(f, ev->tid, obj, ev->ns, ret == 0 || ret == EOWNERDEAD ? 1 : -1);
		break;
	case PTT_ROLE_RELEASE:
		touch(f, ev->tid, obj, ev->ns, ret == 0 ? 0 : -1);
		break;
	case PTT_ROLE_REQUEST: case PTT_ROLE_REQUEST_SHARED: case PTT_ROLE_WAIT_END:
		touch(f, ev->tid, obj, ev->ns, -1);
		touch(f, ev->tid, mutex, ev->ns, ty->role == PTT_ROLE_WAIT_END); /* a cond wait gives it up, then takes it */
		break;
	case PTT_ROLE_POST: case PTT_ROLE_INIT: case PTT_ROLE_DESTROY:
		touch(f, ev->tid, obj, ev->ns, -1);
		break;
	default:
		break;
	}
}

int fidelity_loss_explains(const struct fidelity *f, const struct loss *l, const struct fidelity_culprit *c)
{
	size_t n;
	const struct loss_span *v = loss_spans(l, &n);
	for (size_t i = 0; i < n; i++) {
		const struct loss_span *s = &v[i];
		if ((!s->count && !s->from_ns) || s->from_ns > c->ns)
			continue; /* the cut before a trace's start (the model knows it starts mid-run), or a loss after it */
		if (!s->tid || s->tid == c->tid || (c->other && s->tid == c->other))
			return 1;
		const struct touch *t = c->obj ? ptt_map_get(&f->touches, ptt_obj_key(s->tid, c->obj)) : NULL;
		if (t && t->first <= s->to_ns && (t->last >= s->from_ns || t->held))
			return 1;
	}
	return 0;
}

void fidelity_last_culprit(const struct fidelity *f, struct fidelity_culprit *c) { *c = f->culprit; }

/* "0xADDR (NAME)" by the one rule of object names (symbols.h), or "0xADDR" */
static const char *objname(struct ptt_syms *syms, uint32_t pid, uint64_t addr, char *buf, size_t size)
{
	char given[PTT_MAX_STR];
	const char *s = syms ? ptt_syms_object_known_name(syms, pid, addr, given, sizeof given) : "";
	if (*s)
		snprintf(buf, size, "0x%" PRIx64 " (%s)", addr, s);
	else
		snprintf(buf, size, "0x%" PRIx64, addr);
	return buf;
}

/* The anomaly a, in words. */
static void describe(const struct manomaly *a, struct ptt_syms *syms, uint32_t pid, char *what, size_t size)
{
	char o[128];
	switch (a->kind) {
	case MA_NO_PROCESS_BEGIN:
		snprintf(what, size, "first event of a process that never began (no process_begin)");
		break;
	case MA_UNANNOUNCED_THREAD:
		snprintf(what, size, "thread begins before any thread_create announced it");
		break;
	case MA_TAKEN_WHILE_HELD:
		snprintf(what, size, "%s acquired while held by thread %" PRIu32, objname(syms, pid, a->obj, o, sizeof o), a->other);
		break;
	case MA_WRITE_WHILE_READ:
		snprintf(what, size, "%s write-locked while %" PRIu32 " readers hold it", objname(syms, pid, a->obj, o, sizeof o), a->count);
		break;
	case MA_READ_WHILE_WRITTEN:
		snprintf(what, size, "%s read-locked while thread %" PRIu32 " write-holds it", objname(syms, pid, a->obj, o, sizeof o),
			 a->other);
		break;
	case MA_RELEASE_NOT_HELD:
		if (a->other)
			snprintf(what, size, "%s released by a thread that does not hold it (holder: thread %" PRIu32 ")",
				 objname(syms, pid, a->obj, o, sizeof o), a->other);
		else
			snprintf(what, size, "%s released by a thread that does not hold it (it is free)",
				 objname(syms, pid, a->obj, o, sizeof o));
		break;
	case MA_COND_KEPT_MUTEX:
		snprintf(what, size, "condition wait ended holding %s, which it never released", objname(syms, pid, a->obj, o, sizeof o));
		break;
	}
}

int fidelity_add(struct fidelity *f, const struct ptt_event *ev, struct ptt_syms *syms, char *msg, size_t size)
{
	touches_of(f, ev);
	if (!f->have)
		return 0;
	f->have = 0;
	f->culprit = (struct fidelity_culprit){ ev->ns, f->last.obj, ev->tid, f->last.other };
	if (f->last.kind == MA_UNANNOUNCED_THREAD) /* its parent's thread_create may be among the lost */
		f->culprit.other = (uint32_t)ptt_event_argn(ev, PTT_ARGNAME_PARENT, 0);
	char what[512];
	describe(&f->last, syms, ev->pid, what, sizeof what);
	f->violations++;
	snprintf(msg, size, "%" PRIu64 ".%09" PRIu64 " pid %" PRIu32 " tid %" PRIu32 " %s: %s",
		 ev->ns / 1000000000u, ev->ns % 1000000000u, ev->pid, ev->tid, ev->type->name, what);
	return 1;
}

/* ---- loss (fidelity.h) ---- */

#define MAX_SPANS 4096 /* beyond: merged into the last one of the same thread, or counted only */

struct loss {
	struct loss_span *v;
	size_t n, cap;
	uint64_t events;         /* known lost */
	uint64_t first_ns, last_ns;
	int any;
};

struct loss *loss_new(void) { return calloc(1, sizeof(struct loss)); }

void loss_free(struct loss *l)
{
	if (!l)
		return;
	free(l->v);
	free(l);
}

static void add_span(struct loss *l, uint32_t tid, uint64_t from, uint64_t to, uint64_t count, const char *why)
{
	l->events += count;
	for (size_t i = l->n; i-- > 0 && l->n - i <= 8;) { /* the same thread and cause, overlapping or adjacent: one */
		struct loss_span *s = &l->v[i];
		if (s->tid == tid && s->why == why && from <= s->to_ns && to >= s->from_ns) {
			s->from_ns = from < s->from_ns ? from : s->from_ns;
			s->to_ns = to > s->to_ns ? to : s->to_ns;
			s->count += count;
			return;
		}
	}
	if (l->n == l->cap) {
		if (l->cap >= MAX_SPANS) { /* widen the last one: less precise, never less true */
			struct loss_span *s = &l->v[l->n - 1];
			s->tid = s->tid == tid ? tid : 0;
			s->from_ns = from < s->from_ns ? from : s->from_ns;
			s->to_ns = to > s->to_ns ? to : s->to_ns;
			s->count += count;
			return;
		}
		if (PTT_GROW(l->v, &l->cap, l->n + 1) != 0)
			return;
	}
	l->v[l->n++] = (struct loss_span){ tid, from, to, count, why };
}

void loss_event(struct loss *l, const struct ptt_event *ev)
{
	if (!l)
		return;
	if (!l->any)
		l->first_ns = ev->ns;
	l->any = 1;
	l->last_ns = ev->ns;
	if (ev->id != PTT_EV_REC_LOST)
		return;
	uint64_t n = ptt_event_argn(ev, PTT_ARGNAME_COUNT, 0), from = ptt_event_argn(ev, PTT_ARGNAME_FROM_NS, 0), to = ptt_event_argn(ev, PTT_ARGNAME_TO_NS, 0);
	if (!to) /* no times (a record torn by a death, a thread without a ring): any time before the note */
		from = 0, to = ev->ns;
	add_span(l, (uint32_t)ptt_event_argn(ev, PTT_ARGNAME_STREAM, 0), from, to, n,
		 ptt_event_argn(ev, PTT_ARGNAME_STREAM, 0) ? "lost by the recorder" : "lost by the recorder (no ring)");
}

void loss_damage(struct loss *l, uint64_t from_ns, uint64_t to_ns)
{
	if (l)
		add_span(l, 0, from_ns, to_ns, 0, to_ns == UINT64_MAX ? "cut short or damaged at its end" : "damaged or missing input");
}

void loss_finish(struct loss *l, const struct ptt_reader *r)
{
	if (!l || !r)
		return;
	int continued = 0;
	long first_part = 0;
	for (size_t i = 0; i < ptt_reader_meta_count(r); i++) {
		const char *m = ptt_reader_meta_line(r, i);
		unsigned pid, tid;
		unsigned long long ns;
		char how[16];
		if (strncmp(m, "continued ", 10) == 0)
			continued = 1;
		else if (strncmp(m, "part ", 5) == 0 && !continued && !first_part) /* the first input's part number */
			first_part = atol(m + 5);
		else if (sscanf(m, "flight_thread %u %u %llu %15s", &pid, &tid, &ns, how) == 4 && strcmp(how, "cut") == 0)
			add_span(l, tid, 0, ns, 0, "flight recording: overwritten before");
	}
	/* a trace cut short is the reader's damage at its end (loss_damage up to UINT64_MAX) */
	if (l->any && first_part > 1)
		add_span(l, 0, 0, l->first_ns, 0, "starts mid-run: the parts before are not read");
	/* a --streams part without the part before: that part's last events of any thread may come after
	 * this part's first ones (its streams were cut where each copy stood), unseen: from there on,
	 * what those events could explain is not verified */
	uint64_t first = l->first_ns ? l->first_ns : 1, to = ptt_reader_part_overlap_to(r), next = ptt_reader_part_overlap_next(r);
	if (l->any && to)
		add_span(l, 0, first, to > first ? to : first, 0,
			 "a --streams part read without the part before it, which may hold later events of any thread");
	if (l->any && next != UINT64_MAX)
		add_span(l, 0, next > first ? next : first, UINT64_MAX, 0,
			 "a --streams part read without the part after it, which may hold earlier events of any thread");
}

int loss_covers(const struct loss *l, uint32_t tid, uint64_t from_ns, uint64_t to_ns)
{
	for (size_t i = 0; l && i < l->n; i++) {
		const struct loss_span *s = &l->v[i];
		if ((!s->tid || !tid || s->tid == tid) && s->from_ns <= to_ns && s->to_ns >= from_ns)
			return 1;
	}
	return 0;
}

const struct loss_span *loss_spans(const struct loss *l, size_t *n)
{
	*n = l ? l->n : 0;
	return l ? l->v : NULL;
}

uint64_t loss_events(const struct loss *l) { return l ? l->events : 0; }

static void span_time(char *buf, size_t size, uint64_t ns)
{
	if (ns == UINT64_MAX)
		snprintf(buf, size, "the end");
	else
		snprintf(buf, size, "%" PRIu64 ".%09" PRIu64 " s", ns / 1000000000u, ns % 1000000000u);
}

int loss_print(const struct loss *l, FILE *out)
{
	if (!l || !l->n)
		return 0;
	if (l->events)
		fprintf(out, "loss: %" PRIu64 " event%s known lost, in %zu stretch%s where findings cannot be verified:\n",
			l->events, l->events > 1 ? "s" : "", l->n, l->n > 1 ? "es" : "");
	else
		fprintf(out, "loss: events may be missing in %zu stretch%s where findings cannot be verified:\n", l->n,
			l->n > 1 ? "es" : "");
	size_t shown = l->n < 10 ? l->n : 10;
	for (size_t i = 0; i < shown; i++) {
		const struct loss_span *s = &l->v[i];
		char a[48], b[48], who[48], count[48] = "";
		span_time(a, sizeof a, s->from_ns);
		span_time(b, sizeof b, s->to_ns);
		if (s->tid)
			snprintf(who, sizeof who, "thread %" PRIu32, s->tid);
		else
			snprintf(who, sizeof who, "any thread");
		if (s->count)
			snprintf(count, sizeof count, "%" PRIu64 " event%s, ", s->count, s->count > 1 ? "s" : "");
		fprintf(out, "  %s, %s to %s: %s%s\n", who, s->from_ns ? a : "the start", b, count, s->why);
	}
	if (shown < l->n)
		fprintf(out, "  (%zu more stretches)\n", l->n - shown);
	return 1;
}

int loss_note(const struct loss *l, const char *prog, const char *name, FILE *err)
{
	if (!l || !l->events)
		return 0;
	size_t stretches = 0, shown = 0;
	char threads[160] = "";
	size_t len = 0;
	for (size_t i = 0; i < l->n; i++) {
		const struct loss_span *s = &l->v[i];
		if (!s->count)
			continue;
		stretches++;
		int seen = 0;
		for (size_t k = 0; k < i && !seen; k++)
			seen = l->v[k].count && l->v[k].tid == s->tid;
		if (seen)
			continue;
		if (shown++ == 8) {
			len += (size_t)snprintf(threads + len, sizeof threads - len, ", ...");
			continue;
		}
		if (shown > 8)
			continue;
		if (s->tid)
			len += (size_t)snprintf(threads + len, sizeof threads - len, "%s%" PRIu32, shown > 1 ? ", " : "", s->tid);
		else
			len += (size_t)snprintf(threads + len, sizeof threads - len, "%sunknown", shown > 1 ? ", " : "");
		if (len >= sizeof threads)
			len = sizeof threads - 1;
	}
	fprintf(err, "%s: %s: note: %" PRIu64 " event%s lost in %zu stretch%s (thread%s %s): figures there may be short\n", prog,
		name, l->events, l->events > 1 ? "s" : "", stretches, stretches > 1 ? "es" : "", shown > 1 ? "s" : "", threads);
	return 1;
}

/* ---- what the trace cannot show (fidelity.h) ---- */

static int has_section(int fd, const Elf64_Ehdr *eh, const char *want)
{
	if (eh->e_shentsize != sizeof(Elf64_Shdr) || eh->e_shnum == 0 || eh->e_shnum > 4096 || eh->e_shstrndx >= eh->e_shnum)
		return 0;
	Elf64_Shdr str;
	if (pread(fd, &str, sizeof str, (off_t)(eh->e_shoff + (uint64_t)eh->e_shstrndx * sizeof str)) != (ssize_t)sizeof str ||
	    str.sh_size == 0 || str.sh_size > (1u << 20))
		return 0;
	char *names = malloc(str.sh_size + 1);
	if (!names || pread(fd, names, str.sh_size, (off_t)str.sh_offset) != (ssize_t)str.sh_size) {
		free(names);
		return 0;
	}
	names[str.sh_size] = 0;
	int found = 0;
	for (unsigned i = 0; i < eh->e_shnum && !found; i++) {
		Elf64_Shdr sh;
		if (pread(fd, &sh, sizeof sh, (off_t)(eh->e_shoff + (uint64_t)i * sizeof sh)) != (ssize_t)sizeof sh)
			break;
		found = sh.sh_name < str.sh_size && strcmp(names + sh.sh_name, want) == 0;
	}
	free(names);
	return found;
}

int fidelity_elf_is_go(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	Elf64_Ehdr eh;
	int go = pread(fd, &eh, sizeof eh, 0) == (ssize_t)sizeof eh && memcmp(eh.e_ident, ELFMAG, SELFMAG) == 0 &&
		 eh.e_ident[EI_CLASS] == ELFCLASS64 && has_section(fd, &eh, ".note.go.buildid");
	close(fd);
	return go;
}

void fidelity_blind_event(struct fidelity_blind *b, const struct ptt_event *ev)
{
	switch (ev->id) {
	case PTT_EV_REC_START:
		b->recorded = 1;
		break;
	case PTT_EV_PROCESS_BEGIN:
		b->processes = 1;
		break;
	case PTT_EV_MODULE: {
		b->processes = 1;
		const char *base = strrchr(ev->str, '/');
		base = base ? base + 1 : ev->str;
		if (strcmp(base, "libjvm.so") == 0)
			b->jvm = 1;
		if (ev->pid != b->last_pid) { /* a process's first module is its main program */
			b->last_pid = ev->pid;
			if (!b->go && fidelity_elf_is_go(ev->str))
				b->go = 1;
		}
		break;
	}
	case PTT_EV_PY_RUNTIME:
		if (!ptt_event_argn(ev, PTT_ARGNAME_FRAMES, 1) && !b->py_note[0]) {
			uint32_t v = (uint32_t)ptt_event_argn(ev, PTT_ARGNAME_VERSION, 0);
			snprintf(b->py_note, sizeof b->py_note, "note: Python frames not recorded for CPython %u.%u: "
				 "its waits are named in the interpreter", v >> 24, v >> 16 & 0xff);
		}
		break;
	default:
		break;
	}
}

int fidelity_blind_locks(const struct fidelity_blind *b)
{
	return b->jvm || b->go || (b->recorded && !b->processes);
}

const char *fidelity_blind_note(const struct fidelity_blind *b)
{
	if (b->jvm)
		return "note: a JVM ran here (libjvm.so): who holds a Java monitor or a java.util.concurrent lock is out "
		       "of ptt's sight (taken inside the JVM); only a thread parking to enter a monitor is seen";
	if (b->go)
		return "note: a Go program ran here: goroutines synchronise in Go's runtime with futex calls of its own, "
		       "which ptt does not see";
	if (b->recorded && !b->processes)
		return "note: no traced process: the program never loaded libptt.so (statically linked, as Go programs "
		       "without cgo are), so none of its synchronisation was seen";
	if (b->py_note[0])
		return b->py_note;
	return NULL;
}

/* fidelity.c - ptt-dump --check: the model's anomalies as sentences (the rules are in model.h). */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "fidelity.h"
#include "model.h"

struct fidelity {
	struct model *model;
	struct manomaly last;  /* the anomaly of the event being added */
	int have;
	unsigned long violations;
};

static void on_anomaly(void *ctx, const struct ptt_event *ev, const struct manomaly *a)
{
	struct fidelity *f = ctx;
	(void)ev;
	f->last = *a;
	f->have = 1;
}

struct fidelity *fidelity_new(void)
{
	struct fidelity *f = calloc(1, sizeof *f);
	if (!f)
		return NULL;
	struct model_ops ops = { .ctx = f, .anomaly = on_anomaly };
	f->model = model_new(&ops);
	if (!f->model) {
		free(f);
		return NULL;
	}
	return f;
}

unsigned long fidelity_violations(const struct fidelity *f) { return f->violations; }

void fidelity_starts_mid_run(struct fidelity *f, const struct ptt_reader *r) { model_starts_mid_run(f->model, r); }

void fidelity_free(struct fidelity *f)
{
	if (!f)
		return;
	model_free(f->model);
	free(f);
}

static const char *objname(const struct ptt_names *n, uint64_t addr, char *buf, size_t size)
{
	const char *s = n ? ptt_names_object(n, addr) : NULL;
	if (s)
		snprintf(buf, size, "0x%" PRIx64 " (%s)", addr, s);
	else
		snprintf(buf, size, "0x%" PRIx64, addr);
	return buf;
}

/* The anomaly a, in words. */
static void describe(const struct manomaly *a, const struct ptt_names *n, char *what, size_t size)
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
		snprintf(what, size, "%s acquired while held by thread %" PRIu32, objname(n, a->obj, o, sizeof o), a->other);
		break;
	case MA_WRITE_WHILE_READ:
		snprintf(what, size, "%s write-locked while %" PRIu32 " readers hold it", objname(n, a->obj, o, sizeof o), a->count);
		break;
	case MA_READ_WHILE_WRITTEN:
		snprintf(what, size, "%s read-locked while thread %" PRIu32 " write-holds it", objname(n, a->obj, o, sizeof o),
			 a->other);
		break;
	case MA_RELEASE_NOT_HELD:
		if (a->other)
			snprintf(what, size, "%s released by a thread that does not hold it (holder: thread %" PRIu32 ")",
				 objname(n, a->obj, o, sizeof o), a->other);
		else
			snprintf(what, size, "%s released by a thread that does not hold it (it is free)",
				 objname(n, a->obj, o, sizeof o));
		break;
	case MA_COND_KEPT_MUTEX:
		snprintf(what, size, "condition wait ended holding %s, which it never released", objname(n, a->obj, o, sizeof o));
		break;
	}
}

int fidelity_add(struct fidelity *f, const struct ptt_event *ev, const struct ptt_names *n, char *msg, size_t size)
{
	f->have = 0;
	model_event(f->model, ev);
	if (!f->have)
		return 0;
	char what[512];
	describe(&f->last, n, what, sizeof what);
	f->violations++;
	snprintf(msg, size, "%" PRIu64 ".%09" PRIu64 " pid %" PRIu32 " tid %" PRIu32 " %s: %s",
		 ev->ns / 1000000000u, ev->ns % 1000000000u, ev->pid, ev->tid, ev->type->name, what);
	return 1;
}

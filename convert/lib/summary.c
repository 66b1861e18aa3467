/* summary.c - per-thread and per-event counts, lost events, time checks. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "host.h"
#include "summary.h"

struct thread_count {
	uint32_t pid, tid;
	uint64_t events;
	uint64_t first_ns, last_ns;
	uint64_t stall_from; /* 1 + ns of the thread's tracer stall under way, 0 none */
};

struct summary {
	uint64_t events, lost, first_ns, last_ns;
	uint64_t by_id[PTT_MAX_TYPES];
	uint64_t stalls, stall_ns; /* tracer stalls ended, and their time summed over threads */
	struct thread_count *threads;
	size_t nthreads, cap;
	unsigned long order_errors;
	uint64_t last_global_ns;
};

struct summary *summary_new(void)
{
	return calloc(1, sizeof(struct summary));
}

static struct thread_count *thread_of(struct summary *s, uint32_t pid, uint32_t tid)
{
	for (size_t i = s->nthreads; i-- > 0;)
		if (s->threads[i].tid == tid && s->threads[i].pid == pid)
			return &s->threads[i];
	if (PTT_GROW(s->threads, &s->cap, s->nthreads + 1) != 0)
		return NULL;
	struct thread_count *t = &s->threads[s->nthreads++];
	memset(t, 0, sizeof *t);
	t->pid = pid;
	t->tid = tid;
	return t;
}

void summary_add(struct summary *s, const struct ptt_event *ev)
{
	if (s->events == 0)
		s->first_ns = ev->ns;
	if (ev->ns < s->last_global_ns)
		s->order_errors++;
	s->last_global_ns = ev->ns;
	s->last_ns = ev->ns;
	s->events++;
	s->by_id[ev->id]++;
	if (ev->id == PTT_EV_REC_LOST)
		s->lost += ptt_event_argn(ev, PTT_ARGNAME_COUNT, 0);
	struct thread_count *t = thread_of(s, ev->pid, ev->tid);
	if (!t)
		return;
	if (t->events && ev->ns < t->last_ns)
		s->order_errors++;
	if (!t->events)
		t->first_ns = ev->ns;
	t->last_ns = ev->ns;
	t->events++;
	if (ev->id == PTT_EV_TRACER_STALL) {
		t->stall_from = ev->ns + 1;
	} else if (ev->id == PTT_EV_TRACER_STALL_END && t->stall_from) {
		s->stalls++;
		s->stall_ns += ev->ns + 1 - t->stall_from;
		t->stall_from = 0;
	}
}

unsigned long summary_order_errors(const struct summary *s) { return s->order_errors; }

static void print_ns(FILE *out, uint64_t ns)
{
	fprintf(out, "%" PRIu64 ".%09" PRIu64 " s", ns / 1000000000u, ns % 1000000000u);
}

/* "started" as ISO 8601 in local time with its offset: 2026-11-23T09:12:03.123456789+01:00 */
static void print_date(FILE *out, uint64_t ns)
{
	time_t t = (time_t)(ns / 1000000000u);
	struct tm tm;
	char day[64], zone[16];
	if (!localtime_r(&t, &tm) || !strftime(day, sizeof day, "%Y-%m-%dT%H:%M:%S", &tm) ||
	    !strftime(zone, sizeof zone, "%z", &tm) || strlen(zone) != 5) {
		fprintf(out, "%-11s %" PRIu64 " ns since 1970\n", "started", ns);
		return;
	}
	fprintf(out, "%-11s %s.%09" PRIu64 "%.3s:%s\n", "started", day, ns % 1000000000u, zone, zone + 3);
}

void summary_print_info(const struct summary *s, struct cli_input *in, struct ptt_syms *syms, const char *mid_run, FILE *out)
{
	const struct ptt_reader *r = in->r;
	static const char *const keys[] = { "cmdline", "pid", "hostname", "machine_id", "boot_id", "recorder", "clock", "clock_hz",
		"mode", "flight", "flight_from", "level", "classes", "ring_bytes", "exit_status", "processes" };
	fprintf(out, "format:     %s\n", ptt_reader_form(r) == PTT_FORM_BINARY ? "binary" : "text");
	for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
		const char *v = ptt_reader_meta(r, keys[i]);
		if (v)
			fprintf(out, "%-11s %s\n", keys[i], v);
	}
	const char *rt = ptt_reader_meta(r, "realtime_ns");
	if (rt)
		print_date(out, strtoull(rt, NULL, 10));
	for (size_t l = 0; l < ptt_reader_meta_count(r); l++) /* a merged trace's hosts (ptt-merge) */
		if (!strncmp(ptt_reader_meta_line(r, l), "host ", 5))
			fprintf(out, "%-11s %s\n", "host", ptt_reader_meta_line(r, l) + 5);
	uint64_t first = s->first_ns, last = s->last_ns;
	if (cli_window(r, &first, &last)) { /* a window: its bounds, not its first and last events' */
		fprintf(out, "window:     %" PRIu64 ".%09" PRIu64 " s to %" PRIu64 ".%09" PRIu64 " s\n", first / 1000000000u,
			first % 1000000000u, last / 1000000000u, last % 1000000000u);
	}
	fprintf(out, "duration:   ");
	print_ns(out, s->events && last > first ? last - first : 0);
	const char *next = ptt_reader_meta(r, "continued");
	fprintf(out, "\nevents:     %" PRIu64 "\n", s->events);
	/* a set that starts mid-run is not complete: what came before is unknown, not "0 lost" */
	if (mid_run)
		fprintf(out, "start:      mid-run, %s; what came before is unknown\n", mid_run);
	fprintf(out, "lost:       %" PRIu64 "%s%s%s%s\n", s->lost,
		mid_run ? " in what was read" : "",
		ptt_reader_saw_end(r) ? "" : next ? " (a part of a rotated recording, continued in " :
		" (the trace has no end: the recorder did not finish it)", ptt_reader_saw_end(r) || !next ? "" : next,
		ptt_reader_saw_end(r) || !next ? "" : ")");
	cli_say_limits(in, out, "limit:      ");
	if (s->stalls) /* ptt's own doing: threads waited for room in their rings (ptt-stat shows the waits it lengthened) */
		fprintf(out, "stalls:     %" PRIu64 " by the tracer, %" PRIu64 ".%06" PRIu64 " ms summed over threads\n", s->stalls,
			s->stall_ns / 1000000u, s->stall_ns % 1000000u);
	struct hosts hs;
	if (hosts_read(&hs, r))
		hs.n = 0;
	fprintf(out, "threads:    %zu\n\n", s->nthreads);
	if (hs.n) /* a merged trace: the host above the process, pids and tids as each host gave them */
		fprintf(out, "%-16s ", "HOST");
	fprintf(out, "%8s %8s %12s %14s %14s  %s\n", "PID", "TID", "EVENTS", "FIRST", "LAST", "NAME");
	for (size_t i = 0; i < s->nthreads; i++) {
		const struct thread_count *t = &s->threads[i];
		char n[PTT_MAX_STR];
		/* as the pictures name it: its given name, else its start routine, else the command (main thread) */
		ptt_syms_thread_known_name(syms, t->pid, t->tid, n, sizeof n);
		if (hs.n)
			fprintf(out, "%-16s ", hosts_name(&hs, t->pid));
		fprintf(out, "%8" PRIu32 " %8" PRIu32 " %12" PRIu64 " %4" PRIu64 ".%09" PRIu64 " %4" PRIu64 ".%09" PRIu64 "  %s\n",
			hs.n ? host_local(t->pid) : t->pid, hs.n ? host_local(t->tid) : t->tid, t->events, t->first_ns / 1000000000u, t->first_ns % 1000000000u,
			t->last_ns / 1000000000u, t->last_ns % 1000000000u, n);
	}
	hosts_free(&hs);
	fprintf(out, "\n%-24s %12s\n", "EVENT", "COUNT");
	const struct ptt_types *ts = ptt_reader_types(r);
	for (unsigned id = 0; id < PTT_MAX_TYPES; id++) {
		const struct ptt_type *t = ptt_types_get(ts, id);
		if (s->by_id[id])
			fprintf(out, "%-24s %12" PRIu64 "\n", t ? t->name : "?", s->by_id[id]);
	}
}

void summary_print_check(const struct summary *s, struct cli_input *in, unsigned long violations, unsigned long aside,
			 FILE *out)
{
	const char *name = in->label;
	unsigned long damaged = in->problems;
	char of_them[64] = "";
	if (aside)
		snprintf(of_them, sizeof of_them, ", %lu of them where events were lost", aside);
	fprintf(out, "%s: %" PRIu64 " events, %lu damaged, %" PRIu64 " lost, %lu out of order, %lu violations%s: %s\n", name,
		s->events, damaged, s->lost, s->order_errors, violations, of_them,
		damaged || s->order_errors || violations > aside ? "FAILED" : aside ? "unverified" : "ok");
	if (violations > aside && (s->lost || damaged))
		fprintf(out, "%s: events were lost or damaged: violations next to them may come from the gaps\n", name);
	char prefix[sizeof in->label + 16];
	snprintf(prefix, sizeof prefix, "%s: limit: ", name);
	cli_say_limits(in, out, prefix);
}

void summary_free(struct summary *s)
{
	if (!s)
		return;
	free(s->threads);
	free(s);
}

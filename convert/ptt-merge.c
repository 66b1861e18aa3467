/*
 * ptt-merge - several traces (of several hosts, or several runs) on one
 * timeline: each input's events placed by its header's wall-clock anchor
 * (realtime_ns at start_ticks) plus the offset given for its host, the
 * inputs' pids and tids kept apart by their host's number (host.h).
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/cli.h"
#include "lib/host.h"
#include "lib/pass.h"

static void usage(void)
{
	printf("Usage: ptt-merge [OPTION]... FILE FILE...\n"
	       "Put several ptt traces (binary or text), each of one host or one run, on one timeline\n"
	       "and write them to stdout as one binary trace.  Each is placed by the wall-clock time its\n"
	       "recorder read at its start (its header's realtime_ns), plus its host's offset.\n"
	       "Each FILE becomes a host of the merged trace, named by its host name (NAME#2, NAME#3\n"
	       "for more runs of the same host); pids and tids of different FILEs never collide.\n"
	       "\n"
	       "  -O, --offset=HOST:NS    add NS nanoseconds (may be negative) to the clock of HOST (a\n"
	       "                          host name: every run of it; NAME#2: that run); repeatable\n"
	       "  -F, --offsets=FILE      read HOST NS lines from FILE (# starts a comment)\n"
	       "  -h, --help              show this help and exit\n"
	       "      --version           show the version and exit\n"
	       "\n"
	       "Exit status: 0 success, 1 an input is no trace, cannot be placed or is damaged,\n"
	       "2 usage error (an offset for a host no FILE was recorded on), or stdout is a terminal.\n");
}

#define PROG "ptt-merge"

struct offset {
	char host[80];
	int64_t ns;
	int used;
};

struct input {
	struct cli_input in;
	struct host_info host;
	int64_t start;         /* realtime_ns + offset: where its time zero lies on the merged timeline */
	struct ptt_event ev;
	int have;              /* ev holds its next event */
	int64_t at;            /* ev's time on the merged timeline */
};

struct merge {
	struct offset *off;
	size_t noff;
	struct input *inp;
	int n;
	int64_t base;          /* the earliest start: the merged trace's time zero */
	struct ptt_writer *w;
	struct ptt_types types; /* the user types written so far, and the input that defined each */
	int *type_from;
	uint64_t events;
	int werr;              /* the writer's error: negative errno or PTT_E_* */
};

static int add_offset(struct merge *m, const char *host, const char *ns, const char *where)
{
	char *end;
	errno = 0;
	long long v = strtoll(ns, &end, 10);
	if (!*host || strlen(host) >= sizeof m->off[0].host || errno || end == ns || *end) {
		fprintf(stderr, "%s: %s: expected HOST:NS (NS an integer of nanoseconds)\n", PROG, where);
		return -1;
	}
	struct offset *o = realloc(m->off, (m->noff + 1) * sizeof *o);
	if (!o)
		return -1;
	m->off = o;
	o += m->noff++;
	memset(o, 0, sizeof *o);
	snprintf(o->host, sizeof o->host, "%s", host);
	o->ns = v;
	return 0;
}

static int offset_arg(struct merge *m, char *arg)
{
	char *colon = strrchr(arg, ':');
	if (!colon) {
		fprintf(stderr, "%s: --offset=%s: expected HOST:NS\n", PROG, arg);
		return -1;
	}
	*colon = 0;
	return add_offset(m, arg, colon + 1, "--offset");
}

static int offsets_file(struct merge *m, const char *path)
{
	FILE *f = fopen(path, "r");
	if (!f) {
		fprintf(stderr, "%s: %s: %s\n", PROG, path, strerror(errno));
		return -1;
	}
	char line[512], where[600];
	int rc = 0;
	for (unsigned no = 1; !rc && fgets(line, sizeof line, f); no++) {
		line[strcspn(line, "#\n")] = 0;
		char host[128], ns[64], extra[2];
		int k = sscanf(line, "%127s %63s %1s", host, ns, extra);
		if (k <= 0)
			continue;
		snprintf(where, sizeof where, "%s:%u", path, no);
		rc = k == 2 ? add_offset(m, host, ns, where) : (fprintf(stderr, "%s: %s: expected HOST NS\n", PROG, where), -1);
	}
	fclose(f);
	return rc;
}

/* The header of input i: its host, its anchor; 0, or -1 reported (it cannot be placed). */
static int place(struct merge *m, int i)
{
	struct input *p = &m->inp[i];
	const struct ptt_reader *r = p->in.r;
	const char *rt = ptt_reader_meta(r, "realtime_ns"), *hn = ptt_reader_meta(r, "hostname");
	char why[200];
	int unknown_before;
	if (!rt || !*rt) {
		fprintf(stderr, "%s: %s: no realtime_ns in its header: it cannot be placed on a timeline\n", PROG, p->in.name);
		return -1;
	}
	if (ptt_reader_meta(r, "host")) {
		fprintf(stderr, "%s: %s: already a merged trace: merge the traces it was made of\n", PROG, p->in.name);
		return -1;
	}
	const char *mid = pass_mid_run(r, why, sizeof why, &unknown_before);
	if (mid) {
		fprintf(stderr, "%s: %s: starts mid-run (%s): ptt-merge takes whole recordings\n", PROG, p->in.name, mid);
		return -1;
	}
	const char *mid_id = ptt_reader_meta(r, "machine_id"), *boot = ptt_reader_meta(r, "boot_id");
	snprintf(p->host.machine_id, sizeof p->host.machine_id, "%s", mid_id && *mid_id ? mid_id : "-");
	snprintf(p->host.boot_id, sizeof p->host.boot_id, "%s", boot && *boot ? boot : "-");
	char base[64];
	snprintf(base, sizeof base, "%.*s", (int)strcspn(hn && *hn ? hn : "unknown", " \t#"), hn && *hn ? hn : "unknown");
	int runs = 1;
	for (int j = 0; j < i; j++)
		if (!strcmp(m->inp[j].host.name, base) || (!strncmp(m->inp[j].host.name, base, strlen(base)) &&
							     m->inp[j].host.name[strlen(base)] == '#'))
			runs++;
	if (runs > 1)
		snprintf(p->host.name, sizeof p->host.name, "%s#%d", base, runs);
	else
		snprintf(p->host.name, sizeof p->host.name, "%s", base);
	int exact = 0; /* the run's own offset (NAME#2) wins over its host's (NAME) */
	for (size_t k = 0; k < m->noff; k++) {
		int run = !strcmp(m->off[k].host, p->host.name);
		if (run || (!strcmp(m->off[k].host, base) && !exact)) {
			p->host.offset_ns = m->off[k].ns;
			exact |= run;
			m->off[k].used = 1;
		}
	}
	p->start = (int64_t)strtoull(rt, NULL, 10) + p->host.offset_ns;
	return 0;
}

/* Input i's next event and its place on the merged timeline. */
static void advance(struct input *p)
{
	int rc;
	while ((rc = cli_next(&p->in, &p->ev)) < 0)
		;
	p->have = rc > 0;
	if (p->have)
		p->at = p->start + (int64_t)p->ev.ns;
}

/* The merged trace's first META block: the clock (ns from the earliest start), its hosts, the types. */
static int write_header(struct merge *m)
{
	size_t size = 64 * 1024 + (size_t)m->n * 1400, n = 0;
	char *buf = malloc(size);
	if (!buf)
		return PTT_E_NOMEM;
	int level = 3;
	for (int i = 0; i < m->n; i++) {
		const char *l = ptt_reader_meta(m->inp[i].in.r, "level");
		if (l && atoi(l) < level)
			level = atoi(l); /* what every host recorded, no more */
	}
	n += (size_t)snprintf(buf, size, "clock monotonic\nclock_hz 1000000000\nstart_ticks 0\nrealtime_ns %" PRId64 "\n"
			      "recorder ptt-merge %s\nlevel %d\nhosts %d\n", m->base, PTT_VERSION, level, m->n);
	for (int i = 0; i < m->n; i++) {
		n += host_format_meta((unsigned)i, &m->inp[i].host, m->inp[i].in.name, buf + n, size - n);
		buf[n++] = '\n';
	}
	for (unsigned id = 0; id < PTT_EV_BUILTIN_COUNT && n < size - 512; id++) {
		n += ptt_text_format_type(ptt_builtin_type(id), buf + n, size - n);
		buf[n++] = '\n';
	}
	int rc = ptt_writer_meta(m->w, buf, n);
	free(buf);
	return rc;
}

/* A user type met in input i: written once (a META block), the same definition from every input. */
static int user_type(struct merge *m, int i, const struct ptt_type *t)
{
	char mine[1024], theirs[1024];
	const struct ptt_type *had = ptt_types_get(&m->types, t->id);
	ptt_text_format_type(t, mine, sizeof mine);
	if (had && m->type_from[t->id] >= 0) {
		ptt_text_format_type(had, theirs, sizeof theirs);
		if (strcmp(mine, theirs)) {
			fprintf(stderr, "%s: %s: event type %u is '%s' there but '%s' in %s: cannot merge them\n", PROG,
				m->inp[i].in.name, t->id, t->name, had->name, m->inp[m->type_from[t->id]].in.name);
			return -1;
		}
		return 0;
	}
	if (ptt_types_define(&m->types, t))
		return -1;
	m->type_from[t->id] = i;
	size_t len = strlen(mine);
	mine[len++] = '\n';
	return (m->werr = ptt_writer_meta(m->w, mine, len)) ? -1 : 0;
}

/* The event of input i with its host's ids and the merged clock, written. */
static int write_event(struct merge *m, int i)
{
	struct ptt_event *ev = &m->inp[i].ev;
	unsigned h = (unsigned)i;
	const struct ptt_type *t = ev->type;
	if (!t)
		return 0; /* the reader reported it */
	if (ev->pid > HOST_ID_MASK || ev->tid > HOST_ID_MASK) {
		fprintf(stderr, "%s: %s: pid %" PRIu32 " or tid %" PRIu32 " beyond the kernel's 2^22: not a recording\n", PROG,
			m->inp[i].in.name, ev->pid, ev->tid);
		return -1;
	}
	if (ev->id >= PTT_USER_ID_BASE && user_type(m, i, t))
		return -1;
	ev->pid = host_id(h, ev->pid);
	ev->tid = host_id(h, ev->tid);
	for (unsigned a = 0; a < t->nargs; a++) {
		int is_pid = (ev->id == PTT_EV_PROCESS_BEGIN && t->argid[a] == PTT_ARGNAME_PPID) ||
			     (ev->id == PTT_EV_PROCESS_FORK && t->argid[a] == PTT_ARGNAME_CHILD);
		if ((t->argkind[a] == PTT_ARG_TID || is_pid) && (uint32_t)ev->arg[a] <= HOST_ID_MASK)
			ev->arg[a] = host_id(h, (uint32_t)ev->arg[a]);
	}
	ev->ticks = (uint64_t)(m->inp[i].at - m->base);
	if (ptt_event_encode(ev))
		return 0; /* a record that cannot be written again: the reader has said what it was */
	m->events++;
	return (m->werr = ptt_writer_record(m->w, ev->words, ev->nwords)) ? -1 : 0;
}

/* After the last event: an END block when every input had one (else the merged trace has none either). */
static int write_end(struct merge *m)
{
	uint64_t lost = 0, procs = 0;
	for (int i = 0; i < m->n; i++) {
		const struct ptt_reader *r = m->inp[i].in.r;
		if (!ptt_reader_saw_end(r))
			return 0;
		const char *l = ptt_reader_meta(r, "lost"), *p = ptt_reader_meta(r, "processes");
		lost += l ? strtoull(l, NULL, 10) : 0;
		procs += p ? strtoull(p, NULL, 10) : 0;
	}
	char end[256];
	int n = snprintf(end, sizeof end, "events %" PRIu64 "\nlost %" PRIu64 "\nprocesses %" PRIu64 "\n", m->events, lost, procs);
	return ptt_writer_end(m->w, end, (size_t)n);
}

static int merge_run(struct merge *m, int npaths, char **paths)
{
	m->inp = calloc((size_t)npaths, sizeof *m->inp);
	m->type_from = malloc(PTT_MAX_TYPES * sizeof *m->type_from);
	if (!m->inp || !m->type_from)
		return 1;
	memset(m->type_from, 0xff, PTT_MAX_TYPES * sizeof *m->type_from);
	ptt_types_init_builtin(&m->types);
	for (int i = 0; i < npaths; i++, m->n++) { /* the header is read with the first event */
		struct input *p = &m->inp[i];
		if (cli_open(&p->in, PROG, 1, &paths[i]) < 0)
			return 1;
		p->in.ordered = 1;
		advance(p);
		if (place(m, i) < 0) {
			m->n++; /* opened: closed with the others */
			return 1;
		}
		p->at += p->start;
	}
	for (size_t k = 0; k < m->noff; k++)
		if (!m->off[k].used) {
			fprintf(stderr, "%s: --offset: no FILE was recorded on host %s\n", PROG, m->off[k].host);
			return 2;
		}
	m->base = INT64_MAX;
	for (int i = 0; i < m->n; i++)
		m->base = m->inp[i].start < m->base ? m->inp[i].start : m->base;
	if ((m->werr = ptt_writer_open(&m->w, 1, PTT_ZLEVEL_FAST)) || (m->werr = ptt_writer_set_compact(m->w, 1)) ||
	    (m->werr = write_header(m)))
		goto write_failed;
	for (;;) {
		int best = -1;
		for (int i = 0; i < m->n; i++) /* equal times: the earlier FILE first */
			if (m->inp[i].have && (best < 0 || m->inp[i].at < m->inp[best].at))
				best = i;
		if (best < 0)
			break;
		if (write_event(m, best))
			goto write_failed;
		advance(&m->inp[best]);
	}
	if ((m->werr = write_end(m)))
		goto write_failed;
	return 0;
write_failed:
	if (m->werr) /* else: reported where it was found (an input's fault) */
		fprintf(stderr, "%s: write error: %s\n", PROG, ptt_strerror(m->werr));
	return 1;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "help", no_argument, 0, 'h' }, { "offset", required_argument, 0, 'O' },
		{ "offsets", required_argument, 0, 'F' }, { "version", no_argument, 0, 'V' }, { 0, 0, 0, 0 },
	};
	struct merge m = { 0 };
	int c, rc = 0;
	while (!rc && (c = getopt_long(argc, argv, "hO:F:", longopts, NULL)) != -1) {
		switch (c) {
		case 'O': rc = offset_arg(&m, optarg) ? 2 : 0; break;
		case 'F': rc = offsets_file(&m, optarg) ? 2 : 0; break;
		case 'h': free(m.off); usage(); return 0;
		case 'V': free(m.off); cli_print_version(PROG); return 0;
		default: free(m.off); return cli_usage_error(PROG);
		}
	}
	if (!rc && argc - optind < 1) {
		fprintf(stderr, "%s: no FILE to merge\n", PROG);
		rc = 2;
	} else if (!rc && argc - optind > (int)HOST_MAX + 1) {
		fprintf(stderr, "%s: at most %u FILEs: a merged trace's ids have room for no more hosts\n", PROG, HOST_MAX + 1);
		rc = 2;
	} else if (!rc && isatty(1)) {
		fprintf(stderr, "%s: stdout is a terminal: redirect the merged (binary) trace to a file\n", PROG);
		rc = 2;
	}
	if (rc) {
		free(m.off);
		return rc == 2 ? cli_usage_error(PROG) : rc;
	}
	rc = merge_run(&m, argc - optind, argv + optind);
	int damaged = 0;
	for (int i = 0; i < m.n; i++)
		damaged |= m.inp[i].in.r ? cli_close(&m.inp[i].in) : 1;
	if (m.w && ptt_writer_close(m.w) && !rc) {
		fprintf(stderr, "%s: write error: %s\n", PROG, strerror(errno));
		rc = 1;
	}
	ptt_types_free(&m.types);
	free(m.type_from);
	free(m.inp);
	free(m.off);
	return rc ? rc : damaged;
}

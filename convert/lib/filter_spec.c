/* filter_spec.c - ptt-filter's criteria. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "filter_spec.h"
#include "host.h"

void spec_init(struct filter_spec *s)
{
	memset(s, 0, sizeof *s);
	s->to_ns = UINT64_MAX;
	s->count = UINT64_MAX;
}

int spec_selects_all(const struct filter_spec *s)
{
	return !s->npids && !s->nthreads && !s->nobjects && !s->nevents && !s->has_window && !s->invert &&
	       s->count == UINT64_MAX && s->to_ns == UINT64_MAX;
}

int spec_add_list(struct filter_spec *s, char **list, unsigned *n, const char *arg, const char *opt)
{
	(void)s;
	const char *p = arg;
	if (!*p) { /* --thread="$tid" with tid unset would otherwise select everything */
		fprintf(stderr, "ptt-filter: %s: empty value in list\n", opt);
		return -1;
	}
	while (*p) {
		const char *comma = strchr(p, ',');
		size_t len = comma ? (size_t)(comma - p) : strlen(p);
		if (len == 0 || *n == SPEC_MAX) {
			fprintf(stderr, "ptt-filter: %s: %s\n", opt, len ? "too many values" : "empty value in list");
			return -1;
		}
		list[*n] = strndup(p, len);
		if (!list[*n])
			return -1;
		(*n)++;
		p += len + (comma ? 1 : 0);
	}
	return 0;
}

int spec_add_pids(struct filter_spec *s, const char *arg)
{
	char *list[SPEC_MAX];
	unsigned n = 0;
	if (spec_add_list(s, list, &n, arg, "--pid"))
		return -1;
	int rc = 0;
	for (unsigned i = 0; i < n; i++) {
		char *end, *at = strrchr(list[i], '@'); /* N@HOST: the process N of that host (ptt-merge) */
		if (at)
			*at++ = 0;
		errno = 0;
		unsigned long v = strtoul(list[i], &end, 10);
		if (errno || *end || !*list[i] || !isdigit((unsigned char)*list[i]) || v > (at ? HOST_ID_MASK : UINT32_MAX) ||
		    (at && !*at) || s->npids == SPEC_MAX) {
			if (at)
				at[-1] = '@';
			fprintf(stderr, "ptt-filter: --pid: not a process id (N, or N@HOST): '%s'\n", list[i]);
			rc = -1;
		} else if (at && !(s->pid_hosts[s->npids] = strdup(at))) {
			fprintf(stderr, "ptt-filter: %s\n", strerror(ENOMEM));
			rc = -1;
		} else {
			s->pids[s->npids++] = (uint32_t)v;
		}
		free(list[i]);
	}
	return rc;
}

int spec_resolve_hosts(struct filter_spec *s, const struct hosts *hs, const char *prog)
{
	int bad = 0;
	for (unsigned i = 0; i < s->npids; i++) {
		if (!s->pid_hosts[i])
			continue;
		unsigned h = 0;
		while (h < hs->n && strcmp(hs->h[h].name, s->pid_hosts[i]) != 0)
			h++;
		if (h == hs->n) {
			fprintf(stderr, "%s: --pid: no host '%s' in the trace", prog, s->pid_hosts[i]);
			for (unsigned k = 0; k < hs->n; k++)
				fprintf(stderr, "%s%s", k ? ", " : "; its hosts: ", hs->h[k].name);
			fprintf(stderr, "%s\n", hs->n ? "" : " (one host: ptt-merge did not make it; give the pid alone)");
			bad = 1;
			continue;
		}
		s->pids[i] = host_id(h, s->pids[i]);
		s->pid_exact[i] = 1;
		s->pid_seen[i] = ptt_map_get(&s->seen_pids, (uint64_t)s->pids[i] + 1) != NULL;
		free(s->pid_hosts[i]);
		s->pid_hosts[i] = NULL;
	}
	return bad;
}

int spec_parse_time(const char *arg, uint64_t *ns)
{
	char *end;
	errno = 0;
	double v = strtod(arg, &end);
	if (errno || end == arg || v < 0)
		return -1;
	double mult = 1e9;
	if (strcmp(end, "ns") == 0)
		mult = 1;
	else if (strcmp(end, "us") == 0)
		mult = 1e3;
	else if (strcmp(end, "ms") == 0)
		mult = 1e6;
	else if (strcmp(end, "s") == 0 || !*end)
		mult = 1e9;
	else
		return -1;
	double r = v * mult;
	if (r > 1.8e19)
		return -1;
	*ns = (uint64_t)(r + 0.5);
	return 0;
}

int spec_is_definition(const struct ptt_event *ev)
{
	switch (ev->id) {
	case PTT_EV_PROCESS_BEGIN: case PTT_EV_PROCESS_EXIT: case PTT_EV_PROCESS_EXEC:
	case PTT_EV_THREAD_BEGIN: case PTT_EV_THREAD_END: case PTT_EV_THREAD_NAME: case PTT_EV_THREAD_CREATE:
	case PTT_EV_OBJECT_NAME: case PTT_EV_MODULE: case PTT_EV_MODULE_BUILD_ID: case PTT_EV_STACK_FRAMES:
	case PTT_EV_PY_CODE: case PTT_EV_PY_RUNTIME:
	case PTT_EV_LIMIT: /* what the trace could not record stays said in every part of it */
		return 1;
	default:
		return 0;
	}
}

/*
 * The labels the pictures and reports give, taken back: a thread as "TID",
 * "TID NAME" or "TID (NAME)" is its tid; an object as "KIND NAME" (Paje,
 * JSON) is NAME, as "NAME (0xADDR)" (ptt-deadlock) its address.
 */
static const char *thread_core(const char *want, char *buf, size_t size)
{
	size_t n = strspn(want, "0123456789");
	if (n && n < size && want[n] == ' ') {
		memcpy(buf, want, n);
		buf[n] = 0;
		return buf;
	}
	return want;
}

static const char *object_core(const char *want, char *buf, size_t size)
{
	static const char *const kinds[] = { "mutex ", "rwlock ", "spinlock ", "spin ", "cond ", "barrier ", "semaphore ", "sem " };
	const char *open = strstr(want, " (0x");
	size_t len = strlen(want);
	if (open && len && want[len - 1] == ')' && (size_t)(want + len - 1 - (open + 2)) < size) {
		size_t n = (size_t)(want + len - 1 - (open + 2));
		memcpy(buf, open + 2, n);
		buf[n] = 0;
		return buf;
	}
	for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++)
		if (strncmp(want, kinds[k], strlen(kinds[k])) == 0 && want[strlen(kinds[k])])
			return want + strlen(kinds[k]);
	return want;
}

/* A thread by tid, by its given name, or (syms) by the name the other tools show: start routine, command. */
static int match_thread(const char *want, const struct ptt_event *ev, const struct ptt_names *names, struct ptt_syms *syms)
{
	char tidbuf[24];
	want = thread_core(want, tidbuf, sizeof tidbuf);
	char *end;
	unsigned long tid = strtoul(want, &end, 10);
	if (!*end && *want)
		return tid == ev->tid;
	const char *name = ptt_names_thread(names, ev->tid);
	if (name && *name)
		return strcmp(name, want) == 0;
	char known[PTT_MAX_STR];
	return syms && strcmp(ptt_syms_thread_known_name(syms, ev->pid, ev->tid, known, sizeof known), want) == 0;
}

/* Does argument a of ev hold an object (not code, a thread handle or a return value)? */
static int object_arg(const struct ptt_event *ev, unsigned a)
{
	unsigned n = ev->type->argid[a];
	return ev->type->argkind[a] == PTT_ARG_PTR && n != PTT_ARGNAME_START && n != PTT_ARGNAME_HANDLE &&
	       n != PTT_ARGNAME_SITE && n != PTT_ARGNAME_RETVAL;
}

/*
 * An object by address, by given name, or (syms) by the name every tool
 * prints for it (symbols.h: a data symbol, "table+0x40", "module+0xoff").
 */
static int match_object(const char *want, const struct ptt_event *ev, const struct ptt_names *names, struct ptt_syms *syms)
{
	uint64_t addr;
	char *end, addrbuf[24];
	want = object_core(want, addrbuf, sizeof addrbuf);
	if (want[0] == '0' && (want[1] == 'x' || want[1] == 'X')) {
		addr = strtoull(want + 2, &end, 16);
		if (*end)
			return 0;
	} else if (!ptt_names_find_object(names, want, &addr)) {
		char shown[PTT_MAX_STR];
		for (unsigned a = 0; syms && a < ev->nargs; a++)
			if (object_arg(ev, a) && ev->arg[a] &&
			    strcmp(ptt_syms_object_name(syms, ev->pid, ev->arg[a], shown, sizeof shown), want) == 0)
				return 1;
		return 0;
	}
	for (unsigned a = 0; a < ev->nargs; a++)
		if (ev->type->argkind[a] == PTT_ARG_PTR && ev->arg[a] == addr &&
		    ev->type->argid[a] != PTT_ARGNAME_START && ev->type->argid[a] != PTT_ARGNAME_HANDLE)
			return 1;
	return 0;
}

static int match_event(const char *want, const struct ptt_event *ev)
{
	if (strcmp(ptt_class_name(ev->type->cls), want) == 0)
		return 1;
	return strncmp(ev->type->name, want, strlen(want)) == 0;
}

/* --pid=N: the process N, as every output names it; in a merged trace (ptt-merge) on every host that has
 * one, and the merged number (host << HOST_ID_BITS | N, ptt-dump's) names the one of that host alone */
static int pid_is(const struct filter_spec *s, unsigned i, uint32_t pid)
{
	uint32_t want = s->pids[i];
	return want == pid || (!s->pid_exact[i] && !host_of(want) && host_local(pid) == want);
}

int spec_match(const struct filter_spec *s, const struct ptt_event *ev, const struct ptt_names *names, struct ptt_syms *syms)
{
	unsigned i;
	if (s->npids) {
		for (i = 0; i < s->npids && !pid_is(s, i, ev->pid); i++)
			;
		if (i == s->npids)
			return 0;
	}
	if (s->nthreads) {
		for (i = 0; i < s->nthreads && !match_thread(s->threads[i], ev, names, syms); i++)
			;
		if (i == s->nthreads)
			return 0;
	}
	if (s->nobjects) {
		for (i = 0; i < s->nobjects && !match_object(s->objects[i], ev, names, syms); i++)
			;
		if (i == s->nobjects)
			return 0;
	}
	if (s->nevents) {
		for (i = 0; i < s->nevents && !match_event(s->events[i], ev); i++)
			;
		if (i == s->nevents)
			return 0;
	}
	return 1;
}

void spec_note_seen(struct filter_spec *s, const struct ptt_event *ev, const struct ptt_names *names, struct ptt_syms *syms)
{
	for (unsigned i = 0; i < s->npids; i++)
		s->pid_seen[i] |= pid_is(s, i, ev->pid);
	for (unsigned i = 0; i < s->nthreads; i++)
		s->thread_seen[i] |= !s->thread_seen[i] && match_thread(s->threads[i], ev, names, syms);
	for (unsigned i = 0; i < s->nobjects; i++)
		s->object_seen[i] |= !s->object_seen[i] && match_object(s->objects[i], ev, names, syms);
}

int spec_has_names(const struct filter_spec *s)
{
	return s->npids || s->nthreads || s->nobjects;
}

/* An object of the trace, remembered for the names a refusal offers. */
struct spec_obj {
	uint32_t pid;
	uint64_t addr;
};

int spec_collect(struct filter_spec *s, const struct ptt_event *ev)
{
	if (s->npids && !ptt_map_get(&s->seen_pids, (uint64_t)ev->pid + 1) &&
	    ptt_map_put(&s->seen_pids, (uint64_t)ev->pid + 1, (void *)1))
		return PTT_E_NOMEM;
	uint64_t tkey = (uint64_t)ev->pid << 32 | ev->tid;
	if (s->nthreads && ev->tid && !ptt_map_get(&s->seen_threads, tkey) && ptt_map_put(&s->seen_threads, tkey, (void *)1))
		return PTT_E_NOMEM;
	for (unsigned a = 0; s->nobjects && a < ev->nargs; a++) {
		if (!object_arg(ev, a) || !ev->arg[a] || ptt_map_get(&s->seen_objects, ptt_obj_key(ev->pid, ev->arg[a])))
			continue;
		struct spec_obj *o = malloc(sizeof *o);
		if (!o || ptt_map_put(&s->seen_objects, ptt_obj_key(ev->pid, ev->arg[a]), o)) {
			free(o);
			return PTT_E_NOMEM;
		}
		o->pid = ev->pid;
		o->addr = ev->arg[a];
	}
	return 0;
}

/* Edits (insert, delete, replace; case ignored) from a to b, or limit + 1 when more than limit. */
static unsigned edits(const char *a, const char *b, unsigned limit)
{
	size_t na = strlen(a), nb = strlen(b);
	if (na > 64 || nb > 64 || (na > nb ? na - nb : nb - na) > limit)
		return limit + 1;
	unsigned row[65];
	for (size_t j = 0; j <= nb; j++)
		row[j] = (unsigned)j;
	for (size_t i = 1; i <= na; i++) {
		unsigned diag = row[0], best = row[0] = (unsigned)i;
		for (size_t j = 1; j <= nb; j++) {
			unsigned up = row[j];
			unsigned cost = diag + (tolower((unsigned char)a[i - 1]) != tolower((unsigned char)b[j - 1]));
			row[j] = cost < up + 1 ? cost : up + 1;
			if (row[j - 1] + 1 < row[j])
				row[j] = row[j - 1] + 1;
			diag = up;
			best = row[j] < best ? row[j] : best;
		}
		if (best > limit)
			return limit + 1;
	}
	return row[nb] <= limit ? row[nb] : limit + 1;
}

#define NEAREST 5

/* The names nearest want, best first: a prefix of either, a substring of either, then a few edits away. */
struct nearest {
	const char *want;
	unsigned n;
	struct { unsigned score; char name[64]; } best[NEAREST];
};

static void consider(struct nearest *nr, const char *name)
{
	const char *want = nr->want;
	size_t nw = strlen(want), nn = strlen(name);
	unsigned limit = nw / 3 > 2 ? (unsigned)(nw / 3) : 2, score;
	if (!nn || nn >= sizeof nr->best[0].name)
		return;
	char head[sizeof nr->best[0].name];
	snprintf(head, sizeof head, "%.*s", (int)(nw < nn ? nw : nn), name);
	if (!strncasecmp(name, want, nw < nn ? nw : nn))
		score = 0;
	else if (strcasestr(name, want) || strcasestr(want, name))
		score = 1;
	else if ((score = edits(want, name, limit)) <= limit || (score = edits(want, head, limit)) <= limit)
		score += 2; /* a few edits from the name, or from its beginning ("consumr": consumer-0) */
	else
		return;
	for (unsigned i = 0; i < nr->n; i++)
		if (!strcmp(nr->best[i].name, name))
			return;
	unsigned at = nr->n;
	while (at > 0 && (nr->best[at - 1].score > score ||
			  (nr->best[at - 1].score == score && strcmp(nr->best[at - 1].name, name) > 0)))
		at--;
	if (at == NEAREST)
		return;
	unsigned last = nr->n < NEAREST ? nr->n : NEAREST - 1;
	memmove(&nr->best[at + 1], &nr->best[at], (last - at) * sizeof nr->best[0]);
	nr->best[at].score = score;
	snprintf(nr->best[at].name, sizeof nr->best[at].name, "%s", name);
	if (nr->n < NEAREST)
		nr->n++;
}

/* "; nearest in the trace: a, b" or nothing, then where every name is listed. */
static void say_nearest(const struct nearest *nr, const char *lister)
{
	for (unsigned i = 0; i < nr->n; i++)
		fprintf(stderr, "%s%s", i ? ", " : "; nearest in the trace: ", nr->best[i].name);
	fprintf(stderr, " (%s lists them all)\n", lister);
}

static void nearest_pids(const struct filter_spec *s, struct nearest *nr)
{
	struct ptt_map_iter it;
	uint64_t key;
	void *v;
	char buf[24];
	for (ptt_map_iter_init(&it, &s->seen_pids); ptt_map_next(&it, &key, &v);) {
		snprintf(buf, sizeof buf, "%llu", (unsigned long long)(key - 1));
		consider(nr, buf);
	}
}

static void nearest_threads(const struct filter_spec *s, struct nearest *nr, const struct ptt_names *names,
			    struct ptt_syms *syms)
{
	struct ptt_map_iter it;
	uint64_t key;
	void *v;
	char buf[PTT_MAX_STR];
	for (ptt_map_iter_init(&it, &s->seen_threads); ptt_map_next(&it, &key, &v);) {
		uint32_t pid = (uint32_t)(key >> 32), tid = (uint32_t)key;
		const char *name = names ? ptt_names_thread(names, tid) : NULL;
		if (!name || !*name)
			name = syms ? ptt_syms_thread_known_name(syms, pid, tid, buf, sizeof buf) : NULL;
		if (name && *name)
			consider(nr, name);
		snprintf(buf, sizeof buf, "%u", tid);
		consider(nr, buf);
	}
}

static void nearest_objects(const struct filter_spec *s, struct nearest *nr, const struct ptt_names *names,
			    struct ptt_syms *syms)
{
	struct ptt_map_iter it;
	uint64_t key;
	void *v;
	char buf[PTT_MAX_STR];
	for (ptt_map_iter_init(&it, &s->seen_objects); ptt_map_next(&it, &key, &v);) {
		const struct spec_obj *o = v;
		const char *name = names ? ptt_names_object(names, o->addr) : NULL;
		if (!name || !*name)
			name = syms ? ptt_syms_object_name(syms, o->pid, o->addr, buf, sizeof buf) : NULL;
		if (name && *name)
			consider(nr, name);
	}
}

int spec_warn_unseen(const struct filter_spec *s, const char *prog, const struct ptt_names *names, struct ptt_syms *syms)
{
	int unseen = 0;
	for (unsigned i = 0; i < s->npids; i++)
		if (!s->pid_seen[i]) {
			char want[24];
			snprintf(want, sizeof want, "%u", s->pids[i]);
			struct nearest nr = { .want = want };
			nearest_pids(s, &nr);
			fprintf(stderr, "%s: --pid: no process %u in the trace", prog, s->pids[i]);
			say_nearest(&nr, "ptt-dump --info");
			unseen = 1;
		}
	for (unsigned i = 0; i < s->nthreads; i++)
		if (!s->thread_seen[i]) {
			struct nearest nr = { .want = s->threads[i] };
			nearest_threads(s, &nr, names, syms);
			fprintf(stderr, "%s: --thread: '%s' names no thread of the trace", prog, s->threads[i]);
			say_nearest(&nr, "ptt-dump --info");
			unseen = 1;
		}
	for (unsigned i = 0; i < s->nobjects; i++)
		if (!s->object_seen[i]) {
			struct nearest nr = { .want = s->objects[i] };
			nearest_objects(s, &nr, names, syms);
			fprintf(stderr, "%s: %s: '%s' names no object of the trace", prog,
				s->object_opts[i] ? s->object_opts[i] : "--object", s->objects[i]);
			say_nearest(&nr, "ptt-stat");
			unseen = 1;
		}
	return unseen;
}

int spec_warn_unknown_events(const struct filter_spec *s, const struct ptt_types *types, const char *prog)
{
	int unknown = 0;
	for (unsigned i = 0; i < s->nevents; i++) {
		const char *want = s->events[i];
		int known = 0;
		for (unsigned c = 0; c < PTT_CLASS_COUNT && !known; c++)
			known = strcmp(ptt_class_name(c), want) == 0;
		for (unsigned id = 0; id < PTT_MAX_TYPES && !known; id++) {
			const struct ptt_type *t = ptt_types_get(types, id);
			known = t && strncmp(t->name, want, strlen(want)) == 0;
		}
		if (!known) {
			fprintf(stderr, "%s: --event: '%s' is no event class and begins no event name of this trace\n", prog, want);
			unknown = 1;
		}
	}
	return unknown;
}

void spec_free(struct filter_spec *s)
{
	ptt_map_free_with(&s->seen_objects, free);
	ptt_map_free(&s->seen_threads);
	ptt_map_free(&s->seen_pids);
	for (unsigned i = 0; i < s->npids; i++)
		free(s->pid_hosts[i]);
	for (unsigned i = 0; i < s->nthreads; i++)
		free(s->threads[i]);
	for (unsigned i = 0; i < s->nobjects; i++)
		free(s->objects[i]);
	for (unsigned i = 0; i < s->nevents; i++)
		free(s->events[i]);
}

/* filter_spec.c - ptt-filter's criteria. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "filter_spec.h"

void spec_init(struct filter_spec *s)
{
	memset(s, 0, sizeof *s);
	s->to_ns = UINT64_MAX;
	s->count = UINT64_MAX;
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
		char *end;
		errno = 0;
		unsigned long v = strtoul(list[i], &end, 10);
		if (errno || *end || !*list[i] || v > UINT32_MAX || s->npids == SPEC_MAX) {
			fprintf(stderr, "ptt-filter: --pid: not a process id: '%s'\n", list[i]);
			rc = -1;
		} else {
			s->pids[s->npids++] = (uint32_t)v;
		}
		free(list[i]);
	}
	return rc;
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
	case PTT_EV_OBJECT_NAME: case PTT_EV_MODULE: case PTT_EV_STACK_FRAMES:
		return 1;
	default:
		return 0;
	}
}

static int match_thread(const char *want, const struct ptt_event *ev, const struct ptt_names *names)
{
	char *end;
	unsigned long tid = strtoul(want, &end, 10);
	if (!*end && *want)
		return tid == ev->tid;
	const char *name = ptt_names_thread(names, ev->tid);
	return name && strcmp(name, want) == 0;
}

static int match_object(const char *want, const struct ptt_event *ev, const struct ptt_names *names)
{
	uint64_t addr;
	char *end;
	if (want[0] == '0' && (want[1] == 'x' || want[1] == 'X')) {
		addr = strtoull(want + 2, &end, 16);
		if (*end)
			return 0;
	} else if (!ptt_names_find_object(names, want, &addr)) {
		return 0;
	}
	for (unsigned a = 0; a < ev->nargs; a++)
		if (ev->type->argkind[a] == PTT_ARG_PTR && ev->arg[a] == addr &&
		    strcmp(ev->type->argname[a], "start") != 0 && strcmp(ev->type->argname[a], "handle") != 0)
			return 1;
	return 0;
}

static int match_event(const char *want, const struct ptt_event *ev)
{
	if (strcmp(ptt_class_name(ev->type->cls), want) == 0)
		return 1;
	return strncmp(ev->type->name, want, strlen(want)) == 0;
}

int spec_match(const struct filter_spec *s, const struct ptt_event *ev, const struct ptt_names *names)
{
	unsigned i;
	if (s->npids) {
		for (i = 0; i < s->npids && s->pids[i] != ev->pid; i++)
			;
		if (i == s->npids)
			return 0;
	}
	if (s->nthreads) {
		for (i = 0; i < s->nthreads && !match_thread(s->threads[i], ev, names); i++)
			;
		if (i == s->nthreads)
			return 0;
	}
	if (s->nobjects) {
		for (i = 0; i < s->nobjects && !match_object(s->objects[i], ev, names); i++)
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

void spec_note_seen(struct filter_spec *s, const struct ptt_event *ev, const struct ptt_names *names)
{
	for (unsigned i = 0; i < s->npids; i++)
		s->pid_seen[i] |= s->pids[i] == ev->pid;
	for (unsigned i = 0; i < s->nthreads; i++)
		s->thread_seen[i] |= !s->thread_seen[i] && match_thread(s->threads[i], ev, names);
	for (unsigned i = 0; i < s->nobjects; i++)
		s->object_seen[i] |= !s->object_seen[i] && match_object(s->objects[i], ev, names);
}

int spec_warn_unseen(const struct filter_spec *s, const char *prog)
{
	int unseen = 0;
	for (unsigned i = 0; i < s->npids; i++)
		if (!s->pid_seen[i]) {
			fprintf(stderr, "%s: --pid: no process %u in the trace\n", prog, s->pids[i]);
			unseen = 1;
		}
	for (unsigned i = 0; i < s->nthreads; i++)
		if (!s->thread_seen[i]) {
			fprintf(stderr, "%s: --thread: '%s' names no thread of the trace\n", prog, s->threads[i]);
			unseen = 1;
		}
	for (unsigned i = 0; i < s->nobjects; i++)
		if (!s->object_seen[i]) {
			fprintf(stderr, "%s: %s: '%s' names no object of the trace\n", prog,
				s->object_opts[i] ? s->object_opts[i] : "--object", s->objects[i]);
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
	for (unsigned i = 0; i < s->nthreads; i++)
		free(s->threads[i]);
	for (unsigned i = 0; i < s->nobjects; i++)
		free(s->objects[i]);
	for (unsigned i = 0; i < s->nevents; i++)
		free(s->events[i]);
}

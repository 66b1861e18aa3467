/* pprof.c - ptt-stat --pprof: waits or holds as pprof's profile.proto (pprof.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <zlib.h>

#include "lockframes.h"
#include "model.h"
#include "pprof.h"
#include "profile.pb-c.h"
#include "symbols.h"

typedef Perftools__Profiles__Profile Profile;
typedef Perftools__Profiles__ValueType ValueType;
typedef Perftools__Profiles__Sample Sample;
typedef Perftools__Profiles__Label Label;
typedef Perftools__Profiles__Location Location;
typedef Perftools__Profiles__Line Line;
typedef Perftools__Profiles__Function Function;

/* The waits (or holds) of one thread on one object under one stack (or at one site), summed. */
struct psample {
	struct psample *next;       /* same hash key */
	struct stat_sample s;       /* s.ns: the sum */
	uint64_t count;
};

struct pprof {
	struct ptt_syms *syms;
	struct model *model;
	struct stat_table *st;
	enum stat_fold what;
	struct ptt_map samples;     /* hash -> chain of struct psample */
	/* while writing: the string table, functions and locations, each found by a map */
	char **strings;
	size_t nstrings, cap_strings;
	struct ptt_map string_ids;  /* FNV-1a of the string -> chain of struct pstr */
	Function **functions;
	size_t nfunctions, cap_functions;
	struct ptt_map function_ids; /* (name, file) -> id */
	Location **locations;
	size_t nlocations, cap_locations;
	struct ptt_map location_ids; /* (pid, address) -> id */
	void **owned;               /* every allocation of the message, freed together */
	size_t nowned, cap_owned;
	int nomem;
};

struct pstr {
	struct pstr *next;
	int64_t index;
};

static uint64_t mix(uint64_t h)
{
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdull;
	h ^= h >> 33;
	return h | 1; /* never 0 */
}

static uint64_t sample_key(const struct stat_sample *s)
{
	uint64_t h = ptt_obj_key(s->pid, s->obj) * 0x9E3779B97F4A7C15ull;
	h ^= ((uint64_t)s->tid << 32 | s->stack) * 0xC2B2AE3D27D4EB4Full;
	return mix(h ^ s->site);
}

static void on_sample(void *ctx, const struct stat_sample *s)
{
	struct pprof *pp = ctx;
	if (s->hold != (pp->what == STAT_FOLD_HOLD))
		return;
	uint64_t key = sample_key(s);
	struct psample *head = ptt_map_get(&pp->samples, key), *x;
	for (x = head; x; x = x->next)
		if (x->s.pid == s->pid && x->s.tid == s->tid && x->s.stack == s->stack && x->s.site == s->site &&
		    x->s.obj == s->obj)
			break;
	if (!x) {
		if (!(x = calloc(1, sizeof *x)) || ptt_map_put(&pp->samples, key, x)) {
			free(x);
			pp->nomem = 1;
			return;
		}
		*x = (struct psample){ head, *s, 0 };
		x->s.ns = 0;
	}
	x->s.ns += s->ns;
	x->count++;
}

struct pprof *pprof_new(struct ptt_syms *syms, struct model *m, struct stat_table *st, enum stat_fold what)
{
	struct pprof *pp = calloc(1, sizeof *pp);
	if (!pp)
		return NULL;
	pp->syms = syms;
	pp->model = m;
	pp->st = st;
	pp->what = what;
	stat_set_sampler(st, on_sample, pp);
	return pp;
}

/* ---- the message, built once the input is read ---- */

static void *own(struct pprof *pp, size_t size)
{
	void *p = calloc(1, size);
	if (!p || ptt_grow(&pp->owned, &pp->cap_owned, pp->nowned + 1, sizeof *pp->owned)) {
		free(p);
		pp->nomem = 1;
		return NULL;
	}
	return pp->owned[pp->nowned++] = p;
}

/* The index of s in the string table, added the first time. */
static int64_t str(struct pprof *pp, const char *s)
{
	uint64_t h = 0xcbf29ce484222325ull;
	for (const char *c = s; *c; c++)
		h = (h ^ (unsigned char)*c) * 0x100000001b3ull;
	h = mix(h);
	struct pstr *head = ptt_map_get(&pp->string_ids, h), *x;
	for (x = head; x; x = x->next)
		if (!strcmp(pp->strings[x->index], s))
			return x->index;
	char *copy = own(pp, strlen(s) + 1);
	if (!copy || !(x = own(pp, sizeof *x)) ||
	    ptt_grow(&pp->strings, &pp->cap_strings, pp->nstrings + 1, sizeof *pp->strings) || ptt_map_put(&pp->string_ids, h, x)) {
		pp->nomem = 1;
		return 0;
	}
	strcpy(copy, s);
	*x = (struct pstr){ head, (int64_t)pp->nstrings };
	pp->strings[pp->nstrings++] = copy;
	return x->index;
}

/* The function named name in file (NULL: unknown), added the first time: its id. */
static uint64_t function(struct pprof *pp, const char *name, const char *file)
{
	int64_t n = str(pp, name), f = file ? str(pp, file) : 0;
	uint64_t key = mix((uint64_t)n << 32 ^ (uint64_t)f);
	uint64_t id = (uint64_t)(uintptr_t)ptt_map_get(&pp->function_ids, key);
	if (id && pp->functions[id - 1]->name == n && pp->functions[id - 1]->filename == f)
		return id;
	Function *fn = own(pp, sizeof *fn);
	if (!fn || ptt_grow(&pp->functions, &pp->cap_functions, pp->nfunctions + 1, sizeof *pp->functions))
		return pp->nomem = 1, 0;
	perftools__profiles__function__init(fn);
	fn->id = pp->nfunctions + 1;
	fn->name = fn->system_name = n;
	fn->filename = f;
	pp->functions[pp->nfunctions++] = fn;
	if (!id) /* a collision keeps the first in the map: the others are found again, as new functions */
		ptt_map_put(&pp->function_ids, key, (void *)(uintptr_t)fn->id);
	return fn->id;
}

/* One line of a location: the function at code address a (an inline level or a plain address). */
static void line_of(struct pprof *pp, uint32_t pid, uint64_t a, Line *l)
{
	char name[512], file[512];
	lockframes_name(pp->syms, pid, a, name, sizeof name);
	const char *where = ptt_syms_code(pp->syms, pid, a)->line; /* "file.c:42" */
	const char *colon = where ? strrchr(where, ':') : NULL;
	perftools__profiles__line__init(l);
	if (colon) {
		snprintf(file, sizeof file, "%.*s", (int)(colon - where), where);
		l->line = strtoll(colon + 1, NULL, 10);
	}
	l->function_id = function(pp, name, colon ? file : NULL);
}

/*
 * The location of frame addr of process pid (0: a wait without a site), added the first time: its id.
 * A frame with inlined functions is one location with a line per function, innermost first, as
 * pprof keeps inlining; a site past the lock layer that is an inline level is that level alone.
 */
static uint64_t location(struct pprof *pp, uint32_t pid, uint64_t addr)
{
	uint64_t key = mix(ptt_obj_key(pid, addr) * 0x9E3779B97F4A7C15ull ^ addr);
	uint64_t id = (uint64_t)(uintptr_t)ptt_map_get(&pp->location_ids, key);
	if (id)
		return id;
	unsigned levels = addr && PTT_SYMS_ADDR(addr) == addr ? ptt_syms_code(pp->syms, pid, addr)->levels : 1;
	Location *loc = own(pp, sizeof *loc);
	Line *lines = own(pp, levels * sizeof *lines);
	Line **lp = own(pp, levels * sizeof *lp);
	if (!loc || !lines || !lp || ptt_grow(&pp->locations, &pp->cap_locations, pp->nlocations + 1, sizeof *pp->locations))
		return pp->nomem = 1, 0;
	perftools__profiles__location__init(loc);
	loc->id = pp->nlocations + 1;
	loc->address = PTT_IS_PYFRAME(addr) ? 0 : PTT_SYMS_ADDR(addr);
	loc->n_line = levels;
	loc->line = lp;
	for (unsigned l = 0; l < levels; l++) {
		lp[l] = &lines[l];
		if (addr)
			line_of(pp, pid, levels > 1 ? ptt_syms_level(addr, l) : addr, &lines[l]);
		else
			perftools__profiles__line__init(&lines[l]), lines[l].function_id = function(pp, "[no site]", NULL);
	}
	pp->locations[pp->nlocations++] = loc;
	if (ptt_map_put(&pp->location_ids, key, (void *)(uintptr_t)loc->id))
		pp->nomem = 1;
	return loc->id;
}

static Label *label(struct pprof *pp, const char *key, const char *text, int64_t num)
{
	Label *l = own(pp, sizeof *l);
	if (!l)
		return NULL;
	perftools__profiles__label__init(l);
	l->key = str(pp, key);
	if (text)
		l->str = str(pp, text);
	else
		l->num = num;
	return l;
}

/* A sample's message: its stack as locations, leaf first; its values; its labels. */
static Sample *sample(struct pprof *pp, const struct psample *x)
{
	const uint64_t *f = NULL;
	unsigned n = x->s.stack ? ptt_stacks_get(model_stacks(pp->model), x->s.pid, x->s.stack, &f) : 0;
	Sample *s = own(pp, sizeof *s);
	uint64_t *ids = own(pp, (n ? n : 1) * sizeof *ids);
	int64_t *values = own(pp, 2 * sizeof *values);
	Label **labels = own(pp, 5 * sizeof *labels);
	if (!s || !ids || !values || !labels)
		return NULL;
	perftools__profiles__sample__init(s);
	for (unsigned i = 0; i < n; i++)
		ids[i] = location(pp, x->s.pid, f[i]);
	if (!n)
		ids[0] = location(pp, x->s.pid, x->s.site);
	s->n_location_id = n ? n : 1;
	s->location_id = ids;
	values[0] = (int64_t)x->count;
	values[1] = (int64_t)x->s.ns;
	s->n_value = 2;
	s->value = values;
	char name[PTT_MAX_STR + 64];
	labels[0] = label(pp, "object", ptt_syms_object_name(pp->syms, x->s.pid, x->s.obj, name, sizeof name), 0);
	labels[1] = label(pp, "thread", ptt_syms_thread_name(pp->syms, x->s.pid, x->s.tid, name, sizeof name), 0);
	labels[2] = label(pp, "tid", NULL, x->s.tid);
	labels[3] = label(pp, "pid", NULL, x->s.pid);
	labels[4] = label(pp, "lock", stat_is_lock(pp->st, x->s.pid, x->s.obj) ? "yes" : "no", 0);
	s->n_label = 5;
	s->label = labels;
	return pp->nomem ? NULL : s;
}

static ValueType *value_type(struct pprof *pp, const char *type, const char *unit)
{
	ValueType *v = own(pp, sizeof *v);
	if (v) {
		perftools__profiles__value_type__init(v);
		v->type = str(pp, type);
		v->unit = str(pp, unit);
	}
	return v;
}

/* data gzip-compressed to out: 0, or -1 (errno EIO or ENOMEM) */
static int gzip_to(FILE *out, const uint8_t *data, size_t len)
{
	z_stream z = { 0 };
	if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return errno = ENOMEM, -1;
	uint8_t buf[1 << 16];
	z.next_in = (uint8_t *)data;
	z.avail_in = (uInt)len;
	int rc;
	do {
		z.next_out = buf;
		z.avail_out = sizeof buf;
		rc = deflate(&z, Z_FINISH);
		fwrite(buf, 1, sizeof buf - z.avail_out, out);
	} while (rc == Z_OK);
	deflateEnd(&z);
	return rc == Z_STREAM_END ? 0 : (errno = EIO, -1);
}

int pprof_write(struct pprof *pp, FILE *out, int64_t time_ns, int64_t duration_ns, const char *comment)
{
	Profile prof = PERFTOOLS__PROFILES__PROFILE__INIT;
	int wait = pp->what != STAT_FOLD_HOLD;
	str(pp, ""); /* string_table[0] */
	ValueType *types[2] = { value_type(pp, wait ? "contentions" : "holds", "count"),
				value_type(pp, wait ? "delay" : "held", "nanoseconds") };
	prof.n_sample_type = 2;
	prof.sample_type = types;
	prof.default_sample_type = types[1] ? types[1]->type : 0;
	prof.period_type = value_type(pp, wait ? "delay" : "held", "nanoseconds");
	prof.period = 1;
	prof.time_nanos = time_ns;
	prof.duration_nanos = duration_ns;
	int64_t note = str(pp, comment);
	prof.n_comment = 1;
	prof.comment = &note;
	Sample **samples = NULL;
	size_t n = 0, cap = 0;
	struct ptt_map_iter it;
	void *chain;
	for (ptt_map_iter_init(&it, &pp->samples); ptt_map_next(&it, NULL, &chain) && !pp->nomem;)
		for (const struct psample *x = chain; x; x = x->next) {
			if (pp->what == STAT_FOLD_LOCKS && !stat_is_lock(pp->st, x->s.pid, x->s.obj))
				continue;
			Sample *s = sample(pp, x);
			if (!s || ptt_grow(&samples, &cap, n + 1, sizeof *samples)) {
				pp->nomem = 1;
				break;
			}
			samples[n++] = s;
		}
	prof.n_sample = n;
	prof.sample = samples;
	prof.n_location = pp->nlocations;
	prof.location = pp->locations;
	prof.n_function = pp->nfunctions;
	prof.function = pp->functions;
	prof.n_string_table = pp->nstrings;
	prof.string_table = pp->strings;
	int rc = -1;
	uint8_t *buf = NULL;
	size_t len = pp->nomem ? 0 : perftools__profiles__profile__get_packed_size(&prof);
	if (pp->nomem || !(buf = malloc(len ? len : 1)))
		errno = ENOMEM;
	else if (perftools__profiles__profile__pack(&prof, buf) == len)
		rc = gzip_to(out, buf, len);
	else
		errno = EIO;
	free(buf);
	free(samples);
	return rc;
}

static void free_samples(void *x)
{
	for (struct psample *s = x, *next; s; s = next) {
		next = s->next;
		free(s);
	}
}

void pprof_free(struct pprof *pp)
{
	if (!pp)
		return;
	ptt_map_free_with(&pp->samples, free_samples);
	for (size_t i = 0; i < pp->nowned; i++)
		free(pp->owned[i]);
	free(pp->owned);
	free(pp->strings);
	free(pp->functions);
	free(pp->locations);
	ptt_map_free(&pp->string_ids);
	ptt_map_free(&pp->function_ids);
	ptt_map_free(&pp->location_ids);
	free(pp);
}

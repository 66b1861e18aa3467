/* types.c - event classes, sources, argument kinds and the type tables. */
#include <stdlib.h>
#include <string.h>

#include "ptt_trace.h"

static const char *const class_names[PTT_CLASS_COUNT] = {
	"meta", "process", "thread", "mutex", "cond", "rwlock",
	"barrier", "sem", "spin", "user", "recorder", "futex",
};
static const char *const source_names[PTT_SRC_COUNT] = { "pthread", "recorder", "program" };
static const char *const kind_names[PTT_ARG_KIND_COUNT] = { "i32", "u32", "tid", "ptr", "u64", "i64", "str" };

const char *ptt_class_name(unsigned cls) { return cls < PTT_CLASS_COUNT ? class_names[cls] : "?"; }
const char *ptt_source_name(unsigned src) { return src < PTT_SRC_COUNT ? source_names[src] : "?"; }

static const char *const role_names[PTT_ROLE_COUNT] = {
	"point", "meta", "name", "life", "init", "destroy", "request", "request_shared",
	"acquire", "shared", "try", "try_shared", "release", "wait_end", "post", "recorder",
};
const char *ptt_role_name(unsigned role) { return role < PTT_ROLE_COUNT ? role_names[role] : "?"; }

int ptt_role_stamped_before(unsigned role)
{
	return role == PTT_ROLE_RELEASE || role == PTT_ROLE_POST || ptt_role_is_request(role);
}
const char *ptt_arg_kind_name(unsigned k) { return k < PTT_ARG_KIND_COUNT ? kind_names[k] : "?"; }

static int index_of(const char *const *names, int n, const char *name)
{
	for (int i = 0; i < n; i++)
		if (strcmp(names[i], name) == 0)
			return i;
	return -1;
}

int ptt_class_from_name(const char *name) { return index_of(class_names, PTT_CLASS_COUNT, name); }
int ptt_source_from_name(const char *name) { return index_of(source_names, PTT_SRC_COUNT, name); }

static const char *const argname_strings[PTT_ARGNAMES] = {
	"",
#define PTT_ARGNAME_STRING(e, s) s,
	PTT_ARGNAME_LIST(PTT_ARGNAME_STRING)
#undef PTT_ARGNAME_STRING
};
_Static_assert(PTT_ARGNAMES <= 256, "struct ptt_type keeps argument names in a byte");

const char *ptt_argname_string(unsigned name) { return name < PTT_ARGNAMES ? argname_strings[name] : ""; }

enum ptt_argname ptt_argname_from_string(const char *s)
{
	int i = *s ? index_of(argname_strings, PTT_ARGNAMES, s) : -1;
	return i < 0 ? PTT_ARGNAME_NONE : (enum ptt_argname)i;
}

/* Fill argid and argpos from the argument names: once per type, so that no event compares names. */
static void index_argnames(struct ptt_type *t)
{
	memset(t->argid, 0, sizeof t->argid);
	memset(t->argpos, 0, sizeof t->argpos);
	for (unsigned a = 0; a < t->nargs; a++) {
		enum ptt_argname n = ptt_argname_from_string(t->argname[a]);
		t->argid[a] = (uint8_t)n;
		if (n != PTT_ARGNAME_NONE && !t->argpos[n])
			t->argpos[n] = (uint8_t)(a + 1);
	}
}

unsigned ptt_arg_kind_words(unsigned k)
{
	switch (k) {
	case PTT_ARG_I32: case PTT_ARG_U32: case PTT_ARG_TID: return 1;
	case PTT_ARG_PTR: case PTT_ARG_U64: case PTT_ARG_I64: return 2;
	default: return 0;
	}
}

int ptt_type_parse_args(struct ptt_type *t, const char *spec)
{
	t->nargs = 0;
	t->words = 0;
	index_argnames(t);
	if (!spec || !*spec || strcmp(spec, "-") == 0)
		return 0;
	const char *p = spec;
	while (*p) {
		if (t->nargs == PTT_MAX_ARGS)
			return PTT_E_BADTYPE;
		const char *colon = strchr(p, ':');
		if (!colon || colon == p || (size_t)(colon - p) >= sizeof t->argname[0])
			return PTT_E_BADTYPE;
		const char *end = strchr(colon, ',');
		size_t klen = end ? (size_t)(end - colon - 1) : strlen(colon + 1);
		char kind[8];
		if (klen == 0 || klen >= sizeof kind)
			return PTT_E_BADTYPE;
		memcpy(kind, colon + 1, klen);
		kind[klen] = 0;
		int k = index_of(kind_names, PTT_ARG_KIND_COUNT, kind);
		if (k < 0)
			return PTT_E_BADTYPE;
		if (t->nargs && t->argkind[t->nargs - 1] == PTT_ARG_STR)
			return PTT_E_BADTYPE; /* str must be last */
		memcpy(t->argname[t->nargs], p, (size_t)(colon - p));
		t->argname[t->nargs][colon - p] = 0;
		for (const char *c = t->argname[t->nargs]; *c; c++)
			if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') || *c == '_'))
				return PTT_E_BADTYPE;
		t->argkind[t->nargs++] = (uint8_t)k;
		t->words = (uint8_t)(t->words + ptt_arg_kind_words((unsigned)k));
		p = end ? end + 1 : colon + 1 + klen;
	}
	if (PTT_REC_MIN_WORDS + t->words > PTT_REC_MAX_WORDS)
		return PTT_E_BADTYPE;
	index_argnames(t);
	return 0;
}

void ptt_type_format_args(const struct ptt_type *t, char *buf, size_t size)
{
	size_t n = 0;
	if (size == 0)
		return;
	buf[0] = 0;
	if (t->nargs == 0) {
		snprintf(buf, size, "-");
		return;
	}
	for (unsigned i = 0; i < t->nargs && n < size; i++) {
		int w = snprintf(buf + n, size - n, "%s%s:%s", i ? "," : "", t->argname[i], ptt_arg_kind_name(t->argkind[i]));
		if (w < 0)
			return;
		n += (size_t)w;
	}
}

static struct ptt_type builtin[PTT_EV_BUILTIN_COUNT];
static int builtin_ready;

/*
 * The built-ins' name index: open addressing over 1 + id (0 empty), probed
 * linearly from the name's hash.  Not a struct ptt_map: a constant table in
 * static storage that threads may build at once without a lock (see
 * builtin_init), in the preloaded runtime too, where nothing allocates.
 */
#define BUILTIN_INDEX 256 /* a power of two, over twice PTT_EV_BUILTIN_COUNT */
_Static_assert(2 * PTT_EV_BUILTIN_COUNT < BUILTIN_INDEX, "builtin name index too small");
static uint16_t builtin_index[BUILTIN_INDEX];

static unsigned name_hash(const char *name)
{
	uint32_t h = 2166136261u; /* FNV-1a */
	for (; *name; name++)
		h = (h ^ (unsigned char)*name) * 16777619u;
	return h;
}

/* Put id in the index (mask + 1 slots, not full) under its name, unless it is there already. */
static void index_put(uint16_t *index, unsigned mask, const char *name, unsigned id)
{
	for (unsigned i = name_hash(name) & mask;; i = (i + 1) & mask) {
		if (index[i] == id + 1)
			return;
		if (index[i] == 0) {
			index[i] = (uint16_t)(id + 1);
			return;
		}
	}
}

struct builtin_def {
	uint16_t id;
	uint8_t cls, level, source, role;
	const char *name, *args;
};
static const struct builtin_def builtin_defs[] = {
#define PTT_EVENT(e, name, cls, lvl, src, role, args) { e, cls, lvl, src, role, name, args },
#include "events.def"
#undef PTT_EVENT
};

/*
 * Build the built-in table and its name index once.  The data is constant,
 * so a race only repeats identical writes (index_put never moves an entry).
 */
static void builtin_init(void)
{
	if (__atomic_load_n(&builtin_ready, __ATOMIC_ACQUIRE))
		return;
	for (size_t i = 0; i < sizeof builtin_defs / sizeof builtin_defs[0]; i++) {
		const struct builtin_def *d = &builtin_defs[i];
		struct ptt_type t;
		memset(&t, 0, sizeof t);
		t.id = d->id;
		t.cls = d->cls;
		t.level = d->level;
		t.source = d->source;
		t.role = d->role;
		snprintf(t.name, sizeof t.name, "%s", d->name);
		if (ptt_type_parse_args(&t, d->args) != 0)
			abort(); /* a typo in events.def: caught by the unit tests */
#ifdef PTT_NO_SITE
		/* make bench's build without the call site (capture/runtime/runtime.h): the types of older traces */
		if (t.nargs && strcmp(t.argname[t.nargs - 1], "site") == 0) {
			t.nargs--;
			t.words = (uint8_t)(t.words - 2);
			index_argnames(&t);
		}
#endif
		builtin[d->id] = t;
		index_put(builtin_index, BUILTIN_INDEX - 1, t.name, d->id);
	}
	__atomic_store_n(&builtin_ready, 1, __ATOMIC_RELEASE);
}

const struct ptt_type *ptt_builtin_type(unsigned id)
{
	builtin_init();
	return id < PTT_EV_BUILTIN_COUNT ? &builtin[id] : NULL;
}

unsigned ptt_type_role(const struct ptt_type *t)
{
	const struct ptt_type *b = ptt_builtin_type(t->id);
	return b && strcmp(b->name, t->name) == 0 ? b->role : PTT_ROLE_POINT;
}

void ptt_types_init_builtin(struct ptt_types *ts)
{
	builtin_init();
	memset(ts, 0, sizeof *ts);
}

const struct ptt_type *ptt_types_get(const struct ptt_types *ts, unsigned id)
{
	builtin_init(); /* one load once built: a table zeroed without ptt_types_init_builtin still works */
	if (id < ts->ncap && ts->defined[id])
		return ts->defined[id];
	return id < PTT_EV_BUILTIN_COUNT ? &builtin[id] : NULL;
}

/* The key of a name in the index of defined types: FNV-1a, 64 bits (two names sharing one are told apart below). */
static uint64_t name_key(const char *name)
{
	uint64_t h = 14695981039346656037ull;
	for (; *name; name++)
		h = (h ^ (unsigned char)*name) * 1099511628211ull;
	return h;
}

/* The defined type of lowest id, other than skip, whose name has this key (named: with this name), or NULL. */
static struct ptt_type *lowest_defined(const struct ptt_types *ts, uint64_t key, const char *named,
				       const struct ptt_type *skip)
{
	for (unsigned id = 0; id < ts->ncap; id++) {
		struct ptt_type *t = ts->defined[id];
		if (t && t != skip && (named ? strcmp(t->name, named) == 0 : name_key(t->name) == key))
			return t;
	}
	return NULL;
}

int ptt_types_define(struct ptt_types *ts, const struct ptt_type *t)
{
	if (t->id >= PTT_MAX_TYPES)
		return PTT_E_BADTYPE;
	const struct ptt_type *old = ptt_types_get(ts, t->id);
	if (old && memcmp(old, t, sizeof *t) == 0)
		return 0;
	size_t cap = ts->ncap;
	if (PTT_GROW(ts->defined, &cap, (size_t)t->id + 1) != 0)
		return PTT_E_NOMEM;
	memset(ts->defined + ts->ncap, 0, (cap - ts->ncap) * sizeof *ts->defined);
	ts->ncap = (unsigned)cap;
	struct ptt_type *copy = malloc(sizeof *copy), *was = ts->defined[t->id];
	if (!copy)
		return PTT_E_NOMEM;
	*copy = *t;
	uint64_t key = name_key(t->name);
	const struct ptt_type *first = ptt_map_get(&ts->index, key);
	if ((!first || first->id >= t->id) && ptt_map_put(&ts->index, key, copy) != 0) {
		free(copy);
		return PTT_E_NOMEM;
	}
	ts->defined[t->id] = copy;
	uint64_t was_key = was ? name_key(was->name) : key;
	if (was_key != key && ptt_map_get(&ts->index, was_key) == was) {
		/* renamed: its old name's entry goes to the next type of that name.  Deleted
		 * first, so that the put finds room (at most half full) and cannot fail. */
		struct ptt_type *next = lowest_defined(ts, was_key, NULL, was);
		ptt_map_del(&ts->index, was_key);
		if (next)
			ptt_map_put(&ts->index, was_key, next);
	}
	free(was);
	return 0;
}

const struct ptt_type *ptt_types_find_name(const struct ptt_types *ts, const char *name)
{
	builtin_init();
	unsigned h = name_hash(name);
	const struct ptt_type *best = NULL;
	for (unsigned i = h & (BUILTIN_INDEX - 1); builtin_index[i]; i = (i + 1) & (BUILTIN_INDEX - 1)) {
		unsigned id = builtin_index[i] - 1u;
		if (strcmp(builtin[id].name, name) == 0 && !(id < ts->ncap && ts->defined[id])) {
			best = &builtin[id];
			break;
		}
	}
	const struct ptt_type *t = ptt_map_get(&ts->index, name_key(name));
	if (t && strcmp(t->name, name) != 0) /* another name with the same key */
		t = lowest_defined(ts, 0, name, NULL);
	if (t && (!best || t->id < best->id))
		best = t;
	return best;
}

void ptt_types_free(struct ptt_types *ts)
{
	for (unsigned i = 0; i < ts->ncap; i++)
		free(ts->defined[i]);
	free(ts->defined);
	ptt_map_free(&ts->index);
	memset(ts, 0, sizeof *ts);
}

/* text.c - ptt-dump's line form: formatting and parsing events and types. */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "ptt_trace.h"

size_t ptt_text_quote(const char *s, char *buf, size_t size)
{
	size_t n = 0;
#define PUT(c) do { if (n + 1 < size) buf[n] = (c); n++; } while (0)
	PUT('"');
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == '"' || *p == '\\') {
			PUT('\\');
			PUT((char)*p);
		} else if (*p == '\n') {
			PUT('\\');
			PUT('n');
		} else if (*p < 0x20 || *p >= 0x7f) {
			static const char hex[] = "0123456789abcdef";
			PUT('\\');
			PUT('x');
			PUT(hex[*p >> 4]);
			PUT(hex[*p & 15]);
		} else {
			PUT((char)*p);
		}
	}
	PUT('"');
#undef PUT
	if (size)
		buf[n < size ? n : size - 1] = 0;
	return n;
}

/*
 * The longest text an event can make: the number fields at their widest,
 * the source name (at most "recorder"), and the names copied whole from
 * their fixed-size arrays (the length is found after the copy: one fixed
 * move and one strlen instead of a bounded copy per field); a str argument
 * quoted, at most 4 bytes a character, and the NUL after it all.
 */
#define FIXED_MAX (30 + 1 + 10 + 1 + 10 + 1 + 16 + 1 + sizeof(((struct ptt_type *)0)->name) + 1)
#define ARG_MAX (1 + sizeof(((struct ptt_type *)0)->argname[0]) + 1)
#define STR_MAX (PTT_MAX_STR * 4 + 3)
#define LINE_MAX_ALL (FIXED_MAX + PTT_MAX_ARGS * (ARG_MAX + STR_MAX))

static size_t line_max(const struct ptt_type *t)
{
	size_t n = FIXED_MAX;
	for (unsigned a = 0; t && a < t->nargs; a++)
		n += ARG_MAX + (t->argkind[a] == PTT_ARG_STR ? STR_MAX : 21);
	return n;
}

/* The line into p, which has line_max(ev->type) bytes; returns its end (no NUL). */
static char *format_line(const struct ptt_event *ev, char *p)
{
	const struct ptt_type *t = ev->type;
	p = ptt_fmt_time(p, ev->ns);
	*p++ = ' ';
	p = ptt_fmt_u64(p, ev->pid);
	*p++ = ' ';
	p = ptt_fmt_u64(p, ev->tid);
	*p++ = ' ';
	if (!t) {
		memcpy(p, "? ?", 3);
		return p + 3;
	}
	const char *src = ptt_source_name(t->source);
	size_t n = strlen(src);
	memcpy(p, src, n);
	p += n;
	*p++ = ' ';
	memcpy(p, t->name, sizeof t->name);
	p += strnlen(t->name, sizeof t->name);
	for (unsigned a = 0; a < t->nargs; a++) {
		uint64_t v = ev->arg[a];
		*p++ = ' ';
		memcpy(p, t->argname[a], sizeof t->argname[a]);
		p += strnlen(t->argname[a], sizeof t->argname[a]);
		*p++ = '=';
		switch (t->argkind[a]) {
		case PTT_ARG_I32: case PTT_ARG_I64:
			p = ptt_fmt_i64(p, (int64_t)v);
			break;
		case PTT_ARG_PTR:
			p = ptt_fmt_hex(p, v);
			break;
		case PTT_ARG_STR:
			p += ptt_text_quote(ev->str, p, STR_MAX);
			break;
		default:
			p = ptt_fmt_u64(p, v);
		}
	}
	return p;
}

size_t ptt_text_format_event(const struct ptt_event *ev, char *buf, size_t size)
{
	if (size >= line_max(ev->type)) { /* the common case: room for any line of this type */
		char *end = format_line(ev, buf);
		*end = 0;
		return (size_t)(end - buf);
	}
	if (!size)
		return 0;
	char full[LINE_MAX_ALL];
	size_t n = (size_t)(format_line(ev, full) - full);
	if (n >= size)
		n = size - 1;
	memcpy(buf, full, n);
	buf[n] = 0;
	return n;
}

/* Undo ptt_text_quote; *pp points at the opening quote and is left after the closing one. */
static int unquote(const char **pp, char *out, size_t size)
{
	const char *p = *pp;
	size_t n = 0;
	if (*p++ != '"')
		return PTT_E_BADTEXT;
	while (*p && *p != '"') {
		int c = (unsigned char)*p++;
		if (c == '\\') {
			c = (unsigned char)*p++;
			if (c == 'n') {
				c = '\n';
			} else if (c == 'x') {
				if (!isxdigit((unsigned char)p[0]) || !isxdigit((unsigned char)p[1]))
					return PTT_E_BADTEXT;
				char hex[3] = { p[0], p[1], 0 };
				c = (int)strtol(hex, NULL, 16);
				p += 2;
			} else if (c != '"' && c != '\\') {
				return PTT_E_BADTEXT;
			}
		}
		if (n + 1 < size)
			out[n++] = (char)c;
	}
	if (*p != '"')
		return PTT_E_BADTEXT;
	out[n] = 0;
	*pp = p + 1;
	return 0;
}

static int parse_u64(const char **pp, uint64_t *v, int base)
{
	char *end;
	if (!isxdigit((unsigned char)**pp) && **pp != '-')
		return PTT_E_BADTEXT;
	errno = 0;
	if (**pp == '-')
		*v = (uint64_t)strtoll(*pp, &end, base);
	else
		*v = strtoull(*pp, &end, base);
	if (end == *pp || errno)
		return PTT_E_BADTEXT;
	*pp = end;
	return 0;
}

/* Unsigned decimal digits only (no sign, no space) up to max: what the writer puts there. */
static int parse_dec(const char **pp, uint64_t *v, uint64_t max)
{
	const char *p = *pp;
	uint64_t x = 0;
	if (!isdigit((unsigned char)*p))
		return PTT_E_BADTEXT;
	for (; isdigit((unsigned char)*p); p++) {
		unsigned d = (unsigned)(*p - '0');
		if (x > (max - d) / 10)
			return PTT_E_BADTEXT;
		x = x * 10 + d;
	}
	*v = x;
	*pp = p;
	return 0;
}

static const char *skip_spaces(const char *p)
{
	while (*p == ' ')
		p++;
	return p;
}

/* Copy one space-delimited token into buf; returns the position after it. */
static const char *token(const char *p, char *buf, size_t size)
{
	size_t n = 0;
	p = skip_spaces(p);
	while (*p && *p != ' ' && *p != '\n') {
		if (n + 1 < size)
			buf[n++] = *p;
		p++;
	}
	buf[n] = 0;
	return p;
}

int ptt_text_parse_event(const struct ptt_types *ts, const char *line, struct ptt_event *ev)
{
	const char *p = skip_spaces(line);
	uint64_t sec, frac;
	/* a sign or a time past 2^64 ns would wrap around silently */
	if (parse_dec(&p, &sec, UINT64_MAX / 1000000000u - 1) || *p++ != '.')
		return PTT_E_BADTEXT;
	const char *fstart = p;
	if (parse_dec(&p, &frac, UINT64_MAX) || p - fstart != 9)
		return PTT_E_BADTEXT;
	ev->ns = sec * 1000000000u + frac;
	ev->ticks = ev->ns;
	uint64_t pid, tid;
	p = skip_spaces(p);
	if (parse_dec(&p, &pid, UINT32_MAX))
		return PTT_E_BADTEXT;
	p = skip_spaces(p);
	if (parse_dec(&p, &tid, UINT32_MAX))
		return PTT_E_BADTEXT;
	ev->pid = (uint32_t)pid;
	ev->tid = (uint32_t)tid;
	char src[16], name[64];
	p = token(p, src, sizeof src);
	p = token(p, name, sizeof name);
	const struct ptt_type *t = ptt_types_find_name(ts, name);
	if (!t)
		return PTT_E_UNKNOWN_TYPE;
	ev->type = t;
	ev->id = t->id;
	ev->nargs = t->nargs;
	ev->str[0] = 0;
	for (unsigned a = 0; a < t->nargs; a++) {
		p = skip_spaces(p);
		if ((!*p || *p == '\n' || *p == '#') && a + 1 == t->nargs && t->argkind[a] == PTT_ARG_PTR &&
		    t->argid[a] == PTT_ARGNAME_SITE) {
			ev->arg[a] = 0; /* a line written without its call site (by hand, or before sites): 0, unknown */
			break;
		}
		size_t len = strlen(t->argname[a]);
		if (strncmp(p, t->argname[a], len) != 0 || p[len] != '=')
			return PTT_E_BADTEXT;
		p += len + 1;
		int rc;
		ev->arg[a] = 0;
		switch (t->argkind[a]) {
		case PTT_ARG_STR:
			rc = unquote(&p, ev->str, sizeof ev->str);
			break;
		case PTT_ARG_PTR:
			rc = (p[0] == '0' && p[1] == 'x') ? (p += 2, parse_u64(&p, &ev->arg[a], 16)) : PTT_E_BADTEXT;
			break;
		case PTT_ARG_U32:
		case PTT_ARG_TID:
			rc = parse_dec(&p, &ev->arg[a], UINT32_MAX);
			break;
		case PTT_ARG_U64:
			rc = parse_dec(&p, &ev->arg[a], UINT64_MAX);
			break;
		default:
			rc = parse_u64(&p, &ev->arg[a], 10);
		}
		if (rc)
			return rc;
		if (t->argkind[a] == PTT_ARG_I32) {
			int64_t v = (int64_t)ev->arg[a];
			if (v < INT32_MIN || v > INT32_MAX) /* not cut to 32 bits: ret=4294967296 is not ret=0 */
				return PTT_E_BADTEXT;
		}
		if (*p != ' ' && *p != 0 && *p != '\n')
			return PTT_E_BADTEXT;
	}
	p = skip_spaces(p);
	if (*p && *p != '\n' && *p != '#') /* a trailing comment: ptt-dump's symbolised site */
		return PTT_E_BADTEXT;
	return 0;
}

size_t ptt_text_format_type(const struct ptt_type *t, char *buf, size_t size)
{
	char args[PTT_MAX_ARGS * 40];
	ptt_type_format_args(t, args, sizeof args);
	int w = snprintf(buf, size, "type %u %s %s %u %s %s", t->id, t->name, ptt_class_name(t->cls),
			 t->level, ptt_source_name(t->source), args);
	return w < 0 ? 0 : (size_t)w;
}

/* Each field is checked as soon as it is read: most lines that are no definition fail at the first. */
static int parse_type_fields(const char *defn, struct ptt_type *t)
{
	char id[16], name[64], cls[16], level[8], src[16], args[PTT_MAX_ARGS * 40];
	const char *p = defn;
	char *end;
	memset(t, 0, sizeof *t);
	p = token(p, id, sizeof id);
	unsigned long v = strtoul(id, &end, 10);
	if (!*id || *end || v >= PTT_MAX_TYPES)
		return PTT_E_BADTYPE;
	t->id = (uint16_t)v;
	p = token(p, name, sizeof name);
	if (!*name || strlen(name) >= sizeof t->name)
		return PTT_E_BADTYPE;
	for (const char *c = name; *c; c++)
		if (!isalnum((unsigned char)*c) && *c != '_' && *c != '.' && *c != '-')
			return PTT_E_BADTYPE;
	strcpy(t->name, name);
	p = token(p, cls, sizeof cls);
	int c = ptt_class_from_name(cls);
	if (c < 0)
		return PTT_E_BADTYPE;
	p = token(p, level, sizeof level);
	v = strtoul(level, &end, 10);
	if (!*level || *end || v > 9)
		return PTT_E_BADTYPE;
	p = token(p, src, sizeof src);
	int s = ptt_source_from_name(src);
	if (s < 0)
		return PTT_E_BADTYPE;
	p = token(p, args, sizeof args);
	if (*skip_spaces(p) && *skip_spaces(p) != '\n')
		return PTT_E_BADTYPE;
	t->cls = (uint8_t)c;
	t->source = (uint8_t)s;
	t->level = (uint8_t)v;
	int rc = ptt_type_parse_args(t, args);
	t->role = (uint8_t)ptt_type_role(t);
	return rc;
}

/*
 * Every trace's header repeats the built-in types' definitions: those lines,
 * as ptt_text_format_type writes them (after "type "), are made once and a
 * definition equal to one of them is the built-in type without parsing.
 */
#define BUILTIN_DEFN_MAX 400
static char builtin_defn[PTT_EV_BUILTIN_COUNT][BUILTIN_DEFN_MAX];
static pthread_once_t builtin_defn_once = PTHREAD_ONCE_INIT;

static void builtin_defn_init(void)
{
	for (unsigned id = 0; id < PTT_EV_BUILTIN_COUNT; id++) {
		const struct ptt_type *b = ptt_builtin_type(id);
		char line[BUILTIN_DEFN_MAX + 8];
		struct ptt_type t;
		size_t n = ptt_text_format_type(b, line, sizeof line);
		/* only a line that reads back as the very same type (else the slow path decides) */
		if (n + 1 < sizeof line && n > 5 && parse_type_fields(line + 5, &t) == 0 && memcmp(&t, b, sizeof t) == 0)
			memcpy(builtin_defn[id], line + 5, n - 5 + 1);
	}
}

int ptt_text_parse_type(const char *defn, struct ptt_type *t)
{
	unsigned id = 0;
	const char *p = defn;
	for (; *p >= '0' && *p <= '9' && id < PTT_EV_BUILTIN_COUNT; p++)
		id = id * 10 + (unsigned)(*p - '0');
	if (p != defn && *p == ' ' && id < PTT_EV_BUILTIN_COUNT) {
		pthread_once(&builtin_defn_once, builtin_defn_init);
		if (builtin_defn[id][0] && strcmp(defn, builtin_defn[id]) == 0) {
			*t = *ptt_builtin_type(id);
			return 0;
		}
	}
	return parse_type_fields(defn, t);
}

/*
 * sink.c - the output side of a filter: events out in binary or text form,
 * with the reader's header (and types it learns later) carried along.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ptt_trace.h"

struct ptt_sink {
	FILE *out;
	size_t (*note)(void *ctx, const struct ptt_event *ev, char *buf, size_t size);
	void *note_ctx;
	int form;
	struct ptt_writer *w;
	size_t meta_done; /* reader meta lines already written */
	int started;
	char *extra, *extra_end; /* the filter's own lines (ptt_sink_meta, ptt_sink_end_meta) */
	/*
	 * Text: the rest of recent lines after their time, by what it is made
	 * of (a program's events repeat: the same thread takes the same lock at
	 * the same call site); forgotten whenever the reader learns meta lines,
	 * which may define a type again at the same address.
	 */
	const struct ptt_reader *memo_r;
	size_t memo_meta;
	struct memo {
		const struct ptt_type *type; /* NULL: empty */
		uint32_t pid, tid;
		uint32_t len;
		uint64_t arg[PTT_MAX_ARGS];
		char text[172];
	} memo[64];
	/* every text line is gathered here and handed to stdio a block at a time (one fwrite per
	 * line cost as much as formatting it) */
	size_t used;
	char text[1 << 16];
};

/* The longest text line (event and note, cut there as before the buffer existed). */
#define LINE_MAX (PTT_MAX_STR * 4 + 1024)
_Static_assert(sizeof(((struct ptt_sink *)0)->text) >= 2 * LINE_MAX, "room for more than one line");

/*
 * The block straight to out's descriptor once stdio holds nothing (copying
 * it into stdio's buffer first cost as much as a tenth of ptt-dump's time);
 * through stdio where out has no descriptor, or for what write(2) refused,
 * so that stdio sees the error as every program checks it (ferror, errno).
 */
static int text_flush(struct ptt_sink *s)
{
	size_t n = s->used, done = 0;
	s->used = 0;
	if (!n)
		return 0;
	int fd = fileno(s->out);
	if (fd >= 0 && fflush(s->out) == 0) {
		while (done < n) {
			ssize_t k = write(fd, s->text + done, n - done);
			if (k < 0 && errno == EINTR)
				continue;
			if (k <= 0)
				break;
			done += (size_t)k;
		}
	}
	return done < n && fwrite(s->text + done, 1, n - done, s->out) != n - done ? -EIO : 0;
}

static int text_put(struct ptt_sink *s, const char *p, size_t n)
{
	if (sizeof s->text - s->used < n) {
		int rc = text_flush(s);
		if (rc || n > sizeof s->text)
			return rc ? rc : fwrite(p, 1, n, s->out) != n ? -EIO : 0;
	}
	memcpy(s->text + s->used, p, n);
	s->used += n;
	return 0;
}

/* "# LINE\n" */
static int text_meta(struct ptt_sink *s, const char *l, size_t n)
{
	return text_put(s, "# ", 2) || text_put(s, l, n) || text_put(s, "\n", 1) ? -EIO : 0;
}

int ptt_sink_open(struct ptt_sink **sp, FILE *out, int form, int zlevel)
{
	struct ptt_sink *s = calloc(1, sizeof *s);
	if (!s)
		return PTT_E_NOMEM;
	s->out = out;
	s->form = form;
	if (form == PTT_FORM_BINARY) {
		int rc = ptt_writer_open(&s->w, fileno(out), zlevel);
		if (rc) {
			free(s);
			return rc;
		}
	}
	*sp = s;
	return 0;
}

static int is_clock_line(const char *l)
{
	return strncmp(l, "clock_hz ", 9) == 0 || strncmp(l, "start_ticks ", 12) == 0;
}

/* Write "key value\n" lines as "# key value" and forget them. */
static int text_lines(struct ptt_sink *s, char **lines)
{
	int rc = 0;
	for (const char *p = *lines; p && *p;) {
		const char *nl = strchr(p, '\n');
		size_t l = nl ? (size_t)(nl - p) : strlen(p);
		if (text_meta(s, p, l))
			rc = -EIO;
		p += l + (nl != NULL);
	}
	free(*lines);
	*lines = NULL;
	return rc;
}

static int set_lines(char **slot, const char *lines)
{
	char *copy = strdup(lines);
	if (!copy)
		return PTT_E_NOMEM;
	free(*slot);
	*slot = copy;
	return 0;
}

int ptt_sink_meta(struct ptt_sink *s, const char *lines) { return set_lines(&s->extra, lines); }
int ptt_sink_end_meta(struct ptt_sink *s, const char *lines) { return set_lines(&s->extra_end, lines); }
struct ptt_writer *ptt_sink_writer(struct ptt_sink *s) { return s->w; }

/* Write reader meta lines [meta_done, upto) that belong to the header part. */
/* Anything for sync_meta to write, when the reader holds n meta lines? (asked once per event) */
static inline int meta_pending(const struct ptt_sink *s, size_t n)
{
	return s->meta_done < n || !s->started || s->extra;
}

static int sync_meta(struct ptt_sink *s, const struct ptt_reader *r, int include_end)
{
	size_t n = ptt_reader_meta_count(r);
	if (!meta_pending(s, n))
		return 0;
	if (s->form == PTT_FORM_TEXT) {
		char magic[32];
		int m = snprintf(magic, sizeof magic, "%s%d\n", PTT_TEXT_MAGIC, PTT_TEXT_VERSION);
		if (!s->started && text_put(s, magic, (size_t)m))
			return -EIO;
		for (; s->meta_done < n; s->meta_done++) {
			const char *l = ptt_reader_meta_line(r, s->meta_done);
			if (!include_end && strcmp(l, "end") == 0)
				break;
			if (text_meta(s, l, strlen(l)))
				return -EIO;
		}
		s->started = 1;
		return text_lines(s, &s->extra);
	}
	size_t cap = 4096, len = 0;
	char *buf = malloc(cap);
	if (!buf)
		return PTT_E_NOMEM;
	if (!s->started && ptt_reader_form(r) == PTT_FORM_TEXT)
		len += (size_t)snprintf(buf, cap, "clock ns\nclock_hz 1000000000\nstart_ticks 0\n");
	for (; s->meta_done < n; s->meta_done++) {
		const char *l = ptt_reader_meta_line(r, s->meta_done);
		if (strcmp(l, "end") == 0)
			break;
		if (ptt_reader_form(r) == PTT_FORM_TEXT && (is_clock_line(l) || strncmp(l, "clock ", 6) == 0))
			continue;
		size_t ll = strlen(l);
		if (ptt_grow(&buf, &cap, len + ll + 2, 1) != 0) {
			free(buf);
			return PTT_E_NOMEM;
		}
		memcpy(buf + len, l, ll);
		buf[len + ll] = '\n';
		len += ll + 1;
	}
	if (s->extra) {
		size_t el = strlen(s->extra);
		if (ptt_grow(&buf, &cap, len + el, 1) != 0) {
			free(buf);
			return PTT_E_NOMEM;
		}
		memcpy(buf + len, s->extra, el);
		len += el;
		free(s->extra);
		s->extra = NULL;
	}
	int rc = len || !s->started ? ptt_writer_meta(s->w, buf, len) : 0;
	free(buf);
	s->started = 1;
	return rc;
}

/*
 * The event's line at line, as ptt_text_format_event writes it into LINE_MAX
 * bytes: the time, then the rest from the memo when an event of the same
 * type, process, thread and arguments made it lately (no str argument).
 */
static size_t text_event(struct ptt_sink *s, const struct ptt_reader *r, size_t nmeta, const struct ptt_event *ev,
			 char *line)
{
	const struct ptt_type *t = ev->type;
	if (r != s->memo_r || nmeta != s->memo_meta) {
		memset(s->memo, 0, sizeof s->memo);
		s->memo_r = r;
		s->memo_meta = nmeta;
	}
	unsigned nargs = t ? t->nargs : 0;
	for (unsigned a = 0; a < nargs; a++)
		if (t->argkind[a] == PTT_ARG_STR)
			return ptt_text_format_event(ev, line, LINE_MAX);
	uint64_t key = (uint64_t)ev->tid << 32 ^ ev->id ^ (nargs ? ev->arg[0] ^ ev->arg[nargs - 1] << 16 : 0);
	struct memo *m = &s->memo[(key * 0x9e3779b97f4a7c15ull) >> 58];
	_Static_assert(sizeof s->memo / sizeof s->memo[0] == 64, "the hash takes 6 bits");
	int hit = t && m->type == t && m->pid == ev->pid && m->tid == ev->tid;
	for (unsigned a = 0; hit && a < nargs; a++)
		hit = m->arg[a] == ev->arg[a];
	if (hit) {
		char *p = ptt_fmt_time(line, ev->ns);
		memcpy(p, m->text, m->len);
		p[m->len] = 0;
		return (size_t)(p - line) + m->len;
	}
	size_t len = ptt_text_format_event(ev, line, LINE_MAX);
	const char *rest = memchr(line, ' ', len); /* after the time */
	if (t && rest && (size_t)(line + len - rest) <= sizeof m->text) {
		m->type = t;
		m->pid = ev->pid;
		m->tid = ev->tid;
		memcpy(m->arg, ev->arg, nargs * sizeof ev->arg[0]);
		m->len = (uint32_t)(line + len - rest);
		memcpy(m->text, rest, m->len);
	}
	return len;
}

int ptt_sink_event(struct ptt_sink *s, const struct ptt_reader *r, struct ptt_event *ev)
{
	size_t nmeta = ptt_reader_meta_count(r);
	int rc = meta_pending(s, nmeta) ? sync_meta(s, r, 0) : 0;
	if (rc)
		return rc;
	if (s->form == PTT_FORM_TEXT) {
		if (sizeof s->text - s->used < LINE_MAX && (rc = text_flush(s)) != 0)
			return rc;
		char *line = s->text + s->used;
		size_t len = text_event(s, r, nmeta, ev, line);
		if (s->note && len + 8 < LINE_MAX) {
			size_t k = s->note(s->note_ctx, ev, line + len + 4, LINE_MAX - len - 5);
			if (k) {
				memcpy(line + len, "  # ", 4);
				len += 4 + k;
			}
		}
		line[len++] = '\n';
		s->used += len;
		return 0;
	}
	if (ptt_reader_form(r) == PTT_FORM_TEXT) {
		ev->ticks = ev->ns;
		rc = ptt_event_encode(ev);
		if (rc)
			return rc;
	}
	return ptt_writer_record(s->w, ev->words, ev->nwords);
}

int ptt_sink_close(struct ptt_sink *s, const struct ptt_reader *r)
{
	int rc = 0;
	if (!s)
		return 0;
	if (r)
		rc = sync_meta(s, r, 0);
	if (!rc && r && !ptt_reader_saw_end(r)) {
		/* the output is complete even when the input was cut (the cut was reported) */
		if (s->form == PTT_FORM_TEXT) {
			rc = text_meta(s, "end", 3);
			if (!rc)
				rc = text_lines(s, &s->extra_end);
		} else {
			rc = ptt_writer_end(s->w, s->extra_end ? s->extra_end : "", s->extra_end ? strlen(s->extra_end) : 0);
		}
	} else if (!rc && r) {
		size_t n = ptt_reader_meta_count(r), i;
		for (i = 0; i < n && strcmp(ptt_reader_meta_line(r, i), "end") != 0; i++)
			;
		if (s->form == PTT_FORM_TEXT) {
			for (; i < n; i++)
				if (text_meta(s, ptt_reader_meta_line(r, i), strlen(ptt_reader_meta_line(r, i))))
					rc = -EIO;
			if (!rc)
				rc = text_lines(s, &s->extra_end);
		} else {
			size_t len = s->extra_end ? strlen(s->extra_end) : 0;
			for (size_t j = i + 1; j < n; j++)
				len += strlen(ptt_reader_meta_line(r, j)) + 1;
			char *buf = malloc(len + 1);
			if (!buf)
				return PTT_E_NOMEM;
			len = 0;
			for (size_t j = i + 1; j < n; j++)
				len += (size_t)sprintf(buf + len, "%s\n", ptt_reader_meta_line(r, j));
			if (s->extra_end)
				len += (size_t)sprintf(buf + len, "%s", s->extra_end);
			rc = ptt_writer_end(s->w, buf, len);
			free(buf);
		}
	}
	if (s->form == PTT_FORM_TEXT) {
		int frc = text_flush(s);
		if (!rc)
			rc = frc;
	}
	if (!rc && s->w)
		rc = ptt_writer_flush(s->w);
	ptt_writer_close(s->w);
	free(s->extra);
	free(s->extra_end);
	free(s);
	return rc;
}

void ptt_sink_set_note(struct ptt_sink *s, size_t (*note)(void *ctx, const struct ptt_event *ev, char *buf, size_t size),
		       void *ctx)
{
	s->note = note;
	s->note_ctx = ctx;
}

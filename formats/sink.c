/*
 * sink.c - the output side of a filter: events out in binary or text form,
 * with the reader's header (and types it learns later) carried along.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

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
	/* text lines gathered here and handed to stdio a block at a time (one fwrite per line cost
	 * as much as formatting it); out sees them before anything else the sink writes */
	size_t used;
	char text[1 << 16];
};

/* The longest text line (event and note, cut there as before the buffer existed). */
#define LINE_MAX (PTT_MAX_STR * 4 + 1024)
_Static_assert(sizeof(((struct ptt_sink *)0)->text) >= 2 * LINE_MAX, "room for more than one line");

static int text_flush(struct ptt_sink *s)
{
	size_t n = s->used;
	s->used = 0;
	return n && fwrite(s->text, 1, n, s->out) != n ? -EIO : 0;
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
		int l = nl ? (int)(nl - p) : (int)strlen(p);
		if (fprintf(s->out, "# %.*s\n", l, p) < 0)
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
static int sync_meta(struct ptt_sink *s, const struct ptt_reader *r, int include_end)
{
	size_t n = ptt_reader_meta_count(r);
	if (s->meta_done >= n && s->started && !s->extra)
		return 0;
	if (s->form == PTT_FORM_TEXT) {
		if (text_flush(s))
			return -EIO;
		if (!s->started && fprintf(s->out, "%s%d\n", PTT_TEXT_MAGIC, PTT_FORMAT_VERSION) < 0)
			return -EIO;
		for (; s->meta_done < n; s->meta_done++) {
			const char *l = ptt_reader_meta_line(r, s->meta_done);
			if (!include_end && strcmp(l, "end") == 0)
				break;
			if (fprintf(s->out, "# %s\n", l) < 0)
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
		if (len + ll + 2 > cap) {
			cap = (len + ll + 2) * 2;
			char *nb = realloc(buf, cap);
			if (!nb) {
				free(buf);
				return PTT_E_NOMEM;
			}
			buf = nb;
		}
		memcpy(buf + len, l, ll);
		buf[len + ll] = '\n';
		len += ll + 1;
	}
	if (s->extra) {
		size_t el = strlen(s->extra);
		if (len + el > cap) {
			char *nb = realloc(buf, len + el);
			if (!nb) {
				free(buf);
				return PTT_E_NOMEM;
			}
			buf = nb;
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

int ptt_sink_event(struct ptt_sink *s, const struct ptt_reader *r, struct ptt_event *ev)
{
	int rc = sync_meta(s, r, 0);
	if (rc)
		return rc;
	if (s->form == PTT_FORM_TEXT) {
		if (sizeof s->text - s->used < LINE_MAX && (rc = text_flush(s)) != 0)
			return rc;
		char *line = s->text + s->used;
		size_t len = ptt_text_format_event(ev, line, LINE_MAX);
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
	if (!rc && s->form == PTT_FORM_TEXT)
		rc = text_flush(s);
	if (!rc && r && !ptt_reader_saw_end(r)) {
		/* the output is complete even when the input was cut (the cut was reported) */
		if (s->form == PTT_FORM_TEXT) {
			rc = fprintf(s->out, "# end\n") < 0 ? -EIO : 0;
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
				if (fprintf(s->out, "# %s\n", ptt_reader_meta_line(r, i)) < 0)
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

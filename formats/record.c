/* record.c - decoding a record's words into an event, and encoding back. */
#include <string.h>

#include "ptt_trace.h"

int ptt_event_argindex(const struct ptt_event *ev, const char *name)
{
	if (!ev->type)
		return -1;
	for (int i = 0; i < ev->type->nargs; i++)
		if (strcmp(ev->type->argname[i], name) == 0)
			return i;
	return -1;
}

uint64_t ptt_event_arg(const struct ptt_event *ev, const char *name, uint64_t dflt)
{
	int i = ptt_event_argindex(ev, name);
	return i < 0 ? dflt : ev->arg[i];
}

/* Sign-extend 32-bit kinds so that arg[] holds the value as a C int64 would. */
static uint64_t widen(unsigned kind, uint32_t w)
{
	if (kind == PTT_ARG_I32)
		return (uint64_t)(int64_t)(int32_t)w;
	return w;
}

/* Internal: fill ev's arguments from its words (type already set and length checked). */
int ptt__decode_args(struct ptt_event *ev);
int ptt__decode_args(struct ptt_event *ev)
{
	const struct ptt_type *t = ev->type;
	uint32_t end = ev->nwords - 1; /* checksum word */
	uint32_t i = PTT_REC_HDR_WORDS;
	ev->nargs = t->nargs;
	ev->str[0] = 0;
	for (unsigned a = 0; a < t->nargs; a++) {
		unsigned k = t->argkind[a];
		unsigned n = ptt_arg_kind_words(k);
		if (k == PTT_ARG_STR) {
			size_t bytes = (size_t)(end - i) * 4;
			if (bytes >= sizeof ev->str)
				bytes = sizeof ev->str - 1;
			memcpy(ev->str, &ev->words[i], bytes);
			ev->str[bytes] = 0;
			ev->arg[a] = 0;
			i = end;
			continue;
		}
		if (i + n > end)
			return PTT_E_BADRECORD;
		ev->arg[a] = n == 1 ? widen(k, ev->words[i]) : ((uint64_t)ev->words[i + 1] << 32 | ev->words[i]);
		i += n;
	}
	return 0;
}

int ptt_event_encode(struct ptt_event *ev)
{
	const struct ptt_type *t = ev->type;
	if (!t)
		return PTT_E_UNKNOWN_TYPE;
	uint32_t i = PTT_REC_HDR_WORDS;
	for (unsigned a = 0; a < t->nargs; a++) {
		unsigned k = t->argkind[a];
		if (k == PTT_ARG_STR) {
			size_t len = strnlen(ev->str, sizeof ev->str - 1);
			size_t words = (len + 4) / 4; /* at least one NUL */
			if (i + words + 1 > PTT_REC_MAX_WORDS)
				return PTT_E_BADRECORD;
			memset(&ev->words[i], 0, words * 4);
			memcpy(&ev->words[i], ev->str, len);
			i += (uint32_t)words;
			continue;
		}
		ev->words[i++] = (uint32_t)ev->arg[a];
		if (ptt_arg_kind_words(k) == 2)
			ev->words[i++] = (uint32_t)(ev->arg[a] >> 32);
	}
	ev->nwords = i + 1;
	ptt_rec_put_header(ev->words, ptt_rec_word0(ev->id, ev->nwords), ev->ticks, ev->pid, ev->tid);
	ptt_rec_seal(ev->words, ev->nwords);
	return 0;
}

int ptt_event_decode(const struct ptt_types *ts, struct ptt_event *ev)
{
	if (ev->nwords < PTT_REC_MIN_WORDS || ev->nwords > PTT_REC_MAX_WORDS)
		return PTT_E_BADRECORD;
	ev->id = (uint16_t)ptt_rec_id(ev->words[0]);
	ev->type = ptt_types_get(ts, ev->id);
	if (!ev->type)
		return PTT_E_UNKNOWN_TYPE;
	ev->ticks = ptt_rec_ticks(ev->words);
	ev->pid = ptt_rec_pid(ev->words);
	ev->tid = ptt_rec_tid(ev->words);
	if ((uint32_t)PTT_REC_MIN_WORDS + ev->type->words > ev->nwords || ptt__decode_args(ev) != 0)
		return PTT_E_BADRECORD;
	return 0;
}

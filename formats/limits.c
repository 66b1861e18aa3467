/* limits.c - the limit events of a trace (PTT_EV_LIMIT) summed up and said in words, the same in every reader. */
#include <inttypes.h>
#include <stdio.h>

#include "ptt_trace.h"

static void add(struct ptt_limits *l, uint64_t t, uint64_t count, uint64_t lim, uint64_t need)
{
	if (t == 0 || t >= PTT_LIMIT_COUNT)
		t = 0; /* a table this reader does not know: still counted, said in general words */
	l->count[t] += count;
	if (lim > l->limit[t])
		l->limit[t] = lim;
	if (need > l->need[t])
		l->need[t] = need;
}

int ptt_limits_add(struct ptt_limits *l, const struct ptt_event *ev)
{
	if (ev->id != PTT_EV_LIMIT || !ev->type || ev->type->id != PTT_EV_LIMIT)
		return 0;
	add(l, ptt_event_argn(ev, PTT_ARGNAME_TABLE, 0), ptt_event_argn(ev, PTT_ARGNAME_COUNT, 0),
	    ptt_event_argn(ev, PTT_ARGNAME_LIMIT, 0), ptt_event_argn(ev, PTT_ARGNAME_NEED, 0));
	return 1;
}

int ptt_limits_add_record(struct ptt_limits *l, const uint32_t *w, uint32_t n)
{
	enum { A = PTT_REC_HDR_WORDS };
	if (n < A + 8 || ptt_rec_id(w[0]) != PTT_EV_LIMIT)
		return 0;
	add(l, w[A], (uint64_t)w[A + 2] << 32 | w[A + 1], (uint64_t)w[A + 4] << 32 | w[A + 3],
	    (uint64_t)w[A + 6] << 32 | w[A + 5]);
	return 1;
}

void ptt_limits_met(struct ptt_limits *l, unsigned table, uint64_t count, uint64_t limit, uint64_t need)
{
	if (table == 0 || table >= PTT_LIMIT_COUNT || count <= l->count[table])
		return;
	add(l, table, count - l->count[table], limit, need);
}

static int say(const struct ptt_limits *l, unsigned t, char *buf, size_t size)
{
	uint64_t n = l->count[t], lim = l->limit[t], need = l->need[t];
	const char *s = n == 1 ? "" : "s";
	switch (t) {
	case PTT_LIMIT_TARGET_UNKNOWN:
		return snprintf(buf, size, "%" PRIu64 " join%s, detach%s, cancel%s or name%s of a thread whose tid was not known (target 0)",
				n, s, n == 1 ? "" : "es", s, s);
	case PTT_LIMIT_MODULES:
		return snprintf(buf, size, "module table full after %" PRIu64 " objects: %" PRIu64 " loaded object%s may be announced again or not named", lim, n, s);
	case PTT_LIMIT_USER_TYPES:
		return snprintf(buf, size, "user event type table full after %" PRIu64 " types: %" PRIu64 " registration%s refused", lim, n, s);
	case PTT_LIMIT_STRING:
		return snprintf(buf, size, "%" PRIu64 " string%s (names, paths, commands) cut to %" PRIu64 " bytes, the longest was %" PRIu64,
				n, s, lim, need);
	case PTT_LIMIT_RINGS:
		return snprintf(buf, size, "every one of the %" PRIu64 " rings was taken: %" PRIu64 " event%s of threads without a ring lost (ptt-record -t)",
				lim, n, s);
	case PTT_LIMIT_RING_MAP:
		return snprintf(buf, size, "the kernel refused to map a ring (no address space: ulimit -v?): %" PRIu64 " event%s of threads without a ring lost",
				n, s);
	case PTT_LIMIT_STACK_DEPTH:
		return snprintf(buf, size, "%" PRIu64 " stack%s cut at %" PRIu64 " frames: the frames past it are not known (shown as \u2026(cut at %" PRIu64 " frames))",
				n, s, lim, lim);
	case PTT_LIMIT_PY_DEPTH:
		return snprintf(buf, size, "%" PRIu64 " stack%s with Python frames cut at %" PRIu64 ": the outer Python frames are not known (shown as \u2026(cut at %" PRIu64 " frames))",
				n, s, lim, lim);
	case PTT_LIMIT_PY_CODES:
		return snprintf(buf, size, "CPython code table full after %" PRIu64 " code objects (in %" PRIu64 " process%s): the frames of later ones are shown as \"python code not described\"",
				lim, n, n == 1 ? "" : "es");
	case PTT_LIMIT_EXEC_UNTRACED:
		return snprintf(buf, size, "%" PRIu64 " exec%s of a new image not traced: the program had closed the shared ring's descriptor, or used its number",
				n, s);
	case PTT_LIMIT_SHARED_MAPS:
		return snprintf(buf, size, "shared mapping table full after %" PRIu64 " mappings: %" PRIu64 " shared mapping%s not told to forked "
				"children (their objects there are per process)", lim, n, s);
	case PTT_LIMIT_FRAMES:
		return snprintf(buf, size, "%" PRIu64 " hold%s and wait%s in force forgotten: a thread had more than the %" PRIu64
				" kept at once (the oldest forgotten)", n, s, s, lim);
	default:
		return snprintf(buf, size, "%" PRIu64 " limit event%s of a kind this reader does not know", n, s);
	}
}

int ptt_limits_sentence(const struct ptt_limits *l, unsigned i, char *buf, size_t size)
{
	/* the known tables in order, the unknown ones (slot 0) last */
	for (unsigned k = 1; k <= PTT_LIMIT_COUNT; k++) {
		unsigned t = k % PTT_LIMIT_COUNT;
		if (!l->count[t] || i-- > 0)
			continue;
		say(l, t, buf, size);
		return 1;
	}
	return 0;
}

/* flight_file.c - ptt-record --flight's recording and snapshots as files (flight_file.h). */

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "flight_file.h"
#include "../../formats/ptt_trace.h"
#include "out_file.h"

/* The header and the user types so far. */
static int write_head(const struct record_info *in, struct ptt_writer *w, uint32_t *types_seen)
{
	size_t hsize = record_header_size(in->cmd);
	char *hdr = malloc(hsize);
	if (!hdr)
		return PTT_E_NOMEM;
	record_header(hdr, hsize, in);
	int rc = ptt_writer_meta(w, hdr, strlen(hdr));
	free(hdr);
	return rc ? rc : record_sync_types(in->shm, w, types_seen, NULL);
}

/*
 * Take the records of one of the flight mode's logs (shm.h: the names, the
 * stacks), words[0, cap), into k.  Returns the records the log could not
 * give (no room, or still being written).
 */
static uint64_t take_log(struct ptt_inforce *k, const struct ptt_shm_log *log, const uint32_t *words, uint32_t cap)
{
	uint64_t used = __atomic_load_n(&log->used, __ATOMIC_ACQUIRE), pos = 0, unread = 0;
	if (used > cap)
		used = cap;
	const uint32_t *rec;
	uint32_t n;
	/* up to a record still being written: the ones after it wait for the next snapshot */
	while ((rec = ptt_log_next(words, used, &pos, &n))) {
		if (!ptt_rec_sound(rec, n) || !ptt_inforce_takes(k, ptt_rec_id(rec[0]))) {
			unread++;
			continue;
		}
		ptt_inforce_take(k, rec, 0);
	}
	for (; pos < used; unread++) { /* count what is left, by lengths where they are written */
		n = ptt_rec_len(__atomic_load_n(&words[pos], __ATOMIC_ACQUIRE));
		if (n < PTT_REC_MIN_WORDS)
			break;
		pos += n;
	}
	return unread + __atomic_load_n(&log->lost, __ATOMIC_RELAXED);
}

/* The rings' history, after the names in force from the names log (the rings may have turned over since). */
static int write_history(const struct record_info *in, struct flight *f, struct ptt_writer *w, int live,
			 uint32_t *types_seen, uint64_t *torn)
{
	struct record_hook hook = { in->shm, types_seen, NULL, NULL, 0 };
	struct ptt_inforce *names = ptt_inforce_new();
	struct ptt_shm *s = in->shm;
	uint64_t names_lost = names ? take_log(names, &s->names_log, s->names, PTT_NAMES_WORDS) : 0;
	uint64_t stacks_lost = names ? take_log(names, &s->stacks_log, s->stack_recs, PTT_STACKS_WORDS) : 0;
	int rc = 0;
	char line[96];
	int len = 0;
	if (names_lost)
		len += snprintf(line, sizeof line, "names_lost %" PRIu64 "\n", names_lost);
	if (stacks_lost)
		len += snprintf(line + len, sizeof line - (size_t)len, "stacks_lost %" PRIu64 "\n", stacks_lost);
	if (len)
		rc = ptt_writer_meta(w, line, (size_t)len);
	long n = rc ? 0 : flight_write(f, w, in->clk, live, record_before, &hook, names, torn);
	ptt_inforce_free(names);
	return n < 0 ? (int)n : rc;
}

int flight_file_write(const struct record_info *in, struct flight *f, int fd, int code, uint64_t *events)
{
	struct ptt_writer *w;
	int rc = ptt_writer_open(&w, fd, in->o->zlevel);
	if (rc)
		return rc;
	ptt_writer_set_compressor(w, in->o->compressor);
	ptt_writer_set_compact(w, 1);
	uint32_t types_seen = 0;
	uint64_t torn = 0;
	rc = write_head(in, w, &types_seen);
	if (!rc)
		rc = write_history(in, f, w, code < 0, &types_seen, &torn);
	*events = ptt_writer_events(w);
	char end[512];
	int len = snprintf(end, sizeof end, "end_ticks %" PRIu64 "\nevents %" PRIu64 "\nlost 0\ntorn %" PRIu64 "\nprocesses %u\n",
			   record_ticks(in->shm), *events, torn, in->shm->attached);
	if (code >= 0) /* the end, not a snapshot */
		snprintf(end + len, sizeof end - (size_t)len, "exit_status %d\n", code);
	if (!rc)
		rc = ptt_writer_end(w, end, strlen(end));
	int rc2 = ptt_writer_close(w);
	return rc ? rc : rc2;
}

struct snapshot {
	const struct record_info *in;
	struct flight *f;
	uint64_t events;
};

static int fill_snapshot(int fd, void *ctx)
{
	struct snapshot *sn = ctx;
	return flight_file_write(sn->in, sn->f, fd, -1, &sn->events);
}

void flight_file_snapshot(const struct record_info *in, struct flight *f, unsigned k)
{
	char name[PATH_MAX + 32], failed[PATH_MAX + 96];
	snprintf(name, sizeof name, "%s.%u", in->o->output, k);
	struct snapshot sn = { in, f, 0 };
	int rc = out_replace(name, fill_snapshot, &sn, failed, sizeof failed);
	if (rc)
		fprintf(stderr, "ptt-record: %s: %s; the recording goes on\n", failed, ptt_strerror(rc));
	else if (!in->o->quiet)
		fprintf(stderr, "ptt-record: %s: flight snapshot, %" PRIu64 " events\n", name, sn.events);
}

/*
 * record_meta.h - what ptt-record writes around the program's records: the
 * header lines, the user types as the program registers them, and the hook
 * that runs before each record is written (types, then object names, then
 * the keeper's view for the next rotated file).
 */
#ifndef PTT_RECORD_META_H
#define PTT_RECORD_META_H

#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "../../formats/ptt_trace.h"
#include "../shm.h"
#include "record_opts.h"

struct ptt_inforce;
struct rotate;

/* What the header tells of a recording. */
struct record_info {
	const struct record_opts *o;
	struct ptt_shm *shm;
	const struct ptt_clock *clk;
	uint64_t realtime;   /* CLOCK_REALTIME at the start, ns */
	pid_t child;         /* the program */
	char **cmd;          /* its command line */
};

static inline uint64_t record_clock_ns(clockid_t clk)
{
	struct timespec ts;
	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The rings' clock now: the time-stamp counter or CLOCK_MONOTONIC, as the runtime stamps. */
static inline uint64_t record_ticks(const struct ptt_shm *s)
{
	return s->use_tsc ? ptt_rdtsc() : record_clock_ns(CLOCK_MONOTONIC);
}

/* Room for record_header: the type lines and the rest, and the command line quoted whole, however long. */
size_t record_header_size(char **cmd);
/* The header's META lines into buf (size from record_header_size). */
void record_header(char *buf, size_t size, const struct record_info *in);
/*
 * Announce user types registered since the last call (*seen of them so
 * far), before their events; their lines are kept for the next rotated
 * file (rot, may be NULL).  0 or an error of the writer.
 */
int record_sync_types(struct ptt_shm *s, struct ptt_writer *w, uint32_t *seen, struct rotate *rot);

/* The state of record_before, the drain's and flight_write's hook. */
struct record_hook {
	struct ptt_shm *shm;
	uint32_t *types_seen;
	struct rotate *rot;    /* -m: where type lines are kept; NULL otherwise */
	struct ptt_inforce *keeper; /* -m: the names a later file repeats at its head */
	uint64_t last_ticks;   /* of the last record written (-m): the head of the next file is stamped with it */
};
/*
 * Called before each record is written.  A user type registered after this
 * pass's record_sync_types may already have events in a ring the pass reads
 * (registration happens before the type's first event, whose commit the pass
 * has seen): its line is written first, so no reader meets an event before
 * its type.
 */
int record_before(void *hook, const uint32_t *rec, struct ptt_writer *w);
/*
 * The builtin ids record_before must see (drain_set_hook): none but the user
 * types without a keeper; with one, every record (NULL), whose time it keeps
 * for the head of the next file.
 */
const uint8_t *record_before_sees(const struct record_hook *b);

#endif

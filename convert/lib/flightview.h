/*
 * flightview.h - a live flight recording's rings, read in place (ptt-top).
 *
 * A flight recording (ptt-record --flight) keeps each thread's last events
 * in a ring of the memory file the recorder shares with the program, and
 * writes its file only at the end (or on SIGUSR1).  A flight view maps that
 * file read-only (/proc/RECORDER/fd/N: the same user, no privilege) and,
 * at each sweep, copies every ring's records written since the last one,
 * reads the ring's `consumed` again (what its owner may have overwritten
 * during the copy lies before it), keeps the records past it whose
 * checksums hold, and writes them in time order as a binary trace into a
 * memory file of its own, which the reading pipeline follows as a file
 * being written.  It never writes into the shared memory: no thread waits
 * for it, and the recording is the same with or without it.  What a ring
 * overwrote before a sweep came, or what was still being written at a
 * sweep's cut and overwritten by the next, is not seen: counted.
 */
#ifndef PTT_FLIGHTVIEW_H
#define PTT_FLIGHTVIEW_H

#include <stdint.h>
#include <sys/types.h>

struct flightview;

struct flightview_counts {
	uint64_t records;     /* ring records written to the view */
	uint64_t overwritten; /* ring words overwritten by their owner before a sweep read them */
	uint64_t torn;        /* records whose checksum failed (caught in a wrap), not kept */
	uint64_t late;        /* records stamped before the previous sweep's cut: not kept, each told as a lost record */
	uint64_t from_ticks;  /* the view starts here: ring records before it were passed over */
	uint64_t from_ns;     /* the same in trace time */
};

/*
 * Open the flight rings of ptt-record rec: map its memory file read-only and
 * start the view's trace (header, the names in force from the names log, the
 * rings' records from from_ns before now, or, with whole, from where every
 * ring's history is whole).  *path: the trace to follow ("/proc/self/fd/N").
 * NULL and a message in err when it cannot.
 */
struct flightview *flightview_open(pid_t rec, int whole, uint64_t back_ns, char *path, size_t path_size, char *err,
				   size_t err_size);
/* A sweep: the records written since, up to a cut a slack before now, appended.  Returns 1 when some were, 0 if not,
 * negative on a write error.  last: the recorder is gone, every record committed is taken and the trace ended. */
int flightview_sweep(struct flightview *v, int last);
/* The view's trace is read up to offset: its memory before that is given back. */
void flightview_read_to(struct flightview *v, uint64_t offset);
const struct flightview_counts *flightview_counts(const struct flightview *v);
void flightview_close(struct flightview *v);

#endif

/*
 * rotate.h - ptt-record -m and -f: the trace in files FILE.0001, FILE.0002,
 * ... of about max_size bytes each, the oldest removed beyond max_files
 * (only when still the regular file the run wrote: out_file.h).
 * Each file after the first begins with the header and type lines so far,
 * its part number and the names in force (formats/inforce.h), so that any one file
 * decodes (ptt-trace(5)).
 */
#ifndef PTT_ROTATE_H
#define PTT_ROTATE_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#include "../../formats/ptt_trace.h"

struct ptt_inforce;
struct out_file;

struct rotate {
	const char *output;      /* FILE: the parts are FILE.0001, ... */
	uint64_t max_size;       /* 0: one file, never rotated */
	uint32_t max_files;      /* keep only the last N files (0: all) */
	uint32_t part;           /* the file being written, from 1 */
	uint64_t rotated_bytes;  /* written to the files before it */
	char *meta;              /* the header and every type line so far */
	size_t meta_len, meta_cap;
	uint64_t *part_events, *part_lost; /* the run's counts when part p began: [p - 1] */
	uint32_t part_cap;
	struct out_file *files;  /* what -f may remove of part p: [p - 1] (out_file.h) */
	uint32_t files_cap;
	uint32_t dropped;        /* the parts -f has removed or left (spared), from the first */
	uint32_t spared;         /* older parts -f left: not the regular files this run wrote (a symlink, ...) */
	const uint32_t *kept;    /* --streams: the parts the keeper has read (keeper.h), which -f may remove; NULL: all */
	char failed[PATH_MAX + 16]; /* the part that could not be opened */
};

void rotate_init(struct rotate *r, const char *output, uint64_t max_size, uint32_t max_files);
/* FILE.NNNN */
void rotate_name(const struct rotate *r, uint32_t part, char *buf, size_t size);
/* The same for the parts of output (the keeper's, keeper.h). */
void rotate_part_name(const char *output, uint32_t part, char *buf, size_t size);
/* The first part, opened before the program started (out_open, out_claim): what -f may remove of it. */
void rotate_first_file(struct rotate *r, const struct out_file *f);
/* Keep META lines (the header, type lines) for the head of the next file: 0 or PTT_E_NOMEM.  No-op without -m. */
int rotate_keep_meta(struct rotate *r, const char *text, size_t len);
/*
 * Once the current file has reached max_size: end it with a "continued"
 * line, continue in the next part (*out_fd replaced, the old one closed;
 * a part already there is emptied, as the program runs, or written
 * through when a symlink, FIFO or device: out_file.h),
 * drop the oldest beyond max_files (unless it is no longer the run's:
 * r->spared counts those) and write the new file's head: the kept
 * META, "part N", "head N" and the keeper's records stamped at last_ticks
 * (k NULL, --streams: "head end": the keeper thread appends them, keeper.h).
 * events and lost: the run's counts so far (for the summary of the kept
 * files).  0, a negative error of the writer, or -errno when the next part
 * cannot be opened (its name then in r->failed).
 */
int rotate_maybe(struct rotate *r, struct ptt_writer *w, int *out_fd, struct ptt_inforce *k, uint64_t last_ticks,
		 uint64_t events, uint64_t lost);
/*
 * -f: the parts beyond max_files go, oldest first, if still the regular
 * files this run wrote, but none the keeper has not read yet (r->kept):
 * called at each rotation and again as the keeper goes on, never waiting.
 */
void rotate_drop(struct rotate *r);
/* The run's events and lost counts when part began; 0 when not known. */
int rotate_counts_at(const struct rotate *r, uint32_t part, uint64_t *events, uint64_t *lost);
void rotate_free(struct rotate *r);

#endif

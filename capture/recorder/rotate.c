/* rotate.c - ptt-record -m/-f: continue the trace in the next file (rotate.h). */

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../formats/ptt_trace.h"
#include "out_file.h"
#include "rotate.h"

void rotate_init(struct rotate *r, const char *output, uint64_t max_size, uint32_t max_files)
{
	memset(r, 0, sizeof *r);
	r->output = output;
	r->max_size = max_size;
	r->max_files = max_files;
	r->part = 1;
}

void rotate_part_name(const char *output, uint32_t part, char *buf, size_t size)
{
	snprintf(buf, size, "%s.%04u", output, part);
}

void rotate_name(const struct rotate *r, uint32_t part, char *buf, size_t size)
{
	rotate_part_name(r->output, part, buf, size);
}

int rotate_keep_meta(struct rotate *r, const char *text, size_t len)
{
	if (!r || !r->max_size)
		return 0;
	if (PTT_GROW(r->meta, &r->meta_cap, r->meta_len + len + 1) != 0)
		return PTT_E_NOMEM;
	memcpy(r->meta + r->meta_len, text, len);
	r->meta_len += len;
	r->meta[r->meta_len] = 0;
	return 0;
}

/* The counts for the summary of the kept files: best effort, a part not noted is left out of it. */
static void note_part_start(struct rotate *r, uint64_t events, uint64_t lost)
{
	uint32_t part = r->part;
	if (part > r->part_cap) {
		uint32_t cap = part * 2 + 8;
		uint64_t *e = realloc(r->part_events, cap * sizeof *e), *l = e ? realloc(r->part_lost, cap * sizeof *l) : NULL;
		if (e)
			r->part_events = e;
		if (!l)
			return;
		r->part_lost = l;
		r->part_cap = cap;
	}
	r->part_events[part - 1] = events;
	r->part_lost[part - 1] = lost;
}

/* What the run may remove of part (out_file.h); a part not noted (no memory) is never removed. */
static void note_file(struct rotate *r, uint32_t part, const struct out_file *f)
{
	if (part > r->files_cap) {
		uint32_t cap = part * 2 + 8;
		struct out_file *n = realloc(r->files, cap * sizeof *n);
		if (!n)
			return;
		memset(n + r->files_cap, 0, (cap - r->files_cap) * sizeof *n);
		r->files = n;
		r->files_cap = cap;
	}
	r->files[part - 1] = *f;
}

void rotate_first_file(struct rotate *r, const struct out_file *f)
{
	if (r->max_size)
		note_file(r, 1, f);
}

void rotate_drop(struct rotate *r)
{
	uint32_t upto = r->kept ? __atomic_load_n(r->kept, __ATOMIC_ACQUIRE) : UINT32_MAX;
	while (r->max_files && r->dropped + r->max_files < r->part && r->dropped < upto) {
		uint32_t old = ++r->dropped;
		char name[PATH_MAX + 16];
		rotate_name(r, old, name, sizeof name);
		if (old > r->files_cap || !out_remove(name, &r->files[old - 1]))
			r->spared++;
	}
}

int rotate_counts_at(const struct rotate *r, uint32_t part, uint64_t *events, uint64_t *lost)
{
	if (part < 1 || part > r->part_cap)
		return 0;
	*events = r->part_events[part - 1];
	*lost = r->part_lost[part - 1];
	return 1;
}

/* The new file's head, after the switch: the META so far, its part number, the names in force
 * (k NULL, --streams: "head end", the keeper appends them once the part is written: keeper.h). */
static int write_head(struct rotate *r, struct ptt_writer *w, struct ptt_inforce *k, uint64_t last_ticks)
{
	int rc = ptt_writer_meta(w, r->meta, r->meta_len);
	if (!k) {
		char end[64];
		snprintf(end, sizeof end, "part %u\nhead end\n", r->part);
		return rc ? rc : ptt_writer_meta(w, end, strlen(end));
	}
	long head = ptt_inforce_write(k, NULL, 0, NULL, NULL);
	char line[64];
	snprintf(line, sizeof line, "part %u\nhead %ld\n", r->part, head); /* a file after the first starts mid-run */
	if (!rc)
		rc = ptt_writer_meta(w, line, strlen(line));
	if (!rc && head > 0) {
		long n = ptt_inforce_write(k, w, last_ticks, NULL, NULL);
		rc = n < 0 ? (int)n : 0;
	}
	return rc;
}

/*
 * The file ends with a "continued" line (it is not cut short: the next part
 * follows), and the next one begins with the header, its part number, and
 * the names in force as its first events, "head N" of them, which a reader
 * of the parts in order skips (ptt-trace(5)).
 */
int rotate_maybe(struct rotate *r, struct ptt_writer *w, int *out_fd, struct ptt_inforce *k, uint64_t last_ticks,
		 uint64_t events, uint64_t lost)
{
	if (!r->max_size || ptt_writer_bytes(w) < r->max_size)
		return 0;
	char name[PATH_MAX + 16];
	rotate_name(r, r->part + 1, name, sizeof name);
	struct out_file of;
	int fd = out_open(name, 0, &of), err = fd < 0 ? -errno : out_claim(fd, name, &of); /* the program runs */
	if (err) {
		if (fd >= 0)
			close(fd);
		snprintf(r->failed, sizeof r->failed, "%s", name);
		return err;
	}
	note_file(r, r->part + 1, &of);
	char line[PATH_MAX + 64];
	snprintf(line, sizeof line, "continued %s\n", name);
	int rc = ptt_writer_meta(w, line, strlen(line)); /* its bytes counted before the switch resets the count */
	if (!rc)
		rc = ptt_writer_sync(w);
	r->rotated_bytes += ptt_writer_bytes(w);
	if (!rc)
		rc = ptt_writer_switch(w, fd);
	close(*out_fd);
	*out_fd = fd;
	r->part++;
	note_part_start(r, events, lost);
	rotate_drop(r);
	return rc ? rc : write_head(r, w, k, last_ticks);
}

void rotate_free(struct rotate *r)
{
	free(r->meta);
	free(r->part_events);
	free(r->part_lost);
	free(r->files);
	r->files = NULL;
	r->files_cap = 0;
	r->meta = NULL;
	r->part_events = r->part_lost = NULL;
	r->part_cap = 0;
}

/* host.c - the host level of a merged trace (host.h). */

#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "host.h"

size_t host_format_meta(unsigned i, const struct host_info *h, const char *file, char *buf, size_t size)
{
	int n = snprintf(buf, size, "host %u %s %s %s %" PRId64 " ", i, h->name, h->machine_id[0] ? h->machine_id : "-",
			 h->boot_id[0] ? h->boot_id : "-", h->offset_ns);
	if (n < 0 || (size_t)n >= size)
		return size ? size - 1 : 0;
	return (size_t)n + ptt_text_quote(file, buf + n, size - (size_t)n);
}

int host_parse_meta(const char *value, unsigned *i, struct host_info *h)
{
	memset(h, 0, sizeof *h);
	int used = 0;
	if (sscanf(value, "%u %79s %39s %39s %" SCNd64 " %n", i, h->name, h->machine_id, h->boot_id, &h->offset_ns, &used) < 5 ||
	    *i > HOST_MAX)
		return PTT_E_BADTEXT;
	return 0;
}

int hosts_read(struct hosts *hs, const struct ptt_reader *r)
{
	memset(hs, 0, sizeof *hs);
	size_t lines = ptt_reader_meta_count(r);
	for (size_t l = 0; l < lines; l++) {
		const char *line = ptt_reader_meta_line(r, l);
		if (strncmp(line, "host ", 5))
			continue;
		struct host_info h;
		unsigned i;
		if (host_parse_meta(line + 5, &i, &h))
			return PTT_E_BADTEXT;
		if (i >= hs->n) {
			struct host_info *g = realloc(hs->h, (i + 1) * sizeof *g);
			if (!g)
				return PTT_E_NOMEM;
			memset(g + hs->n, 0, (i + 1 - hs->n) * sizeof *g);
			hs->h = g;
			hs->n = i + 1;
		}
		hs->h[i] = h;
	}
	return 0;
}

void hosts_free(struct hosts *hs)
{
	free(hs->h);
	memset(hs, 0, sizeof *hs);
}

const char *hosts_name(const struct hosts *hs, uint32_t id)
{
	unsigned i = host_of(id);
	if (!hs->n)
		return NULL;
	return i < hs->n && hs->h[i].name[0] ? hs->h[i].name : "?";
}

int hosts_peek(struct hosts *hs, int fd)
{
	char path[64];
	struct stat sb;
	memset(hs, 0, sizeof *hs);
	if (fstat(fd, &sb) || !S_ISREG(sb.st_mode))
		return 0; /* a pipe read here would be read for the caller no more */
	snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
	int own = open(path, O_RDONLY | O_CLOEXEC); /* an offset of its own: the caller's reader is not moved */
	if (own < 0)
		return 0;
	struct ptt_reader *r = NULL;
	static struct ptt_event ev;
	int rc = 0;
	if (ptt_reader_open(&r, own, path) == 0) {
		while (ptt_reader_next(r, &ev) < 0)
			; /* the first META block comes with the first event */
		rc = hosts_read(hs, r);
	}
	ptt_reader_close(r);
	close(own);
	return rc;
}

size_t host_id_phrase(const struct hosts *hs, uint32_t id, char *buf, size_t size)
{
	const char *h = hs ? hosts_name(hs, id) : NULL;
	int n = h ? snprintf(buf, size, "%" PRIu32 " on %s", host_local(id), h) : snprintf(buf, size, "%" PRIu32, id);
	return n < 0 ? 0 : (size_t)n < size ? (size_t)n : size ? size - 1 : 0;
}

void host_append(const struct hosts *hs, uint32_t id, char *buf, size_t size)
{
	const char *h = hs ? hosts_name(hs, id) : NULL;
	size_t l = strlen(buf);
	if (h && l < size)
		snprintf(buf + l, size - l, " on %s", h);
}

/*
 * host.h - the host, the level above the process in a trace that ptt-merge(1)
 * made of several: its pids and tids carry their host's number in the bits
 * above the kernel's own (the kernel never gives an id of 2^22 or more,
 * PID_MAX_LIMIT), so that the processes and threads of two hosts never
 * collide and every tool that keys by pid or tid keeps them apart.  Host 0
 * keeps the ids as recorded: a trace of one host reads as it always did.
 * The META block names each host ("host" lines, ptt-trace(5)).
 */
#ifndef PTT_HOST_H
#define PTT_HOST_H

#include <stddef.h>
#include <stdint.h>

#include "../../formats/ptt_trace.h"

#define HOST_ID_BITS 22
#define HOST_ID_MASK ((1u << HOST_ID_BITS) - 1)
#define HOST_MAX 1022u /* hosts of a merged trace: the bits left above the kernel's ids (all ones: -1 stays -1) */

static inline unsigned host_of(uint32_t id) { return id >> HOST_ID_BITS; }
static inline uint32_t host_local(uint32_t id) { return id & HOST_ID_MASK; }
/* id (a pid or tid, 0: none) of host h as a merged trace carries it */
static inline uint32_t host_id(unsigned h, uint32_t id) { return id ? (uint32_t)h << HOST_ID_BITS | id : 0; }

struct host_info {
	char name[80];        /* as the merged trace names it: the host name, "NAME#2" for a second run of it */
	char machine_id[40];  /* "-": not known */
	char boot_id[40];
	int64_t offset_ns;    /* the offset ptt-merge added to its clock (--offset) */
};
struct hosts {
	unsigned n;           /* 0: not a merged trace (one host, its ids as recorded) */
	struct host_info *h;
};
/* The hosts a merged trace's META lines name (r's header read): 0, or PTT_E_NOMEM / PTT_E_BADTEXT. */
int hosts_read(struct hosts *hs, const struct ptt_reader *r);
/* The same before reading: from the trace at fd (a file: ptt-paje's input, spooled when a pipe), read
 * apart through a descriptor of its own; a trace that cannot be peeked at reads as one host.  0 or as above. */
int hosts_peek(struct hosts *hs, int fd);
void hosts_free(struct hosts *hs);
/* "NAME" of the host of id (a pid or tid), or NULL when the trace is not merged. */
const char *hosts_name(const struct hosts *hs, uint32_t id);
/* "PID" as its host gave it, then " on HOST" in a merged trace (hs NULL or of no host: the id alone) */
size_t host_id_phrase(const struct hosts *hs, uint32_t id, char *buf, size_t size);
/* Append " on HOST" to the name in buf (of size bytes) in a merged trace: a process's name where the
 * output has no host level of its own (a JSON track) */
void host_append(const struct hosts *hs, uint32_t id, char *buf, size_t size);
/* The "host" META line of host i (without newline), and its parse: 0 or PTT_E_BADTEXT. */
size_t host_format_meta(unsigned i, const struct host_info *h, const char *file, char *buf, size_t size);
int host_parse_meta(const char *value, unsigned *i, struct host_info *h);

#endif

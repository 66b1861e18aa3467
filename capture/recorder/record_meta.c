/* record_meta.c - ptt-record's header, user types and per-record hook (record_meta.h). */

#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "../../formats/ptt_trace.h"
#include "record_meta.h"
#include "rotate.h"

size_t record_header_size(char **cmd)
{
	size_t size = 256 * 1024;
	for (int i = 0; cmd[i]; i++)
		size += 4 * strlen(cmd[i]) + 4; /* a byte takes at most 4 quoted, \xNN */
	return size;
}

/* The first word of a small file (/etc/machine-id, the kernel's boot id) into buf, "" when unreadable:
 * which machine and which boot a trace was recorded on, so that ptt-merge can tell hosts apart. */
static void read_id(const char *path, char *buf, size_t size)
{
	buf[0] = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	ssize_t n = read(fd, buf, size - 1);
	close(fd);
	buf[n > 0 ? n : 0] = 0;
	buf[strcspn(buf, " \t\n")] = 0;
}

void record_header(char *buf, size_t size, const struct record_info *in)
{
	const struct record_opts *o = in->o;
	const struct ptt_shm *s = in->shm;
	size_t n = 0;
	char host[256] = "";
	char machine[64], boot[64];
	gethostname(host, sizeof host - 1);
	host[strcspn(host, " \t\n")] = 0; /* a META value is one line; a host name has no blanks */
	read_id("/etc/machine-id", machine, sizeof machine);
	read_id("/proc/sys/kernel/random/boot_id", boot, sizeof boot);
	n += (size_t)snprintf(buf + n, size - n,
		"clock %s\nclock_hz %" PRIu64 "\nstart_ticks %" PRIu64 "\nrealtime_ns %" PRIu64 "\n"
		"pid %d\nhostname %s\nrecorder ptt-record %s\nring_bytes %" PRIu64 "\nmode %s\nlevel %d\nclasses %s\ncmdline",
		s->use_tsc ? "tsc" : "monotonic", in->clk->hz, s->start_ticks, in->realtime, (int)in->child, host,
		PTT_VERSION, o->ring_bytes, o->flight ? "flight" : o->discard ? "discard" : "lossless", o->level, o->classes);

	for (int i = 0; in->cmd[i] && n + 1 < size; i++) { /* whole: the buffer is sized for it (record_header_size) */
		buf[n++] = ' ';
		size_t q = ptt_text_quote(in->cmd[i], buf + n, size - n);
		n = n + q < size ? n + q : size - 1;
	}
	n += (size_t)snprintf(buf + n, size - n, "\n");
	if (machine[0])
		n += (size_t)snprintf(buf + n, size - n, "machine_id %s\n", machine);
	if (boot[0])
		n += (size_t)snprintf(buf + n, size - n, "boot_id %s\n", boot);
	if (o->flight) /* a flight recording: each thread's last ring_bytes of events, starting mid-run */
		n += (size_t)snprintf(buf + n, size - n, "flight %" PRIu64 "\n", o->ring_bytes);
	for (unsigned id = 0; id < PTT_EV_BUILTIN_COUNT && n < size - 512; id++) {
		n += ptt_text_format_type(ptt_builtin_type(id), buf + n, size - n);
		buf[n++] = '\n';
		buf[n] = 0;
	}
}

int record_sync_types(struct ptt_shm *s, struct ptt_writer *w, uint32_t *seen, struct rotate *rot)
{
	uint32_t n = __atomic_load_n(&s->ntypes, __ATOMIC_ACQUIRE);
	if (n > PTT_MAX_USER_TYPES)
		n = PTT_MAX_USER_TYPES;
	char buf[512 * 8];
	size_t len = 0;
	while (*seen < n && __atomic_load_n(&s->types[*seen].ready, __ATOMIC_ACQUIRE)) {
		const struct ptt_shm_type *st = &s->types[*seen];
		struct ptt_type t;
		memset(&t, 0, sizeof t);
		t.id = st->id;
		t.cls = PTT_CLASS_USER;
		t.level = st->level;
		t.source = PTT_SRC_PROGRAM;
		snprintf(t.name, sizeof t.name, "%.47s", st->name);
		if (ptt_type_parse_args(&t, st->args) == 0) {
			len += ptt_text_format_type(&t, buf + len, sizeof buf - len);
			buf[len++] = '\n';
		}
		(*seen)++;
		if (len > sizeof buf - 512)
			break;
	}
	if (len && rotate_keep_meta(rot, buf, len))
		return PTT_E_NOMEM;
	return len ? ptt_writer_meta(w, buf, len) : 0;
}

static __attribute__((noinline)) int announce_types(struct record_hook *b, unsigned id, struct ptt_writer *w)
{
	while (id - PTT_USER_ID_BASE >= *b->types_seen) {
		uint32_t had = *b->types_seen;
		int rc = record_sync_types(b->shm, w, b->types_seen, b->rot); /* a few types per call */
		if (rc)
			return rc;
		if (*b->types_seen == had)
			break; /* not announced by the program: the reader reports it */
	}
	return 0;
}

const uint8_t *record_before_sees(const struct record_hook *b)
{
	static const uint8_t none[PTT_EV_BUILTIN_COUNT];
	return b->keeper ? NULL : none;
}

/* Once per record written: the common case is a compare and a tail call. */
int record_before(void *hook, const uint32_t *rec, struct ptt_writer *w)
{
	struct record_hook *b = hook;
	unsigned id = ptt_rec_id(rec[0]);
	if (__builtin_expect(id >= PTT_USER_ID_BASE && id - PTT_USER_ID_BASE >= *b->types_seen, 0)) {
		int rc = announce_types(b, id, w);
		if (rc)
			return rc;
	}
	if (b->keeper) {
		ptt_inforce_see(b->keeper, rec, 0);
		b->last_ticks = ptt_rec_ticks(rec);
	}
	return 0;
}

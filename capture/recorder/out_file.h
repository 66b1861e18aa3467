/*
 * out_file.h - what ptt-record may do to the files it writes.
 *
 * The rules, stated once (ptt-record(1), FILES):
 *  - nothing that was there before the run is truncated before the program
 *    runs: the output is opened without O_TRUNC, and a regular file is
 *    emptied only once the program has started (out_claim);
 *  - nothing is removed but a regular file of the run's own: one this run
 *    made (O_EXCL), or a regular file it emptied and filled once the program
 *    ran (an older part of -m, removed by -f), and only while the name is
 *    still that same file (device and inode, not a symlink);
 *  - a symlink, a FIFO or a device is written through, never replaced,
 *    truncated (a FIFO's, a device's content is theirs) nor removed;
 *  - a snapshot is written beside its name and renamed into place only
 *    where a regular file or nothing was (out_replace).
 */
#ifndef PTT_OUT_FILE_H
#define PTT_OUT_FILE_H

#include <stddef.h>
#include <sys/types.h>

struct out_file {
	dev_t dev;
	ino_t ino;
	int ours;                /* this run may remove it: a regular file it made, or emptied and filled */
	int made;                /* out_open created it */
};

/*
 * Open name for writing, creating it (0644, less the umask) when nothing is
 * there, without truncating what is.  Follows a symlink as a shell's '>'
 * does; the file made at the end of a symlink that points nowhere is not
 * counted as made here.  wait_reader: a FIFO's open waits for its reader
 * (the output named at the start); else an open FIFO without a reader fails
 * at once (ENXIO: a part or a snapshot mid-run must not stall the recorder).
 * The descriptor, close-on-exec, or -1 with errno set.
 */
int out_open(const char *name, int wait_reader, struct out_file *f);
/*
 * The program runs: a regular file opened on fd is emptied now (through a
 * symlink: its target), and a regular file at name itself is from now on
 * the run's own.  Anything else is left as it is.  0 or -errno.
 */
int out_claim(int fd, const char *name, struct out_file *f);
/* Remove name if, and only if, it is still the regular file f says is the run's own.  1 when removed. */
int out_remove(const char *name, const struct out_file *f);
/*
 * Write a whole file to name with fill(fd, ctx) (0 or a negative error).
 * Where nothing or a regular file is at name, the bytes go to a new file
 * beside it (name.tmp, or name.tmpN when that is taken), renamed over name
 * once complete: name never holds a part.  A symlink, FIFO or device at
 * name is written through (a regular target emptied first), never
 * replaced; a directory is an error (-EISDIR).  0 or a negative error, the
 * file it concerns then in failed.
 */
int out_replace(const char *name, int (*fill)(int fd, void *ctx), void *ctx, char *failed, size_t size);

#endif

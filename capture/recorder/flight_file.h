/*
 * flight_file.h - ptt-record --flight's files: the recording written at
 * the end (exit, crash, kill) and the snapshots FILE.N taken on SIGUSR1,
 * each a whole trace: the header, the user types, the names in force, every
 * ring's history in time order (flight.h), the end.
 */
#ifndef PTT_FLIGHT_FILE_H
#define PTT_FLIGHT_FILE_H

#include <stdint.h>

#include "flight.h"
#include "record_meta.h"

/*
 * Write a flight recording to fd.  code: the program's exit status, or -1
 * for a snapshot (the program runs on).  0, or a negative error of the
 * writer; *events: the records written.
 */
int flight_file_write(const struct record_info *in, struct flight *f, int fd, int code, uint64_t *events);
/* A SIGUSR1 snapshot: FILE.k, complete before it appears under that name (out_replace: a symlink, FIFO or
 * device there is written through); a failure is reported and the recording goes on. */
void flight_file_snapshot(const struct record_info *in, struct flight *f, unsigned k);

#endif

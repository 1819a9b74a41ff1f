/*
 * progress.h - a progress bar on stderr for long work.
 *
 * Contract: progress_start() returns a bar for TOTAL units of work, or
 * NULL (every function accepts NULL) when ENABLED is false or stderr is
 * not a terminal, so pipes and log files never see it.  Nothing is drawn
 * before the work has taken half a second (short work stays silent), and
 * then at most ten times a second.  progress_end() erases the line it
 * drew and frees the bar.
 */
#ifndef PTPROF_SYMBOL_PROGRESS_H
#define PTPROF_SYMBOL_PROGRESS_H

#include <stdbool.h>
#include <stdint.h>

struct progress;

struct progress *progress_start(const char *what, uint64_t total, bool enabled);
void progress_update(struct progress *pb, uint64_t done);
void progress_end(struct progress *pb);

#endif

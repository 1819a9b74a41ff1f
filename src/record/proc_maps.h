/*
 * proc_maps.h - a live process's memory maps, read from /proc/PID/maps.
 *
 * Contract: maps_read() reads the kernel's text in one go (no pmap, no
 * shell) and parses it with maps_parse() (model/maps.h) into entries in
 * the kernel's order.  It is the recorder's only reader of the file; the
 * map model itself, its parser and its list operations are model/maps.h.
 */
#ifndef PTPROF_RECORD_PROC_MAPS_H
#define PTPROF_RECORD_PROC_MAPS_H

#include <sys/types.h>

#include "model/maps.h"

/* Returns 0, or -1 with errno set (ESRCH when the process is gone, EPROTO
 * when a line is malformed). */
int maps_read(pid_t pid, struct map_list *out);

#endif

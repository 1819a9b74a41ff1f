/*
 * debug_server.h - debug info from debuginfod servers, for binaries whose
 * debug info is neither in the file nor on this machine.
 *
 * The lookup itself is elfutils': dwfl_standard_find_debuginfo() tries the
 * .build-id tree of the debug roots, then the .gnu_debuglink name, then,
 * when $DEBUGINFOD_URLS names servers, asks them through elfutils' own
 * client (libdebuginfod, dlopened by libdw), which keeps what it fetched
 * in its cache ($DEBUGINFOD_CACHE_PATH, else $XDG_CACHE_HOME/
 * debuginfod_client).  This module is the policy around it, for the
 * analysis only: `ptprof record` never asks (it unsets DEBUGINFOD_URLS
 * once the target has its environment).
 *
 * Contract:
 *  - debug_server_begin() is called when a symbolizer starts: with servers
 *    named, it sets DEBUGINFOD_TIMEOUT to DEBUG_SERVER_TIMEOUT seconds
 *    unless the user set it (elfutils waits 90 s by default, per attempt),
 *    so a server that accepts connections and never answers costs
 *    seconds, not minutes.
 *  - debug_server_enabled(): servers are named and none has failed in
 *    this run.
 *  - debug_server_check_client(): with servers named, warns once when
 *    elfutils has no debuginfod client here (libdebuginfod1 missing).
 *  - debug_server_failed() takes the error a lookup for BINARY ended with
 *    (the negative errno libdebuginfod returned through libdwfl, as
 *    dwfl_reader_fetch_error() keeps it).  "Not there" (ENOENT) and "no
 *    server" (ENOSYS) are quiet; any other error (refused, timed out,
 *    unreachable, a bad answer) is one warning naming the servers, the
 *    reason and the binary, and switches the servers off for the rest of
 *    the run (DEBUGINFOD_URLS is unset), so every other binary does not
 *    wait for them again.
 */
#ifndef PTPROF_SYMBOL_DEBUG_SERVER_H
#define PTPROF_SYMBOL_DEBUG_SERVER_H

#include <elfutils/libdwfl.h>
#include <stdbool.h>

#define DEBUG_SERVER_TIMEOUT "5"

void debug_server_begin(void);
bool debug_server_enabled(void);
void debug_server_check_client(Dwfl *dwfl);
void debug_server_failed(const char *binary, int error);

#endif

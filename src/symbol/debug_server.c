/* debug_server.c - see debug_server.h */
#include "symbol/debug_server.h"
#include "util/log.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define URLS "DEBUGINFOD_URLS"

/* Whether the missing client was warned about: once per run. */
static bool client_checked;

static const char *urls(void)
{
    const char *u = getenv(URLS);
    return u && *u ? u : NULL;
}

void debug_server_begin(void)
{
    if (urls())
        setenv("DEBUGINFOD_TIMEOUT", DEBUG_SERVER_TIMEOUT, 0);
}

bool debug_server_enabled(void)
{
    return urls() != NULL;
}

void debug_server_check_client(Dwfl *dwfl)
{
    if (client_checked || !urls())
        return;
    client_checked = true;
    if (!dwfl_get_debuginfod_client(dwfl))
        pt_warn("DEBUGINFOD_URLS is set, but elfutils has no debuginfod client here "
                "(install libdebuginfod1): debug info comes from this machine only");
}

void debug_server_failed(const char *binary, int error)
{
    if (error == 0 || error == ENOENT || error == ENOSYS || !urls())
        return;
    const char *why = error == ECANCELED   ? "the transfer was stopped"
                      : error == ETIME     ? "no answer in time (DEBUGINFOD_TIMEOUT)"
                      : error == ETIMEDOUT ? "no answer in time (DEBUGINFOD_TIMEOUT)"
                                           : strerror(error);
    pt_warn("debuginfod %s: %s; no debug info for %s from there, and no more questions to it "
            "in this run (its addresses keep the names this machine gives)",
            urls(), why, binary);
    unsetenv(URLS);
}

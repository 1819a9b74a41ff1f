/* xmlcheck.c - see xmlcheck.h: well-formedness through xmllint. */
#include "xmlcheck.h"

#include "spawn.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *xmllint_path(void)
{
    const char *p = getenv("PTPROF_XMLLINT");
    return p && *p ? p : "/usr/bin/xmllint";
}

bool xmlcheck_available(void)
{
    return access(xmllint_path(), X_OK) == 0;
}

static bool run(const char *arg, const char *input, size_t input_len, char **messages)
{
    if (!xmlcheck_available()) {
        if (messages)
            *messages = strdup("xmllint is not installed (package libxml2-utils)");
        return false;
    }
    const char *argv[] = {xmllint_path(), "--noout", "--nonet", arg, NULL};
    struct spawn_opts o = {.argv = argv, .input = input, .input_len = input_len, .timeout_s = 120};
    struct spawn_result r;
    spawn_run(&o, &r);
    bool ok = WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0 && r.err_len == 0;
    if (messages) {
        if (!ok && r.err_len == 0)
            *messages = strdup(spawn_status_text(r.status));
        else
            *messages = strdup(r.err);
    }
    spawn_result_free(&r);
    return ok;
}

bool xmlcheck_file(const char *path, char **messages)
{
    if (access(path, R_OK) != 0) {
        if (messages) {
            size_t n = strlen(path) + 32;
            *messages = malloc(n);
            if (*messages)
                snprintf(*messages, n, "%s: cannot be read", path);
        }
        return false;
    }
    return run(path, NULL, 0, messages);
}

bool xmlcheck_string(const char *text, size_t len, char **messages)
{
    /* An empty document is not well-formed; spawn feeds /dev/null for NULL. */
    return run("-", len ? text : "", len, messages);
}

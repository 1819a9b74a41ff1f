/*
 * interp_target.c - before anything starts: is the target an interpreter
 * whose frames a module reads (interp.h)?  For a command, its program as
 * PATH finds it, or the interpreter its "#!" line names; for --pid, the
 * files its maps hold.  Only names are looked at: it decides the engine
 * (engine.c), while the module's probe decides what is read.
 */
#include "record/interp/interp.h"
#include "record/proc_maps.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Base names of the files that hold an interpreter a module reads. */
static const char *const interpreter_names[] = {"python3", "libpython3.", NULL};

static const char *interpreter_in(const char *path)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    for (size_t i = 0; interpreter_names[i]; i++)
        if (strncmp(base, interpreter_names[i], strlen(interpreter_names[i])) == 0)
            return base;
    return NULL;
}

/* NAME as execvp() would find it, into BUF. */
static bool find_program(const char *name, char *buf, size_t size)
{
    if (strchr(name, '/')) {
        snprintf(buf, size, "%s", name);
        return access(buf, X_OK) == 0;
    }
    const char *path = getenv("PATH");
    for (const char *dir = path ? path : "/usr/bin:/bin"; *dir;) {
        size_t len = strcspn(dir, ":");
        snprintf(buf, size, "%.*s/%s", (int)len, len ? dir : ".", name);
        if (access(buf, X_OK) == 0)
            return true;
        dir += len + (dir[len] == ':');
    }
    return false;
}

/* The interpreter named by PROGRAM's own name, its resolved name, or its
 * "#!" line ("#!/usr/bin/env python3" included). */
static bool program_is_interpreter(const char *program, char *what, size_t size)
{
    char path[4096], real[4096];
    if (!find_program(program, path, sizeof(path)))
        return false;
    const char *name = interpreter_in(path);
    if (!name && realpath(path, real))
        name = interpreter_in(real);
    if (name) {
        snprintf(what, size, "%s", name);
        return true;
    }
    char line[256] = "";
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    ssize_t n = read(fd, line, sizeof(line) - 1);
    close(fd);
    if (n < 3 || line[0] != '#' || line[1] != '!')
        return false;
    line[n] = '\0';
    line[strcspn(line, "\n")] = '\0';
    for (char *word = strtok(line + 2, " \t"); word; word = strtok(NULL, " \t")) {
        if ((name = interpreter_in(word)) != NULL) {
            snprintf(what, size, "%s", name);
            return true;
        }
    }
    return false;
}

bool interp_target_guess(char *const *argv, pid_t attach_pid, char *what, size_t size)
{
    if (!attach_pid)
        return argv && argv[0] && program_is_interpreter(argv[0], what, size);
    struct map_list maps = {0};
    bool found = false;
    if (maps_read(attach_pid, &maps) == 0) {
        for (size_t i = 0; i < maps.count && !found; i++) {
            const char *name =
                maps.entries[i].path[0] == '/' ? interpreter_in(maps.entries[i].path) : NULL;
            if (name) {
                snprintf(what, size, "%s", name);
                found = true;
            }
        }
    }
    maps_clear(&maps);
    return found;
}

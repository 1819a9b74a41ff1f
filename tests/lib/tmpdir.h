/*
 * tmpdir.h - scratch directories for tests.
 *
 * tmpdir_new() makes /tmp/ptprof-test-TAG-XXXXXX (failing the test if it
 * cannot) and returns its path, allocated.  tmpdir_path() joins a name to
 * it (allocated).  tmpdir_remove() deletes the directory and everything
 * below it; it does not free DIR.
 */
#ifndef PTPROF_TESTS_TMPDIR_H
#define PTPROF_TESTS_TMPDIR_H

char *tmpdir_new(const char *tag);
char *tmpdir_path(const char *dir, const char *name);
void tmpdir_remove(const char *dir);

#endif

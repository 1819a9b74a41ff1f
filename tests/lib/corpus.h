/*
 * corpus.h - replaying a kept fuzz corpus (tests/fuzz/corpus/NAME) in a
 * Criterion test, so every input that once found a new path stays a
 * regression test without a fuzzer.
 *
 * corpus_replay() calls FN once per file of CORPUS (a directory named from
 * the top of the source tree; $PTPROF_SRCDIR, else the working directory
 * or one of its parents) with the file's exact bytes in a buffer of
 * exactly that size (so a sanitizer sees any read past its end).  Files
 * named "valid-*" are marked must_load.  Standard error is silenced while
 * FN runs: damaged inputs are expected and their messages are noise.  It
 * fails the test when the directory is missing or empty, and returns the
 * number of files.
 */
#ifndef PTPROF_TESTS_CORPUS_H
#define PTPROF_TESTS_CORPUS_H

#include <stdbool.h>
#include <stddef.h>

struct corpus_file {
    const char *path; /* as opened, for messages */
    const char *name; /* the file's base name */
    const unsigned char *data;
    size_t len;
    bool must_load; /* a "valid-*" file */
};

char *corpus_dir(const char *corpus);
size_t corpus_replay(const char *corpus, void (*fn)(const struct corpus_file *f, void *ctx),
                     void *ctx);

#endif

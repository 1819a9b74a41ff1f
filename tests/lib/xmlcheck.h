/*
 * xmlcheck.h - is a file well-formed XML?  Asks a real XML parser,
 * libxml2's xmllint (package libxml2-utils), so our own writer is never
 * the judge of its own output.
 *
 * Contract: xmlcheck_file() runs "xmllint --noout --nonet PATH" (with a
 * timeout, through spawn.h) and returns true when it accepts the file.
 * *MESSAGES (when MESSAGES is not NULL) receives xmllint's diagnostics,
 * allocated, "" when there are none; free() it.  A file that does not
 * exist, or an xmllint that cannot run, is a failure with a message that
 * says so.  xmlcheck_string() checks LEN bytes of TEXT the same way (fed
 * on standard input).  Only well-formedness is checked (no DTD, no
 * schema): what a browser needs before it renders anything.
 * xmlcheck_available() tells whether xmllint is installed (PTPROF_XMLLINT
 * names another one).
 */
#ifndef PTPROF_TESTS_XMLCHECK_H
#define PTPROF_TESTS_XMLCHECK_H

#include <stdbool.h>
#include <stddef.h>

bool xmlcheck_available(void);
bool xmlcheck_file(const char *path, char **messages);
bool xmlcheck_string(const char *text, size_t len, char **messages);

#endif

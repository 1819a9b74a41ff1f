/*
 * svg.h - the safe way to put strings from a profile into SVG, XHTML or
 * HTML output, and the few pieces every such document shares.
 *
 * A profile comes from elsewhere: a symbol name may hold '<', '&', quotes,
 * "]]>", "</script>", control characters, bytes that are not UTF-8, or be
 * thousands of characters long.  Nothing in it may break the document or
 * inject markup or script.  The rules every writer under render/ follows:
 *  - profile strings go into the document only through svg_text() (text
 *    content and attribute values) or svg_js_string() (a string literal
 *    inside a <script>), never raw, never into CDATA;
 *  - script source is our own constant code, written with svg_script().
 *
 * Contract:
 *  - svg_text() writes the bytes of S as character data that is well-formed
 *    XML and HTML, both as element text and inside a single- or
 *    double-quoted attribute value: & < > " ' become &amp; &lt; &gt; &quot;
 *    &#39;; tab, LF and CR become &#9; &#10; &#13; (so attribute value
 *    normalisation keeps them); every other control character (C0, DEL,
 *    C1), every byte that does not start a valid UTF-8 sequence (overlong
 *    forms, surrogates, past U+10FFFF, cut short), and the non-characters
 *    U+FFFE and U+FFFF become U+FFFD, one per offending byte or code point.
 *    The output is always valid UTF-8.  svg_text_n() does the same for LEN
 *    bytes (a NUL among them is a control character).
 *  - svg_text_line() is svg_text() for one-line text (labels, names a
 *    script splits on newlines): tab, LF and CR become U+FFFD as well.
 *  - svg_text_max() writes at most MAX_CHARS characters of S as one line
 *    (code points after the replacements of svg_text_line()), ending in
 *    "..." when it had to cut, and returns the number of characters of S
 *    it wrote.  MAX_CHARS below 3 writes nothing and returns 0 unless S
 *    fits whole.
 *  - svg_utf8_chars() is the number of characters svg_text() would write
 *    for S (entities counting as one).
 *  - svg_js_string() writes S as a double-quoted string literal that is
 *    valid JSON and JavaScript and safe inside an HTML <script> element, an
 *    XML CDATA section and an XML attribute: besides JSON's escapes, < > &
 *    ' U+2028 U+2029 and every control character are \u escapes, invalid
 *    UTF-8 becomes \ufffd.  "</script>", "<!--" and "]]>" cannot appear.
 *  - svg_script() writes CODE as <script type="text/ecmascript"> with a
 *    CDATA section.  CODE is ours (a constant in the program); it must not
 *    contain "]]>": svg_script() aborts the program if it does, since that
 *    is a bug of ours, never of the input.
 *  - svg_open() writes the XML declaration and the <svg> start tag of a
 *    W x H document in user units (viewBox 0 0 W H), with the SVG and XLink
 *    namespaces; EXTRA_ATTRS (ours, may be NULL) is written inside the tag
 *    as is.  svg_close() writes the end tag.
 *  - svg_hash() is a stable 32-bit hash (FNV-1a) of S: the same name gets
 *    the same colour in every document and every run.
 *
 * Writers report write errors by checking ferror() on OUT at the end;
 * nothing here fails otherwise.
 */
#ifndef PTPROF_RENDER_SVG_H
#define PTPROF_RENDER_SVG_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

void svg_text(FILE *out, const char *s);
void svg_text_n(FILE *out, const char *s, size_t len);
void svg_text_line(FILE *out, const char *s);
size_t svg_text_max(FILE *out, const char *s, size_t max_chars);
size_t svg_utf8_chars(const char *s);

void svg_js_string(FILE *out, const char *s);
void svg_script(FILE *out, const char *code);

void svg_open(FILE *out, double w, double h, const char *extra_attrs);
void svg_close(FILE *out);

uint32_t svg_hash(const char *s);

#endif

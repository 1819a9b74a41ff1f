/* test_svg.c - render/svg.h: strings from a hostile profile put into SVG
 * (text, attributes, script string literals) always give a document that
 * xmllint accepts, with nothing of the string escaping into markup. */
#include "render/svg.h"

#include "../lib/xmlcheck.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What a symbol name may hold when the profile is made to hurt us. */
static const char *const hostile[] = {
    "a<b>c",
    "operator<<(std::ostream&, T const&)",
    "\"quoted\" and 'single'",
    "]]>",
    "</script><script>alert(1)</script>",
    "<!-- comment -->",
    "&amp; &#0; &#x1; &lt",
    "ctl\x01\x02\x08\x0b\x0c\x1b\x7f end",
    "tab\tnl\ncr\r",
    "\xc2\x80\xc2\x9f C1 controls",
    "bad \xff\xfe utf8 \xc3 cut \xe2\x82 overlong \xc0\xaf surrogate \xed\xa0\x80",
    "past max \xf4\x90\x80\x80 nonchar \xef\xbf\xbe \xef\xbf\xbf",
    "line sep \xe2\x80\xa8 para sep \xe2\x80\xa9",
    "caf\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac \xf0\x9f\x94\xa5",
    "",
};
#define NHOSTILE (sizeof(hostile) / sizeof(*hostile))

static char *doc_with(void (*body)(FILE *, const char *), const char *s, size_t *len)
{
    char *buf = NULL;
    FILE *f = open_memstream(&buf, len);
    cr_assert_not_null(f);
    svg_open(f, 100, 20, NULL);
    body(f, s);
    svg_close(f);
    fclose(f);
    return buf;
}

static void as_text_and_attrs(FILE *f, const char *s)
{
    fputs("<g class=\"", f);
    svg_text(f, s);
    fputs("\" data-n='", f);
    svg_text(f, s);
    fputs("'><title>", f);
    svg_text(f, s);
    fputs("</title><text>", f);
    svg_text_max(f, s, 7);
    fputs("</text></g>\n", f);
}

static void as_script_literal(FILE *f, const char *s)
{
    fputs("<script type=\"text/ecmascript\"><![CDATA[\nvar s = ", f);
    svg_js_string(f, s);
    fputs(";\n]]></script>\n<g onclick='f(", f);
    svg_js_string(f, s);
    fputs(")'/>", f);
}

Test(svg, hostile_strings_stay_well_formed)
{
    cr_assert(xmlcheck_available(), "xmllint missing: scripts/install-deps --test");
    for (size_t i = 0; i < NHOSTILE; i++) {
        void (*bodies[])(FILE *, const char *) = {as_text_and_attrs, as_script_literal};
        for (size_t b = 0; b < 2; b++) {
            size_t len;
            char *doc = doc_with(bodies[b], hostile[i], &len);
            char *msg;
            bool ok = xmlcheck_string(doc, len, &msg);
            cr_expect(ok, "string %zu, body %zu: xmllint: %s\n%s", i, b, msg, doc);
            free(msg);
            free(doc);
        }
    }
}

Test(svg, one_long_name_of_every_hostile_piece)
{
    char *big = malloc(8 * 5000 + 1);
    size_t n = 0;
    while (n < 5000 * 7) {
        const char *p = hostile[n % (NHOSTILE - 1)];
        size_t l = strlen(p);
        memcpy(big + n, p, l);
        n += l;
    }
    big[n] = '\0';
    size_t len;
    char *doc = doc_with(as_text_and_attrs, big, &len);
    char *msg;
    cr_expect(xmlcheck_string(doc, len, &msg), "xmllint: %s", msg);
    free(msg);
    free(doc);
    doc = doc_with(as_script_literal, big, &len);
    cr_expect(xmlcheck_string(doc, len, &msg), "xmllint: %s", msg);
    free(msg);
    free(doc);
    free(big);
}

static char *capture(void (*fn)(FILE *, const char *), const char *s)
{
    char *buf = NULL;
    size_t len;
    FILE *f = open_memstream(&buf, &len);
    fn(f, s);
    fclose(f);
    return buf;
}

Test(svg, text_escapes_markup_and_replaces_what_xml_forbids)
{
    char *t = capture(svg_text, "a<b>&\"c'\x01\xff\t");
    cr_expect_str_eq(t, "a&lt;b&gt;&amp;&quot;c&#39;\xef\xbf\xbd\xef\xbf\xbd&#9;");
    free(t);
    /* Valid multi-byte characters pass unchanged. */
    t = capture(svg_text, "caf\xc3\xa9 \xf0\x9f\x94\xa5");
    cr_expect_str_eq(t, "caf\xc3\xa9 \xf0\x9f\x94\xa5");
    free(t);
    /* One replacement per bad byte: a cut sequence does not eat the next character. */
    t = capture(svg_text, "\xe2\x82x");
    cr_expect_str_eq(t, "\xef\xbf\xbd\xef\xbf\xbdx");
    free(t);
}

Test(svg, js_string_cannot_close_script_or_cdata)
{
    char *t = capture(svg_js_string, "</script>]]><!--\"\\\n\xe2\x80\xa8\x01\xff");
    cr_expect_str_eq(t, "\"\\u003c/script\\u003e]]\\u003e\\u003c!--\\\"\\\\\\n\\u2028\\u0001"
                        "\\ufffd\"");
    free(t);
}

static void max5(FILE *f, const char *s)
{
    svg_text_max(f, s, 5);
}

Test(svg, text_max_cuts_on_characters)
{
    char *t = capture(max5, "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9");
    cr_expect_str_eq(t, "\xc3\xa9\xc3\xa9...");
    free(t);
    t = capture(max5, "<<<<<");
    cr_expect_str_eq(t, "&lt;&lt;&lt;&lt;&lt;");
    free(t);
    cr_expect_eq(svg_utf8_chars("\xc3\xa9x\xff"), 3);
}

Test(svg, hash_is_stable)
{
    cr_expect_eq(svg_hash(""), 2166136261u);
    cr_expect_eq(svg_hash("main"), svg_hash("main"));
    cr_expect_neq(svg_hash("main"), svg_hash("mainx"));
}

Test(svg, text_line_keeps_names_on_one_line)
{
    char *t = capture(svg_text_line, "a\nb\tc\rd<");
    cr_expect_str_eq(t, "a\xef\xbf\xbd"
                        "b\xef\xbf\xbd"
                        "c\xef\xbf\xbd"
                        "d&lt;");
    free(t);
    t = capture(max5, "x\ny");
    cr_expect_str_eq(t, "x\xef\xbf\xbdy");
    free(t);
}

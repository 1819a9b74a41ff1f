/* test_browser_check.c - the checks the report tests rely on can fail:
 * tests/lib/browser.h sees console errors, uncaught exceptions, blank
 * pages and XML parse errors in headless Chromium, and tests/lib/xmlcheck.h
 * rejects a document that is not well-formed. */
#include "../lib/browser.h"
#include "../lib/spawn.h"
#include "../lib/xmlcheck.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *dir;

static void setup(void)
{
    dir = test_mkdtemp();
    cr_assert(browser_available(), "chromium missing: scripts/install-deps --test");
}

static void teardown(void)
{
    test_rmtree(dir);
    free(dir);
}

static char *write_page(const char *name, const char *text)
{
    char *path = NULL;
    cr_assert(asprintf(&path, "%s/%s", dir, name) > 0);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs(text, f);
    fclose(f);
    return path;
}

#define SVG_HEAD                                                                                   \
    "<?xml version=\"1.0\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"400\" "            \
    "height=\"300\">"

static void open_page(const char *path, const char *suffix, struct browser_page *pg)
{
    struct browser_opts o = {.path = path, .suffix = suffix, .width = 400, .height = 300};
    browser_open(&o, pg);
}

TestSuite(browser_check, .init = setup, .fini = teardown, .timeout = 300);

Test(browser_check, drawn_page_without_messages_is_clean)
{
    char *p = write_page("ok.svg", SVG_HEAD "<rect width=\"200\" height=\"100\" fill=\"#c33\"/>"
                                            "<text x=\"10\" y=\"150\">hello</text></svg>\n");
    struct browser_page pg;
    open_page(p, NULL, &pg);
    char *d = browser_page_describe(&pg);
    cr_expect(browser_page_clean(&pg), "%s", d);
    cr_expect_gt(pg.stats.nonbg, 0.1, "%s", d);
    cr_expect(strstr(pg.dom, "hello"), "the DOM dump holds the document: %s", pg.dom);
    free(d);
    browser_page_free(&pg);
    free(p);
}

Test(browser_check, console_error_and_exception_are_seen)
{
    char *p = write_page("err.svg", SVG_HEAD "<rect width=\"200\" height=\"100\"/>"
                                             "<script><![CDATA[console.error('boom ' + 6*7);"
                                             "nosuchfunction();]]></script></svg>\n");
    struct browser_page pg;
    open_page(p, NULL, &pg);
    char *d = browser_page_describe(&pg);
    cr_expect(pg.ran, "%s", d);
    cr_expect_not(browser_page_clean(&pg), "%s", d);
    cr_assert_eq(pg.nconsole, 2, "%s", d);
    cr_expect(strstr(pg.console[0], "boom 42"), "%s", d);
    cr_expect(strstr(pg.console[1], "Uncaught") && strstr(pg.console[1], "nosuchfunction"), "%s",
              d);
    free(d);
    browser_page_free(&pg);
    free(p);
}

Test(browser_check, blank_page_is_blank)
{
    char *p = write_page("blank.html", "<!DOCTYPE html><html><body></body></html>\n");
    struct browser_page pg;
    open_page(p, NULL, &pg);
    char *d = browser_page_describe(&pg);
    cr_expect(pg.ran, "%s", d);
    cr_expect(pg.blank, "%s", d);
    cr_expect_not(browser_page_clean(&pg), "%s", d);
    free(d);
    browser_page_free(&pg);
    free(p);
}

Test(browser_check, scripts_see_the_url_suffix)
{
    /* How tests drive a page's interactive code: a query string read on load. */
    char *p = write_page("q.svg", SVG_HEAD "<text id=\"t\" x=\"10\" y=\"50\">x</text><script>"
                                           "<![CDATA[document.getElementById('t').textContent="
                                           "'got '+location.search;]]></script></svg>\n");
    struct browser_page pg;
    open_page(p, "?s=hot", &pg);
    char *d = browser_page_describe(&pg);
    cr_expect(browser_page_clean(&pg), "%s", d);
    cr_expect(strstr(pg.dom, "got ?s=hot"), "%s", pg.dom);
    free(d);
    browser_page_free(&pg);
    free(p);
}

Test(browser_check, malformed_xml_fails_both_checks)
{
    char *p = write_page("bad.svg", SVG_HEAD "<text x=\"10\" y=\"50\">a < b & c</text></svg>\n");
    char *msg;
    cr_expect_not(xmlcheck_file(p, &msg), "xmllint accepted a bare '<'");
    cr_expect_neq(strlen(msg), 0, "xmllint says why");
    free(msg);
    struct browser_page pg;
    open_page(p, NULL, &pg);
    cr_expect(pg.parse_error, "chromium's parse error page: %s", pg.dom);
    cr_expect_not(browser_page_clean(&pg));
    browser_page_free(&pg);
    free(p);
}

Test(browser_check, xmlcheck_accepts_well_formed_and_rejects_bad_bytes)
{
    char *msg;
    const char good[] = SVG_HEAD "<text>caf\xc3\xa9 &amp; &lt;</text></svg>";
    cr_expect(xmlcheck_string(good, sizeof(good) - 1, &msg), "%s", msg);
    free(msg);
    const char ctl[] = SVG_HEAD "<text>a\x01</text></svg>";
    cr_expect_not(xmlcheck_string(ctl, sizeof(ctl) - 1, &msg), "a control character");
    free(msg);
    const char utf[] = SVG_HEAD "<text>a\xff</text></svg>";
    cr_expect_not(xmlcheck_string(utf, sizeof(utf) - 1, &msg), "invalid UTF-8");
    free(msg);
    cr_expect_not(xmlcheck_file("/nonexistent/x.svg", &msg));
    free(msg);
}

/* test_html_report.c - render/html_report.h: the page of report --html is
 * well-formed whatever the profile's names hold, carries every row and
 * figure, and lets no input become markup or script. */
#include "../lib/xmlcheck.h"
#include "analyze/keys.h"
#include "render/html_report.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const hostile[] = {
    "<script>alert(1)</script>",     "a & b \"quoted\" 'single' <tag attr=\"x\">",
    "]]> and <![CDATA[ inside",      "</script><script>alert(2)</script>",
    "ctl\x01\x02\x1b\x7f chars",     "bad utf-8 \xff\xfe\xc3 end",
    "<!-- comment --> &amp; &#x3c;",
};

struct page {
    char *text;
    size_t len;
};

/* One row per hostile name (keys binary,procedure), plus one 5000-char name. */
static void make_report(struct report *r, char **long_name)
{
    memset(r, 0, sizeof(*r));
    cr_assert_eq(key_spec_parse("binary,procedure", &r->keys, (char[80]){0}, 80), 0);
    r->metric = *metric_builtin(METRIC_CPU);
    size_t n = sizeof(hostile) / sizeof(hostile[0]) + 1;
    r->rows = calloc(n, sizeof(*r->rows));
    *long_name = malloc(5001);
    memset(*long_name, 'x', 5000);
    (*long_name)[5000] = '\0';
    for (size_t i = 0; i < n; i++) {
        const char *name = i < n - 1 ? hostile[i] : *long_name;
        char *id = NULL;
        cr_assert_geq(asprintf(&id, "bin<%zu>%c%s", i, KEY_SEP, name), 0);
        r->rows[i].id = id;
        r->rows[i].self[Q_CPU] = r->rows[i].total[Q_CPU] = (double)(n - i);
        r->rows[i].self[Q_SAMPLES] = r->rows[i].total[Q_SAMPLES] = (double)(n - i) * 10;
        r->base[Q_CPU] += (double)(n - i);
        r->base[Q_SAMPLES] += (double)(n - i) * 10;
    }
    r->nrows = n;
    r->totals.runs = 1;
    r->totals.samples = r->base[Q_SAMPLES];
    r->totals.cpu_s = r->base[Q_CPU];
    r->totals.duration_s = 2;
}

static void free_report(struct report *r)
{
    for (size_t i = 0; i < r->nrows; i++)
        free(r->rows[i].id);
    free(r->rows);
}

static void write_page(const struct html_report *h, struct page *pg)
{
    FILE *f = open_memstream(&pg->text, &pg->len);
    cr_assert_not_null(f);
    cr_assert_eq(html_report_write(f, h), 0);
    fclose(f);
}

static size_t count(const char *text, const char *needle)
{
    size_t n = 0;
    for (const char *p = text; (p = strstr(p, needle)); p += strlen(needle))
        n++;
    return n;
}

Test(html_report, hostile_names_stay_text_and_the_page_is_well_formed)
{
    struct report r;
    char *long_name;
    make_report(&r, &long_name);
    const char *files[] = {"run<1>&.data", "run\"2\xff.data"};
    struct html_report h = {.title = "prog <&> \xfe", .report = &r, .files = files, .nfiles = 2};
    struct page pg;
    write_page(&h, &pg);

    char *messages = NULL;
    cr_expect(xmlcheck_string(pg.text, pg.len, &messages), "not well-formed: %s", messages);
    free(messages);
    /* Our one script, and no markup from the names. */
    cr_expect_eq(count(pg.text, "<script"), 1, "%s", pg.text);
    cr_expect_eq(count(pg.text, "alert("), 4, "each name is a cell and its tooltip");
    cr_expect_null(strstr(pg.text, "<tag"));
    cr_expect_null(strstr(pg.text, "<!-- comment"));
    cr_expect_not_null(strstr(pg.text, "&lt;script&gt;alert(1)&lt;/script&gt;"));
    /* Every row, with its exact sort value. */
    cr_expect_eq(count(pg.text, "<tr>"), r.nrows + 1);
    cr_expect_not_null(strstr(pg.text, "data-v=\"8\""));
    /* The long name is shortened on screen and whole in its tooltip. */
    cr_expect_not_null(strstr(pg.text, long_name));
    cr_expect_not_null(strstr(pg.text, "xxx...</td>"));
    free(pg.text);
    free(long_name);
    free_report(&r);
}

Test(html_report, figures_are_embedded_whole_and_comparison_shown)
{
    struct report r;
    char *long_name;
    make_report(&r, &long_name);
    /* "<svg/>" is "PHN2Zy8+" in base64; the second needs padding. */
    struct html_figure figs[] = {
        {"flame", "Flame <graph>", "<svg/>", 6, 1200, 400},
        {"timeline", "Timeline", "<svg/>x", 7, 0, 300},
    };
    struct compare_row rows[] = {
        {.id = r.rows[0].id, .baseline = 2, .values = (double[]){3}, .errors = (double[]){1}},
        {.id = r.rows[1].id, .baseline = 1, .values = (double[]){0.5}, .errors = (double[]){-0.5}},
    };
    struct compare_result cmp = {.keys = r.keys,
                                 .opts = {.metric = *metric_builtin(METRIC_CPU)},
                                 .nprofiles = 1,
                                 .rows = rows,
                                 .nrows = 2};
    const char *files[] = {"a.data", "b.data"};
    const char *names[] = {"a <base>", "b"};
    struct html_report h = {.title = "t",
                            .report = &r,
                            .files = files,
                            .nfiles = 2,
                            .figures = figs,
                            .nfigures = 2,
                            .comparison = &cmp,
                            .names = names};
    struct page pg;
    write_page(&h, &pg);
    char *messages = NULL;
    cr_expect(xmlcheck_string(pg.text, pg.len, &messages), "not well-formed: %s", messages);
    free(messages);
    cr_expect_not_null(strstr(pg.text, "data:image/svg+xml;base64,PHN2Zy8+\""));
    cr_expect_not_null(strstr(pg.text, "data:image/svg+xml;base64,PHN2Zy8+eA==\""));
    cr_expect_not_null(strstr(pg.text, "<a href=\"#flame\">Flame &lt;graph&gt;</a>"));
    cr_expect_not_null(strstr(pg.text, "<section id=\"comparison\">"));
    cr_expect_not_null(strstr(pg.text, "a &lt;base&gt;"));
    cr_expect_not_null(strstr(pg.text, "class=\"up\" data-v=\"1\""));
    cr_expect_not_null(strstr(pg.text, "class=\"down\" data-v=\"-0.5\""));
    free(pg.text);
    free(long_name);
    free_report(&r);
}

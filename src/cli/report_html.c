/* report_html.c - see report_html.h */
#include "cli/report_html.h"
#include "analyze/compare.h"
#include "render/html_report.h"
#include "util/log.h"
#include "util/outfile.h"
#include "util/xalloc.h"

#include <stdlib.h>
#include <string.h>

/* The page's title: the first profile's file name, and how many more. */
static char *page_title(char **files, size_t nfiles)
{
    const char *slash = strrchr(files[0], '/');
    const char *base = slash && slash[1] ? slash + 1 : files[0];
    if (nfiles == 1)
        return xstrdup(base);
    return xasprintf("%s and %zu more", base, nfiles - 1);
}

int report_html(const struct analysis_args *an, char **files, size_t nfiles,
                const struct report *mean, const struct report *reports, const char *out)
{
    struct compare_result cmp;
    bool compared = nfiles > 1;
    char **names = NULL;
    if (compared) {
        const struct report **others = xcalloc(nfiles - 1, sizeof(*others));
        for (size_t i = 1; i < nfiles; i++)
            others[i - 1] = &reports[i];
        struct compare_options co = {.metric = an->metric,
                                     .error = ERR_ERROR,
                                     .aggregate = AGG_RMSE,
                                     .limit_pct = -1,
                                     .threshold_pct = 0.5};
        compare_reports(&reports[0], others, nfiles - 1, &co, &cmp);
        free(others);
        names = analysis_profile_names(NULL, files, nfiles);
    }
    char *title = page_title(files, nfiles);
    struct html_report page = {
        .title = title,
        .report = mean,
        .files = (const char *const *)files,
        .nfiles = nfiles,
        .comparison = compared ? &cmp : NULL,
        .names = (const char *const *)names,
    };
    int rc = PT_EXIT_OK;
    struct outfile *of = outfile_open(out);
    if (!of) {
        rc = PT_EXIT_USAGE;
    } else {
        if (html_report_write(outfile_stream(of), &page) != 0) {
            pt_err("report: cannot write %s", out);
            outfile_abort(of);
            rc = PT_EXIT_USAGE;
        } else if (outfile_commit(of) != 0) {
            rc = PT_EXIT_USAGE;
        }
    }
    free(title);
    if (compared) {
        compare_free(&cmp);
        for (size_t i = 0; i < nfiles; i++)
            free(names[i]);
        free(names);
    }
    return rc;
}

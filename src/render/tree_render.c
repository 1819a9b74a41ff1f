/* tree_render.c - see tree_render.h */
#include "render/tree_render.h"
#include "render/csv.h"
#include "render/json.h"
#include "render/text_table.h"
#include "util/xalloc.h"

#include <stdlib.h>
#include <string.h>

struct ctx {
    FILE *out;
    const struct calltree *t;
    const struct metric *m;
    const struct metric *share; /* what percentages are shares of: metric_share() */
    double threshold, base;
    enum render_format format;
    struct text_table *table;
    char *path;
    size_t path_len, path_cap;
    size_t hidden;
};

static double node_value(const struct ctx *c, uint32_t id, bool total)
{
    return calltree_value(c->t, id, c->m, total);
}

static double pct(const struct ctx *c, uint32_t id, bool total)
{
    double v = calltree_value(c->t, id, c->share, total);
    return c->base > 0 ? 100.0 * v / c->base : 0;
}

/* Node ID's children: those the tree left out are hidden too. */
static void count_left_out(struct ctx *c, uint32_t id)
{
    c->hidden += calltree_left_out(c->t, id);
}

static bool shown(struct ctx *c, uint32_t id)
{
    if (c->threshold < 0 || pct(c, id, true) >= c->threshold)
        return true;
    c->hidden++;
    return false;
}

static void text_node(struct ctx *c, uint32_t id, size_t depth)
{
    const struct calltree_node *n = &c->t->nodes[id];
    char v[64];
    text_table_row(c->table);
    text_table_cellf(c->table, "%.2f", pct(c, id, true));
    text_table_cellf(c->table, "%.2f", pct(c, id, false));
    format_metric(v, sizeof(v), c->m, node_value(c, id, true));
    text_table_cell(c->table, v);
    char *key = key_display(strtab_get(c->t->keys, n->key));
    char *line = xasprintf("%*s%s", (int)(2 * depth), "", key);
    text_table_cell(c->table, line);
    free(line);
    free(key);
}

static void csv_node(struct ctx *c, uint32_t id, size_t depth)
{
    csv_field(c->out, c->path);
    fprintf(c->out, ",%zu,", depth);
    csv_number(c->out, node_value(c, id, false));
    fputc(',', c->out);
    csv_number(c->out, pct(c, id, false));
    fputc(',', c->out);
    csv_number(c->out, node_value(c, id, true));
    fputc(',', c->out);
    csv_number(c->out, pct(c, id, true));
    fputc('\n', c->out);
}

/* Depth first; PATH holds the keys from the root to the current node. */
static void walk(struct ctx *c, uint32_t id, size_t depth)
{
    size_t saved = c->path_len;
    const char *id_str = strtab_get(c->t->keys, c->t->nodes[id].key);
    char *key = key_display(id_str);
    size_t kl = strlen(key);
    c->path = xgrow(c->path, &c->path_cap, c->path_len + kl + 2, 1);
    if (c->path_len)
        c->path[c->path_len++] = ';';
    memcpy(c->path + c->path_len, key, kl + 1);
    c->path_len += kl;
    free(key);

    if (c->format == RENDER_CSV)
        csv_node(c, id, depth);
    else
        text_node(c, id, depth);
    for (uint32_t k = c->t->nodes[id].first_child; k != CALLTREE_NONE;
         k = c->t->nodes[k].next_sibling)
        if (shown(c, k))
            walk(c, k, depth + 1);
    count_left_out(c, id);
    c->path_len = saved;
    c->path[saved] = '\0';
}

static void json_node(struct ctx *c, uint32_t id)
{
    const struct calltree_node *n = &c->t->nodes[id];
    char *key = key_display(strtab_get(c->t->keys, n->key));
    fputs("{\"key\":", c->out);
    json_string(c->out, key);
    free(key);
    fputs(",\"self\":", c->out);
    json_number(c->out, node_value(c, id, false));
    fputs(",\"self_pct\":", c->out);
    json_number(c->out, pct(c, id, false));
    fputs(",\"total\":", c->out);
    json_number(c->out, node_value(c, id, true));
    fputs(",\"total_pct\":", c->out);
    json_number(c->out, pct(c, id, true));
    fputs(",\"children\":[", c->out);
    bool first = true;
    for (uint32_t k = n->first_child; k != CALLTREE_NONE; k = c->t->nodes[k].next_sibling) {
        if (!shown(c, k))
            continue;
        if (!first)
            fputc(',', c->out);
        first = false;
        json_node(c, k);
    }
    count_left_out(c, id);
    fputs("]}", c->out);
}

int render_tree(FILE *out, const struct calltree *t, const struct metric *m, double threshold_pct,
                enum render_format format, int width)
{
    struct ctx c = {.out = out, .t = t, .m = m, .threshold = threshold_pct, .format = format};
    const struct calltree_node *root = &t->nodes[0];
    c.share = metric_share(m);
    c.base = calltree_value(t, 0, c.share, true);
    if (format == RENDER_JSON) {
        fputs("{\"schema\":\"ptprof-tree/1\",\"metric\":", out);
        json_string(out, m->name);
        fputs(",\"total\":", out);
        json_number(out, m->kind == METRIC_POWER ? report_mean_power(&t->totals)
                                                 : node_value(&c, 0, true));
        fputs(",\"tree\":[", out);
        bool first = true;
        for (uint32_t k = root->first_child; k != CALLTREE_NONE; k = t->nodes[k].next_sibling) {
            if (!shown(&c, k))
                continue;
            if (!first)
                fputs(",\n", out);
            first = false;
            json_node(&c, k);
        }
        count_left_out(&c, 0);
        fprintf(out, "],\"hidden_nodes\":%zu}\n", c.hidden);
    } else {
        if (format == RENDER_CSV) {
            fputs("path,depth,self,self_pct,total,total_pct\n", out);
        } else {
            render_totals(out, &t->totals, width);
            fputc('\n', out);
            c.table = text_table_new();
            text_table_column(c.table, "total %", ALIGN_RIGHT, false);
            text_table_column(c.table, "self %", ALIGN_RIGHT, false);
            text_table_column(c.table, m->title, ALIGN_RIGHT, false);
            char *h = key_spec_header(&t->spec);
            text_table_column(c.table, h, ALIGN_LEFT, true);
            free(h);
        }
        for (uint32_t k = root->first_child; k != CALLTREE_NONE; k = t->nodes[k].next_sibling)
            if (shown(&c, k))
                walk(&c, k, 0);
        count_left_out(&c, 0);
        if (c.table) {
            text_table_print(c.table, out, width);
            text_table_free(c.table);
            if (c.hidden)
                fprintf(out, "(%zu subtree%s under %g%% not shown)\n", c.hidden,
                        c.hidden == 1 ? "" : "s", threshold_pct);
        }
    }
    free(c.path);
    return fflush(out) != 0 || ferror(out) ? -1 : 0;
}

/* SPDX-License-Identifier: Apache-2.0 */
/* What `codenib eval` shows: the Acc@k table for a terminal, and a
 * Markdown report with a hand-drawn SVG bar chart next to it.  Everything
 * reads the metrics object of cn_eval_score, so a report can be redrawn
 * from a saved metrics.json. */
#include "cn_eval.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- the columns: every level@k ----------------------------------------- */

/* Name-based levels (file 3, module 2, function 2) or range-based ones
 * (file 4, function 2, loc-hit 1). */
#define MAX_COLS 8

typedef struct column {
    const char *level;  /* the member of a levels object: "file" */
    const char *metric; /* "acc", or "hit" for loc-hit */
    int k;
    char label[24];     /* "function@10" */
} column;

/* Scores by ranges (the dataset has range gold): a metrics object with a
 * "localization" member. */
static json_object *member(json_object *o, const char *key);
static bool ranged(json_object *metrics)
{
    return member(metrics, "localization") != NULL;
}

/* The levels object the Acc@k columns of a metrics object read. */
static json_object *headline(json_object *metrics)
{
    json_object *loc = member(metrics, "localization");
    return loc ? member(loc, "overall") : member(metrics, "overall");
}

static size_t columns(column *cols, bool by_ranges)
{
    static const int file_ks[] = {1, 3, 5, 10}, fn_ks[] = {5, 10};
    size_t n = 0;
    if (by_ranges) {
        for (size_t j = 0; j < 4; j++, n++) {
            cols[n] = (column){"file", "acc", file_ks[j], ""};
            snprintf(cols[n].label, sizeof cols[n].label, "file@%d", file_ks[j]);
        }
        for (size_t j = 0; j < 2; j++, n++) {
            cols[n] = (column){"function", "acc", fn_ks[j], ""};
            snprintf(cols[n].label, sizeof cols[n].label, "function@%d", fn_ks[j]);
        }
        cols[n] = (column){"loc", "hit", 5, "loc-hit@5"};
        return n + 1;
    }
    for (int l = 0; l < CN_EVAL_LEVELS; l++) {
        const int *ks;
        size_t nks = cn_eval_level_ks((cn_eval_level)l, &ks);
        for (size_t j = 0; j < nks; j++, n++) {
            cols[n].level = cn_eval_level_name((cn_eval_level)l);
            cols[n].metric = "acc";
            cols[n].k = ks[j];
            snprintf(cols[n].label, sizeof cols[n].label, "%s@%d", cn_eval_level_name((cn_eval_level)l), ks[j]);
        }
    }
    return n;
}

/* levels[level][metric][k] (k < 0: levels[level][metric]), NAN when
 * absent or null (a level nobody scored). */
static double value_at(json_object *levels, const char *level, const char *metric, int k)
{
    json_object *lv, *m, *v;
    char key[16];

    if (levels == NULL || !json_object_object_get_ex(levels, level, &lv) ||
        !json_object_object_get_ex(lv, metric, &m) || m == NULL)
        return NAN;
    if (k < 0) {
        v = m;
    } else {
        snprintf(key, sizeof key, "%d", k);
        if (!json_object_object_get_ex(m, key, &v)) return NAN;
    }
    if (v == NULL || !(json_object_is_type(v, json_type_double) || json_object_is_type(v, json_type_int)))
        return NAN;
    return json_object_get_double(v);
}

static json_object *member(json_object *o, const char *key)
{
    json_object *v = NULL;
    return o && json_object_object_get_ex(o, key, &v) ? v : NULL;
}

static long long int_member(json_object *o, const char *key)
{
    json_object *v = member(o, key);
    return v ? (long long)json_object_get_int64(v) : 0;
}

static void put_value(cn_buf *b, double v, int width)
{
    if (isnan(v))
        cn_buf_printf(b, "%*s", width, "-");
    else
        cn_buf_printf(b, "%*.4f", width, v);
}

/* ---- groups: per repository, per language -------------------------------- */

typedef struct group_ref {
    const char *name;
    json_object *entry;
    long long instances;
} group_ref;

static int cmp_group_ref(const void *a, const void *b)
{
    const group_ref *x = a, *y = b;
    if (x->instances != y->instances) return x->instances > y->instances ? -1 : 1;
    return strcmp(x->name, y->name);
}

/* The groups of a metrics object ("per_repo", "per_language"), from the
 * range scores when there are some; largest first, the rows that move the
 * overall numbers most.  *out is malloc'd (NULL and 0 when none). */
static int groups_of(json_object *metrics, const char *key, group_ref **out, size_t *n_out)
{
    json_object *loc = member(metrics, "localization");
    json_object *g = member(loc ? loc : metrics, key);
    size_t n = g && json_object_is_type(g, json_type_object) ? (size_t)json_object_object_length(g) : 0, i = 0;
    group_ref *refs;

    *out = NULL;
    *n_out = 0;
    if (n == 0) return 0;
    if ((refs = calloc(n, sizeof *refs)) == NULL) return cn_error_set(CN_ENOMEM, "out of memory");
    json_object_object_foreach(g, name, val)
    {
        refs[i].name = name;
        /* name-based groups hold their levels under "levels" */
        refs[i].entry = member(val, "levels") ? member(val, "levels") : val;
        refs[i].instances = int_member(val, "instances");
        i++;
    }
    qsort(refs, n, sizeof *refs, cmp_group_ref);
    *out = refs;
    *n_out = n;
    return 0;
}

/* ---- the terminal table --------------------------------------------------- */

static void text_line(cn_buf *b, const char *name, int name_w, json_object *levels, const column *cols, size_t ncols)
{
    cn_buf_printf(b, "%-*s", name_w, name ? name : "");
    for (size_t c = 0; c < ncols; c++) {
        int w = (int)strlen(cols[c].label);
        cn_buf_puts(b, "  ");
        put_value(b, value_at(levels, cols[c].level, cols[c].metric, cols[c].k), w < 6 ? 6 : w);
    }
    cn_buf_putc(b, '\n');
}

static void text_header(cn_buf *b, const char *first, int name_w, const column *cols, size_t ncols)
{
    cn_buf_printf(b, "%-*s", name_w, first);
    for (size_t c = 0; c < ncols; c++) cn_buf_printf(b, "  %6s", cols[c].label);
    cn_buf_putc(b, '\n');
}

char *cn_eval_table_text(const cn_eval_row *rows, size_t n)
{
    column cols[MAX_COLS];
    size_t ncols = columns(cols, n > 0 && ranged(rows[0].metrics)), nlang = 0;
    int name_w = 4;
    cn_buf b = CN_BUF_INIT;
    group_ref *langs = NULL;

    for (size_t i = 0; i < n; i++) {
        size_t len = strlen(rows[i].name ? rows[i].name : "");
        if (len > (size_t)name_w) name_w = len > 200 ? 200 : (int)len;
    }
    text_header(&b, "name", name_w, cols, ncols);
    for (size_t i = 0; i < n; i++) text_line(&b, rows[i].name, name_w, headline(rows[i].metrics), cols, ncols);
    /* per language: each row's scores within each language of the run */
    if (n > 0 && groups_of(rows[0].metrics, "per_language", &langs, &nlang) == 0 && nlang > 0) {
        int w = 18; /* "language: name (n)" */
        for (size_t l = 0; l < nlang; l++)
            for (size_t i = 0; i < n; i++) {
                int len = snprintf(NULL, 0, "%s: %s (%lld)", langs[l].name, rows[i].name ? rows[i].name : "",
                                   langs[l].instances);
                if (len > w) w = len;
            }
        if (w > 200) w = 200;
        cn_buf_putc(&b, '\n');
        text_header(&b, "language: name (n)", w, cols, ncols);
        for (size_t l = 0; l < nlang; l++)
            for (size_t i = 0; i < n; i++) {
                json_object *loc = member(rows[i].metrics, "localization");
                json_object *g = member(member(loc ? loc : rows[i].metrics, "per_language"), langs[l].name);
                char label[256];
                snprintf(label, sizeof label, "%s: %s (%lld)", langs[l].name, rows[i].name ? rows[i].name : "",
                         langs[l].instances);
                text_line(&b, label, w, member(g, "levels") ? member(g, "levels") : g, cols, ncols);
            }
    }
    free(langs);
    if (b.oom) {
        cn_buf_free(&b);
        return NULL;
    }
    return cn_buf_steal(&b);
}

/* ---- Markdown ------------------------------------------------------------ */

/* Text inside a table cell: a '|' would start a new cell, a newline would
 * end the table, and '<' or '&' would be taken for HTML by a renderer. */
static void md_cell(cn_buf *b, const char *s)
{
    for (; s && *s; s++) {
        switch (*s) {
        case '|': cn_buf_puts(b, "\\|"); break;
        case '<': cn_buf_puts(b, "&lt;"); break;
        case '>': cn_buf_puts(b, "&gt;"); break;
        case '&': cn_buf_puts(b, "&amp;"); break;
        case '\n':
        case '\r': cn_buf_putc(b, ' '); break;
        default: cn_buf_putc(b, *s);
        }
    }
}

static void md_header(cn_buf *b, const char *first, const char *second, const column *cols, size_t ncols)
{
    cn_buf_printf(b, "| %s |", first);
    if (second) cn_buf_printf(b, " %s |", second);
    for (size_t c = 0; c < ncols; c++) cn_buf_printf(b, " %s |", cols[c].label);
    cn_buf_puts(b, "\n|---|");
    if (second) cn_buf_puts(b, "---:|");
    for (size_t c = 0; c < ncols; c++) cn_buf_puts(b, "---:|");
    cn_buf_putc(b, '\n');
}

static void md_values(cn_buf *b, json_object *levels, const char *metric, const column *cols, size_t ncols)
{
    for (size_t c = 0; c < ncols; c++) {
        cn_buf_puts(b, " ");
        put_value(b, value_at(levels, cols[c].level, metric ? metric : cols[c].metric, cols[c].k), 0);
        cn_buf_puts(b, " |");
    }
    cn_buf_putc(b, '\n');
}

static void md_acc_table(cn_buf *b, const cn_eval_row *rows, size_t n, const column *cols, size_t ncols)
{
    bool by_ranges = n > 0 && ranged(rows[0].metrics);

    cn_buf_puts(b, "## Acc@k\n\n"
                   "An instance is a hit at k when min(|gold|, k) gold items are among the first k "
                   "predictions (the LocAgent / SweRank definition).");
    if (by_ranges)
        cn_buf_puts(b, " Functions are matched by line ranges: a location matches a gold function of its "
                       "file when they overlap by at least half the function's length; loc-hit@5: one of "
                       "the first five locations holds a changed line.");
    cn_buf_puts(b, "\n\n");
    md_header(b, "name", NULL, cols, ncols);
    for (size_t i = 0; i < n; i++) {
        cn_buf_puts(b, "| ");
        md_cell(b, rows[i].name);
        cn_buf_puts(b, " |");
        md_values(b, headline(rows[i].metrics), NULL, cols, ncols);
    }
    cn_buf_putc(b, '\n');
    for (size_t i = 0; i < n; i++) {
        json_object *overall = headline(rows[i].metrics);
        json_object *missing = member(rows[i].metrics, "missing");
        cn_buf_puts(b, "- ");
        md_cell(b, rows[i].name);
        cn_buf_printf(b, ": %lld instances, %lld predicted, %zu without a prediction; scored: ",
                      int_member(rows[i].metrics, "instances"), int_member(rows[i].metrics, "predicted"),
                      missing ? json_object_array_length(missing) : (size_t)0);
        if (by_ranges)
            cn_buf_printf(b, "file %lld, function %lld, loc %lld; failed or missing %lld",
                          int_member(member(overall, "file"), "n"), int_member(member(overall, "function"), "n"),
                          int_member(member(overall, "loc"), "n"), int_member(overall, "failed"));
        else
            for (int l = 0; l < CN_EVAL_LEVELS; l++)
                cn_buf_printf(b, "%s%s %lld", l ? ", " : "", cn_eval_level_name((cn_eval_level)l),
                              int_member(member(overall, cn_eval_level_name((cn_eval_level)l)), "n"));
        cn_buf_putc(b, '\n');
    }
    cn_buf_putc(b, '\n');
}

static void md_other_metrics(cn_buf *b, const cn_eval_row *row, const column *cols, size_t ncols)
{
    static const struct {
        const char *key, *label;
    } metrics[] = {{"recall", "Recall@k"}, {"ndcg", "nDCG@k"}, {"map", "MAP@k"}, {"top", "Top-k (any hit)"}};
    json_object *overall = member(row->metrics, "overall");

    cn_buf_puts(b, "## Other metrics: ");
    md_cell(b, row->name);
    cn_buf_puts(b, "\n\nRecall, nDCG and MAP count each gold item once, at its first predicted rank; "
                   "Top-k counts an instance when any gold item is in the first k.\n\n");
    md_header(b, "metric", NULL, cols, ncols);
    for (size_t m = 0; m < sizeof metrics / sizeof metrics[0]; m++) {
        cn_buf_printf(b, "| %s |", metrics[m].label);
        md_values(b, overall, metrics[m].key, cols, ncols);
    }
    cn_buf_puts(b, "\nMatch: every gold item anywhere in the prediction (no cut-off).\n\n"
                   "| level | n | match |\n|---|---:|---:|\n");
    for (int l = 0; l < CN_EVAL_LEVELS; l++) {
        const char *name = cn_eval_level_name((cn_eval_level)l);
        cn_buf_printf(b, "| %s | %lld | ", name, int_member(member(overall, name), "n"));
        put_value(b, value_at(overall, name, "match", -1), 0);
        cn_buf_puts(b, " |\n");
    }
    cn_buf_putc(b, '\n');
}

/* A table of groups (per repository, per language) of the run; with
 * `all_rows`, every row (the references too) within each group. */
static int md_groups(cn_buf *b, const cn_eval_row *rows, size_t n, const char *key, const char *title,
                     const char *first, const column *cols, size_t ncols)
{
    group_ref *refs;
    size_t ng;
    int rc = groups_of(rows[0].metrics, key, &refs, &ng);

    if (rc < 0 || ng == 0) return rc;
    cn_buf_printf(b, "## %s: ", title);
    md_cell(b, rows[0].name);
    cn_buf_puts(b, n > 1 ? " and the references\n\nAcc@k within each group, a line per row.\n\n"
                         : "\n\nAcc@k within each group.\n\n");
    md_header(b, first, "instances", cols, ncols);
    for (size_t i = 0; i < ng; i++)
        for (size_t r = 0; r < n; r++) {
            json_object *loc = member(rows[r].metrics, "localization");
            json_object *g = r == 0 ? refs[i].entry : member(member(loc ? loc : rows[r].metrics, key), refs[i].name);
            if (r > 0 && member(g, "levels")) g = member(g, "levels");
            cn_buf_puts(b, "| ");
            md_cell(b, refs[i].name);
            if (n > 1) {
                cn_buf_puts(b, ": ");
                md_cell(b, rows[r].name);
            }
            cn_buf_printf(b, " | %lld |", refs[i].instances);
            md_values(b, g, NULL, cols, ncols);
        }
    cn_buf_putc(b, '\n');
    free(refs);
    return 0;
}

static int markdown(cn_buf *b, const char *title, const cn_eval_row *rows, size_t n)
{
    column cols[MAX_COLS];
    size_t ncols = columns(cols, n > 0 && ranged(rows[0].metrics));
    int rc = 0;

    cn_buf_puts(b, "# ");
    md_cell(b, title && *title ? title : "codenib eval");
    cn_buf_puts(b, "\n\n");
    md_acc_table(b, rows, n, cols, ncols);
    if (n > 0) {
        /* Recall, nDCG... are name-based: shown when names are the gold */
        if (!ranged(rows[0].metrics)) md_other_metrics(b, &rows[0], cols, ncols);
        rc = md_groups(b, rows, n, "per_language", "Per language", "language", cols, ncols);
        if (rc == 0) rc = md_groups(b, rows, 1, "per_repo", "Per repository", "repository", cols, ncols);
    }
    cn_buf_puts(b, "## Plot\n\n![Acc@k by level](acc_at_k.svg)\n");
    return rc;
}

/* ---- SVG ----------------------------------------------------------------- */

static void xml_text(cn_buf *b, const char *s)
{
    for (; s && *s; s++) {
        unsigned char c = (unsigned char)*s;
        switch (c) {
        case '&': cn_buf_puts(b, "&amp;"); break;
        case '<': cn_buf_puts(b, "&lt;"); break;
        case '>': cn_buf_puts(b, "&gt;"); break;
        case '"': cn_buf_puts(b, "&quot;"); break;
        case '\'': cn_buf_puts(b, "&apos;"); break;
        default:
            /* XML 1.0 forbids most control characters even as references. */
            cn_buf_putc(b, c < 0x20 && c != '\t' && c != '\n' && c != '\r' ? '?' : (char)c);
        }
    }
}

/* Colour-blind friendly and distinct in grey scale too; rows beyond the
 * eighth reuse them. */
static const char *const palette[] = {"#4269d0", "#efb118", "#ff725c", "#6cc5b0",
                                      "#3ca951", "#ff8ab7", "#a463f2", "#97bbf5"};

/* Geometry of the chart, in pixels. */
enum {
    SVG_LEFT = 48,     /* room for the y labels */
    SVG_RIGHT = 16,
    SVG_TOP = 52,      /* room for the title and the values of full bars */
    SVG_PLOT_H = 260,
    SVG_BAR_MAX = 22,
    SVG_GROUP_GAP = 18,
    SVG_LEGEND_ROW = 18,
};

static double approx_text_width(const char *s, double px)
{
    return (double)strlen(s ? s : "") * px * 0.6;
}

static void svg_legend(cn_buf *b, const cn_eval_row *rows, size_t n, double width, double y0)
{
    double x = SVG_LEFT, y = y0;

    for (size_t i = 0; i < n; i++) {
        double w = 16 + approx_text_width(rows[i].name, 11) + 18;
        if (x + w > width - SVG_RIGHT && x > SVG_LEFT) {
            x = SVG_LEFT;
            y += SVG_LEGEND_ROW;
        }
        cn_buf_printf(b, "<rect x=\"%.1f\" y=\"%.1f\" width=\"11\" height=\"11\" fill=\"%s\"/>", x, y - 10,
                      palette[i % (sizeof palette / sizeof palette[0])]);
        cn_buf_printf(b, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\">", x + 16, y);
        xml_text(b, rows[i].name);
        cn_buf_puts(b, "</text>\n");
        x += w;
    }
}

static size_t legend_rows(const cn_eval_row *rows, size_t n, double width)
{
    double x = SVG_LEFT;
    size_t lines = 1;

    for (size_t i = 0; i < n; i++) {
        double w = 16 + approx_text_width(rows[i].name, 11) + 18;
        if (x + w > width - SVG_RIGHT && x > SVG_LEFT) {
            x = SVG_LEFT;
            lines++;
        }
        x += w;
    }
    return lines;
}

static void svg_chart(cn_buf *b, const char *title, const cn_eval_row *rows, size_t n)
{
    column cols[MAX_COLS];
    size_t ncols = columns(cols, n > 0 && ranged(rows[0].metrics));
    /* Bars shrink as rows are added so the chart keeps a sensible width. */
    double bar = n <= 4 ? SVG_BAR_MAX : (n <= 12 ? 88.0 / (double)n : 7.0);
    double group = bar * (double)(n ? n : 1) + SVG_GROUP_GAP;
    double width = SVG_LEFT + group * (double)ncols + SVG_RIGHT;
    double axis_y = SVG_TOP + SVG_PLOT_H, legend_y = axis_y + 40;
    double height;
    double value_px = bar >= 18 ? 8 : 7;

    if (width < 560) width = 560;
    group = (width - SVG_LEFT - SVG_RIGHT) / (double)ncols;
    height = legend_y + (double)legend_rows(rows, n, width) * SVG_LEGEND_ROW + 4;

    cn_buf_printf(b,
                  "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
                  "viewBox=\"0 0 %.0f %.0f\" font-family=\"sans-serif\">\n",
                  width, height, width, height);
    cn_buf_puts(b, "<title>");
    xml_text(b, title && *title ? title : "Acc@k by level");
    cn_buf_puts(b, "</title>\n");
    cn_buf_printf(b, "<rect x=\"0\" y=\"0\" width=\"%.0f\" height=\"%.0f\" fill=\"#ffffff\"/>\n", width, height);
    cn_buf_printf(b, "<text x=\"%d\" y=\"20\" font-size=\"14\" font-weight=\"bold\">", SVG_LEFT);
    xml_text(b, title && *title ? title : "Acc@k by level");
    cn_buf_puts(b, "</text>\n");

    /* Gridlines and the y axis: 0 to 1 by 0.2. */
    for (int g = 0; g <= 5; g++) {
        double y = axis_y - SVG_PLOT_H * (double)g / 5.0;
        cn_buf_printf(b,
                      "<line x1=\"%d\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" stroke-width=\"1\"/>"
                      "<text x=\"%d\" y=\"%.1f\" font-size=\"10\" text-anchor=\"end\">%.1f</text>\n",
                      SVG_LEFT, y, width - SVG_RIGHT, y, g == 0 ? "#444444" : "#dddddd", SVG_LEFT - 6, y + 3.5,
                      (double)g / 5.0);
    }

    for (size_t c = 0; c < ncols; c++) {
        double gx = SVG_LEFT + group * (double)c;
        double x0 = gx + (group - bar * (double)n) / 2.0;

        cn_buf_printf(b, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" text-anchor=\"middle\">%s</text>\n",
                      gx + group / 2.0, axis_y + 16, cols[c].label);
        for (size_t i = 0; i < n; i++) {
            double v = value_at(headline(rows[i].metrics), cols[c].level, cols[c].metric, cols[c].k);
            double x = x0 + bar * (double)i, h, cx = x + bar / 2.0;

            if (isnan(v)) {
                cn_buf_printf(b, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"%.1f\" text-anchor=\"middle\">-</text>\n",
                              cx, axis_y - 3, value_px);
                continue;
            }
            v = v < 0 ? 0 : (v > 1 ? 1 : v);
            h = SVG_PLOT_H * v;
            cn_buf_printf(b, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\">", x + 1,
                          axis_y - h, bar - 2, h, palette[i % (sizeof palette / sizeof palette[0])]);
            cn_buf_puts(b, "<title>");
            xml_text(b, rows[i].name);
            cn_buf_printf(b, " %s: %.4f</title></rect>\n", cols[c].label, v);
            /* Narrow bars get their value turned upright so that
             * neighbours do not overwrite each other. */
            if (bar >= 18)
                cn_buf_printf(b,
                              "<text x=\"%.1f\" y=\"%.1f\" font-size=\"%.1f\" text-anchor=\"middle\">%.2f</text>\n",
                              cx, axis_y - h - 3, value_px, v);
            else
                cn_buf_printf(b,
                              "<text x=\"%.1f\" y=\"%.1f\" font-size=\"%.1f\" transform=\"rotate(-90 %.1f %.1f)\">"
                              "%.2f</text>\n",
                              cx + value_px / 3, axis_y - h - 3, value_px, cx + value_px / 3, axis_y - h - 3, v);
        }
    }
    svg_legend(b, rows, n, width, legend_y);
    cn_buf_puts(b, "</svg>\n");
}

/* ---- writing ----------------------------------------------------------- */

/* DIR/NAME all or nothing, so a reader (or a browser refreshing the
 * report) never sees half a file. */
static int write_atomic(const char *dir, const char *name, const cn_buf *text)
{
    char *path = cn_path_join(dir, name);
    int rc = path ? cn_file_write_atomic(path, text->data ? text->data : "", text->len)
                  : cn_error_set(CN_ENOMEM, "out of memory");
    free(path);
    return rc;
}

int cn_eval_report_write(const char *dir, const char *title, const cn_eval_row *rows, size_t n)
{
    cn_buf md = CN_BUF_INIT, svg = CN_BUF_INIT;
    int rc;

    if (mkdir(dir, 0755) != 0 && errno != EEXIST)
        return cn_error_set(CN_EIO, "%s: cannot create the report directory: %s", dir, strerror(errno));
    rc = markdown(&md, title, rows, n);
    if (rc == 0) svg_chart(&svg, title, rows, n);
    if (rc == 0 && (md.oom || svg.oom)) rc = cn_error_set(CN_ENOMEM, "%s: out of memory writing the report", dir);
    if (rc == 0) rc = write_atomic(dir, "acc_at_k.svg", &svg);
    if (rc == 0) rc = write_atomic(dir, "report.md", &md);
    cn_buf_free(&md);
    cn_buf_free(&svg);
    return rc;
}

/* The table and the JSON document of `parnassus evaluate` (see
 * style_report.h). */
#include "style_report.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "json_out.h"
#include "options.h"

enum { LABEL_WIDTH = 30, VALUE_WIDTH = 18 };

void pn_cli_note_name(int pitch, char *buf, size_t size)
{
    static const char *const names[12] = {"C",  "C#", "D",  "Eb", "E",  "F",
                                          "F#", "G",  "Ab", "A",  "Bb", "B"};
    if (pitch < 0 || pitch > 127) {
        snprintf(buf, size, "-");
        return;
    }
    snprintf(buf, size, "%s%d", names[pitch % 12], pitch / 12 - 1);
}

/* ------------------------------------------------------------------------ */
/* The table */

/* "0,4,7    31.2%": the most common value of a distribution and its share. */
static void mode_cell(const pn_style_stats *s, pn_style_dist d, char *buf, size_t size)
{
    const int32_t bin = s ? pn_style_mode_bin(s, d) : -1;
    if (bin < 0) {
        snprintf(buf, size, "-");
        return;
    }
    char label[64];
    pn_style_bin_label(d, bin, label, sizeof label);
    const int tenths = (int)lround(1000.0 * pn_style_share(s, d, bin)); /* 0..1000 */
    snprintf(buf, size, "%-9.20s %3d.%d%%", label, tenths / 10, tenths % 10);
}

static void rate_cell(const pn_style_stats *s, pn_style_rate r, char *buf, size_t size)
{
    const double v = s ? pn_style_rate_value(s, r) : NAN;
    if (isnan(v))
        snprintf(buf, size, "-");
    else
        snprintf(buf, size, "%.2f%%", 100.0 * v);
}

static void range_cell(const pn_style_stats *s, pn_style_dist d, char *buf, size_t size)
{
    if (!s || pn_style_dist_total(s, d) == 0) {
        snprintf(buf, size, "-");
        return;
    }
    char a[8], b[8], c[8];
    pn_cli_note_name(pn_style_quantile(s, d, 0.05), a, sizeof a);
    pn_cli_note_name(pn_style_quantile(s, d, 0.50), b, sizeof b);
    pn_cli_note_name(pn_style_quantile(s, d, 0.95), c, sizeof c);
    snprintf(buf, size, "%s %s %s", a, b, c);
}

int pn_cli_style_print(FILE *out, const pn_cli_evaluation *e)
{
    const pn_style_stats *in = e->input;
    const pn_style_stats *ref = e->reference ? &e->reference->stats : NULL;
    char a[64], b[64];
    for (int i = 0; i < e->num_sources; ++i)
        fprintf(out, "%-11s %s\n", i == 0 ? "input" : "", e->sources[i].summary);
    if (e->reference) {
        const pn_style_file *r = e->reference;
        fprintf(out, "%-11s %s (%s)%s%s\n", "reference", r->name ? r->name : "unnamed",
                pn_cli_basename(e->reference_file ? e->reference_file : "-"),
                r->description ? ": " : "", r->description ? r->description : "");
    } else {
        fprintf(out, "%-11s none\n", "reference");
    }
    fprintf(out, "%-11s %s\n\n", "copy4 with",
            e->training ? e->training : "no training set (copy4 not measured)");

    fprintf(out, "%-*s %-*s %s\n", LABEL_WIDTH, "totals", VALUE_WIDTH, "input", "reference");
    const int64_t *fields[3][2] = {{&in->pieces, ref ? &ref->pieces : NULL},
                                   {&in->sonorities, ref ? &ref->sonorities : NULL},
                                   {NULL, NULL}};
    static const char *const names[2] = {"pieces", "sonorities"};
    for (int i = 0; i < 2; ++i) {
        snprintf(a, sizeof a, "%" PRId64, *fields[i][0]);
        if (fields[i][1])
            snprintf(b, sizeof b, "%" PRId64, *fields[i][1]);
        else
            snprintf(b, sizeof b, "-");
        fprintf(out, "%-*s %-*s %s\n", LABEL_WIDTH, names[i], VALUE_WIDTH, a, b);
    }
    snprintf(a, sizeof a, "%" PRId64 " / %" PRId64, in->pieces_major, in->pieces_minor);
    if (ref)
        snprintf(b, sizeof b, "%" PRId64 " / %" PRId64, ref->pieces_major, ref->pieces_minor);
    else
        snprintf(b, sizeof b, "-");
    fprintf(out, "%-*s %-*s %s\n\n", LABEL_WIDTH, "pieces in major / minor keys", VALUE_WIDTH, a,
            b);

    fprintf(out, "%-*s %-*s %-*s %s\n", LABEL_WIDTH, "distribution (most common)", VALUE_WIDTH,
            "input", VALUE_WIDTH, "reference", "TV");
    for (int d = 0; d < PN_STYLE_NUM_DISTS; ++d) {
        const pn_style_dist id = (pn_style_dist)d;
        mode_cell(in, id, a, sizeof a);
        mode_cell(ref, id, b, sizeof b);
        const double tv = ref ? pn_style_tv(in, ref, id) : NAN;
        char t[32];
        if (isnan(tv))
            snprintf(t, sizeof t, "-");
        else
            snprintf(t, sizeof t, "%.3f", tv);
        fprintf(out, "%-*s %-*s %-*s %s\n", LABEL_WIDTH, pn_style_dist_get(id)->title, VALUE_WIDTH,
                a, VALUE_WIDTH, b, t);
    }
    fprintf(out, "\n%-*s %-*s %s\n", LABEL_WIDTH, "rate", VALUE_WIDTH, "input", "reference");
    for (int r = 0; r < PN_STYLE_NUM_RATES; ++r) {
        const pn_style_rate id = (pn_style_rate)r;
        rate_cell(in, id, a, sizeof a);
        rate_cell(ref, id, b, sizeof b);
        fprintf(out, "%-*s %-*s %s\n", LABEL_WIDTH, pn_style_rate_get(id)->title, VALUE_WIDTH, a,
                b);
    }
    fprintf(out, "\n%-*s %-*s %s\n", LABEL_WIDTH, "register (5% / 50% / 95%)", VALUE_WIDTH, "input",
            "reference");
    static const pn_style_dist ranges[4] = {PN_STYLE_RANGE_SOPRANO, PN_STYLE_RANGE_ALTO,
                                            PN_STYLE_RANGE_TENOR, PN_STYLE_RANGE_BASS};
    static const char *const voices[4] = {"soprano", "alto", "tenor", "bass"};
    for (int v = 0; v < 4; ++v) {
        range_cell(in, ranges[v], a, sizeof a);
        range_cell(ref, ranges[v], b, sizeof b);
        fprintf(out, "%-*s %-*s %s\n", LABEL_WIDTH, voices[v], VALUE_WIDTH, a, b);
    }
    fprintf(out, "\nTV: total variation distance, 0 (the same) .. 1 (nothing in common). The\n"
                 "ranges are registers and move with transposition; everything else does not\n"
                 "(the tonal profile and the key areas are relative to each piece's key).\n");
    return ferror(out) ? -1 : 0;
}

/* ------------------------------------------------------------------------ */
/* JSON */

/* A number, or null when it is not finite. */
static json_t *number(double x)
{
    return isfinite(x) ? json_real(x) : json_null();
}

/* The shares of a distribution, by label, nonzero bins only. */
static json_t *shares(const pn_style_stats *s, pn_style_dist d)
{
    json_t *obj = json_object();
    const pn_style_dist_info *di = pn_style_dist_get(d);
    const int64_t *c = pn_style_counts(s, d);
    for (int32_t i = 0; obj && i < di->size; ++i) {
        if (c[i] == 0)
            continue;
        char label[64];
        pn_style_bin_label(d, i, label, sizeof label);
        json_object_set_new(obj, label, json_real(pn_style_share(s, d, i)));
    }
    return obj;
}

static json_t *totals(const pn_style_stats *s)
{
    return json_pack("{sIsIsIsI}", "pieces", (json_int_t)s->pieces, "pieces_major",
                     (json_int_t)s->pieces_major, "pieces_minor", (json_int_t)s->pieces_minor,
                     "sonorities", (json_int_t)s->sonorities);
}

static json_t *quantiles(const pn_style_stats *s, pn_style_dist d)
{
    if (!s || pn_style_dist_total(s, d) == 0)
        return json_null();
    return json_pack("[iii]", (int)pn_style_quantile(s, d, 0.05),
                     (int)pn_style_quantile(s, d, 0.50), (int)pn_style_quantile(s, d, 0.95));
}

static json_t *string_or_null(const char *s)
{
    json_t *j = s ? pn_json_text(s) : NULL;
    return j ? j : json_null();
}

static json_t *build(const pn_cli_evaluation *e)
{
    const pn_style_stats *in = e->input;
    const pn_style_stats *ref = e->reference ? &e->reference->stats : NULL;
    json_t *root = json_object();
    json_object_set_new(root, "format", json_string("parnassus-evaluate/1"));
    json_t *inputs = json_array();
    for (int i = 0; i < e->num_sources; ++i) {
        const pn_cli_style_source *src = &e->sources[i];
        json_t *o = json_pack("{sosssIsI}", "file", string_or_null(src->file), "kind",
                              pn_cli_style_kind_name(src->kind), "pieces", (json_int_t)src->pieces,
                              "sonorities", (json_int_t)src->sonorities);
        if (o && src->kind == PN_CLI_STYLE_MIDI) {
            json_object_set_new(o, "labels", json_string(src->labels));
            json_object_set_new(o, "voices", json_integer(src->num_voices));
            json_object_set_new(o, "key", json_string(src->key));
        }
        if (o)
            json_object_set_new(o, "summary", string_or_null(src->summary));
        json_array_append_new(inputs, o);
    }
    json_object_set_new(root, "inputs", inputs);
    json_object_set_new(root, "input", totals(in));
    if (e->reference) {
        const pn_style_file *r = e->reference;
        json_t *o = totals(&r->stats);
        json_object_set_new(o, "file", string_or_null(e->reference_file));
        json_object_set_new(o, "name", string_or_null(r->name));
        json_object_set_new(o, "description", string_or_null(r->description));
        json_object_set_new(o, "mode", string_or_null(r->mode));
        json_object_set_new(root, "reference", o);
    } else {
        json_object_set_new(root, "reference", json_null());
    }
    if (e->training)
        json_object_set_new(root, "training",
                            json_pack("{sosI}", "description", string_or_null(e->training), "grams",
                                      (json_int_t)e->training_grams));
    else
        json_object_set_new(root, "training", json_null());

    json_t *dists = json_object();
    for (int d = 0; d < PN_STYLE_NUM_DISTS; ++d) {
        const pn_style_dist id = (pn_style_dist)d;
        json_t *o = json_object();
        json_object_set_new(o, "tv", number(ref ? pn_style_tv(in, ref, id) : NAN));
        json_object_set_new(o, "input_count", json_integer(pn_style_dist_total(in, id)));
        json_object_set_new(o, "input", shares(in, id));
        json_object_set_new(o, "reference_count",
                            ref ? json_integer(pn_style_dist_total(ref, id)) : json_null());
        json_object_set_new(o, "reference", ref ? shares(ref, id) : json_null());
        json_object_set_new(dists, pn_style_dist_get(id)->name, o);
    }
    json_object_set_new(root, "distributions", dists);

    json_t *rates = json_object();
    for (int r = 0; r < PN_STYLE_NUM_RATES; ++r) {
        const pn_style_rate id = (pn_style_rate)r;
        json_t *o = json_object();
        json_object_set_new(o, "input", number(pn_style_rate_value(in, id)));
        json_object_set_new(o, "input_count", json_integer(in->hits[r]));
        json_object_set_new(o, "input_total", json_integer(in->total[r]));
        json_object_set_new(o, "reference", number(ref ? pn_style_rate_value(ref, id) : NAN));
        json_object_set_new(o, "reference_count", ref ? json_integer(ref->hits[r]) : json_null());
        json_object_set_new(o, "reference_total", ref ? json_integer(ref->total[r]) : json_null());
        json_object_set_new(rates, pn_style_rate_get(id)->name, o);
    }
    json_object_set_new(root, "rates", rates);

    static const pn_style_dist ranges[4] = {PN_STYLE_RANGE_SOPRANO, PN_STYLE_RANGE_ALTO,
                                            PN_STYLE_RANGE_TENOR, PN_STYLE_RANGE_BASS};
    static const char *const voices[4] = {"soprano", "alto", "tenor", "bass"};
    json_t *reg = json_object();
    for (int v = 0; v < 4; ++v)
        json_object_set_new(reg, voices[v],
                            json_pack("{soso}", "input", quantiles(in, ranges[v]), "reference",
                                      quantiles(ref, ranges[v])));
    json_object_set_new(root, "ranges", reg);
    return root;
}

int pn_cli_style_json(FILE *out, const pn_cli_evaluation *e)
{
    json_t *root = build(e);
    char *text =
        root ? json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(17))
             : NULL;
    json_decref(root);
    if (!text) {
        fprintf(stderr, "parnassus evaluate: out of memory (or text that is not UTF-8) while "
                        "writing JSON\n");
        return -1;
    }
    fputs(text, out);
    fputc('\n', out);
    free(text);
    return ferror(out) ? -1 : 0;
}

/* The table, JSON document and CSV file of `parnassus sweep` (see
 * sweep_report.h). */
#include "sweep_report.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "json_out.h"
#include "options.h"

enum { MOST_KEPT_SHOWN = 4 };

const char *pn_sweep_reference_name(const pn_sweep_report *r)
{
    if (r->reference && r->reference->name)
        return r->reference->name;
    return r->reference_file ? pn_cli_basename(r->reference_file) : "reference";
}

const char *pn_sweep_fixed_name(const pn_sweep_request *req)
{
    return pn_sweep_knob_name(req->knob == PN_SWEEP_ALPHA ? PN_SWEEP_LOG2_LAMBDA_W
                                                          : PN_SWEEP_ALPHA);
}

double pn_sweep_fixed_value(const pn_sweep_request *req)
{
    return req->knob == PN_SWEEP_ALPHA ? req->settings.log2_lambda_w : req->settings.alpha;
}

/* ------------------------------------------------------------------------ */
/* Table */

/* A TV (3 decimals) or "-", right-aligned in width. */
static void print_tv(FILE *out, double v, int width)
{
    if (isfinite(v))
        fprintf(out, " %*.3f", width, v);
    else
        fprintf(out, " %*s", width, "-");
}

/* A share as a percentage or "-". */
static void print_percent(FILE *out, double v, int width)
{
    if (isfinite(v))
        fprintf(out, " %*.*f", width, 100.0 * v < 10.0 ? 2 : 1, 100.0 * v);
    else
        fprintf(out, " %*s", width, "-");
}

static void print_shares(FILE *out, const pn_sweep_figures *f)
{
    print_percent(out, f->root_position, 6);
    print_percent(out, f->stepwise_soprano, 6);
    print_percent(out, f->soprano_leaps, 6);
    print_percent(out, f->primary_bass, 6);
    print_percent(out, f->consonant, 6);
    print_percent(out, f->parallels, 6);
    print_percent(out, f->hidden, 6);
    print_percent(out, f->wide, 6);
    print_percent(out, f->crossing, 6);
}

static void print_seeds(FILE *out, const pn_sweep_request *req)
{
    for (int i = 0; i < req->num_seeds; ++i)
        fprintf(out, "%s%" PRIu64, i ? "," : "", req->seeds[i]);
}

int pn_sweep_print(FILE *out, const pn_sweep_report *r)
{
    const pn_sweep_request *req = r->req;
    const pn_sweep *sw = r->sweep;
    const pn_rule_set *rs = req->rules;
    const pn_style_stats *ref = r->reference ? &r->reference->stats : NULL;
    const char *knob = pn_sweep_knob_name(req->knob);
    fprintf(out, "sweep of %s over rule set %s (%s): %d rules\n", knob, rs->name, r->rules_file,
            (int)rs->num_rules);
    fprintf(out, "%d point%s from %g to %g; %s %g, lambda_p %g; %d steps per run, seed%s ",
            req->points, req->points == 1 ? "" : "s", req->from, req->to, pn_sweep_fixed_name(req),
            pn_sweep_fixed_value(req), req->settings.lambda_p, req->steps,
            req->num_seeds == 1 ? "" : "s");
    print_seeds(out, req);
    fprintf(out, "\nreference %s (%s, %" PRId64 " sonorities)\n\n", pn_sweep_reference_name(r),
            r->reference_file ? pn_cli_basename(r->reference_file) : "-",
            ref ? ref->sonorities : 0);

    fprintf(out, "%13s  %-14s  %-34s  %-34s %s\n", "", "rules kept", "TV to the reference (motion)",
            "shares (%)", "rates (%)");
    fprintf(out,
            "%13s  %4s %4s %4s  %6s %6s %6s %6s %6s  %6s %6s %6s %6s %6s %6s %6s %6s %6s  %6s  "
            "%7s\n",
            knob, "min", "med", "max", "chord", "sopr", "alto", "tenor", "bass", "root", "step",
            "leap", "I/IV/V", "cons", "par", "hidden", "wide", "cross", "sonor", "ms/step");
    for (int i = 0; i < sw->num_points; ++i) {
        const pn_sweep_point *pt = &sw->points[i];
        pn_sweep_figures f;
        pn_sweep_figures_of(pt->stats, ref, &f);
        fprintf(out, "%13.4g  %4d %4d %4d ", pt->value, pt->kept_min, pt->kept_median,
                pt->kept_max);
        for (int t = 0; t < PN_SWEEP_NUM_TV; ++t)
            print_tv(out, f.tv[t], 6);
        fputc(' ', out);
        print_shares(out, &f);
        fprintf(out, "  %6" PRId64 "  %7.1f\n", pt->stats->sonorities,
                1e3 * pt->median_step_seconds);
    }
    if (ref) {
        pn_sweep_figures f;
        pn_sweep_reference_figures(ref, &f);
        fprintf(out, "%13s  %4s %4s %4s ", "reference", "", "", "");
        for (int t = 0; t < PN_SWEEP_NUM_TV; ++t)
            fprintf(out, " %6s", "");
        fputc(' ', out);
        print_shares(out, &f);
        fprintf(out, "  %6" PRId64 "\n", ref->sonorities);
    }

    if (req->num_seeds > 1) {
        fprintf(out,
                "\nstandard error over the %d seeds (the same columns; shares and rates in "
                "points):\n",
                req->num_seeds);
        for (int i = 0; i < sw->num_points; ++i) {
            pn_sweep_figures se;
            pn_sweep_standard_error(&sw->points[i], req->num_seeds, ref, &se);
            fprintf(out, "%13.4g  %4s %4s %4s ", sw->points[i].value, "", "", "");
            for (int t = 0; t < PN_SWEEP_NUM_TV; ++t)
                print_tv(out, se.tv[t], 6);
            fputc(' ', out);
            print_shares(out, &se);
            fputc('\n', out);
        }
    }

    fprintf(out, "\nrules kept most often (share of the steps after which each was kept):\n");
    int *order = malloc((size_t)sw->num_rules * sizeof *order);
    if (!order)
        return -1;
    for (int i = 0; i < sw->num_points; ++i) {
        const pn_sweep_point *pt = &sw->points[i];
        const int n = pn_sweep_most_kept(sw, i, order);
        fprintf(out, "%13.4g  ", pt->value);
        if (n == 0)
            fprintf(out, "none");
        for (int j = 0; j < n && j < MOST_KEPT_SHOWN; ++j)
            fprintf(out, "%s%s %.0f%%", j ? ", " : "", rs->rules[order[j]].name,
                    100.0 * (double)pt->kept_steps[order[j]] / (double)pt->num_steps);
        if (n > MOST_KEPT_SHOWN)
            fprintf(out, ", %d more", n - MOST_KEPT_SHOWN);
        fputc('\n', out);
    }
    free(order);
    fprintf(out, "\nkept: rules kept after each step (min, median, max over every step of every "
                 "run); TV: total\n"
                 "variation distance to the reference; root: chord types {0,4,7} or {0,3,7}; "
                 "step, leap:\n"
                 "soprano motions of 1-2 and of more than 4 semitones among all soprano "
                 "motions; I/IV/V:\n"
                 "bass on C, F or G (the rule set's tonic, subdominant and dominant when it is "
                 "in C); cons:\n"
                 "chord types of consonances only (0,3,4,7,8,9 above the bass); rates as "
                 "in 'parnassus\n"
                 "evaluate'; sonor: sonorities measured (repeats merged); ms/step: median "
                 "draw +\n"
                 "re-realization.\n");
    fprintf(out, "total %.2f s\n", r->seconds);
    return ferror(out) ? -1 : 0;
}

/* ------------------------------------------------------------------------ */
/* JSON */

static json_t *number(double x)
{
    return isfinite(x) ? json_real(x) : json_null();
}

static json_t *string_or_null(const char *s)
{
    json_t *j = s ? pn_json_text(s) : NULL;
    return j ? j : json_null();
}

static json_t *shares_object(const pn_sweep_figures *f)
{
    json_t *o = json_object();
    json_object_set_new(o, "root_position", number(f->root_position));
    json_object_set_new(o, "stepwise_soprano", number(f->stepwise_soprano));
    json_object_set_new(o, "soprano_leaps", number(f->soprano_leaps));
    json_object_set_new(o, "primary_bass", number(f->primary_bass));
    json_object_set_new(o, "consonant", number(f->consonant));
    return o;
}

static json_t *rates_object(const pn_sweep_figures *f)
{
    json_t *o = json_object();
    json_object_set_new(o, "parallels", number(f->parallels));
    json_object_set_new(o, "hidden", number(f->hidden));
    json_object_set_new(o, "wide", number(f->wide));
    json_object_set_new(o, "crossing", number(f->crossing));
    return o;
}

/* The TVs, shares and rates of one set of figures. */
static void set_figures(json_t *o, const pn_sweep_figures *f)
{
    json_t *tv = json_object();
    for (int t = 0; t < PN_SWEEP_NUM_TV; ++t)
        json_object_set_new(tv, pn_sweep_tv_name[t], number(f->tv[t]));
    json_object_set_new(o, "tv", tv);
    json_object_set_new(o, "shares", shares_object(f));
    json_object_set_new(o, "rates", rates_object(f));
}

/* Each seed's run alone, and the standard error over them. */
static void set_by_seed(json_t *o, const pn_sweep_request *req, const pn_sweep_point *pt,
                        const pn_style_stats *ref)
{
    json_t *seeds = json_array();
    for (int s = 0; s < req->num_seeds; ++s) {
        pn_sweep_figures f;
        pn_sweep_figures_of(&pt->seed_stats[s], ref, &f);
        json_t *one = json_object();
        json_object_set_new(one, "seed", json_integer((json_int_t)req->seeds[s]));
        json_object_set_new(one, "sonorities", json_integer(pt->seed_stats[s].sonorities));
        set_figures(one, &f);
        json_array_append_new(seeds, one);
    }
    json_object_set_new(o, "by_seed", seeds);
    pn_sweep_figures se;
    pn_sweep_standard_error(pt, req->num_seeds, ref, &se);
    json_t *err = json_object();
    set_figures(err, &se);
    json_object_set_new(o, "standard_error", err);
}

static json_t *point_object(const pn_sweep_report *r, int i, int *order)
{
    const pn_sweep *sw = r->sweep;
    const pn_sweep_point *pt = &sw->points[i];
    const pn_rule_set *rs = r->req->rules;
    const pn_style_stats *ref = r->reference ? &r->reference->stats : NULL;
    pn_sweep_figures f;
    pn_sweep_figures_of(pt->stats, ref, &f);
    json_t *o = json_object();
    json_object_set_new(o, "value", json_real(pt->value));
    json_object_set_new(o, "log2_lambda_w", json_real(pt->log2_lambda_w));
    json_object_set_new(o, "alpha", json_real(pt->alpha));
    json_object_set_new(o, "pieces", json_integer(pt->stats->pieces));
    json_object_set_new(o, "sonorities", json_integer(pt->stats->sonorities));
    json_object_set_new(o, "steps", json_integer(pt->num_steps));
    json_object_set_new(
        o, "rules_kept",
        json_pack("{sisisi}", "min", pt->kept_min, "median", pt->kept_median, "max", pt->kept_max));
    const int n = pn_sweep_most_kept(sw, i, order);
    json_t *most = json_array();
    for (int j = 0; j < n; ++j)
        json_array_append_new(most, string_or_null(rs->rules[order[j]].name));
    json_object_set_new(o, "most_kept", most);
    json_t *rules = json_array();
    for (int k = 0; k < sw->num_rules; ++k)
        json_array_append_new(rules,
                              json_pack("{sosIso}", "name", string_or_null(rs->rules[k].name),
                                        "kept_steps", (json_int_t)pt->kept_steps[k], "kept_share",
                                        number((double)pt->kept_steps[k] / (double)pt->num_steps)));
    json_object_set_new(o, "rules", rules);
    set_figures(o, &f);
    set_by_seed(o, r->req, pt, ref);
    json_object_set_new(o, "constraint_misses", json_integer((json_int_t)pt->constraint_misses));
    json_object_set_new(o, "setup_seconds", number(pt->setup_seconds));
    json_object_set_new(o, "median_step_seconds", number(pt->median_step_seconds));
    return o;
}

static json_t *build(const pn_sweep_report *r, int *order)
{
    const pn_sweep_request *req = r->req;
    const pn_rule_set *rs = req->rules;
    json_t *root = json_object();
    json_object_set_new(root, "format", json_string("parnassus-sweep/1"));
    json_object_set_new(root, "rules_file", string_or_null(r->rules_file));
    json_object_set_new(root, "rule_set", string_or_null(rs->name));
    json_object_set_new(root, "num_rules", json_integer(rs->num_rules));
    json_object_set_new(root, "knob", json_string(pn_sweep_knob_name(req->knob)));
    json_object_set_new(root, "from", json_real(req->from));
    json_object_set_new(root, "to", json_real(req->to));
    json_object_set_new(
        root, "fixed",
        json_pack("{sssf}", "name", pn_sweep_fixed_name(req), "value", pn_sweep_fixed_value(req)));
    json_object_set_new(root, "lambda_p", json_real(req->settings.lambda_p));
    json_object_set_new(root, "steps", json_integer(req->steps));
    json_t *seeds = json_array();
    for (int i = 0; i < req->num_seeds; ++i)
        json_array_append_new(seeds, json_integer((json_int_t)req->seeds[i]));
    json_object_set_new(root, "seeds", seeds);

    json_t *ref = json_object();
    json_object_set_new(ref, "name", string_or_null(pn_sweep_reference_name(r)));
    json_object_set_new(ref, "file", string_or_null(r->reference_file));
    if (r->reference) {
        const pn_style_file *rf = r->reference;
        pn_sweep_figures f;
        pn_sweep_reference_figures(&rf->stats, &f);
        json_object_set_new(ref, "description", string_or_null(rf->description));
        json_object_set_new(ref, "mode", string_or_null(rf->mode));
        json_object_set_new(ref, "pieces", json_integer(rf->stats.pieces));
        json_object_set_new(ref, "sonorities", json_integer(rf->stats.sonorities));
        json_object_set_new(ref, "shares", shares_object(&f));
        json_object_set_new(ref, "rates", rates_object(&f));
    }
    json_object_set_new(root, "reference", ref);

    json_t *points = json_array();
    for (int i = 0; i < r->sweep->num_points; ++i)
        json_array_append_new(points, point_object(r, i, order));
    json_object_set_new(root, "points", points);
    json_object_set_new(root, "seconds", number(r->seconds));
    return root;
}

int pn_sweep_json(FILE *out, const pn_sweep_report *r)
{
    int *order = malloc((size_t)r->sweep->num_rules * sizeof *order);
    json_t *root = order ? build(r, order) : NULL;
    char *text =
        root ? json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(17))
             : NULL;
    json_decref(root);
    free(order);
    if (!text) {
        fprintf(stderr, "parnassus sweep: out of memory while writing JSON\n");
        return -1;
    }
    fputs(text, out);
    fputc('\n', out);
    free(text);
    return ferror(out) ? -1 : 0;
}

/* ------------------------------------------------------------------------ */
/* CSV */

/* A header field "<prefix><name>", quoted when the name needs it. */
static void csv_name(FILE *f, const char *prefix, const char *name)
{
    if (!strpbrk(name, ",\"\r\n")) {
        fprintf(f, ",%s%s", prefix, name);
        return;
    }
    fprintf(f, ",\"%s", prefix);
    for (const char *c = name; *c; ++c) {
        if (*c == '"')
            fputc('"', f);
        fputc(*c, f);
    }
    fputc('"', f);
}

/* A number, or an empty field when there is none. */
static void csv_number(FILE *f, double v)
{
    if (isfinite(v))
        fprintf(f, ",%.17g", v);
    else
        fputc(',', f);
}

int pn_sweep_csv(const char *path, const pn_sweep_report *r)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "parnassus sweep: %s: cannot open: %s\n", path, strerror(errno));
        return -1;
    }
    const pn_sweep *sw = r->sweep;
    const pn_rule_set *rs = r->req->rules;
    const pn_style_stats *ref = r->reference ? &r->reference->stats : NULL;
    fputs("log2_lambda_w,alpha,kept_min,kept_median,kept_max", f);
    for (int t = 0; t < PN_SWEEP_NUM_TV; ++t)
        fprintf(f, ",tv_%s", pn_sweep_tv_name[t]);
    fputs(",root_position,stepwise_soprano,soprano_leaps,primary_bass,consonant,parallels,hidden,"
          "wide,crossing,"
          "sonorities,median_step_seconds",
          f);
    for (int k = 0; k < sw->num_rules; ++k)
        csv_name(f, "kept_", rs->rules[k].name);
    fputc('\n', f);
    for (int i = 0; i < sw->num_points; ++i) {
        const pn_sweep_point *pt = &sw->points[i];
        pn_sweep_figures fig;
        pn_sweep_figures_of(pt->stats, ref, &fig);
        fprintf(f, "%.17g,%.17g,%d,%d,%d", pt->log2_lambda_w, pt->alpha, pt->kept_min,
                pt->kept_median, pt->kept_max);
        for (int t = 0; t < PN_SWEEP_NUM_TV; ++t)
            csv_number(f, fig.tv[t]);
        csv_number(f, fig.root_position);
        csv_number(f, fig.stepwise_soprano);
        csv_number(f, fig.soprano_leaps);
        csv_number(f, fig.primary_bass);
        csv_number(f, fig.consonant);
        csv_number(f, fig.parallels);
        csv_number(f, fig.hidden);
        csv_number(f, fig.wide);
        csv_number(f, fig.crossing);
        fprintf(f, ",%" PRId64, pt->stats->sonorities);
        csv_number(f, pt->median_step_seconds);
        for (int k = 0; k < sw->num_rules; ++k)
            csv_number(f, (double)pt->kept_steps[k] / (double)pt->num_steps);
        fputc('\n', f);
    }
    int bad = ferror(f);
    if (fclose(f) != 0 || bad) {
        fprintf(stderr, "parnassus sweep: %s: cannot write: %s\n", path, strerror(errno));
        remove(path);
        return -1;
    }
    return 0;
}

#include "json_out.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { DUMP_FLAGS = JSON_INDENT(2) | JSON_REAL_PRECISION(17) };

/* JSON has no NaN or infinity: such a value is written as null. */
static json_t *number(double x)
{
    return isfinite(x) ? json_real(x) : json_null();
}

/* Rule names and file names are bytes, JSON strings are UTF-8: text that is
 * not valid UTF-8 is written with every byte >= 0x80 shown as "\xNN". */
static json_t *text(const char *s)
{
    json_t *j = json_string(s);
    if (j)
        return j;
    size_t len = strlen(s);
    char *buf = malloc(4 * len + 1);
    if (!buf)
        return NULL;
    char *o = buf;
    for (const unsigned char *p = (const unsigned char *)s; *p; ++p) {
        if (*p < 0x80) {
            *o++ = (char)*p;
        } else {
            static const char hex[] = "0123456789abcdef";
            *o++ = '\\';
            *o++ = 'x';
            *o++ = hex[*p >> 4];
            *o++ = hex[*p & 15];
        }
    }
    *o = '\0';
    j = json_string(buf);
    free(buf);
    return j;
}

json_t *pn_json_text(const char *s)
{
    return text(s);
}

/* Appends value (stolen); a NULL value or a failed append gives -1. */
static int append(json_t *array, json_t *value)
{
    return value && json_array_append_new(array, value) == 0 ? 0 : -1;
}

/* Pitches as integers, -1 for a rest. */
static json_t *pitch_array(const int *pitches, int count)
{
    json_t *a = json_array();
    for (int v = 0; a && v < count; ++v) {
        if (append(a, json_integer(pitches[v] < 0 ? -1 : pitches[v])) < 0) {
            json_decref(a);
            return NULL;
        }
    }
    return a;
}

static json_t *instance_object(const pn_json_instance *in)
{
    const pn_problem *p = in->prob;
    const char *form = in->rules ? "rules" : in->form == PN_FORM_GROUPED ? "grouped" : "full";
    json_t *o = json_pack("{s:o, s:s, s:I, s:i, s:i, s:I}", "file", text(in->file), "form", form,
                          "n", (json_int_t)p->n, "num_rules", (int)p->num_rules, "num_rows",
                          (int)p->num_rows, "num_groups", (json_int_t)p->num_groups);
    if (!o || !in->rules)
        return o;
    const pn_rule_set *rs = in->rules;
    json_t *ctx = in->context ? pitch_array(in->context, rs->space.num_voices) : json_null();
    if (json_object_set_new(o, "rule_set", text(rs->name)) != 0 ||
        json_object_set_new(o, "voices", json_integer(rs->space.num_voices)) != 0 ||
        json_object_set_new(o, "has_context_rules", json_boolean(pn_rule_set_has_context(rs))) !=
            0 ||
        json_object_set_new(o, "context", ctx) != 0) {
        json_decref(o);
        return NULL;
    }
    return o;
}

/* A rule's feature text, or its context feature's (NULL: JSON null). */
static json_t *feature_text(const pn_feature *f)
{
    if (!f)
        return json_null();
    char buf[PN_FEATURE_TEXT_MAX];
    pn_feature_to_string(f, buf, sizeof buf);
    return text(buf);
}

/* Adds "feature" and "context" of rule r of a rule set to a rule object. */
static int add_rule_features(json_t *rule, const pn_rule_set *rs, int32_t r)
{
    if (!rs)
        return 0;
    const pn_rule *x = &rs->rules[r];
    if (json_object_set_new(rule, "feature", feature_text(x->feature)) != 0 ||
        json_object_set_new(rule, "context",
                            feature_text(x->context ? x->context->feature : NULL)) != 0)
        return -1;
    return 0;
}

static json_t *rule_features(const pn_rule_set *rs)
{
    json_t *a = json_array();
    for (int32_t r = 0; a && r < rs->num_rules; ++r) {
        if (append(a, feature_text(rs->rules[r].feature)) < 0) {
            json_decref(a);
            return NULL;
        }
    }
    return a;
}

static json_t *rule_names(const pn_problem *p)
{
    json_t *a = json_array();
    for (int32_t r = 0; a && r < p->num_rules; ++r) {
        if (append(a, text(p->rule_name[r])) < 0) {
            json_decref(a);
            return NULL;
        }
    }
    return a;
}

static json_t *rule_sizes(const pn_problem *p)
{
    json_t *a = json_array();
    for (int32_t r = 0; a && r < p->num_rules; ++r) {
        if (append(a, json_integer(pn_rule_size(p, r))) < 0) {
            json_decref(a);
            return NULL;
        }
    }
    return a;
}

static json_t *real_array(const double *v, int count)
{
    json_t *a = json_array();
    for (int i = 0; a && i < count; ++i) {
        if (append(a, number(v[i])) < 0) {
            json_decref(a);
            return NULL;
        }
    }
    return a;
}

/* 1-based numbers of the selected rules. */
static json_t *selected_numbers(const unsigned char *selected, int count)
{
    json_t *a = json_array();
    for (int i = 0; a && i < count; ++i) {
        if (selected[i] && append(a, json_integer(i + 1)) < 0) {
            json_decref(a);
            return NULL;
        }
    }
    return a;
}

static json_t *solve_rules(const pn_problem *p, const pn_rule_set *rs, const double *group_norm,
                           const double *rule_error, const unsigned char *selected,
                           const double *baseline_error)
{
    json_t *a = json_array();
    for (int32_t r = 0; a && r < p->num_rules; ++r) {
        json_t *rule =
            json_pack("{s:o, s:i, s:b, s:o, s:o}", "name", text(p->rule_name[r]), "size",
                      (int)pn_rule_size(p, r), "selected", selected[r] != 0, "group_norm",
                      number(group_norm[r]), "error", number(rule_error[r]));
        if (rule && add_rule_features(rule, rs, r) < 0) {
            json_decref(rule);
            rule = NULL;
        }
        if (rule && baseline_error &&
            json_object_set_new(rule, "nonselective_error", number(baseline_error[r])) != 0) {
            json_decref(rule);
            rule = NULL;
        }
        if (append(a, rule) < 0) {
            json_decref(a);
            return NULL;
        }
    }
    return a;
}

static int dump(FILE *out, json_t *root, const json_error_t *error)
{
    if (!root) {
        fprintf(stderr, "parnassus: cannot build the JSON document: %s\n",
                error && error->text[0] ? error->text : "out of memory");
        return -1;
    }
    int rc = json_dumpf(root, out, DUMP_FLAGS);
    json_decref(root);
    if (rc != 0 || fputc('\n', out) == EOF) {
        fprintf(stderr, "parnassus: cannot write the JSON document\n");
        return -1;
    }
    return 0;
}

typedef struct real_field {
    const char *key;
    double value;
} real_field;

/* Sets the keys of fields to numbers; returns 0 or -1. */
static int set_reals(json_t *object, const real_field *fields, size_t count)
{
    for (size_t i = 0; i < count; ++i)
        if (!object || json_object_set_new(object, fields[i].key, number(fields[i].value)) != 0)
            return -1;
    return 0;
}

/* Merges part (stolen) into object; returns 0 or -1. */
static int merge(json_t *object, json_t *part)
{
    int rc = object && part && json_object_update(object, part) == 0 ? 0 : -1;
    json_decref(part);
    return rc;
}

int pn_json_write_solve(FILE *out, const pn_json_instance *in, const pn_settings *settings,
                        const pn_info *info, const double *group_norm, const double *rule_error,
                        const unsigned char *selected, double seconds,
                        const pn_json_baseline *baseline)
{
    const real_field result[] = {
        {"objective", info->objective}, {"weighted_error", info->weighted_error},
        {"penalty_p", info->penalty_p}, {"penalty_w", info->penalty_w},
        {"seconds", seconds},           {"p_kkt", info->p_kkt},
        {"w_kkt", info->w_kkt},
    };
    const real_field knobs[] = {
        {"log2_lambda_w", settings->log2_lambda_w},
        {"lambda_w", exp2(settings->log2_lambda_w)},
        {"alpha", settings->alpha},
        {"lambda_p", settings->lambda_p},
    };
    json_error_t error;
    memset(&error, 0, sizeof error);
    json_t *root =
        json_pack_ex(&error, 0, "{s:s, s:o, s:s}", "format", "parnassus-solve/1", "instance",
                     instance_object(in), "status", pn_status_name(info->status));
    int bad = set_reals(root, result, sizeof result / sizeof result[0]);
    bad |= merge(root,
                 json_pack("{s:i, s:i, s:i}", "iterations", info->alternations, "newton_iterations",
                           info->newton_iterations, "starts", info->starts));
    bad |= set_reals(root, knobs, sizeof knobs / sizeof knobs[0]);
    bad |= merge(root, json_pack("{s:I, s:i, s:b, s:o}", "seed", (json_int_t)settings->seed,
                                 "num_selected", info->num_selected, "group_selective",
                                 info->group_selective != 0, "rules",
                                 solve_rules(in->prob, in->rules, group_norm, rule_error, selected,
                                             baseline ? baseline->rule_error : NULL)));
    if (baseline)
        bad |= merge(root, json_pack("{s:{s:o, s:o, s:s}}", "nonselective", "log2_lambda_w",
                                     number(baseline->log2_lambda_w), "alpha",
                                     number(baseline->alpha), "weights", "uniform"));
    if (bad && root) {
        json_decref(root);
        root = NULL;
    }
    return dump(out, root, &error);
}

static json_t *path_point(const pn_path_point *pt, int K)
{
    return json_pack("{s:o, s:o, s:o, s:i, s:o, s:b, s:o, s:o}", "log2_lambda_w",
                     number(pt->log2_lambda_w), "objective", number(pt->objective),
                     "weighted_error", number(pt->weighted_error), "num_selected", pt->num_selected,
                     "selected", selected_numbers(pt->selected, K), "group_selective",
                     pt->group_selective != 0, "group_norms", real_array(pt->group_norm, K),
                     "rule_errors", real_array(pt->rule_error, K));
}

int pn_json_write_path(FILE *out, const pn_json_instance *in, const pn_settings *settings,
                       const pn_path *path, double seconds)
{
    json_t *points = json_array();
    for (int i = 0; points && i < path->num_points; ++i) {
        if (append(points, path_point(&path->points[i], path->num_rules)) < 0) {
            json_decref(points);
            points = NULL;
        }
    }
    json_error_t error;
    memset(&error, 0, sizeof error);
    json_t *root = json_pack_ex(
        &error, 0, "{s:s, s:o, s:o, s:o, s:I, s:o, s:i, s:o, s:o, s:o}", "format",
        "parnassus-path/1", "instance", instance_object(in), "alpha", number(path->alpha),
        "lambda_p", number(path->lambda_p), "seed", (json_int_t)settings->seed, "seconds",
        number(seconds), "total_alternations", path->total_alternations, "rules",
        rule_names(in->prob), "rule_sizes", rule_sizes(in->prob), "points", points);
    if (root && in->rules &&
        json_object_set_new(root, "rule_features", rule_features(in->rules)) != 0) {
        json_decref(root);
        root = NULL;
    }
    return dump(out, root, &error);
}

static json_t *analyze_rules(const pn_json_analysis *a)
{
    const pn_problem *p = a->prob;
    json_t *arr = json_array();
    for (int32_t r = 0; arr && r < p->num_rules; ++r) {
        json_t *rule = json_pack("{s:i, s:o, s:i, s:b, s:o, s:o}", "number", (int)r + 1, "name",
                                 text(p->rule_name[r]), "size", (int)pn_rule_size(p, r), "followed",
                                 a->followed[r] != 0, "group_norm", number(a->group_norm[r]),
                                 "error", number(a->rule_error[r]));
        if (rule && add_rule_features(rule, a->rules, r) < 0) {
            json_decref(rule);
            rule = NULL;
        }
        if (append(arr, rule) < 0) {
            json_decref(arr);
            return NULL;
        }
    }
    return arr;
}

int pn_json_write_analyze(FILE *out, const pn_json_analysis *a)
{
    json_error_t error;
    memset(&error, 0, sizeof error);
    json_t *corpus = json_pack_ex(
        &error, 0, "{s:o, s:I, s:I, s:I, s:I, s:o, s:s, s:o, s:i, s:o}", "file",
        text(a->piece_file), "pieces", (json_int_t)a->pieces, "steps", (json_int_t)a->steps,
        "steps_counted", (json_int_t)a->steps_counted, "steps_outside",
        (json_int_t)a->steps_outside, "tonic", a->tonic >= 0 ? json_integer(a->tonic) : json_null(),
        "mode", a->mode, "split", a->split ? text(a->split) : json_null(), "grid", a->grid,
        "summary", a->summary ? text(a->summary) : json_null());
    json_t *root =
        json_pack_ex(&error, 0, "{s:s, s:o, s:o, s:o, s:s, s:o, s:o, s:o, s:o, s:i, s:b, s:o}",
                     "format", "parnassus-analyze/1", "rules_file", text(a->rules_file), "rule_set",
                     text(a->rules->name), "corpus", corpus, "context_mode", a->context_mode,
                     "log2_lambda_w", number(a->settings->log2_lambda_w), "lambda_w",
                     number(exp2(a->settings->log2_lambda_w)), "alpha", number(a->settings->alpha),
                     "weighted_error", number(a->weighted_error), "num_followed", a->num_followed,
                     "group_selective", a->group_selective != 0, "rules", analyze_rules(a));
    return dump(out, root, &error);
}

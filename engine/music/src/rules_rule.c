/* One rule of a rule set: its name, feature, value table and targets
 * (a distribution over the feature's values), and freeing rules. */
#include "parnassus/rules.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "json_messages.h"
#include "pstep.h"
#include "rules_reader.h"
#include "text.h"

/* Frees what a context level owns (not the struct). */
static void free_level(pn_rule_context *c)
{
    pn_feature_free(c->feature);
    if (!c->table_borrowed)
        pn_feature_table_free(c->table);
    free(c->cell);
    free(c->count);
    free(c->row);
}

static void free_context(pn_rule_context *c)
{
    if (!c)
        return;
    free_level(c);
    free(c);
}

static void free_rule(pn_rule *r)
{
    free(r->name);
    free(r->description);
    pn_feature_free(r->feature);
    pn_feature_table_free(r->table);
    free(r->target);
    free_context(r->context);
    for (int32_t k = 0; k < r->num_refinements; ++k)
        free_level(&r->refinements[k]);
    free(r->refinements);
}

void pn_rule_set_free(pn_rule_set *rs)
{
    if (!rs)
        return;
    for (int32_t i = 0; i < rs->num_rules; ++i)
        free_rule(&rs->rules[i]);
    free(rs->rules);
    pn_rr_free_constraints(rs);
    free(rs->name);
    free(rs->description);
    free(rs);
}

/* Maps a failure of the feature module at `path` to a file error. */
pn_error pn_rr_inner_failure(const pn_rr *rd, const char *path, const pn_error_info *inner)
{
    if (inner->code == PN_ERR_NOMEM)
        return pn_rr_out_of_memory(rd);
    return pn_rr_fail_at(rd, path, "%s", inner->message);
}

/* Reads the distribution object at `path` over r's feature values into
 * target (m entries, zeroed here). */
pn_error pn_rr_read_distribution(const pn_rr *rd, const char *path, const json_t *targets,
                                 const pn_rule *r, double *target)
{
    char kpath[320];
    if (!json_is_object(targets)) {
        return pn_rr_fail_type(rd, path, "an object mapping values to probabilities", targets);
    }
    const int32_t m = pn_feature_table_size(r->table);
    memset(target, 0, (size_t)m * sizeof *target);
    const char **owner = calloc((size_t)m, sizeof *owner);
    if (!owner)
        return pn_rr_out_of_memory(rd);
    char ftext[PN_FEATURE_TEXT_MAX];
    pn_feature_to_string(r->feature, ftext, sizeof ftext);
    pn_error err = PN_OK;
    double sum = 0.0;
    const char *key;
    const json_t *v;
    json_object_foreach((json_t *)(uintptr_t)targets, key, v)
    {
        char shown[80];
        pn_rr_show_text(key, shown, sizeof shown);
        snprintf(kpath, sizeof kpath, "%s[\"%s\"]", path, shown);
        int32_t cell = -1;
        pn_error_info inner;
        pn_error e = pn_feature_find_value(r->table, key, &cell, &inner);
        if (e == PN_ERR_INVALID) {
            err = pn_rr_fail_at(rd, kpath, "%s never takes the value '%s'", ftext, shown);
            break;
        }
        if (e != PN_OK) {
            err = pn_rr_inner_failure(rd, kpath, &inner);
            break;
        }
        if (owner[cell]) {
            char first[80];
            pn_rr_show_text(owner[cell], first, sizeof first);
            err = pn_rr_fail_at(rd, kpath, "the same value as targets[\"%s\"]", first);
            break;
        }
        owner[cell] = key;
        if (!json_is_number(v)) {
            char d[64];
            pn_json_describe(v, d, sizeof d);
            err = pn_rr_fail_at(rd, kpath, "expected a probability (a number), got %s", d);
            break;
        }
        double p = json_number_value(v);
        if (!isfinite(p)) {
            err = pn_rr_fail_at(rd, kpath, "probability is not finite");
            break;
        }
        if (p < 0.0) {
            err = pn_rr_fail_at(rd, kpath, "negative probability %.10g", p);
            break;
        }
        if (p > 1.0 + PN_RULES_SUM_TOLERANCE) {
            err = pn_rr_fail_at(rd, kpath, "probability %.10g is above 1", p);
            break;
        }
        target[cell] = p;
        sum += p;
    }
    free(owner);
    if (err != PN_OK)
        return err;
    if (!(fabs(sum - 1.0) <= PN_RULES_SUM_TOLERANCE))
        return pn_rr_fail_at(rd, path, "probabilities sum to %.10g, not 1 (tolerance 1e-6)", sum);
    return PN_OK;
}

/* Builds the value table of f for the field at `path`, refusing first what
 * would go over the memory limit: the table itself, and for a rule's own
 * feature (adds_rows) the solver's dense Hessian over every cell so far. */
pn_error pn_rr_build_table(const pn_rr *rd, const char *path, const pn_feature *f,
                           const pn_space *space, int adds_rows, pn_feature_table **out)
{
    int64_t bytes, cells;
    pn_feature_cost(f, space, &bytes, &cells);
    char ftext[PN_FEATURE_TEXT_MAX], what[PN_MESSAGE_SIZE];
    pn_feature_to_string(f, ftext, sizeof ftext);
    snprintf(what, sizeof what, "%.200s: %s: the value table of %s", rd->name, path, ftext);
    pn_error err = pn_memory_check(pn_bytes_add(rd->budget->table_bytes, bytes), rd->max_memory,
                                   rd->info, what);
    if (err != PN_OK)
        return err;
    if (adds_rows) {
        const int64_t rows = pn_bytes_add(rd->budget->rows, cells);
        snprintf(what, sizeof what, "%.200s: %s: %s has up to %lld values; realizing %lld cells",
                 rd->name, path, ftext, (long long)cells, (long long)rows);
        if ((err = pn_memory_check(pn_pstep_hessian_bytes(rows), rd->max_memory, rd->info, what)) !=
            PN_OK)
            return err;
    }
    pn_error_info inner;
    if (pn_feature_values(f, space, out, &inner) != PN_OK)
        return pn_rr_inner_failure(rd, path, &inner);
    rd->budget->table_bytes = pn_bytes_add(rd->budget->table_bytes, pn_feature_table_bytes(*out));
    if (adds_rows)
        rd->budget->rows += pn_feature_table_size(*out);
    return PN_OK;
}

/* Uniform targets, for a rule of a feature file that gives none. */
static void uniform_targets(double *target, int32_t m)
{
    for (int32_t i = 0; i < m; ++i)
        target[i] = 1.0 / (double)m;
}

pn_error pn_rr_read_rule(const pn_rr *rd, const pn_rule_set *rs, size_t index, const json_t *obj,
                         pn_rule *r)
{
    char path[64], fpath[96];
    snprintf(path, sizeof path, "rules[%zu]", index);
    if (!json_is_object(obj)) {
        return pn_rr_fail_type(rd, path, "a rule object", obj);
    }
    static const char *const keys[] = {"name",    "feature",   "targets",  "description", "learn",
                                       "context", "smoothing", "contexts", "refinements", NULL};
    pn_error err = pn_rr_check_keys(rd, path, obj, keys);
    if (err != PN_OK)
        return err;

    const json_t *learn = json_object_get(obj, "learn");
    if (learn) {
        snprintf(fpath, sizeof fpath, "%s.learn", path);
        if (!json_is_boolean(learn))
            return pn_rr_fail_type(rd, fpath, "true or false", learn);
        r->fixed = json_is_false(learn);
    }
    /* a rule learning leaves alone must say what it wants */
    const int targets_optional = (rd->flags & PN_RULES_TARGETS_OPTIONAL) != 0 && !r->fixed;
    static const char *const required[] = {"name", "feature", "targets"};
    for (size_t i = 0; i < sizeof required / sizeof *required - (size_t)targets_optional; ++i)
        if (!json_object_get(obj, required[i]))
            return pn_rr_fail_at(rd, path, "missing field \"%s\"", required[i]);
    const json_t *desc = json_object_get(obj, "description");
    if (desc && !json_is_string(desc)) {
        snprintf(fpath, sizeof fpath, "%s.description", path);
        return pn_rr_fail_at(rd, fpath, "expected a string");
    }
    if (desc && !(r->description = pn_copy_string(json_string_value(desc))))
        return pn_rr_out_of_memory(rd);

    const char *name = NULL;
    snprintf(fpath, sizeof fpath, "%s.name", path);
    if ((err = pn_rr_get_name(rd, fpath, json_object_get(obj, "name"), &name)) != PN_OK)
        return err;
    for (size_t j = 0; j < index; ++j)
        if (strcmp(rs->rules[j].name, name) == 0) {
            char shown[80];
            pn_rr_show_text(name, shown, sizeof shown);
            return pn_rr_fail_at(rd, fpath, "duplicate rule name \"%s\" (also rules[%zu])", shown,
                                 j);
        }
    if (!(r->name = pn_copy_string(name)))
        return pn_rr_out_of_memory(rd);

    const json_t *feature = json_object_get(obj, "feature");
    snprintf(fpath, sizeof fpath, "%s.feature", path);
    if (!json_is_string(feature)) {
        return pn_rr_fail_type(rd, fpath, "a feature text", feature);
    }
    pn_error_info inner;
    if (pn_feature_parse(json_string_value(feature), rs->space.num_voices, &r->feature, &inner) !=
        PN_OK)
        return pn_rr_inner_failure(rd, fpath, &inner);
    if ((err = pn_rr_build_table(rd, fpath, r->feature, &rs->space, 1, &r->table)) != PN_OK)
        return err;

    const int32_t m = pn_feature_table_size(r->table);
    if (!(r->target = calloc((size_t)m, sizeof *r->target)))
        return pn_rr_out_of_memory(rd);
    const json_t *targets = json_object_get(obj, "targets");
    snprintf(fpath, sizeof fpath, "%s.targets", path);
    if (targets)
        err = pn_rr_read_distribution(rd, fpath, targets, r, r->target);
    else
        uniform_targets(r->target, m);
    if (err != PN_OK)
        return err;
    return pn_rr_read_context(rd, rs, index, obj, r);
}

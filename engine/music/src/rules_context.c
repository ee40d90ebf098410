/* The context levels of a rule: the feature of the previous sonority it
 * is conditioned on ("context"), the distributions listed per context
 * value ("contexts", with "count" and "smoothing"), and the finer levels
 * ("refinements"). */
#include "parnassus/rules.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "rules_reader.h"

typedef struct listed_context {
    int32_t cell;
    int32_t order; /* position in the file */
} listed_context;

static int compare_listed(const void *a, const void *b)
{
    const listed_context *x = a, *y = b;
    return (x->cell > y->cell) - (x->cell < y->cell);
}

/* Reads one entry of "contexts": {"count": N, "targets": {...}}. */
static pn_error read_context_entry(const pn_rr *rd, const char *path, const json_t *entry,
                                   const pn_rule *r, double *count, double *row)
{
    if (!json_is_object(entry))
        return pn_rr_fail_type(rd, path, "an object with \"targets\" and an optional \"count\"",
                               entry);
    static const char *const keys[] = {"count", "targets", NULL};
    pn_error err = pn_rr_check_keys(rd, path, entry, keys);
    if (err != PN_OK)
        return err;
    char fpath[448];
    const json_t *jcount = json_object_get(entry, "count");
    *count = INFINITY;
    if (jcount) {
        snprintf(fpath, sizeof fpath, "%s.count", path);
        if ((err = pn_rr_get_real(rd, fpath, jcount, 0.0, PN_RULES_MAX_COUNT, 0, count)) != PN_OK)
            return err;
    }
    const json_t *targets = json_object_get(entry, "targets");
    if (!targets)
        return pn_rr_fail_at(rd, path, "missing field \"targets\"");
    snprintf(fpath, sizeof fpath, "%s.targets", path);
    return pn_rr_read_distribution(rd, fpath, targets, r, row);
}

/* A table of psi over the space that an earlier context level already
 * built (the same feature text), or NULL: rules that share a context share
 * its table, which for the whole previous sonority is as large as the
 * space. */
static pn_feature_table *shared_table(const pn_rule_set *rs, size_t index, const pn_rule *r,
                                      const char *text)
{
    char other[PN_FEATURE_TEXT_MAX];
    for (size_t i = 0; i <= index; ++i) {
        const pn_rule *q = i < index ? &rs->rules[i] : r;
        const int32_t levels = q->context ? 1 + q->num_refinements : 0;
        for (int32_t k = 0; k < levels; ++k) {
            const pn_rule_context *c = k == 0 ? q->context : &q->refinements[k - 1];
            if (!c->feature || !c->table)
                continue;
            pn_feature_to_string(c->feature, other, sizeof other);
            if (strcmp(other, text) == 0)
                return c->table;
        }
    }
    return NULL;
}

/* Reads one context level, the fields "context", "smoothing" and
 * "contexts" of obj, into c; `path` names obj in messages. */
static pn_error read_level(const pn_rr *rd, const pn_rule_set *rs, size_t index, const char *path,
                           const json_t *obj, const pn_rule *r, pn_rule_context *c)
{
    char fpath[256];
    const json_t *jcontext = json_object_get(obj, "context");
    const json_t *jsmoothing = json_object_get(obj, "smoothing");
    const json_t *jcontexts = json_object_get(obj, "contexts");
    c->smoothing = PN_RULES_DEFAULT_SMOOTHING;
    pn_error err;
    snprintf(fpath, sizeof fpath, "%s.context", path);
    if (!json_is_string(jcontext))
        return pn_rr_fail_type(rd, fpath, "a feature text", jcontext);
    pn_error_info inner;
    if (pn_feature_parse(json_string_value(jcontext), rs->space.num_voices, &c->feature, &inner) !=
        PN_OK)
        return pn_rr_inner_failure(rd, fpath, &inner);
    char ctext[PN_FEATURE_TEXT_MAX];
    pn_feature_to_string(c->feature, ctext, sizeof ctext);
    pn_feature_table *shared = shared_table(rs, index, r, ctext);
    if (shared) {
        c->table = shared;
        c->table_borrowed = 1;
    } else if ((err = pn_rr_build_table(rd, fpath, c->feature, &rs->space, 0, &c->table)) !=
               PN_OK) {
        return err;
    }
    if (jsmoothing) {
        snprintf(fpath, sizeof fpath, "%s.smoothing", path);
        if ((err = pn_rr_get_real(rd, fpath, jsmoothing, 0.0, PN_RULES_MAX_SMOOTHING, 0,
                                  &c->smoothing)) != PN_OK)
            return err;
    }
    if (!jcontexts)
        return PN_OK;
    snprintf(fpath, sizeof fpath, "%s.contexts", path);
    if (!json_is_object(jcontexts))
        return pn_rr_fail_type(rd, fpath, "an object mapping context values to distributions",
                               jcontexts);

    const size_t count = json_object_size(jcontexts);
    const size_t m = (size_t)pn_feature_table_size(r->table);
    if (count == 0)
        return PN_OK;
    /* every key is a distinct cell of the context table, so count fits */
    listed_context *listed = malloc(count * sizeof *listed);
    double *counts = malloc(count * sizeof *counts);
    double *rows = malloc(count * m * sizeof *rows);
    const char **owner = calloc((size_t)pn_feature_table_size(c->table), sizeof *owner);
    c->cell = malloc(count * sizeof *c->cell);
    c->count = malloc(count * sizeof *c->count);
    c->row = malloc(count * m * sizeof *c->row);
    err = PN_OK;
    if (!listed || !counts || !rows || !owner || !c->cell || !c->count || !c->row) {
        err = pn_rr_out_of_memory(rd);
        goto done;
    }
    size_t i = 0;
    const char *key;
    const json_t *entry;
    json_object_foreach((json_t *)(uintptr_t)jcontexts, key, entry)
    {
        char shown[80], kpath[384];
        pn_rr_show_text(key, shown, sizeof shown);
        snprintf(kpath, sizeof kpath, "%s.contexts[\"%s\"]", path, shown);
        int32_t cell = -1;
        pn_error e = pn_feature_find_value(c->table, key, &cell, &inner);
        if (e == PN_ERR_INVALID) {
            err =
                pn_rr_fail_at(rd, kpath, "the context %s never takes the value '%s'", ctext, shown);
            goto done;
        }
        if (e != PN_OK) {
            err = pn_rr_inner_failure(rd, kpath, &inner);
            goto done;
        }
        if (owner[cell]) {
            char first[80];
            pn_rr_show_text(owner[cell], first, sizeof first);
            err = pn_rr_fail_at(rd, kpath, "the same context value as contexts[\"%s\"]", first);
            goto done;
        }
        owner[cell] = key;
        listed[i].cell = cell;
        listed[i].order = (int32_t)i;
        if ((err = read_context_entry(rd, kpath, entry, r, &counts[i], rows + i * m)) != PN_OK)
            goto done;
        ++i;
    }
    qsort(listed, count, sizeof *listed, compare_listed);
    for (size_t j = 0; j < count; ++j) {
        const size_t from = (size_t)listed[j].order;
        c->cell[j] = listed[j].cell;
        c->count[j] = counts[from];
        memcpy(c->row + j * m, rows + from * m, m * sizeof *rows);
    }
    c->num_rows = (int32_t)count;
done:
    free(listed);
    free(counts);
    free(rows);
    free(owner);
    return err;
}

/* The rule's "refinements": finer context levels, each an object with
 * "context", "smoothing" and "contexts". */
static pn_error read_refinements(const pn_rr *rd, const pn_rule_set *rs, size_t index,
                                 const char *path, const json_t *list, pn_rule *r)
{
    char fpath[96];
    snprintf(fpath, sizeof fpath, "%s.refinements", path);
    if (!json_is_array(list))
        return pn_rr_fail_type(rd, fpath, "an array of finer contexts", list);
    const size_t count = json_array_size(list);
    if (count > PN_RULES_MAX_REFINEMENTS)
        return pn_rr_fail_at(rd, fpath, "%zu levels, at most %d are allowed", count,
                             PN_RULES_MAX_REFINEMENTS);
    if (count == 0)
        return PN_OK;
    if (!(r->refinements = calloc(count, sizeof *r->refinements)))
        return pn_rr_out_of_memory(rd);
    for (size_t k = 0; k < count; ++k) {
        char kpath[128];
        snprintf(kpath, sizeof kpath, "%s[%zu]", fpath, k);
        const json_t *level = json_array_get(list, k);
        if (!json_is_object(level))
            return pn_rr_fail_type(rd, kpath, "a context level object", level);
        static const char *const keys[] = {"context", "smoothing", "contexts", NULL};
        pn_error err = pn_rr_check_keys(rd, kpath, level, keys);
        if (err != PN_OK)
            return err;
        if (!json_object_get(level, "context"))
            return pn_rr_fail_at(rd, kpath, "missing field \"context\"");
        /* counted before reading, so a failed level is freed with the rule */
        r->num_refinements = (int32_t)k + 1;
        if ((err = read_level(rd, rs, index, kpath, level, r, &r->refinements[k])) != PN_OK)
            return err;
    }
    return PN_OK;
}

/* Reads "context", "smoothing", "contexts" and "refinements" of
 * rules[index]. */
pn_error pn_rr_read_context(const pn_rr *rd, const pn_rule_set *rs, size_t index, const json_t *obj,
                            pn_rule *r)
{
    char path[64], fpath[96];
    snprintf(path, sizeof path, "rules[%zu]", index);
    const json_t *jcontext = json_object_get(obj, "context");
    if (!jcontext) {
        static const char *const only[] = {"smoothing", "contexts", "refinements"};
        for (size_t i = 0; i < sizeof only / sizeof *only; ++i)
            if (json_object_get(obj, only[i])) {
                snprintf(fpath, sizeof fpath, "%s.%s", path, only[i]);
                return pn_rr_fail_at(rd, fpath,
                                     "only a rule with a \"context\" feature takes this field");
            }
        return PN_OK;
    }
    if (!(r->context = calloc(1, sizeof *r->context)))
        return pn_rr_out_of_memory(rd);
    pn_error err = read_level(rd, rs, index, path, obj, r, r->context);
    if (err != PN_OK)
        return err;
    const json_t *refinements = json_object_get(obj, "refinements");
    return refinements ? read_refinements(rd, rs, index, path, refinements, r) : PN_OK;
}

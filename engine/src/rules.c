/* Rule sets: the "parnassus-rules/1" reader and the problem builder
 * (docs/rule-format.md). */
#include "parnassus/rules.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "json_describe.h"
#include "pstep.h"
#include "rules_reader.h"
#include "text.h"

#include "parnassus/deoverlap.h"
#include "parnassus/file.h"

/* ------------------------------------------------------------------------ */
/* The space */

static pn_error read_space(const pn_rr *rd, const json_t *root, pn_space *space)
{
    const json_t *sp = json_object_get(root, "space");
    if (!sp) {
        pn_space_default(space);
        return PN_OK;
    }
    if (!json_is_object(sp)) {
        return pn_rr_fail_type(rd, "space", "an object", sp);
    }
    static const char *const keys[] = {"voices", "low", "high", "ranges", NULL};
    pn_error err = pn_rr_check_keys(rd, "space", sp, keys);
    if (err != PN_OK)
        return err;

    const json_t *voices = json_object_get(sp, "voices");
    const json_t *ranges = json_object_get(sp, "ranges");
    const json_t *low = json_object_get(sp, "low");
    const json_t *high = json_object_get(sp, "high");
    int k = PN_SPACE_DEFAULT_VOICES;
    if (voices && (err = pn_rr_get_int(rd, "space.voices", voices, 1, PN_SPACE_MAX_VOICES, &k)) != PN_OK)
        return err;
    int lo[PN_SPACE_MAX_VOICES] = {0}, hi[PN_SPACE_MAX_VOICES] = {0};
    char path[64];
    if (ranges) {
        if (low || high)
            return pn_rr_fail_at(rd, "space", "give either \"ranges\" or \"low\"/\"high\", not both");
        if (!json_is_array(ranges)) {
            return pn_rr_fail_type(rd, "space.ranges", "an array of [low, high] pairs", ranges);
        }
        size_t count = json_array_size(ranges);
        if (count < 1 || count > PN_SPACE_MAX_VOICES)
            return pn_rr_fail_at(rd, "space.ranges", "must have 1..%d entries (one per voice), got %zu",
                           PN_SPACE_MAX_VOICES, count);
        if (voices && (size_t)k != count)
            return pn_rr_fail_at(rd, "space.ranges", "has %zu entries but space.voices is %d", count, k);
        k = (int)count;
        for (int v = 0; v < k; ++v) {
            const json_t *pair = json_array_get(ranges, (size_t)v);
            snprintf(path, sizeof path, "space.ranges[%d]", v);
            if (!json_is_array(pair) || json_array_size(pair) != 2)
                return pn_rr_fail_at(rd, path, "expected a [low, high] pair of MIDI pitches");
            char p2[80];
            snprintf(p2, sizeof p2, "%s[0]", path);
            if ((err = pn_rr_get_int(rd, p2, json_array_get(pair, 0), 0, 127, &lo[v])) != PN_OK)
                return err;
            snprintf(p2, sizeof p2, "%s[1]", path);
            if ((err = pn_rr_get_int(rd, p2, json_array_get(pair, 1), 0, 127, &hi[v])) != PN_OK)
                return err;
            if (lo[v] > hi[v])
                return pn_rr_fail_at(rd, path, "low %d is above high %d", lo[v], hi[v]);
        }
    } else {
        int l = PN_SPACE_DEFAULT_LOW, h = PN_SPACE_DEFAULT_HIGH;
        if (low && (err = pn_rr_get_int(rd, "space.low", low, 0, 127, &l)) != PN_OK)
            return err;
        if (high && (err = pn_rr_get_int(rd, "space.high", high, 0, 127, &h)) != PN_OK)
            return err;
        if (l > h)
            return pn_rr_fail_at(rd, "space", "low %d is above high %d", l, h);
        for (int v = 0; v < k; ++v) {
            lo[v] = l;
            hi[v] = h;
        }
    }
    pn_error_info inner;
    err = pn_space_init(space, k, lo, hi, &inner);
    if (err != PN_OK)
        return pn_rr_fail_at(rd, "space", "%s", inner.message);
    return PN_OK;
}

/* ------------------------------------------------------------------------ */
/* Rules */

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
static pn_error inner_failure(const pn_rr *rd, const char *path, const pn_error_info *inner)
{
    if (inner->code == PN_ERR_NOMEM)
        return pn_rr_out_of_memory(rd);
    return pn_rr_fail_at(rd, path, "%s", inner->message);
}

/* Reads the distribution object at `path` over r's feature values into
 * target (m entries, zeroed here). */
static pn_error read_distribution(const pn_rr *rd, const char *path, const json_t *targets,
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
            err = inner_failure(rd, kpath, &inner);
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
        return pn_rr_fail_type(rd, path, "an object with \"targets\" and an optional \"count\"", entry);
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
    return read_distribution(rd, fpath, targets, r, row);
}

/* Builds the value table of f for the field at `path`, refusing first what
 * would go over the memory limit: the table itself, and for a rule's own
 * feature (adds_rows) the solver's dense Hessian over every cell so far. */
static pn_error build_table(const pn_rr *rd, const char *path, const pn_feature *f,
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
        return inner_failure(rd, path, &inner);
    rd->budget->table_bytes = pn_bytes_add(rd->budget->table_bytes, pn_feature_table_bytes(*out));
    if (adds_rows)
        rd->budget->rows += pn_feature_table_size(*out);
    return PN_OK;
}

/* Reads "context", "smoothing" and "contexts" of rules[index]. */
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
        return inner_failure(rd, fpath, &inner);
    char ctext[PN_FEATURE_TEXT_MAX];
    pn_feature_to_string(c->feature, ctext, sizeof ctext);
    pn_feature_table *shared = shared_table(rs, index, r, ctext);
    if (shared) {
        c->table = shared;
        c->table_borrowed = 1;
    } else if ((err = build_table(rd, fpath, c->feature, &rs->space, 0, &c->table)) != PN_OK) {
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
            err = pn_rr_fail_at(rd, kpath, "the context %s never takes the value '%s'", ctext,
                                shown);
            goto done;
        }
        if (e != PN_OK) {
            err = inner_failure(rd, kpath, &inner);
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

static pn_error read_context(const pn_rr *rd, const pn_rule_set *rs, size_t index,
                             const json_t *obj, pn_rule *r)
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

/* Uniform targets, for a rule of a feature file that gives none. */
static void uniform_targets(double *target, int32_t m)
{
    for (int32_t i = 0; i < m; ++i)
        target[i] = 1.0 / (double)m;
}

static pn_error read_rule(const pn_rr *rd, const pn_rule_set *rs, size_t index, const json_t *obj,
                          pn_rule *r)
{
    char path[64], fpath[96];
    snprintf(path, sizeof path, "rules[%zu]", index);
    if (!json_is_object(obj)) {
        return pn_rr_fail_type(rd, path, "a rule object", obj);
    }
    static const char *const keys[] = {"name",      "feature",  "targets",     "description",
                                       "learn",     "context",  "smoothing",   "contexts",
                                       "refinements", NULL};
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
            return pn_rr_fail_at(rd, fpath, "duplicate rule name \"%s\" (also rules[%zu])", shown, j);
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
        return inner_failure(rd, fpath, &inner);
    if ((err = build_table(rd, fpath, r->feature, &rs->space, 1, &r->table)) != PN_OK)
        return err;

    const int32_t m = pn_feature_table_size(r->table);
    if (!(r->target = calloc((size_t)m, sizeof *r->target)))
        return pn_rr_out_of_memory(rd);
    const json_t *targets = json_object_get(obj, "targets");
    snprintf(fpath, sizeof fpath, "%s.targets", path);
    if (targets)
        err = read_distribution(rd, fpath, targets, r, r->target);
    else
        uniform_targets(r->target, m);
    if (err != PN_OK)
        return err;
    return read_context(rd, rs, index, obj, r);
}

static pn_error from_json(const pn_rr *rd, const json_t *root, pn_rule_set **out)
{
    if (!json_is_object(root)) {
        char d[64];
        pn_json_describe(root, d, sizeof d);
        return pn_fail(rd->info, PN_ERR_PARSE, "%.200s: expected a JSON object, got %s", rd->name,
                       d);
    }
    static const char *const keys[] = {"format", "name",  "description", "lambda_p",
                                       "space",  "rules", "constraints", NULL};
    pn_error err = pn_rr_check_keys(rd, "(top level)", root, keys);
    if (err != PN_OK)
        return err;

    const json_t *format = json_object_get(root, "format");
    if (!format)
        return pn_rr_fail_at(rd, "format", "missing field, expected \"%s\"", PN_RULES_FORMAT);
    if (!json_is_string(format)) {
        char d[64];
        pn_json_describe(format, d, sizeof d);
        return pn_rr_fail_at(rd, "format", "expected \"%s\", got %s", PN_RULES_FORMAT, d);
    }
    if (strcmp(json_string_value(format), PN_RULES_FORMAT) != 0) {
        char shown[80];
        pn_rr_show_text(json_string_value(format), shown, sizeof shown);
        return pn_rr_fail_at(rd, "format", "expected \"%s\", got \"%s\"", PN_RULES_FORMAT, shown);
    }
    const json_t *jname = json_object_get(root, "name");
    if (!jname)
        return pn_rr_fail_at(rd, "name", "missing field");
    const char *name = NULL;
    if ((err = pn_rr_get_name(rd, "name", jname, &name)) != PN_OK)
        return err;
    const json_t *desc = json_object_get(root, "description");
    if (desc && !json_is_string(desc))
        return pn_rr_fail_at(rd, "description", "expected a string");

    const json_t *jlambda = json_object_get(root, "lambda_p");
    double lambda_p = 0.0;
    if (jlambda && (err = pn_rr_get_real(rd, "lambda_p", jlambda, 0.0, 1.0, 1, &lambda_p)) != PN_OK)
        return err;

    pn_space space;
    if ((err = read_space(rd, root, &space)) != PN_OK)
        return err;

    const json_t *rules = json_object_get(root, "rules");
    if (!rules)
        return pn_rr_fail_at(rd, "rules", "missing field");
    if (!json_is_array(rules)) {
        return pn_rr_fail_type(rd, "rules", "an array of rules", rules);
    }
    size_t count = json_array_size(rules);
    if (count == 0)
        return pn_rr_fail_at(rd, "rules", "empty list, a rule set needs at least one rule");
    if (count > PN_RULES_MAX_RULES)
        return pn_rr_fail_at(rd, "rules", "%zu rules, at most %d are allowed", count, PN_RULES_MAX_RULES);

    pn_rule_set *rs = calloc(1, sizeof *rs);
    if (!rs)
        return pn_rr_out_of_memory(rd);
    rs->space = space;
    rs->lambda_p = lambda_p;
    rs->max_memory = rd->max_memory;
    rs->name = pn_copy_string(name);
    rs->rules = calloc(count, sizeof *rs->rules);
    if (desc)
        rs->description = pn_copy_string(json_string_value(desc));
    if (!rs->name || !rs->rules || (desc && !rs->description)) {
        pn_rule_set_free(rs);
        return pn_rr_out_of_memory(rd);
    }
    for (size_t i = 0; i < count; ++i) {
        /* counted before reading, so a failed rule is freed with the set */
        rs->num_rules = (int32_t)i + 1;
        err = read_rule(rd, rs, i, json_array_get(rules, i), &rs->rules[i]);
        if (err != PN_OK) {
            pn_rule_set_free(rs);
            return err;
        }
    }
    if ((err = pn_rr_read_constraints(rd, json_object_get(root, "constraints"), rs)) != PN_OK) {
        pn_rule_set_free(rs);
        return err;
    }
    rs->table_bytes = rd->budget->table_bytes;
    *out = rs;
    return PN_OK;
}

/* Maps a jansson decoding failure to an error. */
static pn_error decode_failure(const pn_rr *rd, const json_error_t *je)
{
    switch (json_error_code(je)) {
    case json_error_out_of_memory:
        return pn_rr_out_of_memory(rd);
    default:
        break;
    }
    if (je->line > 0)
        return pn_fail(rd->info, PN_ERR_PARSE, "%.200s: line %d column %d: %s", rd->name, je->line,
                       je->column, je->text);
    return pn_fail(rd->info, PN_ERR_PARSE, "%.200s: %s", rd->name, je->text);
}

static pn_error parse_root(const pn_rr *rd, json_t *root, const json_error_t *je,
                           pn_rule_set **out)
{
    if (!root)
        return decode_failure(rd, je);
    pn_error err = from_json(rd, root, out);
    json_decref(root);
    return err;
}

void pn_rules_options_default(pn_rules_options *opts)
{
    opts->flags = 0;
    opts->max_memory = PN_DEFAULT_MAX_MEMORY;
}

static pn_error check_options(const pn_rules_options *opts, pn_error_info *info)
{
    if (opts->max_memory < 1 || opts->max_memory > PN_MAX_MEMORY_LIMIT)
        return pn_fail(info, PN_ERR_INVALID, "memory limit %lld bytes is outside [1, %lld]",
                       (long long)opts->max_memory, (long long)PN_MAX_MEMORY_LIMIT);
    return PN_OK;
}

pn_error pn_rules_parse_opt(const char *name, const char *text, size_t len,
                            const pn_rules_options *opts, pn_rule_set **out, pn_error_info *info)
{
    if (!out)
        return pn_fail(info, PN_ERR_INVALID, "pn_rules_parse: out is NULL");
    *out = NULL;
    pn_error err = check_options(opts, info);
    if (err != PN_OK)
        return err;
    pn_rr_budget budget = {0, 0};
    pn_rr rd = {name ? name : "rules", opts->flags, info, opts->max_memory, &budget};
    if (!text && len > 0)
        return pn_fail(info, PN_ERR_INVALID, "%.200s: text is NULL", rd.name);
    const size_t bom = pn_file_bom_length(text, len);
    json_error_t je;
    json_t *root = json_loadb(text ? text + bom : "", len - bom, JSON_REJECT_DUPLICATES, &je);
    return parse_root(&rd, root, &je, out);
}

pn_error pn_rules_parse_ex(const char *name, const char *text, size_t len, unsigned flags,
                           pn_rule_set **out, pn_error_info *info)
{
    pn_rules_options opts;
    pn_rules_options_default(&opts);
    opts.flags = flags;
    return pn_rules_parse_opt(name, text, len, &opts, out, info);
}

pn_error pn_rules_parse(const char *name, const char *text, size_t len, pn_rule_set **out,
                        pn_error_info *info)
{
    return pn_rules_parse_ex(name, text, len, 0, out, info);
}

pn_error pn_rules_read_opt(const char *path, const pn_rules_options *opts, pn_rule_set **out,
                           pn_error_info *info)
{
    if (!out)
        return pn_fail(info, PN_ERR_INVALID, "pn_rules_read: out is NULL");
    *out = NULL;
    if (!path)
        return pn_fail(info, PN_ERR_INVALID, "pn_rules_read: path is NULL");
    pn_error err = check_options(opts, info);
    if (err != PN_OK)
        return err;
    char *text = NULL;
    size_t len = 0;
    if ((err = pn_file_read(path, 0, &text, &len, info)) != PN_OK)
        return err;
    err = pn_rules_parse_opt(path, text, len, opts, out, info);
    free(text);
    return err;
}

pn_error pn_rules_read_ex(const char *path, unsigned flags, pn_rule_set **out, pn_error_info *info)
{
    pn_rules_options opts;
    pn_rules_options_default(&opts);
    opts.flags = flags;
    return pn_rules_read_opt(path, &opts, out, info);
}

pn_error pn_rules_read(const char *path, pn_rule_set **out, pn_error_info *info)
{
    return pn_rules_read_ex(path, 0, out, info);
}

/* ------------------------------------------------------------------------ */
/* The problem */

static int64_t run_row_sums(void *ctx, const unsigned char *kept, const double *v, int nv,
                            int64_t first, int64_t count, const pn_row_sums_bound *bound,
                            int32_t *at, double *out)
{
    return pn_feature_sums_run(ctx, kept, v, nv, first, count, bound ? bound->lower : NULL,
                               bound ? bound->cut : NULL, at, out);
}

static void free_row_sums(void *ctx)
{
    pn_feature_sums_free(ctx);
}

/* Every sonority is a group of its own, numbered in space order (the
 * de-overlap numbers groups by first appearance): the solver's passes over
 * all groups can sum rows from the feature tables in space order. */
static pn_error attach_row_sums(pn_problem *prob, const pn_feature_set *set, pn_error_info *info)
{
    pn_feature_sums *sums = NULL;
    pn_error err = pn_feature_sums_create(set, prob->rule_start, &sums, info);
    if (err != PN_OK)
        return err;
    prob->row_sums.run = run_row_sums;
    prob->row_sums.ctx = sums;
    prob->row_sums.free_ctx = free_row_sums;
    return PN_OK;
}

pn_error pn_rules_check_build(const pn_rule_set *rs, int with_group_of, pn_error_info *info)
{
    const int64_t n = pn_space_size(&rs->space);
    const int32_t K = rs->num_rules;
    int32_t *sizes = malloc((size_t)K * sizeof *sizes);
    if (!sizes)
        return pn_fail(info, PN_ERR_NOMEM, "rule set %.100s: out of memory", rs->name);
    for (int32_t r = 0; r < K; ++r)
        sizes[r] = pn_feature_table_size(rs->rules[r].table);
    int64_t need = pn_bytes_add(rs->table_bytes, pn_deoverlap_bytes(n, K, sizes));
    if (with_group_of)
        need = pn_bytes_add(need, pn_bytes_mul(n, 4));
    free(sizes);
    char what[PN_MESSAGE_SIZE];
    snprintf(what, sizeof what, "rule set %.100s: de-overlapping %d rules over %lld sonorities",
             rs->name, (int)K, (long long)n);
    return pn_memory_check(need, rs->max_memory > 0 ? rs->max_memory : PN_DEFAULT_MAX_MEMORY, info,
                           what);
}

pn_error pn_rules_build_problem(const pn_rule_set *rs, pn_problem **out, int32_t *group_of,
                                pn_error_info *info)
{
    if (!out)
        return pn_fail(info, PN_ERR_INVALID, "pn_rules_build_problem: out is NULL");
    *out = NULL;
    if (!rs || rs->num_rules < 1 || !rs->rules)
        return pn_fail(info, PN_ERR_INVALID, "pn_rules_build_problem: no rule set given");
    const int64_t n = pn_space_size(&rs->space);
    if (n < 1 || n > PN_RULES_MAX_SPACE)
        return pn_fail(info, PN_ERR_INVALID,
                       "rule set %.100s: the space has %" PRId64
                       " sonorities, more than the %" PRId64 " that can be de-overlapped",
                       rs->name, n, PN_RULES_MAX_SPACE);
    const int32_t K = rs->num_rules;
    int32_t *sizes = malloc((size_t)K * sizeof *sizes);
    const char **names = malloc((size_t)K * sizeof *names);
    const pn_feature_table **tables = malloc((size_t)K * sizeof *tables);
    if (!sizes || !names || !tables) {
        free(sizes);
        free(names);
        free(tables);
        return pn_fail(info, PN_ERR_NOMEM, "rule set %.100s: out of memory", rs->name);
    }
    int64_t rows = 0;
    for (int32_t r = 0; r < K; ++r) {
        sizes[r] = pn_feature_table_size(rs->rules[r].table);
        names[r] = rs->rules[r].name;
        tables[r] = rs->rules[r].table;
        rows += sizes[r];
    }
    pn_error err = PN_OK;
    pn_problem *prob = NULL;
    pn_feature_set set = {rs->space, K, tables};
    if (rows > INT32_MAX) {
        err = pn_fail(info, PN_ERR_INVALID, "rule set %.100s: %" PRId64 " cells in all, too many",
                      rs->name, rows);
        goto done;
    }
    if ((err = pn_feature_set_check(&set, info)) != PN_OK)
        goto done;
    if ((err = pn_rules_check_build(rs, group_of != NULL, info)) != PN_OK)
        goto done;
    if ((err = pn_problem_create(n, K, sizes, names, &prob, info)) != PN_OK)
        goto done;
    for (int32_t r = 0; r < K; ++r)
        memcpy(prob->target + prob->rule_start[r], rs->rules[r].target,
               (size_t)sizes[r] * sizeof *prob->target);
    if (group_of)
        err = pn_deoverlap_map(prob, pn_feature_cells, &set, group_of, info);
    else
        err = pn_deoverlap(prob, pn_feature_cells, &set, info);
    if (err == PN_OK && prob->num_groups == n)
        err = attach_row_sums(prob, &set, info);
done:
    if (err != PN_OK) {
        pn_problem_free(prob);
        prob = NULL;
    }
    free(sizes);
    free(names);
    free(tables);
    *out = prob;
    return err;
}

/* ------------------------------------------------------------------------ */
/* Targets per step */

int32_t pn_rule_set_num_rows(const pn_rule_set *rs)
{
    int32_t m = 0;
    for (int32_t r = 0; r < rs->num_rules; ++r)
        m += pn_feature_table_size(rs->rules[r].table);
    return m;
}

int pn_rule_set_has_context(const pn_rule_set *rs)
{
    for (int32_t r = 0; r < rs->num_rules; ++r)
        if (rs->rules[r].context)
            return 1;
    return 0;
}

/* Index of `cell` among the listed contexts, or -1. */
static int32_t find_listed(const pn_rule_context *c, int32_t cell)
{
    int32_t lo = 0, hi = c->num_rows - 1;
    while (lo <= hi) {
        const int32_t mid = lo + (hi - lo) / 2;
        if (c->cell[mid] == cell)
            return mid;
        if (c->cell[mid] < cell)
            lo = mid + 1;
        else
            hi = mid - 1;
    }
    return -1;
}

void pn_rule_targets_for_cell(const pn_rule *rule, int32_t context_cell, double *out)
{
    const int32_t m = pn_feature_table_size(rule->table);
    const pn_rule_context *c = rule->context;
    const int32_t i = (c && context_cell >= 0) ? find_listed(c, context_cell) : -1;
    if (i < 0) {
        memcpy(out, rule->target, (size_t)m * sizeof *out);
        return;
    }
    const double *row = c->row + (size_t)i * (size_t)m;
    const double count = c->count[i];
    if (isinf(count)) {
        memcpy(out, row, (size_t)m * sizeof *out);
        return;
    }
    const double total = count + c->smoothing;
    if (!(total > 0.0)) { /* never seen and no smoothing: nothing to go on but the back-off */
        memcpy(out, rule->target, (size_t)m * sizeof *out);
        return;
    }
    const double a = count / total, b = c->smoothing / total;
    for (int32_t j = 0; j < m; ++j)
        out[j] = a * row[j] + b * rule->target[j];
}

/* Moves out (m entries, the targets of the coarser levels) toward the
 * listed row of level c for the previous sonority, if there is one. */
static pn_error refine(const pn_rule_context *c, int32_t m, const int *previous, double *out,
                       pn_error_info *info)
{
    int32_t cell = -1;
    pn_error err = pn_feature_cell_of(c->table, previous, &cell, info);
    if (err != PN_OK)
        return err;
    const int32_t i = find_listed(c, cell);
    if (i < 0)
        return PN_OK;
    const double *row = c->row + (size_t)i * (size_t)m;
    const double count = c->count[i];
    const double total = count + c->smoothing;
    if (isinf(count)) {
        memcpy(out, row, (size_t)m * sizeof *out);
    } else if (total > 0.0) {
        const double a = count / total, keep = c->smoothing / total;
        for (int32_t j = 0; j < m; ++j)
            out[j] = a * row[j] + keep * out[j];
    }
    return PN_OK;
}

pn_error pn_rules_targets(const pn_rule_set *rs, const int *previous, double *b,
                          pn_error_info *info)
{
    double *out = b;
    for (int32_t r = 0; r < rs->num_rules; ++r) {
        const pn_rule *rule = &rs->rules[r];
        const int32_t m = pn_feature_table_size(rule->table);
        int32_t cell = -1;
        if (rule->context && previous) {
            pn_error err = pn_feature_cell_of(rule->context->table, previous, &cell, info);
            if (err != PN_OK)
                return err;
        }
        pn_rule_targets_for_cell(rule, cell, out);
        for (int32_t k = 0; previous && k < rule->num_refinements; ++k) {
            pn_error err = refine(&rule->refinements[k], m, previous, out, info);
            if (err != PN_OK)
                return err;
        }
        out += m;
    }
    return PN_OK;
}

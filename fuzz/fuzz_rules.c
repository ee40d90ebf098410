/* libFuzzer target for the rule set reader (parse only).
 *
 * Any input must either fail with a parse error whose message names the
 * input, or give a rule set whose targets are a distribution per rule, also
 * after smoothing toward the back-off for every listed context (huge
 * smoothing and counts once gave NaN there), and whose constraints can be
 * checked. Anything else aborts, so the fuzzer reports it.
 *
 * Parsing builds every feature's value table, which for a large space takes
 * up to seconds (the feature module allows 2^27 window combinations). To
 * keep the fuzzer fast, inputs whose space has more than MAX_SONORITIES
 * sonorities are skipped before parsing; the seeds use small spaces. The
 * problem is not built here (de-overlap walks the whole space). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "parnassus/file.h"
#include "parnassus/rules.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_SONORITIES ((int64_t)1 << 20)

static void require(int condition)
{
    if (!condition)
        abort();
}

static int int_or(const json_t *v, int fallback)
{
    if (!json_is_integer(v))
        return fallback;
    json_int_t x = json_integer_value(v);
    return x < -1000 || x > 1000 ? fallback : (int)x;
}

/* Radix of a voice with pitches lo..hi, as an upper bound: invalid ranges
 * are rejected by the reader before any table is built. */
static int64_t radix(int lo, int hi)
{
    int64_t r = (int64_t)hi - lo + 2;
    return r < 1 ? 1 : r > 129 ? 129 : r;
}

/* An upper bound on the number of sonorities of the input's space, or 0
 * when the input is not a JSON object (the reader rejects it quickly). */
static int64_t space_size(const uint8_t *data, size_t size)
{
    const size_t bom = pn_file_bom_length((const char *)data, size); /* as the reader does */
    json_t *root = json_loadb((const char *)data + bom, size - bom, JSON_REJECT_DUPLICATES, NULL);
    if (!json_is_object(root)) {
        json_decref(root);
        return 0;
    }
    const json_t *sp = json_object_get(root, "space");
    int64_t n = 1;
    if (!json_is_object(sp)) {
        /* the default 4 voices x 55 values (or an invalid space) */
        n = sp ? 0 : 55 * 55 * 55 * 55;
    } else {
        const json_t *ranges = json_object_get(sp, "ranges");
        if (json_is_array(ranges)) {
            size_t k = json_array_size(ranges);
            for (size_t v = 0; v < k && v < 8; ++v) {
                const json_t *pair = json_array_get(ranges, v);
                n *=
                    radix(int_or(json_array_get(pair, 0), 0), int_or(json_array_get(pair, 1), 127));
            }
        } else {
            int k = int_or(json_object_get(sp, "voices"), 4);
            k = k < 1 ? 1 : k > 8 ? 8 : k;
            int64_t r = radix(int_or(json_object_get(sp, "low"), 31),
                              int_or(json_object_get(sp, "high"), 84));
            for (int v = 0; v < k; ++v)
                n *= r;
        }
    }
    json_decref(root);
    return n;
}

/* m entries, each finite and >= 0, summing to 1. */
static void require_distribution(const double *target, int32_t m)
{
    double sum = 0;
    for (int32_t c = 0; c < m; ++c) {
        require(target[c] >= 0 && isfinite(target[c]));
        sum += target[c];
    }
    require(fabs(sum - 1) <= PN_RULES_SUM_TOLERANCE);
}

/* The smoothed targets of every listed context of the rule's first level. */
static void require_smoothed(const pn_rule *rule, int32_t m)
{
    if (!rule->context)
        return;
    double *out = malloc((size_t)m * sizeof *out);
    require(out != NULL);
    for (int32_t i = 0; i < rule->context->num_rows; ++i) {
        pn_rule_targets_for_cell(rule, rule->context->cell[i], out);
        require_distribution(out, m);
    }
    free(out);
}

/* Every "known" constraint names a rule of the set, and the set's checks
 * of the lowest and highest sonority and of the move between them
 * (constraints on a move, and on the sonority alone) answer 0 or 1. */
static void require_constraints(const pn_rule_set *rs)
{
    int low[PN_SPACE_MAX_VOICES], high[PN_SPACE_MAX_VOICES];
    for (int v = 0; v < rs->space.num_voices; ++v) {
        low[v] = rs->space.low[v];
        high[v] = rs->space.high[v];
    }
    for (int32_t i = 0; i < rs->num_constraints; ++i) {
        const pn_constraint *c = &rs->constraints[i];
        if (c->kind == PN_CONSTRAINT_KNOWN)
            require(c->rule >= 0 && c->rule < rs->num_rules);
        else
            require(c->rule == -1);
    }
    const int a = pn_rule_set_allows(rs, NULL, low), b = pn_rule_set_allows(rs, low, high);
    require((a == 0 || a == 1) && (b == 0 || b == 1));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (space_size(data, size) > MAX_SONORITIES)
        return 0;
    pn_rule_set *rs = NULL;
    pn_error_info info;
    /* a smaller memory limit than the default, so that refusals are met */
    pn_rule_set_options opts;
    pn_rule_set_options_default(&opts);
    opts.max_memory = (int64_t)256 << 20;
    pn_error err = pn_rule_set_parse_opt("input", (const char *)data, size, &opts, &rs, &info);
    if (err != PN_OK) {
        require(rs == NULL);
        require(err == PN_ERR_PARSE || err == PN_ERR_NOMEM || err == PN_ERR_LIMIT);
        require(strncmp(info.message, "input:", 6) == 0);
        return 0;
    }
    require(rs != NULL);
    require(rs->num_rules >= 1);
    for (int32_t r = 0; r < rs->num_rules; ++r) {
        const pn_rule *rule = &rs->rules[r];
        require(rule->name && rule->name[0] != '\0');
        for (int32_t q = 0; q < r; ++q)
            require(strcmp(rs->rules[q].name, rule->name) != 0);
        int32_t m = pn_feature_table_size(rule->table);
        require(m >= 1);
        require_distribution(rule->target, m);
        require_smoothed(rule, m);
    }
    require_constraints(rs);
    pn_rule_set_free(rs);
    return 0;
}

/* The targets of a rule set for one step: each rule's distribution given
 * the previous sonority, through its context levels. */
#include "parnassus/rules.h"

#include <math.h>
#include <string.h>

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

pn_error pn_rule_set_targets(const pn_rule_set *rs, const int *previous, double *b,
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

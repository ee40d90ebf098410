/* The problem of a rule set: its rules' cells and targets, de-overlapped
 * over the space, with row sums from the feature tables when every
 * sonority is a group of its own. */
#include "parnassus/rules.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parnassus/deoverlap.h"

static int64_t run_row_sums(void *ctx, int lane, const unsigned char *kept, const double *v, int nv,
                            int64_t first, int64_t count, const pn_row_sums_bound *bound,
                            int32_t *at, double *out)
{
    return pn_feature_sums_run(ctx, lane, kept, v, nv, first, count, bound ? bound->lower : NULL,
                               bound ? bound->cut : NULL, bound && bound->prepared, at, out);
}

static void prepare_row_sums(void *ctx, const unsigned char *kept, const double *v, int nv)
{
    pn_feature_sums_prepare(ctx, kept, v, nv);
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
    prob->row_sums.prepare = prepare_row_sums;
    prob->row_sums.ctx = sums;
    prob->row_sums.free_ctx = free_row_sums;
    return PN_OK;
}

pn_error pn_rule_set_check_build(const pn_rule_set *rs, int with_group_of, pn_error_info *info)
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

pn_error pn_rule_set_build_problem(const pn_rule_set *rs, pn_problem **out, int32_t *group_of,
                                   pn_error_info *info)
{
    if (!out)
        return pn_fail(info, PN_ERR_INVALID, "pn_rule_set_build_problem: out is NULL");
    *out = NULL;
    if (!rs || rs->num_rules < 1 || !rs->rules)
        return pn_fail(info, PN_ERR_INVALID, "pn_rule_set_build_problem: no rule set given");
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
    if ((err = pn_rule_set_check_build(rs, group_of != NULL, info)) != PN_OK)
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

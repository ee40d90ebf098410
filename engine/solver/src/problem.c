#include "parnassus/problem.h"

#include "parnassus/memory.h"
#include "text.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char *pn_copy_string(const char *s)
{
    size_t len = strlen(s);
    char *out = malloc(len + 1);
    if (out)
        memcpy(out, s, len + 1);
    return out;
}

pn_error pn_problem_create(int64_t n, int32_t num_rules, const int32_t *rule_sizes,
                           const char *const *names, pn_problem **out, pn_error_info *info)
{
    *out = NULL;
    if (n < 1)
        return pn_fail(info, PN_ERR_INVALID, "n must be >= 1 (got %" PRId64 ")", n);
    if (num_rules < 1)
        return pn_fail(info, PN_ERR_INVALID, "the number of rules must be >= 1 (got %d)",
                       (int)num_rules);
    int64_t m = 0;
    for (int32_t r = 0; r < num_rules; ++r) {
        if (rule_sizes[r] < 1)
            return pn_fail(info, PN_ERR_INVALID, "rule %d: size must be >= 1 (got %d)", (int)r + 1,
                           (int)rule_sizes[r]);
        m += rule_sizes[r];
        if (m > INT32_MAX / 2)
            return pn_fail(info, PN_ERR_INVALID, "too many rule components (> %d)", INT32_MAX / 2);
    }
    pn_problem *prob = calloc(1, sizeof *prob);
    if (!prob)
        return pn_fail(info, PN_ERR_NOMEM, "out of memory");
    prob->n = n;
    prob->num_rules = num_rules;
    prob->num_rows = (int32_t)m;
    prob->rule_start = malloc(sizeof(int32_t) * (size_t)(num_rules + 1));
    prob->rule_name = calloc((size_t)num_rules, sizeof(char *));
    prob->target = calloc((size_t)m, sizeof(double));
    if (!prob->rule_start || !prob->rule_name || !prob->target)
        goto nomem;
    prob->rule_start[0] = 0;
    for (int32_t r = 0; r < num_rules; ++r) {
        prob->rule_start[r + 1] = prob->rule_start[r] + rule_sizes[r];
        char fallback[32];
        const char *name = names && names[r] ? names[r] : NULL;
        if (!name) {
            snprintf(fallback, sizeof fallback, "rule%d", (int)r + 1);
            name = fallback;
        }
        prob->rule_name[r] = pn_copy_string(name);
        if (!prob->rule_name[r])
            goto nomem;
    }
    *out = prob;
    return PN_OK;
nomem:
    pn_problem_free(prob);
    return pn_fail(info, PN_ERR_NOMEM, "out of memory");
}

pn_error pn_problem_set_groups(pn_problem *prob, int64_t num_groups, pn_error_info *info)
{
    if (num_groups < 1)
        return pn_fail(info, PN_ERR_INVALID, "the number of groups must be >= 1");
    if ((uint64_t)num_groups > SIZE_MAX / sizeof(int32_t) / (uint64_t)prob->num_rules)
        return pn_fail(info, PN_ERR_NOMEM, "too many groups");
    int32_t *rows = malloc(sizeof(int32_t) * (size_t)num_groups * (size_t)prob->num_rules);
    int64_t *size = malloc(sizeof(int64_t) * (size_t)num_groups);
    if (!rows || !size) {
        free(rows);
        free(size);
        return pn_fail(info, PN_ERR_NOMEM, "out of memory for %" PRId64 " groups", num_groups);
    }
    free(prob->group_rows);
    free(prob->group_size);
    prob->group_rows = rows;
    prob->group_size = size;
    prob->num_groups = num_groups;
    return PN_OK;
}

int64_t pn_problem_bytes(const pn_problem *prob)
{
    const int64_t m = prob->num_rows, K = prob->num_rules, G = prob->num_groups;
    int64_t bytes = pn_bytes_add(pn_bytes_mul(m, 8), pn_bytes_mul(K + 1, 4 + 8 + 16));
    return pn_bytes_add(bytes, pn_bytes_mul(G, K * 4 + 8));
}

void pn_problem_free(pn_problem *prob)
{
    if (!prob)
        return;
    if (prob->rule_name)
        for (int32_t r = 0; r < prob->num_rules; ++r)
            free(prob->rule_name[r]);
    free(prob->rule_name);
    free(prob->rule_start);
    free(prob->target);
    free(prob->group_rows);
    free(prob->group_size);
    if (prob->row_sums.free_ctx)
        prob->row_sums.free_ctx(prob->row_sums.ctx);
    free(prob);
}

pn_error pn_targets_validate(const pn_problem *prob, const double *target, pn_error_info *info)
{
    for (int32_t r = 0; r < prob->num_rules; ++r) {
        double sum = 0.0;
        for (int32_t i = prob->rule_start[r]; i < prob->rule_start[r + 1]; ++i) {
            double b = target[i];
            if (!(b >= 0.0) || !isfinite(b))
                return pn_fail(info, PN_ERR_INVALID, "rule %s: target %d is %g (must be >= 0)",
                               prob->rule_name[r], (int)(i - prob->rule_start[r]), b);
            sum += b;
        }
        if (fabs(sum - 1.0) > 1e-6)
            return pn_fail(info, PN_ERR_INVALID, "rule %s: targets sum to %.9g, not 1",
                           prob->rule_name[r], sum);
    }
    return PN_OK;
}

pn_error pn_problem_validate(const pn_problem *prob, pn_error_info *info)
{
    const int32_t K = prob->num_rules;
    pn_error err = pn_targets_validate(prob, prob->target, info);
    if (err != PN_OK)
        return err;
    if (prob->num_groups < 1 || !prob->group_rows || !prob->group_size)
        return pn_fail(info, PN_ERR_INVALID, "the problem has no groups");
    int64_t total = 0;
    for (int64_t k = 0; k < prob->num_groups; ++k) {
        if (prob->group_size[k] < 1)
            return pn_fail(info, PN_ERR_INVALID, "group %" PRId64 ": count must be >= 1", k + 1);
        total += prob->group_size[k];
        if (total > prob->n)
            break;
        const int32_t *rows = prob->group_rows + k * K;
        for (int32_t r = 0; r < K; ++r)
            if (rows[r] < prob->rule_start[r] || rows[r] >= prob->rule_start[r + 1])
                return pn_fail(info, PN_ERR_INVALID,
                               "group %" PRId64 ": cell of rule %s out of range", k + 1,
                               prob->rule_name[r]);
    }
    if (total != prob->n)
        return pn_fail(info, PN_ERR_INVALID, "group counts sum to %s%" PRId64 ", not n = %" PRId64,
                       total > prob->n ? "more than " : "", total, prob->n);
    return PN_OK;
}

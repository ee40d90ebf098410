/* A rule system (A, b) in de-overlapped form.
 *
 * Rules r = 0..K-1 own consecutive rows [rule_start[r], rule_start[r+1]) of
 * A (their cells, m_r of them) and the matching entries of the target b.
 * The raw space X = {0..n-1} is never stored: only the K' distinct columns
 * of A ("groups"), each as the K global row indices it has a 1 in, and how
 * many raw inputs share it. */
#ifndef PARNASSUS_PROBLEM_H
#define PARNASSUS_PROBLEM_H

#include <stdint.h>

#include "parnassus/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Optional: a faster way to sum a value per row over a raw input's rows
 * than reading its group's rows, for problems whose groups are the raw
 * inputs themselves (num_groups == n and group k is input k; the builder
 * that knows the structure sets it, e.g. pn_rule_set_build_problem). run()
 * sums over the rules r with kept[r] != 0 the values v[row_r(x) * nv + c]
 * (c < nv, 1 or 2) of the inputs x = first .. first + count - 1, in order:
 * the i-th input summed is x = first + at[i] with its sums in
 * out[i * nv + c]; it returns how many were summed.
 *
 * Without a bound (NULL) every input is summed. Passes that only look for
 * small sums may give one: lower[r * nv + c] no larger than any of rule
 * r's values v[i * nv + c] (e.g. their least); then run() may leave out
 * inputs whose sums it can tell are >= cut[c] for every c < nv, without
 * reading their rows.
 *
 * prepare (optional, may be NULL) lets run() tell more of them: a pass
 * with a bound may call it once, with the pass's kept, v and nv and no
 * run() in flight, and then set `prepared` in its bounds (lower may then
 * be NULL); run() may then bound sums from what prepare() took of v (e.g.
 * each rule's least over a part of the inputs) until kept, v or nv
 * change.
 *
 * run() may be called at the same time from different lanes (0 ..
 * PN_ROW_SUMS_LANES - 1; each lane one call at a time): the solver splits
 * its passes over all groups between threads that way. */
enum { PN_ROW_SUMS_LANES = 4 };

typedef struct pn_row_sums_bound {
    const double *lower; /* K * nv */
    double cut[2];
    int prepared; /* prepare() was called for this pass */
} pn_row_sums_bound;

typedef struct pn_row_sums {
    int64_t (*run)(void *ctx, int lane, const unsigned char *kept, const double *v, int nv,
                   int64_t first, int64_t count, const pn_row_sums_bound *bound, int32_t *at,
                   double *out);
    void (*prepare)(void *ctx, const unsigned char *kept, const double *v, int nv);
    void *ctx;
    void (*free_ctx)(void *ctx); /* called by pn_problem_free */
} pn_row_sums;

typedef struct pn_problem {
    int64_t n;            /* size of the raw space */
    int32_t num_rules;    /* K */
    int32_t num_rows;     /* m = sum of the rule sizes */
    int32_t *rule_start;  /* K + 1 entries, rule_start[0] = 0, [K] = m */
    char **rule_name;     /* K names, owned */
    double *target;       /* m entries: b */
    int64_t num_groups;   /* K' */
    int32_t *group_rows;  /* K' x K, row-major: global row of group k in rule r */
    int64_t *group_size;  /* K' entries: raw inputs in group k (c_k >= 1) */
    pn_row_sums row_sums; /* all NULL when the problem has none */
} pn_problem;

/* Allocates a problem with K rules of the given sizes and names (copied;
 * NULL names become "rule1", "rule2", ...). Targets start at 0, there are no
 * groups yet. */
pn_error pn_problem_create(int64_t n, int32_t num_rules, const int32_t *rule_sizes,
                           const char *const *names, pn_problem **out, pn_error_info *info);

/* Reserves room for `num_groups` groups (group_rows, group_size). */
pn_error pn_problem_set_groups(pn_problem *prob, int64_t num_groups, pn_error_info *info);

void pn_problem_free(pn_problem *prob);

/* The bytes prob holds (its group table, K' x K rows, above all). */
int64_t pn_problem_bytes(const pn_problem *prob);

/* Size m_r of rule r. */
static inline int32_t pn_rule_size(const pn_problem *prob, int32_t r)
{
    return prob->rule_start[r + 1] - prob->rule_start[r];
}

/* Checks a target vector for prob's rules (m entries): every entry finite
 * and >= 0, each rule's entries summing to 1 within 1e-6. */
pn_error pn_targets_validate(const pn_problem *prob, const double *target, pn_error_info *info);

/* Checks the invariants a solver relies on: targets >= 0 summing to 1 per
 * rule (within 1e-6), rows in range and inside their own rule, positive
 * counts summing to n. Returns PN_ERR_INVALID with a reason otherwise. */
pn_error pn_problem_validate(const pn_problem *prob, pn_error_info *info);

#ifdef __cplusplus
}
#endif

#endif

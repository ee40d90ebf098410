/* Artificial cases A1 and A2 (paper section 5.1).
 *
 * The raw space is split at random into halves X1 and X2. Rules 1 and 2 only
 * have cells inside X1 or inside X2, and take their targets from one random
 * distribution p1 on X1; rules 3 and 4 likewise from p2 on X2. Rule 5 has
 * cells inside X1, inside X2 and across both, and a distribution p3 that puts
 * mass on at least one cell inside each half. Then {1,2} and {3,4} are
 * consistent (p1, p2 are witnesses) and every other pair is not: rules 1, 2
 * forbid X2, rules 3, 4 forbid X1 and rule 5 needs both. The argument is in
 * docs/test-instances.md. */
#include "parnassus/gen.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "parnassus/deoverlap.h"
#include "rng.h"

enum {
    N = PN_GEN_ARTIFICIAL_N,
    K = PN_GEN_ARTIFICIAL_RULES,
    HALF = N / 2,
    WITNESSES = 3, /* p1 (rules 1, 2), p2 (rules 3, 4), p3 (rule 5) */
};

static const int32_t sizes_a1[K] = {80, 50, 60, 60, 60};
static const int32_t sizes_a2[K] = {70, 50, 65, 65, 65};

typedef struct artificial {
    const int32_t *size;
    int32_t cell[K][N]; /* local cell of every raw input, per rule */
    double witness[WITNESSES][N];
    int32_t half[2][HALF]; /* X1, X2 */
} artificial;

/* A random composition of `count` items into `parts` non-empty segments:
 * segment j is [start[j], start[j+1]). Cut points are a uniform random
 * subset, so segment sizes are uneven. */
static void random_segments(gen_rng *rng, int32_t count, int32_t parts, int32_t *start)
{
    int32_t cuts[HALF];
    for (int32_t i = 0; i < count - 1; ++i)
        cuts[i] = i + 1;
    /* partial Fisher-Yates: the first parts-1 entries become the sample */
    for (int32_t i = 0; i < parts - 1; ++i) {
        int32_t j = i + (int32_t)gen_below(rng, (uint64_t)(count - 1 - i));
        int32_t tmp = cuts[i];
        cuts[i] = cuts[j];
        cuts[j] = tmp;
    }
    for (int32_t i = 1; i < parts - 1; ++i) { /* insertion sort, parts is small */
        int32_t v = cuts[i], j = i;
        for (; j > 0 && cuts[j - 1] > v; --j)
            cuts[j] = cuts[j - 1];
        cuts[j] = v;
    }
    start[0] = 0;
    for (int32_t j = 1; j < parts; ++j)
        start[j] = cuts[j - 1];
    start[parts] = count;
}

/* Splits a shuffled copy of one half into `parts` segments; segment j gets
 * the label label[j] in rule r. */
static void label_half(gen_rng *rng, artificial *art, int32_t r, const int32_t *half, int32_t parts,
                       const int32_t *label)
{
    int32_t items[HALF], start[HALF + 1];
    memcpy(items, half, sizeof items);
    gen_shuffle(rng, items, HALF);
    random_segments(rng, HALF, parts, start);
    for (int32_t j = 0; j < parts; ++j)
        for (int32_t i = start[j]; i < start[j + 1]; ++i)
            art->cell[r][items[i]] = label[j];
}

static void shuffled_labels(gen_rng *rng, int32_t m, int32_t *label)
{
    for (int32_t i = 0; i < m; ++i)
        label[i] = i;
    gen_shuffle(rng, label, m);
}

/* Rules 1-4: every cell lies inside X1 or inside X2, about half on each
 * side; cell numbers are shuffled so the two sides interleave. */
static void build_pure_rule(gen_rng *rng, artificial *art, int32_t r)
{
    const int32_t m = art->size[r];
    const int32_t in_x1 = m / 2 + gen_between(rng, -3, 3);
    int32_t label[N];
    shuffled_labels(rng, m, label);
    label_half(rng, art, r, art->half[0], in_x1, label);
    label_half(rng, art, r, art->half[1], m - in_x1, label + in_x1);
}

/* Rule 5: about a third of the cells inside X1, a third inside X2, and the
 * rest mixed (one X1 segment joined with one X2 segment). Returns in
 * only_x1 / only_x2 one label of each pure kind, chosen at random. */
static void build_mixed_rule(gen_rng *rng, artificial *art, int32_t r, int32_t *only_x1,
                             int32_t *only_x2)
{
    const int32_t m = art->size[r];
    const int32_t in_x1 = m / 3 + gen_between(rng, -2, 2);
    const int32_t in_x2 = m / 3 + gen_between(rng, -2, 2);
    const int32_t mixed = m - in_x1 - in_x2;
    int32_t label[N], side[N];
    shuffled_labels(rng, m, label);
    /* X1 segments: in_x1 pure ones, then one per mixed cell */
    memcpy(side, label, sizeof(int32_t) * (size_t)in_x1);
    memcpy(side + in_x1, label + in_x1 + in_x2, sizeof(int32_t) * (size_t)mixed);
    label_half(rng, art, r, art->half[0], in_x1 + mixed, side);
    /* X2 segments: in_x2 pure ones, then the same mixed labels */
    memcpy(side, label + in_x1, sizeof(int32_t) * (size_t)in_x2);
    memcpy(side + in_x2, label + in_x1 + in_x2, sizeof(int32_t) * (size_t)mixed);
    label_half(rng, art, r, art->half[1], in_x2 + mixed, side);
    *only_x1 = label[gen_below(rng, (uint64_t)in_x1)];
    *only_x2 = label[in_x1 + gen_below(rng, (uint64_t)in_x2)];
}

/* Sparse random weights on `items`, scaled to total `mass`: about one item
 * in eight gets zero, the others u^3 (skewed like a Dirichlet with a small
 * parameter, without libm). Item `forced` (or the first one, if -1) is never
 * zero, so the mass is never empty. */
static void draw_mass(gen_rng *rng, const int32_t *items, int32_t count, int32_t forced,
                      double mass, double *p)
{
    double weight[HALF];
    double sum = 0.0;
    if (forced < 0)
        forced = items[0];
    for (int32_t i = 0; i < count; ++i) {
        double u = gen_uniform_pos(rng);
        int zero = gen_below(rng, 8) == 0 && items[i] != forced;
        weight[i] = zero ? 0.0 : u * u * u;
        sum += weight[i];
    }
    for (int32_t i = 0; i < count; ++i)
        p[items[i]] = mass * (weight[i] / sum);
}

/* Some raw input of rule r's cell `label`, restricted to one half. */
static int32_t member_of(const artificial *art, int32_t r, int32_t label, const int32_t *half)
{
    for (int32_t i = 0; i < HALF; ++i)
        if (art->cell[r][half[i]] == label)
            return half[i];
    return -1;
}

static pn_error build(pn_gen_case which, uint64_t seed, artificial **out)
{
    *out = NULL;
    if (which != PN_GEN_A1 && which != PN_GEN_A2)
        return PN_ERR_INVALID;
    artificial *art = calloc(1, sizeof *art);
    if (!art)
        return PN_ERR_NOMEM;
    art->size = which == PN_GEN_A1 ? sizes_a1 : sizes_a2;
    gen_rng rng;
    gen_rng_seed(&rng, seed, (uint64_t)which);

    int32_t perm[N];
    for (int32_t x = 0; x < N; ++x)
        perm[x] = x;
    gen_shuffle(&rng, perm, N);
    memcpy(art->half[0], perm, sizeof art->half[0]);
    memcpy(art->half[1], perm + HALF, sizeof art->half[1]);

    for (int32_t r = 0; r < 4; ++r)
        build_pure_rule(&rng, art, r);
    int32_t only_x1, only_x2;
    build_mixed_rule(&rng, art, 4, &only_x1, &only_x2);

    draw_mass(&rng, art->half[0], HALF, -1, 1.0, art->witness[0]);
    draw_mass(&rng, art->half[1], HALF, -1, 1.0, art->witness[1]);
    draw_mass(&rng, art->half[0], HALF, member_of(art, 4, only_x1, art->half[0]), 0.5,
              art->witness[2]);
    draw_mass(&rng, art->half[1], HALF, member_of(art, 4, only_x2, art->half[1]), 0.5,
              art->witness[2]);
    *out = art;
    return PN_OK;
}

/* Rules 1, 2 follow p1, rules 3, 4 p2, rule 5 p3. */
static int witness_of_rule(int32_t r)
{
    return r < 2 ? 0 : r < 4 ? 1 : 2;
}

static int artificial_cells(void *ctx, int32_t rule, int64_t first, int64_t count, int32_t *cells)
{
    const artificial *art = ctx;
    memcpy(cells, art->cell[rule] + first, sizeof(int32_t) * (size_t)count);
    return 0;
}

static pn_error fill_targets(const artificial *art, pn_problem *prob, pn_error_info *info)
{
    for (int32_t r = 0; r < K; ++r) {
        double *b = prob->target + prob->rule_start[r];
        const double *p = art->witness[witness_of_rule(r)];
        for (int32_t x = 0; x < N; ++x)
            b[art->cell[r][x]] += p[x];
        double sum = 0.0;
        for (int32_t i = 0; i < art->size[r]; ++i)
            sum += b[i];
        if (fabs(sum - 1.0) >= 1e-12)
            return pn_fail(info, PN_ERR_NUMERIC, "rule %d: targets sum to %.17g", (int)r + 1, sum);
    }
    return PN_OK;
}

static pn_error build_failed(pn_error err, pn_error_info *info)
{
    if (err == PN_ERR_INVALID)
        return pn_fail(info, err, "unknown artificial case (expected A1 or A2)");
    return pn_fail(info, err, "out of memory");
}

pn_error pn_gen_artificial(pn_gen_case which, uint64_t seed, pn_problem **out, pn_error_info *info)
{
    *out = NULL;
    artificial *art;
    pn_error err = build(which, seed, &art);
    if (err != PN_OK)
        return build_failed(err, info);
    pn_problem *prob = NULL;
    err = pn_problem_create(N, K, art->size, NULL, &prob, info);
    if (err == PN_OK)
        err = fill_targets(art, prob, info);
    if (err == PN_OK)
        err = pn_deoverlap(prob, artificial_cells, art, info);
    free(art);
    if (err != PN_OK) {
        pn_problem_free(prob);
        return err;
    }
    *out = prob;
    return PN_OK;
}

pn_error pn_gen_artificial_witness(pn_gen_case which, uint64_t seed, int subset, double *p)
{
    if (subset != PN_GEN_WITNESS_RULES_1_2 && subset != PN_GEN_WITNESS_RULES_3_4)
        return PN_ERR_INVALID;
    artificial *art;
    pn_error err = build(which, seed, &art);
    if (err != PN_OK)
        return err;
    memcpy(p, art->witness[subset], sizeof art->witness[subset]);
    free(art);
    return PN_OK;
}

pn_error pn_gen_artificial_assign(pn_gen_case which, uint64_t seed, int32_t rule, int32_t *cells)
{
    if (rule < 0 || rule >= K)
        return PN_ERR_INVALID;
    artificial *art;
    pn_error err = build(which, seed, &art);
    if (err != PN_OK)
        return err;
    memcpy(cells, art->cell[rule], sizeof art->cell[rule]);
    free(art);
    return PN_OK;
}

/* Separator before value i of a list: a line break every few values keeps
 * the file readable. */
enum { VALUES_PER_LINE = 20 };

static const char *separator(int32_t i)
{
    return i > 0 && i % VALUES_PER_LINE == 0 ? "\n " : " ";
}

pn_error pn_gen_artificial_write_full(FILE *out, pn_gen_case which, uint64_t seed,
                                      pn_error_info *info)
{
    pn_problem *prob;
    pn_error err = pn_gen_artificial(which, seed, &prob, info);
    if (err != PN_OK)
        return err;
    artificial *art;
    err = build(which, seed, &art);
    if (err != PN_OK) {
        pn_problem_free(prob);
        return build_failed(err, info);
    }
    fprintf(out, "parnassus-instance 1\n# case %s (paper section 5.1), seed %" PRIu64 "\n",
            which == PN_GEN_A1 ? "A1" : "A2", seed);
    fprintf(out, "n %d\nrules %d\n", N, K);
    for (int32_t r = 0; r < K; ++r) {
        fprintf(out, "rule %s %d\nassign", prob->rule_name[r], (int)art->size[r]);
        for (int32_t x = 0; x < N; ++x)
            fprintf(out, "%s%d", separator(x), (int)art->cell[r][x]);
        fputs("\ntarget", out);
        const double *b = prob->target + prob->rule_start[r];
        for (int32_t i = 0; i < art->size[r]; ++i)
            fprintf(out, "%s%.17g", separator(i), b[i]);
        fputc('\n', out);
    }
    free(art);
    pn_problem_free(prob);
    if (ferror(out))
        return pn_fail(info, PN_ERR_IO, "write error");
    return PN_OK;
}

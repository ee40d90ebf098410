/* A music-sized generic instance: 16 features of 4-voice sonorities over the
 * full space of 55^4 sonorities, with seeded sparse targets.
 *
 * The features are chosen so that the de-overlap stays near the size the
 * paper reports for its learned rules (K' about 1.3 million): all of them are
 * functions of (soprano pitch, bass pitch, alto pitch class, tenor pitch
 * class, lowest voice), which is what bounds K'. Rules are listed from the
 * largest to the smallest, which keeps the early refinement passes of the
 * de-overlap cheap. */
#include "parnassus/gen.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "parnassus/deoverlap.h"
#include "rng.h"

enum {
    VALUES = PN_GEN_MUSIC_VALUES, /* per voice: 0 = rest, v = MIDI pitch 30 + v */
    PITCH_OFFSET = 30,
    RULES = PN_GEN_MUSIC_RULES,
    MASKS = 1 << 12,  /* sets of pitch classes as 12-bit masks */
    MUSIC_STREAM = 3, /* PRNG stream of the music targets (A1, A2 use 1, 2) */
};

enum music_rule {
    R_PC_SET,
    R_BASS_AND_SOPRANO_PC,
    R_CHORD_OVER_BASS,
    R_OUTER_PCS,
    R_INNER_PCS,
    R_SOPRANO,
    R_BASS,
    R_OUTER_INTERVAL,
    R_SOPRANO_PC,
    R_BASS_PC,
    R_ALTO_PC,
    R_TENOR_PC,
    R_OUTER_INTERVAL_MOD12,
    R_TENOR_BASS_INTERVAL_MOD12,
    R_DISTINCT_PCS,
    R_LOWEST_VOICE,
};

static const struct {
    const char *name;
    int32_t size;
} music_rule[RULES] = {
    {"pc-set", 794},              /* sets of at most 4 of 12 pitch classes */
    {"bass-and-soprano-pc", 715}, /* 55 bass values x 13 */
    {"chord-over-bass", 233},     /* bass rest + subsets of {1..11}, size <= 3 */
    {"outer-pcs", 169},           /* 13 x 13 */
    {"inner-pcs", 169},           /* 13 x 13 */
    {"soprano", 55},
    {"bass", 55},
    {"outer-interval", 50}, /* rest + clamp(s - b, 0, 48) */
    {"soprano-pc", 13},     /* rest + 12 pitch classes */
    {"bass-pc", 13},
    {"alto-pc", 13},
    {"tenor-pc", 13},
    {"outer-interval-mod12", 13}, /* rest in either voice + 12 */
    {"tenor-bass-interval-mod12", 13},
    {"distinct-pcs", 5}, /* 0..4 */
    {"lowest-voice", 5}, /* all rest, soprano, alto, tenor, bass */
};

/* Pairs (fine, coarse) where the coarse rule is a function of the fine one.
 * The fine rule's support is drawn only among cells whose coarse image has
 * target 0, so the two rules can never both hold: they conflict. */
static const int32_t conflict[][2] = {
    {R_SOPRANO, R_SOPRANO_PC},
    {R_BASS, R_BASS_PC},
    {R_PC_SET, R_DISTINCT_PCS},
};
enum { CONFLICTS = sizeof conflict / sizeof conflict[0] };

/* ---- the cell source ---- */

typedef struct voice_tables {
    int32_t pc_cell[VALUES]; /* 0 = rest, 1 + pitch class */
    unsigned pc_bit[VALUES]; /* 0 = rest, 1 << pitch class */
    int16_t rank[MASKS];     /* cell of a pitch-class set (rules that need it) */
} voice_tables;

static int popcount12(unsigned mask)
{
    int n = 0;
    for (; mask; mask &= mask - 1)
        ++n;
    return n;
}

/* Numbers the masks with at most `max_bits` bits (and bit 0 clear if
 * `no_root`) in increasing order; the others get -1. */
static void rank_sets(int16_t *rank, int max_bits, int no_root)
{
    int16_t next = 0;
    for (unsigned m = 0; m < MASKS; ++m)
        rank[m] = popcount12(m) <= max_bits && !(no_root && (m & 1u)) ? next++ : -1;
}

static void prepare_tables(voice_tables *tb, int32_t rule)
{
    tb->pc_cell[0] = 0;
    tb->pc_bit[0] = 0;
    for (int v = 1; v < VALUES; ++v) {
        int pc = (v + PITCH_OFFSET) % 12;
        tb->pc_cell[v] = 1 + pc;
        tb->pc_bit[v] = 1u << pc;
    }
    if (rule == R_PC_SET)
        rank_sets(tb->rank, 4, 0);
    else if (rule == R_CHORD_OVER_BASS)
        rank_sets(tb->rank, 3, 1);
}

static int32_t clamp_int(int32_t x, int32_t lo, int32_t hi)
{
    return x < lo ? lo : x > hi ? hi : x;
}

/* 0 if either voice rests, else 1 + (upper - lower) mod 12. */
static int32_t interval_mod12_cell(int upper, int lower)
{
    return upper && lower ? 1 + (upper - lower + 5 * 12) % 12 : 0;
}

/* Rotates a pitch-class set so that pitch class `root` becomes 0. */
static unsigned transpose_down(unsigned set, int root)
{
    return ((set >> root) | (set << (12 - root))) & (MASKS - 1);
}

/* Cells of the inputs (s, a, t, b0 .. b0+nb-1): one block where only the
 * bass changes, so whatever depends on the upper voices is computed once. */
static void fill_block(const voice_tables *tb, int32_t rule, int s, int a, int t, int b0, int nb,
                       int32_t *out)
{
    const int end = b0 + nb;
    const unsigned upper = tb->pc_bit[s] | tb->pc_bit[a] | tb->pc_bit[t];
    switch ((enum music_rule)rule) {
    case R_PC_SET:
        for (int b = b0; b < end; ++b)
            *out++ = tb->rank[upper | tb->pc_bit[b]];
        break;
    case R_BASS_AND_SOPRANO_PC:
        for (int b = b0; b < end; ++b)
            *out++ = b * 13 + tb->pc_cell[s];
        break;
    case R_CHORD_OVER_BASS:
        for (int b = b0; b < end; ++b)
            *out++ = b ? 1 + tb->rank[transpose_down(upper, tb->pc_cell[b] - 1) & ~1u] : 0;
        break;
    case R_OUTER_PCS:
        for (int b = b0; b < end; ++b)
            *out++ = tb->pc_cell[s] * 13 + tb->pc_cell[b];
        break;
    case R_INNER_PCS:
        for (int b = b0; b < end; ++b)
            *out++ = tb->pc_cell[a] * 13 + tb->pc_cell[t];
        break;
    case R_SOPRANO:
        for (int b = b0; b < end; ++b)
            *out++ = s;
        break;
    case R_BASS:
        for (int b = b0; b < end; ++b)
            *out++ = b;
        break;
    case R_OUTER_INTERVAL:
        for (int b = b0; b < end; ++b)
            *out++ = s && b ? 1 + clamp_int(s - b, 0, 48) : 0;
        break;
    case R_SOPRANO_PC:
        for (int b = b0; b < end; ++b)
            *out++ = tb->pc_cell[s];
        break;
    case R_BASS_PC:
        for (int b = b0; b < end; ++b)
            *out++ = tb->pc_cell[b];
        break;
    case R_ALTO_PC:
        for (int b = b0; b < end; ++b)
            *out++ = tb->pc_cell[a];
        break;
    case R_TENOR_PC:
        for (int b = b0; b < end; ++b)
            *out++ = tb->pc_cell[t];
        break;
    case R_OUTER_INTERVAL_MOD12:
        for (int b = b0; b < end; ++b)
            *out++ = interval_mod12_cell(s, b);
        break;
    case R_TENOR_BASS_INTERVAL_MOD12:
        for (int b = b0; b < end; ++b)
            *out++ = interval_mod12_cell(t, b);
        break;
    case R_DISTINCT_PCS: {
        const int32_t n_upper = popcount12(upper);
        for (int b = b0; b < end; ++b)
            *out++ = n_upper + ((tb->pc_bit[b] & ~upper) != 0);
        break;
    }
    case R_LOWEST_VOICE: {
        /* lowest sounding voice (1 = soprano .. 4 = bass); on a tie the
         * lower part wins; 0 when all voices rest */
        const int voice[3] = {s, a, t};
        int low = VALUES, who = 0;
        for (int i = 0; i < 3; ++i)
            if (voice[i] && voice[i] <= low) {
                low = voice[i];
                who = i + 1;
            }
        for (int b = b0; b < end; ++b)
            *out++ = b && b <= low ? 4 : who;
        break;
    }
    }
}

int pn_gen_music_cells(void *ctx, int32_t rule, int64_t first, int64_t count, int32_t *cells)
{
    (void)ctx;
    if (rule < 0 || rule >= RULES || first < 0 || count < 0 || first > PN_GEN_MUSIC_N - count)
        return 1;
    voice_tables tb;
    prepare_tables(&tb, rule);
    /* decode the first input once, then step through the mixed radix */
    int b = (int)(first % VALUES);
    int64_t high = first / VALUES;
    int t = (int)(high % VALUES);
    high /= VALUES;
    int a = (int)(high % VALUES);
    int s = (int)(high / VALUES);
    while (count > 0) {
        int nb = VALUES - b;
        if (nb > count)
            nb = (int)count;
        fill_block(&tb, rule, s, a, t, b, nb, cells);
        cells += nb;
        count -= nb;
        b = 0;
        if (++t == VALUES) {
            t = 0;
            if (++a == VALUES) {
                a = 0;
                ++s;
            }
        }
    }
    return 0;
}

/* ---- the problem ---- */

pn_error pn_gen_music_rules(pn_problem **out, pn_error_info *info)
{
    int32_t sizes[RULES];
    const char *names[RULES];
    for (int32_t r = 0; r < RULES; ++r) {
        sizes[r] = music_rule[r].size;
        names[r] = music_rule[r].name;
    }
    return pn_problem_create(PN_GEN_MUSIC_N, RULES, sizes, names, out, info);
}

/* Inputs per row of A, i.e. how many sonorities fall in each cell. */
static int64_t *cell_counts(const pn_problem *prob)
{
    int64_t *count = calloc((size_t)prob->num_rows, sizeof *count);
    if (!count)
        return NULL;
    for (int64_t k = 0; k < prob->num_groups; ++k)
        for (int32_t r = 0; r < prob->num_rules; ++r)
            count[prob->group_rows[k * prob->num_rules + r]] += prob->group_size[k];
    return count;
}

/* For a conflict pair: the global row of the coarse rule that each fine
 * cell falls into (the coarse rule is a function of the fine one). */
static void coarse_rows(const pn_problem *prob, int32_t fine, int32_t coarse, int32_t *row_of)
{
    const int32_t K = prob->num_rules;
    for (int64_t k = 0; k < prob->num_groups; ++k) {
        const int32_t *rows = prob->group_rows + k * K;
        row_of[rows[fine] - prob->rule_start[fine]] = rows[coarse];
    }
}

static int conflict_of(int32_t rule)
{
    for (int c = 0; c < CONFLICTS; ++c)
        if (conflict[c][0] == rule)
            return c;
    return -1;
}

/* Sparse targets of one rule: a random 30-70 % of the candidate cells
 * (at least one) with weights u^3, zero elsewhere. */
static pn_error draw_targets(gen_rng *rng, pn_problem *prob, int32_t r, const int32_t *cand,
                             int32_t num_cand, pn_error_info *info)
{
    if (num_cand < 1)
        return pn_fail(info, PN_ERR_NUMERIC, "rule %s: no cell to put mass on", prob->rule_name[r]);
    int32_t *pick = malloc(sizeof *pick * (size_t)num_cand);
    if (!pick)
        return pn_fail(info, PN_ERR_NOMEM, "out of memory");
    memcpy(pick, cand, sizeof *pick * (size_t)num_cand);
    int32_t support = (num_cand * gen_between(rng, 30, 70) + 50) / 100;
    if (support < 1)
        support = 1;
    for (int32_t i = 0; i < support; ++i) { /* partial Fisher-Yates */
        int32_t j = i + (int32_t)gen_below(rng, (uint64_t)(num_cand - i));
        int32_t tmp = pick[i];
        pick[i] = pick[j];
        pick[j] = tmp;
    }
    double *b = prob->target + prob->rule_start[r];
    double sum = 0.0;
    for (int32_t i = 0; i < support; ++i) {
        double u = gen_uniform_pos(rng);
        b[pick[i]] = u * u * u;
        sum += b[pick[i]];
    }
    free(pick);
    double total = 0.0;
    for (int32_t i = 0; i < pn_rule_size(prob, r); ++i) {
        b[i] /= sum;
        total += b[i];
    }
    if (fabs(total - 1.0) >= 1e-12)
        return pn_fail(info, PN_ERR_NUMERIC, "rule %s: targets sum to %.17g", prob->rule_name[r],
                       total);
    return PN_OK;
}

/* Candidate cells of rule r: reachable ones; for the fine rule of a
 * conflict pair only those whose coarse cell has target 0. */
static int32_t candidates(const pn_problem *prob, int32_t r, const int64_t *count, int32_t *row_of,
                          int32_t *cand)
{
    const int c = conflict_of(r);
    if (c >= 0)
        coarse_rows(prob, r, conflict[c][1], row_of);
    int32_t n = 0;
    for (int32_t i = 0; i < pn_rule_size(prob, r); ++i) {
        if (count[prob->rule_start[r] + i] == 0)
            continue;
        if (c >= 0 && prob->target[row_of[i]] != 0.0)
            continue;
        cand[n++] = i;
    }
    return n;
}

static pn_error fill_targets(pn_problem *prob, uint64_t seed, pn_error_info *info)
{
    int64_t *count = cell_counts(prob);
    int32_t *row_of = malloc(sizeof(int32_t) * (size_t)prob->num_rows);
    int32_t *cand = malloc(sizeof(int32_t) * (size_t)prob->num_rows);
    pn_error err = PN_OK;
    if (!count || !row_of || !cand) {
        err = pn_fail(info, PN_ERR_NOMEM, "out of memory");
        goto done;
    }
    gen_rng rng;
    gen_rng_seed(&rng, seed, MUSIC_STREAM);
    /* coarse and independent rules first, the fine side of conflicts last */
    for (int pass = 0; pass < 2 && err == PN_OK; ++pass)
        for (int32_t r = 0; r < RULES && err == PN_OK; ++r) {
            if ((conflict_of(r) >= 0) != pass)
                continue;
            int32_t n = candidates(prob, r, count, row_of, cand);
            err = draw_targets(&rng, prob, r, cand, n, info);
        }
done:
    free(cand);
    free(row_of);
    free(count);
    return err;
}

pn_error pn_gen_music_like(uint64_t seed, pn_problem **out, pn_error_info *info)
{
    *out = NULL;
    pn_problem *prob;
    pn_error err = pn_gen_music_rules(&prob, info);
    if (err != PN_OK)
        return err;
    err = pn_deoverlap(prob, pn_gen_music_cells, NULL, info);
    if (err == PN_OK)
        err = fill_targets(prob, seed, info);
    if (err != PN_OK) {
        pn_problem_free(prob);
        return err;
    }
    *out = prob;
    return PN_OK;
}

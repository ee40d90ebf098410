/* Tests of the seeded instance generators (pngen). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <math.h>

#include "parnassus/deoverlap.h"
#include "parnassus/gen.h"

enum { N = PN_GEN_ARTIFICIAL_N, K = PN_GEN_ARTIFICIAL_RULES };

static const pn_gen_case cases[2] = {PN_GEN_A1, PN_GEN_A2};

/* An order-independent-of-endianness fingerprint of a problem. */
static uint64_t mix(uint64_t h, uint64_t v)
{
    h ^= v + 0x9E3779B97F4A7C15ull + (h << 6) + (h >> 2);
    return h * 0xFF51AFD7ED558CCDull;
}

static uint64_t fingerprint(const pn_problem *prob)
{
    uint64_t h = mix(0, (uint64_t)prob->n);
    for (int32_t i = 0; i < prob->num_rows; ++i) {
        uint64_t bits;
        memcpy(&bits, &prob->target[i], sizeof bits);
        h = mix(h, bits);
    }
    h = mix(h, (uint64_t)prob->num_groups);
    for (int64_t k = 0; k < prob->num_groups; ++k) {
        h = mix(h, (uint64_t)prob->group_size[k]);
        for (int32_t r = 0; r < prob->num_rules; ++r)
            h = mix(h, (uint64_t)prob->group_rows[k * prob->num_rules + r]);
    }
    return h;
}

static pn_problem *make_artificial(pn_gen_case which, uint64_t seed)
{
    pn_problem *prob = NULL;
    pn_error_info info;
    pn_error err = pn_gen_artificial(which, seed, &prob, &info);
    if (err != PN_OK)
        fail_msg("pn_gen_artificial: %s", info.message);
    return prob;
}

static int same_problem(const pn_problem *x, const pn_problem *y)
{
    const int32_t Kx = x->num_rules;
    return x->n == y->n && Kx == y->num_rules && x->num_rows == y->num_rows &&
           !memcmp(x->rule_start, y->rule_start, sizeof(int32_t) * (size_t)(Kx + 1)) &&
           !memcmp(x->target, y->target, sizeof(double) * (size_t)x->num_rows) &&
           x->num_groups == y->num_groups &&
           !memcmp(x->group_size, y->group_size, sizeof(int64_t) * (size_t)x->num_groups) &&
           !memcmp(x->group_rows, y->group_rows,
                   sizeof(int32_t) * (size_t)x->num_groups * (size_t)Kx);
}

/* Per rule, the cell of every raw input. */
static void load_assign(pn_gen_case which, uint64_t seed, int32_t cell[K][N])
{
    for (int32_t r = 0; r < K; ++r)
        assert_int_equal(pn_gen_artificial_assign(which, seed, r, cell[r]), PN_OK);
}

static void test_artificial_shape(void **state)
{
    (void)state;
    static const int32_t sizes[2][K] = {{80, 50, 60, 60, 60}, {70, 50, 65, 65, 65}};
    for (int c = 0; c < 2; ++c) {
        pn_problem *prob = make_artificial(cases[c], 7);
        assert_int_equal(prob->n, 600);
        assert_int_equal(prob->num_rules, 5);
        for (int32_t r = 0; r < K; ++r)
            assert_int_equal(pn_rule_size(prob, r), sizes[c][r]);
        /* A1: m1 + m2 > m3 + m4; A2: the opposite */
        int32_t m12 = sizes[c][0] + sizes[c][1], m34 = sizes[c][2] + sizes[c][3];
        assert_true(c == 0 ? m12 > m34 : m12 < m34);
        pn_error_info info;
        assert_int_equal(pn_problem_validate(prob, &info), PN_OK);
        for (int32_t r = 0; r < K; ++r) {
            double sum = 0.0;
            for (int32_t i = prob->rule_start[r]; i < prob->rule_start[r + 1]; ++i) {
                assert_true(prob->target[i] >= 0.0);
                sum += prob->target[i];
            }
            assert_true(fabs(sum - 1.0) < 1e-12);
        }
        pn_problem_free(prob);
    }
}

static void test_artificial_deterministic(void **state)
{
    (void)state;
    for (int c = 0; c < 2; ++c) {
        pn_problem *x = make_artificial(cases[c], 42);
        pn_problem *y = make_artificial(cases[c], 42);
        pn_problem *z = make_artificial(cases[c], 43);
        assert_true(same_problem(x, y));
        assert_false(same_problem(x, z));
        assert_true(memcmp(x->target, z->target, sizeof(double) * (size_t)x->num_rows) != 0);
        pn_problem_free(x);
        pn_problem_free(y);
        pn_problem_free(z);
    }
    pn_problem *a1 = make_artificial(PN_GEN_A1, 1);
    pn_problem *a2 = make_artificial(PN_GEN_A2, 1);
    /* The same seed must give the same instance on every machine: these
     * fingerprints were recorded once and must never change. */
    assert_int_equal(fingerprint(a1), UINT64_C(0x32d49e97e7c0a450));
    assert_int_equal(fingerprint(a2), UINT64_C(0x1e01c21c3d4699c9));
    pn_problem_free(a1);
    pn_problem_free(a2);
}

static void test_artificial_cells(void **state)
{
    (void)state;
    static int32_t cell[K][N];
    for (int c = 0; c < 2; ++c) {
        load_assign(cases[c], 5, cell);
        pn_problem *prob = make_artificial(cases[c], 5);
        for (int32_t r = 0; r < K; ++r) {
            int32_t members[80] = {0};
            int32_t m = pn_rule_size(prob, r);
            for (int32_t x = 0; x < N; ++x) {
                assert_in_range(cell[r][x], 0, m - 1);
                members[cell[r][x]]++;
            }
            int32_t smallest = N, largest = 0;
            for (int32_t i = 0; i < m; ++i) {
                smallest = members[i] < smallest ? members[i] : smallest;
                largest = members[i] > largest ? members[i] : largest;
            }
            assert_true(smallest >= 1);      /* every cell non-empty */
            assert_true(largest > smallest); /* sizes uneven */
        }
        pn_problem_free(prob);
    }
}

static int assign_source(void *ctx, int32_t rule, int64_t first, int64_t count, int32_t *cells)
{
    int32_t(*cell)[N] = ctx;
    memcpy(cells, cell[rule] + first, sizeof(int32_t) * (size_t)count);
    return 0;
}

/* The groups are exactly the de-overlap of the published partition. */
static void test_artificial_groups_match_assign(void **state)
{
    (void)state;
    static int32_t cell[K][N];
    pn_problem *prob = make_artificial(PN_GEN_A2, 11);
    load_assign(PN_GEN_A2, 11, cell);
    pn_problem *again = make_artificial(PN_GEN_A2, 11);
    pn_error_info info;
    assert_int_equal(pn_deoverlap(again, assign_source, cell, &info), PN_OK);
    assert_true(same_problem(prob, again));
    pn_problem_free(prob);
    pn_problem_free(again);
}

static void test_artificial_witnesses(void **state)
{
    (void)state;
    static int32_t cell[K][N];
    static const int32_t realised[2][2] = {{0, 1}, {2, 3}};
    for (uint64_t seed = 1; seed <= 10; ++seed)
        for (int c = 0; c < 2; ++c) {
            pn_problem *prob = make_artificial(cases[c], seed);
            load_assign(cases[c], seed, cell);
            for (int subset = 0; subset < 2; ++subset) {
                double p[N];
                assert_int_equal(pn_gen_artificial_witness(cases[c], seed, subset, p), PN_OK);
                double total = 0.0;
                for (int32_t x = 0; x < N; ++x) {
                    assert_true(p[x] >= 0.0);
                    total += p[x];
                }
                assert_true(fabs(total - 1.0) < 1e-12);
                for (int j = 0; j < 2; ++j) {
                    int32_t r = realised[subset][j];
                    double Ap[80] = {0};
                    for (int32_t x = 0; x < N; ++x)
                        Ap[cell[r][x]] += p[x];
                    const double *b = prob->target + prob->rule_start[r];
                    for (int32_t i = 0; i < pn_rule_size(prob, r); ++i)
                        assert_true(fabs(Ap[i] - b[i]) <= 1e-12);
                }
            }
            pn_problem_free(prob);
        }
}

/* A certificate that rules r and s cannot both hold: a cell of s with
 * positive target none of whose inputs is allowed by r (an input is allowed
 * by r when its r-cell has positive target; any p realising r vanishes
 * elsewhere). */
static int has_certificate(const pn_problem *prob, int32_t cell[K][N], int32_t r, int32_t s)
{
    const double *br = prob->target + prob->rule_start[r];
    const double *bs = prob->target + prob->rule_start[s];
    for (int32_t c = 0; c < pn_rule_size(prob, s); ++c) {
        if (!(bs[c] > 0.0))
            continue;
        int allowed = 0;
        for (int32_t x = 0; x < N && !allowed; ++x)
            allowed = cell[s][x] == c && br[cell[r][x]] > 0.0;
        if (!allowed)
            return 1;
    }
    return 0;
}

/* Every pair other than {1,2} and {3,4} is provably inconsistent, hence so
 * is every larger subset that contains such a pair; {1,2} and {3,4} are
 * consistent by their witnesses (previous test). */
static void test_artificial_only_two_consistent_pairs(void **state)
{
    (void)state;
    static int32_t cell[K][N];
    for (uint64_t seed = 1; seed <= 20; ++seed)
        for (int c = 0; c < 2; ++c) {
            pn_problem *prob = make_artificial(cases[c], seed);
            load_assign(cases[c], seed, cell);
            for (int32_t r = 0; r < K; ++r)
                for (int32_t s = r + 1; s < K; ++s) {
                    int consistent_pair = (r == 0 && s == 1) || (r == 2 && s == 3);
                    if (consistent_pair)
                        continue;
                    if (!has_certificate(prob, cell, r, s) && !has_certificate(prob, cell, s, r))
                        fail_msg("seed %d case %d: no proof that rules %d, %d conflict", (int)seed,
                                 c + 1, (int)r + 1, (int)s + 1);
                }
            /* rules 1,2 allow no input that rules 3,4 allow */
            for (int32_t x = 0; x < N; ++x)
                for (int32_t r = 0; r < 2; ++r)
                    for (int32_t s = 2; s < 4; ++s)
                        assert_false(prob->target[prob->rule_start[r] + cell[r][x]] > 0.0 &&
                                     prob->target[prob->rule_start[s] + cell[s][x]] > 0.0);
            pn_problem_free(prob);
        }
}

/* Reads the full form back with a tiny reader of our own and compares it
 * with the generator's partition and targets (bit for bit). */
static void test_artificial_full_form(void **state)
{
    (void)state;
    static int32_t cell[K][N];
    FILE *f = tmpfile();
    assert_non_null(f);
    pn_error_info info;
    assert_int_equal(pn_gen_artificial_write_full(f, PN_GEN_A1, 3, &info), PN_OK);
    rewind(f);
    pn_problem *prob = make_artificial(PN_GEN_A1, 3);
    load_assign(PN_GEN_A1, 3, cell);
    char word[64], name[64];
    int version, n, rules;
    assert_int_equal(fscanf(f, "%63s %d", word, &version), 2);
    assert_string_equal(word, "parnassus-instance");
    assert_int_equal(version, 1);
    int ch;
    while ((ch = fgetc(f)) != EOF && ch != 'n') /* skip the comment line */
        if (ch == '#')
            while ((ch = fgetc(f)) != EOF && ch != '\n')
                ;
    assert_int_equal(fscanf(f, " %d rules %d", &n, &rules), 2);
    assert_int_equal(n, N);
    assert_int_equal(rules, K);
    for (int32_t r = 0; r < K; ++r) {
        int m;
        assert_int_equal(fscanf(f, " rule %63s %d assign", name, &m), 2);
        assert_int_equal(m, pn_rule_size(prob, r));
        assert_string_equal(name, prob->rule_name[r]);
        for (int32_t x = 0; x < N; ++x) {
            int v;
            assert_int_equal(fscanf(f, "%d", &v), 1);
            assert_int_equal(v, cell[r][x]);
        }
        assert_int_equal(fscanf(f, " %63s", word), 1);
        assert_string_equal(word, "target");
        for (int32_t i = 0; i < m; ++i) {
            double b;
            assert_int_equal(fscanf(f, "%lf", &b), 1);
            assert_true(b == prob->target[prob->rule_start[r] + i]);
        }
    }
    assert_int_equal(fscanf(f, " %63s", word), EOF);
    fclose(f);
    pn_problem_free(prob);
}

static void test_artificial_bad_arguments(void **state)
{
    (void)state;
    pn_problem *prob = (pn_problem *)&prob; /* non-NULL: must be reset on failure */
    pn_error_info info;
    int32_t cells[N];
    double p[N];
    assert_int_equal(pn_gen_artificial((pn_gen_case)3, 1, &prob, &info), PN_ERR_INVALID);
    assert_null(prob);
    assert_int_equal(pn_gen_artificial_witness(PN_GEN_A1, 1, 2, p), PN_ERR_INVALID);
    assert_int_equal(pn_gen_artificial_witness((pn_gen_case)0, 1, 0, p), PN_ERR_INVALID);
    assert_int_equal(pn_gen_artificial_assign(PN_GEN_A1, 1, 5, cells), PN_ERR_INVALID);
    assert_int_equal(pn_gen_artificial_assign(PN_GEN_A1, 1, -1, cells), PN_ERR_INVALID);
}

/* ---- music-like instance ---- */

enum { V = PN_GEN_MUSIC_VALUES };

/* A plain reference of the 16 features, written from their definitions in
 * docs/test-instances.md (MIDI pitches, no tables). */
static int pitch_class(int v)
{
    return (30 + v) % 12;
}

static int set_index(unsigned mask, int max_bits, int no_root)
{
    int index = 0;
    for (unsigned m = 0; m < mask; ++m) {
        int bits = 0;
        for (unsigned t = m; t; t >>= 1)
            bits += (int)(t & 1u);
        if (bits <= max_bits && !(no_root && (m & 1u)))
            ++index;
    }
    return index;
}

static int pc_cell(int v)
{
    return v ? 1 + pitch_class(v) : 0;
}

static int mod12_cell(int hi, int lo)
{
    if (!hi || !lo)
        return 0;
    int d = ((30 + hi) - (30 + lo)) % 12;
    return 1 + (d < 0 ? d + 12 : d);
}

static int32_t reference_cell(int32_t rule, int64_t x)
{
    int v[4]; /* soprano, alto, tenor, bass */
    for (int i = 3; i >= 0; --i) {
        v[i] = (int)(x % V);
        x /= V;
    }
    const int s = v[0], a = v[1], t = v[2], b = v[3];
    unsigned set = 0, rel = 0;
    for (int i = 0; i < 4; ++i)
        if (v[i])
            set |= 1u << pitch_class(v[i]);
    switch (rule) {
    case 0:
        return set_index(set, 4, 0);
    case 1:
        return b * 13 + pc_cell(s);
    case 2:
        if (!b)
            return 0;
        for (int i = 0; i < 3; ++i)
            if (v[i] && pitch_class(v[i]) != pitch_class(b))
                rel |= 1u << ((pitch_class(v[i]) - pitch_class(b) + 12) % 12);
        return 1 + set_index(rel, 3, 1);
    case 3:
        return pc_cell(s) * 13 + pc_cell(b);
    case 4:
        return pc_cell(a) * 13 + pc_cell(t);
    case 5:
        return s;
    case 6:
        return b;
    case 7: {
        if (!s || !b)
            return 0;
        int d = s - b;
        return 1 + (d < 0 ? 0 : d > 48 ? 48 : d);
    }
    case 8:
        return pc_cell(s);
    case 9:
        return pc_cell(b);
    case 10:
        return pc_cell(a);
    case 11:
        return pc_cell(t);
    case 12:
        return mod12_cell(s, b);
    case 13:
        return mod12_cell(t, b);
    case 14: {
        int n = 0;
        for (int pc = 0; pc < 12; ++pc)
            n += (int)((set >> pc) & 1u);
        return n;
    }
    default: {
        int lowest = 0;
        for (int i = 0; i < 4; ++i) /* later (lower) voices win ties */
            if (v[i] && (!lowest || v[i] <= v[lowest - 1]))
                lowest = i + 1;
        return lowest;
    }
    }
}

static void test_music_cells_match_reference(void **state)
{
    (void)state;
    enum { SPAN = 3 * V + 7 };
    /* ranges that start mid-block and cross voice carries, plus the ends */
    static const int64_t starts[] = {
        0, V - 3, V * V - 5, V * V * V - 17, 4321987, PN_GEN_MUSIC_N - SPAN};
    int32_t cells[SPAN];
    for (int32_t r = 0; r < PN_GEN_MUSIC_RULES; ++r) {
        for (size_t i = 0; i < sizeof starts / sizeof starts[0]; ++i) {
            assert_int_equal(pn_gen_music_cells(NULL, r, starts[i], SPAN, cells), 0);
            for (int j = 0; j < SPAN; ++j)
                if (cells[j] != reference_cell(r, starts[i] + j))
                    fail_msg("rule %d input %lld: cell %d, expected %d", (int)r,
                             (long long)(starts[i] + j), (int)cells[j],
                             (int)reference_cell(r, starts[i] + j));
        }
        /* a seeded scatter of single inputs */
        uint64_t h = 12345u + (uint64_t)r;
        for (int j = 0; j < 2000; ++j) {
            h = h * 6364136223846793005ull + 1442695040888963407ull;
            int64_t x = (int64_t)((h >> 20) % (uint64_t)PN_GEN_MUSIC_N);
            assert_int_equal(pn_gen_music_cells(NULL, r, x, 1, cells), 0);
            assert_int_equal(cells[0], reference_cell(r, x));
        }
    }
    /* C major triad with doubled root: C5 G4 E4 C3 */
    const int64_t triad = ((42 * (int64_t)V + 37) * V + 34) * V + 18;
    assert_int_equal(pn_gen_music_cells(NULL, 14, triad, 1, cells), 0);
    assert_int_equal(cells[0], 3);
    assert_int_equal(pn_gen_music_cells(NULL, 12, triad, 1, cells), 0);
    assert_int_equal(cells[0], 1); /* an octave-class interval: mod 12 = 0 */
    assert_int_equal(pn_gen_music_cells(NULL, 15, triad, 1, cells), 0);
    assert_int_equal(cells[0], 4); /* the bass is lowest */
}

static void test_music_cells_bad_arguments(void **state)
{
    (void)state;
    int32_t cells[4];
    assert_int_not_equal(pn_gen_music_cells(NULL, -1, 0, 1, cells), 0);
    assert_int_not_equal(pn_gen_music_cells(NULL, PN_GEN_MUSIC_RULES, 0, 1, cells), 0);
    assert_int_not_equal(pn_gen_music_cells(NULL, 0, -1, 1, cells), 0);
    assert_int_not_equal(pn_gen_music_cells(NULL, 0, PN_GEN_MUSIC_N - 1, 2, cells), 0);
    assert_int_equal(pn_gen_music_cells(NULL, 0, PN_GEN_MUSIC_N - 1, 1, cells), 0);
}

static int music_setup(void **state)
{
    pn_problem *prob;
    pn_error_info info;
    if (pn_gen_music_like(1, &prob, &info) != PN_OK) {
        fprintf(stderr, "pn_gen_music_like: %s\n", info.message);
        return -1;
    }
    *state = prob;
    return 0;
}

static int music_teardown(void **state)
{
    pn_problem_free(*state);
    return 0;
}

static void test_music_shape(void **state)
{
    const pn_problem *prob = *state;
    assert_int_equal(prob->n, 9150625);
    assert_int_equal(prob->num_rules, 16);
    assert_in_range(prob->num_rows, 1000, 2500);
    assert_int_equal(prob->num_rows, PN_GEN_MUSIC_ROWS);
    assert_in_range(prob->num_groups, 1000000, 1500000);
    assert_int_equal(prob->num_groups, PN_GEN_MUSIC_GROUPS);
    int64_t total = 0;
    for (int64_t k = 0; k < prob->num_groups; ++k)
        total += prob->group_size[k];
    assert_int_equal(total, prob->n);
    pn_error_info info;
    assert_int_equal(pn_problem_validate(prob, &info), PN_OK);
    assert_int_equal(fingerprint(prob), UINT64_C(0x95d615ff593f2f68));
}

/* Sparse targets: each rule puts mass on 30-70 % of its reachable cells
 * (fewer for the constrained side of a conflict), never on unreachable ones. */
static void test_music_targets(void **state)
{
    const pn_problem *prob = *state;
    const int32_t Km = prob->num_rules;
    int64_t *count = calloc((size_t)prob->num_rows, sizeof *count);
    assert_non_null(count);
    for (int64_t k = 0; k < prob->num_groups; ++k)
        for (int32_t r = 0; r < Km; ++r)
            count[prob->group_rows[k * Km + r]] += prob->group_size[k];
    for (int32_t r = 0; r < Km; ++r) {
        int32_t reachable = 0, support = 0;
        double sum = 0.0;
        for (int32_t i = prob->rule_start[r]; i < prob->rule_start[r + 1]; ++i) {
            reachable += count[i] > 0;
            support += prob->target[i] > 0.0;
            sum += prob->target[i];
            if (count[i] == 0)
                assert_true(prob->target[i] == 0.0);
        }
        assert_true(fabs(sum - 1.0) < 1e-12);
        assert_true(support >= 1);
        assert_true(support <= (reachable * 70 + 50) / 100);
        if (r != 0 && r != 5 && r != 6) /* not the fine side of a conflict */
            assert_true(support >= (reachable * 30 + 50) / 100);
    }
    free(count);
}

/* The fine rule of each conflict pair only puts mass where the coarse rule
 * puts none, so no p satisfies both. */
static void test_music_conflicts(void **state)
{
    const pn_problem *prob = *state;
    static const int32_t pairs[3][2] = {{5, 8}, {6, 9}, {0, 14}};
    const int32_t Km = prob->num_rules;
    for (int c = 0; c < 3; ++c) {
        const int32_t fine = pairs[c][0], coarse = pairs[c][1];
        for (int64_t k = 0; k < prob->num_groups; ++k) {
            const int32_t *rows = prob->group_rows + k * Km;
            if (prob->target[rows[fine]] > 0.0)
                assert_true(prob->target[rows[coarse]] == 0.0);
        }
    }
}

int main(void)
{
    const struct CMUnitTest artificial[] = {
        cmocka_unit_test(test_artificial_shape),
        cmocka_unit_test(test_artificial_deterministic),
        cmocka_unit_test(test_artificial_cells),
        cmocka_unit_test(test_artificial_groups_match_assign),
        cmocka_unit_test(test_artificial_witnesses),
        cmocka_unit_test(test_artificial_only_two_consistent_pairs),
        cmocka_unit_test(test_artificial_full_form),
        cmocka_unit_test(test_artificial_bad_arguments),
    };
    const struct CMUnitTest music[] = {
        cmocka_unit_test(test_music_cells_match_reference),
        cmocka_unit_test(test_music_cells_bad_arguments),
        cmocka_unit_test(test_music_shape),
        cmocka_unit_test(test_music_targets),
        cmocka_unit_test(test_music_conflicts),
    };
    int failed = cmocka_run_group_tests_name("artificial", artificial, NULL, NULL);
    failed += cmocka_run_group_tests_name("music-like", music, music_setup, music_teardown);
    return failed;
}

/* The runs of `parnassus sweep` and their figures (see sweep.h). */
#include "sweep.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parnassus/corpus.h"
#include "parnassus/generate.h"
#include "parnassus/rng.h"
#include "timer.h"

const pn_style_dist pn_sweep_tv_dist[PN_SWEEP_NUM_TV] = {
    PN_STYLE_CHORD, PN_STYLE_SOPRANO_MOTION, PN_STYLE_ALTO_MOTION, PN_STYLE_TENOR_MOTION,
    PN_STYLE_BASS_MOTION};
const char *const pn_sweep_tv_name[PN_SWEEP_NUM_TV] = {"chord", "soprano_motion", "alto_motion",
                                                       "tenor_motion", "bass_motion"};

const char *pn_sweep_knob_name(pn_sweep_knob knob)
{
    return knob == PN_SWEEP_ALPHA ? "alpha" : "log2_lambda_w";
}

double pn_sweep_value(const pn_sweep_request *req, int i)
{
    if (req->points < 2 || i <= 0)
        return req->from;
    if (i >= req->points - 1)
        return req->to;
    return req->from + (req->to - req->from) * (double)i / (double)(req->points - 1);
}

static int compare_doubles(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The median as `parnassus sample` reports it: the middle element of the
 * sorted values (the upper one of the two middle ones for an even count). */
static double median(double *v, size_t n)
{
    qsort(v, n, sizeof *v, compare_doubles);
    return v[n / 2];
}

/* Scratch space of one point, reused for every run. */
typedef struct run_buffers {
    int8_t *pitch;           /* steps x k */
    unsigned char *selected; /* K */
    int64_t *kept_hist;      /* K + 1: steps after which n rules were kept */
    double *step_seconds;    /* steps x seeds */
    double *setup_seconds;   /* seeds */
} run_buffers;

static void buffers_free(run_buffers *b)
{
    free(b->pitch);
    free(b->selected);
    free(b->kept_hist);
    free(b->step_seconds);
    free(b->setup_seconds);
    memset(b, 0, sizeof *b);
}

static pn_error buffers_new(const pn_sweep_request *req, run_buffers *b, pn_error_info *info)
{
    const size_t k = (size_t)req->rules->space.num_voices, K = (size_t)req->rules->num_rules;
    const size_t steps = (size_t)req->steps, seeds = (size_t)req->num_seeds;
    memset(b, 0, sizeof *b);
    b->pitch = malloc(steps * k);
    b->selected = malloc(K);
    b->kept_hist = calloc(K + 1, sizeof *b->kept_hist);
    b->step_seconds = malloc(steps * seeds * sizeof *b->step_seconds);
    b->setup_seconds = malloc(seeds * sizeof *b->setup_seconds);
    if (!b->pitch || !b->selected || !b->kept_hist || !b->step_seconds || !b->setup_seconds) {
        buffers_free(b);
        return pn_fail(info, PN_ERR_NOMEM, "out of memory");
    }
    return PN_OK;
}

/* Prefixes the engine's message with the point and the seed. */
static pn_error run_failed(const pn_sweep_request *req, const pn_sweep_point *pt, uint64_t seed,
                           const char *what, pn_error code, pn_error_info *info)
{
    char reason[PN_MESSAGE_SIZE];
    snprintf(reason, sizeof reason, "%s", info->message);
    return pn_fail(info, code, "rule set %.100s, %s %g, seed %" PRIu64 ": %s: %.300s",
                   req->rules->name, pn_sweep_knob_name(req->knob), pt->value, seed, what, reason);
}

/* One run: a fresh generator at the point's knobs, `steps` draws and
 * advances, the selection after each step, the piece measured into
 * pt->seed_stats[seed_index]. */
static pn_error run_one(const pn_sweep_request *req, pn_sweep_point *pt, int seed_index,
                        run_buffers *b, pn_error_info *info)
{
    const pn_rule_set *rs = req->rules;
    const int k = rs->space.num_voices, K = rs->num_rules;
    const uint64_t seed = req->seeds[seed_index];
    pn_settings s = req->settings;
    s.seed = seed;
    s.log2_lambda_w = pt->log2_lambda_w;
    s.alpha = pt->alpha;
    pn_generator *gen = NULL;
    const double t0 = pn_timer_now();
    pn_error err = pn_generator_create(rs, &s, &gen, info);
    if (err != PN_OK)
        return run_failed(req, pt, seed, "setup", err, info);
    b->setup_seconds[seed_index] = pn_timer_now() - t0;

    pn_rng rng;
    pn_rng_seed(&rng, seed);
    const pn_solver *solver = pn_generator_solver(gen);
    int pitches[PN_SPACE_MAX_VOICES];
    double *step_seconds = b->step_seconds + (size_t)seed_index * (size_t)req->steps;
    for (int t = 0; t < req->steps; ++t) {
        const double ts = pn_timer_now();
        if (pn_generator_draw(gen, &rng, pitches) < 0) {
            pn_fail(info, PN_ERR_NUMERIC, "the realization has no mass");
            err = run_failed(req, pt, seed, "draw", PN_ERR_NUMERIC, info);
            goto done;
        }
        if ((err = pn_generator_advance(gen, pitches, info)) != PN_OK) {
            char what[48];
            snprintf(what, sizeof what, "step %d", t + 1);
            err = run_failed(req, pt, seed, what, err, info);
            goto done;
        }
        step_seconds[t] = pn_timer_now() - ts;
        const int kept = pn_generator_last_info(gen)->num_selected;
        b->kept_hist[kept < 0 ? 0 : kept > K ? K : kept]++;
        pn_solver_rule_stats(solver, NULL, NULL, b->selected);
        for (int r = 0; r < K; ++r)
            pt->kept_steps[r] += b->selected[r] != 0;
        for (int v = 0; v < k; ++v)
            b->pitch[(size_t)t * (size_t)k + (size_t)v] =
                (int8_t)(pitches[v] < 0 ? PN_REST : pitches[v]);
    }
    pt->constraint_misses += pn_generator_constraint_misses(gen);

    /* the run as one piece of labelled voices, as evaluate reads a
     * generated run: its key found over the piece, every step an event */
    char name[48];
    snprintf(name, sizeof name, "seed %" PRIu64, seed);
    pn_piece piece = {name, k, req->steps, b->pitch, NULL};
    const pn_corpus corpus = {k, 1, &piece};
    pn_style_acc *acc = NULL;
    if ((err = pn_style_acc_create(NULL, &acc, info)) == PN_OK &&
        (err = pn_style_add_corpus(acc, &corpus, info)) == PN_OK)
        pt->seed_stats[seed_index] = *pn_style_acc_stats(acc);
    pn_style_acc_free(acc);
done:
    pn_generator_free(gen);
    return err;
}

/* Every run of one point. */
static pn_error run_point(const pn_sweep_request *req, pn_sweep_point *pt, run_buffers *b,
                          pn_error_info *info)
{
    const int K = req->rules->num_rules;
    pn_error err = PN_OK;
    memset(b->kept_hist, 0, (size_t)(K + 1) * sizeof *b->kept_hist);
    for (int i = 0; i < req->num_seeds && err == PN_OK; ++i)
        err = run_one(req, pt, i, b, info);
    if (err == PN_OK) {
        /* the seeds' pieces pooled: their counts added up */
        pn_style_stats_clear(pt->stats);
        for (int i = 0; i < req->num_seeds; ++i)
            pn_style_stats_add(pt->stats, &pt->seed_stats[i]);
        pt->num_steps = (int64_t)req->steps * req->num_seeds;
        pt->kept_min = -1;
        int64_t below = 0;
        for (int n = 0; n <= K; ++n) {
            if (b->kept_hist[n] == 0)
                continue;
            if (pt->kept_min < 0)
                pt->kept_min = n;
            pt->kept_max = n;
            if (below <= pt->num_steps / 2 && below + b->kept_hist[n] > pt->num_steps / 2)
                pt->kept_median = n;
            below += b->kept_hist[n];
        }
        pt->median_step_seconds = median(b->step_seconds, (size_t)pt->num_steps);
        pt->setup_seconds = median(b->setup_seconds, (size_t)req->num_seeds);
    }
    return err;
}

void pn_sweep_free(pn_sweep *sweep)
{
    if (!sweep)
        return;
    for (int i = 0; sweep->points && i < sweep->num_points; ++i) {
        free(sweep->points[i].stats);
        free(sweep->points[i].seed_stats);
        free(sweep->points[i].kept_steps);
    }
    free(sweep->points);
    free(sweep);
}

pn_error pn_sweep_run(const pn_sweep_request *req, pn_sweep **out, pn_error_info *info)
{
    *out = NULL;
    if (!req->rules || req->points < 1 || req->steps < 1 || req->num_seeds < 1 || !req->seeds)
        return pn_fail(info, PN_ERR_INVALID, "sweep: bad request");
    const int K = req->rules->num_rules;
    pn_sweep *sw = calloc(1, sizeof *sw);
    if (!sw)
        return pn_fail(info, PN_ERR_NOMEM, "out of memory");
    sw->num_rules = K;
    sw->num_points = req->points;
    sw->points = calloc((size_t)req->points, sizeof *sw->points);
    if (!sw->points) {
        pn_sweep_free(sw);
        return pn_fail(info, PN_ERR_NOMEM, "out of memory");
    }
    for (int i = 0; i < req->points; ++i) {
        pn_sweep_point *pt = &sw->points[i];
        pt->stats = calloc(1, sizeof *pt->stats);
        pt->seed_stats = calloc((size_t)req->num_seeds, sizeof *pt->seed_stats);
        pt->kept_steps = calloc((size_t)K, sizeof *pt->kept_steps);
        if (!pt->stats || !pt->seed_stats || !pt->kept_steps) {
            pn_sweep_free(sw);
            return pn_fail(info, PN_ERR_NOMEM, "out of memory");
        }
        pt->value = pn_sweep_value(req, i);
        pt->log2_lambda_w =
            req->knob == PN_SWEEP_LOG2_LAMBDA_W ? pt->value : req->settings.log2_lambda_w;
        pt->alpha = req->knob == PN_SWEEP_ALPHA ? pt->value : req->settings.alpha;
    }
    run_buffers b;
    pn_error err = buffers_new(req, &b, info);
    for (int i = 0; i < req->points && err == PN_OK; ++i)
        err = run_point(req, &sw->points[i], &b, info);
    buffers_free(&b);
    if (err != PN_OK) {
        pn_sweep_free(sw);
        return err;
    }
    *out = sw;
    return PN_OK;
}

int pn_sweep_most_kept(const pn_sweep *sweep, int point, int *order)
{
    const int64_t *kept = sweep->points[point].kept_steps;
    int n = 0;
    for (int r = 0; r < sweep->num_rules; ++r) {
        if (kept[r] == 0)
            continue;
        /* insertion: after every rule kept at least as often */
        int j = n++;
        while (j > 0 && kept[order[j - 1]] < kept[r]) {
            order[j] = order[j - 1];
            --j;
        }
        order[j] = r;
    }
    return n;
}

void pn_sweep_figures_of(const pn_style_stats *s, const pn_style_stats *ref, pn_sweep_figures *out)
{
    static const int32_t root_position[2] = {1 | 1 << 4 | 1 << 7, 1 | 1 << 3 | 1 << 7};
    for (int i = 0; i < PN_SWEEP_NUM_TV; ++i)
        out->tv[i] = ref ? pn_style_tv(s, ref, pn_sweep_tv_dist[i]) : NAN;
    out->root_position = pn_style_share_bins(s, PN_STYLE_CHORD, root_position, 2);
    out->stepwise_soprano = pn_style_share_magnitude(s, PN_STYLE_SOPRANO_MOTION, 1, 2);
    out->soprano_leaps = pn_style_share_magnitude(s, PN_STYLE_SOPRANO_MOTION, 5, INT32_MAX);

    /* the registers are absolute pitches: every C, F and G */
    int32_t primary[3 * (PN_STYLE_RANGE_BINS / 12 + 1)];
    int num_primary = 0;
    for (int32_t pitch = 0; pitch < PN_STYLE_RANGE_BINS; ++pitch)
        if (pitch % 12 == 0 || pitch % 12 == 5 || pitch % 12 == 7)
            primary[num_primary++] = pitch;
    out->primary_bass = pn_style_share_bins(s, PN_STYLE_RANGE_BASS, primary, num_primary);

    /* the bass (bit 0) with any of the consonances above it */
    static const int consonances[5] = {3, 4, 7, 8, 9};
    int32_t consonant[1 << 5];
    for (int subset = 0; subset < 1 << 5; ++subset) {
        consonant[subset] = 1;
        for (int k = 0; k < 5; ++k)
            if (subset & 1 << k)
                consonant[subset] |= 1 << consonances[k];
    }
    out->consonant = pn_style_share_bins(s, PN_STYLE_CHORD, consonant, 1 << 5);
    out->parallels = pn_style_rate_value(s, PN_STYLE_PARALLELS);
    out->hidden = pn_style_rate_value(s, PN_STYLE_HIDDEN);
    out->wide = pn_style_rate_value(s, PN_STYLE_WIDE);
    out->crossing = pn_style_rate_value(s, PN_STYLE_CROSSING);
}

/* pn_sweep_figures holds doubles only (sweep.h): as an array here. */
enum { NUM_FIGURES = sizeof(pn_sweep_figures) / sizeof(double) };
_Static_assert(sizeof(pn_sweep_figures) == (PN_SWEEP_NUM_TV + 9) * sizeof(double),
               "pn_sweep_figures: doubles only");

void pn_sweep_standard_error(const pn_sweep_point *pt, int num_seeds, const pn_style_stats *ref,
                             pn_sweep_figures *out)
{
    /* Welford's running mean and sum of squared deviations, one pass */
    double mean[NUM_FIGURES] = {0}, dev[NUM_FIGURES] = {0}, v[NUM_FIGURES];
    for (int i = 0; i < num_seeds; ++i) {
        pn_sweep_figures f;
        pn_sweep_figures_of(&pt->seed_stats[i], ref, &f);
        memcpy(v, &f, sizeof f);
        for (int j = 0; j < NUM_FIGURES; ++j) {
            const double d = v[j] - mean[j];
            mean[j] += d / (i + 1);
            dev[j] += d * (v[j] - mean[j]);
        }
    }
    /* a NAN of any seed stays NAN; one seed has no spread */
    for (int j = 0; j < NUM_FIGURES; ++j)
        v[j] = num_seeds < 2 ? NAN : sqrt(dev[j] / (num_seeds - 1) / num_seeds);
    memcpy(out, v, sizeof *out);
}

void pn_sweep_reference_figures(const pn_style_stats *ref, pn_sweep_figures *out)
{
    if (ref) {
        pn_sweep_figures_of(ref, NULL, out);
    } else {
        double none[NUM_FIGURES];
        for (int j = 0; j < NUM_FIGURES; ++j)
            none[j] = NAN;
        memcpy(out, none, sizeof *out);
    }
    out->primary_bass = NAN;
}

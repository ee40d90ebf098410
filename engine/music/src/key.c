/* Krumhansl-Schmuckler key finding and transposition to a common tonic
 * (docs/corpus.md). */
#include "parnassus/key.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Krumhansl-Kessler probe-tone profiles, from the tonic upwards. */
static const double PROFILE[2][12] = {
    {6.35, 2.23, 3.48, 2.33, 4.38, 4.09, 2.52, 5.19, 2.39, 3.66, 2.29, 2.88},
    {6.33, 2.68, 3.52, 5.38, 2.60, 3.53, 2.54, 4.75, 3.98, 2.69, 3.34, 3.17},
};

static const char *const KEY_NAME[2][12] = {
    {"C major", "Db major", "D major", "Eb major", "E major", "F major", "F# major", "G major",
     "Ab major", "A major", "Bb major", "B major"},
    {"C minor", "C# minor", "D minor", "Eb minor", "E minor", "F minor", "F# minor", "G minor",
     "G# minor", "A minor", "Bb minor", "B minor"},
};

const char *pn_key_name(pn_key key)
{
    if (key.tonic < 0 || key.tonic > 11 || (key.mode != PN_MAJOR && key.mode != PN_MINOR))
        return "unknown key";
    return KEY_NAME[key.mode][key.tonic];
}

void pn_key_scores_of_counts(const int64_t count[12], double scores[PN_NUM_KEYS])
{
    /* Integer counts: the sums below are exact, so the deviations do not
     * depend on the order of the pitch classes. */
    int64_t total = 0;
    for (int j = 0; j < 12; ++j)
        total += count[j];
    double dx[12];
    double mean = (double)total / 12.0;
    for (int j = 0; j < 12; ++j)
        dx[j] = (double)count[j] - mean;

    for (int mode = 0; mode < 2; ++mode) {
        double pmean = 0.0;
        for (int i = 0; i < 12; ++i)
            pmean += PROFILE[mode][i];
        pmean /= 12.0;
        double dp[12];
        double spp = 0.0;
        for (int i = 0; i < 12; ++i) {
            dp[i] = PROFILE[mode][i] - pmean;
            spp += dp[i] * dp[i];
        }
        for (int tonic = 0; tonic < 12; ++tonic) {
            /* Summed from the tonic upwards, so that transposed counts give
             * bit-identical scores for the transposed keys. */
            double sxy = 0.0, sxx = 0.0;
            for (int i = 0; i < 12; ++i) {
                double x = dx[(tonic + i) % 12];
                sxy += x * dp[i];
                sxx += x * x;
            }
            double s = sxx > 0.0 ? sxy / sqrt(sxx * spp) : 0.0;
            scores[mode * 12 + tonic] = s;
        }
    }
}

pn_key pn_key_of_counts(const int64_t count[12])
{
    double scores[PN_NUM_KEYS];
    pn_key_scores_of_counts(count, scores);
    int best = 0;
    for (int i = 1; i < PN_NUM_KEYS; ++i)
        if (scores[i] > scores[best])
            best = i;
    pn_key key = {best % 12, best < 12 ? PN_MAJOR : PN_MINOR, scores[best]};
    return key;
}

/* The duration every sounding voice spends on each pitch class. */
static void piece_counts(const pn_piece *piece, int64_t count[12])
{
    memset(count, 0, 12 * sizeof *count);
    size_t k = piece ? (size_t)piece->num_voices : 0;
    for (int32_t t = 0; piece && t < piece->num_steps; ++t) {
        int64_t d = pn_piece_duration(piece, t);
        const int8_t *step = piece->pitch + (size_t)t * k;
        for (size_t v = 0; v < k; ++v)
            if (step[v] >= 0)
                count[step[v] % 12] += d;
    }
}

void pn_key_scores(const pn_piece *piece, double scores[PN_NUM_KEYS])
{
    int64_t count[12];
    piece_counts(piece, count);
    pn_key_scores_of_counts(count, scores);
}

pn_key pn_key_find(const pn_piece *piece)
{
    int64_t count[12];
    piece_counts(piece, count);
    return pn_key_of_counts(count);
}

/* ------------------------------------------------------------------------ */
/* Transposition and filtering */

void pn_transpose_report_free(pn_transpose_report *report)
{
    if (!report)
        return;
    free(report->key);
    free(report->shift);
    free(report->bad_step);
    free(report->bad_voice);
    memset(report, 0, sizeof *report);
}

/* Keeps the pieces with keep[i] != 0, in order, freeing the others. */
static void keep_pieces(pn_corpus *c, const unsigned char *keep)
{
    int32_t n = 0;
    for (int32_t i = 0; i < c->num_pieces; ++i) {
        if (keep[i]) {
            c->pieces[n++] = c->pieces[i];
        } else {
            free(c->pieces[i].name);
            free(c->pieces[i].pitch);
            free(c->pieces[i].duration);
        }
    }
    c->num_pieces = n;
}

static pn_error check_corpus(const pn_corpus *in, pn_corpus **out, pn_error_info *info)
{
    if (!in || !out)
        return pn_fail(info, PN_ERR_INVALID, "corpus: NULL argument");
    *out = NULL;
    return PN_OK;
}

/* Transposes by shift[i]; `keys` (may be NULL) are the keys already found. */
static pn_error transpose(const pn_corpus *in, const int32_t *shift, const pn_key *keys, int low,
                          int high, pn_corpus **out, pn_transpose_report *report,
                          pn_error_info *info)
{
    if (report)
        memset(report, 0, sizeof *report);
    if (low < 0 || high > 127 || low > high)
        return pn_fail(info, PN_ERR_INVALID, "transpose: range %d..%d is not within 0..127", low,
                       high);
    size_t n = (size_t)in->num_pieces;
    unsigned char *keep = malloc(n + 1);
    if (!keep)
        return pn_fail(info, PN_ERR_NOMEM, "transpose: out of memory");
    if (report) {
        report->num_pieces = in->num_pieces;
        report->key = malloc(n * sizeof *report->key + 1);
        report->shift = malloc(n * sizeof *report->shift + 1);
        report->bad_step = malloc(n * sizeof *report->bad_step + 1);
        report->bad_voice = malloc(n * sizeof *report->bad_voice + 1);
        if (!report->key || !report->shift || !report->bad_step || !report->bad_voice) {
            free(keep);
            pn_transpose_report_free(report);
            return pn_fail(info, PN_ERR_NOMEM, "transpose: out of memory");
        }
    }
    pn_error err = pn_corpus_copy(in, out, info);
    if (err != PN_OK) {
        free(keep);
        pn_transpose_report_free(report);
        return err;
    }
    pn_corpus *c = *out;
    int32_t kept = 0;
    for (size_t i = 0; i < n; ++i) {
        pn_piece *p = &c->pieces[i];
        int64_t s = shift[i];
        int32_t bad_step = -1, bad_voice = -1;
        size_t cells = (size_t)p->num_steps * (size_t)p->num_voices;
        for (size_t j = 0; j < cells && bad_step < 0; ++j) {
            if (p->pitch[j] < 0)
                continue;
            int64_t q = p->pitch[j] + s;
            if (q < low || q > high) {
                bad_step = (int32_t)(j / (size_t)p->num_voices);
                bad_voice = (int32_t)(j % (size_t)p->num_voices);
            }
        }
        if (bad_step < 0) {
            for (size_t j = 0; j < cells; ++j)
                if (p->pitch[j] >= 0)
                    p->pitch[j] = (int8_t)(p->pitch[j] + s);
            ++kept;
        }
        keep[i] = bad_step < 0;
        if (report) {
            report->key[i] = keys ? keys[i] : pn_key_find(&in->pieces[i]);
            report->shift[i] = shift[i];
            report->bad_step[i] = bad_step;
            report->bad_voice[i] = bad_voice;
        }
    }
    keep_pieces(c, keep);
    free(keep);
    if (report)
        report->num_kept = kept;
    return PN_OK;
}

pn_error pn_corpus_transpose_by(const pn_corpus *in, const int32_t *shift, int low, int high,
                                pn_corpus **out, pn_transpose_report *report, pn_error_info *info)
{
    pn_error err = check_corpus(in, out, info);
    if (err != PN_OK)
        return err;
    if (!shift && in->num_pieces > 0)
        return pn_fail(info, PN_ERR_INVALID, "pn_corpus_transpose_by: shift is NULL");
    return transpose(in, shift, NULL, low, high, out, report, info);
}

pn_error pn_corpus_transpose_to(const pn_corpus *in, int tonic, int low, int high, pn_corpus **out,
                                pn_transpose_report *report, pn_error_info *info)
{
    pn_error err = check_corpus(in, out, info);
    if (err != PN_OK)
        return err;
    if (tonic < 0 || tonic > 11)
        return pn_fail(info, PN_ERR_INVALID, "pn_corpus_transpose_to: tonic %d is not in 0..11",
                       tonic);
    size_t n = (size_t)in->num_pieces;
    pn_key *keys = malloc(n * sizeof *keys + 1);
    int32_t *shift = malloc(n * sizeof *shift + 1);
    if (!keys || !shift) {
        free(keys);
        free(shift);
        return pn_fail(info, PN_ERR_NOMEM, "transpose: out of memory");
    }
    for (size_t i = 0; i < n; ++i) {
        keys[i] = pn_key_find(&in->pieces[i]);
        int d = ((tonic - keys[i].tonic) % 12 + 12) % 12; /* 0..11 */
        shift[i] = d > 5 ? d - 12 : d;                    /* -6..+5 */
    }
    err = transpose(in, shift, keys, low, high, out, report, info);
    free(keys);
    free(shift);
    return err;
}

pn_error pn_corpus_filter_mode(const pn_corpus *in, pn_mode mode, pn_corpus **out,
                               pn_error_info *info)
{
    pn_error err = check_corpus(in, out, info);
    if (err != PN_OK)
        return err;
    if (mode != PN_MAJOR && mode != PN_MINOR)
        return pn_fail(info, PN_ERR_INVALID, "pn_corpus_filter_mode: mode %d is not a mode",
                       (int)mode);
    unsigned char *keep = malloc((size_t)in->num_pieces + 1);
    if (!keep)
        return pn_fail(info, PN_ERR_NOMEM, "filter: out of memory");
    for (int32_t i = 0; i < in->num_pieces; ++i)
        keep[i] = pn_key_find(&in->pieces[i]).mode == mode;
    err = pn_corpus_copy(in, out, info);
    if (err == PN_OK)
        keep_pieces(*out, keep);
    free(keep);
    return err;
}

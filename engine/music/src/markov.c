/* The first-order Markov chain over sonorities (see markov.h). */
#include "parnassus/markov.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct pn_markov {
    int32_t k;
    double kappa;
    int32_t num_states;
    int8_t *states;     /* num_states x k */
    int64_t *unigram;   /* per state: events equal to it */
    int64_t *uni_cum;   /* cumulative unigram counts, for drawing */
    int64_t num_events; /* sum of the unigram */
    /* transitions, by source: row x is [row[x], row[x + 1]) of target and
     * cum (the cumulative counts within the row) */
    int64_t *row;
    int32_t *target;
    int64_t *cum;
    int64_t num_transitions;
};

/* ------------------------------------------------------------------------ */
/* Interning states */

typedef struct intern {
    int32_t *slot; /* state + 1, 0 = empty */
    size_t mask;
} intern;

static uint64_t hash_bytes(const int8_t *p, int32_t k)
{
    uint64_t h = 0xCBF29CE484222325ull;
    for (int32_t i = 0; i < k; ++i)
        h = (h ^ (uint8_t)p[i]) * 0x100000001B3ull;
    return h ^ (h >> 29);
}

static int32_t intern_find(const intern *t, const int8_t *states, int32_t k, const int8_t *p,
                           size_t *where)
{
    size_t i = (size_t)hash_bytes(p, k) & t->mask;
    while (t->slot[i] != 0) {
        const int32_t s = t->slot[i] - 1;
        if (memcmp(states + (size_t)s * (size_t)k, p, (size_t)k) == 0)
            return s;
        i = (i + 1) & t->mask;
    }
    *where = i;
    return -1;
}

/* ------------------------------------------------------------------------ */
/* Learning */

static int compare_u64(const void *a, const void *b)
{
    const uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

void pn_markov_free(pn_markov *m)
{
    if (!m)
        return;
    free(m->states);
    free(m->unigram);
    free(m->uni_cum);
    free(m->row);
    free(m->target);
    free(m->cum);
    free(m);
}

static pn_error no_memory(pn_error_info *info)
{
    return pn_fail(info, PN_ERR_NOMEM, "markov: out of memory");
}

/* Assigns every event of the merged corpus its state (event_state, in
 * corpus order) and fills m->states and m->unigram. */
static pn_error intern_events(pn_markov *m, const pn_corpus *c, int32_t *event_state,
                              pn_error_info *info)
{
    const int32_t k = m->k;
    const int64_t n = m->num_events;
    size_t size = 16;
    while (size < 2 * (size_t)n)
        size *= 2;
    intern t = {calloc(size, sizeof(int32_t)), size - 1};
    m->states = malloc((size_t)n * (size_t)k + 1);
    m->unigram = calloc((size_t)n + 1, sizeof *m->unigram);
    if (!t.slot || !m->states || !m->unigram) {
        free(t.slot);
        return no_memory(info);
    }
    int64_t e = 0;
    for (int32_t i = 0; i < c->num_pieces; ++i) {
        const pn_piece *p = &c->pieces[i];
        for (int32_t s = 0; s < p->num_steps; ++s, ++e) {
            const int8_t *step = p->pitch + (size_t)s * (size_t)k;
            size_t where = 0;
            int32_t id = intern_find(&t, m->states, k, step, &where);
            if (id < 0) {
                id = m->num_states++;
                memcpy(m->states + (size_t)id * (size_t)k, step, (size_t)k);
                t.slot[where] = id + 1;
            }
            m->unigram[id]++;
            event_state[e] = id;
        }
    }
    free(t.slot);
    return PN_OK;
}

/* Counts the transitions inside pieces into the rows. */
static pn_error count_transitions(pn_markov *m, const pn_corpus *c, const int32_t *event_state,
                                  pn_error_info *info)
{
    int64_t num_pairs = 0;
    for (int32_t i = 0; i < c->num_pieces; ++i)
        num_pairs += c->pieces[i].num_steps > 1 ? c->pieces[i].num_steps - 1 : 0;
    uint64_t *pair = malloc((size_t)num_pairs * sizeof *pair + 1);
    m->row = calloc((size_t)m->num_states + 1, sizeof *m->row);
    if (!pair || !m->row) {
        free(pair);
        return no_memory(info);
    }
    int64_t e = 0, np = 0;
    for (int32_t i = 0; i < c->num_pieces; ++i) {
        const int32_t n = c->pieces[i].num_steps;
        for (int32_t s = 0; s + 1 < n; ++s)
            pair[np++] = (uint64_t)event_state[e + s] << 32 | (uint32_t)event_state[e + s + 1];
        e += n;
    }
    qsort(pair, (size_t)num_pairs, sizeof *pair, compare_u64);
    int64_t distinct = 0;
    for (int64_t j = 0; j < num_pairs; ++j)
        distinct += j == 0 || pair[j] != pair[j - 1];
    m->target = malloc((size_t)distinct * sizeof *m->target + 1);
    m->cum = malloc((size_t)distinct * sizeof *m->cum + 1);
    if (!m->target || !m->cum) {
        free(pair);
        return no_memory(info);
    }
    int64_t d = -1;
    for (int64_t j = 0; j < num_pairs; ++j) {
        const int32_t x = (int32_t)(pair[j] >> 32), y = (int32_t)(pair[j] & 0xFFFFFFFFu);
        if (j == 0 || pair[j] != pair[j - 1]) {
            ++d;
            m->target[d] = y;
            /* cumulative within the row: start from the row's previous entry */
            m->cum[d] = (d > 0 && j > 0 && (int32_t)(pair[j - 1] >> 32) == x) ? m->cum[d - 1] : 0;
            m->row[x + 1]++;
        }
        m->cum[d]++;
    }
    for (int32_t x = 0; x < m->num_states; ++x)
        m->row[x + 1] += m->row[x];
    m->num_transitions = distinct;
    free(pair);
    return PN_OK;
}

pn_error pn_markov_learn(const pn_corpus *corpus, double kappa, pn_markov **out,
                         pn_error_info *info)
{
    if (!out)
        return pn_fail(info, PN_ERR_INVALID, "markov: out is NULL");
    *out = NULL;
    if (!corpus)
        return pn_fail(info, PN_ERR_INVALID, "markov: corpus is NULL");
    if (!(kappa >= 0.0) || !isfinite(kappa))
        return pn_fail(info, PN_ERR_INVALID, "markov: kappa must be a finite number >= 0, got %g",
                       kappa);
    if (corpus->num_voices < 1 || corpus->num_voices > PN_MARKOV_MAX_VOICES)
        return pn_fail(info, PN_ERR_INVALID, "markov: %d voices (1..%d)", (int)corpus->num_voices,
                       PN_MARKOV_MAX_VOICES);
    for (int32_t i = 0; i < corpus->num_pieces; ++i)
        if (corpus->pieces[i].num_voices != corpus->num_voices)
            return pn_fail(info, PN_ERR_INVALID, "markov: piece %d has %d voices, not %d",
                           (int)i + 1, (int)corpus->pieces[i].num_voices, (int)corpus->num_voices);
    pn_corpus *events = NULL;
    pn_error err = pn_corpus_sonorities(corpus, &events, info);
    if (err != PN_OK)
        return err;
    pn_markov *m = calloc(1, sizeof *m);
    int32_t *event_state = NULL;
    if (!m) {
        pn_corpus_free(events);
        return no_memory(info);
    }
    m->k = corpus->num_voices;
    m->kappa = kappa;
    for (int32_t i = 0; i < events->num_pieces; ++i)
        m->num_events += events->pieces[i].num_steps;
    if (m->num_events == 0) {
        err = pn_fail(info, PN_ERR_INVALID, "markov: the corpus has no sonorities to learn from");
        goto done;
    }
    if (m->num_events > INT32_MAX) {
        err = pn_fail(info, PN_ERR_INVALID, "markov: the corpus has too many sonorities");
        goto done;
    }
    event_state = malloc((size_t)m->num_events * sizeof *event_state);
    if (!event_state) {
        err = no_memory(info);
        goto done;
    }
    if ((err = intern_events(m, events, event_state, info)) != PN_OK ||
        (err = count_transitions(m, events, event_state, info)) != PN_OK)
        goto done;
    m->uni_cum = malloc((size_t)m->num_states * sizeof *m->uni_cum);
    if (!m->uni_cum) {
        err = no_memory(info);
        goto done;
    }
    int64_t cum = 0;
    for (int32_t s = 0; s < m->num_states; ++s)
        m->uni_cum[s] = cum += m->unigram[s];
done:
    free(event_state);
    pn_corpus_free(events);
    if (err != PN_OK) {
        pn_markov_free(m);
        return err;
    }
    *out = m;
    return PN_OK;
}

/* ------------------------------------------------------------------------ */
/* Queries */

int32_t pn_markov_num_voices(const pn_markov *m)
{
    return m->k;
}

int32_t pn_markov_num_states(const pn_markov *m)
{
    return m->num_states;
}

int64_t pn_markov_num_events(const pn_markov *m)
{
    return m->num_events;
}

int64_t pn_markov_num_transitions(const pn_markov *m)
{
    return m->num_transitions;
}

double pn_markov_kappa(const pn_markov *m)
{
    return m->kappa;
}

const int8_t *pn_markov_state(const pn_markov *m, int32_t s)
{
    return s >= 0 && s < m->num_states ? m->states + (size_t)s * (size_t)m->k : NULL;
}

int32_t pn_markov_find(const pn_markov *m, const int8_t *pitches)
{
    for (int32_t s = 0; s < m->num_states; ++s)
        if (memcmp(m->states + (size_t)s * (size_t)m->k, pitches, (size_t)m->k) == 0)
            return s;
    return -1;
}

int64_t pn_markov_unigram_count(const pn_markov *m, int32_t y)
{
    return y >= 0 && y < m->num_states ? m->unigram[y] : 0;
}

int64_t pn_markov_source_count(const pn_markov *m, int32_t x)
{
    if (x < 0 || x >= m->num_states)
        return 0;
    const int64_t end = m->row[x + 1];
    return end > m->row[x] ? m->cum[end - 1] : 0;
}

int64_t pn_markov_count(const pn_markov *m, int32_t x, int32_t y)
{
    if (x < 0 || x >= m->num_states)
        return 0;
    int64_t lo = m->row[x], hi = m->row[x + 1];
    const int64_t start = lo;
    while (lo < hi) {
        const int64_t mid = lo + (hi - lo) / 2;
        if (m->target[mid] < y)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo >= m->row[x + 1] || m->target[lo] != y)
        return 0;
    return m->cum[lo] - (lo > start ? m->cum[lo - 1] : 0);
}

double pn_markov_prob(const pn_markov *m, int32_t x, int32_t y)
{
    if (y < 0 || y >= m->num_states)
        return 0.0;
    const double unigram = (double)m->unigram[y] / (double)m->num_events;
    const int64_t cx = pn_markov_source_count(m, x);
    if (cx == 0)
        return unigram;
    return ((double)pn_markov_count(m, x, y) + m->kappa * unigram) / ((double)cx + m->kappa);
}

/* A uniform double in [0, 1) from the top 53 bits. */
static double uniform(pn_rng *rng)
{
    return (double)(pn_rng_next(rng) >> 11) * 0x1.0p-53;
}

/* The first index i of cum[0..n) with cum[i] > r (cum ascending, r < cum[n-1]). */
static int64_t search(const int64_t *cum, int64_t n, int64_t r)
{
    int64_t lo = 0, hi = n - 1;
    while (lo < hi) {
        const int64_t mid = lo + (hi - lo) / 2;
        if (cum[mid] > r)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

static int64_t below(double u, int64_t n)
{
    int64_t r = (int64_t)(u * (double)n);
    return r >= n ? n - 1 : r;
}

int32_t pn_markov_draw(const pn_markov *m, int32_t x, pn_rng *rng)
{
    const int64_t cx = pn_markov_source_count(m, x);
    if (cx > 0) {
        /* the row with probability c(x) / (c(x) + kappa), else the unigram */
        const double v = uniform(rng) * ((double)cx + m->kappa);
        if (v >= m->kappa) {
            const int64_t start = m->row[x];
            const int64_t r = below((v - m->kappa) / (double)cx, cx);
            return m->target[start + search(m->cum + start, m->row[x + 1] - start, r)];
        }
    }
    return (int32_t)search(m->uni_cum, m->num_states, below(uniform(rng), m->num_events));
}

static int voice_is(const pn_markov *m, int32_t y, int voice, int pitch)
{
    return m->states[(size_t)y * (size_t)m->k + (size_t)voice] == pitch;
}

int32_t pn_markov_draw_given(const pn_markov *m, int32_t x, int voice, int pitch, pn_rng *rng)
{
    if (voice < 0 || voice >= m->k || pitch < PN_REST || pitch > 127)
        return -1;
    const int64_t cx = pn_markov_source_count(m, x);
    /* the two parts of the restricted mass, in counts: the row's
     * transitions to such states, and the unigram's events of them */
    int64_t row_part = 0, uni_part = 0;
    const int64_t start = cx > 0 ? m->row[x] : 0, end = cx > 0 ? m->row[x + 1] : 0;
    for (int64_t i = start; i < end; ++i)
        if (voice_is(m, m->target[i], voice, pitch))
            row_part += m->cum[i] - (i > start ? m->cum[i - 1] : 0);
    for (int32_t y = 0; y < m->num_states; ++y)
        if (voice_is(m, y, voice, pitch))
            uni_part += m->unigram[y];
    if (uni_part == 0)
        return -1; /* every state in a row is also in the unigram */
    /* P(y | x) (c(x) + kappa) = c(x, y) + kappa u(y) / N; without a row,
     * the unigram alone */
    const double kappa = cx > 0 ? m->kappa : 1.0;
    const double uni_weight = kappa * (double)uni_part / (double)m->num_events;
    const double v = uniform(rng) * ((double)row_part + uni_weight);
    if (v < (double)row_part) {
        int64_t r = below(v / (double)row_part, row_part);
        for (int64_t i = start; i < end; ++i) {
            if (!voice_is(m, m->target[i], voice, pitch))
                continue;
            const int64_t c = m->cum[i] - (i > start ? m->cum[i - 1] : 0);
            if (r < c)
                return m->target[i];
            r -= c;
        }
    }
    int64_t r = below(uniform(rng), uni_part);
    int32_t last = -1;
    for (int32_t y = 0; y < m->num_states; ++y) {
        if (!voice_is(m, y, voice, pitch))
            continue;
        last = y;
        if (r < m->unigram[y])
            return y;
        r -= m->unigram[y];
    }
    return last;
}

int pn_markov_voice_range(const pn_markov *m, int voice, int *low, int *high)
{
    if (voice < 0 || voice >= m->k)
        return 0;
    int lo = 128, hi = -1;
    for (int32_t y = 0; y < m->num_states; ++y) {
        const int p = m->states[(size_t)y * (size_t)m->k + (size_t)voice];
        if (p < 0)
            continue;
        lo = p < lo ? p : lo;
        hi = p > hi ? p : hi;
    }
    if (hi < 0)
        return 0;
    *low = lo;
    *high = hi;
    return 1;
}

/* Style statistics: the accumulator that turns events into counts
 * (docs/evaluate.md). */
#include "parnassus/style.h"

#include <stdlib.h>
#include <string.h>

enum { MAX_PITCHES = 128 };

/* A sonority: distinct pitches, ascending (bass first). */
typedef struct sonority {
    int n;
    uint8_t p[MAX_PITCHES];
} sonority;

/* A voice's last PN_STYLE_SPAN_WINDOW pitches, oldest at `next` once full. */
typedef struct span_window {
    uint8_t pitch[PN_STYLE_SPAN_WINDOW];
    int size, next;
} span_window;

/* A labelled note, for comparing labelled events. */
typedef struct note {
    int voice, pitch;
} note;

struct pn_style_acc {
    pn_style_options o;
    pn_style_stats stats;
    int in_piece;
    pn_key key;

    /* the previous labelled event of the piece */
    int has_labelled;
    int num_labelled;
    note labelled[PN_STYLE_MAX_NOTES];
    note scratch[PN_STYLE_MAX_NOTES];

    /* the previous sonority of the piece, its root and chord kind */
    int has_prev;
    sonority prev;
    int prev_root;
    pn_style_chord_kind prev_kind;

    /* each voice's last pitches in the piece (soprano, alto, tenor, bass) */
    span_window span[4];

    /* the pitch classes of the piece's last sonorities, for its key areas:
     * area_pcs[i][c] pitches of class c in the i-th (ring order), summed in
     * area_sum */
    uint8_t area_pcs[PN_STYLE_SPAN_WINDOW][12];
    int64_t area_sum[12];
    int area_size, area_next;

    /* the last sonorities of the piece, for 4-grams: window[(start + i) % 4] */
    sonority window[PN_STYLE_GRAM];
    int window_start, window_size;

    /* the input's own 4-grams (collect_grams) */
    uint64_t *grams;
    int64_t num_grams, grams_capacity;
    int grams_failed; /* out of memory while collecting */
};

void pn_style_options_default(pn_style_options *o)
{
    o->training = NULL;
    o->collect_grams = 0;
}

pn_error pn_style_acc_create(const pn_style_options *o, pn_style_acc **out, pn_error_info *info)
{
    if (!out)
        return pn_fail(info, PN_ERR_INVALID, "style: NULL argument");
    *out = NULL;
    pn_style_acc *acc = calloc(1, sizeof *acc);
    if (!acc)
        return pn_fail(info, PN_ERR_NOMEM, "style: out of memory");
    if (o)
        acc->o = *o;
    else
        pn_style_options_default(&acc->o);
    *out = acc;
    return PN_OK;
}

void pn_style_acc_free(pn_style_acc *acc)
{
    if (!acc)
        return;
    free(acc->grams);
    free(acc);
}

const pn_style_stats *pn_style_acc_stats(const pn_style_acc *acc)
{
    return &acc->stats;
}

void pn_style_begin_piece(pn_style_acc *acc, pn_key key)
{
    acc->in_piece = 1;
    acc->key = key;
    acc->has_labelled = 0;
    acc->has_prev = 0;
    acc->window_start = 0;
    acc->window_size = 0;
    memset(acc->span, 0, sizeof acc->span);
    memset(acc->area_pcs, 0, sizeof acc->area_pcs);
    memset(acc->area_sum, 0, sizeof acc->area_sum);
    acc->area_size = 0;
    acc->area_next = 0;
    acc->stats.pieces++;
    if (key.mode == PN_MINOR)
        acc->stats.pieces_minor++;
    else
        acc->stats.pieces_major++;
}

/* ------------------------------------------------------------------------ */
/* Counting */

static int64_t *bins(pn_style_acc *acc, pn_style_dist d)
{
    return acc->stats.bins + pn_style_dist_get(d)->first;
}

static int clamp(int x, int lo, int hi)
{
    return x < lo ? lo : x > hi ? hi : x;
}

static void count_motion(pn_style_acc *acc, pn_style_dist d, int from, int to)
{
    bins(acc, d)[clamp(to - from, -PN_STYLE_MOTION_CLAMP, PN_STYLE_MOTION_CLAMP) +
                 PN_STYLE_MOTION_CLAMP]++;
}

static unsigned pc_mask(const sonority *s)
{
    unsigned mask = 0;
    for (int i = 0; i < s->n; ++i)
        mask |= 1u << (s->p[i] % 12);
    return mask;
}

static int popcount12(unsigned mask)
{
    int n = 0;
    for (int c = 0; c < 12; ++c)
        n += (mask >> c) & 1u;
    return n;
}

/* Pushes a voice's pitch into its window and, once the window holds a
 * phrase, counts the semitones the voice covered within it: how far a
 * line wanders, whatever the key and register. */
static void count_span(pn_style_acc *acc, pn_style_dist d, span_window *w, int pitch)
{
    w->pitch[w->next] = (uint8_t)pitch;
    w->next = (w->next + 1) % PN_STYLE_SPAN_WINDOW;
    if (w->size < PN_STYLE_SPAN_WINDOW)
        ++w->size;
    if (w->size < PN_STYLE_SPAN_WINDOW)
        return;
    int lo = w->pitch[0], hi = w->pitch[0];
    for (int i = 1; i < PN_STYLE_SPAN_WINDOW; ++i) {
        lo = w->pitch[i] < lo ? w->pitch[i] : lo;
        hi = w->pitch[i] > hi ? w->pitch[i] : hi;
    }
    bins(acc, d)[clamp(hi - lo, 0, PN_STYLE_SPAN_CLAMP)]++;
}

/* Pushes a sonority's pitch classes into the window of the last
 * PN_STYLE_SPAN_WINDOW and, once it is full, counts the key they sound in
 * (Krumhansl-Schmuckler over each pitch of each sonority once) as a degree
 * of the piece's key: where a phrase goes, "V" for the dominant. */
static void count_key_area(pn_style_acc *acc, const sonority *s)
{
    uint8_t *slot = acc->area_pcs[acc->area_next];
    for (int c = 0; c < 12; ++c)
        acc->area_sum[c] -= slot[c];
    memset(slot, 0, 12);
    for (int i = 0; i < s->n; ++i) {
        slot[s->p[i] % 12]++;
        acc->area_sum[s->p[i] % 12]++;
    }
    acc->area_next = (acc->area_next + 1) % PN_STYLE_SPAN_WINDOW;
    if (acc->area_size < PN_STYLE_SPAN_WINDOW)
        ++acc->area_size;
    if (acc->area_size < PN_STYLE_SPAN_WINDOW)
        return;
    const pn_key local = pn_key_of_counts(acc->area_sum);
    const int degree = ((local.tonic - acc->key.tonic) % 12 + 12) % 12;
    bins(acc, PN_STYLE_KEY_AREA)[(local.mode == PN_MINOR ? 12 : 0) + degree]++;
}

/* What a sonority is on its own. */
static void count_sonority(pn_style_acc *acc, const sonority *s)
{
    pn_style_stats *st = &acc->stats;
    const int n = s->n, bass = s->p[0], soprano = s->p[n - 1];
    st->sonorities++;
    unsigned rel = 0;
    for (int i = 0; i < n; ++i)
        rel |= 1u << ((s->p[i] - bass) % 12);
    bins(acc, PN_STYLE_CHORD)[rel]++;
    bins(acc, PN_STYLE_VOICES)[(n < PN_STYLE_VOICES_MAX ? n : PN_STYLE_VOICES_MAX) - 1]++;
    bins(acc, PN_STYLE_RANGE_SOPRANO)[soprano]++;
    bins(acc, PN_STYLE_RANGE_BASS)[bass]++;
    count_span(acc, PN_STYLE_SPAN_SOPRANO, &acc->span[0], soprano);
    count_span(acc, PN_STYLE_SPAN_BASS, &acc->span[3], bass);
    count_key_area(acc, s);
    if (n == 4) {
        count_span(acc, PN_STYLE_SPAN_ALTO, &acc->span[1], s->p[2]);
        count_span(acc, PN_STYLE_SPAN_TENOR, &acc->span[2], s->p[1]);
        const int sa = s->p[3] - s->p[2], at = s->p[2] - s->p[1], tb = s->p[1] - s->p[0];
        bins(acc, PN_STYLE_RANGE_ALTO)[s->p[2]]++;
        bins(acc, PN_STYLE_RANGE_TENOR)[s->p[1]]++;
        bins(acc, PN_STYLE_SPACING_SA)[clamp(sa, 0, PN_STYLE_SPACING_CLAMP)]++;
        bins(acc, PN_STYLE_SPACING_AT)[clamp(at, 0, PN_STYLE_SPACING_CLAMP)]++;
        bins(acc, PN_STYLE_SPACING_TB)[clamp(tb, 0, PN_STYLE_SPACING_CLAMP)]++;
        st->total[PN_STYLE_WIDE]++;
        st->hits[PN_STYLE_WIDE] += sa > 12 || at > 12;
        if (popcount12(rel) == 3) {
            /* the pitch class two of the four pitches share */
            int seen[12] = {0};
            for (int i = 0; i < 4; ++i)
                if (++seen[(s->p[i] - bass) % 12] == 2)
                    bins(acc, PN_STYLE_DOUBLING)[(s->p[i] - bass) % 12]++;
        }
    }
    const int tonic = acc->key.tonic;
    int64_t *tonal = bins(acc, PN_STYLE_TONAL);
    int64_t *by_mode =
        bins(acc, acc->key.mode == PN_MINOR ? PN_STYLE_TONAL_MINOR : PN_STYLE_TONAL_MAJOR);
    for (int i = 0; i < n; ++i) {
        const int degree = ((s->p[i] - tonic) % 12 + 12) % 12;
        tonal[degree]++;
        by_mode[degree]++;
    }
}

/* What happens between the previous sonority a and s. */
static void count_transition(pn_style_acc *acc, const sonority *a, const sonority *s, int root,
                             pn_style_chord_kind kind)
{
    pn_style_stats *st = &acc->stats;
    const int na = a->n, ns = s->n;
    count_motion(acc, PN_STYLE_SOPRANO_MOTION, a->p[na - 1], s->p[ns - 1]);
    count_motion(acc, PN_STYLE_BASS_MOTION, a->p[0], s->p[0]);
    if (na == 4 && ns == 4) {
        count_motion(acc, PN_STYLE_ALTO_MOTION, a->p[2], s->p[2]);
        count_motion(acc, PN_STYLE_TENOR_MOTION, a->p[1], s->p[1]);
    }
    if (na == ns && ns >= 2) {
        for (int u = ns - 1; u >= 1; --u)
            for (int l = u - 1; l >= 0; --l) {
                const int before = a->p[u] - a->p[l], after = s->p[u] - s->p[l];
                st->total[PN_STYLE_PARALLELS]++;
                st->total[PN_STYLE_PARALLEL_FIFTHS]++;
                st->total[PN_STYLE_PARALLEL_OCTAVES]++;
                if (before != after || s->p[u] == a->p[u])
                    continue;
                if (after % 12 == 7) {
                    st->hits[PN_STYLE_PARALLELS]++;
                    st->hits[PN_STYLE_PARALLEL_FIFTHS]++;
                } else if (after % 12 == 0) {
                    st->hits[PN_STYLE_PARALLELS]++;
                    st->hits[PN_STYLE_PARALLEL_OCTAVES]++;
                }
            }
    }
    if (na >= 2 && ns >= 2) {
        const int ds = s->p[ns - 1] - a->p[na - 1], db = s->p[0] - a->p[0];
        const int before = a->p[na - 1] - a->p[0], after = s->p[ns - 1] - s->p[0];
        st->total[PN_STYLE_HIDDEN]++;
        if (ds != 0 && db != 0 && (ds > 0) == (db > 0) && (after % 12 == 0 || after % 12 == 7) &&
            after != before && (ds > 2 || ds < -2))
            st->hits[PN_STYLE_HIDDEN]++;
    }
    if (acc->prev_root >= 0 && root >= 0 && root != acc->prev_root) {
        const int motion = (root - acc->prev_root + 12) % 12;
        bins(acc, PN_STYLE_ROOT_MOTION)[motion]++;
        st->total[PN_STYLE_AUTHENTIC]++;
        if (motion == 5 &&
            (acc->prev_kind == PN_STYLE_MAJOR_TRIAD ||
             acc->prev_kind == PN_STYLE_DOMINANT_SEVENTH) &&
            (kind == PN_STYLE_MAJOR_TRIAD || kind == PN_STYLE_MINOR_TRIAD))
            st->hits[PN_STYLE_AUTHENTIC]++;
    }
}

static void collect_gram(pn_style_acc *acc, uint64_t h)
{
    if (acc->grams_failed)
        return;
    if (acc->num_grams == acc->grams_capacity) {
        const int64_t cap = acc->grams_capacity ? 2 * acc->grams_capacity : 1024;
        uint64_t *g = realloc(acc->grams, (size_t)cap * sizeof *g);
        if (!g) {
            acc->grams_failed = 1;
            return;
        }
        acc->grams = g;
        acc->grams_capacity = cap;
    }
    acc->grams[acc->num_grams++] = h;
}

/* Pushes s into the window of the last four sonorities and counts the
 * 4-gram it completes. */
static void count_gram(pn_style_acc *acc, const sonority *s)
{
    if (acc->window_size == PN_STYLE_GRAM) {
        acc->window[acc->window_start] = *s;
        acc->window_start = (acc->window_start + 1) % PN_STYLE_GRAM;
    } else {
        acc->window[acc->window_size++] = *s;
    }
    if (acc->window_size < PN_STYLE_GRAM || (!acc->o.training && !acc->o.collect_grams))
        return;
    const uint8_t *p[PN_STYLE_GRAM];
    int n[PN_STYLE_GRAM];
    for (int i = 0; i < PN_STYLE_GRAM; ++i) {
        const sonority *w = &acc->window[(acc->window_start + i) % PN_STYLE_GRAM];
        p[i] = w->p;
        n[i] = w->n;
    }
    const uint64_t h = pn_style_gram_hash(p, n);
    if (acc->o.training) {
        acc->stats.total[PN_STYLE_COPY4]++;
        acc->stats.hits[PN_STYLE_COPY4] += pn_style_grams_contains(acc->o.training, h);
    }
    if (acc->o.collect_grams)
        collect_gram(acc, h);
}

static int compare_notes(const void *x, const void *y)
{
    const note *a = x, *b = y;
    if (a->voice != b->voice)
        return (a->voice > b->voice) - (a->voice < b->voice);
    return (a->pitch > b->pitch) - (a->pitch < b->pitch);
}

/* A labelled event: merged with the previous one when equal, else counted
 * for crossings. Returns 1 when it repeats the previous labelled event. */
static int labelled_event(pn_style_acc *acc, const int *pitch, const int *voice, int count)
{
    note *ev = acc->scratch;
    int n = 0;
    for (int i = 0; i < count; ++i)
        ev[n++] = (note){voice[i], pitch[i]};
    qsort(ev, (size_t)n, sizeof *ev, compare_notes);
    int m = 0;
    for (int i = 0; i < n; ++i)
        if (m == 0 || compare_notes(&ev[m - 1], &ev[i]) != 0)
            ev[m++] = ev[i];
    if (acc->has_labelled && m == acc->num_labelled &&
        memcmp(ev, acc->labelled, (size_t)m * sizeof *ev) == 0)
        return 1;
    memcpy(acc->labelled, ev, (size_t)m * sizeof *ev);
    acc->num_labelled = m;
    acc->has_labelled = 1;
    int voices = 0;
    for (int i = 0; i < m; ++i)
        voices += i == 0 || ev[i].voice != ev[i - 1].voice;
    if (voices < 2)
        return 0;
    acc->stats.total[PN_STYLE_CROSSING]++;
    /* a crossing: a voice sounds strictly above a voice numbered before it.
     * ev is sorted by voice, so compare each note with the lowest note of
     * every earlier voice: keep the running minimum. */
    int lowest_before = 128, crossing = 0, current_min = 128;
    for (int i = 0; i < m && !crossing; ++i) {
        if (i > 0 && ev[i].voice != ev[i - 1].voice) {
            lowest_before = current_min < lowest_before ? current_min : lowest_before;
            current_min = 128;
        }
        if (ev[i].pitch > lowest_before)
            crossing = 1;
        current_min = ev[i].pitch < current_min ? ev[i].pitch : current_min;
    }
    acc->stats.hits[PN_STYLE_CROSSING] += crossing;
    return 0;
}

pn_error pn_style_add_notes(pn_style_acc *acc, const int *pitch, const int *voice, int count,
                            pn_error_info *info)
{
    if (!acc || (!pitch && count > 0))
        return pn_fail(info, PN_ERR_INVALID, "style: NULL argument");
    if (!acc->in_piece)
        return pn_fail(info, PN_ERR_INVALID, "style: an event before the first piece began");
    if (count < 0 || count > PN_STYLE_MAX_NOTES)
        return pn_fail(info, PN_ERR_INVALID, "style: %d notes in one event (0..%d)", count,
                       PN_STYLE_MAX_NOTES);
    for (int i = 0; i < count; ++i) {
        if (pitch[i] < 0 || pitch[i] > 127)
            return pn_fail(info, PN_ERR_INVALID, "style: pitch %d is not a MIDI pitch 0..127",
                           pitch[i]);
        if (voice && voice[i] < 0)
            return pn_fail(info, PN_ERR_INVALID, "style: voice label %d is negative", voice[i]);
    }
    if (voice && labelled_event(acc, pitch, voice, count))
        return PN_OK;

    sonority s;
    unsigned char present[MAX_PITCHES] = {0};
    for (int i = 0; i < count; ++i)
        present[pitch[i]] = 1;
    s.n = 0;
    for (int p = 0; p < MAX_PITCHES; ++p)
        if (present[p])
            s.p[s.n++] = (uint8_t)p;
    if (s.n == 0)
        return PN_OK; /* a rest: skipped */
    if (acc->has_prev && acc->prev.n == s.n && memcmp(acc->prev.p, s.p, (size_t)s.n) == 0)
        return PN_OK; /* the same sonority again: merged */

    int root;
    const pn_style_chord_kind kind = pn_style_root(pc_mask(&s), s.p[0] % 12, &root);
    count_sonority(acc, &s);
    if (acc->has_prev)
        count_transition(acc, &acc->prev, &s, root, kind);
    count_gram(acc, &s);
    acc->prev = s;
    acc->prev_root = root;
    acc->prev_kind = kind;
    acc->has_prev = 1;
    return PN_OK;
}

pn_error pn_style_add_voices(pn_style_acc *acc, const int *pitch, int num_voices,
                             pn_error_info *info)
{
    if (!acc || !pitch)
        return pn_fail(info, PN_ERR_INVALID, "style: NULL argument");
    if (num_voices < 1 || num_voices > PN_STYLE_MAX_NOTES)
        return pn_fail(info, PN_ERR_INVALID, "style: %d voices (1..%d)", num_voices,
                       PN_STYLE_MAX_NOTES);
    int p[PN_STYLE_MAX_NOTES], v[PN_STYLE_MAX_NOTES], n = 0;
    for (int i = 0; i < num_voices; ++i) {
        if (pitch[i] == PN_REST)
            continue;
        p[n] = pitch[i];
        v[n++] = i;
    }
    return pn_style_add_notes(acc, p, v, n, info);
}

pn_error pn_style_add_corpus(pn_style_acc *acc, const pn_corpus *corpus, pn_error_info *info)
{
    if (!acc || !corpus)
        return pn_fail(info, PN_ERR_INVALID, "style: NULL argument");
    const int32_t k = corpus->num_voices;
    if (k < 1 || k > PN_STYLE_MAX_NOTES)
        return pn_fail(info, PN_ERR_INVALID, "style: a corpus of %d voices", (int)k);
    int pitch[PN_STYLE_MAX_NOTES];
    for (int32_t i = 0; i < corpus->num_pieces; ++i) {
        const pn_piece *piece = &corpus->pieces[i];
        if (piece->num_voices != k)
            return pn_fail(info, PN_ERR_INVALID, "style: piece %s has %d voices, not %d",
                           piece->name ? piece->name : "?", (int)piece->num_voices, (int)k);
        pn_style_begin_piece(acc, pn_key_find(piece));
        for (int32_t t = 0; t < piece->num_steps; ++t) {
            for (int32_t v = 0; v < k; ++v)
                pitch[v] = piece->pitch[(size_t)t * (size_t)k + (size_t)v];
            pn_error err = pn_style_add_voices(acc, pitch, k, info);
            if (err != PN_OK)
                return err;
        }
    }
    return PN_OK;
}

pn_error pn_style_acc_grams(const pn_style_acc *acc, pn_style_grams *out, pn_error_info *info)
{
    if (!acc || !out)
        return pn_fail(info, PN_ERR_INVALID, "style: NULL argument");
    out->count = 0;
    out->hash = NULL;
    if (acc->grams_failed)
        return pn_fail(info, PN_ERR_NOMEM, "style: out of memory while collecting 4-grams");
    uint64_t *h = malloc((size_t)acc->num_grams * sizeof *h + 1);
    if (!h)
        return pn_fail(info, PN_ERR_NOMEM, "style: out of memory");
    if (acc->num_grams > 0)
        memcpy(h, acc->grams, (size_t)acc->num_grams * sizeof *h);
    out->count = pn_style_grams_normalize(h, acc->num_grams);
    out->hash = h;
    return PN_OK;
}

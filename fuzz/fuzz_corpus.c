/* libFuzzer target for the chorale reader (docs/corpus.md).
 *
 * Any input must either fail with a parse error whose message names the
 * input, or give a corpus whose pitches are in range and that survives
 * sonority merging, key finding and a transposition round trip. Anything
 * else aborts, so the fuzzer reports it. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "parnassus/corpus.h"
#include "parnassus/key.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void require(int condition)
{
    if (!condition)
        abort();
}

static void check_corpus(const pn_corpus *c)
{
    require(c->num_voices == PN_CHORALE_VOICES);
    pn_error_info info;
    pn_corpus *son = NULL;
    require(pn_corpus_sonorities(c, &son, &info) == PN_OK);
    require(son->num_pieces == c->num_pieces);
    for (int32_t i = 0; i < c->num_pieces; ++i) {
        const pn_piece *p = &c->pieces[i];
        require(p->name != NULL && p->num_voices == PN_CHORALE_VOICES && p->duration == NULL);
        for (size_t j = 0; j < (size_t)p->num_steps * PN_CHORALE_VOICES; ++j)
            require(p->pitch[j] >= PN_REST);
        int64_t total = 0;
        for (int32_t t = 0; t < son->pieces[i].num_steps; ++t)
            total += son->pieces[i].duration[t];
        require(total == p->num_steps);
        pn_key a = pn_key_find(p), b = pn_key_find(&son->pieces[i]);
        require(a.tonic == b.tonic && a.mode == b.mode);
        require(a.score >= -1.0 - 1e-9 && a.score <= 1.0 + 1e-9);
    }
    pn_corpus_free(son);

    pn_corpus *t = NULL, *back = NULL;
    pn_transpose_report rep;
    require(pn_corpus_transpose_to(c, 0, 0, 127, &t, &rep, &info) == PN_OK);
    require(rep.num_kept == t->num_pieces);
    int32_t *inverse = malloc((size_t)t->num_pieces * sizeof *inverse + 1);
    require(inverse != NULL);
    int32_t n = 0;
    for (int32_t i = 0; i < rep.num_pieces; ++i) {
        require(rep.shift[i] >= -6 && rep.shift[i] <= 5);
        if (rep.bad_step[i] < 0)
            inverse[n++] = -rep.shift[i];
    }
    require(n == t->num_pieces);
    require(pn_corpus_transpose_by(t, inverse, 0, 127, &back, NULL, &info) == PN_OK);
    require(back->num_pieces == n);
    n = 0;
    for (int32_t i = 0; i < rep.num_pieces; ++i) {
        if (rep.bad_step[i] >= 0)
            continue;
        const pn_piece *p = &c->pieces[i], *q = &back->pieces[n++];
        require(strcmp(p->name, q->name) == 0 && p->num_steps == q->num_steps);
        require(memcmp(p->pitch, q->pitch, (size_t)p->num_steps * PN_CHORALE_VOICES) == 0);
    }
    free(inverse);
    pn_transpose_report_free(&rep);
    pn_corpus_free(t);
    pn_corpus_free(back);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* The whole file, then the "train" split alone. */
    const char *splits[2] = {NULL, "train"};
    for (int s = 0; s < 2; ++s) {
        pn_corpus *c = NULL;
        pn_error_info info;
        pn_error err =
            pn_corpus_parse_chorales("input", (const char *)data, size, splits[s], &c, &info);
        if (err != PN_OK) {
            require(c == NULL);
            require(err == PN_ERR_PARSE || err == PN_ERR_NOMEM);
            require(strncmp(info.message, "input: ", 7) == 0);
            continue;
        }
        require(c != NULL);
        check_corpus(c);
        pn_corpus_free(c);
    }
    return 0;
}

/* libFuzzer target for the statistics file reader (parnassus-style/1,
 * engine/music/src/style_io.c).
 *
 * Any input must either fail with a parse error whose message names the
 * input, or give statistics that write back and read again to the same
 * counts, with rates no larger than their totals, distances within [0, 1]
 * and an ascending training set. Anything else aborts. */
#define _POSIX_C_SOURCE 200809L /* open_memstream */

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parnassus/style.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void require(int condition)
{
    if (!condition)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    pn_style_file *f = NULL;
    pn_error_info info;
    pn_error err = pn_style_parse("input", (const char *)data, size, &f, &info);
    if (err != PN_OK) {
        require(f == NULL);
        require(err == PN_ERR_PARSE || err == PN_ERR_NOMEM);
        require(strncmp(info.message, "input:", 6) == 0);
        return 0;
    }
    require(f != NULL);
    const pn_style_stats *s = &f->stats;
    for (int r = 0; r < PN_STYLE_NUM_RATES; ++r) {
        require(s->hits[r] >= 0 && s->hits[r] <= s->total[r]);
        const double v = pn_style_rate_value(s, (pn_style_rate)r);
        require(s->total[r] == 0 ? isnan(v) : v >= 0.0 && v <= 1.0);
    }
    for (int d = 0; d < PN_STYLE_NUM_DISTS; ++d) {
        const double tv = pn_style_tv(s, s, (pn_style_dist)d);
        require(pn_style_dist_total(s, (pn_style_dist)d) == 0 ? isnan(tv) : tv == 0.0);
        const int32_t q = pn_style_quantile(s, (pn_style_dist)d, 0.5);
        const pn_style_dist_info *di = pn_style_dist_get((pn_style_dist)d);
        require(q == INT32_MIN || (q >= di->offset && q < di->offset + di->size));
    }
    for (int64_t i = 1; f->has_training && i < f->training.count; ++i)
        require(f->training.hash[i] > f->training.hash[i - 1]);

    /* write it and read it back: the same counts */
    char *buf = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&buf, &len);
    require(out != NULL);
    err = pn_style_write(f, out, "copy", &info);
    require(fclose(out) == 0);
    require(err == PN_OK);
    pn_style_file *g = NULL;
    err = pn_style_parse("copy", buf, len, &g, &info);
    require(err == PN_OK);
    require(memcmp(&f->stats, &g->stats, sizeof f->stats) == 0);
    require(f->has_training == g->has_training && f->training.count == g->training.count);
    require((f->name == NULL) == (g->name == NULL) && (!f->name || strcmp(f->name, g->name) == 0));
    pn_style_file_free(g);
    free(buf);
    pn_style_file_free(f);
    return 0;
}

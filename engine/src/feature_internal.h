/* Inside the feature module: what the row sums (feature_sums.c) read of a
 * table. Internal to the engine. */
#ifndef PN_FEATURE_INTERNAL_H
#define PN_FEATURE_INTERNAL_H

#include <stdint.h>

#include "parnassus/feature.h"

/* The lookup: cell = lut[sum over voices v of (value index of v) *
 * vstride(v)]; vstride is 0 for voices outside the window. */
const int32_t *pn_feature_table_lut(const pn_feature_table *t);
int64_t pn_feature_table_vstride(const pn_feature_table *t, int voice);

#endif

/* The built-in feature set of `parnassus learn`: the style core of the
 * chorale sets (docs/learning.md, docs/presets.md). Nine rules over the
 * chorale registers in C (soprano 57..83, alto 50..78, tenor 45..72, bass
 * 33..67: n = 28 * 30 * 29 * 36 = 876,960 sonorities): the chord above the
 * bass, every voice's pitch, the spacing of neighbouring voices and whether
 * the upper voices stand more than an octave apart. All nine are
 * conditioned on the same contexts, so their learned targets are marginals
 * of one distribution and agree: the selection keeps them all.
 * The contexts go from coarse to fine: the outer voices of the previous
 * sonority, then those with the alto and then with the tenor (each inner
 * voice's own line, which its rule and the spacings need exactly), then the
 * whole sonority. Every level knows the registers: a level of pitch classes
 * pooled the octaves of a voice, and the voices leapt between them
 * (docs/presets.md). Every voice's exact pitch makes every sonority a group
 * of its own (K' = n), which the solver's passes exploit (docs/engine.md).
 * Two constraints keep the voice leading clean, a third keeps the chords to
 * those the corpus sounds; lambda_p 3e-5 follows the rules closely enough
 * that the inner voices keep their lines.
 *
 * Why the third: the realization meets the chord rule's targets only
 * closely, and its few thousandths of error spread over the hundreds of
 * chords the chorales never sound (their targets are 0); drawn, those took
 * a quarter to a third of a percent of the music (docs/presets.md).
 *
 * Why a rule of its own for the wide spacings when the spacing rules already
 * give every interval: the realization meets a target in absolute terms, so
 * the rare intervals over an octave, each a few thousandths, came out 1.4 to
 * 2.1 times as often as their targets asked (docs/presets.md). One binary
 * feature puts them all in one cell whose error the solver does see. */
#include "default_features.h"

#include <stdlib.h>
#include <string.h>

#define CONTEXTS                                                                                   \
    "\"context\": \"w(4,1)\", \"smoothing\": 4,\n"                                                 \
    "      \"refinements\": [ { \"context\": \"w(4,2,1)\", \"smoothing\": 4 },\n"                  \
    "                       { \"context\": \"w(4,3,1)\", \"smoothing\": 4 },\n"                    \
    "                       { \"context\": \"w(1,2,3,4)\", \"smoothing\": 2 } ],\n"

/* The text in pieces, one per rule: ISO C promises string literals of
 * only 4095 characters. */
static const char *const pieces[] = {
    "{\n"
    "  \"format\": \"parnassus-rules/1\",\n"
    "  \"name\": \"chorale-features\",\n"
    "  \"description\": \"The style core of Parnassus's chorale sets: the chord above the bass, "
    "every voice's pitch and the spacing of neighbouring voices, each given the previous "
    "sonority's outer voices and, where the corpus knows them, those with the alto, those with "
    "the tenor and the whole previous sonority; no parallel or hidden fifths and octaves, and only "
    "chords the corpus sounds.\",\n"
    "  \"lambda_p\": 3e-05,\n"
    "  \"space\": { \"ranges\": [[57, 83], [50, 78], [45, 72], [33, 67]] },\n"
    "  \"rules\": [\n",
    "    { \"name\": \"chord\", \"feature\": \"sort(mod12(rel(w(4,3,2,1))))\",\n"
    "      " CONTEXTS
    "      \"description\": \"The chord above the bass: the upper voices' pitch classes measured "
    "from the bass, doublings included (its kind, inversion and doubling, not its root).\" },\n",
    "    { \"name\": \"soprano\", \"feature\": \"w(1)\",\n"
    "      " CONTEXTS "      \"description\": \"The soprano's pitch: the melody.\" },\n",
    "    { \"name\": \"alto\", \"feature\": \"w(2)\",\n"
    "      " CONTEXTS "      \"description\": \"The alto's pitch.\" },\n",
    "    { \"name\": \"tenor\", \"feature\": \"w(3)\",\n"
    "      " CONTEXTS "      \"description\": \"The tenor's pitch.\" },\n",
    "    { \"name\": \"bass\", \"feature\": \"w(4)\",\n"
    "      " CONTEXTS
    "      \"description\": \"The bass's pitch: the bass line and the key.\" },\n",
    "    { \"name\": \"soprano-alto\", \"feature\": \"diff(w(2,1))\",\n"
    "      " CONTEXTS
    "      \"description\": \"From the alto up to the soprano, in semitones (negative when they "
    "cross): the spacing of the upper voices.\" },\n",
    "    { \"name\": \"alto-tenor\", \"feature\": \"diff(w(3,2))\",\n"
    "      " CONTEXTS "      \"description\": \"From the tenor up to the alto.\" },\n",
    "    { \"name\": \"tenor-bass\", \"feature\": \"diff(w(4,3))\",\n"
    "      " CONTEXTS "      \"description\": \"From the bass up to the tenor.\" },\n",
    "    { \"name\": \"upper-spacing\", \"feature\": \"clamp(12,13,diff(w(3,2,1)))\",\n"
    "      " CONTEXTS
    "      \"description\": \"Whether the alto stands more than an octave above the tenor, and "
    "the soprano more than an octave above the alto (13), or not (12): the textbook's spacing "
    "rule, learned, so the upper voices spread as rarely as in the chorales.\" }\n",
    "  ],\n"
    "  \"constraints\": [\n",
    "    { \"name\": \"no-parallels\", \"kind\": \"parallel\", \"intervals\": [0, 7],\n"
    "      \"description\": \"No two voices move in parallel unisons, octaves or fifths.\" },\n",
    "    { \"name\": \"no-hidden-outer\", \"kind\": \"hidden\", \"intervals\": [0, 7], \"leap\": "
    "2,\n"
    "      \"voices\": [[1, 4]],\n"
    "      \"description\": \"Soprano and bass do not reach a fifth or an octave in similar "
    "motion with a leap in the soprano.\" },\n",
    "    { \"name\": \"known-chords\", \"kind\": \"known\", \"rule\": \"chord\",\n"
    "      \"description\": \"Only chords the chorales use: a chord above the bass, with its "
    "doublings, that the corpus never sounds is never drawn.\" }\n"
    "  ]\n"
    "}\n"};

char *pn_default_features_json(void)
{
    const size_t count = sizeof pieces / sizeof *pieces;
    size_t len = 0;
    for (size_t i = 0; i < count; ++i)
        len += strlen(pieces[i]);
    char *text = malloc(len + 1), *end = text;
    if (!text)
        return NULL;
    for (size_t i = 0; i < count; ++i) {
        const size_t n = strlen(pieces[i]);
        memcpy(end, pieces[i], n);
        end += n;
    }
    *end = '\0';
    return text;
}

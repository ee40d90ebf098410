/* What the worker owns: a rule set made ready to play (the de-overlapped
 * problem, the solver, each sonority's group) and the realizations the
 * audio thread draws from.
 *
 * A realization is immutable once handed to run(): an alias table over the
 * groups, and, for harmonization, a conditional table with one voice fixed.
 * Each model keeps two realization slots and builds the next realization in
 * the slot run() is not reading; that is safe because the plugin keeps at
 * most one request in flight (a slot is rebuilt only after run() has
 * switched to the other one). Everything here allocates and runs off the
 * audio thread, except reading a published realization. */
#ifndef PARNASSUS_PLUGIN_MODEL_H
#define PARNASSUS_PLUGIN_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "parnassus/generate.h"
#include "parnassus/rules.h"
#include "parnassus/sampler.h"
#include "parnassus/space.h"

/* The plugin plays sonorities of up to four voices (soprano .. bass). */
enum { PNP_MAX_VOICES = 4 };

typedef struct pnp_model pnp_model;

typedef struct pnp_knobs {
    double log2_lambda_w;
    double alpha;
} pnp_knobs;

typedef struct pnp_realization {
    pnp_model *model;
    pn_sampler *sampler;
    pn_conditional *given; /* draws with voice given_voice fixed, or NULL */
    int given_voice;       /* -1: none */
    pnp_knobs knobs;
    uint64_t context_serial;     /* the plugin's count of the context it realizes */
    int has_context;             /* the previous sonority this realization follows */
    int context[PNP_MAX_VOICES]; /* (draws keep the rule set's constraints from it) */
    int rules_selected;
    uint64_t selected_mask;    /* bit r: rule r kept (the first 64 rules) */
    char selected_names[1024]; /* the kept rules' names, ", "-separated */
    double weighted_error;
    double solve_ms;
} pnp_realization;

struct pnp_model {
    pn_rule_set *rules;
    char *text; /* the rule set's JSON (state saves it) */
    size_t text_len;
    char *path; /* the file it was read from; NULL when built in */
    pn_generator *gen;
    pnp_realization slot[2];
    int live; /* the slot built last */
};

/* Parses `text` (named `name` in errors; `path` is kept for the state, may
 * be NULL), builds everything and realizes the first step (no context) with
 * `knobs`, cold. On failure *out is NULL and info says why. */
pn_error pnp_model_create(const char *name, const char *text, size_t len, const char *path,
                          const pnp_knobs *knobs, pnp_model **out, pn_error_info *info);

/* Reads a rule-set file and creates its model. */
pn_error pnp_model_load(const char *path, const pnp_knobs *knobs, pnp_model **out,
                        pn_error_info *info);

void pnp_model_free(pnp_model *model);

/* Number of voices. */
int pnp_model_voices(const pnp_model *model);

/* The first realization (slot 0 right after create). */
pnp_realization *pnp_model_current(pnp_model *model);

/* Re-realizes with new knobs and a new context (`context`: the previous
 * sonority's pitches, NULL = start) into the slot run() is not reading,
 * with conditional tables for `given_voice` (-1: none). Returns that slot,
 * or NULL on failure (info says why; the live slot is untouched). */
pnp_realization *pnp_model_realize(pnp_model *model, const pnp_knobs *knobs, const int *context,
                                   uint64_t context_serial, int given_voice, pn_error_info *info);

/* Draws the next sonority from a published realization: with voice
 * `voice` fixed at `pitch` when voice >= 0 (falls back to a free draw with
 * that voice set to the pitch when the realization has no table for it or
 * gives the pitch no mass), conditioned on the rule set's constraints from
 * the realization's context (at most PN_CONSTRAINT_TRIES draws). Fills
 * pitches[k]; returns 0 when nothing could be drawn. Bounded time,
 * allocation-free. */
int pnp_realization_draw(const pnp_realization *r, pn_rng *rng, int voice, int pitch, int *pitches);

#endif

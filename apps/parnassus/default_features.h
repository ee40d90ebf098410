/* The built-in feature set of `parnassus learn` (docs/learning.md): a
 * "parnassus-rules/1" feature file (rules without targets) that learning
 * fills in when no --features file is given. */
#ifndef PARNASSUS_CLI_DEFAULT_FEATURES_H
#define PARNASSUS_CLI_DEFAULT_FEATURES_H

/* The JSON text, read with PN_RULES_TARGETS_OPTIONAL: a new string (free
 * it), or NULL when out of memory. */
char *pn_default_features_json(void);

/* The name used for it in messages. */
#define PN_DEFAULT_FEATURES_NAME "(built-in features)"

#endif

/* parnassus-bench: the options and the parts of the table
 * (docs/benchmarks.md). Each part appends its rows to the table. */
#ifndef PARNASSUS_BENCH_H
#define PARNASSUS_BENCH_H

#include "bench_support.h"

enum {
    DEFAULT_RUNS = 5,
    QUICK_RUNS = 3,
    MAX_RULE_SETS = 2, /* the rules part: the two default sets, or --rules */
};

typedef struct options {
    int quick;
    int markdown;
    int run_a;
    int run_music;
    int run_rules;
    int runs; /* per row; warm rows run twice as many (both directions) */
    /* the rule sets of the "rules" part, each in its own rows: --rules FILE,
     * or the defaults presets/chorale-major.json and
     * presets/chorale-minor.json */
    const char *rules[MAX_RULE_SETS];
    int num_rule_sets;
    int rules_given; /* named with --rules (else the defaults) */
} options;

/* bench_engine.c: cases A1 and A2 of the paper. */
void bench_artificial_cases(table *t, const options *o);
/* bench_engine.c: the music-sized generated instance. */
void bench_music(table *t, const options *o);
/* bench_rules.c: the rule-set files of o->rules, one after the other. */
void bench_rules(table *t, const options *o);

#endif

/* parnassus-bench: the options and the parts of the table
 * (docs/benchmarks.md). Each part appends its rows to the table. */
#ifndef PARNASSUS_BENCH_H
#define PARNASSUS_BENCH_H

#include "bench_support.h"

enum {
    DEFAULT_RUNS = 5,
    QUICK_RUNS = 3,
};

typedef struct options {
    int quick;
    int markdown;
    int run_a;
    int run_music;
    int run_rules;
    int runs;          /* per row; warm rows run twice as many (both directions) */
    const char *rules; /* the rule set of the "rules" part */
    int rules_given;   /* named with --rules (else the default) */
} options;

/* bench_engine.c: cases A1 and A2 of the paper. */
void bench_artificial_cases(table *t, const options *o);
/* bench_engine.c: the music-sized generated instance. */
void bench_music(table *t, const options *o);
/* bench_rules.c: a rule-set file (--rules). */
void bench_rules(table *t, const options *o);

#endif

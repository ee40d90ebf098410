/* parnassus-bench: wall-clock figures of the engine (docs/benchmarks.md).
 *
 *   parnassus-bench [--quick] [--markdown] [--only a|music|rules] [--runs N]
 *                   [--rules FILE]
 *
 * Cases A1/A2 (cold solve, lambda_w path), the music-sized instance
 * (de-overlap of the full sonority space, solver setup, cold and warm
 * realizations, memory) and rule-set files (reading, de-overlap, cold and
 * warm realizations, sampling throughput): by default
 * presets/chorale-major.json and presets/chorale-minor.json, each in
 * its own rows, or the one set of --rules. Every row gives the median, min
 * and max over its runs, the target and whether it is met, and the
 * iteration counts and KKT residuals of the solves behind it. Progress goes
 * to stderr, the table to stdout. The exit status is 0 whether targets are
 * met or not; 1 means an engine call failed, 2 bad usage. */
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"

#ifndef PN_BENCH_DEFAULT_RULES
#define PN_BENCH_DEFAULT_RULES "presets/chorale-major.json"
#endif

/* The other mode's set next to the default one: PN_BENCH_DEFAULT_RULES
 * with its file name replaced by SECOND_RULES_FILE. */
static const char SECOND_RULES_FILE[] = "chorale-minor.json";

static const char *second_rules_path(void)
{
    static char path[4096];
    const char *def = PN_BENCH_DEFAULT_RULES;
    const char *slash = strrchr(def, '/');
    const int dir = slash ? (int)(slash - def + 1) : 0;
    snprintf(path, sizeof path, "%.*s%s", dir, def, SECOND_RULES_FILE);
    return path;
}

static void usage(FILE *f)
{
    fprintf(f,
            "usage: parnassus-bench [--quick] [--markdown] [--only a|music|rules] [--runs N]\n"
            "                       [--rules FILE]\n"
            "  --quick        %d runs per row (1 for the slow rule-set solves), skip the\n"
            "                 default-search music solve\n"
            "  --markdown     print the table in Markdown\n"
            "  --only PART    one part: a (cases A1 and A2), music (the music-sized\n"
            "                 instance) or rules (the rule sets)\n"
            "  --runs N       runs per row (default %d; warm rows run 2N)\n"
            "  --rules FILE   the one rule set of the rules part (default: both\n"
            "                 %s\n"
            "                 and %s, each in its own rows)\n",
            QUICK_RUNS, DEFAULT_RUNS, PN_BENCH_DEFAULT_RULES, second_rules_path());
}

static void parse_options(int argc, char **argv, options *o)
{
    memset(o, 0, sizeof *o);
    o->run_a = o->run_music = o->run_rules = 1;
    o->rules[0] = PN_BENCH_DEFAULT_RULES;
    o->rules[1] = second_rules_path();
    o->num_rule_sets = 2;
    int runs = 0;
    for (int i = 1; i < argc; ++i) {
        const char *a = argv[i];
        if (strcmp(a, "--quick") == 0) {
            o->quick = 1;
        } else if (strcmp(a, "--markdown") == 0) {
            o->markdown = 1;
        } else if (strcmp(a, "--only") == 0 && i + 1 < argc) {
            const char *v = argv[++i];
            if (strcmp(v, "a") == 0) {
                o->run_music = o->run_rules = 0;
            } else if (strcmp(v, "music") == 0) {
                o->run_a = o->run_rules = 0;
            } else if (strcmp(v, "rules") == 0) {
                o->run_a = o->run_music = 0;
            } else {
                fprintf(stderr, "parnassus-bench: --only takes 'a', 'music' or 'rules', not '%s'\n",
                        v);
                exit(2);
            }
        } else if (strcmp(a, "--rules") == 0 && i + 1 < argc) {
            o->rules[0] = argv[++i];
            o->rules[1] = NULL;
            o->num_rule_sets = 1;
            o->rules_given = 1;
        } else if (strcmp(a, "--runs") == 0 && i + 1 < argc) {
            char *end = NULL;
            long v = strtol(argv[++i], &end, 10);
            if (!end || *end || v < 1 || v > MAX_RUNS / 2) {
                fprintf(stderr, "parnassus-bench: --runs takes 1..%d\n", MAX_RUNS / 2);
                exit(2);
            }
            runs = (int)v;
        } else if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            usage(stdout);
            exit(0);
        } else {
            usage(stderr);
            exit(2);
        }
    }
    o->runs = runs ? runs : (o->quick ? QUICK_RUNS : DEFAULT_RUNS);
}

int main(int argc, char **argv)
{
    options o;
    parse_options(argc, argv, &o);
    static table t;
    char load_start[64], load_end[64];
    load_average(load_start, sizeof load_start);
    double t0 = now(), c0 = cpu_now() + children_cpu();
    if (o.run_a)
        bench_artificial_cases(&t, &o);
    if (o.run_music)
        bench_music(&t, &o);
    if (o.run_rules)
        bench_rules(&t, &o);
    samples peak = {0};
    samples_add(&peak, peak_mib());
    row *r =
        add_row(&t, "all", "peak resident size (ru_maxrss)", UNIT_MIB, &peak, GOAL_BELOW, 1536.0);
    snprintf(r->details, sizeof r->details, "after everything above, this process");
    load_average(load_end, sizeof load_end);
    double total = now() - t0, cpu = cpu_now() + children_cpu() - c0;

    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    if (o.markdown) {
        print_markdown(&t);
        putchar('\n');
    } else {
        print_text(&t);
        putchar('\n');
    }
    /* CPU / wall well below 1 means the process waited for a core */
    printf("%ld CPUs online; load average (1, 5, 15 min) %s at the start, %s at the end; "
           "%.0f s wall, %.0f s CPU (ratio %.2f) in all.\n",
           cpus, load_start, load_end, total, cpu, total > 0.0 ? cpu / total : 0.0);
    print_blas();
    int missed = rows_missed(&t);
    if (missed)
        printf("%d target%s not met.\n", missed, missed == 1 ? "" : "s");
    else
        printf("All targets met.\n");
    return 0;
}

/* parnassus path: the lambda_w solution path (docs/cli.md, paper Fig. 2). */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json_out.h"
#include "options.h"
#include "parnassus/instance_io.h"
#include "parnassus/path.h"
#include "plot.h"
#include "progress.h"
#include "timer.h"

static const char command[] = "path";

enum {
    OPT_ALPHA,
    OPT_LAMBDA_P,
    OPT_SEED,
    OPT_JSON,
    OPT_CSV,
    OPT_PLOT,
    OPT_CONTEXT,
    OPT_MAX_MEMORY,
    NUM_OPTIONS
};

static const pn_cli_option path_options[NUM_OPTIONS] = {
    [OPT_ALPHA] = {"alpha", 1},     [OPT_LAMBDA_P] = {"lambda-p", 1},
    [OPT_SEED] = {"seed", 1},       [OPT_JSON] = {"json", 0},
    [OPT_CSV] = {"csv", 1},         [OPT_PLOT] = {"plot", 1},
    [OPT_CONTEXT] = {"context", 1}, [OPT_MAX_MEMORY] = {"max-memory", 1},
};

static void print_help(const pn_path_settings *d)
{
    printf("usage: parnassus path FILE [options]\n"
           "\n"
           "Computes the lambda_w solution path of the rule system in FILE (an\n"
           "instance file, full or grouped form, or a parnassus-rules/1 rule set):\n"
           "log2(lambda_w) on a grid of step %g,\n"
           "grown down from 0 until w* stops being group selective or stops changing,\n"
           "and up until the group norms converge, within [%g, %g].\n"
           "\n"
           "options:\n"
           "  --alpha A       group-lasso share of the penalty on w, in [0, 1] (default %g)\n"
           "  --lambda-p P    spread penalty on p, >= 0 (default %g)\n"
           "  --seed S        seed of the random restarts, 0 .. 2^63-1 (default %" PRIu64 ")\n"
           "  --json          print a JSON document instead of the table\n"
           "  --csv OUT       write one CSV row per point to OUT\n"
           "  --plot OUT      draw the path (group norms and weighted error) to OUT,\n"
           "                  a .png or .svg file of 900 x 600 pixels\n"
           "  --context P1,..,Pk  the previous sonority, for a rule set: MIDI pitches\n"
           "                  or R, voice 1 (soprano) first; without it the first-step\n"
           "                  (back-off) targets\n" PN_CLI_MAX_MEMORY_HELP
           "  -h, --help      show this help\n"
           "\n"
           "Options take their value as '--opt VALUE' or '--opt=VALUE'.\n"
           "Exit status: 0 success, 1 failure, 2 bad usage or bad input file.\n",
           d->step, d->floor, d->ceiling, d->solver.alpha, d->solver.lambda_p, d->solver.seed);
}

typedef struct path_request {
    const char *file;
    pn_path_settings settings;
    int json;
    const char *csv;
    const char *plot;
    const char *context;
    const char *lambda_p; /* --lambda-p as given, or NULL */
} path_request;

/* Fills req from the command line; returns PN_EXIT_OK, PN_EXIT_USAGE, or
 * -1 when the help was printed. */
static int parse_request(int argc, char **argv, path_request *req)
{
    pn_cli_args a;
    pn_settings *s = &req->settings.solver;
    pn_path_settings_default(&req->settings);
    int rc = pn_cli_parse(command, path_options, NUM_OPTIONS, 1, argc, argv, &a);
    if (rc != PN_EXIT_OK)
        return rc;
    if (a.help) {
        print_help(&req->settings);
        return -1;
    }
    if (a.num_args < 1)
        return pn_cli_usage_error(command, "missing FILE");
    req->file = a.arg[0];
    req->json = a.value[OPT_JSON] != NULL;
    req->csv = a.value[OPT_CSV];
    req->plot = a.value[OPT_PLOT];
    req->context = a.value[OPT_CONTEXT];
    if (req->plot && !pn_plot_format_known(req->plot))
        return pn_cli_usage_error(command, "--plot: '%s' must end in .png or .svg", req->plot);
    int context[PN_SPACE_MAX_VOICES], count;
    if (req->context && pn_cli_parse_context(command, req->context, context, &count) != PN_EXIT_OK)
        return PN_EXIT_USAGE;
    req->lambda_p = a.value[OPT_LAMBDA_P];
    if (pn_cli_knobs(command, NULL, a.value[OPT_ALPHA], a.value[OPT_LAMBDA_P], a.value[OPT_SEED],
                     s) != PN_EXIT_OK)
        return PN_EXIT_USAGE;
    if (pn_cli_check_output(command, "csv", req->csv) != PN_EXIT_OK ||
        pn_cli_check_output(command, "plot", req->plot) != PN_EXIT_OK)
        return PN_EXIT_USAGE;
    return pn_cli_max_memory(command, a.value[OPT_MAX_MEMORY], &s->max_memory);
}

/* A CSV header field "<prefix><name>", quoted when the name needs it. */
static void csv_name(FILE *f, const char *prefix, const char *name)
{
    if (!strpbrk(name, ",\"")) {
        fprintf(f, ",%s%s", prefix, name);
        return;
    }
    fprintf(f, ",\"%s", prefix);
    for (const char *c = name; *c; ++c) {
        if (*c == '"')
            fputc('"', f);
        fputc(*c, f);
    }
    fputc('"', f);
}

static int write_csv(const char *path, const pn_problem *prob, const pn_path *p)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "parnassus path: %s: cannot open: %s\n", path, strerror(errno));
        return -1;
    }
    const int K = p->num_rules;
    fputs("log2_lambda_w,objective,weighted_error,num_selected,group_selective", f);
    for (int r = 0; r < K; ++r)
        csv_name(f, "norm_", prob->rule_name[r]);
    for (int r = 0; r < K; ++r)
        csv_name(f, "error_", prob->rule_name[r]);
    fputc('\n', f);
    for (int i = 0; i < p->num_points; ++i) {
        const pn_path_point *pt = &p->points[i];
        fprintf(f, "%.17g,%.17g,%.17g,%d,%d", pt->log2_lambda_w, pt->objective, pt->weighted_error,
                pt->num_selected, pt->group_selective ? 1 : 0);
        for (int r = 0; r < K; ++r)
            fprintf(f, ",%.17g", pt->group_norm[r]);
        for (int r = 0; r < K; ++r)
            fprintf(f, ",%.17g", pt->rule_error[r]);
        fputc('\n', f);
    }
    int bad = ferror(f);
    if (fclose(f) != 0 || bad) {
        fprintf(stderr, "parnassus path: %s: cannot write: %s\n", path, strerror(errno));
        remove(path);
        return -1;
    }
    return 0;
}

static int write_plot(const char *out, const char *file, const pn_path *p, const pn_cli_problem *lp)
{
    const pn_problem *prob = lp->prob;
    const size_t P = (size_t)p->num_points, K = (size_t)p->num_rules;
    double *x = malloc(P * sizeof *x), *err = malloc(P * sizeof *err);
    double *norm = malloc(P * K * sizeof *norm);
    int rc = -1;
    pn_error_info info = {PN_ERR_NOMEM, "out of memory"};
    if (x && err && norm) {
        for (size_t i = 0; i < P; ++i) {
            x[i] = p->points[i].log2_lambda_w;
            err[i] = p->points[i].weighted_error;
            memcpy(norm + i * K, p->points[i].group_norm, K * sizeof *norm);
        }
        char title[512];
        char ctx[PN_SPACE_MAX_VOICES * 5 + 16] = "";
        if (lp->has_context) {
            memcpy(ctx, ", context ", 11);
            pn_cli_format_pitches(lp->context, lp->rules->space.num_voices, ctx + 10,
                                  sizeof ctx - 10);
        }
        snprintf(title, sizeof title, "%s \xE2\x80\x94 \xCE\xB1 = %g, \xCE\xBBp = %g%s",
                 pn_cli_basename(file), p->alpha, p->lambda_p, ctx);
        if (pn_plot_path(out, title, p->num_rules, (const char *const *)prob->rule_name,
                         p->num_points, x, norm, err, &info) == PN_OK)
            rc = 0;
    }
    if (rc != 0)
        fprintf(stderr, "parnassus path: %s\n", info.message);
    free(x);
    free(err);
    free(norm);
    return rc;
}

static void print_table(const char *file, const pn_cli_problem *lp, const pn_path *p,
                        double seconds)
{
    printf("path of %s: alpha %g, lambda_p %g, %d points, %d alternations\n", file, p->alpha,
           p->lambda_p, p->num_points, p->total_alternations);
    if (lp->rules) {
        char ctx[PN_SPACE_MAX_VOICES * 5 + 1];
        pn_cli_format_pitches(lp->context, lp->rules->space.num_voices, ctx, sizeof ctx);
        printf("rule set %s, context %s\n", lp->rules->name,
               lp->has_context ? ctx : "none (first-step targets)");
        for (int r = 0; r < p->num_rules; ++r) {
            char feature[PN_FEATURE_TEXT_MAX];
            pn_feature_to_string(lp->rules->rules[r].feature, feature, sizeof feature);
            printf("  rule %d: %s = %s\n", r + 1, lp->rules->rules[r].name, feature);
        }
    }
    putchar('\n');
    printf("%14s  %14s  %8s  %9s  %s\n", "log2(lambda_w)", "weighted error", "selected",
           "selective", "rules");
    for (int i = 0; i < p->num_points; ++i) {
        const pn_path_point *pt = &p->points[i];
        printf("%14.2f  %14.6g  %8d  %-9s  ", pt->log2_lambda_w, pt->weighted_error,
               pt->num_selected, pt->group_selective ? "yes" : "no");
        int any = 0;
        for (int r = 0; r < p->num_rules; ++r)
            if (pt->selected[r])
                printf(any++ ? ",%d" : "%d", r + 1);
        puts(any ? "" : "-");
    }
    printf("\nseconds %.6f\n", seconds);
}

/* Computes the path and writes everything asked for. */
static int run(const path_request *req, const pn_cli_problem *lp, pn_cli_progress *progress)
{
    const pn_problem *prob = lp->prob;
    pn_error_info err = {0};
    pn_path *path = NULL;
    double t0 = pn_timer_now();
    pn_error code = pn_path_compute(prob, &req->settings, &path, &err);
    double seconds = pn_timer_now() - t0;
    const int interrupted = pn_cli_progress_end(progress);
    if (code != PN_OK || interrupted) {
        pn_path_free(path);
        return code != PN_OK ? pn_cli_engine_error(command, NULL, &err)
                             : pn_cli_interrupted(command);
    }
    int rc = PN_EXIT_OK;
    for (int i = 0; i < path->num_points && rc == PN_EXIT_OK; ++i)
        if (!isfinite(path->points[i].objective)) {
            fprintf(stderr,
                    "parnassus path: %s: the realization at log2(lambda_w) %g broke down: the "
                    "objective is not a number\n",
                    req->file, path->points[i].log2_lambda_w);
            rc = PN_EXIT_FAILURE;
        }
    if (rc == PN_EXIT_OK && req->csv && write_csv(req->csv, prob, path) != 0)
        rc = PN_EXIT_FAILURE;
    if (rc == PN_EXIT_OK && req->plot && write_plot(req->plot, req->file, path, lp) != 0)
        rc = PN_EXIT_FAILURE;
    if (rc == PN_EXIT_OK) {
        pn_json_instance in = {req->file, lp->form, prob, lp->rules,
                               lp->has_context ? lp->context : NULL};
        if (!req->json)
            print_table(req->file, lp, path, seconds);
        else if (pn_json_write_path(stdout, &in, &req->settings.solver, path, seconds) != 0)
            rc = PN_EXIT_FAILURE;
    }
    pn_path_free(path);
    return rc;
}

int pn_cmd_path(int argc, char **argv)
{
    path_request req;
    int rc = parse_request(argc, argv, &req);
    if (rc != PN_EXIT_OK)
        return rc < 0 ? PN_EXIT_OK : rc;
    /* from here a Ctrl-C stops the path (at once if a solve is running) */
    pn_cli_progress progress;
    pn_cli_progress_begin(&progress, command, &req.settings.solver);
    pn_cli_problem lp;
    rc = pn_cli_load_problem(command, req.file, req.context, req.settings.solver.max_memory, &lp);
    if (rc == PN_EXIT_OK) {
        pn_cli_rules_lambda_p(lp.rules, req.lambda_p, &req.settings.solver);
        rc = run(&req, &lp, &progress);
        pn_cli_problem_free(&lp);
    }
    pn_cli_progress_end(&progress);
    return rc;
}

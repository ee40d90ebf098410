/* parnassus solve: one realization at given knobs (docs/cli.md). */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json_out.h"
#include "options.h"
#include "parnassus/instance_io.h"
#include "parnassus/rules.h"
#include "parnassus/solver.h"
#include "plot.h"
#include "progress.h"

static const char command[] = "solve";

enum {
    OPT_LOG2_LW,
    OPT_ALPHA,
    OPT_LAMBDA_P,
    OPT_SEED,
    OPT_JSON,
    OPT_SOLUTION,
    OPT_CONTEXT,
    OPT_PLOT_ERRORS,
    OPT_MAX_MEMORY,
    NUM_OPTIONS
};

/* The non-selective realization of --plot-errors: the lambda_w -> infinity
 * end of the path, where every rule component has the same weight 1/m
 * (Theorem 1; the paper's Fig. 4 compares with this "all rules, equal
 * importance" realization). At alpha = 0 the w-step gives
 * w_i = 1/m - (e_i - mean e) / (2 lambda_w), so at lambda_w = 2^24 (the top
 * of the path's grid) every weight is within 3e-8 of 1/m, while the
 * solver's KKT test still works at that scale. */
#define NONSELECTIVE_LOG2_LW 24.0
#define NONSELECTIVE_ALPHA   0.0

static const pn_cli_option solve_options[NUM_OPTIONS] = {
    [OPT_LOG2_LW] = {"log2-lambda-w", 1},
    [OPT_ALPHA] = {"alpha", 1},
    [OPT_LAMBDA_P] = {"lambda-p", 1},
    [OPT_SEED] = {"seed", 1},
    [OPT_JSON] = {"json", 0},
    [OPT_SOLUTION] = {"solution", 1},
    [OPT_CONTEXT] = {"context", 1},
    [OPT_PLOT_ERRORS] = {"plot-errors", 1},
    [OPT_MAX_MEMORY] = {"max-memory", 1},
};

static void print_help(const pn_settings *d)
{
    printf("usage: parnassus solve FILE [options]\n"
           "\n"
           "Realizes the rule system in FILE (an instance file, full or grouped form,\n"
           "or a parnassus-rules/1 rule set) at one setting of the style knobs and\n"
           "reports which rules it keeps.\n"
           "\n"
           "options:\n"
           "  --log2-lambda-w X  log2 of lambda_w, within [-60, 60] (default %g)\n"
           "  --alpha A          group-lasso share of the penalty on w, in [0, 1] (default %g)\n"
           "  --lambda-p P       spread penalty on p, >= 0 (default %g)\n"
           "  --seed S           seed of the random restarts, 0 .. 2^63-1 (default %" PRIu64 ")\n"
           "  --json             print a JSON document instead of the report\n"
           "  --solution OUT     write q* and w* to OUT as plain text\n"
           "  --context P1,..,Pk the previous sonority, for a rule set: MIDI pitches or R,\n"
           "                     voice 1 (soprano) first; without it the first-step\n"
           "                     (back-off) targets\n"
           "  --plot-errors OUT  draw each rule's error |A_r p - b_r|_2 of this realization\n"
           "                     next to the non-selective one (all rules, equal weights)\n"
           "                     to OUT, a .png or .svg file (the paper's Fig. "
           "4)\n" PN_CLI_MAX_MEMORY_HELP "  -h, --help         show this help\n"
           "\n"
           "Options take their value as '--opt VALUE' or '--opt=VALUE'.\n"
           "Exit status: 0 success, 1 failure, 2 bad usage or bad input file.\n",
           d->log2_lambda_w, d->alpha, d->lambda_p, d->seed);
}

typedef struct solve_request {
    const char *file;
    pn_settings settings;
    int json;
    const char *solution;
    const char *context;
    const char *plot_errors;
    const char *lambda_p; /* --lambda-p as given, or NULL */
} solve_request;

/* Fills req from the command line; returns PN_EXIT_OK, PN_EXIT_USAGE, or
 * -1 when help was printed. */
static int parse_request(int argc, char **argv, solve_request *req)
{
    pn_cli_args a;
    pn_settings *s = &req->settings;
    pn_settings_default(s);
    int rc = pn_cli_parse(command, solve_options, NUM_OPTIONS, 1, argc, argv, &a);
    if (rc != PN_EXIT_OK)
        return rc;
    if (a.help) {
        print_help(s);
        return -1;
    }
    if (a.num_args < 1)
        return pn_cli_usage_error(command, "missing FILE");
    req->file = a.arg[0];
    req->json = a.value[OPT_JSON] != NULL;
    req->solution = a.value[OPT_SOLUTION];
    req->context = a.value[OPT_CONTEXT];
    req->plot_errors = a.value[OPT_PLOT_ERRORS];
    if (req->plot_errors && !pn_plot_format_known(req->plot_errors))
        return pn_cli_usage_error(command, "--plot-errors: '%s' must end in .png or .svg",
                                  req->plot_errors);
    int context[PN_SPACE_MAX_VOICES], count;
    if (req->context && pn_cli_parse_context(command, req->context, context, &count) != PN_EXIT_OK)
        return PN_EXIT_USAGE;
    req->lambda_p = a.value[OPT_LAMBDA_P];
    if (pn_cli_knobs(command, a.value[OPT_LOG2_LW], a.value[OPT_ALPHA], a.value[OPT_LAMBDA_P],
                     a.value[OPT_SEED], s) != PN_EXIT_OK)
        return PN_EXIT_USAGE;
    if (pn_cli_check_output(command, "solution", req->solution) != PN_EXIT_OK ||
        pn_cli_check_output(command, "plot-errors", req->plot_errors) != PN_EXIT_OK)
        return PN_EXIT_USAGE;
    return pn_cli_max_memory(command, a.value[OPT_MAX_MEMORY], &s->max_memory);
}

/* q* (one value per group) then w* (one per rule component), each after a
 * comment line; the file is removed if it cannot be completed. */
static int write_solution(const char *path, const pn_problem *prob, const pn_solver *solver)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "parnassus solve: %s: cannot open: %s\n", path, strerror(errno));
        return -1;
    }
    const double *q = pn_solver_q(solver), *w = pn_solver_w(solver);
    fprintf(f, "# q: %" PRId64 " values, one per group in the file's group order\n",
            prob->num_groups);
    for (int64_t k = 0; k < prob->num_groups; ++k)
        fprintf(f, "%.17g\n", q[k]);
    fprintf(f, "# w: %" PRId32 " values, one per rule component\n", prob->num_rows);
    for (int32_t i = 0; i < prob->num_rows; ++i)
        fprintf(f, "%.17g\n", w[i]);
    int bad = ferror(f);
    if (fclose(f) != 0 || bad) {
        fprintf(stderr, "parnassus solve: %s: cannot write: %s\n", path, strerror(errno));
        remove(path);
        return -1;
    }
    return 0;
}

typedef struct rule_stats {
    double *norm, *error;
    unsigned char *selected;
    double *baseline_error; /* --plot-errors: the non-selective realization's errors */
} rule_stats;

static void print_report(const solve_request *req, const pn_cli_problem *lp, const pn_info *info,
                         const rule_stats *st, double seconds)
{
    const pn_problem *prob = lp->prob;
    const pn_settings *s = &req->settings;
    const pn_rule_set *rs = lp->rules;
    printf("status          %s\n", pn_status_name(info->status));
    printf("objective       %.10g\n", info->objective);
    printf("weighted error  %.10g\n", info->weighted_error);
    printf("alternations    %d\n", info->alternations);
    printf("starts          %d\n", info->starts);
    printf("seconds         %.6f\n", seconds);
    printf("KKT residuals   p %.3g, w %.3g\n", info->p_kkt, info->w_kkt);
    printf("settings        log2(lambda_w) %g, alpha %g, lambda_p %g, seed %" PRIu64 "\n",
           s->log2_lambda_w, s->alpha, s->lambda_p, s->seed);
    if (rs) {
        char ctx[PN_SPACE_MAX_VOICES * 5 + 1];
        pn_cli_format_pitches(lp->context, rs->space.num_voices, ctx, sizeof ctx);
        printf("rule set        %s: %d voices, %" PRId64 " sonorities, %" PRId64 " groups\n",
               rs->name, rs->space.num_voices, prob->n, prob->num_groups);
        if (lp->has_context)
            printf("context         %s\n", ctx);
        else
            printf("context         none (first-step targets)\n");
    }
    printf("selected        %d of %" PRId32 " rules (%s)\n\n", info->num_selected, prob->num_rules,
           info->group_selective ? "group selective" : "not group selective");
    int width = 4, fwidth = 7;
    char feature[PN_FEATURE_TEXT_MAX];
    for (int32_t r = 0; r < prob->num_rules; ++r) {
        int len = (int)strlen(prob->rule_name[r]);
        width = len > width ? (len < 40 ? len : 40) : width;
        if (rs) {
            len = (int)pn_feature_to_string(rs->rules[r].feature, feature, sizeof feature);
            fwidth = len > fwidth ? (len < 40 ? len : 40) : fwidth;
        }
    }
    printf("%4s  %-*s  ", "rule", width, "name");
    if (rs)
        printf("%-*s  ", fwidth, "feature");
    printf("%-8s  %-14s  ", "selected", "|w_r|_2");
    if (st->baseline_error)
        printf("%-15s  %s\n", "|A_r p - b_r|_2", "non-selective");
    else
        puts("|A_r p - b_r|_2");
    for (int32_t r = 0; r < prob->num_rules; ++r) {
        printf("%4" PRId32 "  %-*s  ", r + 1, width, prob->rule_name[r]);
        if (rs) {
            pn_feature_to_string(rs->rules[r].feature, feature, sizeof feature);
            printf("%-*s  ", fwidth, feature);
        }
        printf("%-8s  %-14.6g  ", st->selected[r] ? "yes" : "no", st->norm[r]);
        if (st->baseline_error)
            printf("%-15.6g  %.6g\n", st->error[r], st->baseline_error[r]);
        else
            printf("%.6g\n", st->error[r]);
    }
}

/* The non-selective realization (see NONSELECTIVE_LOG2_LW) and its errors. */
static int nonselective_errors(const pn_problem *prob, const pn_settings *given, double *error)
{
    pn_settings s = *given;
    s.log2_lambda_w = NONSELECTIVE_LOG2_LW;
    s.alpha = NONSELECTIVE_ALPHA;
    s.restarts = 0; /* every start ends at the same uniform weights */
    s.grow_seeds = 0;
    pn_error_info err = {0};
    pn_solver *solver = NULL;
    pn_info info;
    size_t K = (size_t)prob->num_rules;
    double *norm = malloc(K * sizeof *norm);
    unsigned char *selected = malloc(K);
    int rc = -1;
    if (!norm || !selected)
        fprintf(stderr, "parnassus solve: out of memory\n");
    else if (pn_solver_create(prob, &s, &solver, &err) != PN_OK ||
             pn_solver_solve(solver, PN_START_COLD, &info, &err) != PN_OK)
        fprintf(stderr, "parnassus solve: non-selective realization: %s\n", err.message);
    else {
        pn_solver_rule_stats(solver, norm, error, selected);
        rc = 0;
    }
    pn_solver_free(solver);
    free(norm);
    free(selected);
    return rc;
}

static int write_errors_plot(const solve_request *req, const pn_problem *prob, const rule_stats *st)
{
    char title[512], label_a[160], label_b[160];
    pn_error_info info = {PN_OK, ""};
    snprintf(title, sizeof title, "%s \xE2\x80\x94 per-rule error, selective vs non-selective",
             pn_cli_basename(req->file));
    snprintf(label_a, sizeof label_a, "(a) selective: log\xE2\x82\x82\xCE\xBBw = %g, \xCE\xB1 = %g",
             req->settings.log2_lambda_w, req->settings.alpha);
    snprintf(label_b, sizeof label_b, "(b) non-selective: all rules, equal weights");
    if (pn_plot_rule_errors(req->plot_errors, title, prob->num_rules,
                            (const char *const *)prob->rule_name, st->error, label_a,
                            st->baseline_error, label_b, st->selected, &info) != PN_OK) {
        fprintf(stderr, "parnassus solve: %s\n", info.message);
        return -1;
    }
    return 0;
}

/* Solves and reports; the problem is read and valid. */
static int run(const solve_request *req, const pn_cli_problem *lp, pn_cli_progress *progress)
{
    const pn_problem *prob = lp->prob;
    pn_error_info err = {0};
    pn_solver *solver = NULL;
    pn_error code = pn_solver_create(prob, &req->settings, &solver, &err);
    pn_info info;
    if (code == PN_OK)
        code = pn_solver_solve(solver, PN_START_COLD, &info, &err);
    const double seconds = code == PN_OK ? info.solve_time : 0.0;
    const int interrupted = pn_cli_progress_end(progress);
    if (code != PN_OK || interrupted) {
        pn_solver_free(solver);
        return code != PN_OK ? pn_cli_engine_error(command, NULL, &err)
                             : pn_cli_interrupted(command);
    }
    size_t K = (size_t)prob->num_rules;
    rule_stats st = {malloc(K * sizeof(double)), malloc(K * sizeof(double)), malloc(K),
                     req->plot_errors ? malloc(K * sizeof(double)) : NULL};
    int rc = PN_EXIT_FAILURE;
    if (pn_cli_check_result(command, req->file, &info) != PN_EXIT_OK) {
        /* reported; nothing is written */
    } else if (!st.norm || !st.error || !st.selected || (req->plot_errors && !st.baseline_error)) {
        fprintf(stderr, "parnassus solve: out of memory\n");
    } else if (!req->solution || write_solution(req->solution, prob, solver) == 0) {
        pn_solver_rule_stats(solver, st.norm, st.error, st.selected);
        rc = PN_EXIT_OK;
        if (req->plot_errors &&
            (nonselective_errors(prob, &req->settings, st.baseline_error) != 0 ||
             write_errors_plot(req, prob, &st) != 0))
            rc = PN_EXIT_FAILURE;
    }
    if (rc == PN_EXIT_OK) {
        pn_json_instance in = {req->file, lp->form, prob, lp->rules,
                               lp->has_context ? lp->context : NULL};
        pn_json_baseline base = {NONSELECTIVE_LOG2_LW, NONSELECTIVE_ALPHA, st.baseline_error};
        if (!req->json)
            print_report(req, lp, &info, &st, seconds);
        else if (pn_json_write_solve(stdout, &in, &req->settings, &info, st.norm, st.error,
                                     st.selected, seconds, req->plot_errors ? &base : NULL) != 0)
            rc = PN_EXIT_FAILURE;
    }
    free(st.norm);
    free(st.error);
    free(st.selected);
    free(st.baseline_error);
    pn_solver_free(solver);
    return rc;
}

int pn_cmd_solve(int argc, char **argv)
{
    solve_request req;
    int rc = parse_request(argc, argv, &req);
    if (rc != PN_EXIT_OK)
        return rc < 0 ? PN_EXIT_OK : rc;
    /* from here a Ctrl-C stops the solve (at once if it is running) */
    pn_cli_progress progress;
    pn_cli_progress_begin(&progress, command, &req.settings);
    pn_cli_problem lp;
    rc = pn_cli_load_problem(command, req.file, req.context, req.settings.max_memory, &lp);
    if (rc == PN_EXIT_OK) {
        pn_cli_rules_lambda_p(lp.rules, req.lambda_p, &req.settings);
        rc = run(&req, &lp, &progress);
        pn_cli_problem_free(&lp);
    }
    pn_cli_progress_end(&progress);
    return rc;
}

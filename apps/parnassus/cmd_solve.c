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
#include "parnassus/solver.h"
#include "timer.h"

static const char command[] = "solve";

enum { OPT_LOG2_LW, OPT_ALPHA, OPT_LAMBDA_P, OPT_SEED, OPT_JSON, OPT_SOLUTION, NUM_OPTIONS };

static const pn_cli_option solve_options[NUM_OPTIONS] = {
    [OPT_LOG2_LW] = {"log2-lambda-w", 1},
    [OPT_ALPHA] = {"alpha", 1},
    [OPT_LAMBDA_P] = {"lambda-p", 1},
    [OPT_SEED] = {"seed", 1},
    [OPT_JSON] = {"json", 0},
    [OPT_SOLUTION] = {"solution", 1},
};

static void print_help(const pn_settings *d)
{
    printf("usage: parnassus solve FILE [options]\n"
           "\n"
           "Realizes the rule system in FILE (an instance file, full or grouped form)\n"
           "at one setting of the style knobs and reports which rules it keeps.\n"
           "\n"
           "options:\n"
           "  --log2-lambda-w X  log2 of lambda_w, within [-60, 60] (default %g)\n"
           "  --alpha A          group-lasso share of the penalty on w, in [0, 1] (default %g)\n"
           "  --lambda-p P       spread penalty on p, >= 0 (default %g)\n"
           "  --seed S           seed of the random restarts, 0 .. 2^63-1 (default %" PRIu64 ")\n"
           "  --json             print a JSON document instead of the report\n"
           "  --solution OUT     write q* and w* to OUT as plain text\n"
           "  -h, --help         show this help\n"
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
    const char *v;
    if ((v = a.value[OPT_LOG2_LW]) &&
        pn_cli_real(command, "log2-lambda-w", v, -60.0, 60.0, &s->log2_lambda_w) != PN_EXIT_OK)
        return PN_EXIT_USAGE;
    if ((v = a.value[OPT_ALPHA]) &&
        pn_cli_real(command, "alpha", v, 0.0, 1.0, &s->alpha) != PN_EXIT_OK)
        return PN_EXIT_USAGE;
    if ((v = a.value[OPT_LAMBDA_P]) &&
        pn_cli_real(command, "lambda-p", v, 0.0, INFINITY, &s->lambda_p) != PN_EXIT_OK)
        return PN_EXIT_USAGE;
    if ((v = a.value[OPT_SEED]) && pn_cli_seed(command, "seed", v, &s->seed) != PN_EXIT_OK)
        return PN_EXIT_USAGE;
    return PN_EXIT_OK;
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
} rule_stats;

static void print_report(const pn_problem *prob, const pn_settings *s, const pn_info *info,
                         const rule_stats *st, double seconds)
{
    printf("status          %s\n", pn_status_name(info->status));
    printf("objective       %.10g\n", info->objective);
    printf("weighted error  %.10g\n", info->weighted_error);
    printf("alternations    %d\n", info->alternations);
    printf("starts          %d\n", info->starts);
    printf("seconds         %.6f\n", seconds);
    printf("KKT residuals   p %.3g, w %.3g\n", info->p_kkt, info->w_kkt);
    printf("settings        log2(lambda_w) %g, alpha %g, lambda_p %g, seed %" PRIu64 "\n",
           s->log2_lambda_w, s->alpha, s->lambda_p, s->seed);
    printf("selected        %d of %" PRId32 " rules (%s)\n\n", info->num_selected, prob->num_rules,
           info->group_selective ? "group selective" : "not group selective");
    int width = 4;
    for (int32_t r = 0; r < prob->num_rules; ++r) {
        int len = (int)strlen(prob->rule_name[r]);
        width = len > width ? (len < 40 ? len : 40) : width;
    }
    printf("%4s  %-*s  %-8s  %-14s  %s\n", "rule", width, "name", "selected", "|w_r|_2",
           "|A_r p - b_r|_2");
    for (int32_t r = 0; r < prob->num_rules; ++r)
        printf("%4" PRId32 "  %-*s  %-8s  %-14.6g  %.6g\n", r + 1, width, prob->rule_name[r],
               st->selected[r] ? "yes" : "no", st->norm[r], st->error[r]);
}

/* Solves and reports; the problem is read and valid. */
static int run(const solve_request *req, const pn_problem *prob, pn_instance_form form)
{
    pn_error_info err = {0};
    pn_solver *solver = NULL;
    if (pn_solver_create(prob, &req->settings, &solver, &err) != PN_OK) {
        fprintf(stderr, "parnassus solve: %s\n", err.message);
        return PN_EXIT_FAILURE;
    }
    pn_info info;
    double t0 = pn_timer_now();
    pn_error code = pn_solver_solve(solver, PN_START_COLD, &info, &err);
    double seconds = pn_timer_now() - t0;
    size_t K = (size_t)prob->num_rules;
    rule_stats st = {malloc(K * sizeof(double)), malloc(K * sizeof(double)), malloc(K)};
    int rc = PN_EXIT_FAILURE;
    if (code != PN_OK) {
        fprintf(stderr, "parnassus solve: %s\n", err.message);
    } else if (!st.norm || !st.error || !st.selected) {
        fprintf(stderr, "parnassus solve: out of memory\n");
    } else if (!req->solution || write_solution(req->solution, prob, solver) == 0) {
        pn_solver_rule_stats(solver, st.norm, st.error, st.selected);
        pn_json_instance in = {req->file, form, prob};
        rc = PN_EXIT_OK;
        if (!req->json)
            print_report(prob, &req->settings, &info, &st, seconds);
        else if (pn_json_write_solve(stdout, &in, &req->settings, &info, st.norm, st.error,
                                     st.selected, seconds) != 0)
            rc = PN_EXIT_FAILURE;
    }
    free(st.norm);
    free(st.error);
    free(st.selected);
    pn_solver_free(solver);
    return rc;
}

int pn_cmd_solve(int argc, char **argv)
{
    solve_request req;
    int rc = parse_request(argc, argv, &req);
    if (rc != PN_EXIT_OK)
        return rc < 0 ? PN_EXIT_OK : rc;
    pn_problem *prob = NULL;
    pn_instance_form form = PN_FORM_FULL;
    rc = pn_cli_load_instance("solve", req.file, &prob, &form);
    if (rc != PN_EXIT_OK)
        return rc;
    rc = run(&req, prob, form);
    pn_problem_free(prob);
    return rc;
}

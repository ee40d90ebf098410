/* parnassus analyze: which rules of a rule set a piece follows (docs/cli.md).
 *
 * The analysis direction of the paper (section 5.2, DESIGN.md 1): the
 * piece's empirical distribution q over the problem's groups is fixed and
 * the w-step alone (pn_analyze) gives the rule weights w; a rule with
 * w_r != 0 is one the piece follows. Each rule's error |A_r q - b_r|_2 is
 * reported too. The targets b are the rule set's first-step (back-off)
 * targets ("unconditional"), or the mean over the piece's steps of the
 * targets the rules give for each step's own previous sonority
 * ("context"). */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "corpus_load.h"
#include "json_out.h"
#include "options.h"
#include "parnassus/rules.h"
#include "parnassus/solver.h"
#include "parnassus/space.h"
#include "plot.h"

static const char command[] = "analyze";

enum {
    OPT_JSON,
    OPT_LOG2_LW,
    OPT_ALPHA,
    OPT_CONTEXT_MODE,
    OPT_MODE,
    OPT_TONIC,
    OPT_SPLIT,
    OPT_GRID,
    OPT_SORT,
    OPT_PLOT_ERRORS,
    NUM_OPTIONS
};

static const pn_cli_option analyze_options[NUM_OPTIONS] = {
    [OPT_JSON] = {"json", 0},   [OPT_LOG2_LW] = {"log2-lambda-w", 1},
    [OPT_ALPHA] = {"alpha", 1}, [OPT_CONTEXT_MODE] = {"context-mode", 1},
    [OPT_MODE] = {"mode", 1},   [OPT_TONIC] = {"tonic", 1},
    [OPT_SPLIT] = {"split", 1}, [OPT_GRID] = {"grid", 1},
    [OPT_SORT] = {"sort", 1},   [OPT_PLOT_ERRORS] = {"plot-errors", 1},
};

typedef enum context_mode { CONTEXT_AUTO, CONTEXT_NONE, CONTEXT_STEPS } context_mode;
typedef enum sort_order { SORT_FILE, SORT_ERROR, SORT_WEIGHT } sort_order;

static void print_help(const pn_settings *d, const pn_cli_corpus_options *c)
{
    printf("usage: parnassus analyze RULES PIECE [options]\n"
           "\n"
           "Analyzes a piece with a rule set (the paper's music analysis): the piece's\n"
           "distribution of sonorities is held fixed and the w-step gives the rule\n"
           "weights; a rule with a nonzero weight is one the piece follows. Reports each\n"
           "rule's error |A_r q - b_r|_2 and weight. RULES is a parnassus-rules/1 file;\n"
           "PIECE a Standard MIDI File or a chorale JSON file (.json).\n"
           "\n"
           "options:\n"
           "  --log2-lambda-w X    log2 of lambda_w, within [-60, 60] (default %g)\n"
           "  --alpha A            group-lasso share of the penalty on w, in [0, 1] (default %g)\n"
           "  --context-mode M     targets: 'unconditional' (first-step targets) or\n"
           "                       'context' (mean of the targets in the piece's own\n"
           "                       contexts); default 'context' when the set has context\n"
           "                       rules, else 'unconditional'\n"
           "  --tonic T            move every piece's key to tonic T: 0..11 or a name (C,\n"
           "                       F#, Bb, ...), or 'keep' (default %d)\n"
           "  --mode M             keep only pieces in 'major' or 'minor' keys, or 'any'\n"
           "                       (default)\n"
           "  --split S            train, valid, test or all: the chorale file's part\n"
           "                       (default: all)\n"
           "  --grid G             events (or 0): one step per change of sonority\n"
           "                       (default); N (1..%d): one step every N sixteenth notes\n"
           "  --sort S             order of the table: 'file' (default), 'error'\n"
           "                       (smallest first) or 'weight' (largest first)\n"
           "  --plot-errors OUT    draw each rule's error to OUT (.png or .svg), the\n"
           "                       followed rules in bold\n"
           "  --json               print a JSON document instead of the report\n"
           "  -h, --help           show this help\n"
           "\n"
           "Options take their value as '--opt VALUE' or '--opt=VALUE'.\n"
           "Exit status: 0 success, 1 failure, 2 bad usage or bad input file.\n",
           d->log2_lambda_w, d->alpha, c->tonic, PN_CLI_MAX_GRID);
}

typedef struct analyze_request {
    const char *rules_file, *piece_file;
    pn_settings settings;
    pn_cli_corpus_options corpus;
    context_mode context;
    sort_order sort;
    int json;
    const char *plot_errors;
} analyze_request;

/* Fills req from the command line; PN_EXIT_OK, PN_EXIT_USAGE, or -1 after
 * the help. */
static int parse_request(int argc, char **argv, analyze_request *req)
{
    pn_cli_args a;
    pn_settings *s = &req->settings;
    memset(req, 0, sizeof *req);
    pn_settings_default(s);
    pn_cli_corpus_options_default(&req->corpus);
    int rc = pn_cli_parse(command, analyze_options, NUM_OPTIONS, 2, argc, argv, &a);
    if (rc != PN_EXIT_OK)
        return rc;
    if (a.help) {
        print_help(s, &req->corpus);
        return -1;
    }
    if (a.num_args < 1)
        return pn_cli_usage_error(command, "missing RULES and PIECE");
    if (a.num_args < 2)
        return pn_cli_usage_error(command, "missing PIECE (a .mid file or a chorale .json file)");
    req->rules_file = a.arg[0];
    req->piece_file = a.arg[1];
    req->json = a.value[OPT_JSON] != NULL;
    req->plot_errors = a.value[OPT_PLOT_ERRORS];
    if (req->plot_errors && !pn_plot_format_known(req->plot_errors))
        return pn_cli_usage_error(command, "--plot-errors: '%s' must end in .png or .svg",
                                  req->plot_errors);
    const char *v;
    if (pn_cli_knobs(command, a.value[OPT_LOG2_LW], a.value[OPT_ALPHA], NULL, NULL, s) !=
        PN_EXIT_OK)
        return PN_EXIT_USAGE;
    req->context = CONTEXT_AUTO;
    if ((v = a.value[OPT_CONTEXT_MODE])) {
        if (strcmp(v, "unconditional") == 0)
            req->context = CONTEXT_NONE;
        else if (strcmp(v, "context") == 0)
            req->context = CONTEXT_STEPS;
        else
            return pn_cli_usage_error(
                command, "--context-mode: '%s' is not 'unconditional' or 'context'", v);
    }
    if ((v = a.value[OPT_MODE]) && pn_cli_corpus_mode(command, v, &req->corpus.mode) != PN_EXIT_OK)
        return PN_EXIT_USAGE;
    if ((v = a.value[OPT_TONIC]) &&
        pn_cli_corpus_tonic(command, v, &req->corpus.tonic) != PN_EXIT_OK)
        return PN_EXIT_USAGE;
    if ((v = a.value[OPT_SPLIT]) &&
        pn_cli_corpus_split(command, v, &req->corpus.split) != PN_EXIT_OK)
        return PN_EXIT_USAGE;
    if ((v = a.value[OPT_GRID]) && pn_cli_corpus_grid(command, v, &req->corpus.grid) != PN_EXIT_OK)
        return PN_EXIT_USAGE;
    req->sort = SORT_FILE;
    if ((v = a.value[OPT_SORT])) {
        if (strcmp(v, "file") == 0)
            req->sort = SORT_FILE;
        else if (strcmp(v, "error") == 0)
            req->sort = SORT_ERROR;
        else if (strcmp(v, "weight") == 0)
            req->sort = SORT_WEIGHT;
        else
            return pn_cli_usage_error(command, "--sort: '%s' is not 'file', 'error' or 'weight'",
                                      v);
    }
    return pn_cli_check_output(command, "plot-errors", req->plot_errors);
}

/* Everything the analysis computes. */
typedef struct analysis {
    long pieces, steps, counted, outside;
    double *q;     /* K' group masses of the piece */
    double *w;     /* m weights */
    double *y;     /* A'q, m entries */
    double *error; /* K: |A_r q - b_r|_2 */
    double *norm;  /* K: |w_r|_2 */
    unsigned char *followed;
    double weighted_error;
    int num_followed, group_selective;
    int use_context;
} analysis;

static void analysis_free(analysis *a)
{
    free(a->q);
    free(a->w);
    free(a->y);
    free(a->error);
    free(a->norm);
    free(a->followed);
}

/* Adds the targets for one step to bsum: each context rule uses the cell
 * of psi(previous), or its back-off targets when previous is NULL or a
 * window voice of psi lies outside the space; scratch holds the largest
 * rule's m_r entries. */
static void add_step_targets(const pn_rule_set *rs, const int *previous, double *bsum,
                             double *scratch)
{
    double *out = bsum;
    for (int32_t r = 0; r < rs->num_rules; ++r) {
        const pn_rule *rule = &rs->rules[r];
        const int32_t m = pn_feature_table_size(rule->table);
        int32_t cell = -1;
        if (rule->context && previous &&
            pn_feature_cell_of(rule->context->table, previous, &cell, NULL) != PN_OK)
            cell = -1;
        pn_rule_targets_for_cell(rule, cell, scratch);
        for (int32_t j = 0; j < m; ++j)
            out[j] += scratch[j];
        out += m;
    }
}

/* The piece's group masses (and, with use_context, the mean targets into
 * prob->target). Returns PN_EXIT_OK, or an exit status after a message. */
static int count_piece(const analyze_request *req, const pn_rule_set *rs, pn_problem *prob,
                       const int32_t *group_of, const pn_corpus *corpus, const char *summary,
                       analysis *an)
{
    const size_t K1 = (size_t)prob->num_groups, m = (size_t)prob->num_rows;
    int32_t mmax = 1;
    for (int32_t r = 0; r < prob->num_rules; ++r)
        mmax = pn_rule_size(prob, r) > mmax ? pn_rule_size(prob, r) : mmax;
    double *bsum = calloc(m, sizeof *bsum), *scratch = malloc((size_t)mmax * sizeof *scratch);
    an->q = calloc(K1, sizeof *an->q);
    if (!bsum || !scratch || !an->q) {
        free(bsum);
        free(scratch);
        fprintf(stderr, "parnassus analyze: out of memory\n");
        return PN_EXIT_FAILURE;
    }
    const int k = rs->space.num_voices;
    an->pieces = corpus->num_pieces;
    for (int32_t i = 0; i < corpus->num_pieces; ++i) {
        const pn_piece *piece = &corpus->pieces[i];
        int prev[PN_SPACE_MAX_VOICES], cur[PN_SPACE_MAX_VOICES];
        for (int32_t t = 0; t < piece->num_steps; ++t) {
            for (int v = 0; v < k; ++v) {
                int p = v < piece->num_voices
                            ? piece->pitch[(size_t)t * (size_t)piece->num_voices + (size_t)v]
                            : PN_REST;
                cur[v] = p < 0 ? PN_REST : p;
            }
            ++an->steps;
            int64_t x;
            if (pn_space_encode(&rs->space, cur, &x, NULL) != PN_OK) {
                ++an->outside;
            } else {
                an->q[group_of[x]] += 1.0;
                ++an->counted;
                if (an->use_context)
                    add_step_targets(rs, t > 0 ? prev : NULL, bsum, scratch);
            }
            memcpy(prev, cur, sizeof prev);
        }
    }
    int rc = PN_EXIT_OK;
    if (corpus->num_pieces == 0) {
        fprintf(stderr, "parnassus analyze: %s: no piece left to analyze (%s)\n", req->piece_file,
                summary && summary[0] ? summary
                                      : "--mode, --tonic and --split may leave pieces out");
        rc = PN_EXIT_USAGE;
    } else if (an->counted == 0) {
        fprintf(stderr,
                "parnassus analyze: %s: none of its %ld steps (in %ld pieces) lies in the space "
                "of rule set \"%s\"\n",
                req->piece_file, an->steps, an->pieces, rs->name);
        rc = PN_EXIT_USAGE;
    } else {
        for (size_t g = 0; g < K1; ++g)
            an->q[g] /= (double)an->counted;
        if (an->use_context)
            for (size_t i = 0; i < m; ++i)
                prob->target[i] = bsum[i] / (double)an->counted;
    }
    free(bsum);
    free(scratch);
    return rc;
}

/* w by pn_analyze, then the per-rule statistics. */
static int analyze(const analyze_request *req, const pn_problem *prob, analysis *an)
{
    const size_t K = (size_t)prob->num_rules, m = (size_t)prob->num_rows;
    an->w = malloc(m * sizeof *an->w);
    an->y = calloc(m, sizeof *an->y);
    an->error = malloc(K * sizeof *an->error);
    an->norm = malloc(K * sizeof *an->norm);
    an->followed = malloc(K);
    if (!an->w || !an->y || !an->error || !an->norm || !an->followed) {
        fprintf(stderr, "parnassus analyze: out of memory\n");
        return PN_EXIT_FAILURE;
    }
    pn_error_info err = {0};
    if (pn_analyze(prob, &req->settings, an->q, an->w, &err) != PN_OK) {
        fprintf(stderr, "parnassus analyze: %s\n", err.message);
        return PN_EXIT_FAILURE;
    }
    for (int64_t g = 0; g < prob->num_groups; ++g) {
        if (an->q[g] == 0.0)
            continue;
        const int32_t *rows = prob->group_rows + (size_t)g * K;
        for (size_t r = 0; r < K; ++r)
            an->y[rows[r]] += an->q[g];
    }
    an->weighted_error = 0.0;
    an->num_followed = 0;
    an->group_selective = 1;
    for (int32_t r = 0; r < prob->num_rules; ++r) {
        double e2 = 0.0, w2 = 0.0;
        int zeros = 0;
        for (int32_t i = prob->rule_start[r]; i < prob->rule_start[r + 1]; ++i) {
            double d = an->y[i] - prob->target[i];
            e2 += d * d;
            w2 += an->w[i] * an->w[i];
            an->weighted_error += an->w[i] * d * d;
            zeros += an->w[i] == 0.0;
        }
        an->error[r] = sqrt(e2);
        an->norm[r] = sqrt(w2);
        an->followed[r] = w2 > 0.0;
        an->num_followed += an->followed[r];
        if (zeros != 0 && zeros != pn_rule_size(prob, r))
            an->group_selective = 0;
    }
    return PN_EXIT_OK;
}

static const char *mode_name(pn_cli_mode_filter mode)
{
    return mode == PN_CLI_MODE_MAJOR ? "major" : mode == PN_CLI_MODE_MINOR ? "minor" : "any";
}

static const double *sort_key;
static int sort_sign;

static int compare_rules(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    double kx = sort_sign * sort_key[x], ky = sort_sign * sort_key[y];
    if (kx < ky)
        return -1;
    if (kx > ky)
        return 1;
    return (x > y) - (x < y);
}

static void print_report(const analyze_request *req, const pn_rule_set *rs, const pn_problem *prob,
                         const analysis *an, const char *summary)
{
    static const char *const tonic_names[12] = {"C",  "C#", "D",  "Eb", "E",  "F",
                                                "F#", "G",  "Ab", "A",  "Bb", "B"};
    printf("analysis of %s with rule set \"%s\" (%s)\n", req->piece_file, rs->name,
           req->rules_file);
    if (summary && summary[0])
        printf("corpus          %s\n", summary);
    printf("steps           %ld in %ld piece%s: %ld in the space, %ld outside it (left out)\n",
           an->steps, an->pieces, an->pieces == 1 ? "" : "s", an->counted, an->outside);
    printf("keys            %s%s, mode %s\n", req->corpus.tonic < 0 ? "kept" : "moved to ",
           req->corpus.tonic < 0 ? "" : tonic_names[req->corpus.tonic],
           mode_name(req->corpus.mode));
    printf("targets         %s\n",
           an->use_context ? "context (mean over the piece's steps of the targets in each step's "
                             "context)"
                           : "unconditional (first-step targets)");
    printf("settings        log2(lambda_w) %g, alpha %g\n", req->settings.log2_lambda_w,
           req->settings.alpha);
    printf("weighted error  %.10g\n", an->weighted_error);
    printf("followed        %d of %" PRId32 " rules (%s)\n\n", an->num_followed, prob->num_rules,
           an->group_selective ? "group selective" : "not group selective");

    const int32_t K = prob->num_rules;
    int32_t *order = malloc((size_t)K * sizeof *order);
    for (int32_t r = 0; order && r < K; ++r)
        order[r] = r;
    if (order && req->sort != SORT_FILE) {
        sort_key = req->sort == SORT_ERROR ? an->error : an->norm;
        sort_sign = req->sort == SORT_ERROR ? 1 : -1;
        qsort(order, (size_t)K, sizeof *order, compare_rules);
    }
    int width = 4, fwidth = 7, cwidth = 7;
    char feature[PN_FEATURE_TEXT_MAX];
    for (int32_t r = 0; r < K; ++r) {
        int len = (int)strlen(rs->rules[r].name);
        width = len > width ? (len < 40 ? len : 40) : width;
        len = (int)pn_feature_to_string(rs->rules[r].feature, feature, sizeof feature);
        fwidth = len > fwidth ? (len < 40 ? len : 40) : fwidth;
        if (rs->rules[r].context) {
            len = (int)pn_feature_to_string(rs->rules[r].context->feature, feature, sizeof feature);
            cwidth = len > cwidth ? (len < 40 ? len : 40) : cwidth;
        }
    }
    printf("%4s  %-*s  %-*s  %-*s  %-8s  %-14s  %s\n", "rule", width, "name", fwidth, "feature",
           cwidth, "context", "followed", "|w_r|_2", "|A_r q - b_r|_2");
    for (int32_t i = 0; i < K; ++i) {
        int32_t r = order ? order[i] : i;
        const pn_rule *rule = &rs->rules[r];
        char ctx[PN_FEATURE_TEXT_MAX] = "-";
        pn_feature_to_string(rule->feature, feature, sizeof feature);
        if (rule->context)
            pn_feature_to_string(rule->context->feature, ctx, sizeof ctx);
        printf("%4" PRId32 "  %-*s  %-*s  %-*s  %-8s  %-14.6g  %.6g\n", r + 1, width, rule->name,
               fwidth, feature, cwidth, ctx, an->followed[r] ? "yes" : "no", an->norm[r],
               an->error[r]);
    }
    free(order);
}

static int write_plot(const analyze_request *req, const pn_problem *prob, const analysis *an)
{
    char title[512], label[160];
    pn_error_info info = {PN_OK, ""};
    snprintf(title, sizeof title, "%s analyzed with %s", pn_cli_basename(req->piece_file),
             pn_cli_basename(req->rules_file));
    snprintf(label, sizeof label, "piece: log\xE2\x82\x82\xCE\xBBw = %g, \xCE\xB1 = %g",
             req->settings.log2_lambda_w, req->settings.alpha);
    if (pn_plot_rule_errors(req->plot_errors, title, prob->num_rules,
                            (const char *const *)prob->rule_name, an->error, label, NULL, NULL,
                            an->followed, &info) != PN_OK) {
        fprintf(stderr, "parnassus analyze: %s\n", info.message);
        return -1;
    }
    return 0;
}

static int load_corpus(const analyze_request *req, const pn_rule_set *rs, pn_corpus **corpus,
                       char *summary, size_t summary_size)
{
    pn_cli_corpus_options o = req->corpus;
    o.num_voices = rs->space.num_voices;
    o.space = &rs->space;
    pn_error_info err = {0};
    pn_error code = pn_cli_load_corpus(req->piece_file, &o, corpus, summary, summary_size, &err);
    if (code == PN_OK)
        return PN_EXIT_OK;
    fprintf(stderr, "parnassus analyze: %s\n", err.message);
    return code == PN_ERR_NOMEM || code == PN_ERR_NUMERIC ? PN_EXIT_FAILURE : PN_EXIT_USAGE;
}

static int run(analyze_request *req, pn_rule_set *rs)
{
    const int64_t n = pn_space_size(&rs->space);
    if (n > PN_RULES_MAX_SPACE) {
        fprintf(stderr,
                "parnassus analyze: %s: the space has %" PRId64
                " sonorities, more than the %" PRId64 " that can be analyzed\n",
                req->rules_file, n, (int64_t)PN_RULES_MAX_SPACE);
        return PN_EXIT_USAGE;
    }
    analysis an;
    memset(&an, 0, sizeof an);
    an.use_context = req->context == CONTEXT_STEPS ||
                     (req->context == CONTEXT_AUTO && pn_rule_set_has_context(rs));
    char summary[512] = "";
    pn_corpus *corpus = NULL;
    int rc = load_corpus(req, rs, &corpus, summary, sizeof summary);
    if (rc != PN_EXIT_OK)
        return rc;
    pn_problem *prob = NULL;
    int32_t *group_of = malloc((size_t)n * sizeof *group_of);
    pn_error_info err = {0};
    pn_error code = group_of ? pn_rule_set_build_problem(rs, &prob, group_of, &err)
                             : pn_fail(&err, PN_ERR_NOMEM, "out of memory");
    if (code != PN_OK) {
        fprintf(stderr, "parnassus analyze: %s: %s\n", req->rules_file, err.message);
        rc = code == PN_ERR_INVALID ? PN_EXIT_USAGE : PN_EXIT_FAILURE;
    }
    if (rc == PN_EXIT_OK)
        rc = count_piece(req, rs, prob, group_of, corpus, summary, &an);
    free(group_of);
    pn_corpus_free(corpus);
    if (rc == PN_EXIT_OK)
        rc = analyze(req, prob, &an);
    if (rc == PN_EXIT_OK && req->plot_errors && write_plot(req, prob, &an) != 0)
        rc = PN_EXIT_FAILURE;
    if (rc == PN_EXIT_OK) {
        if (!req->json) {
            print_report(req, rs, prob, &an, summary);
        } else {
            pn_json_analysis ja = {
                .rules_file = req->rules_file,
                .piece_file = req->piece_file,
                .rules = rs,
                .prob = prob,
                .settings = &req->settings,
                .context_mode = an.use_context ? "context" : "unconditional",
                .tonic = req->corpus.tonic,
                .mode = mode_name(req->corpus.mode),
                .split = req->corpus.split,
                .grid = req->corpus.grid,
                .pieces = an.pieces,
                .steps = an.steps,
                .steps_counted = an.counted,
                .steps_outside = an.outside,
                .summary = summary[0] ? summary : NULL,
                .weighted_error = an.weighted_error,
                .num_followed = an.num_followed,
                .group_selective = an.group_selective,
                .rule_error = an.error,
                .group_norm = an.norm,
                .followed = an.followed,
            };
            if (pn_json_write_analyze(stdout, &ja) != 0)
                rc = PN_EXIT_FAILURE;
        }
    }
    analysis_free(&an);
    pn_problem_free(prob);
    return rc;
}

int pn_cmd_analyze(int argc, char **argv)
{
    analyze_request req;
    int rc = parse_request(argc, argv, &req);
    if (rc != PN_EXIT_OK)
        return rc < 0 ? PN_EXIT_OK : rc;
    pn_rule_set *rs = NULL;
    rc = pn_cli_load_rules(command, req.rules_file, PN_DEFAULT_MAX_MEMORY, &rs);
    if (rc != PN_EXIT_OK)
        return rc;
    rc = run(&req, rs);
    pn_rule_set_free(rs);
    return rc;
}

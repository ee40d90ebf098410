/* parnassus sweep: how the style knobs change the music. Generates runs at
 * several settings of one knob and measures each with the style statistics
 * of `parnassus evaluate` (docs/evaluate.md, "Sweeping the knobs"). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd_style.h"
#include "options.h"
#include "parnassus/rules.h"
#include "parnassus/style.h"
#include "plot.h"
#include "plot_sweep.h"
#include "style_input.h"
#include "sweep.h"
#include "sweep_report.h"
#include "timer.h"

static const char command[] = "sweep";

enum {
    OPT_KNOB,
    OPT_FROM,
    OPT_TO,
    OPT_POINTS,
    OPT_STEPS,
    OPT_SEEDS,
    OPT_LOG2_LW,
    OPT_ALPHA,
    OPT_LAMBDA_P,
    OPT_REFERENCE,
    OPT_JSON,
    OPT_CSV,
    OPT_PLOT,
    NUM_OPTIONS
};

static const pn_cli_option sweep_options[NUM_OPTIONS] = {
    [OPT_KNOB] = {"knob", 1},
    [OPT_FROM] = {"from", 1},
    [OPT_TO] = {"to", 1},
    [OPT_POINTS] = {"points", 1},
    [OPT_STEPS] = {"steps", 1},
    [OPT_SEEDS] = {"seeds", 1},
    [OPT_LOG2_LW] = {"log2-lambda-w", 1},
    [OPT_ALPHA] = {"alpha", 1},
    [OPT_LAMBDA_P] = {"lambda-p", 1},
    [OPT_REFERENCE] = {"reference", 1},
    [OPT_JSON] = {"json", 0},
    [OPT_CSV] = {"csv", 1},
    [OPT_PLOT] = {"plot", 1},
};

enum {
    DEFAULT_STEPS = 500,
    MAX_STEPS = 100000,
    MAX_POINTS = 100,
    MAX_SEEDS = 64,
    DEFAULT_LW_POINTS = 10,   /* log2_lambda_w from -12 to 6: the plugin's Style range */
    DEFAULT_ALPHA_POINTS = 6, /* alpha from 0 to 1 */
};

static const double DEFAULT_LW_FROM = -12.0, DEFAULT_LW_TO = 6.0;

static void print_help(const pn_settings *d)
{
    printf("usage: parnassus sweep RULES --knob log2_lambda_w|alpha [options]\n"
           "\n"
           "Shows how a style knob changes the music: generates music from the rule set\n"
           "RULES at evenly spaced settings of one knob, the other held fixed, exactly\n"
           "as 'parnassus sample' does (one run of --steps sonorities per seed), and\n"
           "measures each setting with the style statistics of 'parnassus evaluate':\n"
           "the rules the realization keeps (min, median, max over the steps, and\n"
           "which), the TV distances of chord types and of the four voices' motion to\n"
           "the reference, the shares of root-position triads, stepwise soprano moves,\n"
           "soprano leaps, the bass on C, F or G (I, IV, V of a set in C) and consonant\n"
           "sonorities, the rates of parallels, hidden 5ths/8ves, wide spacing and\n"
           "voice crossing, and the median time per step.\n"
           "\n"
           "options:\n"
           "  --knob K           the knob to sweep: log2_lambda_w or alpha (required)\n"
           "  --from X, --to Y   its first and last setting (default: log2_lambda_w\n"
           "                     from %g to %g, alpha from 0 to 1); X < Y, or X = Y\n"
           "                     with --points 1\n"
           "  --points N         settings, evenly spaced, 1..%d (default %d for\n"
           "                     log2_lambda_w, %d for alpha)\n"
           "  --steps S          sonorities per run, 1..%d (default %d)\n"
           "  --seeds S1,S2,...  one run per seed and setting, 1..%d distinct seeds\n"
           "                     0 .. 2^63-1 (default %" PRIu64 ")\n"
           "  --log2-lambda-w X  the fixed log2(lambda_w) when sweeping alpha, within\n"
           "                     [-60, 60] (default %g)\n"
           "  --alpha A          the fixed alpha when sweeping log2_lambda_w, in [0, 1]\n"
           "                     (default %g)\n"
           "  --lambda-p P       spread penalty on p, >= 0 (default: the rule set's, else\n"
           "                     %g)\n"
           "  --reference R      major or minor: the shipped statistics of the JSB\n"
           "                     chorales' valid split in that mode (default major);\n"
           "                     FILE: a statistics file (parnassus-style/1)\n"
           "  --json             print one JSON object (parnassus-sweep/1) instead of the\n"
           "                     table\n"
           "  --csv OUT          write one CSV row per setting to OUT\n"
           "  --plot OUT         draw the rules kept, the TV distances and the shares\n"
           "                     over the knob (.png or .svg)\n"
           "  -h, --help         show this help\n"
           "\n"
           "Options take their value as '--opt VALUE' or '--opt=VALUE'.\n"
           "Exit status: 0 success, 1 failure, 2 bad usage or bad input file.\n",
           DEFAULT_LW_FROM, DEFAULT_LW_TO, MAX_POINTS, DEFAULT_LW_POINTS, DEFAULT_ALPHA_POINTS,
           MAX_STEPS, DEFAULT_STEPS, MAX_SEEDS, d->seed, d->log2_lambda_w, d->alpha, d->lambda_p);
}

typedef struct sweep_cli {
    const char *rules_file;
    const char *reference;
    const char *csv;
    const char *plot;
    const char *lambda_p; /* --lambda-p as given, or NULL */
    int json;
    uint64_t seeds[MAX_SEEDS];
    pn_sweep_request req;
} sweep_cli;

/* --seeds: comma-separated seeds, distinct, 1..MAX_SEEDS of them. */
static int parse_seeds(const char *text, uint64_t *seeds, int *count)
{
    int n = 0;
    const char *p = text;
    for (;;) {
        const char *end = strchr(p, ',');
        const size_t len = end ? (size_t)(end - p) : strlen(p);
        char word[32];
        if (len == 0 || len >= sizeof word)
            return pn_cli_usage_error(command,
                                      "--seeds: expected comma-separated seeds such as 1,2,3, "
                                      "got '%s'",
                                      text);
        if (n == MAX_SEEDS)
            return pn_cli_usage_error(command, "--seeds: more than %d seeds in '%s'", MAX_SEEDS,
                                      text);
        memcpy(word, p, len);
        word[len] = '\0';
        if (pn_cli_seed(command, "seeds", word, &seeds[n]) != PN_EXIT_OK)
            return PN_EXIT_USAGE;
        for (int i = 0; i < n; ++i)
            if (seeds[i] == seeds[n])
                return pn_cli_usage_error(command, "--seeds: seed %" PRIu64 " is listed twice",
                                          seeds[n]);
        ++n;
        if (!end)
            break;
        p = end + 1;
    }
    *count = n;
    return PN_EXIT_OK;
}

/* --knob, --from, --to and --points. */
static int parse_range(const pn_cli_args *a, pn_sweep_request *req)
{
    const char *knob = a->value[OPT_KNOB];
    if (!knob)
        return pn_cli_usage_error(command, "missing --knob (log2_lambda_w or alpha)");
    if (strcmp(knob, "log2_lambda_w") == 0)
        req->knob = PN_SWEEP_LOG2_LAMBDA_W;
    else if (strcmp(knob, "alpha") == 0)
        req->knob = PN_SWEEP_ALPHA;
    else
        return pn_cli_usage_error(command, "--knob must be log2_lambda_w or alpha (got '%s')",
                                  knob);
    const int lw = req->knob == PN_SWEEP_LOG2_LAMBDA_W;
    const double lo = lw ? -60.0 : 0.0, hi = lw ? 60.0 : 1.0;
    req->from = lw ? DEFAULT_LW_FROM : 0.0;
    req->to = lw ? DEFAULT_LW_TO : 1.0;
    req->points = lw ? DEFAULT_LW_POINTS : DEFAULT_ALPHA_POINTS;
    const char *v;
    if ((v = a->value[OPT_FROM]) && pn_cli_real(command, "from", v, lo, hi, &req->from) != 0)
        return PN_EXIT_USAGE;
    if ((v = a->value[OPT_TO]) && pn_cli_real(command, "to", v, lo, hi, &req->to) != 0)
        return PN_EXIT_USAGE;
    if ((v = a->value[OPT_POINTS]) &&
        pn_cli_int(command, "points", v, 1, MAX_POINTS, &req->points) != 0)
        return PN_EXIT_USAGE;
    if (req->from > req->to)
        return pn_cli_usage_error(command, "--from %g is above --to %g", req->from, req->to);
    if (req->points >= 2 && req->from == req->to)
        return pn_cli_usage_error(command,
                                  "--from and --to are both %g: %d points need --from below "
                                  "--to (or give --points 1)",
                                  req->from, req->points);
    if (req->points == 1 && req->from != req->to)
        return pn_cli_usage_error(command,
                                  "--points 1 sweeps a single setting: give --from and --to "
                                  "equal (got %g and %g)",
                                  req->from, req->to);
    /* the swept knob is not also fixed */
    if (lw && a->value[OPT_LOG2_LW])
        return pn_cli_usage_error(command, "--log2-lambda-w is the knob being swept: use --from "
                                           "and --to");
    if (!lw && a->value[OPT_ALPHA])
        return pn_cli_usage_error(command, "--alpha is the knob being swept: use --from and --to");
    return PN_EXIT_OK;
}

/* Returns PN_EXIT_OK, PN_EXIT_USAGE, or -1 when help was printed. */
static int parse_request(int argc, char **argv, sweep_cli *cli)
{
    memset(cli, 0, sizeof *cli);
    pn_sweep_request *req = &cli->req;
    pn_settings *s = &req->settings;
    pn_settings_default(s);
    /* one cold start, as `parnassus sample` without --search */
    s->restarts = 0;
    s->grow_seeds = 0;
    cli->reference = "major";
    cli->seeds[0] = s->seed;
    req->num_seeds = 1;
    req->steps = DEFAULT_STEPS;
    pn_cli_args a;
    int rc = pn_cli_parse(command, sweep_options, NUM_OPTIONS, 1, argc, argv, &a);
    if (rc != PN_EXIT_OK)
        return rc;
    if (a.help) {
        print_help(s);
        return -1;
    }
    if (a.num_args < 1)
        return pn_cli_usage_error(command, "missing RULES (a parnassus-rules/1 file)");
    cli->rules_file = a.arg[0];
    if ((rc = parse_range(&a, req)) != PN_EXIT_OK)
        return rc;
    const char *v;
    if ((v = a.value[OPT_STEPS]) && pn_cli_int(command, "steps", v, 1, MAX_STEPS, &req->steps) != 0)
        return PN_EXIT_USAGE;
    if ((v = a.value[OPT_SEEDS]) && parse_seeds(v, cli->seeds, &req->num_seeds) != 0)
        return PN_EXIT_USAGE;
    req->seeds = cli->seeds;
    cli->lambda_p = a.value[OPT_LAMBDA_P];
    if (pn_cli_knobs(command, a.value[OPT_LOG2_LW], a.value[OPT_ALPHA], cli->lambda_p, NULL, s) !=
        PN_EXIT_OK)
        return PN_EXIT_USAGE;
    if ((v = a.value[OPT_REFERENCE])) {
        if (strcmp(v, "none") == 0)
            return pn_cli_usage_error(command, "--reference none: a sweep is measured against a "
                                               "reference (major, minor or a statistics file)");
        cli->reference = v;
    }
    if ((v = a.value[OPT_PLOT]) && !pn_plot_format_known(v))
        return pn_cli_usage_error(command, "--plot: '%s' must end in .png or .svg", v);
    cli->plot = v;
    cli->csv = a.value[OPT_CSV];
    cli->json = a.value[OPT_JSON] != NULL;
    if (pn_cli_check_output(command, "csv", cli->csv) != PN_EXIT_OK ||
        pn_cli_check_output(command, "plot", cli->plot) != PN_EXIT_OK)
        return PN_EXIT_USAGE;
    return PN_EXIT_OK;
}

/* An exit status for an engine error: bad input or a failure. */
static int status_of(pn_error code)
{
    return code == PN_ERR_NOMEM || code == PN_ERR_NUMERIC ? PN_EXIT_FAILURE : PN_EXIT_USAGE;
}

static int write_plot(const sweep_cli *cli, const pn_sweep_report *r)
{
    const pn_sweep *sw = r->sweep;
    const pn_sweep_request *req = r->req;
    const size_t n = (size_t)sw->num_points;
    const pn_style_stats *ref = r->reference ? &r->reference->stats : NULL;
    double *x = malloc(n * (1 + PN_SWEEP_PLOT_TV + PN_SWEEP_PLOT_SHARES) * sizeof *x);
    int *kept = malloc(3 * n * sizeof *kept);
    pn_error_info info = {PN_ERR_NOMEM, "out of memory"};
    int rc = -1;
    if (x && kept) {
        pn_sweep_plot d;
        memset(&d, 0, sizeof d);
        static const char *const tv_label[PN_SWEEP_PLOT_TV] = {
            "chord types", "soprano motion", "alto motion", "tenor motion", "bass motion"};
        static const char *const share_label[PN_SWEEP_PLOT_SHARES] = {
            "root-position triads", "stepwise soprano", "soprano leaps",     "bass on C, F, G",
            "consonant sonorities", "wide spacing",     "parallel 5ths/8ves"};
        double *tv[PN_SWEEP_PLOT_TV], *share[PN_SWEEP_PLOT_SHARES];
        for (int s = 0; s < PN_SWEEP_PLOT_TV; ++s)
            tv[s] = x + (1 + (size_t)s) * n;
        for (int s = 0; s < PN_SWEEP_PLOT_SHARES; ++s)
            share[s] = x + (1 + PN_SWEEP_PLOT_TV + (size_t)s) * n;
        for (size_t i = 0; i < n; ++i) {
            const pn_sweep_point *pt = &sw->points[i];
            pn_sweep_figures f;
            pn_sweep_figures_of(pt->stats, ref, &f);
            x[i] = pt->value;
            kept[i] = pt->kept_min;
            kept[n + i] = pt->kept_median;
            kept[2 * n + i] = pt->kept_max;
            for (int s = 0; s < PN_SWEEP_PLOT_TV; ++s)
                tv[s][i] = f.tv[s];
            const double shares[PN_SWEEP_PLOT_SHARES] = {
                f.root_position, f.stepwise_soprano, f.soprano_leaps, f.primary_bass, f.consonant,
                f.wide,          f.parallels};
            for (int s = 0; s < PN_SWEEP_PLOT_SHARES; ++s)
                share[s][i] = shares[s];
        }
        pn_sweep_figures rf;
        pn_sweep_reference_figures(ref, &rf);
        const double ref_shares[PN_SWEEP_PLOT_SHARES] = {
            rf.root_position, rf.stepwise_soprano, rf.soprano_leaps, rf.primary_bass, rf.consonant,
            rf.wide,          rf.parallels};
        char title[400], subtitle[400];
        const int lw = req->knob == PN_SWEEP_LOG2_LAMBDA_W;
        snprintf(title, sizeof title, "%s: sweep of %s, %s = %g", req->rules->name,
                 lw ? "log\xE2\x82\x82(\xCE\xBBw)" : "\xCE\xB1",
                 lw ? "\xCE\xB1" : "log\xE2\x82\x82(\xCE\xBBw)", pn_sweep_fixed_value(req));
        snprintf(subtitle, sizeof subtitle,
                 "%d steps \xC3\x97 %d seed%s per setting, \xCE\xBBp = %g; measured against %s",
                 req->steps, req->num_seeds, req->num_seeds == 1 ? "" : "s", req->settings.lambda_p,
                 pn_sweep_reference_name(r));
        d.title = title;
        d.subtitle = subtitle;
        d.x_title = lw ? "log\xE2\x82\x82(\xCE\xBBw)  (conservative \xE2\x86\x92 liberal)"
                       : "\xCE\xB1  (rule elimination \xE2\x86\x92 selection)";
        d.num_points = (int)n;
        d.x = x;
        d.kept_min = kept;
        d.kept_median = kept + n;
        d.kept_max = kept + 2 * n;
        d.num_rules = sw->num_rules;
        for (int s = 0; s < PN_SWEEP_PLOT_TV; ++s) {
            d.tv_label[s] = tv_label[s];
            d.tv[s] = tv[s];
        }
        for (int s = 0; s < PN_SWEEP_PLOT_SHARES; ++s) {
            d.share_label[s] = share_label[s];
            d.share[s] = share[s];
            d.share_reference[s] = ref_shares[s];
        }
        d.reference_label = pn_sweep_reference_name(r);
        if (pn_plot_sweep(cli->plot, &d, &info) == PN_OK)
            rc = 0;
    }
    if (rc != 0)
        fprintf(stderr, "parnassus %s: %s\n", command, info.message);
    free(x);
    free(kept);
    return rc;
}

static int run(sweep_cli *cli)
{
    pn_error_info info = {PN_OK, ""};
    pn_rule_set *rs = NULL;
    pn_style_file *ref = NULL;
    pn_sweep *sw = NULL;
    char ref_path[4096] = "";
    int rc = pn_cli_load_rules(command, cli->rules_file, PN_DEFAULT_MAX_MEMORY, &rs);
    if (rc != PN_EXIT_OK)
        return rc;
    cli->req.rules = rs;
    pn_cli_rules_lambda_p(rs, cli->lambda_p, &cli->req.settings);
    if (pn_cli_style_reference(cli->reference, &ref, ref_path, sizeof ref_path, &info) != PN_OK) {
        fprintf(stderr, "parnassus %s: %s\n", command, info.message);
        rc = status_of(info.code);
        goto done;
    }
    const double t0 = pn_timer_now();
    if (pn_sweep_run(&cli->req, &sw, &info) != PN_OK) {
        fprintf(stderr, "parnassus %s: %s: %s\n", command, cli->rules_file, info.message);
        rc = status_of(info.code);
        goto done;
    }
    const pn_sweep_report r = {cli->rules_file, &cli->req, sw, ref, ref_path, pn_timer_now() - t0};
    /* the files first: on failure nothing is printed */
    rc = PN_EXIT_FAILURE;
    if (cli->csv && pn_sweep_csv(cli->csv, &r) != 0)
        goto done;
    if (cli->plot && write_plot(cli, &r) != 0)
        goto done;
    if (cli->json ? pn_sweep_json(stdout, &r) != 0 : pn_sweep_print(stdout, &r) != 0)
        goto done;
    rc = PN_EXIT_OK;
done:
    pn_sweep_free(sw);
    pn_style_file_free(ref);
    pn_rule_set_free(rs);
    return rc;
}

int pn_cmd_sweep(int argc, char **argv)
{
    sweep_cli cli;
    int rc = parse_request(argc, argv, &cli);
    if (rc != PN_EXIT_OK)
        return rc < 0 ? PN_EXIT_OK : rc;
    return run(&cli);
}

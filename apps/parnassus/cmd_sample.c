/* parnassus sample: sequential generation from a rule set into a Standard
 * MIDI File (docs/cli.md). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "midi_file.h"
#include "options.h"
#include "parnassus/generate.h"
#include "parnassus/rules.h"
#include "progress.h"
#include "timer.h"

static const char command[] = "sample";

enum {
    OPT_LOG2_LW,
    OPT_ALPHA,
    OPT_LAMBDA_P,
    OPT_SEED,
    OPT_STEPS,
    OPT_BPM,
    OPT_DIVISION,
    OPT_KEY,
    OPT_OUTPUT,
    OPT_NO_TIES,
    OPT_VELOCITY,
    OPT_INDEPENDENT,
    OPT_SEARCH,
    OPT_MAX_MEMORY,
    NUM_OPTIONS
};

static const pn_cli_option sample_options[NUM_OPTIONS] = {
    [OPT_LOG2_LW] = {"log2-lambda-w", 1}, [OPT_ALPHA] = {"alpha", 1},
    [OPT_LAMBDA_P] = {"lambda-p", 1},     [OPT_SEED] = {"seed", 1},
    [OPT_STEPS] = {"steps", 1},           [OPT_BPM] = {"bpm", 1},
    [OPT_DIVISION] = {"division", 1},     [OPT_KEY] = {"key", 1},
    [OPT_OUTPUT] = {"output", 1},         [OPT_NO_TIES] = {"no-ties", 0},
    [OPT_VELOCITY] = {"velocity", 1},     [OPT_INDEPENDENT] = {"independent", 0},
    [OPT_SEARCH] = {"search", 0},         [OPT_MAX_MEMORY] = {"max-memory", 1},
};

enum {
    DEFAULT_STEPS = 64,
    MAX_STEPS = 100000,
    DEFAULT_DIVISION = 8, /* eighth notes */
    DEFAULT_VELOCITY = 80,
    TICKS_PER_QUARTER = 480,
};

static void print_help(const pn_settings *d)
{
    printf("usage: parnassus sample RULES -o OUT.mid [options]\n"
           "\n"
           "Generates music from the rule set RULES (a parnassus-rules/1 file): draws\n"
           "a sonority from the realization, makes it every context rule's previous\n"
           "sonority, re-realizes and draws the next, and writes the sequence as a\n"
           "Standard MIDI File (format 1, one track per voice, channels 1..k).\n"
           "\n"
           "options:\n"
           "  -o, --output OUT   the MIDI file to write (required)\n"
           "  --steps N          sonorities to generate, 1..%d (default %d)\n"
           "  --log2-lambda-w X  log2 of lambda_w, within [-60, 60] (default %g)\n"
           "  --alpha A          group-lasso share of the penalty on w, in [0, 1] (default %g)\n"
           "  --lambda-p P       spread penalty on p, >= 0 (default %g)\n"
           "  --seed S           seed of the draws and restarts, 0 .. 2^63-1 (default %" PRIu64
           ")\n"
           "  --bpm B            tempo in quarter notes per minute, 20..400 (default 120)\n"
           "  --division D       note value of one step: 1, 2, 4, 8, 16 or 32 (default %d:\n"
           "                     eighth notes)\n"
           "  --key K            move the music from the rule set's tonic C to K\n"
           "                     (C, C#, Db, D, ..., B or 0..11; default C), by the nearest\n"
           "                     shift\n"
           "  --velocity V       note-on velocity, 1..127 (default %d)\n"
           "  --no-ties          strike a voice's repeated pitch again instead of holding it\n"
           "  --independent      draw every sonority from the first step's realization\n"
           "                     (contexts never change): a sample of p* itself\n"
           "  --search           realize the first step with the full search over\n"
           "                     selections (restarts, greedy growth) instead of one\n"
           "                     cold start\n" PN_CLI_MAX_MEMORY_HELP
           "  -h, --help         show this help\n"
           "\n"
           "Options take their value as '--opt VALUE' or '--opt=VALUE'.\n"
           "Exit status: 0 success, 1 failure, 2 bad usage or bad input file.\n",
           MAX_STEPS, DEFAULT_STEPS, d->log2_lambda_w, d->alpha, d->lambda_p, d->seed,
           DEFAULT_DIVISION, DEFAULT_VELOCITY);
}

typedef struct sample_request {
    const char *rules;
    const char *output;
    pn_settings settings;
    int steps;
    double bpm;
    int division;
    int shift; /* semitones added to every pitch */
    int velocity;
    int ties;
    int independent;
    const char *lambda_p; /* --lambda-p as given, or NULL */
} sample_request;

/* Returns PN_EXIT_OK, PN_EXIT_USAGE, or -1 when help was printed. */
static int parse_request(int argc, char **argv, sample_request *req)
{
    pn_settings *s = &req->settings;
    pn_settings_default(s);
    req->steps = DEFAULT_STEPS;
    req->bpm = 120.0;
    req->division = DEFAULT_DIVISION;
    req->shift = 0;
    req->velocity = DEFAULT_VELOCITY;
    pn_cli_args a;
    int rc = pn_cli_parse(command, sample_options, NUM_OPTIONS, 1, argc, argv, &a);
    if (rc != PN_EXIT_OK)
        return rc;
    if (a.help) {
        print_help(s);
        return -1;
    }
    if (a.num_args < 1)
        return pn_cli_usage_error(command, "missing RULES");
    req->rules = a.arg[0];
    req->output = a.value[OPT_OUTPUT];
    if (!req->output || req->output[0] == '\0')
        return pn_cli_usage_error(command, "missing -o OUT.mid");
    req->ties = a.value[OPT_NO_TIES] == NULL;
    req->independent = a.value[OPT_INDEPENDENT] != NULL;
    /* One cold start unless asked: the first-step targets of a learned set
     * agree (they are marginals of one corpus), so a search over selections
     * finds nothing better and costs a minute on the chorale sets. */
    if (!a.value[OPT_SEARCH]) {
        s->restarts = 0;
        s->grow_seeds = 0;
    }
    const char *v;
    req->lambda_p = a.value[OPT_LAMBDA_P];
    if (pn_cli_knobs(command, a.value[OPT_LOG2_LW], a.value[OPT_ALPHA], a.value[OPT_LAMBDA_P],
                     a.value[OPT_SEED], s) != PN_EXIT_OK)
        return PN_EXIT_USAGE;
    if (pn_cli_max_memory(command, a.value[OPT_MAX_MEMORY], &s->max_memory) != PN_EXIT_OK)
        return PN_EXIT_USAGE;
    if ((v = a.value[OPT_STEPS]) &&
        pn_cli_int(command, "steps", v, 1, MAX_STEPS, &req->steps) != PN_EXIT_OK)
        return PN_EXIT_USAGE;
    if ((v = a.value[OPT_BPM]) &&
        pn_cli_real(command, "bpm", v, 20.0, 400.0, &req->bpm) != PN_EXIT_OK)
        return PN_EXIT_USAGE;
    if ((v = a.value[OPT_VELOCITY]) &&
        pn_cli_int(command, "velocity", v, 1, 127, &req->velocity) != PN_EXIT_OK)
        return PN_EXIT_USAGE;
    if ((v = a.value[OPT_DIVISION])) {
        if (pn_cli_int(command, "division", v, 1, 32, &req->division) != PN_EXIT_OK)
            return PN_EXIT_USAGE;
        if ((req->division & (req->division - 1)) != 0)
            return pn_cli_usage_error(command, "--division: expected 1, 2, 4, 8, 16 or 32, got %s",
                                      v);
    }
    if ((v = a.value[OPT_KEY])) {
        int tonic = 0;
        if (pn_cli_tonic(v, 0, &tonic) != 0)
            return pn_cli_usage_error(command,
                                      "--key: expected a tonic such as C, F#, Bb, got '%s'", v);
        req->shift = tonic <= 6 ? tonic : tonic - 12;
    }
    return pn_cli_check_output(command, "output", req->output);
}

static int compare_doubles(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int run(const sample_request *req, pn_cli_progress *progress)
{
    pn_error_info info = {PN_OK, ""};
    pn_rule_set *rs = NULL;
    int rc = pn_cli_load_rules(command, req->rules, req->settings.max_memory, &rs);
    if (rc != PN_EXIT_OK)
        return rc;
    const int k = rs->space.num_voices;
    rc = PN_EXIT_FAILURE;
    pn_generator *gen = NULL;
    pn_midi_writer *writer = NULL;
    double *step_seconds = malloc((size_t)req->steps * sizeof *step_seconds);
    if (!step_seconds) {
        fprintf(stderr, "parnassus sample: out of memory\n");
        goto done;
    }
    pn_settings settings = req->settings;
    pn_cli_rules_lambda_p(rs, req->lambda_p, &settings);
    const double t0 = pn_timer_now();
    if (pn_generator_create(rs, &settings, &gen, &info) != PN_OK) {
        rc = pn_cli_engine_error(command, req->rules, &info);
        goto done;
    }
    const double setup_seconds = pn_timer_now() - t0;
    const int first_selected = pn_generator_last_info(gen)->num_selected;

    pn_midi_writer_settings ws;
    pn_midi_writer_settings_default(&ws);
    ws.num_voices = k;
    ws.division = TICKS_PER_QUARTER;
    ws.tempo_bpm = req->bpm;
    ws.tie_repeats = req->ties;
    if (pn_midi_writer_create(&ws, &writer, &info) != PN_OK) {
        fprintf(stderr, "parnassus sample: %s\n", info.message);
        goto done;
    }
    const int ticks = TICKS_PER_QUARTER * 4 / req->division;
    pn_rng rng;
    pn_rng_seed(&rng, req->settings.seed);
    int pitches[PN_SPACE_MAX_VOICES], shifted[PN_SPACE_MAX_VOICES];
    int selected_min = rs->num_rules, selected_max = 0;
    for (int t = 0; t < req->steps; ++t) {
        const double ts = pn_timer_now();
        if (req->independent) {
            if (pn_generator_draw(gen, &rng, pitches) < 0) {
                fprintf(stderr, "parnassus sample: the realization has no mass\n");
                goto done;
            }
        } else if (pn_generator_step(gen, &rng, pitches, &info) != PN_OK) {
            char where[32];
            snprintf(where, sizeof where, "step %d", t + 1);
            /* an interruption, or the engine's failure (no mass, a
             * numerical breakdown): the input was read and is fine */
            if ((rc = pn_cli_engine_error(command, where, &info)) != PN_EXIT_INTERRUPTED)
                rc = PN_EXIT_FAILURE;
            goto done;
        }
        step_seconds[t] = pn_timer_now() - ts;
        const int sel = pn_generator_last_info(gen)->num_selected;
        selected_min = sel < selected_min ? sel : selected_min;
        selected_max = sel > selected_max ? sel : selected_max;
        for (int v = 0; v < k; ++v)
            shifted[v] = pitches[v] < 0 ? PN_MIDI_REST : pitches[v] + req->shift;
        if (pn_midi_add_sonority(writer, shifted, ticks, req->velocity, &info) != PN_OK) {
            fprintf(stderr, "parnassus sample: step %d: %s\n", t + 1, info.message);
            goto done;
        }
    }
    if (pn_cli_progress_end(progress)) {
        rc = pn_cli_interrupted(command);
        goto done;
    }
    if (pn_midi_write(writer, req->output, &info) != PN_OK) {
        fprintf(stderr, "parnassus sample: %s\n", info.message);
        goto done;
    }
    qsort(step_seconds, (size_t)req->steps, sizeof *step_seconds, compare_doubles);
    printf("wrote %s: %d sonorities of %d voices, 1/%d notes at %g bpm, key shift %+d\n",
           req->output, req->steps, k, req->division, req->bpm, req->shift);
    printf("rule set %s: %d rules; setup and first realization %.2f s, %d rules kept\n", rs->name,
           rs->num_rules, setup_seconds, first_selected);
    if (!req->independent)
        printf("per step (draw + re-realization): median %.1f ms, max %.1f ms; rules kept "
               "%d..%d\n",
               1e3 * step_seconds[req->steps / 2], 1e3 * step_seconds[req->steps - 1], selected_min,
               selected_max);
    if (pn_generator_recoveries(gen) > 0)
        printf("selection trap: %" PRIu64 " steps started again from the last steady selection "
               "(docs/generate.md)\n",
               pn_generator_recoveries(gen));
    rc = PN_EXIT_OK;
done:
    pn_midi_writer_free(writer);
    pn_generator_free(gen);
    pn_rule_set_free(rs);
    free(step_seconds);
    return rc;
}

int pn_cmd_sample(int argc, char **argv)
{
    sample_request req;
    int rc = parse_request(argc, argv, &req);
    if (rc != PN_EXIT_OK)
        return rc < 0 ? PN_EXIT_OK : rc;
    /* from here a Ctrl-C stops the solves (at once if one is running) */
    pn_cli_progress progress;
    pn_cli_progress_begin(&progress, command, &req.settings);
    rc = run(&req, &progress);
    pn_cli_progress_end(&progress);
    return rc;
}

/* parnassus baseline: a first-order Markov chain over whole sonorities,
 * learned from a corpus and sampled into a Standard MIDI File: the
 * yardstick of `parnassus evaluate` (docs/evaluate.md). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd_style.h"
#include "corpus_load.h"
#include "midi_file.h"
#include "options.h"
#include "parnassus/markov.h"
#include "parnassus/rng.h"

static const char command[] = "baseline";

enum {
    OPT_OUTPUT,
    OPT_SPLIT,
    OPT_MODE,
    OPT_TONIC,
    OPT_STEPS,
    OPT_SEED,
    OPT_KAPPA,
    OPT_BPM,
    OPT_DIVISION,
    NUM_OPTIONS
};

static const pn_cli_option baseline_options[NUM_OPTIONS] = {
    [OPT_OUTPUT] = {"output", 1}, [OPT_SPLIT] = {"split", 1}, [OPT_MODE] = {"mode", 1},
    [OPT_TONIC] = {"tonic", 1},   [OPT_STEPS] = {"steps", 1}, [OPT_SEED] = {"seed", 1},
    [OPT_KAPPA] = {"kappa", 1},   [OPT_BPM] = {"bpm", 1},     [OPT_DIVISION] = {"division", 1},
};

enum {
    DEFAULT_STEPS = 2000,
    MAX_STEPS = 1000000,
    DEFAULT_DIVISION = 8,
    TICKS_PER_QUARTER = 480,
    VELOCITY = 80,
    MAX_TICKS = 0x0FFFFFFF, /* the writer's limit: a sequence's length in ticks */
};

static void print_help(void)
{
    printf("usage: parnassus baseline CORPUS -o OUT.mid [options]\n"
           "\n"
           "Learns a first-order Markov chain over whole sonorities from CORPUS (a\n"
           "chorale file, .json, or a Standard MIDI File with one voice per track or\n"
           "channel) and writes a run drawn from it as a Standard MIDI File (format 1,\n"
           "one track per voice). The states are the corpus's sonority events (runs of\n"
           "equal steps merged); a transition never crosses two pieces; the chain is\n"
           "smoothed toward the unigram of all events like a rule set's contexts:\n"
           "P(y|x) = (c(x,y) + kappa P(y)) / (c(x) + kappa). The first sonority is\n"
           "drawn from the unigram.\n"
           "\n"
           "options:\n"
           "  -o, --output OUT  the MIDI file to write (required)\n"
           "  --split S         train, valid, test or all: the part of a chorale file\n"
           "                    (default train; ignored for MIDI files)\n"
           "  --mode M          major, minor or any: the pieces to learn from, by the key\n"
           "                    found (default major)\n"
           "  --tonic T         C, C#, Db, ..., B or 0..11: move every key there, or 'keep'\n"
           "                    (default C)\n"
           "  --steps N         sonorities to write, 1..%d (default %d)\n"
           "  --seed S          seed of the draws, 0 .. 2^63-1 (default 1)\n"
           "  --kappa K         smoothing toward the unigram, >= 0 (default 1; 0 replays\n"
           "                    the corpus's transitions)\n"
           "  --bpm B           tempo in quarter notes per minute, 20..400 (default 120)\n"
           "  --division D      note value of one step: 1, 2, 4, 8, 16 or 32 (default %d:\n"
           "                    eighth notes)\n"
           "  -h, --help        show this help\n"
           "\n"
           "Options take their value as '--opt VALUE' or '--opt=VALUE'.\n"
           "Exit status: 0 success, 1 failure, 2 bad usage or bad input file.\n",
           MAX_STEPS, DEFAULT_STEPS, DEFAULT_DIVISION);
}

typedef struct baseline_request {
    const char *corpus;
    const char *output;
    pn_cli_corpus_options corpus_options;
    int steps;
    uint64_t seed;
    double kappa;
    double bpm;
    int division;
} baseline_request;

/* Returns PN_EXIT_OK, PN_EXIT_USAGE, or -1 when help was printed. */
static int parse_request(int argc, char **argv, baseline_request *req)
{
    memset(req, 0, sizeof *req);
    pn_cli_corpus_options *o = &req->corpus_options;
    pn_cli_corpus_options_default(o);
    o->split = "train";
    o->mode = PN_CLI_MODE_MAJOR;
    o->tonic = 0;
    o->grid = 0;
    req->steps = DEFAULT_STEPS;
    req->seed = 1;
    req->kappa = PN_MARKOV_DEFAULT_KAPPA;
    req->bpm = 120.0;
    req->division = DEFAULT_DIVISION;
    pn_cli_args a;
    int rc = pn_cli_parse(command, baseline_options, NUM_OPTIONS, 1, argc, argv, &a);
    if (rc != PN_EXIT_OK)
        return rc;
    if (a.help) {
        print_help();
        return -1;
    }
    const char *v;
    if ((v = a.value[OPT_SPLIT]) && pn_cli_corpus_split(command, v, &o->split) != PN_EXIT_OK)
        return PN_EXIT_USAGE;
    if ((v = a.value[OPT_MODE]) && pn_cli_corpus_mode(command, v, &o->mode) != PN_EXIT_OK)
        return PN_EXIT_USAGE;
    if ((v = a.value[OPT_TONIC]) && pn_cli_corpus_tonic(command, v, &o->tonic) != PN_EXIT_OK)
        return PN_EXIT_USAGE;
    if ((v = a.value[OPT_STEPS]) &&
        pn_cli_int(command, "steps", v, 1, MAX_STEPS, &req->steps) != PN_EXIT_OK)
        return PN_EXIT_USAGE;
    if ((v = a.value[OPT_SEED]) && pn_cli_seed(command, "seed", v, &req->seed) != PN_EXIT_OK)
        return PN_EXIT_USAGE;
    if ((v = a.value[OPT_KAPPA]) &&
        pn_cli_real(command, "kappa", v, 0.0, 1e12, &req->kappa) != PN_EXIT_OK)
        return PN_EXIT_USAGE;
    if ((v = a.value[OPT_BPM]) &&
        pn_cli_real(command, "bpm", v, 20.0, 400.0, &req->bpm) != PN_EXIT_OK)
        return PN_EXIT_USAGE;
    if ((v = a.value[OPT_DIVISION])) {
        if (pn_cli_int(command, "division", v, 1, 32, &req->division) != PN_EXIT_OK)
            return PN_EXIT_USAGE;
        if ((req->division & (req->division - 1)) != 0)
            return pn_cli_usage_error(command, "--division: expected 1, 2, 4, 8, 16 or 32, got %s",
                                      v);
    }
    const long long ticks = (long long)req->steps * (TICKS_PER_QUARTER * 4 / req->division);
    if (ticks > MAX_TICKS)
        return pn_cli_usage_error(command,
                                  "--steps %d of 1/%d notes is longer than a MIDI file holds (%lld "
                                  "ticks, at most %d)",
                                  req->steps, req->division, ticks, MAX_TICKS);
    if (a.num_args < 1)
        return pn_cli_usage_error(command, "missing CORPUS");
    req->corpus = a.arg[0];
    req->output = a.value[OPT_OUTPUT];
    if (!req->output || req->output[0] == '\0')
        return pn_cli_usage_error(command, "missing -o OUT.mid");
    return pn_cli_check_output(command, "output", req->output);
}

static int status_of(pn_error code)
{
    return code == PN_ERR_NOMEM || code == PN_ERR_NUMERIC ? PN_EXIT_FAILURE : PN_EXIT_USAGE;
}

static int run(const baseline_request *req)
{
    pn_error_info info = {PN_OK, ""};
    pn_corpus *corpus = NULL;
    pn_markov *chain = NULL;
    pn_midi_writer *writer = NULL;
    char summary[512];
    int rc = PN_EXIT_FAILURE;
    pn_error code = pn_cli_load_corpus(req->corpus, &req->corpus_options, &corpus, summary,
                                       sizeof summary, &info);
    if (code != PN_OK) {
        fprintf(stderr, "parnassus %s: %s\n", command, info.message);
        rc = status_of(code);
        goto done;
    }
    if (corpus->num_pieces == 0) {
        fprintf(stderr, "parnassus %s: %s: no piece left to learn from (%s)\n", command,
                req->corpus, summary);
        rc = PN_EXIT_USAGE;
        goto done;
    }
    if ((code = pn_markov_learn(corpus, req->kappa, &chain, &info)) != PN_OK) {
        fprintf(stderr, "parnassus %s: %s: %s\n", command, req->corpus, info.message);
        rc = status_of(code);
        goto done;
    }
    const int k = pn_markov_num_voices(chain);
    pn_midi_writer_settings ws;
    pn_midi_writer_settings_default(&ws);
    ws.num_voices = k;
    ws.division = TICKS_PER_QUARTER;
    ws.tempo_bpm = req->bpm;
    ws.tie_repeats = 1;
    if (pn_midi_writer_create(&ws, &writer, &info) != PN_OK) {
        fprintf(stderr, "parnassus %s: %s\n", command, info.message);
        rc = status_of(info.code);
        goto done;
    }
    const int ticks = TICKS_PER_QUARTER * 4 / req->division;
    pn_rng rng;
    pn_rng_seed(&rng, req->seed);
    int32_t state = -1;
    int pitches[PN_MARKOV_MAX_VOICES];
    for (int t = 0; t < req->steps; ++t) {
        state = pn_markov_draw(chain, state, &rng);
        const int8_t *s = pn_markov_state(chain, state);
        for (int v = 0; v < k; ++v)
            pitches[v] = s[v] < 0 ? PN_MIDI_REST : s[v];
        if (pn_midi_add_sonority(writer, pitches, ticks, VELOCITY, &info) != PN_OK) {
            fprintf(stderr, "parnassus %s: step %d: %s\n", command, t + 1, info.message);
            goto done;
        }
    }
    if (pn_midi_write(writer, req->output, &info) != PN_OK) {
        fprintf(stderr, "parnassus %s: %s\n", command, info.message);
        remove(req->output);
        goto done;
    }
    printf("wrote %s: %d sonorities of %d voices, 1/%d notes at %g bpm, seed %" PRIu64 "\n",
           req->output, req->steps, k, req->division, req->bpm, req->seed);
    printf("chain: %" PRId32 " states, %" PRId64 " distinct transitions, %" PRId64
           " events, kappa %g\n",
           pn_markov_num_states(chain), pn_markov_num_transitions(chain),
           pn_markov_num_events(chain), pn_markov_kappa(chain));
    printf("corpus: %s\n", summary);
    rc = PN_EXIT_OK;
done:
    pn_midi_writer_free(writer);
    pn_markov_free(chain);
    pn_corpus_free(corpus);
    return rc;
}

int pn_cmd_baseline(int argc, char **argv)
{
    baseline_request req;
    int rc = parse_request(argc, argv, &req);
    if (rc != PN_EXIT_OK)
        return rc < 0 ? PN_EXIT_OK : rc;
    return run(&req);
}

/* parnassus baseline: a first-order Markov chain over whole sonorities,
 * learned from a corpus and sampled into a Standard MIDI File: the
 * yardstick of `parnassus evaluate` (docs/evaluate.md). */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd_style.h"
#include "corpus_load.h"
#include "midi_file.h"
#include "midi_notes.h"
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
    OPT_MIDI_IN_FILE,
    OPT_INPUT_VOICE,
    OPT_KEY,
    OPT_OCTAVE,
    OPT_GRID,
    NUM_OPTIONS
};

static const pn_cli_option baseline_options[NUM_OPTIONS] = {
    [OPT_OUTPUT] = {"output", 1},
    [OPT_SPLIT] = {"split", 1},
    [OPT_MODE] = {"mode", 1},
    [OPT_TONIC] = {"tonic", 1},
    [OPT_STEPS] = {"steps", 1},
    [OPT_SEED] = {"seed", 1},
    [OPT_KAPPA] = {"kappa", 1},
    [OPT_BPM] = {"bpm", 1},
    [OPT_DIVISION] = {"division", 1},
    [OPT_MIDI_IN_FILE] = {"midi-in-file", 1},
    [OPT_INPUT_VOICE] = {"input-voice", 1},
    [OPT_KEY] = {"key", 1},
    [OPT_OCTAVE] = {"octave", 1},
    [OPT_GRID] = {"grid", 1},
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
           "  --grid G          events (or 0): the corpus's changes of sonority (default);\n"
           "                    N (1..64): its sonority every N sixteenth notes\n"
           "  --steps N         sonorities to write, 1..%d (default %d)\n"
           "  --seed S          seed of the draws, 0 .. 2^63-1 (default 1)\n"
           "  --kappa K         smoothing toward the unigram, >= 0 (default 1; 0 replays\n"
           "                    the corpus's transitions)\n"
           "  --bpm B           tempo in quarter notes per minute, 20..400 (default 120)\n"
           "  --division D      note value of one step: 1, 2, 4, 8, 16 or 32 (default %d:\n"
           "                    eighth notes)\n"
           "  --midi-in-file F  harmonize the keys of F (.mid) as the plugin's input mode\n"
           "                    does: at each step the key held last (moved to the\n"
           "                    chain's tonic, and by octaves into the voice's range) is\n"
           "                    the input voice, the state drawn given it; a step with no\n"
           "                    key held is silent. As many steps as F lasts (--steps is\n"
           "                    not used)\n"
           "  --input-voice V   soprano or bass: the voice the key held is (default\n"
           "                    soprano)\n"
           "  --key K           the key F is in: C, C#, Db, ..., B or 0..11 (default C);\n"
           "                    its keys move from K to the chain's tonic, the harmony\n"
           "                    back to K\n"
           "  --octave N        -3..3: the harmony N octaves up from there, the keys N\n"
           "                    octaves down into it, as the plugin's octave port\n"
           "                    (default 0)\n"
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
    const char *midi_in; /* --midi-in-file, or NULL */
    int input_bass;      /* --input-voice bass */
    int key;             /* --key: 0..11 */
    int octave;          /* --octave: -3..3 */
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
    if ((v = a.value[OPT_GRID]) && pn_cli_corpus_grid(command, v, &o->grid) != PN_EXIT_OK)
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
    req->midi_in = a.value[OPT_MIDI_IN_FILE];
    if ((v = a.value[OPT_INPUT_VOICE])) {
        if (strcmp(v, "soprano") != 0 && strcmp(v, "bass") != 0)
            return pn_cli_usage_error(command, "--input-voice: expected soprano or bass, got '%s'",
                                      v);
        req->input_bass = strcmp(v, "bass") == 0;
    }
    if ((v = a.value[OPT_KEY]) && pn_cli_tonic(v, 0, &req->key) != 0)
        return pn_cli_usage_error(command, "--key: expected a tonic such as C, F#, Bb, got '%s'",
                                  v);
    if ((v = a.value[OPT_OCTAVE]) &&
        pn_cli_int(command, "octave", v, -3, 3, &req->octave) != PN_EXIT_OK)
        return PN_EXIT_USAGE;
    if (!req->midi_in && (a.value[OPT_INPUT_VOICE] || a.value[OPT_KEY] || a.value[OPT_OCTAVE]))
        return pn_cli_usage_error(command,
                                  "--input-voice, --key and --octave go with --midi-in-file");
    if (req->midi_in && o->tonic < 0)
        return pn_cli_usage_error(command,
                                  "--midi-in-file needs the corpus moved to one tonic, not "
                                  "--tonic keep");
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

/* ---- harmonizing the keys of a MIDI file (--midi-in-file) ---- */

/* The keys held, kept as the plugin's input mode keeps them: a note-on
 * puts its key last, a note-off takes it out; the last one is played. */
typedef struct held_keys {
    int key[128];
    int count;
} held_keys;

static void hold(held_keys *h, const pn_midi_note_event *e)
{
    for (int i = 0; i < h->count; ++i)
        if (h->key[i] == e->key) {
            memmove(&h->key[i], &h->key[i + 1], (size_t)(h->count - i - 1) * sizeof h->key[0]);
            --h->count;
            break;
        }
    if (e->on)
        h->key[h->count++] = e->key;
}

typedef struct harmony_report {
    int steps, sounding; /* steps written; of them, with a key held */
    int fallbacks;       /* keys no state has in the voice: drawn without, the key put in */
} harmony_report;

/* One step per 1/division of the file, the key held at the step's tick
 * (events at that tick count, as the plugin reads them before its step)
 * the input voice, the other voices drawn given it; the music moved by
 * `shift` semitones (the melody's key from the chain's tonic). */
static pn_error harmonize(const baseline_request *req, const pn_markov *chain,
                          const pn_midi_notes *notes, int shift, pn_rng *rng,
                          pn_midi_writer *writer, harmony_report *report, pn_error_info *info)
{
    const int k = pn_markov_num_voices(chain);
    const int voice = req->input_bass ? k - 1 : 0;
    int low = 0, high = 0;
    if (!pn_markov_voice_range(chain, voice, &low, &high))
        return pn_fail(info, PN_ERR_INVALID, "%s: the chain's %s never sounds", req->corpus,
                       req->input_bass ? "bass" : "soprano");
    const double step_ticks = notes->division * 4.0 / req->division;
    const double count = ceil(notes->length_ticks / step_ticks);
    const int ticks = TICKS_PER_QUARTER * 4 / req->division;
    if (count * ticks > MAX_TICKS)
        return pn_fail(info, PN_ERR_INVALID,
                       "%s: %g steps of 1/%d notes are longer than a MIDI file holds", req->midi_in,
                       count, req->division);
    const int steps = count < 1.0 ? 1 : (int)count;
    held_keys held = {.count = 0};
    int32_t state = -1, e = 0;
    int pitches[PN_MARKOV_MAX_VOICES];
    for (int t = 0; t < steps; ++t) {
        const double at = t * step_ticks;
        for (; e < notes->count && notes->events[e].tick <= at + 1e-9; ++e)
            hold(&held, &notes->events[e]);
        if (held.count == 0) { /* silent, as the plugin is with no key held */
            for (int v = 0; v < k; ++v)
                pitches[v] = PN_MIDI_REST;
        } else {
            int p = held.key[held.count - 1] - shift;
            while (p > high && p - 12 >= 0)
                p -= 12;
            while (p < low && p + 12 <= 127)
                p += 12;
            int32_t y = pn_markov_draw_given(chain, state, voice, p, rng);
            const int fallback = y < 0;
            if (fallback) {
                y = pn_markov_draw(chain, state, rng);
                report->fallbacks++;
            }
            state = y;
            const int8_t *st = pn_markov_state(chain, y);
            for (int v = 0; v < k; ++v) {
                const int q = fallback && v == voice ? p : st[v];
                pitches[v] = q < 0 || q + shift < 0 || q + shift > 127 ? PN_MIDI_REST : q + shift;
            }
            report->sounding++;
        }
        pn_error err = pn_midi_add_sonority(writer, pitches, ticks, VELOCITY, info);
        if (err != PN_OK)
            return err;
    }
    report->steps = steps;
    return PN_OK;
}

static int run(const baseline_request *req)
{
    pn_error_info info = {PN_OK, ""};
    pn_corpus *corpus = NULL;
    pn_markov *chain = NULL;
    pn_midi_writer *writer = NULL;
    pn_midi_notes *notes = NULL;
    char summary[512];
    int rc = PN_EXIT_FAILURE;
    if (req->midi_in && pn_midi_read_notes(req->midi_in, &notes, &info) != PN_OK) {
        fprintf(stderr, "parnassus %s: --midi-in-file: %s\n", command, info.message);
        return status_of(info.code);
    }
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
    harmony_report harmony = {0, 0, 0};
    /* the melody's key to the chain's tonic, by the nearest shift */
    const int to_key = ((req->key - req->corpus_options.tonic) % 12 + 12) % 12;
    const int shift = (to_key <= 6 ? to_key : to_key - 12) + 12 * req->octave;
    if (notes && harmonize(req, chain, notes, shift, &rng, writer, &harmony, &info) != PN_OK) {
        fprintf(stderr, "parnassus %s: %s\n", command, info.message);
        rc = status_of(info.code);
        goto done;
    }
    int32_t state = -1;
    int pitches[PN_MARKOV_MAX_VOICES];
    for (int t = 0; !notes && t < req->steps; ++t) {
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
           req->output, notes ? harmony.steps : req->steps, k, req->division, req->bpm, req->seed);
    if (notes)
        printf("harmonized %s: %d of the steps with a key held (the %s), %d of them drawn "
               "without it (no state has that key there)\n",
               req->midi_in, harmony.sounding, req->input_bass ? "bass" : "soprano",
               harmony.fallbacks);
    printf("chain: %" PRId32 " states, %" PRId64 " distinct transitions, %" PRId64
           " events, kappa %g\n",
           pn_markov_num_states(chain), pn_markov_num_transitions(chain),
           pn_markov_num_events(chain), pn_markov_kappa(chain));
    printf("corpus: %s\n", summary);
    rc = PN_EXIT_OK;
done:
    pn_midi_writer_free(writer);
    pn_midi_notes_free(notes);
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

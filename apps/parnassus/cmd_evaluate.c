/* parnassus evaluate: style statistics of music against a reference
 * (docs/evaluate.md). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd_style.h"
#include "options.h"
#include "parnassus/style.h"
#include "plot.h"
#include "plot_style.h"
#include "style_input.h"
#include "style_report.h"

static const char command[] = "evaluate";

enum {
    OPT_REFERENCE,
    OPT_SPLIT,
    OPT_MODE,
    OPT_TRAINING,
    OPT_JSON,
    OPT_PLOT,
    OPT_SAVE,
    OPT_NAME,
    NUM_OPTIONS
};

static const pn_cli_option evaluate_options[NUM_OPTIONS] = {
    [OPT_REFERENCE] = {"reference", 1}, [OPT_SPLIT] = {"split", 1}, [OPT_MODE] = {"mode", 1},
    [OPT_TRAINING] = {"training", 1},   [OPT_JSON] = {"json", 0},   [OPT_PLOT] = {"plot", 1},
    [OPT_SAVE] = {"save", 1},           [OPT_NAME] = {"name", 1},
};

enum { NAME_MAX_BYTES = 200 };

static void print_help(void)
{
    printf("usage: parnassus evaluate INPUT... [options]\n"
           "\n"
           "Measures the style of INPUT against a reference: chord types, the motion\n"
           "of each voice, spacing, doubling, root motion, the tonal profile,\n"
           "registers and each voice's span within a phrase as distributions (each\n"
           "with its total variation distance to the reference's), and the rates of\n"
           "parallel and hidden fifths and octaves, wide spacing, voice crossing,\n"
           "authentic root motion and of 4-grams copied from the training corpus\n"
           "(copy4). An INPUT is a Standard MIDI File (a piece or a generated run), a\n"
           "chorale file (.json, the JSB form) or a statistics file (.json,\n"
           "\"parnassus-style/1\", as written by --save); several are pooled.\n"
           "\n"
           "options:\n"
           "  --reference R     major or minor: the shipped statistics of the JSB\n"
           "                    chorales' valid split in that mode (default major);\n"
           "                    FILE: a statistics file; none: no comparison\n"
           "  --split S         train, valid, test or all: the part of a chorale file to\n"
           "                    read (default all)\n"
           "  --mode M          major, minor or any: the chorales to keep, by the key\n"
           "                    found (default any)\n"
           "  --training FILE   copy4 against this training set: a chorale file (its\n"
           "                    train split, pieces of --mode or else of the reference's\n"
           "                    mode) or a statistics file holding one (default: the\n"
           "                    reference's own)\n"
           "  --json            print one JSON object (parnassus-evaluate/1) instead of\n"
           "                    the table\n"
           "  --plot OUT        draw the distributions and rates side by side (.png or\n"
           "                    .svg)\n"
           "  --save OUT        write the input's statistics (parnassus-style/1), with the\n"
           "                    training set of --training when given: a reference of your\n"
           "                    own\n"
           "  --name NAME       the name written by --save (default: OUT's file name)\n"
           "  -h, --help        show this help\n"
           "\n"
           "Options take their value as '--opt VALUE' or '--opt=VALUE'.\n"
           "Exit status: 0 success, 1 failure, 2 bad usage or bad input file.\n");
}

typedef struct evaluate_request {
    const char *inputs[PN_CLI_MAX_ARGS];
    int num_inputs;
    const char *reference; /* "major", "minor", "none" or a file */
    const char *training;
    const char *plot;
    const char *save;
    const char *name;
    const char *mode_text; /* --mode as given, or NULL */
    int json;
    pn_cli_style_filter filter;
} evaluate_request;

/* Returns PN_EXIT_OK, PN_EXIT_USAGE, or -1 when help was printed. */
static int parse_request(int argc, char **argv, evaluate_request *req)
{
    memset(req, 0, sizeof *req);
    req->reference = "major";
    req->filter.mode = PN_CLI_MODE_ANY;
    pn_cli_args a;
    int rc = pn_cli_parse(command, evaluate_options, NUM_OPTIONS, PN_CLI_MAX_ARGS, argc, argv, &a);
    if (rc != PN_EXIT_OK)
        return rc;
    if (a.help) {
        print_help();
        return -1;
    }
    const char *v;
    if ((v = a.value[OPT_SPLIT]) &&
        pn_cli_corpus_split(command, v, &req->filter.split) != PN_EXIT_OK)
        return PN_EXIT_USAGE;
    if ((v = a.value[OPT_MODE])) {
        if (pn_cli_corpus_mode(command, v, &req->filter.mode) != PN_EXIT_OK)
            return PN_EXIT_USAGE;
        req->mode_text = v;
    }
    if ((v = a.value[OPT_REFERENCE]))
        req->reference = v;
    if ((v = a.value[OPT_PLOT]) && !pn_plot_format_known(v))
        return pn_cli_usage_error(command, "--plot: '%s' must end in .png or .svg", v);
    req->plot = v;
    if ((v = a.value[OPT_NAME]) && strlen(v) > NAME_MAX_BYTES)
        return pn_cli_usage_error(command, "--name is longer than %d bytes", NAME_MAX_BYTES);
    req->name = v;
    if (req->name && !a.value[OPT_SAVE])
        return pn_cli_usage_error(command, "--name only goes with --save");
    req->save = a.value[OPT_SAVE];
    req->training = a.value[OPT_TRAINING];
    req->json = a.value[OPT_JSON] != NULL;
    if (a.num_args < 1)
        return pn_cli_usage_error(command, "missing INPUT (a MIDI file, a chorale file or a "
                                           "statistics file)");
    for (int i = 0; i < a.num_args; ++i)
        req->inputs[i] = a.arg[i];
    req->num_inputs = a.num_args;
    if (pn_cli_check_output(command, "plot", req->plot) != PN_EXIT_OK ||
        pn_cli_check_output(command, "save", req->save) != PN_EXIT_OK)
        return PN_EXIT_USAGE;
    return PN_EXIT_OK;
}

/* An exit status for an engine error: bad input or a failure. */
static int status_of(pn_error code)
{
    return code == PN_ERR_NOMEM || code == PN_ERR_NUMERIC ? PN_EXIT_FAILURE : PN_EXIT_USAGE;
}

static int report_error(const pn_error_info *info)
{
    fprintf(stderr, "parnassus %s: %s\n", command, info->message);
    return status_of(info->code);
}

/* The mode whose train split a chorale training set is taken from. */
static pn_cli_mode_filter training_mode(const evaluate_request *req, const pn_style_file *ref)
{
    if (req->filter.mode != PN_CLI_MODE_ANY)
        return req->filter.mode;
    if (ref && ref->mode && strcmp(ref->mode, "major") == 0)
        return PN_CLI_MODE_MAJOR;
    if (ref && ref->mode && strcmp(ref->mode, "minor") == 0)
        return PN_CLI_MODE_MINOR;
    return PN_CLI_MODE_ANY;
}

/* "NAME" or "NAME and 2 more", for titles. */
static void inputs_label(const evaluate_request *req, char *buf, size_t size)
{
    if (req->num_inputs == 1)
        snprintf(buf, size, "%s", pn_cli_basename(req->inputs[0]));
    else
        snprintf(buf, size, "%s and %d more", pn_cli_basename(req->inputs[0]), req->num_inputs - 1);
}

/* What was measured, for the description of a saved file. */
static void describe_inputs(const evaluate_request *req, const pn_cli_style_source *src, char *buf,
                            size_t size)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int i = 0; i < req->num_inputs && used + 1 < size; ++i) {
        int n;
        const char *base = pn_cli_basename(src[i].file);
        if (src[i].kind == PN_CLI_STYLE_CHORALES)
            n = snprintf(buf + used, size - used, "%s%s%s of %s, %s: %" PRId64 " chorales",
                         i ? "; " : "", req->filter.split ? req->filter.split : "all splits",
                         req->filter.split ? " split" : "", base,
                         req->mode_text ? req->mode_text : "any mode", src[i].pieces);
        else
            n = snprintf(buf + used, size - used, "%s%s: %" PRId64 " piece%s", i ? "; " : "", base,
                         src[i].pieces, src[i].pieces == 1 ? "" : "s");
        if (n < 0)
            break;
        used = used + (size_t)n < size ? used + (size_t)n : size - 1;
    }
}

/* The default name of a saved file: its file name without ".json". */
static void default_name(const char *path, char *buf, size_t size)
{
    const char *base = pn_cli_basename(path);
    size_t len = strlen(base);
    if (len > 5 && strcmp(base + len - 5, ".json") == 0)
        len -= 5;
    if (len >= size)
        len = size - 1;
    memcpy(buf, base, len);
    buf[len] = '\0';
}

static int save_statistics(const evaluate_request *req, const pn_style_stats *stats,
                           const pn_cli_style_source *src, const pn_style_grams *training,
                           const char *training_description)
{
    pn_error_info info = {PN_OK, ""};
    pn_style_file *f = NULL;
    char name[NAME_MAX_BYTES + 1], description[2048];
    if (req->name)
        snprintf(name, sizeof name, "%s", req->name);
    else
        default_name(req->save, name, sizeof name);
    describe_inputs(req, src, description, sizeof description);
    int rc = PN_EXIT_FAILURE;
    if (pn_style_file_create(&f, &info) != PN_OK ||
        pn_style_file_set(&f->name, name, &info) != PN_OK ||
        pn_style_file_set(&f->description, description, &info) != PN_OK ||
        pn_style_file_set(&f->mode, req->mode_text, &info) != PN_OK) {
        fprintf(stderr, "parnassus %s: %s\n", command, info.message);
        goto done;
    }
    f->stats = *stats;
    if (req->training && training) {
        f->has_training = 1;
        f->training = *training; /* borrowed: detached before freeing */
        if (pn_style_file_set(&f->training_description, training_description, &info) != PN_OK) {
            fprintf(stderr, "parnassus %s: %s\n", command, info.message);
            goto done;
        }
    }
    FILE *out = fopen(req->save, "w");
    if (!out) {
        fprintf(stderr, "parnassus %s: %s: cannot open: %s\n", command, req->save, strerror(errno));
        goto done;
    }
    pn_error code = pn_style_write(f, out, req->save, &info);
    if (fclose(out) != 0 && code == PN_OK)
        code = pn_fail(&info, PN_ERR_IO, "%s: cannot write: %s", req->save, strerror(errno));
    if (code != PN_OK) {
        fprintf(stderr, "parnassus %s: %s\n", command, info.message);
        remove(req->save);
        rc = code == PN_ERR_INVALID ? PN_EXIT_USAGE : PN_EXIT_FAILURE;
        goto done;
    }
    rc = PN_EXIT_OK;
done:
    if (f) {
        f->training.hash = NULL;
        f->training.count = 0;
    }
    pn_style_file_free(f);
    return rc;
}

static int run(const evaluate_request *req)
{
    pn_error_info info = {PN_OK, ""};
    pn_style_file *ref = NULL;
    pn_style_grams own_training = {0, NULL};
    const pn_style_grams *training = NULL;
    const char *training_description = NULL;
    char ref_path[4096] = "", own_description[1024] = "";
    pn_style_acc *acc = NULL;
    pn_style_stats *pooled = calloc(1, sizeof *pooled);
    pn_cli_style_source *src = calloc((size_t)req->num_inputs, sizeof *src);
    int rc = PN_EXIT_FAILURE;
    if (!pooled || !src) {
        fprintf(stderr, "parnassus %s: out of memory\n", command);
        goto done;
    }
    if (strcmp(req->reference, "none") != 0 &&
        pn_cli_style_reference(req->reference, &ref, ref_path, sizeof ref_path, &info) != PN_OK) {
        rc = report_error(&info);
        goto done;
    }
    if (req->training) {
        if (pn_cli_style_training(req->training, training_mode(req, ref), &own_training,
                                  own_description, sizeof own_description, &info) != PN_OK) {
            rc = report_error(&info);
            goto done;
        }
        training = &own_training;
        training_description = own_description;
    } else if (ref && ref->has_training) {
        training = &ref->training;
        training_description =
            ref->training_description ? ref->training_description : "the reference's training set";
    }
    pn_style_options so;
    pn_style_options_default(&so);
    so.training = training;
    if (pn_style_acc_create(&so, &acc, &info) != PN_OK) {
        rc = report_error(&info);
        goto done;
    }
    for (int i = 0; i < req->num_inputs; ++i)
        if (pn_cli_style_add_input(req->inputs[i], &req->filter, acc, pooled, &src[i], &info) !=
            PN_OK) {
            rc = report_error(&info);
            goto done;
        }
    pn_style_stats_add(pooled, pn_style_acc_stats(acc));
    if (pooled->sonorities == 0) {
        char label[512];
        inputs_label(req, label, sizeof label);
        fprintf(stderr, "parnassus %s: %s: no sonorities to measure (%s)\n", command, label,
                src[req->num_inputs - 1].summary);
        rc = PN_EXIT_USAGE;
        goto done;
    }

    /* the files first: on failure nothing is printed */
    if (req->plot) {
        char label[512], title[1200], in_label[700], ref_label[700];
        inputs_label(req, label, sizeof label);
        if (ref)
            snprintf(title, sizeof title, "Style of %s against %s", label,
                     ref->name ? ref->name : pn_cli_basename(ref_path));
        else
            snprintf(title, sizeof title, "Style of %s", label);
        snprintf(in_label, sizeof in_label, "%s (%" PRId64 " sonorities)", label,
                 pooled->sonorities);
        snprintf(ref_label, sizeof ref_label, "%s (%" PRId64 " sonorities)",
                 ref && ref->name ? ref->name : pn_cli_basename(ref_path),
                 ref ? ref->stats.sonorities : 0);
        if (pn_plot_style(req->plot, title, pooled, in_label, ref ? &ref->stats : NULL, ref_label,
                          &info) != PN_OK) {
            fprintf(stderr, "parnassus %s: %s\n", command, info.message);
            goto done;
        }
    }
    if (req->save &&
        (rc = save_statistics(req, pooled, src, training, training_description)) != PN_EXIT_OK)
        goto done;
    pn_cli_evaluation e = {src,
                           req->num_inputs,
                           pooled,
                           ref,
                           ref ? ref_path : NULL,
                           NULL,
                           training ? training->count : 0};
    e.training = training ? training_description : NULL;
    rc = PN_EXIT_FAILURE;
    if (req->json ? pn_cli_style_json(stdout, &e) != 0 : pn_cli_style_print(stdout, &e) != 0)
        goto done;
    rc = PN_EXIT_OK;
done:
    pn_style_acc_free(acc);
    pn_style_grams_free(&own_training);
    pn_style_file_free(ref);
    free(src);
    free(pooled);
    return rc;
}

int pn_cmd_evaluate(int argc, char **argv)
{
    evaluate_request req;
    int rc = parse_request(argc, argv, &req);
    if (rc != PN_EXIT_OK)
        return rc < 0 ? PN_EXIT_OK : rc;
    return run(&req);
}

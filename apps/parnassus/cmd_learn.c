/* parnassus learn: a rule set's targets from chorales or a MIDI file
 * (docs/learning.md). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "corpus_load.h"
#include "default_features.h"
#include "options.h"
#include "parnassus/file.h"
#include "parnassus/learn.h"
#include "parnassus/rules.h"

static const char command[] = "learn";

enum {
    OPT_OUTPUT,
    OPT_FEATURES,
    OPT_RANGES,
    OPT_MODE,
    OPT_TONIC,
    OPT_SPLIT,
    OPT_GRID,
    OPT_NAME,
    OPT_ADD,
    NUM_OPTIONS
};

static const pn_cli_option learn_options[NUM_OPTIONS] = {
    [OPT_OUTPUT] = {"output", 1}, [OPT_FEATURES] = {"features", 1}, [OPT_RANGES] = {"ranges", 1},
    [OPT_MODE] = {"mode", 1},     [OPT_TONIC] = {"tonic", 1},       [OPT_SPLIT] = {"split", 1},
    [OPT_GRID] = {"grid", 1},     [OPT_NAME] = {"name", 1},         [OPT_ADD] = {"add", 1},
};

static void print_help(void)
{
    printf("usage: parnassus learn CORPUS -o RULES.json [options]\n"
           "\n"
           "Learns the targets of a rule set from CORPUS: a chorale file (.json, the\n"
           "JSB form {\"train\": [...], ...}) or a Standard MIDI File (one voice per\n"
           "track or channel). Every piece is moved to a common tonic; each rule's\n"
           "targets become the distribution of its feature over the sonorities, and\n"
           "a rule with a context gets one distribution per previous context value.\n"
           "\n"
           "options:\n"
           "  -o, --output FILE  the rule set to write ('-' for standard output; required)\n"
           "  --features FILE    rule set or feature file whose space, features, contexts\n"
           "                     and smoothing are used (default: the built-in set)\n"
           "  --ranges R         the space to learn over instead of the features' own:\n"
           "                     LO-HI for every voice (e.g. 31-84), or one LO-HI per\n"
           "                     voice, soprano first (e.g. 57-83,50-78,45-72,33-67);\n"
           "                     MIDI pitches 0..127\n"
           "  --mode M           major, minor or any: which pieces to learn from (default major)\n"
           "  --tonic T          C, C#, Db, ..., B or 0..11: move every key there, or\n"
           "                     'keep' to leave the pieces as they are (default C)\n"
           "  --split S          train, valid, test or all: the chorale file's part\n"
           "                     (default all; ignored for MIDI files)\n"
           "  --grid G           events (or 0): one step per change of sonority (default);\n"
           "                     N (1..%d): one step every N sixteenth notes\n"
           "  --name NAME        name of the learned set (default: the output's file name)\n"
           "  --add FILE         add the rules and constraints of the rule set FILE (same\n"
           "                     space) as written: marked \"learn\": false, they are not\n"
           "                     learned, now or when the output is learned again\n"
           "  -h, --help         show this help\n"
           "\n"
           "Options take their value as '--opt VALUE' or '--opt=VALUE'.\n"
           "Exit status: 0 success, 1 failure, 2 bad usage or bad input file.\n",
           PN_CLI_MAX_GRID);
}

typedef struct learn_request {
    const char *corpus;
    const char *output;
    const char *features;
    const char *name;
    const char *add;         /* --add FILE, or NULL */
    const char *ranges_text; /* --ranges as given, or NULL */
    int num_ranges;          /* 0 without --ranges; 1: the same for every voice */
    int low[PN_SPACE_MAX_VOICES], high[PN_SPACE_MAX_VOICES];
    pn_cli_corpus_options corpus_options;
} learn_request;

/* Parses --ranges: "LO-HI" or "LO-HI,LO-HI,..." (MIDI pitches 0..127,
 * LO <= HI, at most PN_SPACE_MAX_VOICES ranges) into req. Prints a usage
 * error naming the bad part and returns PN_EXIT_USAGE, or PN_EXIT_OK. */
static int parse_ranges(const char *text, learn_request *req)
{
    const char *p = text;
    int count = 0;
    for (;;) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        long value[2] = {-1, -1};
        size_t i = 0;
        int ok = 1;
        for (int k = 0; k < 2 && ok; ++k) {
            size_t digits = 0;
            long x = 0;
            while (i < len && p[i] >= '0' && p[i] <= '9' && digits < 4) {
                x = 10 * x + (p[i] - '0');
                ++i;
                ++digits;
            }
            ok = digits > 0 && !(i < len && p[i] >= '0' && p[i] <= '9');
            value[k] = x;
            if (k == 0)
                ok = ok && i < len && p[i++] == '-';
        }
        if (!ok || i != len)
            return pn_cli_usage_error(command,
                                      "--ranges: '%.*s' is not LO-HI (in '%s'; give LO-HI, or "
                                      "one LO-HI per voice separated by commas)",
                                      (int)len, p, text);
        if (value[0] > 127 || value[1] > 127)
            return pn_cli_usage_error(
                command, "--ranges: '%.*s' is outside the MIDI pitches 0..127", (int)len, p);
        if (value[0] > value[1])
            return pn_cli_usage_error(command, "--ranges: '%.*s': low %ld is above high %ld",
                                      (int)len, p, value[0], value[1]);
        if (count == PN_SPACE_MAX_VOICES)
            return pn_cli_usage_error(command, "--ranges: more than %d ranges in '%s'",
                                      PN_SPACE_MAX_VOICES, text);
        req->low[count] = (int)value[0];
        req->high[count] = (int)value[1];
        ++count;
        if (!end)
            break;
        p = end + 1;
    }
    req->num_ranges = count;
    req->ranges_text = text;
    return PN_EXIT_OK;
}

/* Fills req; returns PN_EXIT_OK, PN_EXIT_USAGE, or -1 when help was
 * printed. */
static int parse_request(int argc, char **argv, learn_request *req)
{
    pn_cli_args a;
    memset(req, 0, sizeof *req);
    pn_cli_corpus_options_default(&req->corpus_options);
    pn_cli_corpus_options *o = &req->corpus_options;
    o->mode = PN_CLI_MODE_MAJOR;
    o->tonic = 0;
    o->grid = 0;
    int rc = pn_cli_parse(command, learn_options, NUM_OPTIONS, 1, argc, argv, &a);
    if (rc != PN_EXIT_OK)
        return rc;
    if (a.help) {
        print_help();
        return -1;
    }
    const char *v;
    if ((v = a.value[OPT_MODE]) && pn_cli_corpus_mode(command, v, &o->mode) != PN_EXIT_OK)
        return PN_EXIT_USAGE;
    if ((v = a.value[OPT_TONIC]) && pn_cli_corpus_tonic(command, v, &o->tonic) != PN_EXIT_OK)
        return PN_EXIT_USAGE;
    if ((v = a.value[OPT_SPLIT]) && pn_cli_corpus_split(command, v, &o->split) != PN_EXIT_OK)
        return PN_EXIT_USAGE;
    if ((v = a.value[OPT_GRID]) && pn_cli_corpus_grid(command, v, &o->grid) != PN_EXIT_OK)
        return PN_EXIT_USAGE;
    if ((v = a.value[OPT_NAME])) {
        if (strlen(v) > PN_RULES_NAME_MAX)
            return pn_cli_usage_error(command, "--name is longer than %d bytes", PN_RULES_NAME_MAX);
        req->name = v;
    }
    if ((v = a.value[OPT_RANGES]) && (rc = parse_ranges(v, req)) != PN_EXIT_OK)
        return rc;
    req->features = a.value[OPT_FEATURES];
    req->add = a.value[OPT_ADD];
    req->output = a.value[OPT_OUTPUT];
    if (a.num_args < 1)
        return pn_cli_usage_error(command, "missing CORPUS");
    req->corpus = a.arg[0];
    if (!req->output)
        return pn_cli_usage_error(command, "missing -o RULES.json (where to write the rule set)");
    return pn_cli_check_output(command, "output", req->output);
}

/* An exit status for an engine error: bad input or a failure. */
static int status_of(pn_error code)
{
    return code == PN_ERR_NOMEM || code == PN_ERR_NUMERIC ? PN_EXIT_FAILURE : PN_EXIT_USAGE;
}

/* The features as given (--features FILE or the built-in set). */
static pn_error read_features(const learn_request *req, pn_rule_set **rs, pn_error_info *err)
{
    if (req->features)
        return pn_rule_set_read_ex(req->features, PN_RULES_TARGETS_OPTIONAL, rs, err);
    char *text = pn_default_features_json();
    if (!text)
        return pn_fail(err, PN_ERR_NOMEM, "%s: out of memory", PN_DEFAULT_FEATURES_NAME);
    const pn_error code = pn_rule_set_parse_ex(PN_DEFAULT_FEATURES_NAME, text, strlen(text),
                                               PN_RULES_TARGETS_OPTIONAL, rs, err);
    free(text);
    return code;
}

/* Appends the rules of `added` (marked "learn": false) and its constraints
 * to root's. Returns 0, or -1 when out of memory. */
static int append_added(json_t *root, json_t *added)
{
    json_t *rules = json_object_get(root, "rules"), *more = json_object_get(added, "rules");
    size_t i;
    json_t *rule;
    json_array_foreach(more, i, rule)
    {
        if (json_object_set_new(rule, "learn", json_false()) != 0 ||
            json_array_append(rules, rule) != 0)
            return -1;
    }
    json_t *constraints = json_object_get(added, "constraints");
    if (!constraints)
        return 0;
    json_t *mine = json_object_get(root, "constraints");
    if (!mine)
        return json_object_set(root, "constraints", constraints) != 0 ? -1 : 0;
    return json_array_extend(mine, constraints) != 0 ? -1 : 0;
}

/* A JSON file read as the rule set reader reads it (its size limit, a
 * byte order mark skipped), or NULL. */
static json_t *load_json(const char *path)
{
    char *text = NULL;
    size_t len = 0;
    if (pn_file_read(path, 0, &text, &len, NULL) != PN_OK)
        return NULL;
    const size_t bom = pn_file_bom_length(text, len);
    json_error_t je;
    json_t *root = json_loadb(text + bom, len - bom, JSON_REJECT_DUPLICATES, &je);
    free(text);
    return root;
}

/* The built-in features' JSON, or NULL when out of memory. */
static json_t *load_default_features(void)
{
    char *text = pn_default_features_json();
    if (!text)
        return NULL;
    json_error_t je;
    json_t *root = json_loads(text, JSON_REJECT_DUPLICATES, &je);
    free(text);
    return root;
}

/* The features' JSON with its space replaced by --ranges ({"ranges":
 * [[lo, hi], ...]}, one per voice; every learned rule's targets and listed
 * contexts dropped: learning replaces them, and they may name values
 * outside the new space) and the rules of --add appended. Returns the new
 * text (free it) or NULL when out of memory or a JSON text cannot be read
 * (both were read successfully before, so neither is expected). */
static char *features_text(const learn_request *req, int num_voices)
{
    json_t *root = req->features ? load_json(req->features) : load_default_features();
    json_t *added = req->add ? load_json(req->add) : NULL;
    int failed = !root || !json_is_object(root) || (req->add && !json_is_object(added));
    if (!failed && req->num_ranges > 0) {
        /* json_*_set_new and json_array_append_new take the reference even
         * when they fail */
        json_t *ranges = json_array();
        failed = json_object_set_new(root, "space", json_pack("{so}", "ranges", ranges)) != 0;
        for (int v = 0; v < num_voices && !failed; ++v) {
            const int r = req->num_ranges == 1 ? 0 : v;
            failed =
                json_array_append_new(ranges, json_pack("[ii]", req->low[r], req->high[r])) != 0;
        }
        json_t *rules = json_object_get(root, "rules");
        size_t i;
        json_t *rule;
        json_array_foreach(rules, i, rule)
        {
            if (json_is_object(rule) && !json_is_false(json_object_get(rule, "learn"))) {
                json_object_del(rule, "targets");
                json_object_del(rule, "contexts");
            }
        }
    }
    if (!failed && added)
        failed = append_added(root, added) != 0;
    char *text = failed ? NULL : json_dumps(root, JSON_PRESERVE_ORDER | JSON_INDENT(1));
    json_decref(root);
    json_decref(added);
    return text;
}

/* Checks the --add file: a rule set (targets required) over the same space
 * as the features. Returns PN_EXIT_OK or prints the error. */
static int check_added(const learn_request *req, const pn_rule_set *features)
{
    pn_error_info err = {PN_OK, ""};
    pn_rule_set *added = NULL;
    pn_error code = pn_rule_set_read(req->add, &added, &err);
    if (code != PN_OK) {
        fprintf(stderr, "parnassus learn: %s\n", err.message);
        return status_of(code);
    }
    const pn_space *a = &added->space, *f = &features->space;
    int same = a->num_voices == f->num_voices;
    for (int v = 0; same && v < a->num_voices; ++v)
        same = a->low[v] == f->low[v] && a->high[v] == f->high[v];
    pn_rule_set_free(added);
    if (!same)
        return pn_cli_usage_error(command,
                                  "--add %s: its space differs from the space of %s (the rules "
                                  "of one set share one space)",
                                  req->add,
                                  req->features ? req->features : PN_DEFAULT_FEATURES_NAME);
    return PN_EXIT_OK;
}

/* The features, over the space of --ranges when it is given, with the
 * rules of --add. Returns PN_EXIT_OK, or prints the error and returns the
 * exit status. */
static int load_features(const learn_request *req, pn_rule_set **rs)
{
    pn_error_info err = {PN_OK, ""};
    pn_error code = read_features(req, rs, &err);
    if (code != PN_OK) {
        fprintf(stderr, "parnassus learn: %s\n", err.message);
        return status_of(code);
    }
    if (req->num_ranges == 0 && !req->add)
        return PN_EXIT_OK;
    const int voices = (*rs)->space.num_voices;
    if (req->num_ranges > 1 && req->num_ranges != voices) {
        pn_rule_set_free(*rs);
        *rs = NULL;
        return pn_cli_usage_error(command,
                                  "--ranges gives %d ranges ('%s'), but the space of %s has %d "
                                  "voices (give one LO-HI for all, or one per voice)",
                                  req->num_ranges, req->ranges_text,
                                  req->features ? req->features : PN_DEFAULT_FEATURES_NAME, voices);
    }
    if (req->add && req->num_ranges == 0) {
        const int rc = check_added(req, *rs);
        if (rc != PN_EXIT_OK) {
            pn_rule_set_free(*rs);
            *rs = NULL;
            return rc;
        }
    }
    pn_rule_set_free(*rs);
    *rs = NULL;
    char *text = features_text(req, voices);
    if (!text) {
        fprintf(stderr, "parnassus learn: out of memory\n");
        return PN_EXIT_FAILURE;
    }
    code = pn_rule_set_parse_ex(req->features ? req->features : PN_DEFAULT_FEATURES_NAME, text,
                                strlen(text), PN_RULES_TARGETS_OPTIONAL, rs, &err);
    free(text);
    if (code != PN_OK) {
        if (req->num_ranges > 0)
            fprintf(stderr, "parnassus learn: %s (with --ranges %s%s%s)\n", err.message,
                    req->ranges_text, req->add ? " and --add " : "", req->add ? req->add : "");
        else
            fprintf(stderr, "parnassus learn: %s (with --add %s)\n", err.message, req->add);
        return status_of(code);
    }
    return PN_EXIT_OK;
}

/* The set's name: --name, or the output's file name without ".json". */
static int set_name(pn_rule_set *rs, const learn_request *req)
{
    char buf[PN_RULES_NAME_MAX + 1];
    if (req->name) {
        snprintf(buf, sizeof buf, "%s", req->name);
    } else if (strcmp(req->output, "-") == 0) {
        snprintf(buf, sizeof buf, "%s", rs->name);
    } else {
        const char *base = pn_cli_basename(req->output);
        size_t len = strlen(base);
        if (len > 5 && strcmp(base + len - 5, ".json") == 0)
            len -= 5;
        if (len > PN_RULES_NAME_MAX)
            len = PN_RULES_NAME_MAX;
        memcpy(buf, base, len);
        buf[len] = '\0';
        if (len == 0)
            snprintf(buf, sizeof buf, "%s", rs->name);
    }
    char *name = malloc(strlen(buf) + 1);
    if (!name)
        return -1;
    strcpy(name, buf);
    free(rs->name);
    rs->name = name;
    return 0;
}

/* The description: the features' own (without what an earlier learning
 * added), then where the targets came from. */
static int set_description(pn_rule_set *rs, const char *summary)
{
    static const char learned[] = "Learned from ";
    const char *old = rs->description ? rs->description : "";
    size_t keep = strlen(old);
    const char *earlier = strstr(old, learned);
    if (earlier && (earlier == old || earlier[-1] == ' '))
        keep = (size_t)(earlier - old);
    while (keep > 0 && old[keep - 1] == ' ')
        --keep;
    size_t len = keep + 1 + strlen(learned) + strlen(summary) + 2;
    int fixed = 0;
    for (int32_t r = 0; r < rs->num_rules; ++r)
        fixed |= rs->rules[r].fixed;
    static const char by_hand[] = "; the rules marked \"learn\": false are written by hand";
    len += fixed ? strlen(by_hand) : 0;
    char *d = malloc(len);
    if (!d)
        return -1;
    snprintf(d, len, "%.*s%s%s%s%s.", (int)keep, old, keep > 0 ? " " : "", learned, summary,
             fixed ? by_hand : "");
    free(rs->description);
    rs->description = d;
    return 0;
}

/* Writes rs to path ("-": standard output); the file is removed if it
 * cannot be completed. */
static int write_rules(const pn_rule_set *rs, const char *path)
{
    pn_error_info err = {PN_OK, ""};
    if (strcmp(path, "-") == 0) {
        if (pn_rule_set_write(rs, stdout, "standard output", &err) != PN_OK) {
            fprintf(stderr, "parnassus learn: %s\n", err.message);
            return -1;
        }
        return 0;
    }
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "parnassus learn: %s: cannot open: %s\n", path, strerror(errno));
        return -1;
    }
    pn_error code = pn_rule_set_write(rs, f, path, &err);
    if (fclose(f) != 0 && code == PN_OK)
        code = pn_fail(&err, PN_ERR_IO, "%s: cannot write: %s", path, strerror(errno));
    if (code != PN_OK) {
        fprintf(stderr, "parnassus learn: %s\n", err.message);
        remove(path);
        return -1;
    }
    return 0;
}

static int32_t nonzero(const double *x, int32_t n)
{
    int32_t count = 0;
    for (int32_t i = 0; i < n; ++i)
        count += x[i] != 0.0;
    return count;
}

static void print_report(FILE *out, const pn_rule_set *rs, const char *features,
                         const char *summary, const pn_learn_report *rep, const char *output)
{
    fprintf(out, "corpus     %s\n", summary);
    fprintf(out, "features   %s: %" PRId32 " rules, %" PRId32 " rows\n", features, rs->num_rules,
            pn_rule_set_num_rows(rs));
    fprintf(
        out, "counted    %" PRId64 " sonorities in %" PRId32 " piece%s, %" PRId64 " transitions\n",
        rep->steps_used, rep->pieces_used, rep->pieces_used == 1 ? "" : "s", rep->transitions_used);
    fprintf(out,
            "skipped    %" PRId64 " sonorities and %" PRId64
            " transitions (a pitch outside the space)\n",
            rep->steps_skipped, rep->transitions_skipped);
    fprintf(out, "wrote      %s (\"%s\")\n\n",
            strcmp(output, "-") == 0 ? "standard output" : output, rs->name);
    int width = 4, fwidth = 7, cwidth = 7;
    char text[PN_FEATURE_TEXT_MAX];
    for (int32_t r = 0; r < rs->num_rules; ++r) {
        const pn_rule *rule = &rs->rules[r];
        int len = (int)strlen(rule->name);
        width = len > width ? (len < 32 ? len : 32) : width;
        len = (int)pn_feature_to_string(rule->feature, text, sizeof text);
        fwidth = len > fwidth ? (len < 40 ? len : 40) : fwidth;
        if (rule->context) {
            len = (int)pn_feature_to_string(rule->context->feature, text, sizeof text);
            cwidth = len > cwidth ? (len < 40 ? len : 40) : cwidth;
        }
    }
    fprintf(out, "%-*s  %-*s  %-11s  %-*s  %s\n", width, "rule", fwidth, "feature", "values seen",
            cwidth, "context", "contexts listed");
    for (int32_t r = 0; r < rs->num_rules; ++r) {
        const pn_rule *rule = &rs->rules[r];
        const int32_t m = pn_feature_table_size(rule->table);
        char seen[48];
        snprintf(seen, sizeof seen, "%" PRId32 " of %" PRId32, nonzero(rule->target, m), m);
        pn_feature_to_string(rule->feature, text, sizeof text);
        fprintf(out, "%-*s  %-*s  %-11s  ", width, rule->name, fwidth, text, seen);
        const pn_rule_context *c = rule->context;
        if (!c) {
            fputs(rule->fixed ? "-  (as written)\n" : "-\n", out);
            continue;
        }
        pn_feature_to_string(c->feature, text, sizeof text);
        fprintf(out, "%-*s  %" PRId32 " of %" PRId32 ", smoothing %g", cwidth, text, c->num_rows,
                pn_feature_table_size(c->table), c->smoothing);
        for (int32_t k = 0; k < rule->num_refinements; ++k) {
            const pn_rule_context *f = &rule->refinements[k];
            pn_feature_to_string(f->feature, text, sizeof text);
            fprintf(out, "; then %s: %" PRId32 " listed, smoothing %g", text, f->num_rows,
                    f->smoothing);
        }
        fputs(rule->fixed ? " (as written)\n" : "\n", out);
    }
}

static int run(const learn_request *req)
{
    pn_error_info err = {PN_OK, ""};
    pn_rule_set *rs = NULL;
    int loaded = load_features(req, &rs);
    if (loaded != PN_EXIT_OK)
        return loaded;
    pn_error code;
    pn_cli_corpus_options o = req->corpus_options;
    o.num_voices = rs->space.num_voices;
    o.space = &rs->space;
    pn_corpus *corpus = NULL;
    char summary[512];
    int rc = PN_EXIT_OK;
    code = pn_cli_load_corpus(req->corpus, &o, &corpus, summary, sizeof summary, &err);
    if (code != PN_OK) {
        fprintf(stderr, "parnassus learn: %s\n", err.message);
        rc = status_of(code);
        goto done;
    }
    if (corpus->num_pieces == 0) {
        fprintf(stderr, "parnassus learn: %s: no piece left to learn from (%s)\n", req->corpus,
                summary);
        rc = PN_EXIT_USAGE;
        goto done;
    }
    pn_learn_settings s;
    pn_learn_settings_default(&s);
    pn_learn_report rep;
    code = pn_learn(rs, corpus, &s, &rep, &err);
    if (code != PN_OK) {
        fprintf(stderr, "parnassus learn: %s: %s\n", req->corpus, err.message);
        rc = status_of(code);
        goto done;
    }
    if (set_name(rs, req) != 0 || set_description(rs, summary) != 0) {
        fprintf(stderr, "parnassus learn: out of memory\n");
        rc = PN_EXIT_FAILURE;
        goto done;
    }
    if (write_rules(rs, req->output) != 0) {
        rc = PN_EXIT_FAILURE;
        goto done;
    }
    /* the report goes to standard output unless the rule set does */
    char label[512];
    const char *features = req->features ? req->features : PN_DEFAULT_FEATURES_NAME;
    if (req->num_ranges > 0)
        snprintf(label, sizeof label, "%s with --ranges %s", features, req->ranges_text);
    else
        snprintf(label, sizeof label, "%s", features);
    print_report(strcmp(req->output, "-") == 0 ? stderr : stdout, rs, label, summary, &rep,
                 req->output);
done:
    pn_corpus_free(corpus);
    pn_rule_set_free(rs);
    return rc;
}

int pn_cmd_learn(int argc, char **argv)
{
    learn_request req;
    int rc = parse_request(argc, argv, &req);
    if (rc != PN_EXIT_OK)
        return rc < 0 ? PN_EXIT_OK : rc;
    return run(&req);
}

#include "options.h"

#include "parnassus/file.h"
#include "parnassus/rules.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int pn_cli_usage_error(const char *command, const char *fmt, ...)
{
    va_list args;
    va_start(args, fmt);
    fprintf(stderr, "parnassus %s: ", command);
    vfprintf(stderr, fmt, args);
    va_end(args);
    fprintf(stderr, "\nsee 'parnassus %s --help'\n", command);
    return PN_EXIT_USAGE;
}

static int is_help(const char *word)
{
    return strcmp(word, "--help") == 0 || strcmp(word, "-h") == 0;
}

/* An option-looking word: "-x" or "--x", but not "-" or "--". */
static int looks_like_option(const char *word)
{
    return word[0] == '-' && word[1] != '\0' && strcmp(word, "--") != 0;
}

static int find_option(const pn_cli_option *options, int num_options, const char *name,
                       size_t name_len)
{
    for (int i = 0; i < num_options; ++i)
        if (strlen(options[i].name) == name_len && memcmp(options[i].name, name, name_len) == 0)
            return i;
    return -1;
}

int pn_cli_parse(const char *command, const pn_cli_option *options, int num_options, int max_args,
                 int argc, char **argv, pn_cli_args *out)
{
    memset(out, 0, sizeof *out);
    if (num_options > PN_CLI_MAX_OPTIONS || max_args > PN_CLI_MAX_ARGS)
        return pn_cli_usage_error(command, "internal error: option table too large");
    for (int i = 0; i < argc && strcmp(argv[i], "--") != 0; ++i) {
        if (is_help(argv[i])) {
            out->help = 1;
            return PN_EXIT_OK;
        }
    }
    int options_done = 0;
    for (int i = 0; i < argc; ++i) {
        const char *word = argv[i];
        if (!options_done && strcmp(word, "--") == 0) {
            options_done = 1;
            continue;
        }
        if (options_done || !looks_like_option(word)) {
            if (out->num_args >= max_args)
                return pn_cli_usage_error(command, "unexpected argument '%s'", word);
            out->arg[out->num_args++] = word;
            continue;
        }
        const char *name, *eq;
        size_t name_len;
        if (word[1] != '-') {
            /* the one short form: "-o FILE" for "--output FILE" */
            if (strcmp(word, "-o") != 0 || find_option(options, num_options, "output", 6) < 0)
                return pn_cli_usage_error(command, "unknown option '%s'", word);
            name = "output";
            eq = NULL;
            name_len = 6;
        } else {
            name = word + 2;
            eq = strchr(name, '=');
            name_len = eq ? (size_t)(eq - name) : strlen(name);
        }
        int k = find_option(options, num_options, name, name_len);
        if (k < 0)
            return pn_cli_usage_error(command, "unknown option '--%.*s'", (int)name_len, name);
        if (!options[k].takes_value) {
            if (eq)
                return pn_cli_usage_error(command, "option '--%s' takes no value", options[k].name);
            out->value[k] = "";
            continue;
        }
        const char *value = NULL;
        if (eq)
            value = eq + 1;
        else if (i + 1 < argc && !(argv[i + 1][0] == '-' && argv[i + 1][1] == '-'))
            value = argv[++i];
        if (!value || value[0] == '\0')
            return pn_cli_usage_error(command, "missing value for option '--%s'", options[k].name);
        out->value[k] = value;
    }
    return PN_EXIT_OK;
}

int pn_cli_real(const char *command, const char *option, const char *text, double lo, double hi,
                double *out)
{
    char *end = NULL;
    if (text[0] == '\0' || isspace((unsigned char)text[0]))
        return pn_cli_usage_error(command, "--%s: '%s' is not a number", option, text);
    errno = 0;
    double v = strtod(text, &end);
    if (end == text || *end != '\0')
        return pn_cli_usage_error(command, "--%s: '%s' is not a number", option, text);
    if (!isfinite(v))
        return pn_cli_usage_error(command, "--%s: '%s' is not a finite number", option, text);
    if (!(v >= lo && v <= hi)) {
        /* the bounds as the shortest exact text: [0, 16777215], not 1.67772e+07 */
        char low[32], high[32];
        pn_format_real(lo, 0, low, sizeof low);
        pn_format_real(hi, 0, high, sizeof high);
        if (isinf(hi))
            return pn_cli_usage_error(command, "--%s must be >= %s (got %s)", option, low, text);
        return pn_cli_usage_error(command, "--%s must be within [%s, %s] (got %s)", option, low,
                                  high, text);
    }
    *out = v;
    return PN_EXIT_OK;
}

int pn_cli_int(const char *command, const char *option, const char *text, int lo, int hi, int *out)
{
    double x = 0.0;
    if (pn_cli_real(command, option, text, lo, hi, &x) != PN_EXIT_OK)
        return PN_EXIT_USAGE;
    if (x != floor(x))
        return pn_cli_usage_error(command, "--%s: expected a whole number, got '%s'", option, text);
    *out = (int)x;
    return PN_EXIT_OK;
}

int pn_cli_max_memory(const char *command, const char *text, int64_t *out)
{
    *out = PN_DEFAULT_MAX_MEMORY;
    if (!text)
        return PN_EXIT_OK;
    char *end = NULL;
    errno = 0;
    double v = strtod(text, &end);
    double scale = 1.0;
    if (end != text && *end) {
        const char *units = "KMGT";
        const char *u = strchr(units, toupper((unsigned char)*end));
        if (u && *u) {
            scale = (double)((int64_t)1 << (10 * (u - units + 1)));
            end++;
            if (*end == 'i' && end[1] == 'B')
                end += 2;
            else if (*end == 'B')
                end++;
        }
    }
    if (end == text || *end != '\0' || isspace((unsigned char)text[0]) || !isfinite(v))
        return pn_cli_usage_error(command, "--max-memory: '%s' is not a size (say 512M or 4G)",
                                  text);
    const double bytes = v * scale;
    if (!(bytes >= (double)(1 << 20) && bytes <= (double)PN_MAX_MEMORY_LIMIT))
        return pn_cli_usage_error(command, "--max-memory must be within [1M, 1T] (got %s)", text);
    *out = (int64_t)bytes;
    return PN_EXIT_OK;
}

/* The commands that realize, and so take --max-memory. */
static int takes_max_memory(const char *command)
{
    return strcmp(command, "solve") == 0 || strcmp(command, "path") == 0 ||
           strcmp(command, "sample") == 0;
}

int pn_cli_engine_error(const char *command, const char *where, const pn_error_info *err)
{
    fprintf(stderr, "parnassus %s: %s%s%s\n", command, where ? where : "", where ? ": " : "",
            err->message);
    switch (err->code) {
    case PN_ERR_LIMIT:
        if (takes_max_memory(command))
            fprintf(stderr,
                    "parnassus %s: raise the limit with --max-memory SIZE if the machine "
                    "has the memory\n",
                    command);
        return PN_EXIT_USAGE;
    case PN_ERR_INTERRUPTED:
        return PN_EXIT_INTERRUPTED;
    case PN_ERR_IO:
    case PN_ERR_PARSE:
    case PN_ERR_INVALID:
        return PN_EXIT_USAGE;
    default:
        return PN_EXIT_FAILURE;
    }
}

int pn_cli_seed(const char *command, const char *option, const char *text, uint64_t *out)
{
    size_t len = strlen(text);
    if (len == 0 || strspn(text, "0123456789") != len)
        return pn_cli_usage_error(command, "--%s: '%s' is not a non-negative integer", option,
                                  text);
    errno = 0;
    unsigned long long v = strtoull(text, NULL, 10);
    if (errno == ERANGE || v > (unsigned long long)INT64_MAX)
        return pn_cli_usage_error(command, "--%s: '%s' is out of range [0, %lld]", option, text,
                                  (long long)INT64_MAX);
    *out = (uint64_t)v;
    return PN_EXIT_OK;
}

int pn_cli_load_instance(const char *command, const char *file, pn_problem **prob,
                         pn_instance_form *form)
{
    pn_error_info err = {0};
    pn_error code = pn_instance_read(file, prob, form, &err);
    if (code == PN_OK)
        return PN_EXIT_OK;
    fprintf(stderr, "parnassus %s: %s\n", command, err.message);
    switch (code) {
    case PN_ERR_IO:
    case PN_ERR_PARSE:
    case PN_ERR_INVALID:
        return PN_EXIT_USAGE;
    default:
        return PN_EXIT_FAILURE;
    }
}

int pn_cli_parse_context(const char *command, const char *text, int *pitches, int *count)
{
    int k = 0;
    const char *p = text;
    for (;;) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (k == PN_SPACE_MAX_VOICES)
            return pn_cli_usage_error(command, "--context: more than %d pitches in '%s'",
                                      PN_SPACE_MAX_VOICES, text);
        if (len == 1 && (p[0] == 'R' || p[0] == 'r')) {
            pitches[k++] = PN_REST;
        } else {
            int value = 0;
            size_t digits = 0;
            while (digits < len && digits < 4 && p[digits] >= '0' && p[digits] <= '9')
                value = 10 * value + (p[digits++] - '0');
            if (len == 0 || digits != len || value > 127)
                return pn_cli_usage_error(command,
                                          "--context: '%.*s%s' is not a MIDI pitch (0..127) or R "
                                          "(in '%s')",
                                          (int)(len < 40 ? len : 40), p, len > 40 ? "..." : "",
                                          text);
            pitches[k++] = value;
        }
        if (!end)
            break;
        p = end + 1;
    }
    *count = k;
    return PN_EXIT_OK;
}

void pn_cli_format_pitches(const int *pitches, int count, char *buf, size_t size)
{
    size_t used = 0;
    if (size == 0)
        return;
    buf[0] = '\0';
    for (int v = 0; v < count && used < size; ++v) {
        int n = pitches[v] < 0
                    ? snprintf(buf + used, size - used, "%sR", v ? "," : "")
                    : snprintf(buf + used, size - used, "%s%d", v ? "," : "", pitches[v]);
        if (n < 0)
            break;
        used += (size_t)n;
    }
}

int pn_cli_is_rule_set(const char *file)
{
    FILE *f = fopen(file, "rb");
    if (!f)
        return 0;
    unsigned char bom[3];
    const size_t got = fread(bom, 1, sizeof bom, f);
    size_t at = pn_file_bom_length((const char *)bom, got); /* skipped, as the readers do */
    int c = at < got ? bom[at++] : fgetc(f);
    /* white space for at most the size limit: /dev/zero is not a rule set,
     * and an endless stream of spaces is not read for ever */
    for (size_t seen = 0;
         (c == ' ' || c == '\t' || c == '\n' || c == '\r') && seen < PN_FILE_MAX_BYTES; ++seen)
        c = at < got ? bom[at++] : fgetc(f);
    fclose(f);
    return c == '{';
}

int pn_cli_load_rules(const char *command, const char *file, int64_t max_memory, pn_rule_set **out)
{
    pn_error_info err = {0};
    pn_rule_set_options opts;
    pn_rule_set_options_default(&opts);
    opts.max_memory = max_memory;
    if (pn_rule_set_read_opt(file, &opts, out, &err) == PN_OK)
        return PN_EXIT_OK;
    return pn_cli_engine_error(command, NULL, &err);
}

/* Checks the --context pitches against the set's space. */
static int check_context(const char *command, const pn_rule_set *rs, const char *text,
                         const int *pitches, int count)
{
    const pn_space *sp = &rs->space;
    if (count != sp->num_voices)
        return pn_cli_usage_error(command,
                                  "--context: expected %d pitches (one per voice of the rule "
                                  "set, voice 1 first), got %d in '%s'",
                                  sp->num_voices, count, text);
    for (int v = 0; v < count; ++v)
        if (pitches[v] >= 0 && (pitches[v] < sp->low[v] || pitches[v] > sp->high[v]))
            return pn_cli_usage_error(command,
                                      "--context: pitch %d of voice %d is outside the rule "
                                      "set's range %d..%d for that voice",
                                      pitches[v], v + 1, sp->low[v], sp->high[v]);
    return PN_EXIT_OK;
}

void pn_cli_problem_free(pn_cli_problem *p)
{
    pn_problem_free(p->prob);
    pn_rule_set_free(p->rules);
    memset(p, 0, sizeof *p);
}

/* Everything a realization of the loaded problem holds at once (the
 * solver checks its own part, not the sum) against the limit. */
static int check_total(const char *command, const char *file, pn_cli_problem *p, int64_t max_memory)
{
    int64_t need = pn_bytes_add(pn_problem_bytes(p->prob), pn_solver_bytes(p->prob));
    if (p->rules)
        need = pn_bytes_add(need, p->rules->table_bytes);
    char what[128];
    snprintf(what, sizeof what, "realizing %d rules over %lld groups", (int)p->prob->num_rules,
             (long long)p->prob->num_groups);
    pn_error_info err = {0};
    if (pn_memory_check(need, max_memory, &err, what) == PN_OK)
        return PN_EXIT_OK;
    pn_cli_problem_free(p);
    return pn_cli_engine_error(command, file, &err);
}

int pn_cli_load_problem(const char *command, const char *file, const char *context_text,
                        int64_t max_memory, pn_cli_problem *out)
{
    memset(out, 0, sizeof *out);
    out->form = PN_FORM_FULL;
    int count = 0, rc;
    if (context_text &&
        (rc = pn_cli_parse_context(command, context_text, out->context, &count)) != PN_EXIT_OK)
        return rc;
    if (!pn_cli_is_rule_set(file)) {
        if (context_text)
            return pn_cli_usage_error(
                command, "--context needs a rule set, but %s is an instance file", file);
        rc = pn_cli_load_instance(command, file, &out->prob, &out->form);
        return rc == PN_EXIT_OK ? check_total(command, file, out, max_memory) : rc;
    }
    if ((rc = pn_cli_load_rules(command, file, max_memory, &out->rules)) != PN_EXIT_OK)
        return rc;
    if (context_text) {
        if ((rc = check_context(command, out->rules, context_text, out->context, count)) !=
            PN_EXIT_OK) {
            pn_cli_problem_free(out);
            return rc;
        }
        out->has_context = 1;
    }
    pn_error_info err = {0};
    pn_error code = pn_rule_set_build_problem(out->rules, &out->prob, NULL, &err);
    if (code == PN_OK && out->has_context)
        code = pn_rule_set_targets(out->rules, out->context, out->prob->target, &err);
    if (code != PN_OK) {
        pn_cli_problem_free(out);
        return pn_cli_engine_error(command, file, &err);
    }
    return check_total(command, file, out, max_memory);
}

void pn_cli_rules_lambda_p(const pn_rule_set *rs, const char *given, pn_settings *s)
{
    if (!given && rs && rs->lambda_p > 0.0)
        s->lambda_p = rs->lambda_p;
}

int pn_cli_knobs(const char *command, const char *log2_lambda_w, const char *alpha,
                 const char *lambda_p, const char *seed, pn_settings *s)
{
    if (log2_lambda_w && pn_cli_real(command, "log2-lambda-w", log2_lambda_w, -60.0, 60.0,
                                     &s->log2_lambda_w) != PN_EXIT_OK)
        return PN_EXIT_USAGE;
    if (alpha && pn_cli_real(command, "alpha", alpha, 0.0, 1.0, &s->alpha) != PN_EXIT_OK)
        return PN_EXIT_USAGE;
    if (lambda_p && pn_cli_real(command, "lambda-p", lambda_p, 0.0, PN_CLI_MAX_LAMBDA_P,
                                &s->lambda_p) != PN_EXIT_OK)
        return PN_EXIT_USAGE;
    if (seed && pn_cli_seed(command, "seed", seed, &s->seed) != PN_EXIT_OK)
        return PN_EXIT_USAGE;
    return PN_EXIT_OK;
}

int pn_cli_tonic(const char *text, int allow_keep, int *out)
{
    if (allow_keep && strcmp(text, "keep") == 0) {
        *out = -1;
        return 0;
    }
    const size_t len = strlen(text);
    if (len >= 1 && len <= 2 && strspn(text, "0123456789") == len) {
        const int v = atoi(text);
        if (v > 11)
            return -1;
        *out = v;
        return 0;
    }
    static const int natural[7] = {9, 11, 0, 2, 4, 5, 7}; /* A..G */
    const int letter = toupper((unsigned char)text[0]);
    if (letter < 'A' || letter > 'G' || len > 2)
        return -1;
    int pc = natural[letter - 'A'];
    if (len == 2) {
        if (text[1] == '#')
            pc += 1;
        else if (text[1] == 'b')
            pc += 11;
        else
            return -1;
    }
    *out = pc % 12;
    return 0;
}

const char *pn_cli_basename(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash && slash[1] != '\0' ? slash + 1 : path;
}

int pn_cli_check_output(const char *command, const char *option, const char *path)
{
    if (!path || strcmp(path, "-") == 0)
        return PN_EXIT_OK;
    struct stat st;
    const char *problem = NULL;
    if (stat(path, &st) == 0) {
        /* there already: open it for writing without truncating it */
        int fd = S_ISDIR(st.st_mode) ? -1 : open(path, O_WRONLY | O_NOCTTY | O_NONBLOCK);
        if (S_ISDIR(st.st_mode))
            problem = "is a directory";
        else if (fd < 0)
            problem = strerror(errno);
        else
            close(fd);
    } else {
        /* not there: create it and remove it again, so nothing is left
         * behind when the command fails before it writes */
        int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOCTTY, 0666);
        if (fd < 0) {
            problem = strerror(errno);
        } else {
            close(fd);
            unlink(path);
        }
    }
    if (!problem)
        return PN_EXIT_OK;
    fprintf(stderr, "parnassus %s: --%s %s: cannot write: %s\n", command, option, path, problem);
    return PN_EXIT_USAGE;
}

int pn_cli_check_result(const char *command, const char *file, const pn_info *info)
{
    const char *what = NULL;
    if (!isfinite(info->objective))
        what = "the objective";
    else if (isnan(info->p_kkt))
        what = "the KKT residual of the p-step";
    else if (isnan(info->w_kkt))
        what = "the KKT residual of the w-step";
    if (!what)
        return PN_EXIT_OK;
    fprintf(stderr, "parnassus %s: %s: the realization broke down: %s is not a number\n", command,
            file, what);
    return PN_EXIT_FAILURE;
}

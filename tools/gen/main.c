/* parnassus-gen: writes a seeded test instance (docs/test-instances.md).
 *
 *   parnassus-gen a1|a2|music [--seed S] [--full] [-o FILE]
 *
 * Exit status: 0 on success, 1 on failure, 2 on bad usage. */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parnassus/gen.h"
#include "parnassus/instance_io.h"

enum { EXIT_USAGE = 2 };

static const char usage_text[] =
    "usage: parnassus-gen a1|a2|music [--seed S] [--full] [-o FILE]\n"
    "  a1, a2     artificial cases of the paper (n = 600, 5 rules)\n"
    "  music      16 features of 4-voice sonorities (n = 55^4 = 9150625)\n"
    "  --seed S   unsigned 64-bit decimal seed (default 1)\n"
    "  --full     write the full form (a1, a2 only); default is the grouped form\n"
    "  -o FILE    write to FILE instead of standard output\n";

typedef enum which_instance { INSTANCE_A1, INSTANCE_A2, INSTANCE_MUSIC } which_instance;

typedef struct options {
    which_instance which;
    uint64_t seed;
    int full;
    const char *output;
} options;

static int usage_error(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;

/* Prints "parnassus-gen: <message>" and the usage; returns EXIT_USAGE. */
static int usage_error(const char *fmt, ...)
{
    va_list args;
    va_start(args, fmt);
    fputs("parnassus-gen: ", stderr);
    vfprintf(stderr, fmt, args);
    va_end(args);
    fputs("\n", stderr);
    fputs(usage_text, stderr);
    return EXIT_USAGE;
}

/* Accepts decimal digits only: no sign, no base prefix, no overflow. */
static int parse_seed(const char *text, uint64_t *seed)
{
    if (!*text || strspn(text, "0123456789") != strlen(text))
        return -1;
    errno = 0;
    unsigned long long v = strtoull(text, NULL, 10);
    if (errno == ERANGE)
        return -1;
    *seed = (uint64_t)v;
    return 0;
}

/* Returns 0, or the exit status to stop with (usage errors, --help). */
static int parse_args(int argc, char **argv, options *opt, int *stop)
{
    int have_which = 0;
    *stop = 0;
    opt->which = INSTANCE_A1;
    opt->seed = 1;
    opt->full = 0;
    opt->output = NULL;
    for (int i = 1; i < argc; ++i) {
        const char *arg = argv[i];
        if (!strcmp(arg, "-h") || !strcmp(arg, "--help")) {
            fputs(usage_text, stdout);
            *stop = 1;
            return 0;
        } else if (!strcmp(arg, "--seed") || !strcmp(arg, "-o")) {
            if (i + 1 >= argc)
                return usage_error("%s needs a value", arg);
            const char *value = argv[++i];
            if (arg[1] == 'o')
                opt->output = value;
            else if (parse_seed(value, &opt->seed) != 0)
                return usage_error("bad seed '%s' (expected an unsigned 64-bit decimal)", value);
        } else if (!strcmp(arg, "--full")) {
            opt->full = 1;
        } else if (arg[0] == '-') {
            return usage_error("unknown option '%s'", arg);
        } else if (have_which) {
            return usage_error("more than one instance given ('%s')", arg);
        } else {
            if (!strcmp(arg, "a1"))
                opt->which = INSTANCE_A1;
            else if (!strcmp(arg, "a2"))
                opt->which = INSTANCE_A2;
            else if (!strcmp(arg, "music"))
                opt->which = INSTANCE_MUSIC;
            else
                return usage_error("unknown instance '%s' (expected a1, a2 or music)", arg);
            have_which = 1;
        }
    }
    if (!have_which)
        return usage_error("no instance given");
    if (opt->full && opt->which == INSTANCE_MUSIC)
        return usage_error("--full is only available for a1 and a2 (music has n = 9150625)");
    return 0;
}

static pn_error generate(const options *opt, FILE *out, pn_error_info *info)
{
    const pn_gen_case gcase = opt->which == INSTANCE_A1 ? PN_GEN_A1 : PN_GEN_A2;
    if (opt->full)
        return pn_gen_artificial_write_full(out, gcase, opt->seed, info);
    pn_problem *prob;
    pn_error err = opt->which == INSTANCE_MUSIC ? pn_gen_music_like(opt->seed, &prob, info)
                                                : pn_gen_artificial(gcase, opt->seed, &prob, info);
    if (err != PN_OK)
        return err;
    err = pn_instance_write_grouped(out, prob, info);
    pn_problem_free(prob);
    return err;
}

int main(int argc, char **argv)
{
    options opt;
    int stop;
    int status = parse_args(argc, argv, &opt, &stop);
    if (status != 0 || stop)
        return status;

    FILE *out = stdout;
    if (opt.output) {
        out = fopen(opt.output, "w");
        if (!out) {
            fprintf(stderr, "parnassus-gen: cannot open '%s': %s\n", opt.output, strerror(errno));
            return EXIT_FAILURE;
        }
    }
    pn_error_info info = {PN_OK, ""};
    pn_error err = generate(&opt, out, &info);
    if (err == PN_OK && fflush(out) != 0)
        err = pn_fail(&info, PN_ERR_IO, "write error: %s", strerror(errno));
    if (opt.output && fclose(out) != 0 && err == PN_OK)
        err = pn_fail(&info, PN_ERR_IO, "write error: %s", strerror(errno));
    if (err != PN_OK) {
        fprintf(stderr, "parnassus-gen: %s: %s\n", pn_error_name(err), info.message);
        if (opt.output)
            remove(opt.output); /* leave no half-written instance behind */
        return EXIT_FAILURE;
    }
    return EXIT_SUCCESS;
}

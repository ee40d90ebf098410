/* parnassus-bench: wall-clock figures of the engine (docs/benchmarks.md).
 *
 *   parnassus-bench [--quick] [--markdown] [--only a|music] [--runs N]
 *
 * Cases A1/A2 (cold solve, lambda_w path) and the music-sized instance
 * (de-overlap of the full sonority space, solver setup, cold and warm
 * realizations, memory). Every row gives the median, min and max over its
 * runs, the target and whether it is met, and the iteration counts and KKT
 * residuals of the solves behind it. Progress goes to stderr, the table to
 * stdout. The exit status is 0 whether targets are met or not; 1 means an
 * engine call failed, 2 bad usage. */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "parnassus/deoverlap.h"
#include "parnassus/gen.h"
#include "parnassus/path.h"
#include "parnassus/problem.h"
#include "parnassus/solver.h"

enum {
    MAX_RUNS = 64,
    MAX_ROWS = 40,
    DEFAULT_RUNS = 5,
    QUICK_RUNS = 3,
    CONTEXTS = 4, /* other seeds whose targets make the context changes */
};

/* The default-search cold solve of the music instance: one probe run in a
 * child process, killed after GUARD_LIMIT seconds; repeated only when the
 * probe took less than GUARD_REPEAT seconds. */
static const double GUARD_LIMIT = 60.0;
static const double GUARD_REPEAT = 20.0;

typedef struct options {
    int quick;
    int markdown;
    int run_a;
    int run_music;
    int runs; /* per row; warm rows run twice as many (both directions) */
} options;

/* ---- measurements ---- */

typedef struct samples {
    int n;
    double v[MAX_RUNS];
    double wall, cpu; /* sums over the timed runs (cpu 0: not measured) */
} samples;

typedef struct stopwatch {
    double wall, cpu;
} stopwatch;

typedef enum unit {
    UNIT_TIME,  /* seconds */
    UNIT_COUNT, /* a plain number */
    UNIT_MIB,   /* mebibytes */
} unit;

typedef enum goal {
    GOAL_NONE,     /* informative row */
    GOAL_BELOW,    /* median < target */
    GOAL_AT_LEAST, /* every run >= target */
} goal;

typedef struct row {
    char label[16];
    char what[112];
    unit unit;
    int runs; /* 0: skipped */
    double median, min, max;
    goal goal;
    double target;
    double cpu_share; /* CPU time / wall time of the timed runs; < 0: unknown */
    char details[256];
} row;

typedef struct table {
    int count;
    row rows[MAX_ROWS];
} table;

/* Aggregated pn_info of the solves behind a row. */
typedef struct solve_stats {
    int n;
    int num_rules;
    int alt[2], starts[2], newton[2], selected[2];
    double p_kkt, w_kkt; /* the worst */
    unsigned status_seen;
} solve_stats;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* CPU time of this process: wall / CPU shows how much it had to share. */
static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* CPU time of the finished child processes (the guarded solve). */
static double children_cpu(void)
{
    struct rusage ru;
    if (getrusage(RUSAGE_CHILDREN, &ru) != 0)
        return 0.0;
    return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
           1e-6 * (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
}

static void progress(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;

static void progress(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    fflush(stderr);
}

static void check(pn_error err, const pn_error_info *info, const char *call)
{
    if (err == PN_OK)
        return;
    fprintf(stderr, "parnassus-bench: %s failed: %s: %s\n", call, pn_error_name(err),
            info->message);
    exit(1);
}

static void samples_add(samples *s, double v)
{
    if (s->n < MAX_RUNS)
        s->v[s->n++] = v;
}

static stopwatch start_timer(void)
{
    stopwatch sw = {now(), cpu_now()};
    return sw;
}

/* Records the wall time since `sw` as one run of `s`. */
static void stop_timer(const stopwatch *sw, samples *s)
{
    double wall = now() - sw->wall, cpu = cpu_now() - sw->cpu;
    s->wall += wall;
    s->cpu += cpu;
    samples_add(s, wall);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void range_update(int *range, int v, int first)
{
    if (first || v < range[0])
        range[0] = v;
    if (first || v > range[1])
        range[1] = v;
}

static void stats_add(solve_stats *st, const pn_info *in, int num_rules)
{
    int first = st->n == 0;
    range_update(st->alt, in->alternations, first);
    range_update(st->starts, in->starts, first);
    range_update(st->newton, in->newton_iterations, first);
    range_update(st->selected, in->num_selected, first);
    if (first || in->p_kkt > st->p_kkt)
        st->p_kkt = in->p_kkt;
    if (first || in->w_kkt > st->w_kkt)
        st->w_kkt = in->w_kkt;
    st->status_seen |= 1u << (unsigned)in->status;
    st->num_rules = num_rules;
    st->n++;
}

/* Appends to buf (size n) at *len. */
static void append(char *buf, size_t n, size_t *len, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

static void append(char *buf, size_t n, size_t *len, const char *fmt, ...)
{
    if (*len >= n)
        return;
    va_list ap;
    va_start(ap, fmt);
    int w = vsnprintf(buf + *len, n - *len, fmt, ap);
    va_end(ap);
    if (w > 0)
        *len = *len + (size_t)w < n ? *len + (size_t)w : n;
}

static void append_range(char *buf, size_t n, size_t *len, const char *name, const int *range)
{
    if (range[0] == range[1])
        append(buf, n, len, "%s %d", name, range[0]);
    else
        append(buf, n, len, "%s %d-%d", name, range[0], range[1]);
}

static void stats_format(const solve_stats *st, char *buf, size_t n)
{
    size_t len = 0;
    buf[0] = '\0';
    if (st->n == 0)
        return;
    append_range(buf, n, &len, "alt", st->alt);
    append_range(buf, n, &len, ", starts", st->starts);
    append_range(buf, n, &len, ", Newton", st->newton);
    append(buf, n, &len, ", KKT p %.1e w %.1e", st->p_kkt, st->w_kkt);
    const char *sep = ", ";
    for (unsigned s = 0; s < 8; ++s)
        if (st->status_seen & (1u << s)) {
            append(buf, n, &len, "%s%s", sep, pn_status_name((pn_status)s));
            sep = "/";
        }
    append(buf, n, &len, ", ");
    append_range(buf, n, &len, "selected", st->selected);
    append(buf, n, &len, "/%d", st->num_rules);
}

static row *add_row(table *t, const char *label, const char *what, unit u, const samples *s, goal g,
                    double target)
{
    if (t->count == MAX_ROWS) {
        fprintf(stderr, "parnassus-bench: too many rows\n");
        exit(1);
    }
    row *r = &t->rows[t->count++];
    memset(r, 0, sizeof *r);
    snprintf(r->label, sizeof r->label, "%s", label);
    snprintf(r->what, sizeof r->what, "%s", what);
    r->unit = u;
    r->goal = g;
    r->target = target;
    r->runs = s ? s->n : 0;
    r->cpu_share = s && s->wall > 0.0 && s->cpu > 0.0 ? s->cpu / s->wall : -1.0;
    if (r->runs > 0) {
        double sorted[MAX_RUNS];
        memcpy(sorted, s->v, (size_t)s->n * sizeof *sorted);
        qsort(sorted, (size_t)s->n, sizeof *sorted, cmp_double);
        int h = s->n / 2;
        r->median = s->n % 2 ? sorted[h] : 0.5 * (sorted[h - 1] + sorted[h]);
        r->min = sorted[0];
        r->max = sorted[s->n - 1];
    }
    return r;
}

static void format_value(char *buf, size_t n, unit u, double v)
{
    switch (u) {
    case UNIT_TIME:
        if (v >= 1.0)
            snprintf(buf, n, "%.2f s", v);
        else if (v >= 0.1)
            snprintf(buf, n, "%.0f ms", v * 1e3);
        else if (v >= 1e-3)
            snprintf(buf, n, "%.1f ms", v * 1e3);
        else
            snprintf(buf, n, "%.0f us", v * 1e6);
        break;
    case UNIT_COUNT:
        if (v == floor(v))
            snprintf(buf, n, "%.0f", v);
        else
            snprintf(buf, n, "%.1f", v);
        break;
    case UNIT_MIB:
        snprintf(buf, n, "%.0f MiB", v);
        break;
    }
}

/* ---- the table ---- */

enum { NUM_COLUMNS = 9, CELL_SIZE = 320 };

static const char *const COLUMN_NAMES[NUM_COLUMNS] = {
    "case", "what", "median", "min", "max", "runs", "target", "met?", "iterations / KKT / notes",
};

static void row_cells(const row *r, char cells[NUM_COLUMNS][CELL_SIZE])
{
    snprintf(cells[0], CELL_SIZE, "%s", r->label);
    snprintf(cells[1], CELL_SIZE, "%s", r->what);
    if (r->runs > 0) {
        format_value(cells[2], CELL_SIZE, r->unit, r->median);
        format_value(cells[3], CELL_SIZE, r->unit, r->min);
        format_value(cells[4], CELL_SIZE, r->unit, r->max);
    } else {
        for (int c = 2; c <= 4; ++c)
            snprintf(cells[c], CELL_SIZE, "-");
    }
    snprintf(cells[5], CELL_SIZE, "%d", r->runs);
    char tv[64];
    format_value(tv, sizeof tv, r->unit, r->target);
    switch (r->goal) {
    case GOAL_NONE:
        snprintf(cells[6], CELL_SIZE, "-");
        snprintf(cells[7], CELL_SIZE, "-");
        break;
    case GOAL_BELOW:
        snprintf(cells[6], CELL_SIZE, "< %s", tv);
        snprintf(cells[7], CELL_SIZE, "%s",
                 r->runs == 0 ? "-" : (r->median < r->target ? "yes" : "NOT MET"));
        break;
    case GOAL_AT_LEAST:
        snprintf(cells[6], CELL_SIZE, ">= %s", tv);
        snprintf(cells[7], CELL_SIZE, "%s",
                 r->runs == 0 ? "-" : (r->min >= r->target ? "yes" : "NOT MET"));
        break;
    }
    if (r->cpu_share >= 0.0)
        snprintf(cells[8], CELL_SIZE, "%s%sCPU/wall %.2f", r->details, r->details[0] ? "; " : "",
                 r->cpu_share);
    else
        snprintf(cells[8], CELL_SIZE, "%s", r->details);
}

static void print_text(const table *t)
{
    static char cells[MAX_ROWS][NUM_COLUMNS][CELL_SIZE];
    size_t width[NUM_COLUMNS];
    for (int c = 0; c < NUM_COLUMNS; ++c)
        width[c] = strlen(COLUMN_NAMES[c]);
    for (int i = 0; i < t->count; ++i) {
        row_cells(&t->rows[i], cells[i]);
        for (int c = 0; c < NUM_COLUMNS; ++c)
            if (strlen(cells[i][c]) > width[c])
                width[c] = strlen(cells[i][c]);
    }
    /* numbers right-aligned, text left-aligned; the last column unpadded */
    static const int right[NUM_COLUMNS] = {0, 0, 1, 1, 1, 1, 0, 0, 0};
    for (int i = -1; i < t->count; ++i) {
        for (int c = 0; c < NUM_COLUMNS; ++c) {
            const char *s = i < 0 ? COLUMN_NAMES[c] : cells[i][c];
            if (c == NUM_COLUMNS - 1)
                printf("%s", s);
            else if (right[c])
                printf("%*s  ", (int)width[c], s);
            else
                printf("%-*s  ", (int)width[c], s);
        }
        putchar('\n');
        if (i < 0) {
            size_t total = 0;
            for (int c = 0; c < NUM_COLUMNS; ++c)
                total += width[c] + (c < NUM_COLUMNS - 1 ? 2 : 0);
            for (size_t k = 0; k < total; ++k)
                putchar('-');
            putchar('\n');
        }
    }
}

static void print_markdown(const table *t)
{
    char cells[NUM_COLUMNS][CELL_SIZE];
    printf("|");
    for (int c = 0; c < NUM_COLUMNS; ++c)
        printf(" %s |", COLUMN_NAMES[c]);
    printf("\n|");
    for (int c = 0; c < NUM_COLUMNS; ++c)
        printf(c >= 2 && c <= 5 ? "---:|" : "---|");
    putchar('\n');
    for (int i = 0; i < t->count; ++i) {
        row_cells(&t->rows[i], cells);
        printf("|");
        for (int c = 0; c < NUM_COLUMNS; ++c) {
            if (c == 7 && strcmp(cells[c], "NOT MET") == 0)
                printf(" **not met** |");
            else
                printf(" %s |", cells[c]);
        }
        putchar('\n');
    }
}

/* ---- system figures ---- */

static double resident_mib(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    if (!f)
        return -1.0;
    long size = 0, resident = 0;
    int got = fscanf(f, "%ld %ld", &size, &resident);
    fclose(f);
    if (got != 2)
        return -1.0;
    return (double)resident * (double)sysconf(_SC_PAGESIZE) / (1024.0 * 1024.0);
}

static double peak_mib(void)
{
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) != 0)
        return -1.0;
    return (double)ru.ru_maxrss / 1024.0; /* Linux: KiB */
}

static void load_average(char *buf, size_t n)
{
    snprintf(buf, n, "unknown");
    FILE *f = fopen("/proc/loadavg", "r");
    if (!f)
        return;
    double a = 0, b = 0, c = 0;
    if (fscanf(f, "%lf %lf %lf", &a, &b, &c) == 3)
        snprintf(buf, n, "%.2f %.2f %.2f", a, b, c);
    fclose(f);
}

/* ---- A1 and A2 ---- */

static void append_seeds(char *buf, size_t n, size_t *len, int runs)
{
    if (runs == 1)
        append(buf, n, len, "; seed 1, one run");
    else
        append(buf, n, len, "; seeds 1-%d, one run each", runs);
}

static void bench_artificial(table *t, pn_gen_case which, const options *o)
{
    const char *label = which == PN_GEN_A1 ? "A1" : "A2";
    samples cold = {0}, path_time = {0}, points = {0};
    solve_stats st = {0};
    int path_alt[2] = {0, 0};
    pn_error_info info = {0};
    for (int i = 0; i < o->runs; ++i) {
        uint64_t seed = (uint64_t)i + 1;
        pn_problem *prob = NULL;
        check(pn_gen_artificial(which, seed, &prob, &info), &info, "pn_gen_artificial");

        pn_settings s;
        pn_settings_default(&s);
        s.log2_lambda_w = 0.0;
        pn_solver *solver = NULL;
        check(pn_solver_create(prob, &s, &solver, &info), &info, "pn_solver_create");
        pn_info out;
        stopwatch sw = start_timer();
        check(pn_solver_solve(solver, PN_START_COLD, &out, &info), &info, "pn_solver_solve");
        stop_timer(&sw, &cold);
        stats_add(&st, &out, prob->num_rules);
        pn_solver_free(solver);

        pn_path_settings ps;
        pn_path_settings_default(&ps);
        pn_path *path = NULL;
        sw = start_timer();
        check(pn_path_compute(prob, &ps, &path, &info), &info, "pn_path_compute");
        stop_timer(&sw, &path_time);
        samples_add(&points, path->num_points);
        range_update(path_alt, path->total_alternations, i == 0);
        progress("%s seed %d: cold %.1f ms, path %.1f ms (%d points)", label, (int)seed,
                 (cold.v[i]) * 1e3, path_time.v[i] * 1e3, path->num_points);
        pn_path_free(path);
        pn_problem_free(prob);
    }
    char what[112];
    row *r = add_row(t, label, "cold solve, log2 lambda_w = 0, default search", UNIT_TIME, &cold,
                     GOAL_NONE, 0.0);
    stats_format(&st, r->details, sizeof r->details);
    size_t len = strlen(r->details);
    append_seeds(r->details, sizeof r->details, &len, o->runs);

    snprintf(what, sizeof what, "lambda_w path, defaults");
    r = add_row(t, label, what, UNIT_TIME, &path_time, GOAL_BELOW, 0.5);
    len = 0;
    append_range(r->details, sizeof r->details, &len, "alt (all points)", path_alt);
    append_seeds(r->details, sizeof r->details, &len, o->runs);

    r = add_row(t, label, "lambda_w path: number of points", UNIT_COUNT, &points, GOAL_AT_LEAST,
                40.0);
    snprintf(r->details, sizeof r->details, "grid step 0.25 in log2 lambda_w");
}

/* ---- the music-sized instance ---- */

/* Cold default-search solve in a child process, so that a run that takes
 * too long can be stopped. Returns 0 when it finished (seconds and info
 * set), 1 when it was stopped after `limit` seconds, -1 on failure. */
typedef struct guarded_result {
    int error;
    double seconds;
    pn_info info;
} guarded_result;

static int guarded_cold_solve(const pn_problem *prob, const pn_settings *s, double limit,
                              guarded_result *res)
{
    int fd[2];
    if (pipe(fd) != 0)
        return -1;
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        close(fd[0]);
        close(fd[1]);
        return -1;
    }
    if (pid == 0) {
        close(fd[0]);
        guarded_result r;
        memset(&r, 0, sizeof r);
        pn_error_info info = {0};
        pn_solver *solver = NULL;
        r.error = pn_solver_create(prob, s, &solver, &info) != PN_OK;
        if (!r.error) {
            double t0 = now();
            r.error = pn_solver_solve(solver, PN_START_COLD, &r.info, &info) != PN_OK;
            r.seconds = now() - t0;
        }
        ssize_t w = write(fd[1], &r, sizeof r);
        _exit(w == (ssize_t)sizeof r ? 0 : 1);
    }
    close(fd[1]);
    int outcome = -1;
    struct pollfd p = {fd[0], POLLIN, 0};
    double deadline = now() + limit;
    for (;;) {
        double left = deadline - now();
        if (left <= 0.0) {
            outcome = 1;
            break;
        }
        int rc = poll(&p, 1, (int)(left * 1e3) + 1);
        if (rc < 0 && errno == EINTR)
            continue;
        if (rc <= 0) {
            outcome = rc == 0 ? 1 : -1;
            break;
        }
        ssize_t got = read(fd[0], res, sizeof *res);
        outcome = got == (ssize_t)sizeof *res && !res->error ? 0 : -1;
        break;
    }
    if (outcome != 0) /* stopped, or something went wrong: do not wait for it */
        kill(pid, SIGKILL);
    close(fd[0]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    return outcome;
}

/* Runs `runs` warm solves alternating between two settings (or targets):
 * run i uses the first when i is even, so each starts from the converged
 * solution of the other. Leaves the solver at `back`. */
static void warm_settings_series(pn_solver *solver, const pn_settings *there,
                                 const pn_settings *back, int runs, int num_rules, samples *sm,
                                 solve_stats *st)
{
    pn_error_info info = {0};
    pn_info out;
    for (int i = 0; i < runs; ++i) {
        stopwatch sw = start_timer();
        check(pn_solver_update_settings(solver, i % 2 ? back : there, &info), &info,
              "pn_solver_update_settings");
        check(pn_solver_solve(solver, PN_START_WARM, &out, &info), &info, "pn_solver_solve");
        stop_timer(&sw, sm);
        stats_add(st, &out, num_rules);
    }
    if (runs % 2) {
        check(pn_solver_update_settings(solver, back, &info), &info, "pn_solver_update_settings");
        check(pn_solver_solve(solver, PN_START_WARM, &out, &info), &info, "pn_solver_solve");
    }
}

static void warm_targets_series(pn_solver *solver, const double *there, const double *back,
                                int runs, int num_rules, samples *sm, solve_stats *st)
{
    pn_error_info info = {0};
    pn_info out;
    for (int i = 0; i < runs; ++i) {
        stopwatch sw = start_timer();
        check(pn_solver_update_targets(solver, i % 2 ? back : there, &info), &info,
              "pn_solver_update_targets");
        check(pn_solver_solve(solver, PN_START_WARM, &out, &info), &info, "pn_solver_solve");
        stop_timer(&sw, sm);
        stats_add(st, &out, num_rules);
    }
    if (runs % 2) {
        check(pn_solver_update_targets(solver, back, &info), &info, "pn_solver_update_targets");
        check(pn_solver_solve(solver, PN_START_WARM, &out, &info), &info, "pn_solver_solve");
    }
}

/* Per rule, out = (1 - share) a + share b, renormalised to sum 1. */
static void mix_targets(const pn_problem *prob, const double *a, const double *b, double share,
                        double *out)
{
    for (int32_t rule = 0; rule < prob->num_rules; ++rule) {
        double sum = 0.0;
        for (int32_t i = prob->rule_start[rule]; i < prob->rule_start[rule + 1]; ++i) {
            out[i] = (1.0 - share) * a[i] + share * b[i];
            sum += out[i];
        }
        for (int32_t i = prob->rule_start[rule]; i < prob->rule_start[rule + 1]; ++i)
            out[i] /= sum;
    }
}

static void bench_deoverlap(table *t, const options *o)
{
    samples sm = {0};
    int64_t groups = 0;
    pn_error_info info = {0};
    for (int i = 0; i < o->runs; ++i) {
        pn_problem *prob = NULL;
        check(pn_gen_music_rules(&prob, &info), &info, "pn_gen_music_rules");
        stopwatch sw = start_timer();
        check(pn_deoverlap(prob, pn_gen_music_cells, NULL, &info), &info, "pn_deoverlap");
        stop_timer(&sw, &sm);
        groups = prob->num_groups;
        progress("music: de-overlap run %d: %.3f s (%lld groups)", i + 1, sm.v[i],
                 (long long)groups);
        pn_problem_free(prob);
    }
    row *r = add_row(t, "music", "de-overlap, n = 55^4 (pn_gen_music_cells)", UNIT_TIME, &sm,
                     GOAL_BELOW, 1.5);
    snprintf(r->details, sizeof r->details, "K' = %lld groups%s", (long long)groups,
             groups == PN_GEN_MUSIC_GROUPS ? "" : " (UNEXPECTED)");
}

static void bench_music(table *t, const options *o)
{
    pn_error_info info = {0};
    bench_deoverlap(t, o);

    /* targets of other seeds (the same partition A, other sparse
     * distributions), for the context changes; each instance is freed
     * before the next one and before the instance under test is built */
    double *other = malloc((size_t)CONTEXTS * PN_GEN_MUSIC_ROWS * sizeof *other);
    if (!other) {
        fprintf(stderr, "parnassus-bench: out of memory\n");
        exit(1);
    }
    for (int c = 0; c < CONTEXTS; ++c) {
        pn_problem *p2 = NULL;
        check(pn_gen_music_like((uint64_t)c + 2, &p2, &info), &info, "pn_gen_music_like");
        memcpy(other + (size_t)c * PN_GEN_MUSIC_ROWS, p2->target,
               (size_t)p2->num_rows * sizeof *other);
        pn_problem_free(p2);
    }

    samples build = {0};
    pn_problem *prob = NULL;
    stopwatch sw = start_timer();
    check(pn_gen_music_like(1, &prob, &info), &info, "pn_gen_music_like");
    stop_timer(&sw, &build);
    const int K = prob->num_rules, m = prob->num_rows;
    row *r = add_row(t, "music", "build instance (pn_gen_music_like seed 1)", UNIT_TIME, &build,
                     GOAL_NONE, 0.0);
    snprintf(r->details, sizeof r->details, "K = %d, m = %d, K' = %lld; includes a de-overlap", K,
             m, (long long)prob->num_groups);
    progress("music: instance built in %.3f s", build.v[0]);

    /* setup and the plugin's cold realization: a fresh solver each run */
    pn_settings plug;
    pn_settings_default(&plug);
    plug.log2_lambda_w = 0.0;
    plug.restarts = 0;
    plug.grow_seeds = 0;
    samples create = {0}, cold = {0};
    solve_stats cold_st = {0};
    double rss_before = resident_mib(), rss_created = -1.0;
    pn_solver *solver = NULL;
    pn_info out;
    for (int i = 0; i < o->runs; ++i) {
        if (solver)
            pn_solver_free(solver);
        solver = NULL;
        sw = start_timer();
        check(pn_solver_create(prob, &plug, &solver, &info), &info, "pn_solver_create");
        stop_timer(&sw, &create);
        if (i == 0)
            rss_created = resident_mib();
        sw = start_timer();
        check(pn_solver_solve(solver, PN_START_COLD, &out, &info), &info, "pn_solver_solve");
        stop_timer(&sw, &cold);
        stats_add(&cold_st, &out, K);
        progress("music: create %.3f s, cold single start %.3f s (%d alternations, %s)",
                 create.v[i], cold.v[i], out.alternations, pn_status_name(out.status));
    }
    r = add_row(t, "music", "solver setup (pn_solver_create)", UNIT_TIME, &create, GOAL_NONE, 0.0);
    snprintf(r->details, sizeof r->details, "fresh solver each run");
    if (rss_created >= 0.0) {
        samples rss = {0};
        samples_add(&rss, rss_created);
        r = add_row(t, "music", "resident size after pn_solver_create", UNIT_MIB, &rss, GOAL_NONE,
                    0.0);
        snprintf(r->details, sizeof r->details,
                 "/proc/self/statm; %.0f MiB before (instance and generator)", rss_before);
    }
    r = add_row(t, "music", "cold, single start (restarts 0, grow 0), log2 lambda_w = 0", UNIT_TIME,
                &cold, GOAL_BELOW, 1.0);
    stats_format(&cold_st, r->details, sizeof r->details);

    /* warm re-realizations from the converged neighbour */
    const int warm_runs = 2 * o->runs > MAX_RUNS ? MAX_RUNS : 2 * o->runs;
    pn_settings moved = plug;
    moved.log2_lambda_w = 0.25;
    samples warm_l = {0};
    solve_stats warm_l_st = {0};
    warm_settings_series(solver, &moved, &plug, warm_runs, K, &warm_l, &warm_l_st);
    r = add_row(t, "music", "warm, log2 lambda_w 0 <-> 0.25", UNIT_TIME, &warm_l, GOAL_BELOW, 0.1);
    stats_format(&warm_l_st, r->details, sizeof r->details);
    progress("music: warm lambda_w done");

    moved = plug;
    moved.alpha = 0.75;
    samples warm_a = {0};
    solve_stats warm_a_st = {0};
    warm_settings_series(solver, &moved, &plug, warm_runs, K, &warm_a, &warm_a_st);
    r = add_row(t, "music", "warm, alpha 0.8 <-> 0.75", UNIT_TIME, &warm_a, GOAL_BELOW, 0.1);
    stats_format(&warm_a_st, r->details, sizeof r->details);
    progress("music: warm alpha done");

    /* a context change: 95% of the targets, 5% of another seed's, per rule */
    double *mixed = malloc((size_t)m * sizeof *mixed);
    double *orig = malloc((size_t)m * sizeof *orig);
    if (!mixed || !orig) {
        fprintf(stderr, "parnassus-bench: out of memory\n");
        exit(1);
    }
    memcpy(orig, prob->target, (size_t)m * sizeof *orig);
    mix_targets(prob, orig, other, 0.05, mixed);
    samples warm_b = {0};
    solve_stats warm_b_st = {0};
    warm_targets_series(solver, mixed, orig, warm_runs, K, &warm_b, &warm_b_st);
    r = add_row(t, "music", "warm, targets b <-> 0.95 b + 0.05 b(seed 2)", UNIT_TIME, &warm_b,
                GOAL_BELOW, 0.1);
    stats_format(&warm_b_st, r->details, sizeof r->details);
    size_t len = strlen(r->details);
    append(r->details, sizeof r->details, &len, "; includes pn_solver_update_targets");
    progress("music: warm targets (small change) done");

    /* the music model's context changes: every rule's target becomes an
     * even mix of b and the targets of another seed (a clearly different
     * distribution on the same cells: a new support, weights moved by
     * about half), a different context at every step */
    double *ctx = malloc((size_t)CONTEXTS * (size_t)m * sizeof *ctx);
    if (!ctx) {
        fprintf(stderr, "parnassus-bench: out of memory\n");
        exit(1);
    }
    for (int c = 0; c < CONTEXTS; ++c)
        mix_targets(prob, orig, other + (size_t)c * PN_GEN_MUSIC_ROWS, 0.5, ctx + (size_t)c * m);
    samples warm_c = {0};
    solve_stats warm_c_st = {0};
    for (int i = 0; i < warm_runs; ++i) {
        stopwatch csw = start_timer();
        check(pn_solver_update_targets(solver, ctx + (size_t)(i % CONTEXTS) * m, &info), &info,
              "pn_solver_update_targets");
        check(pn_solver_solve(solver, PN_START_WARM, &out, &info), &info, "pn_solver_solve");
        stop_timer(&csw, &warm_c);
        stats_add(&warm_c_st, &out, K);
        progress("music: context change %d: %.3f s (%d Newton)", i + 1, warm_c.v[i],
                 out.newton_iterations);
    }
    r = add_row(t, "music", "warm, targets: context sequence 0.5 b + 0.5 b(seed 2..5)", UNIT_TIME,
                &warm_c, GOAL_BELOW, 0.1);
    stats_format(&warm_c_st, r->details, sizeof r->details);
    len = strlen(r->details);
    append(r->details, sizeof r->details, &len,
           "; a different context each run; includes pn_solver_update_targets");
    progress("music: warm targets (context sequence) done");
    free(ctx);
    pn_solver_free(solver);
    solver = NULL;
    free(mixed);
    free(orig);
    free(other);

    /* the default search, guarded */
    if (o->quick) {
        r = add_row(t, "music", "cold, default search (restarts 8, grow 8), log2 lambda_w = 0",
                    UNIT_TIME, NULL, GOAL_NONE, 0.0);
        snprintf(r->details, sizeof r->details, "skipped (--quick)");
    } else {
        pn_settings full;
        pn_settings_default(&full);
        full.log2_lambda_w = 0.0;
        char what[112];
        snprintf(what, sizeof what,
                 "cold, default search (restarts %d, grow %d), log2 lambda_w = 0", full.restarts,
                 full.grow_seeds);
        guarded_result probe;
        memset(&probe, 0, sizeof probe);
        progress("music: cold default search, probe run (stopped after %.0f s)", GUARD_LIMIT);
        double probe_wall = now(), probe_cpu = children_cpu();
        int rc = guarded_cold_solve(prob, &full, GUARD_LIMIT, &probe);
        probe_wall = now() - probe_wall;
        probe_cpu = children_cpu() - probe_cpu;
        samples sm = {0};
        solve_stats sst = {0};
        if (rc < 0) {
            fprintf(stderr, "parnassus-bench: the guarded default-search solve failed\n");
            exit(1);
        }
        if (rc == 1) {
            r = add_row(t, "music", what, UNIT_TIME, NULL, GOAL_NONE, 0.0);
            snprintf(r->details, sizeof r->details,
                     "skipped: the first run was stopped after %.0f s (%.0f s CPU); not repeated",
                     probe_wall, probe_cpu);
        } else if (probe.seconds >= GUARD_REPEAT) {
            samples_add(&sm, probe.seconds);
            stats_add(&sst, &probe.info, K);
            r = add_row(t, "music", what, UNIT_TIME, &sm, GOAL_NONE, 0.0);
            stats_format(&sst, r->details, sizeof r->details);
            len = strlen(r->details);
            append(r->details, sizeof r->details, &len,
                   "; one run only (>= %.0f s), in a child process; CPU/wall %.2f", GUARD_REPEAT,
                   probe_cpu / probe_wall);
        } else {
            progress("music: probe took %.2f s; repeating in-process", probe.seconds);
            for (int i = 0; i < o->runs; ++i) {
                check(pn_solver_create(prob, &full, &solver, &info), &info, "pn_solver_create");
                sw = start_timer();
                check(pn_solver_solve(solver, PN_START_COLD, &out, &info), &info,
                      "pn_solver_solve");
                stop_timer(&sw, &sm);
                stats_add(&sst, &out, K);
                pn_solver_free(solver);
                solver = NULL;
                progress("music: cold default search run %d: %.3f s", i + 1, sm.v[i]);
            }
            r = add_row(t, "music", what, UNIT_TIME, &sm, GOAL_NONE, 0.0);
            stats_format(&sst, r->details, sizeof r->details);
            len = strlen(r->details);
            append(r->details, sizeof r->details, &len, "; fresh solver each run");
        }
    }
    pn_problem_free(prob);
}

/* ---- main ---- */

static void usage(FILE *f)
{
    fprintf(f,
            "usage: parnassus-bench [--quick] [--markdown] [--only a|music] [--runs N]\n"
            "  --quick      %d runs per row, skip the default-search music solve\n"
            "  --markdown   print the table in Markdown\n"
            "  --only a     only cases A1 and A2; --only music: only the music instance\n"
            "  --runs N     runs per row (default %d; warm rows run 2N)\n",
            QUICK_RUNS, DEFAULT_RUNS);
}

static void parse_options(int argc, char **argv, options *o)
{
    memset(o, 0, sizeof *o);
    o->run_a = o->run_music = 1;
    int runs = 0;
    for (int i = 1; i < argc; ++i) {
        const char *a = argv[i];
        if (strcmp(a, "--quick") == 0) {
            o->quick = 1;
        } else if (strcmp(a, "--markdown") == 0) {
            o->markdown = 1;
        } else if (strcmp(a, "--only") == 0 && i + 1 < argc) {
            const char *v = argv[++i];
            if (strcmp(v, "a") == 0) {
                o->run_music = 0;
            } else if (strcmp(v, "music") == 0) {
                o->run_a = 0;
            } else {
                fprintf(stderr, "parnassus-bench: --only takes 'a' or 'music', not '%s'\n", v);
                exit(2);
            }
        } else if (strcmp(a, "--runs") == 0 && i + 1 < argc) {
            char *end = NULL;
            long v = strtol(argv[++i], &end, 10);
            if (!end || *end || v < 1 || v > MAX_RUNS / 2) {
                fprintf(stderr, "parnassus-bench: --runs takes 1..%d\n", MAX_RUNS / 2);
                exit(2);
            }
            runs = (int)v;
        } else if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            usage(stdout);
            exit(0);
        } else {
            usage(stderr);
            exit(2);
        }
    }
    o->runs = runs ? runs : (o->quick ? QUICK_RUNS : DEFAULT_RUNS);
}

int main(int argc, char **argv)
{
    options o;
    parse_options(argc, argv, &o);
    static table t;
    char load_start[64], load_end[64];
    load_average(load_start, sizeof load_start);
    double t0 = now(), c0 = cpu_now() + children_cpu();
    if (o.run_a) {
        bench_artificial(&t, PN_GEN_A1, &o);
        bench_artificial(&t, PN_GEN_A2, &o);
    }
    if (o.run_music)
        bench_music(&t, &o);
    samples peak = {0};
    samples_add(&peak, peak_mib());
    row *r =
        add_row(&t, "all", "peak resident size (ru_maxrss)", UNIT_MIB, &peak, GOAL_BELOW, 1536.0);
    snprintf(r->details, sizeof r->details, "after everything above, this process");
    load_average(load_end, sizeof load_end);
    double total = now() - t0, cpu = cpu_now() + children_cpu() - c0;

    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    if (o.markdown) {
        print_markdown(&t);
        putchar('\n');
    } else {
        print_text(&t);
        putchar('\n');
    }
    /* CPU / wall well below 1 means the process waited for a core */
    printf("%ld CPUs online; load average (1, 5, 15 min) %s at the start, %s at the end; "
           "%.0f s wall, %.0f s CPU (ratio %.2f) in all.\n",
           cpus, load_start, load_end, total, cpu, total > 0.0 ? cpu / total : 0.0);
    int missed = 0;
    for (int i = 0; i < t.count; ++i) {
        const row *x = &t.rows[i];
        if (x->runs > 0 && ((x->goal == GOAL_BELOW && !(x->median < x->target)) ||
                            (x->goal == GOAL_AT_LEAST && !(x->min >= x->target))))
            ++missed;
    }
    if (missed)
        printf("%d target%s not met.\n", missed, missed == 1 ? "" : "s");
    else
        printf("All targets met.\n");
    return 0;
}

/* parnassus-bench: measurements, the table and its printing, process
 * figures (bench_support.h). */
#define _POSIX_C_SOURCE 200809L

#include "bench_support.h"

#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

/* ---- measurements ---- */

double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

double children_cpu(void)
{
    struct rusage ru;
    if (getrusage(RUSAGE_CHILDREN, &ru) != 0)
        return 0.0;
    return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
           1e-6 * (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
}

void progress(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    fflush(stderr);
}

void check(pn_error err, const pn_error_info *info, const char *call)
{
    if (err == PN_OK)
        return;
    fprintf(stderr, "parnassus-bench: %s failed: %s: %s\n", call, pn_error_name(err),
            info->message);
    exit(1);
}

void *xmalloc(size_t size)
{
    void *p = malloc(size ? size : 1);
    if (!p) {
        fprintf(stderr, "parnassus-bench: out of memory\n");
        exit(1);
    }
    return p;
}

void samples_add(samples *s, double v)
{
    if (s->n < MAX_RUNS)
        s->v[s->n++] = v;
}

stopwatch start_timer(void)
{
    stopwatch sw = {now(), cpu_now()};
    return sw;
}

void record_run(samples *s, double wall, double cpu)
{
    s->wall += wall;
    s->cpu += cpu;
    samples_add(s, wall);
}

void stop_timer(const stopwatch *sw, samples *s)
{
    record_run(s, now() - sw->wall, cpu_now() - sw->cpu);
}

void stop_timer_at(const stopwatch *sw, samples *s, double wall)
{
    record_run(s, wall, cpu_now() - sw->cpu);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

void range_update(int *range, int v, int first)
{
    if (first || v < range[0])
        range[0] = v;
    if (first || v > range[1])
        range[1] = v;
}

void stats_add(solve_stats *st, const pn_info *in, int num_rules)
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

void append(char *buf, size_t n, size_t *len, const char *fmt, ...)
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

void append_range(char *buf, size_t n, size_t *len, const char *name, const int *range)
{
    if (range[0] == range[1])
        append(buf, n, len, "%s %d", name, range[0]);
    else
        append(buf, n, len, "%s %d-%d", name, range[0], range[1]);
}

void stats_format(const solve_stats *st, char *buf, size_t n)
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

row *add_row(table *t, const char *label, const char *what, unit u, const samples *s, goal g,
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
    case UNIT_RATE:
        snprintf(buf, n, "%.1f M/s", v);
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
    case GOAL_NONE_OVER:
        snprintf(cells[6], CELL_SIZE, "%s in every run", tv);
        snprintf(cells[7], CELL_SIZE, "%s",
                 r->runs == 0 ? "-" : (r->max <= r->target ? "yes" : "NOT MET"));
        break;
    }
    if (r->cpu_share >= 0.0)
        snprintf(cells[8], CELL_SIZE, "%s%sCPU/wall %.2f", r->details, r->details[0] ? "; " : "",
                 r->cpu_share);
    else
        snprintf(cells[8], CELL_SIZE, "%s", r->details);
}

void print_text(const table *t)
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

void print_markdown(const table *t)
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

int rows_missed(const table *t)
{
    int missed = 0;
    for (int i = 0; i < t->count; ++i) {
        const row *x = &t->rows[i];
        if (x->runs > 0 && ((x->goal == GOAL_BELOW && !(x->median < x->target)) ||
                            (x->goal == GOAL_AT_LEAST && !(x->min >= x->target)) ||
                            (x->goal == GOAL_NONE_OVER && !(x->max <= x->target))))
            ++missed;
    }
    return missed;
}

/* ---- system figures ---- */

double resident_mib(void)
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

double peak_mib(void)
{
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) != 0)
        return -1.0;
    return (double)ru.ru_maxrss / 1024.0; /* Linux: KiB */
}

void load_average(char *buf, size_t n)
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

/* Real-time priority for this (the audio) thread, as hosts give theirs;
 * the worker thread, started before, keeps the normal policy. */
int make_realtime(void)
{
    struct sched_param p = {0};
    p.sched_priority = 50;
    return pthread_setschedparam(pthread_self(), SCHED_FIFO, &p) == 0;
}

/* Back to the normal policy, if make_realtime() succeeded. */
void leave_realtime(int realtime)
{
    if (realtime) {
        struct sched_param p = {0};
        pthread_setschedparam(pthread_self(), SCHED_OTHER, &p);
    }
}

/* Sleeps until the monotonic time `due` (seconds, as now()). */
void sleep_until(double due)
{
    const double wait = due - now();
    if (wait > 0) {
        struct timespec ts = {(time_t)wait, (long)((wait - floor(wait)) * 1e9)};
        nanosleep(&ts, NULL);
    }
}

/* Reads the clock back to back for `window` seconds; the largest gap. */
double largest_gap(double window)
{
    const double start = now();
    double last = start, gap = 0;
    while (last - start < window) {
        const double t = now();
        if (t - last > gap)
            gap = t - last;
        last = t;
    }
    return gap;
}

void print_blas(void)
{
    pn_blas_info blas;
    pn_blas_describe(&blas);
    printf("BLAS: OpenBLAS kernels %s", blas.core);
    if (blas.underused)
        printf(" on a CPU with AVX2 and FMA, which they leave unused (this OpenBLAS does not "
               "know the CPU): OPENBLAS_CORETYPE=%s in the environment selects kernels "
               "that use them",
               blas.suggested_core);
    printf(".\n");
}

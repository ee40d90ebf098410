/* parnassus-bench: measurement and table infrastructure shared by every
 * part (docs/benchmarks.md): run samples and stopwatches, the rows of the
 * table and their text/Markdown printing, aggregated solver statistics,
 * progress and error reporting, process figures (resident size, CPU time,
 * load average). */
#ifndef PARNASSUS_BENCH_SUPPORT_H
#define PARNASSUS_BENCH_SUPPORT_H

#include <stddef.h>

#include "parnassus/error.h"
#include "parnassus/solver.h"

enum {
    MAX_RUNS = 64,
    MAX_ROWS = 48,
};

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
    UNIT_RATE,  /* millions per second */
} unit;

typedef enum goal {
    GOAL_NONE,      /* informative row */
    GOAL_BELOW,     /* median < target */
    GOAL_AT_LEAST,  /* every run >= target */
    GOAL_NONE_OVER, /* every run <= target (a count that must stay at 0, say) */
} goal;

typedef struct row {
    char label[32];
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

/* Wall-clock seconds (CLOCK_MONOTONIC). */
double now(void);
/* CPU time of this process: wall / CPU shows how much it had to share. */
double cpu_now(void);
/* CPU time of the finished child processes (the guarded solves). */
double children_cpu(void);

/* A line on stderr. */
void progress(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;

/* Exits with status 1, naming the call, when err is not PN_OK. */
void check(pn_error err, const pn_error_info *info, const char *call);

/* malloc that exits with status 1 when it fails. */
void *xmalloc(size_t size);

void samples_add(samples *s, double v);
stopwatch start_timer(void);
/* Records the wall time since `sw` as one run of `s`. */
void stop_timer(const stopwatch *sw, samples *s);
/* The same with the wall time the solver reports (pn_info's solve_time,
 * update_time, setup_time) instead of the stopwatch's; the CPU time is
 * still the stopwatch's. */
void stop_timer_at(const stopwatch *sw, samples *s, double wall);
/* Records one run of `s` that took `wall` seconds and `cpu` CPU seconds. */
void record_run(samples *s, double wall, double cpu);

/* Widens range[0..1] to hold v; `first` starts it at v. */
void range_update(int *range, int v, int first);
void stats_add(solve_stats *st, const pn_info *in, int num_rules);
/* "alt a-b, starts .., Newton .., KKT p .. w .., status, selected a-b/K". */
void stats_format(const solve_stats *st, char *buf, size_t n);

/* Appends to buf (size n) at *len. */
void append(char *buf, size_t n, size_t *len, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;
/* "name a" or "name a-b". */
void append_range(char *buf, size_t n, size_t *len, const char *name, const int *range);

/* ---- the table ---- */

/* A new row from the runs in s (NULL: skipped, 0 runs). */
row *add_row(table *t, const char *label, const char *what, unit u, const samples *s, goal g,
             double target);
/* Rows whose target is not met. */
int rows_missed(const table *t);
void print_text(const table *t);
void print_markdown(const table *t);

/* ---- system figures ---- */

/* One line on the BLAS kernels the solver runs (pn_blas_describe), and
 * what to set when they leave the CPU's AVX2 and FMA unused. */
void print_blas(void);

/* The resident set (/proc/self/statm), MiB; < 0 when unknown. */
double resident_mib(void);
/* getrusage(RUSAGE_SELF).ru_maxrss, MiB; < 0 when unknown. */
double peak_mib(void);
/* "a b c" from /proc/loadavg, or "unknown". */
void load_average(char *buf, size_t n);

/* ---- pacing a real-time thread ---- */

/* SCHED_FIFO 50 for the calling thread, as audio hosts give theirs;
 * returns nonzero when it was allowed. */
int make_realtime(void);
/* Back to the normal policy, if make_realtime() succeeded. */
void leave_realtime(int realtime);
/* Sleeps until the monotonic time `due` (seconds, as now()). */
void sleep_until(double due);
/* Reads the clock back to back for `window` seconds; the largest gap:
 * what the machine alone adds to a measurement's max. */
double largest_gap(double window);

#endif

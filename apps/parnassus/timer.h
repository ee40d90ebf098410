/* Wall-clock seconds from the monotonic clock, for the "seconds" the CLI
 * reports around a solve or a path. Needs POSIX clock_gettime (the build
 * defines _POSIX_C_SOURCE). */
#ifndef PARNASSUS_CLI_TIMER_H
#define PARNASSUS_CLI_TIMER_H

#include <time.h>

#if !defined(CLOCK_MONOTONIC)
#error "timer.h needs CLOCK_MONOTONIC: compile with _POSIX_C_SOURCE >= 199309L"
#endif

/* Seconds since an arbitrary fixed point; only differences mean anything. */
static inline double pn_timer_now(void)
{
    struct timespec ts;
    if (clock_gettime(CLOCK_MONOTONIC, &ts) != 0)
        return 0.0;
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

#endif

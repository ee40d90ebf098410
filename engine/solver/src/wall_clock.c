/* The monotonic clock (wall_clock.h). */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */

#include "wall_clock.h"

#include <time.h>

double pn_clock_seconds(void)
{
    struct timespec ts;
    if (clock_gettime(CLOCK_MONOTONIC, &ts) != 0)
        return 0.0;
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

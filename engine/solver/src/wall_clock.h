/* Wall-clock seconds for the times the solver reports in pn_info. Internal
 * to the engine. */
#ifndef PN_WALL_CLOCK_H
#define PN_WALL_CLOCK_H

/* Seconds from the monotonic clock since an arbitrary fixed point; only
 * differences mean anything (0 if the clock cannot be read). */
double pn_clock_seconds(void);

#endif

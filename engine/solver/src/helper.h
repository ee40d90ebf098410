/* Helper threads for the p-step's passes over all groups: started once
 * when the solver is set up, each runs one job at a time while the calling
 * thread runs its own share. Starting a job and waiting for it allocate
 * nothing (a mutex and condition variables; never on an audio thread: the
 * solver runs on a worker). Internal to the engine. */
#ifndef PN_HELPER_H
#define PN_HELPER_H

#include "parnassus/error.h"

typedef struct pn_helper pn_helper;

typedef void (*pn_helper_job)(void *arg);

pn_error pn_helper_create(pn_helper **out, pn_error_info *info);

/* Joins the thread. NULL is allowed. */
void pn_helper_free(pn_helper *h);

/* Starts job(arg) on the helper's thread; the helper must be idle (every
 * job started has been waited for). */
void pn_helper_start(pn_helper *h, pn_helper_job job, void *arg);

/* Returns once the job started last has finished; its writes are then
 * visible to the caller. */
void pn_helper_wait(pn_helper *h);

#endif

/* A real-time guard for tests that host the plugin: counts malloc, calloc,
 * realloc, free and pthread_mutex_lock calls made on the audio thread
 * while the host runs run(), work_response() or end_run() — and not while
 * the worker runs, even when a synchronous host nests work() inside run().
 * The calls are seen through interpose.c (glibc builds without sanitizers
 * only: elsewhere RT_GUARD_WORKS is 0 and nothing is counted). */
#ifndef PARNASSUS_TEST_RT_GUARD_H
#define PARNASSUS_TEST_RT_GUARD_H

#include "interpose.h"

#define RT_GUARD_WORKS INTERPOSE_WORKS

/* Host hooks (pnh_hooks): enter/leave the audio side or the worker. */
void rt_guard_audio_enter(void *user);
void rt_guard_audio_leave(void *user);
void rt_guard_worker_enter(void *user);
void rt_guard_worker_leave(void *user);

/* Calls counted so far, and which kind the first one was. */
long rt_guard_count(void);
const char *rt_guard_first(void);
void rt_guard_reset(void);

/* 1 when the guard sees this binary's calls (checks itself). */
int rt_guard_self_check(void);

#endif

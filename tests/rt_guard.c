/* The real-time guard (rt_guard.h). */
#include "rt_guard.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>

/* Per thread, a stack of what the thread is doing: 1 audio, 0 worker. */
static _Thread_local int stack[32];
static _Thread_local int depth;
static atomic_long counted;
static _Atomic(const char *) first;

static inline int on_audio(void)
{
    return depth > 0 && stack[depth - 1] == 1;
}

static void push(int what)
{
    if (depth < (int)(sizeof stack / sizeof stack[0]))
        stack[depth] = what;
    ++depth;
}

static void pop(void)
{
    if (depth > 0)
        --depth;
}

static void hit(const char *what)
{
    if (!on_audio())
        return;
    const char *none = NULL;
    atomic_compare_exchange_strong(&first, &none, what);
    atomic_fetch_add(&counted, 1);
}

void rt_guard_audio_enter(void *user)
{
    (void)user;
    push(1);
}

void rt_guard_audio_leave(void *user)
{
    (void)user;
    pop();
}

void rt_guard_worker_enter(void *user)
{
    (void)user;
    push(0);
}

void rt_guard_worker_leave(void *user)
{
    (void)user;
    pop();
}

long rt_guard_count(void)
{
    return atomic_load(&counted);
}

const char *rt_guard_first(void)
{
    const char *f = atomic_load(&first);
    return f ? f : "(none)";
}

void rt_guard_reset(void)
{
    interpose_hook = hit; /* from here on (the test's main thread, before the runs) */
    atomic_store(&counted, 0);
    atomic_store(&first, NULL);
}

#if RT_GUARD_WORKS
int rt_guard_self_check(void)
{
    void *(*volatile alloc_fn)(size_t) = malloc;
    int (*volatile lock_fn)(pthread_mutex_t *) = pthread_mutex_lock;
    pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
    rt_guard_reset();
    rt_guard_audio_enter(NULL);
    free(alloc_fn(16));
    lock_fn(&m);
    pthread_mutex_unlock(&m);
    rt_guard_worker_enter(NULL);
    free(alloc_fn(16)); /* the worker may allocate */
    rt_guard_worker_leave(NULL);
    rt_guard_audio_leave(NULL);
    const long seen = rt_guard_count();
    rt_guard_reset();
    return seen == 3;
}
#else
int rt_guard_self_check(void)
{
    return 0;
}
#endif

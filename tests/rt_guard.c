#define _GNU_SOURCE /* RTLD_NEXT */
/* The real-time guard (rt_guard.h). */
#include "rt_guard.h"

#include <dlfcn.h>
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

static inline void hit(const char *what)
{
    if (!on_audio())
        return;
    const char *none = NULL;
    atomic_compare_exchange_strong(&first, &none, what);
    atomic_fetch_add(&counted, 1);
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
    atomic_store(&counted, 0);
    atomic_store(&first, NULL);
}

#if RT_GUARD_WORKS
void *__libc_malloc(size_t size);
void *__libc_calloc(size_t n, size_t size);
void *__libc_realloc(void *ptr, size_t size);
void __libc_free(void *ptr);

void *malloc(size_t size)
{
    hit("malloc");
    return __libc_malloc(size);
}

void *calloc(size_t n, size_t size)
{
    hit("calloc");
    return __libc_calloc(n, size);
}

void *realloc(void *ptr, size_t size)
{
    hit("realloc");
    return __libc_realloc(ptr, size);
}

void free(void *ptr)
{
    if (ptr)
        hit("free");
    __libc_free(ptr);
}

int pthread_mutex_lock(pthread_mutex_t *mutex)
{
    typedef int (*lock_fn)(pthread_mutex_t *);
    static _Atomic(lock_fn) real;
    lock_fn f = atomic_load(&real);
    if (!f) { /* the C library's, found once (dlsym takes no mutex through this name) */
        *(void **)&f = dlsym(RTLD_NEXT, "pthread_mutex_lock");
        atomic_store(&real, f);
    }
    hit("pthread_mutex_lock");
    return f(mutex);
}

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

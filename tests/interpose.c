/* The interposed calls (interpose.h). */
#define _GNU_SOURCE /* RTLD_NEXT */
#include "interpose.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>

void (*interpose_hook)(const char *call);

#if INTERPOSE_WORKS
void *__libc_malloc(size_t size);
void *__libc_calloc(size_t n, size_t size);
void *__libc_realloc(void *ptr, size_t size);
void __libc_free(void *ptr);

static void report(const char *call)
{
    void (*hook)(const char *) = interpose_hook;
    if (hook)
        hook(call);
}

void *malloc(size_t size)
{
    report("malloc");
    return __libc_malloc(size);
}

void *calloc(size_t n, size_t size)
{
    report("calloc");
    return __libc_calloc(n, size);
}

void *realloc(void *ptr, size_t size)
{
    report("realloc");
    return __libc_realloc(ptr, size);
}

void free(void *ptr)
{
    if (ptr)
        report("free");
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
    report("pthread_mutex_lock");
    return f(mutex);
}
#endif

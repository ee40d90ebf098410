/* The test binaries' own malloc, calloc, realloc, free and
 * pthread_mutex_lock: wrappers of the C library's that report every call
 * to a hook, so a test can prove a stretch of code (or a thread) never
 * allocates or locks. Code loaded with dlopen (the plugin) resolves those
 * names to the binary's too. Glibc builds without sanitizers only
 * (sanitizers interpose malloc themselves): there INTERPOSE_WORKS is 0 and
 * the hook is never called. alloc_count.c and rt_guard.c are the two
 * users. */
#ifndef PARNASSUS_TEST_INTERPOSE_H
#define PARNASSUS_TEST_INTERPOSE_H

#include <stdlib.h> /* defines __GLIBC__ */

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define INTERPOSE_WORKS 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) ||                         \
    __has_feature(memory_sanitizer)
#define INTERPOSE_WORKS 0
#endif
#endif
#if !defined(INTERPOSE_WORKS)
#if defined(__GLIBC__)
#define INTERPOSE_WORKS 1
#else
#define INTERPOSE_WORKS 0
#endif
#endif

/* Called with "malloc", "calloc", "realloc", "free" (non-NULL pointers
 * only) or "pthread_mutex_lock" before the call goes through; NULL: none. */
extern void (*interpose_hook)(const char *call);

#endif

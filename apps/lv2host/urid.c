/* URID map and unmap: a growing table of URIs, id = index + 1. It is used
 * off the audio thread only (instantiate, the worker, the host itself),
 * so a mutex and a linear search are good enough. */
#include "host_internal.h"

#include <stdlib.h>
#include <string.h>

int pnh_urid_init(pnh_urid_table *t)
{
    t->uris = NULL;
    t->count = t->capacity = 0;
    return pthread_mutex_init(&t->lock, NULL) == 0;
}

void pnh_urid_free(pnh_urid_table *t)
{
    for (size_t i = 0; i < t->count; ++i)
        free(t->uris[i]);
    free(t->uris);
    t->uris = NULL;
    t->count = t->capacity = 0;
    pthread_mutex_destroy(&t->lock);
}

LV2_URID pnh_urid_map(LV2_URID_Map_Handle handle, const char *uri)
{
    pnh_urid_table *t = handle;
    if (!uri)
        return 0;
    LV2_URID id = 0;
    pthread_mutex_lock(&t->lock);
    for (size_t i = 0; i < t->count; ++i) {
        if (strcmp(t->uris[i], uri) == 0) {
            id = (LV2_URID)(i + 1);
            goto done;
        }
    }
    if (t->count == t->capacity) {
        size_t cap = t->capacity ? 2 * t->capacity : 128;
        char **p = realloc(t->uris, cap * sizeof *p);
        if (!p)
            goto done;
        t->uris = p;
        t->capacity = cap;
    }
    size_t len = strlen(uri) + 1;
    char *copy = malloc(len);
    if (!copy)
        goto done;
    memcpy(copy, uri, len);
    t->uris[t->count++] = copy;
    id = (LV2_URID)t->count;
done:
    pthread_mutex_unlock(&t->lock);
    return id;
}

const char *pnh_urid_unmap(LV2_URID_Unmap_Handle handle, LV2_URID urid)
{
    pnh_urid_table *t = handle;
    const char *uri = NULL;
    pthread_mutex_lock(&t->lock);
    if (urid >= 1 && urid <= t->count)
        uri = t->uris[urid - 1]; /* the strings never move */
    pthread_mutex_unlock(&t->lock);
    return uri;
}

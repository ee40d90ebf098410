/* Where a program of this project finds parnassus.lv2 (lv2host.h). */
#include "lv2host.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int has_manifest(const char *dir)
{
    char path[PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/manifest.ttl", dir);
    return access(path, R_OK) == 0;
}

const char *pnh_find_bundle(const char *given, const char *name, char *buf, size_t size)
{
    if (given)
        return given;
    const char *lv2_path = getenv("LV2_PATH");
    if (lv2_path && lv2_path[0])
        return NULL;
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0)
        return NULL;
    exe[n] = '\0';
    for (int up = 0; up < 3; ++up) { /* the program, its directory, apps/ */
        char *slash = strrchr(exe, '/');
        if (!slash)
            return NULL;
        *slash = '\0';
    }
    int len = snprintf(buf, size, "%s/lv2/%s", exe, name);
    return len > 0 && (size_t)len < size && has_manifest(buf) ? buf : NULL;
}

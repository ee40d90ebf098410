/* Finding the shipped data (see data_dir.h). */
#include "data_dir.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef PN_BIN_TO_DATA
#define PN_BIN_TO_DATA "../share/parnassus"
#endif

/* Appends "dir/relative" to tried and, when it can be opened, copies it to
 * path and returns 1. */
static int try_dir(const char *dir, const char *relative, char *path, size_t size, char *tried,
                   size_t tried_size)
{
    char candidate[4096];
    int n = snprintf(candidate, sizeof candidate, "%s/%s", dir, relative);
    if (n < 0 || (size_t)n >= sizeof candidate)
        return 0;
    size_t used = strlen(tried);
    if (used + 1 < tried_size)
        snprintf(tried + used, tried_size - used, "%s%s", used ? ", " : "", candidate);
    FILE *f = fopen(candidate, "rb");
    if (!f)
        return 0;
    fclose(f);
    if ((size_t)n >= size)
        return 0;
    memcpy(path, candidate, (size_t)n + 1);
    return 1;
}

/* The directory of the running executable, or "" when unknown. */
static void executable_dir(char *buf, size_t size)
{
    buf[0] = '\0';
    if (size < 2)
        return;
    ssize_t n = readlink("/proc/self/exe", buf, size - 1);
    if (n <= 0) {
        buf[0] = '\0';
        return;
    }
    buf[n] = '\0';
    char *slash = strrchr(buf, '/');
    if (slash)
        *slash = '\0';
    else
        buf[0] = '\0';
}

int pn_cli_find_data(const char *relative, char *path, size_t size, char *tried, size_t tried_size)
{
    if (tried_size > 0)
        tried[0] = '\0';
    const char *env = getenv("PARNASSUS_DATA_DIR");
    if (env && env[0] != '\0' && try_dir(env, relative, path, size, tried, tried_size))
        return 0;
    char exe[4096], dir[4200];
    executable_dir(exe, sizeof exe);
    if (exe[0] != '\0') {
        snprintf(dir, sizeof dir, "%s/%s", exe, PN_BIN_TO_DATA);
        if (try_dir(dir, relative, path, size, tried, tried_size))
            return 0;
    }
#ifdef PN_SOURCE_DATA_DIR
    if (try_dir(PN_SOURCE_DATA_DIR, relative, path, size, tried, tried_size))
        return 0;
#endif
    return -1;
}

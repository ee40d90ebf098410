/* log:log: the plugin's messages are kept in a fixed buffer (so logging
 * never allocates), optionally echoed to stderr. */
#include "host_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void pnh_log_init(pnh_log *log, LV2_URID_Map *map, int to_stderr)
{
    pthread_mutex_init(&log->lock, NULL);
    log->text[0] = '\0';
    log->used = 0;
    log->errors = 0;
    log->to_stderr = to_stderr;
    log->error = map->map(map->handle, LV2_LOG__Error);
    log->warning = map->map(map->handle, LV2_LOG__Warning);
    log->note = map->map(map->handle, LV2_LOG__Note);
    log->trace = map->map(map->handle, LV2_LOG__Trace);
}

void pnh_log_free(pnh_log *log)
{
    pthread_mutex_destroy(&log->lock);
}

static const char *prefix(const pnh_log *log, LV2_URID type)
{
    if (type == log->error)
        return "error: ";
    if (type == log->warning)
        return "warning: ";
    if (type == log->trace)
        return "trace: ";
    return "note: ";
}

int pnh_log_vprintf(LV2_Log_Handle handle, LV2_URID type, const char *fmt, va_list ap)
{
    pnh_log *log = handle;
    char line[1024];
    int n = vsnprintf(line, sizeof line, fmt, ap);
    if (n < 0)
        return 0;
    const char *pre = prefix(log, type);
    pthread_mutex_lock(&log->lock);
    if (type == log->error)
        log->errors++;
    size_t room = sizeof log->text - log->used;
    int w = snprintf(log->text + log->used, room, "%s%s", pre, line);
    if (w > 0)
        log->used += (size_t)w < room ? (size_t)w : room - 1;
    if (log->to_stderr)
        fprintf(stderr, "%s%s", pre, line);
    pthread_mutex_unlock(&log->lock);
    return n;
}

int pnh_log_printf(LV2_Log_Handle handle, LV2_URID type, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = pnh_log_vprintf(handle, type, fmt, ap);
    va_end(ap);
    return n;
}

const char *pnh_log_text(const pnh_host *h)
{
    return h ? h->log.text : "";
}

int pnh_log_errors(const pnh_host *h)
{
    return h ? h->log.errors : 0;
}

void pnh_log_clear(pnh_host *h)
{
    if (!h)
        return;
    pthread_mutex_lock(&h->log.lock);
    h->log.text[0] = '\0';
    h->log.used = 0;
    h->log.errors = 0;
    pthread_mutex_unlock(&h->log.lock);
}

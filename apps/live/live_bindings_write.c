/* Writing a MIDI-learn map file (pnl_bindings_save): the table checked,
 * its JSON text written to a temporary file next to the map and renamed
 * over it; and the map's default path. */
#include "live_bindings_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

/* What save writes must load again: the bindings set accepts, one per
 * source. */
static pn_error check_table(const pnl_bindings *b, const char *path, pn_error_info *info)
{
    if (b->count < 0 || b->count > PNL_BINDINGS_MAX)
        return pn_fail(info, PN_ERR_INVALID, "%.200s: the table holds %d bindings (0..%d)", path,
                       b->count, PNL_BINDINGS_MAX);
    for (int i = 0; i < b->count; ++i) {
        const pnl_binding *x = &b->binding[i];
        if (!pnl_source_valid(x->kind, x->channel, x->number) || !pnl_target_valid(x->target) ||
            (!pnl_source_has_number(x->kind) && x->number != 0))
            return pn_fail(info, PN_ERR_INVALID, "%.200s: binding %d is not valid", path, i);
        if (pnl_bindings_find_exact(b, x->kind, x->channel, x->number) != i)
            return pn_fail(info, PN_ERR_INVALID, "%.200s: bindings %d and %d have one source", path,
                           pnl_bindings_find_exact(b, x->kind, x->channel, x->number), i);
    }
    return PN_OK;
}

static json_t *binding_to_json(const pnl_binding *x)
{
    json_t *o = json_object();
    if (!o)
        return NULL;
    int failed = json_object_set_new(o, "source", json_string(pnl_source_name(x->kind)));
    failed |= json_object_set_new(
        o, "channel", x->channel < 0 ? json_string("any") : json_integer(x->channel + 1));
    if (pnl_source_has_number(x->kind))
        failed |= json_object_set_new(o, "number", json_integer(x->number));
    failed |= json_object_set_new(o, "target", json_string(x->target));
    if (failed) {
        json_decref(o);
        return NULL;
    }
    return o;
}

/* The file's text, NUL-terminated and malloc'ed; NULL when out of memory. */
static char *map_text(const pnl_bindings *b)
{
    json_t *root = json_object(), *list = json_array();
    int failed = !root || !list;
    for (int i = 0; i < b->count && !failed; ++i)
        failed = json_array_append_new(list, binding_to_json(&b->binding[i])) != 0;
    char *text = NULL;
    if (!failed && json_object_set_new(root, "format", json_string(PNL_MAP_FORMAT)) == 0 &&
        json_object_set(root, "bindings", list) == 0)
        text = json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    json_decref(list);
    json_decref(root);
    return text;
}

/* mkdir -p of the directory that holds path. */
static pn_error make_parent_directories(const char *path, pn_error_info *info)
{
    char *dir = strdup(path);
    if (!dir)
        return pn_fail(info, PN_ERR_NOMEM, "%.200s: out of memory", path);
    char *slash = strrchr(dir, '/');
    pn_error err = PN_OK;
    if (slash && slash != dir) {
        *slash = '\0';
        for (char *p = dir + 1; err == PN_OK; ++p) {
            if (*p != '/' && *p != '\0')
                continue;
            const char end = *p;
            *p = '\0';
            if (mkdir(dir, 0700) != 0 && errno != EEXIST)
                err = pn_fail(info, PN_ERR_IO, "%.200s: cannot create directory %.200s: %s", path,
                              dir, strerror(errno));
            *p = end;
            if (end == '\0')
                break;
        }
    }
    free(dir);
    return err;
}

static int write_all(int fd, const char *data, size_t len)
{
    while (len > 0) {
        const ssize_t n = write(fd, data, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        data += n;
        len -= (size_t)n;
    }
    return 0;
}

/* Writes text and a newline to a new temporary file next to path, which
 * on success is named in *tmp_out (malloc'ed). */
static pn_error write_temporary(const char *path, const char *text, char **tmp_out,
                                pn_error_info *info)
{
    static const char suffix[] = ".XXXXXX";
    const size_t len = strlen(path);
    char *tmp = malloc(len + sizeof suffix);
    if (!tmp)
        return pn_fail(info, PN_ERR_NOMEM, "%.200s: out of memory", path);
    memcpy(tmp, path, len);
    memcpy(tmp + len, suffix, sizeof suffix);
    const int fd = mkstemp(tmp);
    if (fd < 0) {
        const pn_error err = pn_fail(info, PN_ERR_IO, "%.200s: cannot create a temporary file: %s",
                                     path, strerror(errno));
        free(tmp);
        return err;
    }
    struct stat old;
    if (stat(path, &old) == 0)
        (void)fchmod(fd, old.st_mode & 07777); /* a replaced file keeps its mode */
    int failed =
        write_all(fd, text, strlen(text)) != 0 || write_all(fd, "\n", 1) != 0 || fsync(fd) != 0;
    int reason = failed ? errno : 0;
    if (close(fd) != 0 && !failed) {
        failed = 1;
        reason = errno;
    }
    if (failed) {
        const pn_error err = pn_fail(info, PN_ERR_IO, "%.200s: cannot write: %s", path,
                                     strerror(reason ? reason : EIO));
        unlink(tmp);
        free(tmp);
        return err;
    }
    *tmp_out = tmp;
    return PN_OK;
}

pn_error pnl_bindings_save(const pnl_bindings *b, const char *path, pn_error_info *info)
{
    if (!b || !path || !path[0])
        return pn_fail(info, PN_ERR_INVALID, "pnl_bindings_save: NULL argument or empty path");
    pn_error err = check_table(b, path, info);
    if (err != PN_OK)
        return err;
    char *text = map_text(b);
    if (!text)
        return pn_fail(info, PN_ERR_NOMEM, "%.200s: out of memory", path);
    char *tmp = NULL;
    err = make_parent_directories(path, info);
    if (err == PN_OK)
        err = write_temporary(path, text, &tmp, info);
    free(text);
    if (err != PN_OK)
        return err;
    if (rename(tmp, path) != 0) {
        err = pn_fail(info, PN_ERR_IO, "%.200s: cannot replace: %s", path, strerror(errno));
        unlink(tmp);
    }
    free(tmp);
    return err;
}

/* ------------------------------------------------------------------------ */
/* The default path */

/* The path under base, measured first so a short buffer stays untouched. */
static int path_under(char *out, size_t cap, const char *base, const char *rest)
{
    const int n = snprintf(NULL, 0, "%s/%s", base, rest);
    if (!out || n <= 0 || (size_t)n >= cap)
        return 0;
    return snprintf(out, cap, "%s/%s", base, rest);
}

int pnl_bindings_default_path(char *out, size_t cap)
{
    const char *xdg = getenv("XDG_CONFIG_HOME");
    const char *home = getenv("HOME");
    if (xdg && xdg[0] == '/') /* the XDG spec ignores relative ones */
        return path_under(out, cap, xdg, "parnassus/live-map.json");
    if (home && home[0])
        return path_under(out, cap, home, ".config/parnassus/live-map.json");
    return 0;
}

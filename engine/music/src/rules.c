/* Rule sets: the "parnassus-rules/1" reader's entry points and the top
 * level of a file, its fields and its space (docs/rule-format.md). One
 * rule is read in rules_rule.c, its context levels in rules_context.c. */
#include "parnassus/rules.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "json_messages.h"
#include "rules_reader.h"
#include "text.h"

#include "parnassus/file.h"

/* ------------------------------------------------------------------------ */
/* The space */

static pn_error read_space(const pn_rr *rd, const json_t *root, pn_space *space)
{
    const json_t *sp = json_object_get(root, "space");
    if (!sp) {
        pn_space_default(space);
        return PN_OK;
    }
    if (!json_is_object(sp)) {
        return pn_rr_fail_type(rd, "space", "an object", sp);
    }
    static const char *const keys[] = {"voices", "low", "high", "ranges", NULL};
    pn_error err = pn_rr_check_keys(rd, "space", sp, keys);
    if (err != PN_OK)
        return err;

    const json_t *voices = json_object_get(sp, "voices");
    const json_t *ranges = json_object_get(sp, "ranges");
    const json_t *low = json_object_get(sp, "low");
    const json_t *high = json_object_get(sp, "high");
    int k = PN_SPACE_DEFAULT_VOICES;
    if (voices &&
        (err = pn_rr_get_int(rd, "space.voices", voices, 1, PN_SPACE_MAX_VOICES, &k)) != PN_OK)
        return err;
    int lo[PN_SPACE_MAX_VOICES] = {0}, hi[PN_SPACE_MAX_VOICES] = {0};
    char path[64];
    if (ranges) {
        if (low || high)
            return pn_rr_fail_at(rd, "space",
                                 "give either \"ranges\" or \"low\"/\"high\", not both");
        if (!json_is_array(ranges)) {
            return pn_rr_fail_type(rd, "space.ranges", "an array of [low, high] pairs", ranges);
        }
        size_t count = json_array_size(ranges);
        if (count < 1 || count > PN_SPACE_MAX_VOICES)
            return pn_rr_fail_at(rd, "space.ranges",
                                 "must have 1..%d entries (one per voice), got %zu",
                                 PN_SPACE_MAX_VOICES, count);
        if (voices && (size_t)k != count)
            return pn_rr_fail_at(rd, "space.ranges", "has %zu entries but space.voices is %d",
                                 count, k);
        k = (int)count;
        for (int v = 0; v < k; ++v) {
            const json_t *pair = json_array_get(ranges, (size_t)v);
            snprintf(path, sizeof path, "space.ranges[%d]", v);
            if (!json_is_array(pair) || json_array_size(pair) != 2)
                return pn_rr_fail_at(rd, path, "expected a [low, high] pair of MIDI pitches");
            char p2[80];
            snprintf(p2, sizeof p2, "%s[0]", path);
            if ((err = pn_rr_get_int(rd, p2, json_array_get(pair, 0), 0, 127, &lo[v])) != PN_OK)
                return err;
            snprintf(p2, sizeof p2, "%s[1]", path);
            if ((err = pn_rr_get_int(rd, p2, json_array_get(pair, 1), 0, 127, &hi[v])) != PN_OK)
                return err;
            if (lo[v] > hi[v])
                return pn_rr_fail_at(rd, path, "low %d is above high %d", lo[v], hi[v]);
        }
    } else {
        int l = PN_SPACE_DEFAULT_LOW, h = PN_SPACE_DEFAULT_HIGH;
        if (low && (err = pn_rr_get_int(rd, "space.low", low, 0, 127, &l)) != PN_OK)
            return err;
        if (high && (err = pn_rr_get_int(rd, "space.high", high, 0, 127, &h)) != PN_OK)
            return err;
        if (l > h)
            return pn_rr_fail_at(rd, "space", "low %d is above high %d", l, h);
        for (int v = 0; v < k; ++v) {
            lo[v] = l;
            hi[v] = h;
        }
    }
    pn_error_info inner;
    err = pn_space_init(space, k, lo, hi, &inner);
    if (err != PN_OK)
        return pn_rr_fail_at(rd, "space", "%s", inner.message);
    return PN_OK;
}

static pn_error from_json(const pn_rr *rd, const json_t *root, pn_rule_set **out)
{
    if (!json_is_object(root)) {
        char d[64];
        pn_json_describe(root, d, sizeof d);
        return pn_fail(rd->info, PN_ERR_PARSE, "%.200s: expected a JSON object, got %s", rd->name,
                       d);
    }
    static const char *const keys[] = {"format", "name",  "description", "lambda_p",
                                       "space",  "rules", "constraints", NULL};
    pn_error err = pn_rr_check_keys(rd, "(top level)", root, keys);
    if (err != PN_OK)
        return err;

    const json_t *format = json_object_get(root, "format");
    if (!format)
        return pn_rr_fail_at(rd, "format", "missing field, expected \"%s\"", PN_RULES_FORMAT);
    if (!json_is_string(format)) {
        char d[64];
        pn_json_describe(format, d, sizeof d);
        return pn_rr_fail_at(rd, "format", "expected \"%s\", got %s", PN_RULES_FORMAT, d);
    }
    if (strcmp(json_string_value(format), PN_RULES_FORMAT) != 0) {
        char shown[80];
        pn_rr_show_text(json_string_value(format), shown, sizeof shown);
        return pn_rr_fail_at(rd, "format", "expected \"%s\", got \"%s\"", PN_RULES_FORMAT, shown);
    }
    const json_t *jname = json_object_get(root, "name");
    if (!jname)
        return pn_rr_fail_at(rd, "name", "missing field");
    const char *name = NULL;
    if ((err = pn_rr_get_name(rd, "name", jname, &name)) != PN_OK)
        return err;
    const json_t *desc = json_object_get(root, "description");
    if (desc && !json_is_string(desc))
        return pn_rr_fail_at(rd, "description", "expected a string");

    const json_t *jlambda = json_object_get(root, "lambda_p");
    double lambda_p = 0.0;
    if (jlambda && (err = pn_rr_get_real(rd, "lambda_p", jlambda, 0.0, 1.0, 1, &lambda_p)) != PN_OK)
        return err;

    pn_space space;
    if ((err = read_space(rd, root, &space)) != PN_OK)
        return err;

    const json_t *rules = json_object_get(root, "rules");
    if (!rules)
        return pn_rr_fail_at(rd, "rules", "missing field");
    if (!json_is_array(rules)) {
        return pn_rr_fail_type(rd, "rules", "an array of rules", rules);
    }
    size_t count = json_array_size(rules);
    if (count == 0)
        return pn_rr_fail_at(rd, "rules", "empty list, a rule set needs at least one rule");
    if (count > PN_RULES_MAX_RULES)
        return pn_rr_fail_at(rd, "rules", "%zu rules, at most %d are allowed", count,
                             PN_RULES_MAX_RULES);

    pn_rule_set *rs = calloc(1, sizeof *rs);
    if (!rs)
        return pn_rr_out_of_memory(rd);
    rs->space = space;
    rs->lambda_p = lambda_p;
    rs->max_memory = rd->max_memory;
    rs->name = pn_copy_string(name);
    rs->rules = calloc(count, sizeof *rs->rules);
    if (desc)
        rs->description = pn_copy_string(json_string_value(desc));
    if (!rs->name || !rs->rules || (desc && !rs->description)) {
        pn_rule_set_free(rs);
        return pn_rr_out_of_memory(rd);
    }
    for (size_t i = 0; i < count; ++i) {
        /* counted before reading, so a failed rule is freed with the set */
        rs->num_rules = (int32_t)i + 1;
        err = pn_rr_read_rule(rd, rs, i, json_array_get(rules, i), &rs->rules[i]);
        if (err != PN_OK) {
            pn_rule_set_free(rs);
            return err;
        }
    }
    if ((err = pn_rr_read_constraints(rd, json_object_get(root, "constraints"), rs)) != PN_OK) {
        pn_rule_set_free(rs);
        return err;
    }
    rs->table_bytes = rd->budget->table_bytes;
    *out = rs;
    return PN_OK;
}

/* Maps a jansson decoding failure to an error. */
static pn_error decode_failure(const pn_rr *rd, const json_error_t *je)
{
    switch (json_error_code(je)) {
    case json_error_out_of_memory:
        return pn_rr_out_of_memory(rd);
    default:
        break;
    }
    if (je->line > 0)
        return pn_fail(rd->info, PN_ERR_PARSE, "%.200s: line %d column %d: %s", rd->name, je->line,
                       je->column, je->text);
    return pn_fail(rd->info, PN_ERR_PARSE, "%.200s: %s", rd->name, je->text);
}

static pn_error parse_root(const pn_rr *rd, json_t *root, const json_error_t *je, pn_rule_set **out)
{
    if (!root)
        return decode_failure(rd, je);
    pn_error err = from_json(rd, root, out);
    json_decref(root);
    return err;
}

void pn_rule_set_options_default(pn_rule_set_options *opts)
{
    opts->flags = 0;
    opts->max_memory = PN_DEFAULT_MAX_MEMORY;
}

static pn_error check_options(const pn_rule_set_options *opts, pn_error_info *info)
{
    if (opts->max_memory < 1 || opts->max_memory > PN_MAX_MEMORY_LIMIT)
        return pn_fail(info, PN_ERR_INVALID, "memory limit %lld bytes is outside [1, %lld]",
                       (long long)opts->max_memory, (long long)PN_MAX_MEMORY_LIMIT);
    return PN_OK;
}

pn_error pn_rule_set_parse_opt(const char *name, const char *text, size_t len,
                               const pn_rule_set_options *opts, pn_rule_set **out,
                               pn_error_info *info)
{
    if (!out)
        return pn_fail(info, PN_ERR_INVALID, "pn_rule_set_parse: out is NULL");
    *out = NULL;
    pn_error err = check_options(opts, info);
    if (err != PN_OK)
        return err;
    pn_rr_budget budget = {0, 0};
    pn_rr rd = {name ? name : "rules", opts->flags, info, opts->max_memory, &budget};
    if (!text && len > 0)
        return pn_fail(info, PN_ERR_INVALID, "%.200s: text is NULL", rd.name);
    const size_t bom = pn_file_bom_length(text, len);
    json_error_t je;
    json_t *root = json_loadb(text ? text + bom : "", len - bom, JSON_REJECT_DUPLICATES, &je);
    return parse_root(&rd, root, &je, out);
}

pn_error pn_rule_set_parse_ex(const char *name, const char *text, size_t len, unsigned flags,
                              pn_rule_set **out, pn_error_info *info)
{
    pn_rule_set_options opts;
    pn_rule_set_options_default(&opts);
    opts.flags = flags;
    return pn_rule_set_parse_opt(name, text, len, &opts, out, info);
}

pn_error pn_rule_set_parse(const char *name, const char *text, size_t len, pn_rule_set **out,
                           pn_error_info *info)
{
    return pn_rule_set_parse_ex(name, text, len, 0, out, info);
}

pn_error pn_rule_set_read_opt(const char *path, const pn_rule_set_options *opts, pn_rule_set **out,
                              pn_error_info *info)
{
    if (!out)
        return pn_fail(info, PN_ERR_INVALID, "pn_rule_set_read: out is NULL");
    *out = NULL;
    if (!path)
        return pn_fail(info, PN_ERR_INVALID, "pn_rule_set_read: path is NULL");
    pn_error err = check_options(opts, info);
    if (err != PN_OK)
        return err;
    char *text = NULL;
    size_t len = 0;
    if ((err = pn_file_read(path, 0, &text, &len, info)) != PN_OK)
        return err;
    err = pn_rule_set_parse_opt(path, text, len, opts, out, info);
    free(text);
    return err;
}

pn_error pn_rule_set_read_ex(const char *path, unsigned flags, pn_rule_set **out,
                             pn_error_info *info)
{
    pn_rule_set_options opts;
    pn_rule_set_options_default(&opts);
    opts.flags = flags;
    return pn_rule_set_read_opt(path, &opts, out, info);
}

pn_error pn_rule_set_read(const char *path, pn_rule_set **out, pn_error_info *info)
{
    return pn_rule_set_read_ex(path, 0, out, info);
}

/* Constraints of a rule set: reading the "constraints" list and checking a
 * move from one sonority to the next (docs/rule-format.md). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rules_reader.h"
#include "text.h"

#include "parnassus/rules.h"

/* ------------------------------------------------------------------------ */
/* Checking */

static int interval_class(int d)
{
    return ((d % 12) + 12) % 12;
}

static int sign(int d)
{
    return (d > 0) - (d < 0);
}

/* KNOWN: the rule's back-off target of the sonority's value is not 0. A
 * sonority outside the space is not the rule's to judge. */
static int known_value(const pn_rule_set *rs, const pn_constraint *c, const int *pitches)
{
    if (!rs || c->rule < 0 || c->rule >= rs->num_rules)
        return 1;
    const pn_rule *r = &rs->rules[c->rule];
    int32_t cell;
    if (pn_feature_cell_of(r->table, pitches, &cell, NULL) != PN_OK || cell < 0)
        return 1;
    return r->target[cell] > 0.0;
}

int pn_constraint_holds(const pn_rule_set *rs, const pn_constraint *c, const int *previous,
                        const int *pitches)
{
    if (!c || !pitches)
        return 1;
    if (c->kind == PN_CONSTRAINT_KNOWN)
        return known_value(rs, c, pitches);
    if (!previous)
        return 1;
    for (int32_t k = 0; k < c->num_pairs; ++k) {
        const int u = c->pair[k][0], l = c->pair[k][1];
        const int pu = previous[u], pl = previous[l], xu = pitches[u], xl = pitches[l];
        if (pu < 0 || pl < 0 || xu < 0 || xl < 0)
            continue; /* a rest on either side: no motion of the pair */
        const int before = pu - pl, after = xu - xl;
        if (!(c->intervals & (1u << interval_class(after))))
            continue;
        const int mu = xu - pu, ml = xl - pl;
        if (c->kind == PN_CONSTRAINT_PARALLEL && after == before && mu != 0)
            return 0;
        if (c->kind == PN_CONSTRAINT_HIDDEN && after != before && mu != 0 && sign(mu) == sign(ml) &&
            abs(mu) > c->leap)
            return 0;
    }
    return 1;
}

int pn_rule_set_allows(const pn_rule_set *rs, const int *previous, const int *pitches)
{
    if (!rs)
        return 1;
    for (int32_t i = 0; i < rs->num_constraints; ++i)
        if (!pn_constraint_holds(rs, &rs->constraints[i], previous, pitches))
            return 0;
    return 1;
}

/* ------------------------------------------------------------------------ */
/* Reading */

static const struct {
    const char *name;
    pn_constraint_kind kind;
} kinds[] = {{"parallel", PN_CONSTRAINT_PARALLEL},
             {"hidden", PN_CONSTRAINT_HIDDEN},
             {"known", PN_CONSTRAINT_KNOWN}};

enum { NUM_KINDS = sizeof kinds / sizeof kinds[0], DEFAULT_LEAP = 2 };

const char *pn_constraint_kind_name(pn_constraint_kind kind)
{
    for (int i = 0; i < NUM_KINDS; ++i)
        if (kinds[i].kind == kind)
            return kinds[i].name;
    return "?";
}

void pn_rr_free_constraints(pn_rule_set *rs)
{
    for (int32_t i = 0; i < rs->num_constraints; ++i) {
        free(rs->constraints[i].name);
        free(rs->constraints[i].description);
    }
    free(rs->constraints);
    rs->constraints = NULL;
    rs->num_constraints = 0;
}

static pn_error read_kind(const pn_rr *rd, const char *path, const json_t *v, pn_constraint *c)
{
    if (!json_is_string(v))
        return pn_rr_fail_type(rd, path,
                               "a constraint kind (\"parallel\", \"hidden\" or \"known\")", v);
    for (int i = 0; i < NUM_KINDS; ++i)
        if (strcmp(json_string_value(v), kinds[i].name) == 0) {
            c->kind = kinds[i].kind;
            return PN_OK;
        }
    char shown[80];
    pn_rr_show_text(json_string_value(v), shown, sizeof shown);
    return pn_rr_fail_at(rd, path, "unknown kind \"%s\" (kinds: parallel, hidden, known)", shown);
}

static pn_error read_intervals(const pn_rr *rd, const char *path, const json_t *v, unsigned *out)
{
    if (!json_is_array(v) || json_array_size(v) == 0)
        return pn_rr_fail_type(rd, path, "a non-empty array of interval classes 0..11", v);
    unsigned set = 0;
    for (size_t i = 0; i < json_array_size(v); ++i) {
        char ipath[128];
        snprintf(ipath, sizeof ipath, "%s[%zu]", path, i);
        int ic;
        pn_error err = pn_rr_get_int(rd, ipath, json_array_get(v, i), 0, 11, &ic);
        if (err != PN_OK)
            return err;
        if (set & (1u << ic))
            return pn_rr_fail_at(rd, ipath, "interval class %d listed twice", ic);
        set |= 1u << ic;
    }
    *out = set;
    return PN_OK;
}

static pn_error read_pairs(const pn_rr *rd, const char *path, const json_t *v, int num_voices,
                           pn_constraint *c)
{
    if (!json_is_array(v) || json_array_size(v) == 0)
        return pn_rr_fail_type(rd, path, "a non-empty array of [upper, lower] voice pairs", v);
    if (json_array_size(v) > PN_CONSTRAINT_MAX_PAIRS)
        return pn_rr_fail_at(rd, path, "%zu pairs, at most %d", json_array_size(v),
                             PN_CONSTRAINT_MAX_PAIRS);
    for (size_t i = 0; i < json_array_size(v); ++i) {
        char ipath[128], epath[160];
        snprintf(ipath, sizeof ipath, "%s[%zu]", path, i);
        const json_t *pair = json_array_get(v, i);
        if (!json_is_array(pair) || json_array_size(pair) != 2)
            return pn_rr_fail_at(rd, ipath, "expected an [upper, lower] pair of voice numbers");
        int vv[2];
        for (size_t e = 0; e < 2; ++e) {
            snprintf(epath, sizeof epath, "%s[%zu]", ipath, e);
            pn_error err = pn_rr_get_int(rd, epath, json_array_get(pair, e), 1, num_voices, &vv[e]);
            if (err != PN_OK)
                return err;
        }
        if (vv[0] == vv[1])
            return pn_rr_fail_at(rd, ipath, "a voice paired with itself (%d)", vv[0]);
        for (int32_t k = 0; k < c->num_pairs; ++k)
            if ((c->pair[k][0] == vv[0] - 1 && c->pair[k][1] == vv[1] - 1) ||
                (c->pair[k][0] == vv[1] - 1 && c->pair[k][1] == vv[0] - 1))
                return pn_rr_fail_at(rd, ipath, "the pair of voices %d and %d is listed twice",
                                     vv[0], vv[1]);
        c->pair[c->num_pairs][0] = (unsigned char)(vv[0] - 1);
        c->pair[c->num_pairs][1] = (unsigned char)(vv[1] - 1);
        c->num_pairs++;
    }
    c->pairs_given = 1;
    return PN_OK;
}

/* The pairs a constraint watches when the file lists none: every pair for
 * parallels, the outer voices for hidden fifths and octaves. */
static void default_pairs(pn_constraint *c, int num_voices)
{
    c->num_pairs = 0;
    if (c->kind == PN_CONSTRAINT_HIDDEN) {
        if (num_voices >= 2) {
            c->pair[0][0] = 0;
            c->pair[0][1] = (unsigned char)(num_voices - 1);
            c->num_pairs = 1;
        }
        return;
    }
    for (int u = 0; u < num_voices; ++u)
        for (int l = u + 1; l < num_voices; ++l) {
            c->pair[c->num_pairs][0] = (unsigned char)u;
            c->pair[c->num_pairs][1] = (unsigned char)l;
            c->num_pairs++;
        }
}

/* A "known" constraint: the rule it names, and none of the fields of a
 * constraint on a move. */
static pn_error read_known(const pn_rr *rd, const pn_rule_set *rs, const char *path,
                           const json_t *obj, pn_constraint *c)
{
    char fpath[96];
    static const char *const move_only[] = {"intervals", "voices", "leap"};
    for (size_t i = 0; i < sizeof move_only / sizeof *move_only; ++i)
        if (json_object_get(obj, move_only[i])) {
            snprintf(fpath, sizeof fpath, "%s.%s", path, move_only[i]);
            return pn_rr_fail_at(rd, fpath, "a \"known\" constraint does not take this field");
        }
    snprintf(fpath, sizeof fpath, "%s.rule", path);
    const json_t *rule = json_object_get(obj, "rule");
    if (!rule)
        return pn_rr_fail_at(rd, path,
                             "missing field \"rule\" (the rule whose values it keeps to)");
    if (!json_is_string(rule))
        return pn_rr_fail_type(rd, fpath, "the name of a rule of the set", rule);
    for (int32_t r = 0; r < rs->num_rules; ++r)
        if (strcmp(rs->rules[r].name, json_string_value(rule)) == 0) {
            c->rule = r;
            return PN_OK;
        }
    char shown[80];
    pn_rr_show_text(json_string_value(rule), shown, sizeof shown);
    return pn_rr_fail_at(rd, fpath, "no rule of the set is named \"%s\"", shown);
}

static pn_error read_constraint(const pn_rr *rd, const pn_rule_set *rs, size_t index,
                                const json_t *obj, pn_constraint *c)
{
    char path[64], fpath[96];
    snprintf(path, sizeof path, "constraints[%zu]", index);
    if (!json_is_object(obj))
        return pn_rr_fail_type(rd, path, "a constraint object", obj);
    static const char *const keys[] = {"name",   "kind", "description", "intervals",
                                       "voices", "leap", "rule",        NULL};
    pn_error err = pn_rr_check_keys(rd, path, obj, keys);
    if (err != PN_OK)
        return err;
    static const char *const required[] = {"name", "kind"};
    for (size_t i = 0; i < sizeof required / sizeof *required; ++i)
        if (!json_object_get(obj, required[i]))
            return pn_rr_fail_at(rd, path, "missing field \"%s\"", required[i]);

    const char *name = NULL;
    snprintf(fpath, sizeof fpath, "%s.name", path);
    if ((err = pn_rr_get_name(rd, fpath, json_object_get(obj, "name"), &name)) != PN_OK)
        return err;
    for (size_t j = 0; j < index; ++j)
        if (strcmp(rs->constraints[j].name, name) == 0) {
            char shown[80];
            pn_rr_show_text(name, shown, sizeof shown);
            return pn_rr_fail_at(
                rd, fpath, "duplicate constraint name \"%s\" (also constraints[%zu])", shown, j);
        }
    if (!(c->name = pn_copy_string(name)))
        return pn_rr_out_of_memory(rd);
    const json_t *desc = json_object_get(obj, "description");
    if (desc) {
        snprintf(fpath, sizeof fpath, "%s.description", path);
        if (!json_is_string(desc))
            return pn_rr_fail_type(rd, fpath, "a string", desc);
        if (!(c->description = pn_copy_string(json_string_value(desc))))
            return pn_rr_out_of_memory(rd);
    }
    snprintf(fpath, sizeof fpath, "%s.kind", path);
    if ((err = read_kind(rd, fpath, json_object_get(obj, "kind"), c)) != PN_OK)
        return err;
    c->rule = -1;
    if (c->kind == PN_CONSTRAINT_KNOWN)
        return read_known(rd, rs, path, obj, c);
    if (json_object_get(obj, "rule")) {
        snprintf(fpath, sizeof fpath, "%s.rule", path);
        return pn_rr_fail_at(rd, fpath, "only a \"known\" constraint takes this field");
    }

    const json_t *intervals = json_object_get(obj, "intervals");
    c->intervals = (1u << 0) | (1u << 7); /* unisons and octaves, fifths */
    snprintf(fpath, sizeof fpath, "%s.intervals", path);
    if (intervals && (err = read_intervals(rd, fpath, intervals, &c->intervals)) != PN_OK)
        return err;

    const json_t *leap = json_object_get(obj, "leap");
    c->leap = DEFAULT_LEAP;
    snprintf(fpath, sizeof fpath, "%s.leap", path);
    if (leap && c->kind != PN_CONSTRAINT_HIDDEN)
        return pn_rr_fail_at(rd, fpath, "only a \"hidden\" constraint takes this field");
    if (leap && (err = pn_rr_get_int(rd, fpath, leap, 0, 127, &c->leap)) != PN_OK)
        return err;

    const json_t *voices = json_object_get(obj, "voices");
    snprintf(fpath, sizeof fpath, "%s.voices", path);
    if (voices)
        return read_pairs(rd, fpath, voices, rs->space.num_voices, c);
    default_pairs(c, rs->space.num_voices);
    return PN_OK;
}

pn_error pn_rr_read_constraints(const pn_rr *rd, const json_t *list, pn_rule_set *rs)
{
    if (!list)
        return PN_OK;
    if (!json_is_array(list))
        return pn_rr_fail_type(rd, "constraints", "an array of constraints", list);
    const size_t count = json_array_size(list);
    if (count > PN_RULES_MAX_CONSTRAINTS)
        return pn_rr_fail_at(rd, "constraints", "%zu constraints, at most %d are allowed", count,
                             PN_RULES_MAX_CONSTRAINTS);
    if (count == 0)
        return PN_OK;
    if (!(rs->constraints = calloc(count, sizeof *rs->constraints)))
        return pn_rr_out_of_memory(rd);
    for (size_t i = 0; i < count; ++i) {
        /* counted before reading, so a failed constraint is freed with the set */
        rs->num_constraints = (int32_t)i + 1;
        pn_error err = read_constraint(rd, rs, i, json_array_get(list, i), &rs->constraints[i]);
        if (err != PN_OK)
            return err;
    }
    return PN_OK;
}

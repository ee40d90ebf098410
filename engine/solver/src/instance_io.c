/* The reader of the generic instance formats (docs/instance-format.md):
 * pn_instance_parse and pn_instance_read read a file part by part
 * (instance_rules.c, instance_groups.c, on instance_lex.c) and build its
 * problem. The writer is instance_write.c.
 *
 * The reader works on a bounded buffer that need not end in a NUL byte. It
 * never trusts the sizes a header claims: every array grows only as its
 * values actually arrive, so a short file with a huge "n" fails with "found
 * end of file" instead of allocating for the claim. */
#include "parnassus/instance_io.h"

#include <stdlib.h>
#include <string.h>

#include "instance_reader.h"
#include "parnassus/deoverlap.h"
#include "parnassus/file.h"

/* ------------------------------------------------------------------------ */
/* Building the problem */

static int assign_source(void *ctx, int32_t rule, int64_t first, int64_t count, int32_t *cells)
{
    const parser *ps = ctx;
    size_t offset = (size_t)rule * (size_t)ps->n + (size_t)first;
    memcpy(cells, ps->assign + offset, (size_t)count * sizeof *cells);
    return 0;
}

/* Turns a failure of an engine call into a message naming the input. */
static pn_error forward_error(parser *ps, pn_error err, const pn_error_info *inner)
{
    if (err == PN_ERR_NOMEM)
        return pn_fail(ps->info, PN_ERR_NOMEM, "%s: %s", ps->name, inner->message);
    return pn_ir_fail_at(ps, ps->end_line, "%s", inner->message);
}

static pn_error create_problem(parser *ps)
{
    pn_error_info inner = {PN_OK, ""};
    pn_error err = pn_problem_create(ps->n, ps->num_rules, ps->rule_size,
                                     (const char *const *)ps->rule_name, &ps->prob, &inner);
    if (err != PN_OK)
        return forward_error(ps, err, &inner);
    memcpy(ps->prob->target, ps->target, (size_t)ps->num_cells * sizeof *ps->target);
    return PN_OK;
}

static pn_error store_groups(parser *ps)
{
    pn_error_info inner = {PN_OK, ""};
    pn_error err;
    if (ps->form == PN_FORM_FULL) {
        err = pn_deoverlap(ps->prob, assign_source, ps, &inner);
    } else {
        err = pn_problem_set_groups(ps->prob, ps->num_groups, &inner);
        if (err == PN_OK) {
            size_t k = (size_t)ps->num_groups;
            memcpy(ps->prob->group_rows, ps->group_rows,
                   k * (size_t)ps->num_rules * sizeof *ps->group_rows);
            memcpy(ps->prob->group_size, ps->group_size, k * sizeof *ps->group_size);
        }
    }
    /* Final safety net: the checks above should already imply validity. */
    if (err == PN_OK)
        err = pn_problem_validate(ps->prob, &inner);
    if (err != PN_OK)
        return forward_error(ps, err, &inner);
    return PN_OK;
}

static pn_error parse_all(parser *ps)
{
    int64_t declared_rules = 0;
    pn_error err = pn_ir_read_header(ps);
    if (err == PN_OK)
        err = pn_ir_read_sizes(ps, &declared_rules);
    if (err == PN_OK)
        err = pn_ir_read_rules(ps, declared_rules);
    if (err != PN_OK)
        return err;
    if (ps->form == PN_FORM_FULL)
        err = pn_ir_expect_end(ps, "rule");
    else
        err = pn_ir_read_groups(ps);
    if (err == PN_OK)
        err = create_problem(ps);
    if (err == PN_OK)
        err = store_groups(ps);
    return err;
}

static int64_t line_of_end(const char *data, size_t size)
{
    int64_t line = 1;
    for (size_t i = 0; i < size; ++i)
        if (data[i] == '\n' && i + 1 < size)
            line++;
    return line;
}

static void parser_free(parser *ps)
{
    if (ps->rule_name)
        for (int32_t r = 0; r < ps->num_rules; ++r)
            free(ps->rule_name[r]);
    free(ps->rule_name);
    free(ps->rule_size);
    free(ps->target);
    free(ps->assign);
    free(ps->group_rows);
    free(ps->group_size);
    free(ps->group_line);
    free(ps->slots);
    pn_problem_free(ps->prob);
}

pn_error pn_instance_parse(const char *name, const char *data, size_t size, pn_problem **out,
                           pn_instance_form *form, pn_error_info *info)
{
    if (!out)
        return pn_fail(info, PN_ERR_INVALID, "pn_instance_parse: no output given");
    *out = NULL;
    if (!data && size > 0)
        return pn_fail(info, PN_ERR_INVALID, "pn_instance_parse: no data given");
    if (!data)
        data = "";
    const size_t bom = pn_file_bom_length(data, size);
    data += bom;
    size -= bom;
    parser ps;
    memset(&ps, 0, sizeof ps);
    ps.name = name ? name : "(input)";
    ps.pos = data;
    ps.end = data + size;
    ps.line = 1;
    ps.end_line = line_of_end(data, size);
    ps.info = info;
    pn_error err = parse_all(&ps);
    if (err == PN_OK) {
        *out = ps.prob;
        ps.prob = NULL;
        if (form)
            *form = ps.form;
        if (info) {
            info->code = PN_OK;
            info->message[0] = '\0';
        }
    }
    parser_free(&ps);
    return err;
}

/* ------------------------------------------------------------------------ */
/* Files */

pn_error pn_instance_read(const char *path, pn_problem **out, pn_instance_form *form,
                          pn_error_info *info)
{
    if (!out || !path)
        return pn_fail(info, PN_ERR_INVALID, "pn_instance_read: no path or output given");
    *out = NULL;
    char *data = NULL;
    size_t size = 0;
    pn_error err = pn_file_read(path, PN_FILE_MAX_BYTES, &data, &size, info);
    if (err != PN_OK)
        return err;
    err = pn_instance_parse(path, data, size, out, form, info);
    free(data);
    return err;
}

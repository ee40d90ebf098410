/* The grouped instance writer: a problem as "parnassus-grouped 1", read
 * back exactly (docs/instance-format.md). */
#include "parnassus/instance_io.h"

#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "instance_reader.h"

/* A name can be written if reading it back gives the same single token. */
static int name_is_writable(const char *name)
{
    if (!name[0])
        return 0;
    for (const char *c = name; *c; ++c)
        if (pn_ir_is_space(*c) || *c == '#')
            return 0;
    return 1;
}

static void write_problem(FILE *out, const pn_problem *prob)
{
    const int32_t K = prob->num_rules;
    fprintf(out, "parnassus-grouped 1\nn %" PRId64 "\nrules %d\n", prob->n, (int)K);
    for (int32_t r = 0; r < K; ++r) {
        fprintf(out, "rule %s %d\ntarget", prob->rule_name[r], (int)pn_rule_size(prob, r));
        for (int32_t i = prob->rule_start[r]; i < prob->rule_start[r + 1]; ++i)
            fprintf(out, " %.17g", prob->target[i]); /* 17 digits: exact round trip */
        fputc('\n', out);
    }
    fprintf(out, "groups %" PRId64 "\n", prob->num_groups);
    for (int64_t k = 0; k < prob->num_groups; ++k) {
        const int32_t *rows = prob->group_rows + k * K;
        fprintf(out, "%" PRId64, prob->group_size[k]);
        for (int32_t r = 0; r < K; ++r)
            fprintf(out, " %d", (int)(rows[r] - prob->rule_start[r]));
        fputc('\n', out);
    }
}

pn_error pn_instance_write_grouped(FILE *out, const pn_problem *prob, pn_error_info *info)
{
    if (!out || !prob)
        return pn_fail(info, PN_ERR_INVALID, "pn_instance_write_grouped: no stream or problem");
    pn_error err = pn_problem_validate(prob, info);
    if (err != PN_OK)
        return err;
    for (int32_t r = 0; r < prob->num_rules; ++r)
        if (!name_is_writable(prob->rule_name[r]))
            return pn_fail(info, PN_ERR_INVALID,
                           "rule %d: name %s is empty or contains white space or '#'", (int)r + 1,
                           pn_ir_quote(prob->rule_name[r], strlen(prob->rule_name[r])).s);
    write_problem(out, prob);
    if (fflush(out) != 0 || ferror(out))
        return pn_fail(info, PN_ERR_IO, "writing the instance failed: %s", strerror(errno));
    return PN_OK;
}

/* libFuzzer target for the instance readers and the grouped writer.
 *
 * Any input must either fail with a parse error whose message names the
 * input, or give a problem that survives writing in the grouped form and
 * reading back unchanged. Anything else aborts, so the fuzzer reports it. */
#define _POSIX_C_SOURCE 200809L /* open_memstream */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parnassus/instance_io.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void require(int condition)
{
    if (!condition)
        abort();
}

static void require_same_problem(const pn_problem *a, const pn_problem *b)
{
    require(a->n == b->n);
    require(a->num_rules == b->num_rules);
    require(a->num_rows == b->num_rows);
    for (int32_t r = 0; r < a->num_rules; ++r) {
        require(strcmp(a->rule_name[r], b->rule_name[r]) == 0);
        require(a->rule_start[r + 1] == b->rule_start[r + 1]);
    }
    /* Bit for bit: the writer prints 17 significant digits. */
    require(memcmp(a->target, b->target, (size_t)a->num_rows * sizeof *a->target) == 0);
    require(a->num_groups == b->num_groups);
    size_t cells = (size_t)a->num_groups * (size_t)a->num_rules;
    require(memcmp(a->group_rows, b->group_rows, cells * sizeof *a->group_rows) == 0);
    require(memcmp(a->group_size, b->group_size, (size_t)a->num_groups * sizeof *a->group_size) ==
            0);
}

static void check_round_trip(const pn_problem *prob)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    require(f != NULL);
    pn_error_info info;
    pn_error err = pn_instance_write_grouped(f, prob, &info);
    require(fclose(f) == 0);
    require(err == PN_OK);

    pn_problem *back = NULL;
    pn_instance_form form;
    err = pn_instance_parse("written", text, len, &back, &form, &info);
    require(err == PN_OK);
    require(form == PN_FORM_GROUPED);
    require_same_problem(prob, back);
    pn_problem_free(back);
    free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    pn_problem *prob = NULL;
    pn_error_info info;
    pn_error err = pn_instance_parse("input", (const char *)data, size, &prob, NULL, &info);
    if (err != PN_OK) {
        require(prob == NULL);
        require(err == PN_ERR_PARSE || err == PN_ERR_NOMEM);
        require(strncmp(info.message, "input:", 6) == 0);
        return 0;
    }
    require(prob != NULL);
    check_round_trip(prob);
    pn_problem_free(prob);
    return 0;
}

/* The group records of the grouped instance form: each record's count and
 * cells, with a hash of the records so none repeats. */
#include "instance_reader.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t hash_rows(const int32_t *rows, int32_t num_rules)
{
    uint64_t h = 0x9E3779B97F4A7C15ull;
    for (int32_t r = 0; r < num_rules; ++r) {
        h ^= (uint32_t)rows[r];
        h *= 0xFF51AFD7ED558CCDull;
        h ^= h >> 29;
    }
    return h;
}

/* Puts record k into the table unless an equal record is there already:
 * returns that record's index, or -1 when record k is new. The table must
 * have a free slot. */
static int64_t insert_record(parser *ps, size_t k)
{
    const int32_t K = ps->num_rules;
    const int32_t *rows = ps->group_rows + k * (size_t)K;
    size_t mask = ps->slot_cap - 1;
    size_t h = (size_t)hash_rows(rows, K) & mask;
    while (ps->slots[h] != 0) {
        size_t other = (size_t)(ps->slots[h] - 1);
        if (memcmp(ps->group_rows + other * (size_t)K, rows, (size_t)K * sizeof *rows) == 0)
            return (int64_t)other;
        h = (h + 1) & mask;
    }
    ps->slots[h] = (int64_t)k + 1;
    return -1;
}

static int grow_slots(parser *ps, size_t records)
{
    size_t cap = ps->slot_cap ? ps->slot_cap : 64;
    while (cap < 2 * records)
        cap *= 2;
    if (cap == ps->slot_cap)
        return 0;
    int64_t *slots = calloc(cap, sizeof *slots);
    if (!slots)
        return -1;
    free(ps->slots);
    ps->slots = slots;
    ps->slot_cap = cap;
    /* Re-insert the records already in the table: all of them are distinct. */
    for (size_t k = 0; k + 1 < records; ++k)
        insert_record(ps, k);
    return 0;
}

static pn_error reserve_record(parser *ps, size_t k)
{
    const size_t K = (size_t)ps->num_rules;
    if (k + 1 > SIZE_MAX / K)
        return pn_ir_out_of_memory(ps);
    void *p =
        pn_ir_reserve(ps->group_rows, &ps->group_rows_cap, (k + 1) * K, sizeof *ps->group_rows);
    if (!p)
        return pn_ir_out_of_memory(ps);
    ps->group_rows = p;
    p = pn_ir_reserve(ps->group_size, &ps->group_size_cap, k + 1, sizeof *ps->group_size);
    if (!p)
        return pn_ir_out_of_memory(ps);
    ps->group_size = p;
    p = pn_ir_reserve(ps->group_line, &ps->group_line_cap, k + 1, sizeof *ps->group_line);
    if (!p)
        return pn_ir_out_of_memory(ps);
    ps->group_line = p;
    if (grow_slots(ps, k + 1) != 0)
        return pn_ir_out_of_memory(ps);
    return PN_OK;
}

/* `<c_k> <a_k1> ... <a_kK>`; *total accumulates the counts (never above n). */
static pn_error read_group_record(parser *ps, int64_t k, int64_t declared, int64_t *total)
{
    const size_t K = (size_t)ps->num_rules;
    pn_error err = reserve_record(ps, (size_t)k);
    if (err != PN_OK)
        return err;
    char context[48];
    snprintf(context, sizeof context, "group record %" PRId64 ": ", k + 1);
    char expected[64];
    snprintf(expected, sizeof expected, "%" PRId64 " group records", declared);
    int64_t count = 0;
    token t;
    err = pn_ir_read_integer(ps, "", "group count", expected, &count, &t);
    if (err != PN_OK)
        return err;
    if (count < 1)
        return pn_ir_fail_at(ps, t.line, "%scount must be >= 1 (got %" PRId64 ")", context, count);
    /* *total <= n and count <= INT64_MAX, so the unsigned sum cannot wrap. */
    uint64_t sum = (uint64_t)*total + (uint64_t)count;
    if (sum > (uint64_t)ps->n)
        return pn_ir_fail_at(
            ps, t.line, "group counts sum to at least %" PRIu64 ", but n is %" PRId64, sum, ps->n);
    *total = (int64_t)sum;
    ps->group_size[k] = count;
    ps->group_line[k] = t.line;

    snprintf(expected, sizeof expected, "%d cell indices", (int)K);
    int32_t *rows = ps->group_rows + (size_t)k * K;
    int32_t start = 0;
    for (size_t r = 0; r < K; ++r) {
        int64_t cell = 0;
        err = pn_ir_read_integer(ps, context, "cell index", expected, &cell, &t);
        if (err != PN_OK)
            return err;
        const int32_t size = ps->rule_size[r];
        if (cell < 0 || cell >= size)
            return pn_ir_fail_at(ps, t.line,
                                 "cell index %" PRId64 " out of range [0, %d) for rule %s", cell,
                                 (int)size, pn_ir_rule_label(ps, (int32_t)r).s);
        rows[r] = start + (int32_t)cell;
        start += size;
    }
    int64_t earlier = insert_record(ps, (size_t)k);
    if (earlier >= 0)
        return pn_ir_fail_at(ps, ps->group_line[k], "group record repeats record on line %" PRId64,
                             ps->group_line[earlier]);
    return PN_OK;
}

pn_error pn_ir_read_groups(parser *ps)
{
    int64_t declared = 0;
    token t;
    pn_error err = pn_ir_read_count(ps, "groups", "the number of groups", &declared, &t);
    if (err != PN_OK)
        return err;
    if (declared > ps->n)
        return pn_ir_fail_at(ps, t.line, "%" PRId64 " groups, but n is only %" PRId64, declared,
                             ps->n);
    int64_t total = 0;
    int64_t last_line = t.line;
    for (int64_t k = 0; k < declared; ++k) {
        err = read_group_record(ps, k, declared, &total);
        if (err != PN_OK)
            return err;
        ps->num_groups = k + 1;
        last_line = ps->line;
    }
    err = pn_ir_expect_end(ps, "group");
    if (err != PN_OK)
        return err;
    if (total != ps->n)
        return pn_ir_fail_at(ps, last_line, "group counts sum to %" PRId64 ", but n is %" PRId64,
                             total, ps->n);
    return PN_OK;
}

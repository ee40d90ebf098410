/* Tests of the chorale reader, sonority merging and transposition
 * (docs/corpus.md). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parnassus/corpus.h"
#include "parnassus/key.h"

/* ------------------------------------------------------------------------ */
/* Helpers */

static void data_path(char *buf, size_t size, const char *file)
{
    const char *dir = getenv("PN_TEST_DATA");
    assert_non_null(dir);
    int n = snprintf(buf, size, "%s/corpus/%s", dir, file);
    assert_true(n > 0 && (size_t)n < size);
}

static pn_corpus *read_ok(const char *file, const char *split)
{
    char path[1024];
    data_path(path, sizeof path, file);
    pn_corpus *c = NULL;
    pn_error_info info = {PN_OK, ""};
    pn_error err = pn_corpus_read_chorales(path, split, &c, &info);
    if (err != PN_OK)
        fail_msg("%s", info.message);
    assert_non_null(c);
    return c;
}

/* Reads a malformed file; the message must start with the file's path and
 * contain each of the given fragments. */
static void read_bad(const char *file, const char *split, pn_error expected, ...)
{
    char path[1024];
    data_path(path, sizeof path, file);
    pn_corpus *c = (pn_corpus *)&c; /* must be reset to NULL */
    pn_error_info info = {PN_OK, ""};
    pn_error err = pn_corpus_read_chorales(path, split, &c, &info);
    assert_int_equal(err, expected);
    assert_int_equal(info.code, expected);
    assert_null(c);
    assert_true(strncmp(info.message, path, strlen(path)) == 0);
    va_list ap;
    va_start(ap, expected);
    for (const char *frag = va_arg(ap, const char *); frag; frag = va_arg(ap, const char *)) {
        if (!strstr(info.message, frag))
            fail_msg("message \"%s\" lacks \"%s\"", info.message, frag);
    }
    va_end(ap);
}

/* Parses text from an exactly sized heap copy (so ASan sees overreads). */
static pn_error parse_text(const char *text, const char *split, pn_corpus **out,
                           pn_error_info *info)
{
    size_t n = strlen(text);
    char *copy = malloc(n ? n : 1);
    assert_non_null(copy);
    memcpy(copy, text, n);
    pn_error err = pn_corpus_parse_chorales("mem.json", copy, n, split, out, info);
    free(copy);
    return err;
}

static void parse_bad(const char *text, const char *split, const char *fragment)
{
    pn_corpus *c = NULL;
    pn_error_info info = {PN_OK, ""};
    pn_error err = parse_text(text, split, &c, &info);
    assert_int_equal(err, PN_ERR_PARSE);
    assert_null(c);
    assert_true(strncmp(info.message, "mem.json: ", 10) == 0);
    if (!strstr(info.message, fragment))
        fail_msg("message \"%s\" lacks \"%s\"", info.message, fragment);
}

static int corpora_equal(const pn_corpus *a, const pn_corpus *b)
{
    if (a->num_pieces != b->num_pieces || a->num_voices != b->num_voices)
        return 0;
    for (int32_t i = 0; i < a->num_pieces; ++i) {
        const pn_piece *p = &a->pieces[i], *q = &b->pieces[i];
        if (strcmp(p->name, q->name) != 0 || p->num_steps != q->num_steps ||
            p->num_voices != q->num_voices)
            return 0;
        if (memcmp(p->pitch, q->pitch, (size_t)p->num_steps * (size_t)p->num_voices) != 0)
            return 0;
    }
    return 1;
}

/* ------------------------------------------------------------------------ */
/* Reading */

static void test_read_valid(void **state)
{
    (void)state;
    pn_corpus *all = read_ok("valid.json", NULL);
    assert_int_equal(all->num_voices, 4);
    assert_int_equal(all->num_pieces, 3);
    assert_string_equal(all->pieces[0].name, "train[0]");
    assert_string_equal(all->pieces[1].name, "train[1]");
    assert_string_equal(all->pieces[2].name, "valid[0]");
    assert_int_equal(all->pieces[0].num_steps, 4);
    assert_int_equal(all->pieces[0].num_voices, 4);
    assert_null(all->pieces[0].duration);
    const int8_t first[] = {72, 67, 64, 48, 72, 67, 64, 48, 71, 67, 62, 55, 72, 64, 60, 48};
    assert_memory_equal(all->pieces[0].pitch, first, sizeof first);
    const int8_t second[] = {-1, -1, -1, -1, 69, 64, 60, 45};
    assert_memory_equal(all->pieces[1].pitch, second, sizeof second);
    pn_corpus_free(all);

    pn_corpus *train = read_ok("valid.json", "train");
    assert_int_equal(train->num_pieces, 2);
    pn_corpus_free(train);
    pn_corpus *valid = read_ok("valid.json", "valid");
    assert_int_equal(valid->num_pieces, 1);
    assert_string_equal(valid->pieces[0].name, "valid[0]");
    assert_int_equal(valid->pieces[0].num_steps, 2);
    pn_corpus_free(valid);
}

static void test_read_malformed(void **state)
{
    (void)state;
    read_bad("not-object.json", NULL, PN_ERR_PARSE, "top level", "expected an object",
             "got an array", (const char *)NULL);
    read_bad("missing-split.json", "valid", PN_ERR_PARSE, "no \"valid\" split",
             "the file has: train", (const char *)NULL);
    read_bad("wrong-voices.json", "train", PN_ERR_PARSE,
             ": train[1][2]: ", "step has 3 voices, expected 4", (const char *)NULL);
    read_bad("non-integer.json", NULL, PN_ERR_PARSE,
             ": train[0][1][2]: ", "expected an integer MIDI pitch or -1, got 3.5",
             (const char *)NULL);
    read_bad("out-of-range.json", "train", PN_ERR_PARSE,
             ": train[1][0][0]: ", "pitch 140 out of range 0..127", (const char *)NULL);
    read_bad("syntax-error.json", NULL, PN_ERR_PARSE, ": line 3 column ", (const char *)NULL);
    read_bad("no-such-file.json", NULL, PN_ERR_IO, (const char *)NULL);
    /* a directory is named as one; an endless stream stops at the limit */
    pn_corpus *c = NULL;
    pn_error_info info = {PN_OK, ""};
    assert_int_equal(pn_corpus_read_chorales(".", NULL, &c, &info), PN_ERR_IO);
    assert_string_equal(info.message, ".: is a directory");
    assert_int_equal(pn_corpus_read_chorales("/dev/zero", NULL, &c, &info), PN_ERR_PARSE);
    assert_null(c);
    assert_string_equal(info.message, "/dev/zero: larger than the limit of 64 MiB");
}

static void test_parse_memory(void **state)
{
    (void)state;
    pn_corpus *c = NULL;
    pn_error_info info;
    assert_int_equal(parse_text("{\"a\": [], \"b\": [[]]}", NULL, &c, &info), PN_OK);
    assert_int_equal(c->num_pieces, 1);
    assert_string_equal(c->pieces[0].name, "b[0]");
    assert_int_equal(c->pieces[0].num_steps, 0);
    pn_corpus_free(c);

    parse_bad("", NULL, "line ");
    parse_bad("{\"train\": []} x", NULL, "line 1 column ");
    parse_bad("3", NULL, "line 1");
    parse_bad("{\"train\": [], \"train\": []}", NULL, "duplicate");
    parse_bad("{\"train\": 3}", "train", "train: expected an array of chorales, got 3");
    parse_bad("{\"train\": [{}]}", "train", "train[0]: expected an array of steps, got an object");
    parse_bad("{\"train\": [[5]]}", "train", "train[0][0]: expected an array of 4 pitches, got 5");
    parse_bad("{\"train\": [[[1,2,3,\"x\"]]]}", NULL,
              "train[0][0][3]: expected an integer MIDI "
              "pitch or -1, got a string");
    parse_bad("{\"train\": [[[1,2,3,null]]]}", NULL, "got null");
    /* a real is shown as written, not as the integer it equals */
    parse_bad("{\"train\": [[[1,2,3,60.0]]]}", NULL,
              "train[0][0][3]: expected an integer MIDI "
              "pitch or -1, got 60.0");
    parse_bad("{\"train\": [[[1,2,3,6e1]]]}", NULL, "got 60.0");
    parse_bad("{\"train\": [[[1,2,3,72.5e-1]]]}", NULL, "got 7.25");
    parse_bad("{\"train\": [[[1,2,3,-2]]]}", NULL, "pitch -2 out of range");
    parse_bad("{\"train\": [[[1,2,3,4,5]]]}", NULL, "step has 5 voices, expected 4");
    parse_bad("{\"train\": [[[1,2,3,99999999999999999999]]]}", NULL, "line 1");
    parse_bad("{}", "train", "the file has: nothing");

    /* a UTF-8 byte order mark is skipped */
    assert_int_equal(parse_text("\xEF\xBB\xBF{\"train\": [[[72,64,55,48]]]}", NULL, &c, &info),
                     PN_OK);
    assert_int_equal(c->num_pieces, 1);
    assert_int_equal(c->pieces[0].pitch[0], 72);
    pn_corpus_free(c);

    /* Arguments. */
    c = (pn_corpus *)&c;
    assert_int_equal(pn_corpus_parse_chorales("x", NULL, 3, NULL, &c, &info), PN_ERR_INVALID);
    assert_null(c);
    assert_int_equal(pn_corpus_parse_chorales("x", "{}", 2, NULL, NULL, &info), PN_ERR_INVALID);
    /* info may be NULL. */
    assert_int_equal(pn_corpus_parse_chorales("x", "[]", 2, NULL, &c, NULL), PN_ERR_PARSE);
}

/* ------------------------------------------------------------------------ */
/* Sonorities */

static void test_sonorities(void **state)
{
    (void)state;
    pn_corpus *c = read_ok("valid.json", NULL);
    pn_corpus *s = NULL;
    pn_error_info info;
    assert_int_equal(pn_corpus_sonorities(c, &s, &info), PN_OK);
    assert_int_equal(s->num_pieces, 3);
    const pn_piece *p = &s->pieces[0];
    assert_string_equal(p->name, "train[0]");
    assert_int_equal(p->num_steps, 3);
    const int8_t pitch[] = {72, 67, 64, 48, 71, 67, 62, 55, 72, 64, 60, 48};
    assert_memory_equal(p->pitch, pitch, sizeof pitch);
    assert_non_null(p->duration);
    assert_int_equal(p->duration[0], 2);
    assert_int_equal(p->duration[1], 1);
    assert_int_equal(p->duration[2], 1);
    assert_int_equal(s->pieces[1].num_steps, 2); /* rest, then a chord */
    assert_int_equal(s->pieces[2].num_steps, 1);
    assert_int_equal(s->pieces[2].duration[0], 2);

    /* Merging again sums the durations, not the steps. */
    pn_corpus *again = NULL;
    assert_int_equal(pn_corpus_sonorities(s, &again, &info), PN_OK);
    assert_true(corpora_equal(s, again));
    for (int32_t i = 0; i < s->num_pieces; ++i)
        assert_memory_equal(s->pieces[i].duration, again->pieces[i].duration,
                            (size_t)s->pieces[i].num_steps * sizeof(int32_t));
    pn_corpus_free(again);

    /* The key is the same with or without merging. */
    for (int32_t i = 0; i < c->num_pieces; ++i) {
        pn_key a = pn_key_find(&c->pieces[i]), b = pn_key_find(&s->pieces[i]);
        assert_int_equal(a.tonic, b.tonic);
        assert_int_equal(a.mode, b.mode);
    }
    pn_corpus_free(s);
    pn_corpus_free(c);
}

/* ------------------------------------------------------------------------ */
/* Transposition */

static void test_transpose_round_trip(void **state)
{
    (void)state;
    pn_corpus *c = read_ok("valid.json", NULL);
    pn_corpus *t = NULL, *back = NULL;
    pn_transpose_report rep, rep2;
    pn_error_info info;
    assert_int_equal(pn_corpus_transpose_to(c, 0, 0, 127, &t, &rep, &info), PN_OK);
    assert_int_equal(rep.num_pieces, 3);
    assert_int_equal(rep.num_kept, 3);
    assert_int_equal(t->num_pieces, 3);
    int32_t inverse[3];
    for (int32_t i = 0; i < 3; ++i) {
        assert_true(rep.shift[i] >= -6 && rep.shift[i] <= 5);
        assert_int_equal(rep.bad_step[i], -1);
        pn_key k = pn_key_find(&t->pieces[i]);
        assert_int_equal(k.tonic, 0);
        assert_int_equal(k.mode, rep.key[i].mode);
        assert_int_equal(((rep.key[i].tonic + rep.shift[i]) % 12 + 12) % 12, 0);
        inverse[i] = -rep.shift[i];
    }
    /* valid[0] (a D minor chord) moves down two semitones. */
    assert_string_equal(pn_key_name(rep.key[2]), "D minor");
    assert_int_equal(rep.shift[2], -2);
    assert_int_equal(t->pieces[2].pitch[0], 72);

    assert_int_equal(pn_corpus_transpose_by(t, inverse, 0, 127, &back, &rep2, &info), PN_OK);
    assert_true(corpora_equal(c, back));
    assert_int_equal(rep2.num_kept, 3);
    pn_transpose_report_free(&rep);
    pn_transpose_report_free(&rep2);
    pn_corpus_free(t);
    pn_corpus_free(back);

    /* Every target tonic: the found key follows, the mode stays. */
    for (int tonic = 0; tonic < 12; ++tonic) {
        assert_int_equal(pn_corpus_transpose_to(c, tonic, 0, 127, &t, NULL, &info), PN_OK);
        for (int32_t i = 0; i < t->num_pieces; ++i)
            assert_int_equal(pn_key_find(&t->pieces[i]).tonic, tonic);
        pn_corpus_free(t);
    }
    pn_corpus_free(c);
}

static void test_transpose_range(void **state)
{
    (void)state;
    /* An F# major chord goes down six semitones to C; with a floor at 43
     * its bass (42 - 6 = 36) would leave the range. */
    int8_t fsharp[] = {78, 70, 66, 42, 78, 70, 66, 54};
    int8_t cmaj[] = {72, 67, 64, 48};
    char n0[] = "f#", n1[] = "c";
    pn_piece pieces[2] = {{n0, 4, 2, fsharp, NULL}, {n1, 4, 1, cmaj, NULL}};
    pn_corpus in = {4, 2, pieces};
    pn_corpus *out = NULL;
    pn_transpose_report rep;
    pn_error_info info;
    assert_int_equal(pn_corpus_transpose_to(&in, 0, 43, 84, &out, &rep, &info), PN_OK);
    assert_int_equal(rep.num_kept, 1);
    assert_int_equal(rep.shift[0], -6);
    assert_int_equal(rep.bad_step[0], 0);
    assert_int_equal(rep.bad_voice[0], 3);
    assert_int_equal(rep.shift[1], 0);
    assert_int_equal(rep.bad_step[1], -1);
    assert_int_equal(out->num_pieces, 1);
    assert_string_equal(out->pieces[0].name, "c");
    pn_transpose_report_free(&rep);
    pn_corpus_free(out);
    /* The input is untouched. */
    assert_int_equal(fsharp[3], 42);

    /* Bad arguments. */
    assert_int_equal(pn_corpus_transpose_to(&in, 12, 0, 127, &out, NULL, &info), PN_ERR_INVALID);
    assert_null(out);
    assert_int_equal(pn_corpus_transpose_to(&in, 0, 50, 40, &out, NULL, &info), PN_ERR_INVALID);
    assert_null(out);
    assert_int_equal(pn_corpus_transpose_by(&in, NULL, 0, 127, &out, NULL, &info), PN_ERR_INVALID);
}

/* ------------------------------------------------------------------------ */
/* Optional: the real chorales, when PN_JSB_PATH names the file. */

static void test_real_corpus(void **state)
{
    (void)state;
    const char *path = getenv("PN_JSB_PATH");
    if (!path || !*path)
        skip();
    pn_corpus *c = NULL;
    pn_error_info info;
    if (pn_corpus_read_chorales(path, NULL, &c, &info) != PN_OK)
        fail_msg("%s", info.message);
    int count[2][12] = {{0}};
    for (int32_t i = 0; i < c->num_pieces; ++i) {
        pn_key k = pn_key_find(&c->pieces[i]);
        count[k.mode][k.tonic]++;
    }
    int majors = 0, minors = 0;
    for (int t = 0; t < 12; ++t) {
        majors += count[PN_MAJOR][t];
        minors += count[PN_MINOR][t];
    }
    print_message("%d chorales: %d major, %d minor\n", c->num_pieces, majors, minors);
    for (int m = 0; m < 2; ++m)
        for (int t = 0; t < 12; ++t)
            if (count[m][t]) {
                pn_key k = {t, (pn_mode)m, 0.0};
                print_message("  %-9s %d\n", pn_key_name(k), count[m][t]);
            }
    pn_corpus *tr = NULL;
    pn_transpose_report rep;
    assert_int_equal(pn_corpus_transpose_to(c, 0, 0, 127, &tr, &rep, &info), PN_OK);
    assert_int_equal(rep.num_kept, c->num_pieces);
    pn_transpose_report_free(&rep);
    pn_corpus_free(tr);
    pn_corpus_free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_read_valid),           cmocka_unit_test(test_read_malformed),
        cmocka_unit_test(test_parse_memory),         cmocka_unit_test(test_sonorities),
        cmocka_unit_test(test_transpose_round_trip), cmocka_unit_test(test_transpose_range),
        cmocka_unit_test(test_real_corpus),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * test_json.c — strict JSON reading (include/onnxparity/json.h) and the
 * output-path rule (include/onnxparity/outpath.h), table-driven.
 */
#include <cjson/cJSON.h>
#include <fcntl.h>
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

#include "onnxparity/buf.h"
#include "onnxparity/json.h"
#include "onnxparity/outpath.h"
#include "testhelp.h"

// --- onp_json_parse -----------------------------------------------------------------

typedef struct json_case {
    const char *text;
    size_t n;         /* 0: strlen(text) */
    int ok;           /* 1: accepted */
    const char *why;  /* refused: a word the message must hold */
    int64_t at_least; /* refused: the offset reported is at least this */
} json_case;

static const json_case json_cases[] = {
    {"{\"a\": 1}", 0, 1, NULL, 0},
    {"  [1, 2.5, \"x\", null, true]\n\t ", 0, 1, NULL, 0},
    {"\"\\u00e9\"", 0, 1, NULL, 0},
    /* exactly one value: a second document, text or NUL bytes after it */
    {"{\"a\": 1}\n{\"a\": 2}", 0, 0, "end of file expected", 9},
    {"{\"a\": 1} trailing", 0, 0, "end of file expected", 9},
    {"{\"a\": 1}\0\0\0", 11, 0, "end of file expected", 8},
    /* duplicate keys, also nested */
    {"{\"a\": 1, \"a\": 2}", 0, 0, "duplicate", 0},
    {"{\"x\": {\"b\": 1, \"b\": 1}}", 0, 0, "duplicate", 0},
    /* NUL in a string or a key */
    {"{\"a\": \"x\\u0000y\"}", 0, 0, "(NUL)", 0},
    {"{\"a\\u0000b\": 1}", 0, 0, "(NUL)", 0},
    /* what Python's json also refuses: NaN, overflow, invalid UTF-8 */
    {"{\"a\": NaN}", 0, 0, "invalid token", 0},
    {"{\"a\": 1e999}", 0, 0, "overflow", 0},
    {"{\"a\": \"\xff\"}", 0, 0, "0xff", 0},
    {"", 0, 0, "", 0},
};

static void test_json_cases(void)
{
    for (size_t i = 0; i < sizeof json_cases / sizeof json_cases[0]; i++) {
        const json_case *c = &json_cases[i];
        size_t n = c->n ? c->n : strlen(c->text);
        onp_error e;
        onp_error_clear(&e);
        cJSON *doc = onp_json_parse(c->text, n, "t.json", ONP_ERR_INPUT, "not valid JSON", &e);
        CHECKF((doc != NULL) == c->ok, "case %zu: %s", i, e.msg);
        if (!c->ok) {
            CHECKF(e.code == ONP_ERR_INPUT, "case %zu: code %d", i, (int)e.code);
            CHECKF(strstr(e.msg, c->why) != NULL, "case %zu: '%s' lacks '%s'", i, e.msg, c->why);
            CHECKF(!strncmp(e.msg, "not valid JSON", 14), "case %zu: %s", i, e.msg);
            CHECKF(e.offset >= c->at_least && e.offset <= (int64_t)n, "case %zu: offset %lld", i,
                   (long long)e.offset);
            CHECK(!strcmp(e.file, "t.json"));
        }
        cJSON_Delete(doc);
    }
}

/* Nesting past cJSON's limit but within jansson's: still refused, one error. */
static void test_json_deep(void)
{
    enum { DEPTH = 1500 };
    static char text[2 * DEPTH + 1];
    memset(text, '[', DEPTH);
    memset(text + DEPTH, ']', DEPTH);
    onp_error e;
    onp_error_clear(&e);
    cJSON *doc = onp_json_parse(text, 2 * DEPTH, "d.json", ONP_ERR_FORMAT, "not valid JSON", &e);
    CHECK(doc == NULL);
    CHECK(e.code == ONP_ERR_FORMAT);
    CHECK(strstr(e.msg, "not valid JSON") == e.msg);
}

// --- onp_json_int ----------------------------------------------------------------------

static void test_json_int(void)
{
    cJSON *doc = cJSON_Parse("[3, -1, 2.5, 1e300, 9223372036854775807, 4294967301, \"7\"]");
    int64_t v = 0;
    CHECK(!onp_json_int(cJSON_GetArrayItem(doc, 0), 0, 10, &v) && v == 3);
    CHECK(onp_json_int(cJSON_GetArrayItem(doc, 1), 0, 10, &v));         /* below lo */
    CHECK(onp_json_int(cJSON_GetArrayItem(doc, 2), 0, 10, &v));         /* a fraction */
    CHECK(onp_json_int(cJSON_GetArrayItem(doc, 3), 0, INT64_MAX, &v));  /* past int64 */
    CHECK(onp_json_int(cJSON_GetArrayItem(doc, 4), 0, INT64_MAX, &v));  /* 2^63 as a double */
    CHECK(onp_json_int(cJSON_GetArrayItem(doc, 5), 0, 2147483647, &v)); /* past int */
    CHECK(onp_json_int(cJSON_GetArrayItem(doc, 6), 0, 10, &v));         /* a string */
    CHECK(onp_json_int(NULL, 0, 10, &v));
    cJSON_Delete(doc);
}

// --- the output-path rule ----------------------------------------------------------------

static void test_out_rule(void)
{
    char dir[] = "/tmp/onp-test-out-XXXXXX";
    if (!mkdtemp(dir)) SKIP("no temporary folder");
    char in[256], link_[256], fix[256], inside[256], fresh[256];
    snprintf(in, sizeof in, "%s/in.json", dir);
    snprintf(link_, sizeof link_, "%s/alias.json", dir);
    snprintf(fix, sizeof fix, "%s/test_data_set_0", dir);
    snprintf(inside, sizeof inside, "%s/test_data_set_0/new.html", dir);
    snprintf(fresh, sizeof fresh, "%s/out.html", dir);
    FILE *f = fopen(in, "w");
    fputs("{}", f);
    fclose(f);
    CHECK(symlink("in.json", link_) == 0);
    CHECK(mkdir(fix, 0777) == 0);
    onp_error e;
    onp_error_clear(&e);
    CHECK(onp_out_check(in, &e) == 0); /* not read yet */
    onp_out_note_read(in);
    onp_out_note_tree(fix);
    CHECK(onp_out_check(in, &e) == -1 && e.code == ONP_ERR_USAGE && strstr(e.msg, "in.json"));
    CHECK(onp_out_check(link_, &e) == -1 && strstr(e.msg, "same file"));
    CHECK(onp_out_check(inside, &e) == -1 && strstr(e.msg, "fixture folder"));
    CHECK(onp_out_check(fix, &e) == -1);
    CHECK(onp_out_check(fresh, &e) == 0);
    CHECK(onp_out_check("/dev/null", &e) == 0);

    /* a write onto the input fails before anything is created */
    onp_buf b;
    onp_buf_init(&b, 0);
    onp_buf_append(&b, "xx", 2);
    CHECK(onp_buf_write_file(&b, in, &e) == -1);
    CHECK(onp_buf_write_file(&b, fresh, &e) == 0);
    onp_buf_free(&b);
    f = fopen(in, "r");
    char got[8] = "";
    CHECK(f && fgets(got, sizeof got, f) && !strcmp(got, "{}"));
    if (f) fclose(f);

    unlink(fresh);
    unlink(link_);
    unlink(in);
    rmdir(fix);
    rmdir(dir);
}

TEST_MAIN(test_json_cases, test_json_deep, test_json_int, test_out_rule)

/*
 * test_adequacy.c — parity.json "adequacy" read into onp_adequacy
 * (adequacy.h): the verdict follows the flags' levels, an absent section is
 * ABSENT, malformed fields are format errors naming the field.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "onnxparity/adequacy.h"
#include "testhelp.h"

/* Write text to a fresh temporary file; its path goes to buf. */
static void put(char *buf, size_t n, const char *text)
{
    snprintf(buf, n, "/tmp/onp_adequacy_XXXXXX");
    int fd = mkstemp(buf);
    FILE *f = fdopen(fd, "w");
    fputs(text, f);
    fclose(f);
}

typedef struct read_case {
    const char *what, *json;
    int rc;
    onp_adequacy_verdict verdict;
    size_t n_flags;
    const char *error_has; /* for rc -1 */
} read_case;

static void test_read(void)
{
    static const read_case cases[] = {
        {"no section", "{\"schema\": \"onnxparity.capture/1\"}", 0, ONP_ADEQUACY_ABSENT, 0, NULL},
        {"info only: adequate",
         "{\"adequacy\": {\"schema\": \"onnxparity.adequacy/1\", \"samples\": 500, \"fixtures\": 8,"
         " \"shape_groups\": [{}, {}], \"near_boundary\": 3, \"flags\": [{\"id\": "
         "\"near-boundary\","
         " \"level\": \"info\", \"message\": \"m\", \"output\": \"logits\"}],"
         " \"classifier_outputs\": [{\"name\": \"logits\", \"classes\": 10, \"classes_predicted\": "
         "10,"
         " \"samples\": 500, \"near_boundary\": 3}]}}",
         0, ONP_ADEQUACY_ADEQUATE, 1, NULL},
        {"a warn: inadequate",
         "{\"adequacy\": {\"schema\": \"onnxparity.adequacy/1\", \"samples\": 64, \"flags\": ["
         "{\"id\": \"synthetic-normal\", \"level\": \"warn\", \"message\": \"randn\", \"input\": "
         "\"x\"},"
         "{\"id\": \"some-new-flag\", \"level\": \"info\", \"message\": \"later\"}]}}",
         0, ONP_ADEQUACY_INADEQUATE, 2, NULL},
        {"wrong schema", "{\"adequacy\": {\"schema\": \"x/1\"}}", -1, 0, 0, "adequacy.schema"},
        {"negative count",
         "{\"adequacy\": {\"schema\": \"onnxparity.adequacy/1\", \"samples\": -1}}", -1, 0, 0,
         "adequacy.samples"},
        {"unknown level",
         "{\"adequacy\": {\"schema\": \"onnxparity.adequacy/1\", \"flags\": [{\"id\": \"a\", "
         "\"level\": \"fatal\"}]}}",
         -1, 0, 0, "adequacy.flags"},
        {"duplicate key", "{\"adequacy\": {}, \"adequacy\": {}}", -1, 0, 0, "duplicate"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const read_case *c = &cases[i];
        char path[64];
        put(path, sizeof path, c->json);
        onp_adequacy *a = NULL;
        onp_error e;
        onp_error_clear(&e);
        int rc = onp_adequacy_read(path, &a, &e);
        CHECKF(rc == c->rc, "%s: rc %d", c->what, rc);
        if (rc == 0 && a) {
            CHECKF(a->verdict == c->verdict, "%s: verdict %s", c->what,
                   onp_adequacy_verdict_name(a->verdict));
            CHECKF(a->n_flags == c->n_flags, "%s: %zu flags", c->what, a->n_flags);
        } else if (rc) {
            char msg[512];
            CHECKF(strstr(onp_error_format(&e, msg, sizeof msg), c->error_has), "%s: %s", c->what,
                   msg);
            CHECK(a == NULL);
        }
        if (i == 1 && a) {
            CHECK(a->samples == 500 && a->fixtures == 8 && a->shape_groups == 2);
            CHECK(a->n_outputs == 1 && a->outputs[0].classes == 10 &&
                  a->outputs[0].near_boundary == 3 && !strcmp(a->flags[0].where, "logits"));
        }
        onp_adequacy_free(a);
        unlink(path);
    }
    onp_error e;
    onp_adequacy *a = NULL;
    CHECK(onp_adequacy_read("/nonexistent/parity.json", &a, &e) == -1 && e.code == ONP_ERR_IO);
    onp_adequacy_free(NULL);
    CHECK(!strcmp(onp_adequacy_verdict_name(ONP_ADEQUACY_INADEQUATE), "inadequate"));
    CHECK(!strcmp(onp_adequacy_level_name(ONP_ADEQUACY_WARN), "warn"));
}

TEST_MAIN(test_read)

/*
 * file.c — the criteria file (gate.h): read (a regular file, capped, noted
 * as read, parsed strictly) and written (atomically, under the output
 * rule).  Apart from criteria.c so that the criteria fuzzer links the
 * parser without the file system.
 */
#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

#include "onnxparity/buf.h"
#include "onnxparity/doc.h"
#include "onnxparity/gate.h"
#include "util/fsio.h"

int onp_criteria_read(const char *path, onp_criteria *c, onp_error *e)
{
    memset(c, 0, sizeof *c);
    onp_buf b;
    int rc = onp_read_regular(path, ONP_CRITERIA_MAX_FILE, " the criteria file", &b, e);
    if (!rc) rc = onp_criteria_parse((const char *)b.p, b.n, path, c, e);
    onp_buf_free(&b);
    return rc;
}

int onp_criteria_write(const onp_criteria *c, const char *path, char **text, onp_error *e)
{
    if (text) *text = NULL;
    cJSON *root = onp_criteria_to_json(c);
    char *txt = root ? onp_doc_print(root) : NULL;
    cJSON_Delete(root);
    if (!txt) return onp_error_set(e, ONP_ERR_NOMEM, path, NULL, -1, "out of memory");
    onp_buf b;
    onp_buf_init(&b, 0);
    onp_buf_append(&b, txt, strlen(txt));
    onp_buf_append(&b, "\n", 1);
    int rc = b.failed ? onp_error_set(e, ONP_ERR_NOMEM, path, NULL, -1, "out of memory")
                      : onp_buf_write_file(&b, path, e);
    onp_buf_free(&b);
    if (!rc && text)
        *text = txt;
    else
        free(txt);
    return rc;
}

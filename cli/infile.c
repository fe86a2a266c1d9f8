/*
 * infile.c — opening the documents the tool reads itself (criteria files,
 * result documents for report and merge): regular files only, noted as read
 * so that no output replaces them, JSON read strictly (infile.h).
 */
#include <cjson/cJSON.h>

#include "infile.h"
#include "onnxparity/json.h"
#include "onnxparity/outpath.h"
#include "util/fsio.h"

int cli_read_file(const char *path, size_t cap, const char *what, onp_buf *b, onp_error *e)
{
    return onp_read_regular(path, cap, what, b, e);
}

cJSON *cli_read_json(const char *path, onp_errcode bad_code, const char *bad_msg, onp_error *e)
{
    onp_buf b;
    if (cli_read_file(path, 1u << 30, "", &b, e)) {
        onp_buf_free(&b);
        return NULL;
    }
    cJSON *doc = onp_json_parse(b.p, b.n, path, bad_code, bad_msg, e);
    onp_buf_free(&b);
    return doc;
}

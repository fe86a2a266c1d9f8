/*
 * cmd_edit.c — the splicing writer on the command line:
 *
 *   onnxparity expose MODEL OUT (--all | --values A,B,...)
 *       the model with extra graph outputs (every value computed by a node
 *       of the main graph with --all), for looking inside with `run`;
 *   onnxparity extract MODEL OUT --inputs A,B --outputs C,D
 *       the subgraph between those values, as its own model.
 *
 * Only ModelProto/GraphProto framing is re-encoded; every node and
 * initializer is copied byte for byte.  OUT is written atomically.  Models
 * with external data keep pointing at the same files, so OUT must sit in
 * the same folder.  Exit 0, 2 (bad names), 3 (unreadable model).
 */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "onnxparity/model.h"

/* Split "a,b,c" into a NULL-terminated array of pointers into a copy. */
static char **split(const char *s, size_t *n)
{
    char *copy = strdup(s);
    size_t cap = 1;
    for (const char *p = s; *p; p++) cap += *p == ',';
    char **v = calloc(cap + 2, sizeof *v);
    if (!copy || !v) {
        free(copy);
        free(v);
        return NULL;
    }
    v[0] = copy; /* owner of the bytes, freed by free_split */
    size_t k = 0;
    char *save = NULL;
    for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) v[1 + k++] = t;
    *n = k;
    return v;
}

static void free_split(char **v)
{
    if (v) free(v[0]);
    free(v);
}

static int edit(int argc, char **argv, int extract)
{
    const char *model = NULL, *out = NULL, *values = NULL, *ins = NULL, *outs = NULL, *v;
    int all = 0;
    for (int i = 1; i < argc; i++) {
        int r;
        if (!extract && cli_flag(argv, i, "all"))
            all = 1;
        else if (!extract && (r = cli_opt(argc, argv, &i, "values", &v))) {
            if (r < 0) return EXIT_USAGE;
            values = v;
        } else if (extract && (r = cli_opt(argc, argv, &i, "inputs", &v))) {
            if (r < 0) return EXIT_USAGE;
            ins = v;
        } else if (extract && (r = cli_opt(argc, argv, &i, "outputs", &v))) {
            if (r < 0) return EXIT_USAGE;
            outs = v;
        } else if (argv[i][0] == '-' && argv[i][1]) {
            return cli_usage_error(argv[0], "unknown option '%s'", argv[i]);
        } else if (!model)
            model = argv[i];
        else if (!out)
            out = argv[i];
        else
            return cli_usage_error(argv[0], "two paths only ('%s' is extra)", argv[i]);
    }
    if (!out)
        return cli_usage_error(
            argv[0], extract ? "usage: onnxparity extract MODEL OUT --inputs A,B --outputs C,D"
                             : "usage: onnxparity expose MODEL OUT (--all | --values A,B)");
    if (!extract && !all == !values)
        return cli_usage_error(argv[0], "give --all or --values, one of them");
    if (extract && (!ins || !outs))
        return cli_usage_error(argv[0], "--inputs and --outputs are both required");
    onp_error e;
    onp_error_clear(&e);
    onp_model *m;
    if (onp_model_open(model, &m, &e)) return cli_report(&e);
    onp_buf b;
    onp_buf_init(&b, 0);
    int rc;
    if (extract) {
        size_t ni, no;
        char **vi = split(ins, &ni), **vo = split(outs, &no);
        rc = vi && vo ? onp_model_extract(m, (const char *const *)vi + 1, ni,
                                          (const char *const *)vo + 1, no, &b, &e)
                      : onp_error_set(&e, ONP_ERR_NOMEM, NULL, NULL, -1, "out of memory");
        free_split(vi);
        free_split(vo);
    } else if (all) {
        size_t n;
        const char **names = onp_model_node_values(m, &n);
        rc = names ? onp_model_add_outputs(m, names, n, &b, &e)
                   : onp_error_set(&e, ONP_ERR_NOMEM, NULL, NULL, -1, "out of memory");
    } else {
        size_t n;
        char **vv = split(values, &n);
        rc = vv ? onp_model_add_outputs(m, (const char *const *)vv + 1, n, &b, &e)
                : onp_error_set(&e, ONP_ERR_NOMEM, NULL, NULL, -1, "out of memory");
        free_split(vv);
    }
    if (!rc) rc = onp_buf_write_file(&b, out, &e);
    onp_buf_free(&b);
    onp_model_close(m);
    return rc ? cli_report(&e) : EXIT_PASS;
}

int cmd_expose(int argc, char **argv)
{
    return edit(argc, argv, 0);
}

int cmd_extract(int argc, char **argv)
{
    return edit(argc, argv, 1);
}

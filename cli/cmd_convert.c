/*
 * cmd_convert.c — `onnxparity convert IN OUT`: one tensor from .pb, .npy or
 * .npz[:NAME] to .pb, .npy or .npz, written atomically.  Options choose the
 * .npy byte order and memory order, typed .pb fields, deflated .npz.
 */
#include "cli.h"
#include "onnxparity/tfile.h"

int cmd_convert(int argc, char **argv)
{
    const char *in = NULL, *out = NULL;
    onp_twrite_opts o = {0};
    for (int i = 1; i < argc; i++) {
        if (cli_flag(argv, i, "big-endian"))
            o.big_endian = 1;
        else if (cli_flag(argv, i, "fortran"))
            o.fortran_order = 1;
        else if (cli_flag(argv, i, "typed"))
            o.pb_typed = 1;
        else if (cli_flag(argv, i, "deflate"))
            o.deflate = 1;
        else if (argv[i][0] == '-' && argv[i][1])
            return cli_usage_error(argv[0], "unknown option '%s'", argv[i]);
        else if (!in)
            in = argv[i];
        else if (!out)
            out = argv[i];
        else
            return cli_usage_error(argv[0], "two paths only ('%s' is extra)", argv[i]);
    }
    if (!out) return cli_usage_error(argv[0], "usage: onnxparity convert IN OUT");
    onp_error e;
    onp_error_clear(&e);
    onp_tensor t;
    if (onp_tfile_read(in, NULL, &t, &e)) return cli_report(&e);
    int rc = onp_tfile_write(out, &t, &o, &e);
    onp_tensor_release(&t);
    return rc ? cli_report(&e) : EXIT_PASS;
}

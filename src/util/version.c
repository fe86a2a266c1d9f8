/*
 * version.c — the library's version at run time (include/onnxparity/version.h),
 * so that a program or a ctypes binding can tell which libonnxparity it
 * loaded, whatever header it was built with.  Depends on nothing.
 */
#include "onnxparity/version.h"

const char *onp_version(void)
{
    return ONP_VERSION;
}

int onp_version_number(void)
{
    return ONP_VERSION_NUMBER;
}

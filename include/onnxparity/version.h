/*
 * version.h — the version of libonnxparity, which is the version of the
 * whole project: the tool prints it (`onnxparity --version`, the JSON
 * environment's "onnxparity"), `make install` writes it into onnxparity.pc,
 * and the shared library is named after it (libonnxparity.so.MAJOR.MINOR.PATCH
 * with the SONAME libonnxparity.so.MAJOR).  The Makefile reads the three
 * numbers below; this header is the one place a release changes them.
 *
 * ONP_VERSION_MAJOR is the ABI generation: it changes, and with it the SONAME,
 * when a program built against an older library would no longer run against
 * this one (a public function removed or changed, a public struct's layout
 * changed).  While it is 0 the API is not frozen yet.
 *
 *     // compile time: the header this program was built with
 *     #if ONP_VERSION_NUMBER >= 1000      // 0.1.0 or later
 *     ...
 *     #endif
 *     // run time: the library actually loaded (a shared library may be
 *     // newer than the header, e.g. through ctypes)
 *     printf("libonnxparity %s\n", onp_version());
 */
#ifndef ONNXPARITY_VERSION_H
#define ONNXPARITY_VERSION_H

#define ONP_VERSION_MAJOR 0
#define ONP_VERSION_MINOR 1
#define ONP_VERSION_PATCH 0

#define ONP_VERSION_STR_(x) #x
#define ONP_VERSION_STR(x) ONP_VERSION_STR_(x)
/* "MAJOR.MINOR.PATCH", e.g. "0.1.0" */
#define ONP_VERSION                                                                                \
    ONP_VERSION_STR(ONP_VERSION_MAJOR)                                                             \
    "." ONP_VERSION_STR(ONP_VERSION_MINOR) "." ONP_VERSION_STR(ONP_VERSION_PATCH)
/* MAJOR * 1000000 + MINOR * 1000 + PATCH, for #if comparisons */
#define ONP_VERSION_NUMBER                                                                         \
    (ONP_VERSION_MAJOR * 1000000 + ONP_VERSION_MINOR * 1000 + ONP_VERSION_PATCH)

/* The version of the library linked or loaded at run time, as ONP_VERSION
 * ("0.1.0"): a static string, never NULL, owned by the library. */
const char *onp_version(void);

/* The same as ONP_VERSION_NUMBER, of the library loaded at run time. */
int onp_version_number(void);

#endif /* ONNXPARITY_VERSION_H */

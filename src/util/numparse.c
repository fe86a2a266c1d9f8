/*
 * numparse.c — numbers given as text (include/onnxparity/numparse.h).
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "onnxparity/numparse.h"

int onp_parse_real(const char *s, double *out)
{
    const char *p = s + (*s == '-');
    if (!isdigit((unsigned char)*p) && !(*p == '.' && isdigit((unsigned char)p[1]))) return -1;
    if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) return -1;
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (*end || !isfinite(v) || (errno == ERANGE && fabs(v) > 1)) return -1;
    *out = v;
    return 0;
}

int onp_parse_long(const char *s, long lo, long hi, long *out)
{
    const char *p = s + (*s == '-');
    if (!isdigit((unsigned char)*p)) return -1;
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (*end || errno == ERANGE || v < lo || v > hi) return -1;
    *out = (long)v;
    return 0;
}

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

int onp_parse_size(const char *s, unsigned long long *out)
{
    char *end;
    errno = 0;
    if (!isdigit((unsigned char)*s) && *s != '.') return -1; /* strtod skips spaces */
    double v = strtod(s, &end);
    if (end == s || errno || !(v > 0)) return -1;
    double mul = 1;
    switch (*end) {
    case 'k':
    case 'K': mul = 1024.0, end++; break;
    case 'm':
    case 'M': mul = 1024.0 * 1024, end++; break;
    case 'g':
    case 'G': mul = 1024.0 * 1024 * 1024, end++; break;
    case 't':
    case 'T': mul = 1024.0 * 1024 * 1024 * 1024, end++; break;
    default: break;
    }
    if (mul > 1 && *end == 'i') end++;
    if (*end == 'B' || *end == 'b') end++;
    if (*end || v * mul >= 18446744073709549568.0 || v * mul < 1) return -1;
    *out = (unsigned long long)(v * mul);
    return 0;
}

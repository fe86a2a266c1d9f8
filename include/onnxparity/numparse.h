/*
 * numparse.h — the one parser of numbers given as text (command-line
 * values, option strings from a binding): the whole string or nothing, a
 * digit first, finite values only.
 *
 *     double r;  long k;
 *     onp_parse_real("1e-4", &r);          // 0
 *     onp_parse_real(" 1", &r);            // -1: leading space
 *     onp_parse_long("12", 0, 100, &k);    // 0
 */
#ifndef ONNXPARITY_NUMPARSE_H
#define ONNXPARITY_NUMPARSE_H

/* The whole of s as a decimal number: a digit first (after an optional
 * '-'), so that strtod's leading spaces, "nan", "inf" and hex are refused,
 * nothing after it, and a finite value (an overflow to infinity is
 * refused; an underflow to a tiny value is not).  0, or -1. */
int onp_parse_real(const char *s, double *out);

/* The whole of s as a decimal integer within [lo, hi]; 0, or -1. */
int onp_parse_long(const char *s, long lo, long hi, long *out);

/* A size in bytes: "1000000", "512M", "4G", "1.5GiB" (K, M, G, T are
 * powers of 1024, either case; a trailing "B" or "iB" allowed), at least 1
 * byte and below 2^64.  0, or -1 on anything else. */
int onp_parse_size(const char *s, unsigned long long *out);

#endif

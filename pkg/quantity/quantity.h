/*
 * quantity: exact Kubernetes resource quantities (k8s.io/apimachinery
 * resource.Quantity semantics).
 *
 * Grammar: <sign>?<digits>[.<digits>]<suffix>, at least one digit, where
 * suffix is "" | n u m k M G T P E (decimal SI) | Ki Mi Gi Ti Pi Ei (binary
 * SI) | e<signed int> | E<signed int> (decimal exponent): "100m", "1.5Gi",
 * "2k", "1e3", "0.5", "-1", "+5", ".5", "1.". No spaces. At most
 * QTY_INPUT_MAX bytes.
 *
 * Representation: a signed 128-bit integer count of nano units (10^-9), so
 * every value Kubernetes can print exactly (nano precision) is exact here.
 * Range: |value| <= (2^127-1) nano, about 1.7e29 units (1.4e11 Ei), far above
 * anything a cluster holds. Anything larger fails with -ERANGE (never
 * wraps). Like Kubernetes, input finer than 1n is rounded up away from zero
 * ("0.1n" -> 1n, "3.001n" -> 4n).
 *
 * Differences from Go, on purpose: a number without digits ("Gi", ".", "-")
 * is rejected instead of read as 0; binary quantities above 2^63-1 keep
 * their value instead of being silently capped at 2^63-1.
 *
 * Each value remembers the format of its suffix and prints canonically, as
 * Kubernetes' Quantity.String() does: no fractional digits, the largest
 * suffix that keeps the value exact; binary values below 1024 or with a
 * fraction print in decimal SI; decimal exponents print as a multiple of 3:
 *   "1.5Gi" -> "1536Mi", "0.5" -> "500m", "1000Mi" -> "1000Mi",
 *   "1024Mi" -> "1Gi", "1e3" -> "1e3", "1.5e3" -> "1500", "12000" -> "12k",
 *   "0.5Ki" -> "512", "1000E" -> "1e21".
 *
 * Errors (struct err message names the input):
 *   -EINVAL  invalid quantity "1Qi": unknown suffix "Qi"
 *   -ERANGE  quantity "1e40" is out of range
 */
#ifndef KKS_QUANTITY_QUANTITY_H
#define KKS_QUANTITY_QUANTITY_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "pkg/util/err.h"

#define QTY_INPUT_MAX 128
/* Buffer size that holds any formatted quantity with its NUL. */
#define QTY_STR_MAX 64

enum qty_format {
    QTY_DECIMAL_SI = 0,  /* 12M, 100m */
    QTY_BINARY_SI = 1,   /* 12Mi */
    QTY_DECIMAL_EXP = 2, /* 12e6 */
};

struct qty {
    __int128 nano; /* value * 10^9 */
    enum qty_format format;
};

/* Parse a quantity string. On error *out is zero. */
int qty_parse(const char *s, struct qty *out, struct err *e);
/* The same parse, always through the exact bignum path: the reference that qty_parse's
 * 64-bit shortcut for common values must agree with (the tests compare them). */
int qty_parse_reference(const char *s, struct qty *out, struct err *e);
/*
 * Parse a JSON value as Kubernetes does: a string (surrounding spaces
 * ignored) or a number (integers exactly; reals through their 15
 * significant digit decimal text). Anything else (NULL, null, object...)
 * is -EINVAL.
 */
int qty_parse_json(const json_t *v, struct qty *out, struct err *e);

/* Canonical text into buf (at least QTY_STR_MAX bytes). Returns buf. */
const char *qty_fmt(const struct qty *q, char *buf);
/* An amount of resource `res` for people (logs, Events, messages), `milli` thousandths of a
 * unit (negative as 0): bytes (a resource named memory or storage, e.g. "ephemeral-storage")
 * in binary SI as Kubernetes prints them ("1Gi", "200Mi"), the rest in decimal SI ("500m",
 * "12"); into buf (at least QTY_STR_MAX bytes). Returns buf. */
const char *qty_fmt_amount(char *buf, const char *res, int64_t milli);
/* For log values: the text lives until the end of the full expression. */
#define QTY_STR(q) qty_fmt((q), (char[QTY_STR_MAX]){0})
/* Canonical text as a new string / a new JSON string reference. */
char *qty_to_str(const struct qty *q);
json_t *qty_to_json(const struct qty *q);

/* Constructors: v units, or v thousandths of a unit. */
struct qty qty_from_int(int64_t v, enum qty_format f);
struct qty qty_from_milli(int64_t v, enum qty_format f);

/*
 * Arithmetic. out may alias an input. The result keeps a's format, or b's
 * when a is zero (Kubernetes Add/Sub). 0 or -ERANGE on overflow (out
 * untouched).
 */
int qty_add(const struct qty *a, const struct qty *b, struct qty *out, struct err *e);
int qty_sub(const struct qty *a, const struct qty *b, struct qty *out, struct err *e);
/* q * n (pod count times per-pod request). 0 or -ERANGE. */
int qty_mul_int(const struct qty *q, int64_t n, struct qty *out, struct err *e);

/*
 * q * factor for quota scaling (factor >= 0, itself a quantity such as the
 * parsed "0.9", so it is exact). The product is rounded toward zero to the
 * milli unit for decimal formats (CPU "10" * 0.33 = "3300m") and to the whole
 * unit for binary formats (memory "1Gi" * 0.9 = "966367641"), so a scaled
 * quota never exceeds factor * q. Format of q kept. 0, -EINVAL (negative
 * factor), -ERANGE.
 */
int qty_scale(const struct qty *q, const struct qty *factor, struct qty *out, struct err *e);
/* Round toward zero to a multiple of 10^exp10 units (-9 <= exp10 <= 18). */
struct qty qty_truncate(const struct qty *q, int exp10);

/* -1, 0, 1. */
int qty_cmp(const struct qty *a, const struct qty *b);
int qty_sign(const struct qty *q);
bool qty_is_zero(const struct qty *q);
/* Larger / smaller of the two (borrowed pointer to one of the inputs). */
const struct qty *qty_max(const struct qty *a, const struct qty *b);
const struct qty *qty_min(const struct qty *a, const struct qty *b);

/*
 * Integer views, rounded up away from zero like Kubernetes Value() /
 * MilliValue() ("100m" -> value 1, "1.5" -> 2, "-1.5" -> -2).
 * 0, or -ERANGE when the result does not fit an int64 (*out untouched).
 */
int qty_value(const struct qty *q, int64_t *out, struct err *e);
int qty_milli_value(const struct qty *q, int64_t *out, struct err *e);
/* Floating-point approximation in units (for scores and ratios only). */
double qty_approx(const struct qty *q);

#endif

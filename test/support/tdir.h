/*
 * tdir: scratch directories for unit tests.
 */
#ifndef KKS_TEST_SUPPORT_TDIR_H
#define KKS_TEST_SUPPORT_TDIR_H

#include <stddef.h>

/* Create /tmp/<prefix>-XXXXXX into buf (size n). 0 or -1. */
int tdir_make(char *buf, size_t n, const char *prefix);
/* Remove the directory and everything under it. */
void tdir_remove(const char *dir);

#endif

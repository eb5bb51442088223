/*
 * mtune: glibc malloc settings for the long-running commands (kueue-ks run, kueue-ks agent).
 *
 * A watch event or a list page becomes a jansson tree of hundreds of small allocations,
 * freed together when the object changes again. glibc's per-thread cache (tcache) keeps 7
 * free chunks of each size, so most of a tree goes through the arena's slower paths: about
 * 135 instructions per malloc against 70 with a cache of 256 chunks
 * (bin/bench-dispatch --callgrind, docs/performance.md "malloc's per-thread cache").
 * Requests above 256 bytes are not cached per thread at all (glibc's default caches up to
 * 1,032 bytes, 7 chunks of each size): the cache holds at most about 0.6 MB per thread (the
 * operator's work runs on one).
 *
 * glibc reads its tunables only from the environment when a program starts, so
 * mtune_reexec() sets GLIBC_TUNABLES and executes the same program again, once: same pid,
 * same arguments, same process name. A GLIBC_TUNABLES already set (even empty) is the
 * user's and is kept; set it to run under valgrind, which does not follow the exec.
 */
#ifndef KKS_UTIL_MTUNE_H
#define KKS_UTIL_MTUNE_H

#define MTUNE_GLIBC_TUNABLES "glibc.malloc.tcache_count=256:glibc.malloc.tcache_max=256"

/*
 * With GLIBC_TUNABLES unset: set it to MTUNE_GLIBC_TUNABLES and exec the program's own path
 * (/proc/self/exe resolved) with argv. Returns only when GLIBC_TUNABLES was set already (0),
 * or nothing was executed (-errno; the process goes on with glibc's defaults, GLIBC_TUNABLES
 * unset): -EPERM for a privileged process (AT_SECURE: glibc may drop the variable, which
 * would exec again and again) or one started through the dynamic loader (/proc/self/exe is
 * the loader), else the error of readlink or execv. The caller has no logger yet: the
 * commands log the value in effect at --v 2 ("malloc settings").
 */
int mtune_reexec(char *const argv[]);

#endif

/*
 * proc: what the benches read of a child process in /proc. Header only: each bench is one
 * directory linked alone.
 */
#ifndef KKS_BENCH_PROC_H
#define KKS_BENCH_PROC_H

#include <stdio.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

/* CPU time (user + system) process `pid` has used, in seconds; -1 if unknown. */
static inline double bench_cpu_s(pid_t pid)
{
    char path[64], line[1024];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    size_t n = fread(line, 1, sizeof line - 1, f);
    fclose(f);
    line[n] = 0;
    const char *p = strrchr(line, ')'); /* after "pid (comm)", which may hold spaces: state is
                                           field 3, utime 14, stime 15 */
    if (!p)
        return -1;
    unsigned long long ut = 0, st = 0;
    if (sscanf(p + 2, "%*c %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %llu %llu", &ut, &st) != 2)
        return -1;
    long hz = sysconf(_SC_CLK_TCK);
    return hz > 0 ? (double)(ut + st) / (double)hz : -1;
}

#endif

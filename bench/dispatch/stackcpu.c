/* stackcpu: see stackcpu.h. */
#include "stackcpu.h"

#include "bench/proc.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int by_name(const void *a, const void *b)
{
    return strcmp(a, b);
}

int stackcpu_open(struct stackcpu *sc, const char *dir)
{
    memset(sc, 0, sizeof *sc);
    DIR *d = opendir(dir);
    if (!d)
        return -errno;
    char names[STACKCPU_MAX][48];
    int n = 0;
    struct dirent *de;
    while ((de = readdir(d)) && n < STACKCPU_MAX) {
        size_t len = strlen(de->d_name);
        if (len > 4 && len - 4 < sizeof names[0] && strcmp(de->d_name + len - 4, ".pid") == 0) {
            memcpy(names[n], de->d_name, len - 4);
            names[n++][len - 4] = 0;
        }
    }
    closedir(d);
    qsort(names, (size_t)n, sizeof names[0], by_name);
    for (int i = 0; i < n; i++) {
        char path[PATH_MAX];
        snprintf(path, sizeof path, "%s/%s.pid", dir, names[i]);
        FILE *f = fopen(path, "r");
        long pid = 0;
        int ok = f && fscanf(f, "%ld", &pid) == 1 && pid > 0;
        if (f)
            fclose(f);
        if (!ok)
            continue;
        memcpy(sc->name[sc->n], names[i], sizeof names[i]);
        sc->pid[sc->n++] = (pid_t)pid;
    }
    return sc->n > 0 ? 0 : -ENOENT;
}

double stackcpu_pid_s(pid_t pid)
{
    return bench_cpu_s(pid);
}

void stackcpu_take(const struct stackcpu *sc, struct stackcpu_snap *out)
{
    for (int i = 0; i < sc->n; i++)
        out->s[i] = stackcpu_pid_s(sc->pid[i]);
    /* cpu user nice system idle iowait irq softirq steal */
    unsigned long long v[8] = {0};
    FILE *f = fopen("/proc/stat", "r");
    int got = f ? fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2],
                         &v[3], &v[4], &v[5], &v[6], &v[7])
                : 0;
    if (f)
        fclose(f);
    long hz = sysconf(_SC_CLK_TCK);
    out->busy = out->all = -1;
    if (got == 8 && hz > 0) {
        unsigned long long all = 0;
        for (int k = 0; k < 8; k++)
            all += v[k];
        out->all = (double)all / (double)hz;
        out->busy = (double)(all - v[3] - v[4]) / (double)hz;
    }
}

double stackcpu_busy(const struct stackcpu_snap *a, const struct stackcpu_snap *b)
{
    if (a->all < 0 || b->all <= a->all)
        return -1;
    return (b->busy - a->busy) / (b->all - a->all);
}

double stackcpu_print(FILE *f, const struct stackcpu *sc, const struct stackcpu_snap *a,
                      const struct stackcpu_snap *b, double per)
{
    double sum = 0;
    const char *sep = "";
    for (int i = 0; i < sc->n && per > 0; i++) {
        if (a->s[i] < 0 || b->s[i] < 0 || b->s[i] <= a->s[i])
            continue;
        double ms = (b->s[i] - a->s[i]) * 1e3 / per;
        fprintf(f, "%s\"%s\":%.3f", sep, sc->name[i], ms);
        sep = ",";
        sum += ms;
    }
    return sum;
}

double stackcpu_sum(const struct stackcpu *sc, const struct stackcpu_snap *a,
                    const struct stackcpu_snap *b, double per, const char *prefix)
{
    double sum = 0;
    for (int i = 0; i < sc->n && per > 0; i++)
        if (strncmp(sc->name[i], prefix, strlen(prefix)) == 0 && a->s[i] >= 0 && b->s[i] > a->s[i])
            sum += (b->s[i] - a->s[i]) * 1e3 / per;
    return sum;
}

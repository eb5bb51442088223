/*
 * libFuzzer target: arbitrary bytes as a kubeconfig through the in-memory
 * loader (the path worker kubeconfigs from Secrets take). Exec plugins are
 * only parsed here, never run: loading does not execute anything.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "pkg/kube/kubeconfig.h"
#include "pkg/kube/restconfig.h"
#include "pkg/util/err.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct kube_rest_config *c = NULL;
    char *ns = NULL;
    struct err e;
    if (kubeconfig_load_data((const char *)data, size, "fuzz", NULL, 0, NULL, &c, &ns, &e) == 0) {
        struct kube_rest_config *d = kube_rest_config_dup(c);
        kube_rest_config_free(d);
    }
    kube_rest_config_free(c);
    free(ns);
    /* Also with an explicit context name and file references / exec allowed (never run). */
    c = NULL;
    ns = NULL;
    kubeconfig_load_data((const char *)data, size, "fuzz", "x",
                         KUBECONFIG_ALLOW_FILES | KUBECONFIG_ALLOW_EXEC, NULL, &c, &ns, &e);
    kube_rest_config_free(c);
    free(ns);
    return 0;
}

/* acc: the AdmissionCheck controller's pure decision (see acc.h). */
#include "controllers/workload/acc.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pkg/json/jsonx.h"
#include "pkg/reasons/reasons.h"
#include "pkg/util/xalloc.h"

bool acc_is_ours(const json_t *ac)
{
    const char *c = jx_str(ac, "spec.controllerName", NULL);
    return c && strcmp(c, ACC_CONTROLLER_NAME) == 0;
}

int acc_decide(const json_t *ac, size_t n_usable, size_t n_registered, const char *now,
               json_t **patch, struct err *e)
{
    *patch = NULL;
    if (!acc_is_ours(ac) || !jx_name(ac))
        return err_set(e, -EINVAL, "AdmissionCheck %s: not handled by %s",
                       jx_name(ac) ? jx_name(ac) : "(unnamed)", ACC_CONTROLLER_NAME);
    char *msg;
    struct jx_cond c = {.type = "Active", .observed_generation = jx_generation(ac)};
    if (n_usable > 0) {
        msg = xasprintf("%zu of %zu worker clusters usable", n_usable, n_registered);
        c.status = "True";
        c.reason = REASON_ACTIVE;
    } else if (n_registered == 0) {
        msg = xstrdup("no worker cluster is registered (add a Secret labelled "
                      "kueue-ks.io/worker=true, or --worker NAME=KUBECONFIG)");
        c.status = "False";
        c.reason = REASON_NO_USABLE_CLUSTERS;
    } else {
        msg = xasprintf("none of the %zu registered worker clusters is usable (unreachable, "
                        "not Ready, or metrics stale)",
                        n_registered);
        c.status = "False";
        c.reason = REASON_NO_USABLE_CLUSTERS;
    }
    c.message = msg;
    json_t *cur = jx_arr(ac, "status.conditions");
    json_t *conds = cur ? jx_deep_copy(cur) : json_array();
    int rc = jx_conds_set(conds, &c, now);
    free(msg);
    if (rc <= 0) {
        json_decref(conds);
        return 0;
    }
    json_t *p = json_pack("{s:{s:o}}", "status", "conditions", conds);
    if (jx_resource_version(ac))
        jx_setv_new(p, json_string(jx_resource_version(ac)), "metadata", "resourceVersion");
    *patch = p;
    return 1;
}

/*
 * Fuzz target: the devhub simulators' pure functions on arbitrary input.
 * The bytes are a duration string for simjobs_parse_duration and, when they
 * parse as JSON, the object every pure function of sim_jobs / sim_kueue /
 * sim_res reads (a pod spec, a job, a ClusterQueue, node lists, ...). None
 * may crash, whatever the JSON types.
 */
#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "devhub/sim_jobs.h"
#include "devhub/sim_kueue.h"
#include "devhub/sim_res.h"
#include "pkg/json/jsonx.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 8192)
        return 0;
    char *s = malloc(size + 1);
    memcpy(s, data, size);
    s[size] = '\0';
    double d;
    if (simjobs_parse_duration(s, &d) == 0 && !(d >= 0))
        __builtin_trap();
    json_t *v = json_loadb(s, size, JSON_DECODE_ANY, NULL);
    if (v) {
        (void)simjobs_pod_duration(v, 1);
        (void)simjobs_pod_duration(jx_get(v, "spec"), 1);
        json_t *nodes = json_is_array(v) ? json_incref(v) : json_pack("[O]", v);
        char *why = NULL;
        const char *n = simjobs_place(v, nodes, v, &why);
        if (!n && !why)
            __builtin_trap();
        free(why);
        json_decref(nodes);
        json_t *req = simres_pod_requests(v);
        (void)simres_fits(req, v, v, NULL);
        (void)simres_is_zero(v);
        (void)simres_selector_matches(v, v);
        (void)simres_tolerates_all(v, v);
        json_decref(req);
        const char *kinds[] = {"Job", "PyTorchJob"};
        for (int k = 0; k < 2; k++) {
            json_t *ps = simkueue_podsets(v, kinds[k]);
            json_t *out = NULL;
            why = NULL;
            json_t *flavors = json_object();
            json_object_set(flavors, "f", v);
            if (simkueue_assign(v, flavors, ps, json_is_object(v) ? v : NULL, &out, &why) == 0) {
                json_t *usage = json_object();
                simkueue_usage_add(usage, out, 1);
                simkueue_usage_add(usage, out, -1);
                json_decref(usage);
            }
            json_t *res = json_is_array(v) ? json_incref(v) : json_array();
            json_t *vict = simkueue_victims(v, flavors, ps, 0, "", res, NULL);
            json_decref(vict);
            json_decref(res);
            json_decref(out);
            free(why);
            json_decref(flavors);
            json_decref(ps);
        }
        if (json_is_array(v))
            simkueue_sort_queue(v);
        json_decref(v);
    }
    free(s);
    return 0;
}

/*
 * Fuzz target for the converters and decisions of controllers/workload/placement
 * and controllers/quota/aggregate, which read API objects (outside input).
 * Input: a JSON text. An array [ClusterMetrics, Workload, ResourceFlavor,
 * ClusterQueue] feeds each converter its element; any other JSON value is fed
 * to all of them. Properties: no crash, no leak, no undefined behaviour;
 * converters either succeed or fail with a message; a decision's status is
 * one of the documented values and PLACE_OK names a cluster.
 */
#include <stdint.h>
#include <stdlib.h>

#include "controllers/quota/aggregate.h"
#include "controllers/workload/placement.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    json_t *root = json_loadb((const char *)data, size, 0, NULL);
    if (!root)
        return 0;
    const json_t *cmj = root, *wlj = root, *rfj = root, *cqj = root;
    if (json_is_array(root) && json_array_size(root) == 4) {
        cmj = json_array_get(root, 0);
        wlj = json_array_get(root, 1);
        rfj = json_array_get(root, 2);
        cqj = json_array_get(root, 3);
    }
    struct err e = {0};
    struct vocab_warnings w = {0};
    struct place_cluster c;
    struct place_workload wl;
    struct vocab_flavor fl;
    int crc = place_cluster_from_json(cmj, &c, &w, &e);
    if (crc != 0 && e.msg[0] == '\0')
        abort();
    int wrc = place_workload_from_json(wlj, &wl, &e);
    int frc = vocab_flavor_from_json(rfj, &fl, &e);
    if (crc == 0 && wrc == 0) {
        struct place_resv rv;
        place_resv_init(&rv);
        for (int pol = 0; pol < 2; pol++) {
            struct place_opts o = {.policy = (enum place_policy)pol};
            struct place_result r;
            if (place_decide(&wl, &c, 1, frc == 0 ? &fl : NULL, frc == 0, &rv, &o, &r) != 0)
                abort();
            if (r.status > PLACE_PIN_UNKNOWN || !r.message || (r.status == PLACE_OK) != !!r.cluster)
                abort();
            if (r.status == PLACE_OK && place_resv_add(&rv, wl.key, &r, 0) != 0)
                abort();
            /* the first countedJobs uid (a string) as the copy's: the counted drop rule runs */
            const char *uid = json_string_value(json_object_get(
                json_array_get(json_object_get(json_object_get(cmj, "status"), "countedJobs"), 0),
                "uid"));
            if (r.status == PLACE_OK && uid && uid[0] && place_resv_copy(&rv, wl.key, uid) < 0)
                abort();
            if (place_resv_counted(&rv, c.name, cmj) > 1)
                abort(); /* one reservation held at most */
            place_result_free(&r);
        }
        /* An incomplete view (a registered cluster not known yet) is never
         * final; the cluster as a known non-candidate counts for "ever". */
        const char *unknown[] = {"not-yet"};
        struct place_opts inc = {.others = &c, .n_others = 1, .unknown = unknown, .n_unknown = 1};
        struct place_result r;
        if (place_decide(&wl, NULL, 0, frc == 0 ? &fl : NULL, frc == 0, &rv, &inc, &r) != 0)
            abort();
        if (r.status != PLACE_NOT_NOW || !r.message)
            abort();
        place_result_free(&r);
        inc.n_unknown = 0;
        if (place_decide(&wl, NULL, 0, frc == 0 ? &fl : NULL, frc == 0, &rv, &inc, &r) != 0)
            abort();
        if (r.status == PLACE_OK || !r.message)
            abort();
        place_result_free(&r);
        place_resv_sync(&rv, &c, 1);
        place_resv_free(&rv);
    }
    if (crc == 0)
        place_cluster_free(&c);
    if (wrc == 0)
        place_workload_free(&wl);
    if (frc == 0)
        vocab_flavor_free(&fl);
    vocab_warnings_free(&w);

    struct agg *a = agg_new(NULL);
    agg_set_flavor(a, rfj, NULL);
    agg_update_cluster(a, cmj, &w, NULL);
    if (agg_set_queue(a, cqj, NULL) == 0) {
        struct agg_result r;
        if (agg_compute(a, 1795341600000LL, &r) != 0)
            abort();
        json_t *p = agg_build_patch(cqj, &r);
        json_decref(p);
        agg_result_free(&r);
    }
    agg_remove_cluster(a, "c1");
    vocab_warnings_free(&w);
    agg_free(a);
    json_decref(root);
    return 0;
}

/*
 * Fuzz target for pkg/podres/podres and the agent's computation.
 * Input: a JSON document, used as a pod (podres_pod) and, when it is an
 * object with "nodes" and "pods" arrays, as the agent's input
 * (agent_compute_nodes). Properties: no crash; podres_pod either fails with
 * -EINVAL/-ERANGE and empty lists, or succeeds with non-negative quantities whose
 * canonical text parses back to the same value; the agent's pod record
 * (podrec_new) always reads back, with those requests and limits unless they
 * did not parse; agent_compute_nodes returns one entry per node. The input
 * bytes as a record: podrec_read and podrec_resources refuse or read them
 * without crashing. The pod built with only podrec_reads (jscan_load_paths) has
 * the same record.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "controllers/agent/agent.h"
#include "controllers/agent/podrec.h"
#include "pkg/json/jscan.h"
#include "pkg/podres/podres.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_list(const struct podres_list *l)
{
    for (size_t i = 0; i < l->n; i++) {
        if (qty_sign(&l->v[i].q) < 0)
            abort();
        char buf[QTY_STR_MAX];
        struct qty back;
        if (qty_parse(qty_fmt(&l->v[i].q, buf), &back, NULL) != 0 ||
            qty_cmp(&back, &l->v[i].q) != 0)
            abort();
        if (i > 0 && podres_get(l, l->v[i - 1].name) != &l->v[i - 1].q)
            abort();
    }
}

/* The record of pod j reads back with the lists podres_pod computed (rc: its result). */
static void check_record(json_t *j, int rc, const struct podres_list *req,
                         const struct podres_list *lim)
{
    json_t *rec = podrec_new(j, NULL);
    struct podrec r;
    struct podres_list rr = {0}, rl = {0};
    if (podrec_read(rec, &r) != 0 || podrec_resources(&r, &rr, &rl) != 0)
        abort();
    if ((rc != 0) != !!(r.flags & PODREC_BAD))
        abort();
    if (!(r.flags & PODREC_NOSUMS) && (!podres_equal(req, &rr) || !podres_equal(lim, &rl)))
        abort();
    if (!r.node || (r.note.job && (!r.note.reason || !r.note.message || !r.note.since)))
        abort();
    podres_free(&rr);
    podres_free(&rl);
    json_decref(rec);
}

/* The pod built with only podrec_reads has the same record as the whole pod. */
static void check_reads(const uint8_t *data, size_t size, json_t *j)
{
    json_t *f = jscan_load_paths((const char *)data, size, podrec_reads, NULL);
    if (!json_is_object(j) || !f) {
        json_decref(f);
        return;
    }
    json_t *a = podrec_new(j, NULL), *b = podrec_new(f, NULL);
    if (!json_equal(a, b))
        abort();
    json_decref(a);
    json_decref(b);
    json_decref(f);
}

/* Arbitrary bytes as a record: refused or read, never past their end (ASan). */
static void check_bytes(const uint8_t *data, size_t size)
{
    json_t *s = json_stringn_nocheck((const char *)data, size);
    struct podrec r;
    struct podres_list rr = {0}, rl = {0};
    if (podrec_read(s, &r) == 0)
        (void)podrec_resources(&r, &rr, &rl);
    podres_free(&rr);
    podres_free(&rl);
    json_decref(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    check_bytes(data, size);
    json_t *j = json_loadb((const char *)data, size, JSON_DECODE_ANY, NULL);
    if (!j)
        return 0;
    struct podres_list req = {0}, lim = {0};
    struct err e;
    int rc = podres_pod(j, &req, &lim, &e);
    if (rc != 0 && ((rc != -EINVAL && rc != -ERANGE) || req.n || lim.n))
        abort();
    check_list(&req);
    check_list(&lim);
    check_record(j, rc, &req, &lim);
    check_reads(data, size, j);
    podres_free(&req);
    podres_free(&lim);

    json_t *nodes = json_object_get(j, "nodes"), *pods = json_object_get(j, "pods");
    if (json_is_array(nodes) && json_is_array(pods)) {
        json_t *w = json_array();
        json_t *out = agent_compute_nodes(nodes, pods, w);
        if (!json_is_array(out) || json_array_size(out) != json_array_size(nodes))
            abort();
        json_decref(out);
        json_decref(w);
    }
    json_decref(j);
    return 0;
}

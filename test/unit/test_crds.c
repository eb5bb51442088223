/*
 * Checks every CRD shipped in devhub/crds/ and config/crd/: loads the YAML
 * with pkg/yaml, validates it as the devhub would on create, checks group,
 * names, scope, versions, subresources and printer columns against the
 * expected table, and renders a Table with each version's columns.
 * Run from the repository root (make unit does); KKS_SRCDIR overrides.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "devhub/table.h"
#include "devhub/validate.h"
#include "pkg/util/clock.h"
#include "pkg/yaml/yaml2json.h"

struct want {
    const char *file;
    const char *group;
    const char *kind;
    const char *plural;
    const char *scope;
    const char *shortnames; /* comma-separated, "" for none */
    const char *versions;   /* comma-separated, storage version marked with '*' */
    int status;             /* status subresource on every version */
    const char *columns;    /* column names of the storage version, comma-separated */
};

static const struct want wants[] = {
    {"devhub/crds/kueue.x-k8s.io_workloads.yaml", "kueue.x-k8s.io", "Workload", "workloads",
     "Namespaced", "kwl,kueueworkload,kueueworkloads", "v1beta1,v1beta2*", 1,
     "Queue,Reserved in,Admitted,Finished,Age"},
    {"devhub/crds/kueue.x-k8s.io_clusterqueues.yaml", "kueue.x-k8s.io", "ClusterQueue",
     "clusterqueues", "Cluster", "cq", "v1beta1,v1beta2*", 1,
     "Cohort,Strategy,Pending Workloads,Admitted Workloads"},
    {"devhub/crds/kueue.x-k8s.io_localqueues.yaml", "kueue.x-k8s.io", "LocalQueue", "localqueues",
     "Namespaced", "queue,queues,lq", "v1beta1,v1beta2*", 1,
     "ClusterQueue,Pending Workloads,Admitted Workloads"},
    {"devhub/crds/kueue.x-k8s.io_resourceflavors.yaml", "kueue.x-k8s.io", "ResourceFlavor",
     "resourceflavors", "Cluster", "flavor,flavors,rf", "v1beta1,v1beta2*", 0, ""},
    {"devhub/crds/kueue.x-k8s.io_admissionchecks.yaml", "kueue.x-k8s.io", "AdmissionCheck",
     "admissionchecks", "Cluster", "", "v1beta1,v1beta2*", 1, ""},
    {"devhub/crds/kueue.x-k8s.io_workloadpriorityclasses.yaml", "kueue.x-k8s.io",
     "WorkloadPriorityClass", "workloadpriorityclasses", "Cluster", "", "v1beta1,v1beta2*", 0,
     "Value"},
    {"devhub/crds/control.kubestellar.io_bindingpolicies.yaml", "control.kubestellar.io",
     "BindingPolicy", "bindingpolicies", "Cluster", "bp", "v1alpha1*", 1, "SYNCED,READY,TYPE,AGE"},
    {"devhub/crds/control.kubestellar.io_bindings.yaml", "control.kubestellar.io", "Binding",
     "bindings", "Cluster", "bdg", "v1alpha1*", 1, ""},
    {"devhub/crds/kubeflow.org_pytorchjobs.yaml", "kubeflow.org", "PyTorchJob", "pytorchjobs",
     "Namespaced", "", "v1*", 1, "State,Age"},
    {"config/crd/galaxy.kubestellar.io_clustermetrics.yaml", "galaxy.kubestellar.io",
     "ClusterMetrics", "clustermetrics", "Cluster", "cmet,cmets", "v1alpha1*", 1,
     "NODES,READY,AGE"},
};

static char *path_of(const char *rel)
{
    const char *dir = getenv("KKS_SRCDIR");
    size_t n = (dir ? strlen(dir) + 1 : 0) + strlen(rel) + 1;
    char *p = malloc(n);
    snprintf(p, n, "%s%s%s", dir ? dir : "", dir ? "/" : "", rel);
    return p;
}

static json_t *load(const char *rel)
{
    char *p = path_of(rel);
    FILE *f = fopen(p, "rb");
    if (!f)
        fail_msg("cannot open %s (run from the repository root or set KKS_SRCDIR)", p);
    char *data = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&data, &len);
    char buf[4096];
    size_t r;
    while ((r = fread(buf, 1, sizeof buf, f)) > 0)
        fwrite(buf, 1, r, m);
    fclose(f);
    fclose(m);
    struct err e = {0};
    json_t *docs = yaml_to_json_all(data, len, NULL, &e);
    free(data);
    if (!docs)
        fail_msg("%s: %s", p, e.msg);
    free(p);
    assert_int_equal(json_array_size(docs), 1);
    json_t *crd = json_incref(json_array_get(docs, 0));
    json_decref(docs);
    return crd;
}

static const char *S(const json_t *o, const char *k)
{
    const char *s = json_string_value(json_object_get(o, k));
    return s ? s : "";
}

/* Join the strings of an array (or the "name" fields of objects) with ','. */
static void join(const json_t *arr, const char *field, char *out, size_t n)
{
    out[0] = '\0';
    size_t off = 0;
    for (size_t i = 0; i < json_array_size(arr); i++) {
        const json_t *v = json_array_get(arr, i);
        const char *s = field ? S(v, field) : json_string_value(v);
        off += (size_t)snprintf(out + off, n - off, "%s%s", i ? "," : "", s ? s : "?");
    }
}

static void test_every_crd(void **state)
{
    (void)state;
    const struct valid_target crd_target = {.group = "apiextensions.k8s.io",
                                            .version = "v1",
                                            .kind = "CustomResourceDefinition",
                                            .namespaced = false,
                                            .builtin = true};
    for (size_t i = 0; i < sizeof wants / sizeof wants[0]; i++) {
        const struct want *w = &wants[i];
        json_t *crd = load(w->file);
        struct valid_result vr;
        if (valid_check(&crd_target, VALID_CREATE, crd, &vr) != 0)
            fail_msg("%s: %s", w->file, vr.message);
        assert_string_equal(S(crd, "apiVersion"), "apiextensions.k8s.io/v1");
        assert_string_equal(S(crd, "kind"), "CustomResourceDefinition");
        json_t *spec = json_object_get(crd, "spec"), *names = json_object_get(spec, "names");
        char name[256];
        snprintf(name, sizeof name, "%s.%s", w->plural, w->group);
        assert_string_equal(S(json_object_get(crd, "metadata"), "name"), name);
        assert_string_equal(S(spec, "group"), w->group);
        assert_string_equal(S(spec, "scope"), w->scope);
        assert_string_equal(S(names, "kind"), w->kind);
        assert_string_equal(S(names, "plural"), w->plural);
        char list[256];
        snprintf(list, sizeof list, "%sList", w->kind);
        assert_string_equal(S(names, "listKind"), list);
        char got[512];
        join(json_object_get(names, "shortNames"), NULL, got, sizeof got);
        assert_string_equal(got, w->shortnames);

        json_t *versions = json_object_get(spec, "versions");
        char vs[256] = "";
        size_t off = 0, storage = 0;
        for (size_t v = 0; v < json_array_size(versions); v++) {
            json_t *ver = json_array_get(versions, v);
            bool st = json_is_true(json_object_get(ver, "storage"));
            storage += st;
            off += (size_t)snprintf(vs + off, sizeof vs - off, "%s%s%s", v ? "," : "",
                                    S(ver, "name"), st ? "*" : "");
            assert_true(json_is_true(json_object_get(ver, "served")));
            json_t *schema = json_object_get(json_object_get(ver, "schema"), "openAPIV3Schema");
            assert_string_equal(S(schema, "type"), "object");
            json_t *sub = json_object_get(json_object_get(ver, "subresources"), "status");
            if (w->status)
                assert_true(json_is_object(sub));
            else
                assert_null(sub);
            /* Every version's columns build a printer (jsonPaths parse, types known). */
            struct err e = {0};
            struct table_printer *p =
                table_printer_crd(json_object_get(ver, "additionalPrinterColumns"), &e);
            if (!p)
                fail_msg("%s %s: %s", w->file, S(ver, "name"), e.msg);
            table_printer_free(p);
            if (st) {
                join(json_object_get(ver, "additionalPrinterColumns"), "name", got, sizeof got);
                assert_string_equal(got, w->columns);
            }
        }
        assert_int_equal(storage, 1);
        assert_string_equal(vs, w->versions);
        json_decref(crd);
    }
}

/* The shipped directories hold exactly the CRDs listed above. */
static void test_no_unlisted_files(void **state)
{
    (void)state;
    const char *dirs[] = {"devhub/crds", "config/crd"};
    for (size_t d = 0; d < 2; d++) {
        char *p = path_of(dirs[d]);
        DIR *dir = opendir(p);
        assert_non_null(dir);
        struct dirent *de;
        while ((de = readdir(dir)) != NULL) {
            size_t n = strlen(de->d_name);
            if (n < 5 || strcmp(de->d_name + n - 5, ".yaml") != 0)
                continue;
            char rel[512];
            snprintf(rel, sizeof rel, "%s/%s", dirs[d], de->d_name);
            bool listed = false;
            for (size_t i = 0; i < sizeof wants / sizeof wants[0]; i++)
                listed = listed || !strcmp(wants[i].file, rel);
            if (!listed)
                fail_msg("%s is not checked by test_crds", rel);
        }
        closedir(dir);
        free(p);
    }
}

static json_t *columns_of(const char *file, size_t version)
{
    json_t *crd = load(file);
    json_t *cols = json_object_get(
        json_array_get(json_object_get(json_object_get(crd, "spec"), "versions"), version),
        "additionalPrinterColumns");
    json_incref(cols);
    json_decref(crd);
    return cols;
}

static json_t *table_of(const char *file, size_t version, const char *obj)
{
    json_t *cols = columns_of(file, version);
    struct err e = {0};
    struct table_printer *p = table_printer_crd(cols, &e);
    assert_non_null(p);
    json_decref(cols);
    json_t *items = json_array();
    json_array_append_new(items, json_loads(obj, 0, NULL));
    struct timespec now;
    clock_parse_rfc3339("2026-11-22T12:00:00Z", &now);
    struct table_opts o = {.include = TABLE_INCLUDE_NONE, .now = now.tv_sec};
    json_t *t = table_build(p, items, &o);
    json_decref(items);
    table_printer_free(p);
    json_t *cells =
        json_incref(json_object_get(json_array_get(json_object_get(t, "rows"), 0), "cells"));
    json_decref(t);
    return cells;
}

static void expect_cells(json_t *cells, const char *want)
{
    json_t *w = json_loads(want, 0, NULL);
    assert_non_null(w);
    if (!json_equal(cells, w)) {
        char *g = json_dumps(cells, JSON_COMPACT);
        print_error("got %s\n", g);
        free(g);
        fail();
    }
    json_decref(w);
    json_decref(cells);
}

static void test_columns_render(void **state)
{
    (void)state;
    expect_cells(table_of("config/crd/galaxy.kubestellar.io_clustermetrics.yaml", 0,
                          "{\"metadata\":{\"name\":\"cluster1\",\"creationTimestamp\":"
                          "\"2026-11-22T11:00:00Z\"},\"status\":{\"nodeCount\":2,\"nodes\":[{},{}],"
                          "\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\"}]}}"),
                 "[\"cluster1\",2,\"True\",\"60m\"]");
    expect_cells(table_of("devhub/crds/kubeflow.org_pytorchjobs.yaml", 0,
                          "{\"metadata\":{\"name\":\"pt\",\"creationTimestamp\":"
                          "\"2026-11-22T11:58:00Z\"},\"status\":{\"conditions\":[{\"type\":"
                          "\"Created\"},{\"type\":\"Running\"}]}}"),
                 "[\"pt\",\"Running\",\"2m\"]");
    expect_cells(table_of("devhub/crds/kueue.x-k8s.io_workloads.yaml", 1,
                          "{\"metadata\":{\"name\":\"job-a-1\",\"creationTimestamp\":"
                          "\"2026-11-22T11:59:00Z\"},\"spec\":{\"queueName\":\"user-queue\"},"
                          "\"status\":{\"admission\":{\"clusterQueue\":\"cq\"},\"conditions\":[{"
                          "\"type\":\"QuotaReserved\",\"status\":\"True\"},{\"type\":\"Admitted\","
                          "\"status\":\"True\"}]}}"),
                 "[\"job-a-1\",\"user-queue\",\"cq\",\"True\",null,\"60s\"]");
    expect_cells(table_of("devhub/crds/kueue.x-k8s.io_clusterqueues.yaml", 1,
                          "{\"metadata\":{\"name\":\"cq\"},\"spec\":{\"cohortName\":\"all\","
                          "\"queueingStrategy\":\"BestEffortFIFO\"},\"status\":{"
                          "\"pendingWorkloads\":3,\"admittedWorkloads\":1}}"),
                 "[\"cq\",\"all\",\"BestEffortFIFO\",3,1]");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_crd),
        cmocka_unit_test(test_no_unlisted_files),
        cmocka_unit_test(test_columns_render),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

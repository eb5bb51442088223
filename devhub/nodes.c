/* nodes: --nodes specs to Node objects. See nodes.h. */
#include "devhub/nodes.h"

#include <ctype.h>
#include <stdbool.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "devhub/validate.h"
#include "pkg/json/jsonx.h"
#include "pkg/quantity/quantity.h"
#include "pkg/util/xalloc.h"

static char *trim(char *s)
{
    while (isspace((unsigned char)*s))
        s++;
    size_t n = strlen(s);
    while (n && isspace((unsigned char)s[n - 1]))
        s[--n] = '\0';
    return s;
}

void nodes_spec_release(struct nodes_spec *s)
{
    json_decref(s->resources);
    json_decref(s->labels);
    json_decref(s->taints);
    s->resources = s->labels = s->taints = NULL;
    s->count = 0;
}

static int add_label(struct nodes_spec *s, const char *spec, char *kv, struct err *e)
{
    char *eq = strchr(kv, '=');
    if (!eq)
        return err_set(e, -EINVAL, "--nodes \"%.200s\": label \"%.100s\" must be key=value", spec,
                       kv);
    *eq = '\0';
    char *k = trim(kv), *v = trim(eq + 1);
    char buf[640];
    const char *m = valid_qualified_name(k, buf, sizeof buf);
    if (m)
        return err_set(e, -EINVAL, "--nodes \"%.200s\": label key \"%.100s\": %s", spec, k, m);
    m = valid_label_value(v, buf, sizeof buf);
    if (m)
        return err_set(e, -EINVAL, "--nodes \"%.200s\": label value \"%.100s\": %s", spec, v, m);
    json_object_set_new(s->labels, k, json_string(v));
    return 0;
}

static int add_taint(struct nodes_spec *s, const char *spec, char *t, struct err *e)
{
    char *colon = strrchr(t, ':');
    if (!colon)
        return err_set(e, -EINVAL,
                       "--nodes \"%.200s\": taint \"%.100s\" must be key[=value]:effect", spec, t);
    *colon = '\0';
    char *effect = trim(colon + 1);
    if (strcmp(effect, "NoSchedule") && strcmp(effect, "PreferNoSchedule") &&
        strcmp(effect, "NoExecute"))
        return err_set(e, -EINVAL,
                       "--nodes \"%.200s\": taint effect \"%.50s\" must be NoSchedule, "
                       "PreferNoSchedule or NoExecute",
                       spec, effect);
    char *eq = strchr(t, '=');
    char *val = NULL;
    if (eq) {
        *eq = '\0';
        val = trim(eq + 1);
    }
    char *key = trim(t);
    char buf[640];
    const char *m = valid_qualified_name(key, buf, sizeof buf);
    if (m)
        return err_set(e, -EINVAL, "--nodes \"%.200s\": taint key \"%.100s\": %s", spec, key, m);
    if (val) {
        m = valid_label_value(val, buf, sizeof buf);
        if (m)
            return err_set(e, -EINVAL, "--nodes \"%.200s\": taint value \"%.100s\": %s", spec, val,
                           m);
    }
    json_t *o = json_object();
    json_object_set_new(o, "key", json_string(key));
    if (val && *val)
        json_object_set_new(o, "value", json_string(val));
    json_object_set_new(o, "effect", json_string(effect));
    json_array_append_new(s->taints, o);
    return 0;
}

static int add_resource(struct nodes_spec *s, const char *spec, char *item, struct err *e)
{
    char *eq = strchr(item, '=');
    if (!eq)
        return err_set(e, -EINVAL,
                       "--nodes \"%.200s\": \"%.100s\" is not resource=quantity (e.g. cpu=8)", spec,
                       item);
    *eq = '\0';
    char *name = trim(item), *val = trim(eq + 1);
    char buf[640];
    const char *m = *name ? valid_qualified_name(name, buf, sizeof buf) : "must be non-empty";
    if (m)
        return err_set(e, -EINVAL, "--nodes \"%.200s\": resource name \"%.100s\": %s", spec, name,
                       m);
    struct qty q;
    struct err qe = {0};
    if (qty_parse(val, &q, &qe) != 0)
        return err_set(e, -EINVAL, "--nodes \"%.200s\": %s: %s", spec, name, qe.msg);
    if (qty_sign(&q) < 0)
        return err_set(e, -EINVAL, "--nodes \"%.200s\": %s=%s: must not be negative", spec, name,
                       val);
    char qs[QTY_STR_MAX];
    json_object_set_new(s->resources, name, json_string(qty_fmt(&q, qs)));
    return 0;
}

int nodes_parse(const char *spec, struct nodes_spec *out, struct err *e)
{
    memset(out, 0, sizeof *out);
    out->resources = json_object();
    out->labels = json_object();
    out->taints = json_array();
    out->count = 1;
    int rc = 0;
    const char *sp = spec ? spec : "";
    char *copy = xstrdup(sp);
    char *p = trim(copy);

    /* Optional count prefix: digits, then x / X / *. */
    if (isdigit((unsigned char)*p)) {
        char *end = NULL;
        errno = 0;
        long n = strtol(p, &end, 10);
        char *q = end;
        while (isspace((unsigned char)*q))
            q++;
        if (*q == 'x' || *q == 'X' || *q == '*') {
            if (errno || n < 1 || n > NODES_MAX_COUNT) {
                rc = err_set(e, -EINVAL, "--nodes \"%.200s\": node count must be 1..%d", sp,
                             NODES_MAX_COUNT);
                goto out;
            }
            out->count = (unsigned)n;
            p = q + 1;
        }
    }

    char *save = NULL;
    bool first = true;
    for (char *sec = strtok_r(p, ";", &save); sec;
         sec = strtok_r(NULL, ";", &save), first = false) {
        sec = trim(sec);
        if (!*sec)
            continue;
        enum { RES, LABELS, TAINTS } mode = RES;
        if (!strncmp(sec, "labels=", 7)) {
            mode = LABELS;
            sec += 7;
        } else if (!strncmp(sec, "taints=", 7)) {
            mode = TAINTS;
            sec += 7;
        } else if (!first) {
            rc = err_set(e, -EINVAL,
                         "--nodes \"%.200s\": unknown section \"%.100s\" (expected labels=... or "
                         "taints=...)",
                         sp, sec);
            goto out;
        }
        char *isave = NULL;
        for (char *item = strtok_r(sec, ",", &isave); item; item = strtok_r(NULL, ",", &isave)) {
            item = trim(item);
            if (!*item)
                continue;
            if (mode == LABELS)
                rc = add_label(out, sp, item, e);
            else if (mode == TAINTS)
                rc = add_taint(out, sp, item, e);
            else if (!strncmp(item, "label=", 6))
                rc = add_label(out, sp, item + 6, e);
            else if (!strncmp(item, "taint=", 6))
                rc = add_taint(out, sp, item + 6, e);
            else
                rc = add_resource(out, sp, item, e);
            if (rc)
                goto out;
        }
    }
    if (!json_object_get(out->resources, "cpu"))
        json_object_set_new(out->resources, "cpu", json_string("4"));
    if (!json_object_get(out->resources, "memory"))
        json_object_set_new(out->resources, "memory", json_string("16Gi"));
    if (!json_object_get(out->resources, "pods"))
        json_object_set_new(out->resources, "pods", json_string("110"));
out:
    free(copy);
    if (rc)
        nodes_spec_release(out);
    return rc;
}

static unsigned fnv(const char *s)
{
    unsigned h = 2166136261u;
    for (; *s; s++) {
        h ^= (unsigned char)*s;
        h *= 16777619u;
    }
    return h;
}

static json_t *condition(const char *type, const char *status, const char *reason, const char *msg,
                         const char *t)
{
    json_t *c = json_object();
    json_object_set_new(c, "type", json_string(type));
    json_object_set_new(c, "status", json_string(status));
    json_object_set_new(c, "lastHeartbeatTime", json_string(t));
    json_object_set_new(c, "lastTransitionTime", json_string(t));
    json_object_set_new(c, "reason", json_string(reason));
    json_object_set_new(c, "message", json_string(msg));
    return c;
}

json_t *nodes_make(const struct nodes_spec *s, const char *prefix, unsigned index,
                   const char *created)
{
    const char *pf = prefix && *prefix ? prefix : "devhub";
    char *name = xasprintf("%s-node-%u", pf, index);
    json_t *labels = json_object();
    json_object_set_new(labels, "kubernetes.io/arch", json_string("amd64"));
    json_object_set_new(labels, "kubernetes.io/hostname", json_string(name));
    json_object_set_new(labels, "kubernetes.io/os", json_string("linux"));
    json_object_update(labels, s->labels);
    json_t *it = json_object_get(s->labels, "instance-type");
    if (!it)
        it = json_object_get(s->labels, "instance");
    if (it)
        json_object_set(labels, "node.kubernetes.io/instance-type", it);

    json_t *md = json_object();
    json_object_set_new(md, "name", json_string(name));
    json_object_set_new(md, "labels", labels);
    json_object_set_new(md, "annotations", json_pack("{s:s}", "node.alpha.kubernetes.io/ttl", "0"));
    if (created)
        json_object_set_new(md, "creationTimestamp", json_string(created));

    json_t *spec = json_object();
    if (json_array_size(s->taints))
        json_object_set_new(spec, "taints", jx_deep_copy(s->taints));

    unsigned a = fnv(pf) % 250 + 1;
    char ip[32];
    snprintf(ip, sizeof ip, "10.%u.%u.%u", a, (index / 250) % 256, index % 250 + 1);
    json_t *addrs = json_array();
    json_array_append_new(addrs, json_pack("{s:s,s:s}", "type", "InternalIP", "address", ip));
    json_array_append_new(addrs, json_pack("{s:s,s:s}", "type", "Hostname", "address", name));

    const char *t = created ? created : "1970-01-01T00:00:00Z";
    json_t *conds = json_array();
    json_array_append_new(conds, condition("MemoryPressure", "False", "KubeletHasSufficientMemory",
                                           "kubelet has sufficient memory available", t));
    json_array_append_new(conds, condition("DiskPressure", "False", "KubeletHasNoDiskPressure",
                                           "kubelet has no disk pressure", t));
    json_array_append_new(conds, condition("PIDPressure", "False", "KubeletHasSufficientPID",
                                           "kubelet has sufficient PID available", t));
    json_array_append_new(
        conds, condition("Ready", "True", "KubeletReady", "kubelet is posting ready status", t));

    char *id = xasprintf("%08x-0000-4000-8000-%012x", fnv(pf), index);
    json_t *info = json_object();
    json_object_set_new(info, "architecture", json_string("amd64"));
    json_object_set_new(info, "bootID", json_string(id));
    json_object_set_new(info, "containerRuntimeVersion", json_string("devhub://1.0.0"));
    json_object_set_new(info, "kernelVersion", json_string("6.1.0-devhub"));
    json_object_set_new(info, "kubeProxyVersion", json_string(NODES_KUBELET_VERSION));
    json_object_set_new(info, "kubeletVersion", json_string(NODES_KUBELET_VERSION));
    json_object_set_new(info, "machineID", json_string(id));
    json_object_set_new(info, "operatingSystem", json_string("linux"));
    json_object_set_new(info, "osImage", json_string("kueue-ks-devhub simulated node"));
    json_object_set_new(info, "systemUUID", json_string(id));
    free(id);

    json_t *status = json_object();
    json_object_set_new(status, "capacity", jx_deep_copy(s->resources));
    json_object_set_new(status, "allocatable", jx_deep_copy(s->resources));
    json_object_set_new(status, "conditions", conds);
    json_object_set_new(status, "addresses", addrs);
    json_object_set_new(status, "daemonEndpoints",
                        json_pack("{s:{s:i}}", "kubeletEndpoint", "Port", 10250));
    json_object_set_new(status, "nodeInfo", info);

    json_t *node = json_object();
    json_object_set_new(node, "apiVersion", json_string("v1"));
    json_object_set_new(node, "kind", json_string("Node"));
    json_object_set_new(node, "metadata", md);
    json_object_set_new(node, "spec", spec);
    json_object_set_new(node, "status", status);
    free(name);
    return node;
}

unsigned nodes_build(const struct nodes_spec *s, const char *prefix, unsigned first_index,
                     const char *created, json_t *out)
{
    for (unsigned i = 0; i < s->count; i++)
        json_array_append_new(out, nodes_make(s, prefix, first_index + i, created));
    return first_index + s->count;
}

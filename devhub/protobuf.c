#include "devhub/protobuf.h"

#include <errno.h>
#include <openssl/evp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pkg/util/clock.h"
#include "pkg/util/xalloc.h"

#define MAX_DEPTH 16

enum pf_kind {
    PF_STRING,
    PF_BYTES, /* base64 in JSON */
    PF_INT,   /* varint (int32/int64) */
    PF_BOOL,
    PF_MSG,
    PF_TIME,   /* metav1.Time {1: seconds, 2: nanos} -> RFC 3339 */
    PF_MAP_SS, /* map<string,string> */
    PF_MAP_SB, /* map<string,bytes> */
    PF_STRINGS /* repeated string */
};

struct pf_msg;

struct pf_field {
    unsigned num;
    const char *name;
    enum pf_kind kind;
    bool repeated; /* for PF_MSG */
    const struct pf_msg *sub;
};

struct pf_msg {
    const struct pf_field *f;
    size_t n;
};

#define MSG(arr)                                                                                   \
    {                                                                                              \
        arr, sizeof(arr) / sizeof(arr[0])                                                          \
    }

static const struct pf_field owner_ref_f[] = {
    {1, "kind", PF_STRING, false, NULL},     {3, "name", PF_STRING, false, NULL},
    {4, "uid", PF_STRING, false, NULL},      {5, "apiVersion", PF_STRING, false, NULL},
    {6, "controller", PF_BOOL, false, NULL}, {7, "blockOwnerDeletion", PF_BOOL, false, NULL},
};
static const struct pf_msg owner_ref = MSG(owner_ref_f);

static const struct pf_field object_meta_f[] = {
    {1, "name", PF_STRING, false, NULL},
    {2, "generateName", PF_STRING, false, NULL},
    {3, "namespace", PF_STRING, false, NULL},
    {5, "uid", PF_STRING, false, NULL},
    {6, "resourceVersion", PF_STRING, false, NULL},
    {7, "generation", PF_INT, false, NULL},
    {8, "creationTimestamp", PF_TIME, false, NULL},
    {9, "deletionTimestamp", PF_TIME, false, NULL},
    {10, "deletionGracePeriodSeconds", PF_INT, false, NULL},
    {11, "labels", PF_MAP_SS, false, NULL},
    {12, "annotations", PF_MAP_SS, false, NULL},
    {13, "ownerReferences", PF_MSG, true, &owner_ref},
    {14, "finalizers", PF_STRINGS, false, NULL},
};
static const struct pf_msg object_meta = MSG(object_meta_f);

static const struct pf_field ns_spec_f[] = {{1, "finalizers", PF_STRINGS, false, NULL}};
static const struct pf_msg ns_spec = MSG(ns_spec_f);
static const struct pf_field ns_status_f[] = {{1, "phase", PF_STRING, false, NULL}};
static const struct pf_msg ns_status = MSG(ns_status_f);
static const struct pf_field namespace_f[] = {
    {1, "metadata", PF_MSG, false, &object_meta},
    {2, "spec", PF_MSG, false, &ns_spec},
    {3, "status", PF_MSG, false, &ns_status},
};

static const struct pf_field configmap_f[] = {
    {1, "metadata", PF_MSG, false, &object_meta},
    {2, "data", PF_MAP_SS, false, NULL},
    {3, "binaryData", PF_MAP_SB, false, NULL},
    {4, "immutable", PF_BOOL, false, NULL},
};

static const struct pf_field secret_f[] = {
    {1, "metadata", PF_MSG, false, &object_meta}, {2, "data", PF_MAP_SB, false, NULL},
    {3, "type", PF_STRING, false, NULL},          {4, "stringData", PF_MAP_SS, false, NULL},
    {5, "immutable", PF_BOOL, false, NULL},
};

static const struct pf_field local_ref_f[] = {{1, "name", PF_STRING, false, NULL}};
static const struct pf_msg local_ref = MSG(local_ref_f);
static const struct pf_field object_ref_f[] = {
    {1, "kind", PF_STRING, false, NULL},       {2, "namespace", PF_STRING, false, NULL},
    {3, "name", PF_STRING, false, NULL},       {4, "uid", PF_STRING, false, NULL},
    {5, "apiVersion", PF_STRING, false, NULL},
};
static const struct pf_msg object_ref = MSG(object_ref_f);
static const struct pf_field service_account_f[] = {
    {1, "metadata", PF_MSG, false, &object_meta},
    {2, "secrets", PF_MSG, true, &object_ref},
    {3, "imagePullSecrets", PF_MSG, true, &local_ref},
    {4, "automountServiceAccountToken", PF_BOOL, false, NULL},
};

static const struct pf_field resource_attr_f[] = {
    {1, "namespace", PF_STRING, false, NULL}, {2, "verb", PF_STRING, false, NULL},
    {3, "group", PF_STRING, false, NULL},     {4, "version", PF_STRING, false, NULL},
    {5, "resource", PF_STRING, false, NULL},  {6, "subresource", PF_STRING, false, NULL},
    {7, "name", PF_STRING, false, NULL},
};
static const struct pf_msg resource_attr = MSG(resource_attr_f);
static const struct pf_field non_resource_attr_f[] = {
    {1, "path", PF_STRING, false, NULL},
    {2, "verb", PF_STRING, false, NULL},
};
static const struct pf_msg non_resource_attr = MSG(non_resource_attr_f);
static const struct pf_field ssar_spec_f[] = {
    {1, "resourceAttributes", PF_MSG, false, &resource_attr},
    {2, "nonResourceAttributes", PF_MSG, false, &non_resource_attr},
};
static const struct pf_msg ssar_spec = MSG(ssar_spec_f);
static const struct pf_field ssar_f[] = {
    {1, "metadata", PF_MSG, false, &object_meta},
    {2, "spec", PF_MSG, false, &ssar_spec},
};
static const struct pf_field ssrr_spec_f[] = {{1, "namespace", PF_STRING, false, NULL}};
static const struct pf_msg ssrr_spec = MSG(ssrr_spec_f);
static const struct pf_field ssrr_f[] = {
    {1, "metadata", PF_MSG, false, &object_meta},
    {2, "spec", PF_MSG, false, &ssrr_spec},
};
static const struct pf_field ssr_f[] = {{1, "metadata", PF_MSG, false, &object_meta}};

struct pf_kind_entry {
    const char *api_version;
    const char *kind;
    struct pf_msg msg;
};

static const struct pf_kind_entry kinds[] = {
    {"v1", "Namespace", MSG(namespace_f)},
    {"v1", "ConfigMap", MSG(configmap_f)},
    {"v1", "Secret", MSG(secret_f)},
    {"v1", "ServiceAccount", MSG(service_account_f)},
    {"authorization.k8s.io/v1", "SelfSubjectAccessReview", MSG(ssar_f)},
    {"authorization.k8s.io/v1", "SelfSubjectRulesReview", MSG(ssrr_f)},
    {"authentication.k8s.io/v1", "SelfSubjectReview", MSG(ssr_f)},
};

bool pb_is_protobuf(const char *ct)
{
    return ct && !strncmp(ct, "application/vnd.kubernetes.protobuf", 35);
}

/* ---- wire reader ------------------------------------------------------------ */

struct rd {
    const unsigned char *p, *end;
};

static int varint(struct rd *r, uint64_t *out)
{
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
        if (r->p >= r->end)
            return -1;
        unsigned char b = *r->p++;
        v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            *out = v;
            return 0;
        }
    }
    return -1;
}

/* Length-delimited payload: sets [*p, *p + *n). */
static int bytes(struct rd *r, const unsigned char **p, size_t *n)
{
    uint64_t len;
    if (varint(r, &len) || len > (uint64_t)(r->end - r->p))
        return -1;
    *p = r->p;
    *n = (size_t)len;
    r->p += len;
    return 0;
}

static int skip(struct rd *r, unsigned wt)
{
    uint64_t v;
    const unsigned char *p;
    size_t n;
    switch (wt) {
    case 0:
        return varint(r, &v);
    case 1:
        if (r->end - r->p < 8)
            return -1;
        r->p += 8;
        return 0;
    case 2:
        return bytes(r, &p, &n);
    case 5:
        if (r->end - r->p < 4)
            return -1;
        r->p += 4;
        return 0;
    default:
        return -1; /* groups (3/4) are not used by Kubernetes */
    }
}

static json_t *b64(const unsigned char *p, size_t n)
{
    char *out = xmalloc(4 * ((n + 2) / 3) + 1);
    EVP_EncodeBlock((unsigned char *)out, p, (int)n);
    json_t *s = json_string(out);
    free(out);
    return s ? s : json_string("");
}

static json_t *str(const unsigned char *p, size_t n)
{
    json_t *s = json_stringn((const char *)p, n);
    return s; /* NULL for invalid UTF-8 */
}

static json_t *decode_msg(const unsigned char *p, size_t n, const struct pf_msg *m, int depth);

static json_t *decode_time(const unsigned char *p, size_t n)
{
    struct rd r = {p, p + n};
    uint64_t secs = 0, v;
    while (r.p < r.end) {
        uint64_t tag;
        if (varint(&r, &tag))
            return NULL;
        if ((tag >> 3) == 1 && (tag & 7) == 0) {
            if (varint(&r, &v))
                return NULL;
            secs = v;
        } else if (skip(&r, (unsigned)(tag & 7))) {
            return NULL;
        }
    }
    struct timespec ts = {.tv_sec = (time_t)(int64_t)secs, .tv_nsec = 0};
    char buf[64];
    return json_string(clock_rfc3339(buf, sizeof(buf), &ts, 0));
}

/* A map entry {1: key, 2: value} into obj. */
static int decode_entry(const unsigned char *p, size_t n, bool bytes_value, json_t *obj)
{
    struct rd r = {p, p + n};
    json_t *key = NULL, *val = NULL;
    int ret = 0;
    while (r.p < r.end) {
        uint64_t tag;
        const unsigned char *q;
        size_t qn;
        if (varint(&r, &tag)) {
            ret = -1;
            break;
        }
        unsigned num = (unsigned)(tag >> 3), wt = (unsigned)(tag & 7);
        if ((num == 1 || num == 2) && wt == 2) {
            if (bytes(&r, &q, &qn)) {
                ret = -1;
                break;
            }
            json_t *v = (num == 2 && bytes_value) ? b64(q, qn) : str(q, qn);
            if (!v) {
                ret = -1;
                break;
            }
            json_decref(num == 1 ? key : val);
            if (num == 1)
                key = v;
            else
                val = v;
        } else if (skip(&r, wt)) {
            ret = -1;
            break;
        }
    }
    if (!ret)
        json_object_set_new(obj, key ? json_string_value(key) : "", val ? val : json_string(""));
    else
        json_decref(val);
    json_decref(key);
    return ret;
}

static const struct pf_field *field(const struct pf_msg *m, unsigned num)
{
    for (size_t i = 0; i < m->n; i++)
        if (m->f[i].num == num)
            return &m->f[i];
    return NULL;
}

static json_t *decode_msg(const unsigned char *p, size_t n, const struct pf_msg *m, int depth)
{
    if (depth > MAX_DEPTH)
        return NULL;
    struct rd r = {p, p + n};
    json_t *obj = json_object();
    while (r.p < r.end) {
        uint64_t tag, v;
        const unsigned char *q;
        size_t qn;
        if (varint(&r, &tag))
            goto bad;
        unsigned num = (unsigned)(tag >> 3), wt = (unsigned)(tag & 7);
        const struct pf_field *f = field(m, num);
        bool want_len = f && f->kind != PF_INT && f->kind != PF_BOOL;
        if (!f || (want_len && wt != 2) || (!want_len && wt != 0)) {
            if (skip(&r, wt))
                goto bad;
            continue;
        }
        if (!want_len) {
            if (varint(&r, &v))
                goto bad;
            json_object_set_new(obj, f->name,
                                f->kind == PF_BOOL ? json_boolean(v != 0)
                                                   : json_integer((json_int_t)(int64_t)v));
            continue;
        }
        if (bytes(&r, &q, &qn))
            goto bad;
        json_t *val = NULL;
        switch (f->kind) {
        case PF_STRING:
            val = str(q, qn);
            break;
        case PF_BYTES:
            val = b64(q, qn);
            break;
        case PF_TIME:
            val = decode_time(q, qn);
            break;
        case PF_MSG:
            val = decode_msg(q, qn, f->sub, depth + 1);
            break;
        case PF_MAP_SS:
        case PF_MAP_SB: {
            json_t *map = json_object_get(obj, f->name);
            if (!map) {
                map = json_object();
                json_object_set_new(obj, f->name, map);
            }
            if (decode_entry(q, qn, f->kind == PF_MAP_SB, map))
                goto bad;
            continue;
        }
        case PF_STRINGS: {
            json_t *s = str(q, qn);
            if (!s)
                goto bad;
            json_t *arr = json_object_get(obj, f->name);
            if (!arr) {
                arr = json_array();
                json_object_set_new(obj, f->name, arr);
            }
            json_array_append_new(arr, s);
            continue;
        }
        default:
            break;
        }
        if (!val)
            goto bad;
        if (f->kind == PF_MSG && f->repeated) {
            json_t *arr = json_object_get(obj, f->name);
            if (!arr) {
                arr = json_array();
                json_object_set_new(obj, f->name, arr);
            }
            json_array_append_new(arr, val);
        } else {
            json_object_set_new(obj, f->name, val);
        }
    }
    return obj;
bad:
    json_decref(obj);
    return NULL;
}

json_t *pb_decode_object(const unsigned char *data, size_t len, struct err *e)
{
    if (len < 4 || memcmp(data, "k8s\0", 4))
        return err_set(e, -EBADMSG, "protobuf body does not start with the \"k8s\\0\" magic"), NULL;
    struct rd r = {data + 4, data + len};
    const unsigned char *raw = NULL, *tm = NULL;
    size_t rawn = 0, tmn = 0;
    while (r.p < r.end) {
        uint64_t tag;
        const unsigned char *q;
        size_t qn;
        if (varint(&r, &tag))
            goto bad;
        unsigned num = (unsigned)(tag >> 3), wt = (unsigned)(tag & 7);
        if ((num == 1 || num == 2) && wt == 2) {
            if (bytes(&r, &q, &qn))
                goto bad;
            if (num == 1) {
                tm = q;
                tmn = qn;
            } else {
                raw = q;
                rawn = qn;
            }
        } else if (skip(&r, wt)) {
            goto bad;
        }
    }
    static const struct pf_field type_meta_f[] = {{1, "apiVersion", PF_STRING, false, NULL},
                                                  {2, "kind", PF_STRING, false, NULL}};
    static const struct pf_msg type_meta = MSG(type_meta_f);
    json_t *t = tm ? decode_msg(tm, tmn, &type_meta, 0) : json_object();
    if (!t)
        goto bad;
    const char *av = json_string_value(json_object_get(t, "apiVersion"));
    const char *kind = json_string_value(json_object_get(t, "kind"));
    av = av ? av : "";
    kind = kind ? kind : "";
    const struct pf_kind_entry *k = NULL;
    for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
        if (!strcmp(kinds[i].api_version, av) && !strcmp(kinds[i].kind, kind))
            k = &kinds[i];
    if (!k) {
        err_set(e, -EPROTONOSUPPORT,
                "protobuf bodies of %s %s are not supported (kueue-ks-devhub decodes Namespace, "
                "ConfigMap, Secret, ServiceAccount and self reviews); send JSON, e.g. 'kubectl "
                "create -f' or 'kubectl apply -f'",
                *av ? av : "(no apiVersion)", *kind ? kind : "(no kind)");
        json_decref(t);
        return NULL;
    }
    json_t *obj = decode_msg(raw ? raw : (const unsigned char *)"", rawn, &k->msg, 0);
    if (!obj) {
        json_decref(t);
        goto bad;
    }
    json_object_set_new(obj, "apiVersion", json_string(k->api_version));
    json_object_set_new(obj, "kind", json_string(k->kind));
    json_decref(t);
    return obj;
bad:
    err_set(e, -EBADMSG, "malformed protobuf body (truncated or invalid wire data)");
    return NULL;
}

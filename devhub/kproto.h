/*
 * kproto: decode Kubernetes protobuf request bodies into the JSON object the
 * same request would have carried as `application/json`.
 *
 * kubectl's typed commands (`kubectl create namespace|secret|configmap|
 * serviceaccount|job|cronjob|deployment|service|role|rolebinding|clusterrole|
 * clusterrolebinding`, `kubectl auth can-i|whoami`) send `Content-Type:
 * application/vnd.kubernetes.protobuf`. The body is the 4-byte magic "k8s\0"
 * followed by a runtime.Unknown message {typeMeta{apiVersion, kind}, raw,
 * contentEncoding, contentType}; `raw` is the object in the protobuf encoding
 * of its Go type. This module knows a fixed set of types through a
 * table-driven schema (field number -> JSON name and kind) and produces:
 *
 *   - `apiVersion` and `kind` from the envelope, then the object's fields
 *     under their JSON (camelCase) names;
 *   - zero values of non-pointer scalars omitted (they are always on the wire
 *     in protobuf but `omitempty` in JSON); pointer fields (replicas,
 *     backoffLimit, suspend, ...) and JSON fields without omitempty (container
 *     name, containerPort, ...) keep their zero values;
 *   - nested structs that are on the wire as objects (possibly `{}`), as JSON
 *     prints non-pointer structs;
 *   - int32/int64 as JSON integers, `bytes` (Secret.data, ConfigMap.binaryData)
 *     as base64 strings, metav1.Time as RFC 3339 UTC ("2026-11-22T15:04:05Z";
 *     the zero time, which JSON prints as null, is omitted), resource.Quantity
 *     as its string, intstr.IntOrString as an integer or a string.
 *
 * Known types (apiVersion/kind): v1 Namespace, ConfigMap, Secret,
 * ServiceAccount, Service, Pod; batch/v1 Job, CronJob; apps/v1 Deployment;
 * rbac.authorization.k8s.io/v1 Role, ClusterRole, RoleBinding,
 * ClusterRoleBinding; authorization.k8s.io/v1 SelfSubjectAccessReview,
 * SelfSubjectRulesReview and authentication.k8s.io/v1 SelfSubjectReview
 * (`kubectl auth can-i|whoami`; their status, computed by the server, is {}).
 * `kubectl delete` sends DeleteOptions as JSON (checked), so it is not here.
 * Fields outside the schema are skipped (wire types 0, 1, 2, 5), among them
 * metadata.managedFields, status contents, probes, lifecycle, securityContext,
 * affinity, volumes, podFailurePolicy and successPolicy. Groups (wire types
 * 3 and 4) are rejected.
 *
 * No state: the schema is constant data; calls are thread-safe.
 */
#ifndef KKS_DEVHUB_KPROTO_H
#define KKS_DEVHUB_KPROTO_H

#include <jansson.h>
#include <stddef.h>

#include "pkg/util/err.h"

/* The media type kubectl sends, for Content-Type matching. */
#define KPROTO_MEDIA_TYPE "application/vnd.kubernetes.protobuf"

/* Defaults used by kproto_decode. */
#define KPROTO_MAX_BYTES (3u * 1024u * 1024u) /* the apiserver's request body limit */
#define KPROTO_MAX_DEPTH 32                   /* nested messages */

struct kproto_limits {
    size_t max_bytes; /* larger bodies fail with -E2BIG; 0 = KPROTO_MAX_BYTES */
    int max_depth;    /* deeper nesting fails with -EINVAL; 0 = KPROTO_MAX_DEPTH */
};

/*
 * Decode a protobuf request body (`buf`, `len` bytes; borrowed).
 * On success returns 0 and sets *out to a new reference to a JSON object.
 * Errors (*out is NULL, `e` filled with a message naming the field path):
 *   -EINVAL  not a Kubernetes protobuf body (bad magic), truncated or malformed
 *            wire data (bad varint, length past the end, group wire types,
 *            field number 0, wrong wire type for a known field), invalid
 *            UTF-8 in a string, a time out of range, nesting too deep
 *   -E2BIG   body larger than the limit
 *   -ENOTSUP apiVersion/kind not in the schema, or a contentEncoding (e.g.
 *            gzip) in the envelope; the message names them so a server can
 *            answer 415 Unsupported Media Type
 */
int kproto_decode(const void *buf, size_t len, json_t **out, struct err *e);

/* Same with explicit limits (`lim` may be NULL for the defaults). */
int kproto_decode_ex(const void *buf, size_t len, const struct kproto_limits *lim, json_t **out,
                     struct err *e);

/*
 * 1 if a Content-Type header value (borrowed, may be NULL) is the Kubernetes
 * protobuf media type, case-insensitive, parameters after ';' ignored.
 */
int kproto_is_media_type(const char *content_type);

/* 1 if apiVersion/kind (borrowed) has a schema, else 0. */
int kproto_known(const char *api_version, const char *kind);

#endif

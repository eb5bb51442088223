/*
 * protobuf: decode the Kubernetes protobuf request bodies that kubectl's
 * generator commands send (`kubectl create namespace|configmap|secret|
 * serviceaccount`, `kubectl auth can-i|whoami`) into the JSON object the
 * devhub stores. Only request bodies: responses are always JSON, which
 * client-go accepts because it asks for "protobuf, json".
 *
 * Wire format (k8s.io/apimachinery runtime/serializer/protobuf): the magic
 * bytes "k8s\0", then a runtime.Unknown message {1: typeMeta {1: apiVersion,
 * 2: kind}, 2: raw, 3: contentEncoding, 4: contentType}; raw is the object's
 * generated message. Supported kinds: v1 Namespace, ConfigMap, Secret,
 * ServiceAccount; authorization.k8s.io/v1 SelfSubjectAccessReview,
 * SelfSubjectRulesReview; authentication.k8s.io/v1 SelfSubjectReview; with
 * the full ObjectMeta (managedFields skipped). Unknown fields are skipped.
 */
#ifndef KKS_DEVHUB_PROTOBUF_H
#define KKS_DEVHUB_PROTOBUF_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "pkg/util/err.h"

/* True when the Content-Type names the Kubernetes protobuf encoding. */
bool pb_is_protobuf(const char *content_type);

/*
 * Decode a protobuf request body of len bytes. Returns a new JSON object with
 * apiVersion and kind set, or NULL with e filled: -EBADMSG (malformed input:
 * bad magic, truncated or invalid wire data, nesting too deep) or
 * -EPROTONOSUPPORT (a well-formed body of a kind this decoder does not know;
 * the message names the kind).
 */
json_t *pb_decode_object(const unsigned char *data, size_t len, struct err *e);

#endif

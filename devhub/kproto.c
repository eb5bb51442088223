/*
 * kproto: Kubernetes protobuf request bodies -> JSON (see kproto.h).
 *
 * The schema below is data: one table of fields per message, each field a
 * protobuf field number, its JSON name, a kind and flags. Field numbers were
 * taken from the generated.proto files of k8s.io/api (core/v1, batch/v1,
 * apps/v1) and k8s.io/apimachinery (meta/v1, runtime) and checked against
 * bodies captured from kubectl (test/unit/data/kproto/).
 */
#include "devhub/kproto.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "pkg/util/b64.h"
#include "pkg/util/xalloc.h"

/* ---- schema types ------------------------------------------------------- */

enum kp_kind {
    KP_STRING,
    KP_BOOL,
    KP_INT32,
    KP_INT64,
    KP_BYTES,    /* base64 string */
    KP_MSG,      /* nested object */
    KP_STRINGS,  /* repeated string */
    KP_MSGS,     /* repeated message */
    KP_MAP_SS,   /* map<string, string> */
    KP_MAP_SB,   /* map<string, bytes>: values base64 */
    KP_MAP_SQ,   /* map<string, resource.Quantity> */
    KP_TIME,     /* metav1.Time {seconds, nanos} -> RFC 3339 */
    KP_QUANTITY, /* resource.Quantity {string} -> string */
    KP_INTSTR,   /* intstr.IntOrString {type, intVal, strVal} -> int or string */
};

/* Emit zero values: pointer fields, JSON fields without omitempty. */
#define KPF_KEEP 1u
/* A KP_MSG whose fields are merged into the parent object (`json:",inline"`). */
#define KPF_INLINE 2u

struct kp_msg;

struct kp_field {
    uint32_t num;
    const char *json;
    uint8_t kind;
    uint8_t flags;
    const struct kp_msg *msg; /* KP_MSG / KP_MSGS */
};

struct kp_msg {
    const char *name;
    const struct kp_field *fields;
    size_t nfields;
};

#define F(n, name, kind)                                                                           \
    {                                                                                              \
        n, name, kind, 0, NULL                                                                     \
    }
#define FK(n, name, kind)                                                                          \
    {                                                                                              \
        n, name, kind, KPF_KEEP, NULL                                                              \
    }
#define FM(n, name, m)                                                                             \
    {                                                                                              \
        n, name, KP_MSG, 0, &m                                                                     \
    }
#define FMI(n, m)                                                                                  \
    {                                                                                              \
        n, "", KP_MSG, KPF_INLINE, &m                                                              \
    }
#define FMS(n, name, m)                                                                            \
    {                                                                                              \
        n, name, KP_MSGS, 0, &m                                                                    \
    }
#define MSG(var, name, arr)                                                                        \
    static const struct kp_msg var = {name, arr, sizeof(arr) / sizeof(arr[0])}
#define EMPTY_MSG(var, name) static const struct kp_msg var = {name, NULL, 0}

/* ---- meta/v1 ------------------------------------------------------------ */

static const struct kp_field f_owner_ref[] = {
    FK(5, "apiVersion", KP_STRING), FK(1, "kind", KP_STRING),
    FK(3, "name", KP_STRING),       FK(4, "uid", KP_STRING),
    FK(6, "controller", KP_BOOL),   FK(7, "blockOwnerDeletion", KP_BOOL),
};
MSG(m_owner_ref, "OwnerReference", f_owner_ref);

static const struct kp_field f_object_meta[] = {
    F(1, "name", KP_STRING),
    F(2, "generateName", KP_STRING),
    F(3, "namespace", KP_STRING),
    F(4, "selfLink", KP_STRING),
    F(5, "uid", KP_STRING),
    F(6, "resourceVersion", KP_STRING),
    F(7, "generation", KP_INT64),
    F(8, "creationTimestamp", KP_TIME),
    F(9, "deletionTimestamp", KP_TIME),
    FK(10, "deletionGracePeriodSeconds", KP_INT64),
    F(11, "labels", KP_MAP_SS),
    F(12, "annotations", KP_MAP_SS),
    FMS(13, "ownerReferences", m_owner_ref),
    F(14, "finalizers", KP_STRINGS),
    /* 17 managedFields: skipped (the server tracks its own) */
};
MSG(m_object_meta, "ObjectMeta", f_object_meta);

static const struct kp_field f_selector_req[] = {
    FK(1, "key", KP_STRING),
    FK(2, "operator", KP_STRING),
    F(3, "values", KP_STRINGS),
};
MSG(m_selector_req, "LabelSelectorRequirement", f_selector_req);

static const struct kp_field f_label_selector[] = {
    F(1, "matchLabels", KP_MAP_SS),
    FMS(2, "matchExpressions", m_selector_req),
};
MSG(m_label_selector, "LabelSelector", f_label_selector);

/* ---- core/v1 ------------------------------------------------------------ */

static const struct kp_field f_local_ref[] = {
    F(1, "name", KP_STRING),
};
MSG(m_local_ref, "LocalObjectReference", f_local_ref);

static const struct kp_field f_object_ref[] = {
    F(1, "kind", KP_STRING),      F(2, "namespace", KP_STRING),  F(3, "name", KP_STRING),
    F(4, "uid", KP_STRING),       F(5, "apiVersion", KP_STRING), F(6, "resourceVersion", KP_STRING),
    F(7, "fieldPath", KP_STRING),
};
MSG(m_object_ref, "ObjectReference", f_object_ref);

static const struct kp_field f_field_selector[] = {
    F(1, "apiVersion", KP_STRING),
    FK(2, "fieldPath", KP_STRING),
};
MSG(m_field_selector, "ObjectFieldSelector", f_field_selector);

/* ConfigMapKeySelector and SecretKeySelector have the same layout. */
static const struct kp_field f_key_selector[] = {
    FMI(1, m_local_ref),
    FK(2, "key", KP_STRING),
    FK(3, "optional", KP_BOOL),
};
MSG(m_key_selector, "KeySelector", f_key_selector);

static const struct kp_field f_env_source[] = {
    FM(1, "fieldRef", m_field_selector),
    FM(3, "configMapKeyRef", m_key_selector),
    FM(4, "secretKeyRef", m_key_selector),
};
MSG(m_env_source, "EnvVarSource", f_env_source);

static const struct kp_field f_env_var[] = {
    FK(1, "name", KP_STRING),
    F(2, "value", KP_STRING),
    FM(3, "valueFrom", m_env_source),
};
MSG(m_env_var, "EnvVar", f_env_var);

static const struct kp_field f_container_port[] = {
    F(1, "name", KP_STRING),     F(2, "hostPort", KP_INT32), FK(3, "containerPort", KP_INT32),
    F(4, "protocol", KP_STRING), F(5, "hostIP", KP_STRING),
};
MSG(m_container_port, "ContainerPort", f_container_port);

static const struct kp_field f_resources[] = {
    F(1, "limits", KP_MAP_SQ),
    F(2, "requests", KP_MAP_SQ),
};
MSG(m_resources, "ResourceRequirements", f_resources);

static const struct kp_field f_volume_mount[] = {
    FK(1, "name", KP_STRING),   F(2, "readOnly", KP_BOOL),      FK(3, "mountPath", KP_STRING),
    F(4, "subPath", KP_STRING), F(6, "subPathExpr", KP_STRING),
};
MSG(m_volume_mount, "VolumeMount", f_volume_mount);

static const struct kp_field f_container[] = {
    FK(1, "name", KP_STRING),
    F(2, "image", KP_STRING),
    F(3, "command", KP_STRINGS),
    F(4, "args", KP_STRINGS),
    F(5, "workingDir", KP_STRING),
    FMS(6, "ports", m_container_port),
    FMS(7, "env", m_env_var),
    FM(8, "resources", m_resources),
    FMS(9, "volumeMounts", m_volume_mount),
    F(13, "terminationMessagePath", KP_STRING),
    F(14, "imagePullPolicy", KP_STRING),
    F(16, "stdin", KP_BOOL),
    F(17, "stdinOnce", KP_BOOL),
    F(18, "tty", KP_BOOL),
    F(20, "terminationMessagePolicy", KP_STRING),
    FK(24, "restartPolicy", KP_STRING),
};
MSG(m_container, "Container", f_container);

static const struct kp_field f_toleration[] = {
    F(1, "key", KP_STRING),    F(2, "operator", KP_STRING),          F(3, "value", KP_STRING),
    F(4, "effect", KP_STRING), FK(5, "tolerationSeconds", KP_INT64),
};
MSG(m_toleration, "Toleration", f_toleration);

static const struct kp_field f_pod_spec[] = {
    FMS(2, "containers", m_container),
    FMS(20, "initContainers", m_container),
    F(3, "restartPolicy", KP_STRING),
    FK(4, "terminationGracePeriodSeconds", KP_INT64),
    FK(5, "activeDeadlineSeconds", KP_INT64),
    F(6, "dnsPolicy", KP_STRING),
    F(7, "nodeSelector", KP_MAP_SS),
    F(8, "serviceAccountName", KP_STRING),
    F(9, "serviceAccount", KP_STRING),
    F(10, "nodeName", KP_STRING),
    F(11, "hostNetwork", KP_BOOL),
    F(12, "hostPID", KP_BOOL),
    F(13, "hostIPC", KP_BOOL),
    FMS(15, "imagePullSecrets", m_local_ref),
    F(16, "hostname", KP_STRING),
    F(17, "subdomain", KP_STRING),
    F(19, "schedulerName", KP_STRING),
    FK(21, "automountServiceAccountToken", KP_BOOL),
    FMS(22, "tolerations", m_toleration),
    F(24, "priorityClassName", KP_STRING),
    FK(25, "priority", KP_INT32),
    FK(27, "shareProcessNamespace", KP_BOOL),
    FK(29, "runtimeClassName", KP_STRING),
    FK(30, "enableServiceLinks", KP_BOOL),
    FK(31, "preemptionPolicy", KP_STRING),
    FK(35, "setHostnameAsFQDN", KP_BOOL),
    FK(37, "hostUsers", KP_BOOL),
};
MSG(m_pod_spec, "PodSpec", f_pod_spec);

static const struct kp_field f_pod_template[] = {
    FM(1, "metadata", m_object_meta),
    FM(2, "spec", m_pod_spec),
};
MSG(m_pod_template, "PodTemplateSpec", f_pod_template);

/* Status of objects on create: the server ignores it; kept as {}. */
EMPTY_MSG(m_status, "Status");

static const struct kp_field f_pod[] = {
    FM(1, "metadata", m_object_meta),
    FM(2, "spec", m_pod_spec),
    FM(3, "status", m_status),
};
MSG(m_pod, "Pod", f_pod);

static const struct kp_field f_ns_spec[] = {
    F(1, "finalizers", KP_STRINGS),
};
MSG(m_ns_spec, "NamespaceSpec", f_ns_spec);

static const struct kp_field f_ns_status[] = {
    F(1, "phase", KP_STRING),
};
MSG(m_ns_status, "NamespaceStatus", f_ns_status);

static const struct kp_field f_namespace[] = {
    FM(1, "metadata", m_object_meta),
    FM(2, "spec", m_ns_spec),
    FM(3, "status", m_ns_status),
};
MSG(m_namespace, "Namespace", f_namespace);

static const struct kp_field f_configmap[] = {
    FM(1, "metadata", m_object_meta),
    FK(4, "immutable", KP_BOOL),
    F(2, "data", KP_MAP_SS),
    F(3, "binaryData", KP_MAP_SB),
};
MSG(m_configmap, "ConfigMap", f_configmap);

static const struct kp_field f_secret[] = {
    FM(1, "metadata", m_object_meta), FK(5, "immutable", KP_BOOL), F(2, "data", KP_MAP_SB),
    F(4, "stringData", KP_MAP_SS),    F(3, "type", KP_STRING),
};
MSG(m_secret, "Secret", f_secret);

static const struct kp_field f_service_account[] = {
    FM(1, "metadata", m_object_meta),
    FMS(2, "secrets", m_object_ref),
    FMS(3, "imagePullSecrets", m_local_ref),
    FK(4, "automountServiceAccountToken", KP_BOOL),
};
MSG(m_service_account, "ServiceAccount", f_service_account);

/* ---- batch/v1 ----------------------------------------------------------- */

static const struct kp_field f_job_spec[] = {
    FK(1, "parallelism", KP_INT32),
    FK(2, "completions", KP_INT32),
    FK(3, "activeDeadlineSeconds", KP_INT64),
    FK(7, "backoffLimit", KP_INT32),
    FK(12, "backoffLimitPerIndex", KP_INT32),
    FK(13, "maxFailedIndexes", KP_INT32),
    FM(4, "selector", m_label_selector),
    FK(5, "manualSelector", KP_BOOL),
    FM(6, "template", m_pod_template),
    FK(8, "ttlSecondsAfterFinished", KP_INT32),
    FK(9, "completionMode", KP_STRING),
    FK(10, "suspend", KP_BOOL),
    FK(14, "podReplacementPolicy", KP_STRING),
    FK(15, "managedBy", KP_STRING),
    /* 11 podFailurePolicy, 16 successPolicy: skipped */
};
MSG(m_job_spec, "JobSpec", f_job_spec);

static const struct kp_field f_job[] = {
    FM(1, "metadata", m_object_meta),
    FM(2, "spec", m_job_spec),
    FM(3, "status", m_status),
};
MSG(m_job, "Job", f_job);

static const struct kp_field f_job_template[] = {
    FM(1, "metadata", m_object_meta),
    FM(2, "spec", m_job_spec),
};
MSG(m_job_template, "JobTemplateSpec", f_job_template);

static const struct kp_field f_cronjob_spec[] = {
    FK(1, "schedule", KP_STRING),
    FK(8, "timeZone", KP_STRING),
    FK(2, "startingDeadlineSeconds", KP_INT64),
    F(3, "concurrencyPolicy", KP_STRING),
    FK(4, "suspend", KP_BOOL),
    FM(5, "jobTemplate", m_job_template),
    FK(6, "successfulJobsHistoryLimit", KP_INT32),
    FK(7, "failedJobsHistoryLimit", KP_INT32),
};
MSG(m_cronjob_spec, "CronJobSpec", f_cronjob_spec);

static const struct kp_field f_cronjob[] = {
    FM(1, "metadata", m_object_meta),
    FM(2, "spec", m_cronjob_spec),
    FM(3, "status", m_status),
};
MSG(m_cronjob, "CronJob", f_cronjob);

/* ---- apps/v1 ------------------------------------------------------------ */

static const struct kp_field f_rolling_update[] = {
    F(1, "maxUnavailable", KP_INTSTR),
    F(2, "maxSurge", KP_INTSTR),
};
MSG(m_rolling_update, "RollingUpdateDeployment", f_rolling_update);

static const struct kp_field f_strategy[] = {
    F(1, "type", KP_STRING),
    FM(2, "rollingUpdate", m_rolling_update),
};
MSG(m_strategy, "DeploymentStrategy", f_strategy);

static const struct kp_field f_deploy_spec[] = {
    FK(1, "replicas", KP_INT32),       FM(2, "selector", m_label_selector),
    FM(3, "template", m_pod_template), FM(4, "strategy", m_strategy),
    F(5, "minReadySeconds", KP_INT32), FK(6, "revisionHistoryLimit", KP_INT32),
    F(7, "paused", KP_BOOL),           FK(9, "progressDeadlineSeconds", KP_INT32),
};
MSG(m_deploy_spec, "DeploymentSpec", f_deploy_spec);

static const struct kp_field f_deployment[] = {
    FM(1, "metadata", m_object_meta),
    FM(2, "spec", m_deploy_spec),
    FM(3, "status", m_status),
};
MSG(m_deployment, "Deployment", f_deployment);

/* ---- core/v1 Service ---------------------------------------------------- */

static const struct kp_field f_service_port[] = {
    F(1, "name", KP_STRING), F(2, "protocol", KP_STRING),   FK(6, "appProtocol", KP_STRING),
    FK(3, "port", KP_INT32), F(4, "targetPort", KP_INTSTR), F(5, "nodePort", KP_INT32),
};
MSG(m_service_port, "ServicePort", f_service_port);

static const struct kp_field f_service_spec[] = {
    FMS(1, "ports", m_service_port),
    F(2, "selector", KP_MAP_SS),
    F(3, "clusterIP", KP_STRING),
    F(18, "clusterIPs", KP_STRINGS),
    F(4, "type", KP_STRING),
    F(5, "externalIPs", KP_STRINGS),
    F(7, "sessionAffinity", KP_STRING),
    F(8, "loadBalancerIP", KP_STRING),
    F(9, "loadBalancerSourceRanges", KP_STRINGS),
    F(10, "externalName", KP_STRING),
    F(11, "externalTrafficPolicy", KP_STRING),
    F(12, "healthCheckNodePort", KP_INT32),
    F(13, "publishNotReadyAddresses", KP_BOOL),
    F(19, "ipFamilies", KP_STRINGS),
    FK(17, "ipFamilyPolicy", KP_STRING),
    FK(20, "allocateLoadBalancerNodePorts", KP_BOOL),
    FK(21, "loadBalancerClass", KP_STRING),
    FK(22, "internalTrafficPolicy", KP_STRING),
    FK(23, "trafficDistribution", KP_STRING),
};
MSG(m_service_spec, "ServiceSpec", f_service_spec);

static const struct kp_field f_service_status[] = {
    FM(1, "loadBalancer", m_status),
};
MSG(m_service_status, "ServiceStatus", f_service_status);

static const struct kp_field f_service[] = {
    FM(1, "metadata", m_object_meta),
    FM(2, "spec", m_service_spec),
    FM(3, "status", m_service_status),
};
MSG(m_service, "Service", f_service);

/* ---- rbac.authorization.k8s.io/v1 --------------------------------------- */

static const struct kp_field f_policy_rule[] = {
    F(1, "verbs", KP_STRINGS),           F(2, "apiGroups", KP_STRINGS),
    F(3, "resources", KP_STRINGS),       F(4, "resourceNames", KP_STRINGS),
    F(5, "nonResourceURLs", KP_STRINGS),
};
MSG(m_policy_rule, "PolicyRule", f_policy_rule);

static const struct kp_field f_aggregation_rule[] = {
    FMS(1, "clusterRoleSelectors", m_label_selector),
};
MSG(m_aggregation_rule, "AggregationRule", f_aggregation_rule);

static const struct kp_field f_role[] = {
    FM(1, "metadata", m_object_meta),
    FMS(2, "rules", m_policy_rule),
};
MSG(m_role, "Role", f_role);

static const struct kp_field f_cluster_role[] = {
    FM(1, "metadata", m_object_meta),
    FMS(2, "rules", m_policy_rule),
    FM(3, "aggregationRule", m_aggregation_rule),
};
MSG(m_cluster_role, "ClusterRole", f_cluster_role);

static const struct kp_field f_subject[] = {
    FK(1, "kind", KP_STRING),
    F(2, "apiGroup", KP_STRING),
    FK(3, "name", KP_STRING),
    F(4, "namespace", KP_STRING),
};
MSG(m_subject, "Subject", f_subject);

static const struct kp_field f_role_ref[] = {
    FK(1, "apiGroup", KP_STRING),
    FK(2, "kind", KP_STRING),
    FK(3, "name", KP_STRING),
};
MSG(m_role_ref, "RoleRef", f_role_ref);

/* RoleBinding and ClusterRoleBinding have the same layout. */
static const struct kp_field f_role_binding[] = {
    FM(1, "metadata", m_object_meta),
    FMS(2, "subjects", m_subject),
    FM(3, "roleRef", m_role_ref),
};
MSG(m_role_binding, "RoleBinding", f_role_binding);

/* ---- self reviews (kubectl auth can-i / whoami) -------------------------- */
/* Their status is computed by the server; the request's (all zero) is {}. */

static const struct kp_field f_resource_attrs[] = {
    F(1, "namespace", KP_STRING), F(2, "verb", KP_STRING),     F(3, "group", KP_STRING),
    F(4, "version", KP_STRING),   F(5, "resource", KP_STRING), F(6, "subresource", KP_STRING),
    F(7, "name", KP_STRING),
};
MSG(m_resource_attrs, "ResourceAttributes", f_resource_attrs);

static const struct kp_field f_non_resource_attrs[] = {
    F(1, "path", KP_STRING),
    F(2, "verb", KP_STRING),
};
MSG(m_non_resource_attrs, "NonResourceAttributes", f_non_resource_attrs);

static const struct kp_field f_ssar_spec[] = {
    FM(1, "resourceAttributes", m_resource_attrs),
    FM(2, "nonResourceAttributes", m_non_resource_attrs),
};
MSG(m_ssar_spec, "SelfSubjectAccessReviewSpec", f_ssar_spec);

static const struct kp_field f_ssar[] = {
    FM(1, "metadata", m_object_meta),
    FM(2, "spec", m_ssar_spec),
    FM(3, "status", m_status),
};
MSG(m_ssar, "SelfSubjectAccessReview", f_ssar);

static const struct kp_field f_ssrr_spec[] = {
    F(1, "namespace", KP_STRING),
};
MSG(m_ssrr_spec, "SelfSubjectRulesReviewSpec", f_ssrr_spec);

static const struct kp_field f_ssrr[] = {
    FM(1, "metadata", m_object_meta),
    FM(2, "spec", m_ssrr_spec),
    FM(3, "status", m_status),
};
MSG(m_ssrr, "SelfSubjectRulesReview", f_ssrr);

static const struct kp_field f_ssr[] = {
    FM(1, "metadata", m_object_meta),
    FM(2, "status", m_status),
};
MSG(m_ssr, "SelfSubjectReview", f_ssr);

/* ---- top-level types ---------------------------------------------------- */

struct kp_root {
    const char *api_version;
    const char *kind;
    const struct kp_msg *msg;
};

static const struct kp_root roots[] = {
    {"v1", "Namespace", &m_namespace},
    {"v1", "ConfigMap", &m_configmap},
    {"v1", "Secret", &m_secret},
    {"v1", "ServiceAccount", &m_service_account},
    {"v1", "Pod", &m_pod},
    {"batch/v1", "Job", &m_job},
    {"batch/v1", "CronJob", &m_cronjob},
    {"apps/v1", "Deployment", &m_deployment},
    {"v1", "Service", &m_service},
    {"rbac.authorization.k8s.io/v1", "Role", &m_role},
    {"rbac.authorization.k8s.io/v1", "ClusterRole", &m_cluster_role},
    {"rbac.authorization.k8s.io/v1", "RoleBinding", &m_role_binding},
    {"rbac.authorization.k8s.io/v1", "ClusterRoleBinding", &m_role_binding},
    {"authorization.k8s.io/v1", "SelfSubjectAccessReview", &m_ssar},
    {"authorization.k8s.io/v1", "SelfSubjectRulesReview", &m_ssrr},
    {"authentication.k8s.io/v1", "SelfSubjectReview", &m_ssr},
};

static const struct kp_msg *root_find(const char *api_version, const char *kind)
{
    for (size_t i = 0; i < sizeof(roots) / sizeof(roots[0]); i++)
        if (strcmp(roots[i].api_version, api_version) == 0 && strcmp(roots[i].kind, kind) == 0)
            return roots[i].msg;
    return NULL;
}

int kproto_is_media_type(const char *content_type)
{
    if (!content_type)
        return 0;
    const char *p = content_type + strspn(content_type, " \t");
    size_t n = strlen(KPROTO_MEDIA_TYPE);
    if (strncasecmp(p, KPROTO_MEDIA_TYPE, n) != 0)
        return 0;
    p += n;
    p += strspn(p, " \t");
    return *p == '\0' || *p == ';';
}

int kproto_known(const char *api_version, const char *kind)
{
    return api_version && kind && root_find(api_version, kind) != NULL;
}

/* ---- wire reader -------------------------------------------------------- */

enum { WT_VARINT = 0, WT_I64 = 1, WT_LEN = 2, WT_SGROUP = 3, WT_EGROUP = 4, WT_I32 = 5 };

struct rd {
    const uint8_t *p;
    size_t n;
};

struct kp_ctx {
    struct err *e;
    int max_depth;
};

#define PATH_MAX_LEN 256

static int fail(struct kp_ctx *c, const char *path, int code, const char *what)
{
    return err_set(c->e, code, "protobuf body: %s%s%s", path, *path ? ": " : "", what);
}

static int rd_varint(struct rd *r, uint64_t *v)
{
    uint64_t x = 0;
    for (unsigned i = 0; i < 10; i++) {
        if (i >= r->n)
            return -1; /* truncated */
        uint8_t b = r->p[i];
        if (i == 9 && b > 1)
            return -2; /* more than 64 bits */
        x |= (uint64_t)(b & 0x7f) << (7 * i);
        if (!(b & 0x80)) {
            r->p += i + 1;
            r->n -= i + 1;
            *v = x;
            return 0;
        }
    }
    return -2; /* 10th byte had the continuation bit */
}

/* Read one tag; on success *num, *wt set. */
static int rd_tag(struct kp_ctx *c, const char *path, struct rd *r, uint32_t *num, unsigned *wt)
{
    uint64_t t;
    int rc = rd_varint(r, &t);
    if (rc == -1)
        return fail(c, path, -EINVAL, "truncated field tag");
    if (rc < 0)
        return fail(c, path, -EINVAL, "field tag varint longer than 64 bits");
    if ((t >> 3) == 0 || (t >> 3) > 0x1fffffff)
        return fail(c, path, -EINVAL, "invalid field number");
    *num = (uint32_t)(t >> 3);
    *wt = (unsigned)(t & 7);
    if (*wt == WT_SGROUP || *wt == WT_EGROUP)
        return fail(c, path, -EINVAL, "protobuf groups are not supported");
    if (*wt > WT_I32)
        return fail(c, path, -EINVAL, "invalid wire type");
    return 0;
}

/* Read the value of a field with wire type wt: varint into *v, or bytes into *sub. */
static int rd_value(struct kp_ctx *c, const char *path, struct rd *r, unsigned wt, uint64_t *v,
                    struct rd *sub)
{
    int rc;
    switch (wt) {
    case WT_VARINT:
        rc = rd_varint(r, v);
        if (rc == -1)
            return fail(c, path, -EINVAL, "truncated varint");
        if (rc < 0)
            return fail(c, path, -EINVAL, "varint longer than 64 bits");
        return 0;
    case WT_I64:
    case WT_I32: {
        size_t k = wt == WT_I64 ? 8 : 4;
        if (r->n < k)
            return fail(c, path, -EINVAL, "truncated fixed-size value");
        r->p += k;
        r->n -= k;
        return 0;
    }
    case WT_LEN:
        rc = rd_varint(r, v);
        if (rc == -1)
            return fail(c, path, -EINVAL, "truncated length");
        if (rc < 0)
            return fail(c, path, -EINVAL, "length varint longer than 64 bits");
        if (*v > r->n)
            return fail(c, path, -EINVAL, "length runs past the end of the data (truncated body?)");
        sub->p = r->p;
        sub->n = (size_t)*v;
        r->p += sub->n;
        r->n -= sub->n;
        return 0;
    default:
        return fail(c, path, -EINVAL, "invalid wire type");
    }
}

static unsigned want_wt(enum kp_kind k)
{
    switch (k) {
    case KP_BOOL:
    case KP_INT32:
    case KP_INT64:
        return WT_VARINT;
    default:
        return WT_LEN;
    }
}

/* ---- value conversions -------------------------------------------------- */

static json_t *bytes_value(const uint8_t *p, size_t n)
{
    char *o = b64_encode(p, n);
    json_t *s = json_string(o);
    free(o);
    return s;
}

static int mk_string(struct kp_ctx *c, const char *path, const struct rd *v, json_t **out)
{
    *out = json_stringn((const char *)v->p, v->n);
    if (!*out)
        return fail(c, path, -EINVAL, "string is not valid UTF-8");
    return 0;
}

/* Parse a message of {1: string} (Quantity) or a {1: string, 2: string/bytes} map entry. */
static int parse_pair(struct kp_ctx *c, const char *path, struct rd r, struct rd *f1, struct rd *f2,
                      int *has2, unsigned want2)
{
    f1->p = (const uint8_t *)"";
    f1->n = 0;
    if (f2) {
        f2->p = (const uint8_t *)"";
        f2->n = 0;
    }
    if (has2)
        *has2 = 0;
    while (r.n > 0) {
        uint32_t num;
        unsigned wt;
        uint64_t v;
        struct rd sub = {0};
        int rc = rd_tag(c, path, &r, &num, &wt);
        if (rc)
            return rc;
        rc = rd_value(c, path, &r, wt, &v, &sub);
        if (rc)
            return rc;
        if (num == 1) {
            if (wt != WT_LEN)
                return fail(c, path, -EINVAL, "wrong wire type for field 1");
            *f1 = sub;
        } else if (num == 2 && f2) {
            if (wt != want2)
                return fail(c, path, -EINVAL, "wrong wire type for field 2");
            *f2 = sub;
            *has2 = 1;
        }
    }
    return 0;
}

static int mk_quantity(struct kp_ctx *c, const char *path, struct rd r, json_t **out)
{
    struct rd s;
    int rc = parse_pair(c, path, r, &s, NULL, NULL, 0);
    if (rc)
        return rc;
    if (s.n == 0) {
        *out = json_string("0");
        return 0;
    }
    return mk_string(c, path, &s, out);
}

static int mk_intstr(struct kp_ctx *c, const char *path, struct rd r, json_t **out)
{
    uint64_t type = 0, ival = 0;
    struct rd sval = {(const uint8_t *)"", 0};
    while (r.n > 0) {
        uint32_t num;
        unsigned wt;
        uint64_t v = 0;
        struct rd sub = {0};
        int rc = rd_tag(c, path, &r, &num, &wt);
        if (rc)
            return rc;
        rc = rd_value(c, path, &r, wt, &v, &sub);
        if (rc)
            return rc;
        if ((num == 1 || num == 2) && wt != WT_VARINT)
            return fail(c, path, -EINVAL, "wrong wire type in IntOrString");
        if (num == 3 && wt != WT_LEN)
            return fail(c, path, -EINVAL, "wrong wire type in IntOrString");
        if (num == 1)
            type = v;
        else if (num == 2)
            ival = v;
        else if (num == 3)
            sval = sub;
    }
    if (type == 1)
        return mk_string(c, path, &sval, out);
    if (type != 0)
        return fail(c, path, -EINVAL, "IntOrString type is neither 0 (int) nor 1 (string)");
    *out = json_integer((int32_t)(uint32_t)ival);
    return 0;
}

/* RFC 3339 in UTC with second precision, as metav1.Time marshals. */
static int mk_time(struct kp_ctx *c, const char *path, struct rd r, json_t **out)
{
    uint64_t secs = 0, nanos = 0;
    *out = NULL;
    while (r.n > 0) {
        uint32_t num;
        unsigned wt;
        uint64_t v = 0;
        struct rd sub = {0};
        int rc = rd_tag(c, path, &r, &num, &wt);
        if (rc)
            return rc;
        rc = rd_value(c, path, &r, wt, &v, &sub);
        if (rc)
            return rc;
        if ((num == 1 || num == 2) && wt != WT_VARINT)
            return fail(c, path, -EINVAL, "wrong wire type in Time");
        if (num == 1)
            secs = v;
        else if (num == 2)
            nanos = v;
    }
    int64_t s = (int64_t)secs;
    if (s == 0 && (int32_t)(uint32_t)nanos == 0)
        return 0; /* zero time: JSON null, omitted */
    /* 0001-01-01 .. 9999-12-31 */
    if (s < -62135596800LL || s > 253402300799LL)
        return fail(c, path, -EINVAL, "time out of range (years 1-9999)");
    time_t t = (time_t)s;
    struct tm tm;
    if (!gmtime_r(&t, &tm))
        return fail(c, path, -EINVAL, "time out of range");
    char b[80]; /* room for any int fields: no truncation warning */
    snprintf(b, sizeof(b), "%04d-%02d-%02dT%02d:%02d:%02dZ", tm.tm_year + 1900, tm.tm_mon + 1,
             tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
    *out = json_string(b);
    return 0;
}

/* ---- message decoder ---------------------------------------------------- */

static int decode_msg(struct kp_ctx *c, const struct kp_msg *m, struct rd r, json_t *obj,
                      const char *path, int depth);

static const struct kp_field *field_find(const struct kp_msg *m, uint32_t num)
{
    for (size_t i = 0; i < m->nfields; i++)
        if (m->fields[i].num == num)
            return &m->fields[i];
    return NULL;
}

static json_t *get_container(json_t *obj, const char *name, int array)
{
    json_t *x = json_object_get(obj, name);
    if (!x || (array ? !json_is_array(x) : !json_is_object(x))) {
        x = array ? json_array() : json_object();
        json_object_set_new(obj, name, x);
    }
    return x;
}

/* Set or, for an omitted zero value, remove (last occurrence wins). */
static void put(json_t *obj, const char *name, json_t *v, int zero, unsigned flags)
{
    if (zero && !(flags & KPF_KEEP)) {
        json_decref(v);
        json_object_del(obj, name);
        return;
    }
    json_object_set_new(obj, name, v);
}

static int decode_field(struct kp_ctx *c, const struct kp_field *f, unsigned wt, uint64_t v,
                        struct rd sub, json_t *obj, const char *parent, int depth)
{
    char path[PATH_MAX_LEN];
    json_t *val = NULL;
    int rc = 0;

    if (f->flags & KPF_INLINE)
        snprintf(path, sizeof(path), "%s", parent);
    else
        snprintf(path, sizeof(path), "%s%s%s", parent, *parent ? "." : "", f->json);
    if (wt != want_wt((enum kp_kind)f->kind))
        return fail(c, path, -EINVAL, "wrong wire type for this field");

    switch ((enum kp_kind)f->kind) {
    case KP_STRING:
        rc = mk_string(c, path, &sub, &val);
        if (rc == 0)
            put(obj, f->json, val, sub.n == 0, f->flags);
        return rc;
    case KP_BOOL:
        put(obj, f->json, json_boolean(v != 0), v == 0, f->flags);
        return 0;
    case KP_INT32: {
        int32_t x = (int32_t)(uint32_t)v;
        put(obj, f->json, json_integer(x), x == 0, f->flags);
        return 0;
    }
    case KP_INT64: {
        int64_t x = (int64_t)v;
        put(obj, f->json, json_integer(x), x == 0, f->flags);
        return 0;
    }
    case KP_BYTES:
        put(obj, f->json, bytes_value(sub.p, sub.n), sub.n == 0, f->flags);
        return 0;
    case KP_TIME:
        rc = mk_time(c, path, sub, &val);
        if (rc == 0)
            put(obj, f->json, val ? val : json_null(), val == NULL, f->flags);
        return rc;
    case KP_QUANTITY:
        rc = mk_quantity(c, path, sub, &val);
        if (rc == 0)
            json_object_set_new(obj, f->json, val);
        return rc;
    case KP_INTSTR:
        rc = mk_intstr(c, path, sub, &val);
        if (rc == 0)
            json_object_set_new(obj, f->json, val);
        return rc;
    case KP_STRINGS:
        rc = mk_string(c, path, &sub, &val);
        if (rc == 0)
            json_array_append_new(get_container(obj, f->json, 1), val);
        return rc;
    case KP_MSG: {
        if (depth + 1 > c->max_depth)
            return fail(c, path, -EINVAL, "messages nested too deeply");
        json_t *dst = (f->flags & KPF_INLINE) ? obj : get_container(obj, f->json, 0);
        return decode_msg(c, f->msg, sub, dst, path, depth + 1);
    }
    case KP_MSGS: {
        if (depth + 1 > c->max_depth)
            return fail(c, path, -EINVAL, "messages nested too deeply");
        json_t *arr = get_container(obj, f->json, 1);
        char ipath[PATH_MAX_LEN];
        if (snprintf(ipath, sizeof(ipath), "%s[%zu]", path, json_array_size(arr)) >=
            (int)sizeof(ipath))
            ipath[sizeof(ipath) - 2] = '~'; /* truncated path: still a useful hint */
        json_t *item = json_object();
        rc = decode_msg(c, f->msg, sub, item, ipath, depth + 1);
        if (rc == 0)
            json_array_append_new(arr, item);
        else
            json_decref(item);
        return rc;
    }
    case KP_MAP_SS:
    case KP_MAP_SB:
    case KP_MAP_SQ: {
        struct rd key, value;
        int has_value;
        rc = parse_pair(c, path, sub, &key, &value, &has_value, WT_LEN);
        if (rc)
            return rc;
        json_t *k = NULL;
        rc = mk_string(c, path, &key, &k);
        if (rc)
            return rc;
        if (f->kind == KP_MAP_SS)
            rc = mk_string(c, path, &value, &val);
        else if (f->kind == KP_MAP_SB)
            val = bytes_value(value.p, value.n);
        else
            rc = mk_quantity(c, path, value, &val);
        if (rc == 0)
            json_object_set_new(get_container(obj, f->json, 0), json_string_value(k), val);
        json_decref(k);
        return rc;
    }
    }
    return fail(c, path, -EINVAL, "internal: unknown schema kind");
}

static int decode_msg(struct kp_ctx *c, const struct kp_msg *m, struct rd r, json_t *obj,
                      const char *path, int depth)
{
    while (r.n > 0) {
        uint32_t num;
        unsigned wt;
        uint64_t v = 0;
        struct rd sub = {0};
        int rc = rd_tag(c, path, &r, &num, &wt);
        if (rc)
            return rc;
        rc = rd_value(c, path, &r, wt, &v, &sub);
        if (rc)
            return rc;
        const struct kp_field *f = field_find(m, num);
        if (!f)
            continue; /* unknown field: skipped */
        rc = decode_field(c, f, wt, v, sub, obj, path, depth);
        if (rc)
            return rc;
    }
    return 0;
}

/* ---- envelope ----------------------------------------------------------- */

struct envelope {
    struct rd api_version, kind, raw, encoding;
    int has_raw;
};

static int parse_envelope(struct kp_ctx *c, struct rd r, struct envelope *env)
{
    static const struct rd empty = {(const uint8_t *)"", 0};
    env->api_version = env->kind = env->raw = env->encoding = empty;
    env->has_raw = 0;
    while (r.n > 0) {
        uint32_t num;
        unsigned wt;
        uint64_t v = 0;
        struct rd sub = {0};
        int rc = rd_tag(c, "envelope", &r, &num, &wt);
        if (rc)
            return rc;
        rc = rd_value(c, "envelope", &r, wt, &v, &sub);
        if (rc)
            return rc;
        if (num >= 1 && num <= 3 && wt != WT_LEN)
            return fail(c, "envelope", -EINVAL, "wrong wire type in runtime.Unknown");
        if (num == 1) {
            int has_kind;
            rc = parse_pair(c, "envelope.typeMeta", sub, &env->api_version, &env->kind, &has_kind,
                            WT_LEN);
            if (rc)
                return rc;
        } else if (num == 2) {
            env->raw = sub;
            env->has_raw = 1;
        } else if (num == 3) {
            env->encoding = sub;
        }
    }
    return 0;
}

static int printable(const struct rd *s)
{
    for (size_t i = 0; i < s->n; i++)
        if (s->p[i] < 0x20 || s->p[i] > 0x7e)
            return 0;
    return 1;
}

int kproto_decode_ex(const void *buf, size_t len, const struct kproto_limits *lim, json_t **out,
                     struct err *e)
{
    static const uint8_t magic[4] = {'k', '8', 's', 0};
    struct kp_ctx c = {.e = e, .max_depth = KPROTO_MAX_DEPTH};
    size_t max_bytes = KPROTO_MAX_BYTES;
    struct envelope env;
    json_t *obj = NULL;
    char *api_version = NULL, *kind = NULL;
    int rc;

    *out = NULL;
    if (lim && lim->max_bytes)
        max_bytes = lim->max_bytes;
    if (lim && lim->max_depth > 0)
        c.max_depth = lim->max_depth;
    if (len > max_bytes)
        return err_set(e, -E2BIG, "protobuf body: %zu bytes is more than the limit of %zu", len,
                       max_bytes);
    if (len < sizeof(magic) || memcmp(buf, magic, sizeof(magic)) != 0)
        return err_set(e, -EINVAL,
                       "protobuf body: missing the \"k8s\\0\" magic prefix of a Kubernetes "
                       "protobuf message");
    rc = parse_envelope(&c, (struct rd){(const uint8_t *)buf + 4, len - 4}, &env);
    if (rc)
        goto out;
    if (!printable(&env.api_version) || !printable(&env.kind)) {
        rc = err_set(e, -EINVAL, "protobuf body: apiVersion/kind are not printable ASCII");
        goto out;
    }
    api_version = xstrndup((const char *)env.api_version.p, env.api_version.n);
    kind = xstrndup((const char *)env.kind.p, env.kind.n);
    if (!*kind) {
        rc = err_set(e, -EINVAL, "protobuf body: the envelope has no kind");
        goto out;
    }
    if (env.encoding.n > 0) {
        rc = err_set(e, -ENOTSUP, "protobuf body: content encoding %.*s is not supported",
                     (int)(env.encoding.n > 32 ? 32 : env.encoding.n),
                     printable(&env.encoding) ? (const char *)env.encoding.p : "(binary)");
        goto out;
    }
    if (!env.has_raw) {
        rc = err_set(e, -EINVAL, "protobuf body: the envelope of %s has no object (raw)", kind);
        goto out;
    }
    const struct kp_msg *m = root_find(api_version, kind);
    if (!m) {
        rc = err_set(e, -ENOTSUP,
                     "protobuf body: %s %s is not supported in protobuf by this server; send it "
                     "as application/json",
                     *api_version ? api_version : "(no apiVersion)", kind);
        goto out;
    }
    obj = json_object();
    json_object_set_new(obj, "apiVersion", json_string(api_version));
    json_object_set_new(obj, "kind", json_string(kind));
    rc = decode_msg(&c, m, env.raw, obj, "", 0);
    if (rc) {
        err_prefix(e, "%s %s", api_version, kind);
        goto out;
    }
    /* the envelope's type wins over anything in raw */
    json_object_set_new(obj, "apiVersion", json_string(api_version));
    json_object_set_new(obj, "kind", json_string(kind));
    *out = obj;
    obj = NULL;
out:
    json_decref(obj);
    free(api_version);
    free(kind);
    return rc;
}

int kproto_decode(const void *buf, size_t len, json_t **out, struct err *e)
{
    return kproto_decode_ex(buf, len, NULL, out, e);
}

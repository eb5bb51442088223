/* fields: known fields of built-in kinds and CRD schemas; unknown-field pruning. */
#include "devhub/fields.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "pkg/util/buf.h"
#include "pkg/util/xalloc.h"

/*
 * One line per Go type: its JSON field names separated by blanks. A field
 * written `name:Type` is an object of that type, `name[]:Type` a list of
 * them; a bare name is a scalar, a free map or an opaque type (not looked into).
 */
struct ftype {
    const char *name;
    const char *fields;
};

static const struct ftype types[] = {
    {"ObjectMeta",
     "name generateName namespace selfLink uid resourceVersion generation creationTimestamp "
     "deletionTimestamp deletionGracePeriodSeconds labels annotations "
     "ownerReferences[]:OwnerReference finalizers managedFields[]:ManagedFieldsEntry"},
    {"OwnerReference", "apiVersion kind name uid controller blockOwnerDeletion"},
    {"ManagedFieldsEntry", "manager operation apiVersion time fieldsType fieldsV1 subresource"},
    {"LabelSelector", "matchLabels matchExpressions[]:LabelSelectorRequirement"},
    {"LabelSelectorRequirement", "key operator values"},
    /* batch/v1 */
    {"batch/Job", "apiVersion kind metadata:ObjectMeta spec:JobSpec status:JobStatus"},
    {"JobSpec",
     "parallelism completions activeDeadlineSeconds podFailurePolicy:PodFailurePolicy "
     "successPolicy:SuccessPolicy backoffLimit backoffLimitPerIndex maxFailedIndexes "
     "selector:LabelSelector manualSelector template:PodTemplateSpec ttlSecondsAfterFinished "
     "completionMode suspend podReplacementPolicy managedBy"},
    {"PodFailurePolicy", "rules[]:PodFailurePolicyRule"},
    {"PodFailurePolicyRule",
     "action onExitCodes:PodFailurePolicyOnExitCodes onPodConditions[]:PodFailurePolicyOnPodCond"},
    {"PodFailurePolicyOnExitCodes", "containerName operator values"},
    {"PodFailurePolicyOnPodCond", "type status"},
    {"SuccessPolicy", "rules[]:SuccessPolicyRule"},
    {"SuccessPolicyRule", "succeededIndexes succeededCount"},
    {"JobStatus",
     "conditions[]:Condition startTime completionTime active succeeded failed terminating "
     "completedIndexes failedIndexes uncountedTerminatedPods:UncountedTerminatedPods ready"},
    {"Condition", "type status lastProbeTime lastHeartbeatTime lastTransitionTime reason message "
                  "observedGeneration"},
    {"UncountedTerminatedPods", "succeeded failed"},
    /* core/v1 pods */
    {"PodTemplateSpec", "metadata:ObjectMeta spec:PodSpec"},
    {"/Pod", "apiVersion kind metadata:ObjectMeta spec:PodSpec status"},
    {"PodSpec",
     "volumes[]:Volume initContainers[]:Container containers[]:Container "
     "ephemeralContainers[]:Container restartPolicy terminationGracePeriodSeconds "
     "activeDeadlineSeconds dnsPolicy nodeSelector serviceAccountName serviceAccount "
     "automountServiceAccountToken nodeName hostNetwork hostPID hostIPC shareProcessNamespace "
     "securityContext imagePullSecrets[]:LocalObjectReference hostname subdomain affinity "
     "schedulerName tolerations[]:Toleration hostAliases[]:HostAlias priorityClassName priority "
     "dnsConfig readinessGates[]:PodReadinessGate runtimeClassName enableServiceLinks "
     "preemptionPolicy overhead topologySpreadConstraints setHostnameAsFQDN os:PodOS hostUsers "
     "schedulingGates[]:PodSchedulingGate resourceClaims[]:PodResourceClaim "
     "resources:ResourceRequirements hostnameOverride"},
    {"Container",
     "name image command args workingDir ports[]:ContainerPort envFrom[]:EnvFromSource "
     "env[]:EnvVar resources:ResourceRequirements resizePolicy[]:ContainerResizePolicy "
     "restartPolicy restartPolicyRules volumeMounts[]:VolumeMount volumeDevices[]:VolumeDevice "
     "livenessProbe readinessProbe startupProbe lifecycle terminationMessagePath "
     "terminationMessagePolicy imagePullPolicy securityContext stdin stdinOnce tty "
     "targetContainerName"},
    {"ContainerPort", "name hostPort containerPort protocol hostIP"},
    {"EnvVar", "name value valueFrom:EnvVarSource"},
    {"EnvVarSource", "fieldRef:ObjectFieldSelector resourceFieldRef:ResourceFieldSelector "
                     "configMapKeyRef:KeySelector secretKeyRef:KeySelector fileKeyRef"},
    {"ObjectFieldSelector", "apiVersion fieldPath"},
    {"ResourceFieldSelector", "containerName resource divisor"},
    {"KeySelector", "name key optional"},
    {"EnvFromSource", "prefix configMapRef:OptionalRef secretRef:OptionalRef"},
    {"OptionalRef", "name optional"},
    {"LocalObjectReference", "name"},
    {"ResourceRequirements", "limits requests claims[]:ResourceClaim"},
    {"ResourceClaim", "name request"},
    {"ContainerResizePolicy", "resourceName restartPolicy"},
    {"VolumeMount", "name readOnly recursiveReadOnly mountPath subPath mountPropagation "
                    "subPathExpr"},
    {"VolumeDevice", "name devicePath"},
    {"Volume",
     "name hostPath emptyDir gcePersistentDisk awsElasticBlockStore gitRepo secret nfs iscsi "
     "glusterfs persistentVolumeClaim rbd flexVolume cinder cephfs flocker downwardAPI fc "
     "azureFile configMap vsphereVolume quobyte azureDisk photonPersistentDisk projected "
     "portworxVolume scaleIO storageos csi ephemeral image"},
    {"Toleration", "key operator value effect tolerationSeconds"},
    {"HostAlias", "ip hostnames"},
    {"PodReadinessGate", "conditionType"},
    {"PodOS", "name"},
    {"PodSchedulingGate", "name"},
    {"PodResourceClaim", "name resourceClaimName resourceClaimTemplateName"},
    /* other kinds */
    {"/Namespace", "apiVersion kind metadata:ObjectMeta spec status"},
    {"/ConfigMap", "apiVersion kind metadata:ObjectMeta immutable data binaryData"},
    {"/Secret", "apiVersion kind metadata:ObjectMeta immutable data stringData type"},
    {"apps/Deployment", "apiVersion kind metadata:ObjectMeta spec:DeploymentSpec status"},
    {"DeploymentSpec", "replicas selector:LabelSelector template:PodTemplateSpec strategy "
                       "minReadySeconds revisionHistoryLimit paused progressDeadlineSeconds"},
    {"/Node", "apiVersion kind metadata:ObjectMeta spec:NodeSpec status"},
    {"NodeSpec", "podCIDR podCIDRs providerID unschedulable taints[]:Taint configSource "
                 "externalID"},
    {"Taint", "key value effect timeAdded"},
    {"coordination.k8s.io/Lease", "apiVersion kind metadata:ObjectMeta spec:LeaseSpec"},
    {"LeaseSpec", "holderIdentity leaseDurationSeconds acquireTime renewTime leaseTransitions "
                  "strategy preferredHolder"},
    {"/Event",
     "apiVersion kind metadata:ObjectMeta involvedObject:ObjectReference reason message source "
     "firstTimestamp lastTimestamp count type eventTime series action related:ObjectReference "
     "reportingComponent reportingInstance"},
    {"events.k8s.io/Event",
     "apiVersion kind metadata:ObjectMeta eventTime series reportingController "
     "reportingInstance action reason regarding:ObjectReference related:ObjectReference note "
     "type deprecatedSource deprecatedFirstTimestamp deprecatedLastTimestamp deprecatedCount"},
    {"ObjectReference", "kind namespace name uid apiVersion resourceVersion fieldPath"},
};

static const struct ftype *find_type(const char *name)
{
    for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++)
        if (!strcmp(types[i].name, name))
            return &types[i];
    return NULL;
}

/*
 * Look `field` up in t. Returns false when unknown; else *sub receives the
 * nested type name (or "" for an opaque field) in subbuf, *list whether it
 * is a list of them.
 */
static bool lookup(const struct ftype *t, const char *field, char *sub, size_t nsub, bool *list)
{
    size_t flen = strlen(field);
    const char *p = t->fields;
    while (*p) {
        while (*p == ' ')
            p++;
        const char *end = p;
        while (*end && *end != ' ')
            end++;
        const char *nend = p;
        while (nend < end && *nend != ':' && *nend != '[')
            nend++;
        if ((size_t)(nend - p) == flen && !strncmp(p, field, flen)) {
            *list = nend < end && *nend == '[';
            const char *colon = memchr(nend, ':', (size_t)(end - nend));
            size_t n = colon ? (size_t)(end - colon - 1) : 0;
            if (n >= nsub)
                n = nsub - 1;
            if (colon)
                memcpy(sub, colon + 1, n);
            sub[n] = '\0';
            return true;
        }
        p = end;
    }
    return false;
}

static void path_join(struct buf *b, const char *base, const char *field)
{
    buf_reset(b);
    if (*base)
        buf_printf(b, "%s.%s", base, field);
    else
        buf_puts(b, field);
}

static size_t prune_type(const struct ftype *t, json_t *obj, const char *path, json_t *paths);

static size_t prune_value(const char *tname, bool list, json_t *v, const char *path, json_t *paths)
{
    const struct ftype *t = find_type(tname);
    if (!t)
        return 0;
    if (!list)
        return json_is_object(v) ? prune_type(t, v, path, paths) : 0;
    if (!json_is_array(v))
        return 0;
    size_t n = 0, i;
    json_t *it;
    json_array_foreach(v, i, it)
    {
        if (!json_is_object(it))
            continue;
        char *p = xasprintf("%s[%zu]", path, i);
        n += prune_type(t, it, p, paths);
        free(p);
    }
    return n;
}

static size_t prune_type(const struct ftype *t, json_t *obj, const char *path, json_t *paths)
{
    size_t n = 0;
    const char *k;
    json_t *v;
    void *tmp;
    struct buf p;
    buf_init(&p, 1 << 16);
    json_object_foreach_safe(obj, tmp, k, v)
    {
        char sub[64];
        bool list = false;
        path_join(&p, path, k);
        if (!lookup(t, k, sub, sizeof(sub), &list)) {
            json_array_append_new(paths, json_string(buf_str(&p)));
            json_object_del(obj, k);
            n++;
            continue;
        }
        if (*sub)
            n += prune_value(sub, list, v, buf_str(&p), paths);
    }
    buf_free(&p);
    return n;
}

static const struct ftype *builtin_type(const char *group, const char *kind)
{
    char name[128];
    snprintf(name, sizeof(name), "%s/%s", group ? group : "", kind ? kind : "");
    return find_type(name);
}

bool fields_known_builtin(const char *group, const char *kind)
{
    return builtin_type(group, kind) != NULL;
}

size_t fields_prune_builtin(const char *group, const char *kind, json_t *obj, json_t *paths)
{
    const struct ftype *t = builtin_type(group, kind);
    if (!t || !json_is_object(obj))
        return 0;
    return prune_type(t, obj, "", paths);
}

static bool sch_true(const json_t *s, const char *k)
{
    return json_is_true(json_object_get(s, k));
}

static size_t prune_schema(const json_t *s, json_t *v, const char *path, json_t *paths);

/* root: apiVersion, kind and metadata are known at the top of any custom resource. */
static size_t prune_schema_object(const json_t *s, json_t *obj, const char *path, json_t *paths,
                                  bool root)
{
    const json_t *props = json_object_get(s, "properties");
    const json_t *addl = json_object_get(s, "additionalProperties");
    bool preserve = sch_true(s, "x-kubernetes-preserve-unknown-fields");
    bool embedded = sch_true(s, "x-kubernetes-embedded-resource");
    size_t n = 0;
    const char *k;
    json_t *v;
    void *tmp;
    struct buf p;
    buf_init(&p, 1 << 16);
    json_object_foreach_safe(obj, tmp, k, v)
    {
        path_join(&p, path, k);
        const json_t *ps = json_object_get(props, k);
        if (root && (!strcmp(k, "apiVersion") || !strcmp(k, "kind") || !strcmp(k, "metadata"))) {
            continue;
        } else if (ps) {
            n += prune_schema(ps, v, buf_str(&p), paths);
        } else if (embedded && (!strcmp(k, "apiVersion") || !strcmp(k, "kind"))) {
            continue;
        } else if (embedded && !strcmp(k, "metadata")) {
            if (json_is_object(v))
                n += prune_type(find_type("ObjectMeta"), v, buf_str(&p), paths);
        } else if (json_is_object(addl)) {
            n += prune_schema(addl, v, buf_str(&p), paths);
        } else if (json_is_true(addl) || preserve) {
            continue;
        } else {
            json_array_append_new(paths, json_string(buf_str(&p)));
            json_object_del(obj, k);
            n++;
        }
    }
    buf_free(&p);
    return n;
}

static size_t prune_schema(const json_t *s, json_t *v, const char *path, json_t *paths)
{
    if (!json_is_object(s))
        return 0;
    if (json_is_object(v))
        return prune_schema_object(s, v, path, paths, false);
    const json_t *items = json_object_get(s, "items");
    if (!json_is_array(v) || !json_is_object(items))
        return 0;
    size_t n = 0, i;
    json_t *it;
    json_array_foreach(v, i, it)
    {
        char *p = xasprintf("%s[%zu]", path, i);
        n += prune_schema(items, it, p, paths);
        free(p);
    }
    return n;
}

size_t fields_prune_schema(const json_t *schema, json_t *obj, json_t *paths)
{
    if (!json_is_object(obj))
        return 0;
    size_t n = 0;
    json_t *md = json_object_get(obj, "metadata");
    if (json_is_object(md))
        n += prune_type(find_type("ObjectMeta"), md, "metadata", paths);
    if (json_is_object(schema))
        n += prune_schema_object(schema, obj, "", paths, true);
    return n;
}

int fields_mode_parse(const char *q, enum fields_mode *out)
{
    if (!q || !*q || !strcmp(q, "Warn"))
        *out = FIELDS_WARN;
    else if (!strcmp(q, "Strict"))
        *out = FIELDS_STRICT;
    else if (!strcmp(q, "Ignore"))
        *out = FIELDS_IGNORE;
    else
        return -EINVAL;
    return 0;
}

char *fields_strict_message(const json_t *paths)
{
    struct buf b;
    buf_init(&b, 1 << 20);
    buf_puts(&b, "strict decoding error: ");
    size_t i;
    json_t *p;
    json_array_foreach(paths, i, p)
        buf_printf(&b, "%sunknown field \"%s\"", i ? ", " : "", json_string_value(p));
    char *s = buf_detach(&b);
    buf_free(&b);
    return s ? s : xstrdup("strict decoding error: ");
}

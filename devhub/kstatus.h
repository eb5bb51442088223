/*
 * kstatus: Kubernetes `Status` bodies (kind Status, apiVersion v1, metadata {},
 * status Failure, message, reason, details, code) exactly as kube-apiserver
 * writes them, plus the standard messages for the common errors.
 */
#ifndef KKS_DEVHUB_KSTATUS_H
#define KKS_DEVHUB_KSTATUS_H

#include <jansson.h>

/* A Failure Status. details is consumed (NULL: no details field). New reference. */
json_t *kstatus_new(int code, const char *reason, const char *message, json_t *details);
/* {name, group, kind} details (empty strings are omitted, like the apiserver). New reference. */
json_t *kstatus_details(const char *name, const char *group, const char *kind);

/* "jobs.batch" / "pods": the qualified resource used in messages. Caller frees. */
char *kstatus_qualified(const char *resource, const char *group);

/* 404 `<res> "<name>" not found`. */
json_t *kstatus_not_found(const char *resource, const char *group, const char *kind,
                          const char *name);
/* 409 AlreadyExists `<res> "<name>" already exists`. */
json_t *kstatus_already_exists(const char *resource, const char *group, const char *kind,
                               const char *name);
/* 409 Conflict: "Operation cannot be fulfilled on <res> \"<name>\": <why>". */
json_t *kstatus_conflict(const char *resource, const char *group, const char *kind,
                         const char *name, const char *why);
/* 410 Expired with the given message. */
json_t *kstatus_expired(const char *message);

#endif

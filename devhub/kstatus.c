#include "devhub/kstatus.h"

#include "pkg/util/xalloc.h"

#include <stdlib.h>

json_t *kstatus_new(int code, const char *reason, const char *message, json_t *details)
{
    json_t *st = json_object();
    json_object_set_new(st, "kind", json_string("Status"));
    json_object_set_new(st, "apiVersion", json_string("v1"));
    json_object_set_new(st, "metadata", json_object());
    json_object_set_new(st, "status", json_string("Failure"));
    json_object_set_new(st, "message", json_string(message ? message : ""));
    if (reason && *reason)
        json_object_set_new(st, "reason", json_string(reason));
    if (details)
        json_object_set_new(st, "details", details);
    json_object_set_new(st, "code", json_integer(code));
    return st;
}

json_t *kstatus_details(const char *name, const char *group, const char *kind)
{
    json_t *d = json_object();
    if (name && *name)
        json_object_set_new(d, "name", json_string(name));
    if (group && *group)
        json_object_set_new(d, "group", json_string(group));
    if (kind && *kind)
        json_object_set_new(d, "kind", json_string(kind));
    return d;
}

char *kstatus_qualified(const char *resource, const char *group)
{
    if (group && *group)
        return xasprintf("%s.%s", resource, group);
    return xstrdup(resource);
}

static json_t *named(int code, const char *reason, const char *resource, const char *group,
                     const char *kind, const char *name, const char *suffix)
{
    char *q = kstatus_qualified(resource, group);
    char *msg = xasprintf("%s \"%s\" %s", q, name, suffix);
    json_t *st = kstatus_new(code, reason, msg, kstatus_details(name, group, resource));
    (void)kind;
    free(q);
    free(msg);
    return st;
}

json_t *kstatus_not_found(const char *resource, const char *group, const char *kind,
                          const char *name)
{
    return named(404, "NotFound", resource, group, kind, name, "not found");
}

json_t *kstatus_already_exists(const char *resource, const char *group, const char *kind,
                               const char *name)
{
    return named(409, "AlreadyExists", resource, group, kind, name, "already exists");
}

json_t *kstatus_conflict(const char *resource, const char *group, const char *kind,
                         const char *name, const char *why)
{
    char *q = kstatus_qualified(resource, group);
    char *msg = xasprintf("Operation cannot be fulfilled on %s \"%s\": %s", q, name, why);
    json_t *st = kstatus_new(409, "Conflict", msg, kstatus_details(name, group, resource));
    (void)kind;
    free(q);
    free(msg);
    return st;
}

json_t *kstatus_expired(const char *message)
{
    return kstatus_new(410, "Expired", message, NULL);
}

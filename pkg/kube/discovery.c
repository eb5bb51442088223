#include "pkg/kube/discovery.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pkg/util/rng.h"
#include "pkg/util/xalloc.h"

int disc_kueue_version(const json_t *group_doc, const char **version, struct err *e)
{
    bool b1 = false, b2 = false;
    size_t i;
    const json_t *v;
    json_array_foreach(json_object_get(group_doc, "versions"), i, v)
    {
        const char *s = json_string_value(json_object_get(v, "version"));
        b2 = b2 || (s && strcmp(s, "v1beta2") == 0);
        b1 = b1 || (s && strcmp(s, "v1beta1") == 0);
    }
    if (!b1 && !b2)
        return err_set(e, -ENOTSUP,
                       "Kueue API (" DISC_KUEUE_GROUP ") serves neither v1beta2 nor v1beta1");
    *version = b2 ? "v1beta2" : "v1beta1";
    return 0;
}

bool disc_definitive(int rc)
{
    return rc == 0 || rc == -ENOENT;
}

struct disc {
    struct disc_opts o;
    char *path;
    struct ev_loop *loop;
    struct kube_call *call;
    ev_timer retry;
    double delay;
    struct rng rng;
    struct err last;
};

static void attempt(struct disc *d);

static void retry_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    (void)loop;
    (void)revents;
    attempt(w->data);
}

/* A transient failure: schedule the next attempt, then report (the report
 * is the last thing done: the callback may free d). */
static void transient(struct disc *d)
{
    double max = d->o.backoff_max_s > 0 ? d->o.backoff_max_s : 30.0;
    double base = d->delay;
    d->delay = base * 2 > max ? max : base * 2;
    /* jitter in [base/2, base]: restarted replicas do not retry in step */
    double delay = base * (0.5 + 0.5 * rng_double(&d->rng));
    ev_timer_set(&d->retry, delay, 0);
    ev_timer_start(d->loop, &d->retry);
    if (d->o.on_retry)
        d->o.on_retry(d->o.ud, &d->last, delay);
}

static void get_done(void *ud, const struct kube_result *r)
{
    struct disc *d = ud;
    d->call = NULL;
    if (r->rc == -ECANCELED || r->rc == -ESHUTDOWN)
        return; /* the client is going away */
    if (r->rc == 0) {
        err_clear(&d->last);
        if (d->o.accept && d->o.accept(d->o.ud, r->body, &d->last) < 0) {
            transient(d);
            return;
        }
        d->o.done(d->o.ud, 0, r->body);
        return;
    }
    d->last = *r->err;
    if (r->rc == -ENOENT && !d->o.retry_not_found) {
        d->o.done(d->o.ud, -ENOENT, NULL);
        return;
    }
    transient(d);
}

static void attempt(struct disc *d)
{
    struct kube_request req = {.method = "GET", .path = d->path};
    struct err e = {0};
    if (kube_client_do(d->o.client, &req, get_done, d, &d->call, &e) < 0) {
        d->call = NULL;
        d->last = e;
        transient(d);
    }
}

int disc_start(const struct disc_opts *o, struct disc **out, struct err *e)
{
    *out = NULL;
    if (!o || !o->client || !o->path || !o->done)
        return err_set(e, -EINVAL, "discovery: client, path and done are required");
    struct disc *d = xcalloc(1, sizeof *d);
    d->o = *o;
    d->path = xstrdup(o->path);
    d->o.path = d->path;
    d->loop = kube_client_loop(o->client);
    d->delay = o->backoff_s > 0 ? o->backoff_s : 1.0;
    rng_seed_entropy(&d->rng, d);
    ev_timer_init(&d->retry, retry_cb, 0, 0);
    d->retry.data = d;
    *out = d;
    attempt(d);
    return 0;
}

void disc_free(struct disc *d)
{
    if (!d)
        return;
    ev_timer_stop(d->loop, &d->retry);
    if (d->call)
        kube_call_cancel(d->call);
    free(d->path);
    free(d);
}

const char *disc_last_error(const struct disc *d)
{
    return d ? d->last.msg : "";
}

/* cache: see cache.h. */
#include "pkg/kube/cache.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pkg/util/strmap.h"
#include "pkg/util/xalloc.h"

struct shared;

struct cache_reg {
    struct shared *sh;
    struct informer_handlers h;
    bool released; /* released while the shared informer was dispatching */
    bool started;  /* cache_start() without a cache_stop() since */
};

/* An index registered through the cache (to tell a second registration of the same index
 * from a clash). */
struct shared_index {
    char *name;
    store_index_fn fn;
    void *ud;
};

/* One shared informer and its registrations. */
struct shared {
    struct kcache *c;
    char *key;
    struct informer *inf;
    struct cache_reg **regs;
    size_t n, cap;
    int dispatching; /* depth of fan-out calls: releases only mark meanwhile */
    bool doomed;     /* the last registration went during a fan-out: free after it */
    struct shared_index *idx;
    size_t n_idx;
    /* what the live registrations' on_add read of a listed object (the union of their
     * listed_view, borrowed strings; NULL: whole objects), the fan-out handler's view */
    const char **view;
};

struct kcache {
    struct kube_client *client;
    struct strmap by_key; /* key -> struct shared * */
    size_t users;
};

struct kcache *cache_new(struct kube_client *client)
{
    struct kcache *c = xcalloc(1, sizeof(*c));
    c->client = client;
    strmap_init(&c->by_key);
    return c;
}

static void shared_free(struct shared *sh)
{
    informer_free(sh->inf);
    for (size_t i = 0; i < sh->n; i++)
        free(sh->regs[i]);
    for (size_t i = 0; i < sh->n_idx; i++)
        free(sh->idx[i].name);
    free(sh->idx);
    free(sh->view);
    free(sh->regs);
    free(sh->key);
    free(sh);
}

static void shared_free_cb(void *p)
{
    shared_free(p);
}

void cache_free(struct kcache *c)
{
    if (!c)
        return;
    strmap_free(&c->by_key, shared_free_cb);
    free(c);
}

/* The fan-out handler's listed view: the union of the live registrations' with an on_add
 * (informer.h, listed_view), NULL when one of them reads whole objects. The informer takes
 * a list's view at its commit, so the previous array may go now. */
static void shared_set_view(struct shared *sh)
{
    const char *const **views = xcalloc(sh->n + 1, sizeof(*views));
    size_t n = 0;
    for (size_t i = 0; i < sh->n; i++)
        if (!sh->regs[i]->released && sh->regs[i]->h.on_add)
            views[n++] = sh->regs[i]->h.listed_view;
    const char **u = informer_view_union(views, n);
    free(views);
    informer_set_listed_view(sh->inf, sh, u);
    free(sh->view);
    sh->view = u;
}

/* Drop the registrations released during a fan-out; free a shared informer
 * left without users. */
static void shared_compact(struct shared *sh)
{
    size_t k = 0;
    for (size_t i = 0; i < sh->n; i++) {
        if (sh->regs[i]->released)
            free(sh->regs[i]);
        else
            sh->regs[k++] = sh->regs[i];
    }
    bool gone = k < sh->n;
    sh->n = k;
    if (sh->doomed && sh->n == 0) {
        strmap_del(&sh->c->by_key, sh->key);
        shared_free(sh);
    } else if (gone)
        shared_set_view(sh);
}

/* Fan-out: each live registration, in order. Registrations added by a
 * handler meanwhile get this event only through their own replay. */
#define FAN_OUT(sh, call)                                                                          \
    do {                                                                                           \
        (sh)->dispatching++;                                                                       \
        size_t n_ = (sh)->n;                                                                       \
        for (size_t i_ = 0; i_ < n_; i_++) {                                                       \
            struct cache_reg *r_ = (sh)->regs[i_];                                                 \
            if (!r_->released)                                                                     \
                call;                                                                              \
        }                                                                                          \
        if (--(sh)->dispatching == 0)                                                              \
            shared_compact(sh);                                                                    \
    } while (0)

static void on_add(void *ud, json_t *obj)
{
    struct shared *sh = ud;
    FAN_OUT(sh, if (r_->h.on_add) r_->h.on_add(r_->h.ud, obj));
}

static void on_update(void *ud, json_t *o, json_t *n)
{
    struct shared *sh = ud;
    FAN_OUT(sh, if (r_->h.on_update) r_->h.on_update(r_->h.ud, o, n));
}

static void on_delete(void *ud, json_t *obj)
{
    struct shared *sh = ud;
    FAN_OUT(sh, if (r_->h.on_delete) r_->h.on_delete(r_->h.ud, obj));
}

static char *key_of(const struct informer_opts *io)
{
    /* the projection's identity is its function and argument */
    return xasprintf("%s/%s/%s|%s|%s|%s|%p|%p", io->group ? io->group : "", io->version,
                     io->resource, io->ns ? io->ns : "",
                     io->label_selector ? io->label_selector : "",
                     io->field_selector ? io->field_selector : "", (void *)(uintptr_t)io->project,
                     io->project_ud);
}

struct replay {
    struct cache_reg *reg;
};

static int replay_one(const char *key, json_t *obj, void *ud)
{
    (void)key;
    struct cache_reg *reg = ud;
    if (!reg->released && reg->h.on_add)
        reg->h.on_add(reg->h.ud, obj);
    return 0;
}

int cache_acquire(struct kcache *c, const struct informer_opts *io,
                  const struct informer_handlers *h, struct cache_reg **out, struct err *e)
{
    *out = NULL;
    if (!io->version || !io->resource)
        return err_set(e, -EINVAL, "cache: version and resource are required");
    char *key = key_of(io);
    struct shared *sh = strmap_get(&c->by_key, key);
    if (!sh) {
        struct informer_opts o = *io;
        o.client = c->client;
        struct informer *inf = NULL;
        int rc = informer_new(&o, &inf, e);
        if (rc < 0) {
            free(key);
            return rc;
        }
        sh = xcalloc(1, sizeof(*sh));
        sh->c = c;
        sh->key = key;
        sh->inf = inf;
        struct informer_handlers fan = {on_add, on_update, on_delete, sh};
        informer_add_handlers(inf, &fan);
        strmap_put(&c->by_key, key, sh);
    } else {
        free(key);
        sh->doomed = false;
    }
    struct cache_reg *reg = xcalloc(1, sizeof(*reg));
    reg->sh = sh;
    if (h)
        reg->h = *h;
    if (sh->n == sh->cap) {
        sh->cap = sh->cap ? sh->cap * 2 : 4;
        sh->regs = xrealloc(sh->regs, sh->cap * sizeof(*sh->regs));
    }
    sh->regs[sh->n++] = reg;
    c->users++;
    shared_set_view(sh);
    /* A late joiner sees what the others already have. */
    if (store_len(informer_store(sh->inf)) > 0) {
        sh->dispatching++;
        store_foreach(informer_store(sh->inf), replay_one, reg);
        if (--sh->dispatching == 0)
            shared_compact(sh);
    }
    *out = reg;
    return 0;
}

int cache_start(struct cache_reg *reg, struct err *e)
{
    int rc = informer_start(reg->sh->inf, e);
    if (rc == -EALREADY)
        rc = 0;
    if (rc == 0)
        reg->started = true;
    return rc;
}

/* Stop the informer when no live registration wants it running. */
static void stop_unwanted(struct shared *sh)
{
    for (size_t i = 0; i < sh->n; i++)
        if (!sh->regs[i]->released && sh->regs[i]->started)
            return;
    informer_stop(sh->inf);
}

void cache_stop(struct cache_reg *reg)
{
    if (!reg || reg->released || !reg->started)
        return;
    reg->started = false;
    stop_unwanted(reg->sh);
}

void cache_release(struct cache_reg *reg)
{
    if (!reg || reg->released)
        return;
    struct shared *sh = reg->sh;
    sh->c->users--;
    reg->released = true;
    size_t live = 0;
    for (size_t i = 0; i < sh->n; i++)
        live += !sh->regs[i]->released;
    if (live == 0) {
        informer_stop(sh->inf);
        sh->doomed = true;
    } else if (reg->started) {
        stop_unwanted(sh);
    }
    if (sh->dispatching == 0)
        shared_compact(sh);
}

int cache_add_index(struct cache_reg *reg, const char *name, store_index_fn fn, void *ud,
                    struct err *e)
{
    struct shared *sh = reg->sh;
    for (size_t i = 0; i < sh->n_idx; i++) {
        if (strcmp(sh->idx[i].name, name) != 0)
            continue;
        if (sh->idx[i].fn == fn && sh->idx[i].ud == ud)
            return 0;
        return err_set(e, -EEXIST,
                       "cache: index %s of %s is registered with another function by another user",
                       name, informer_path(sh->inf));
    }
    int rc = informer_add_index(sh->inf, name, fn, ud, e);
    if (rc < 0)
        return rc;
    sh->idx = xrealloc(sh->idx, (sh->n_idx + 1) * sizeof(*sh->idx));
    sh->idx[sh->n_idx++] = (struct shared_index){.name = xstrdup(name), .fn = fn, .ud = ud};
    return 0;
}

struct informer *cache_informer(const struct cache_reg *reg)
{
    return reg->sh->inf;
}

size_t cache_informers(const struct kcache *c)
{
    return strmap_len(&c->by_key);
}

size_t cache_users(const struct kcache *c)
{
    return c->users;
}

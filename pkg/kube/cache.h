/*
 * cache: one shared informer per (resource, namespace, selectors,
 * projection) of one cluster's client, for every user in the process
 * (controller-runtime's shared informer factory): the workload and the quota
 * controller watching ResourceFlavors and ClusterMetrics share one list, one
 * watch and one store.
 *
 * A user acquires a registration with its handlers; the cache creates the
 * informer on the first acquire and fans each event out to the registered
 * handlers (registration order). A user that joins an informer already
 * holding objects receives an add for each of them at once (as client-go
 * does). cache_start() starts the informer when it is not running yet (the
 * first caller's tuning options were used to create it: later acquirers share
 * them); starts are counted per registration too: cache_stop() stops the
 * informer only when no other live registration has started it (its store is
 * kept, a later start lists again). Releasing the last registration stops and
 * frees the informer: handlers are reference-counted.
 *
 * Users of one informer share its store and its indexes: cache_add_index()
 * registers an index once; a second user registering the same name with the
 * same function and argument shares it, another function under that name is
 * refused (name indexes after their user).
 *
 * A registration's handlers may say what their on_add reads of a listed object
 * (informer_handlers.listed_view): when every live registration with an on_add says so, a
 * packed informer's listed ADD events carry a view of the union (the others' paths too).
 * The view of a list is taken at its commit: a registration acquired by a handler during
 * that commit gets its replay whole and the commit's remaining ADDs as views of the union
 * before it joined (no handler acquires today).
 *
 * The projection is part of the key: users with different projections get
 * different informers, so users that want to share agree on one (NULL =
 * whole objects).
 *
 * Everything runs on the client's loop; not thread-safe. A handler may
 * acquire or release registrations (a release during an event takes effect
 * for the events after it).
 */
#ifndef KKS_KUBE_CACHE_H
#define KKS_KUBE_CACHE_H

#include <stdbool.h>
#include <stddef.h>

#include "pkg/kube/informer.h"
#include "pkg/util/err.h"

struct kcache;
struct cache_reg;

/* A cache over `client` (borrowed: free the cache first). Never NULL. */
struct kcache *cache_new(struct kube_client *client);
/* Free the cache. Every registration must have been released. NULL is fine. */
void cache_free(struct kcache *c);

/*
 * Register `h` (copied) on the shared informer for `io`'s resource,
 * namespace, selectors and projection; io->client is ignored (the cache's
 * client is used), the rest of io only matters when this creates the
 * informer. 0, or a negative errno from informer_new() with `e` set.
 */
int cache_acquire(struct kcache *c, const struct informer_opts *io,
                  const struct informer_handlers *h, struct cache_reg **out, struct err *e);
/* Start the shared informer unless it runs. 0, or a negative errno. */
int cache_start(struct cache_reg *reg, struct err *e);
/* This user no longer needs the informer running: it stops when no other live
 * registration has started it. The registration keeps its handlers (events
 * go on while another user runs the informer). NULL is fine. */
void cache_stop(struct cache_reg *reg);
/* Drop the registration (its handlers get no more events); the last one
 * stops and frees the informer (so does the last started one leaving, as
 * cache_stop()). NULL is fine. */
void cache_release(struct cache_reg *reg);
/* Register a store index on the shared informer (see informer_add_index); 0
 * also when this user or another registered the same name, function and
 * argument; -EEXIST with a message when the name has another function. The
 * index lives as long as the informer. */
int cache_add_index(struct cache_reg *reg, const char *name, store_index_fn fn, void *ud,
                    struct err *e);
/* The shared informer (borrowed; read its store, has_synced, stats; do not
 * stop or free it). */
struct informer *cache_informer(const struct cache_reg *reg);
/* Number of shared informers and of registrations (for tests and metrics). */
size_t cache_informers(const struct kcache *c);
size_t cache_users(const struct kcache *c);

#endif

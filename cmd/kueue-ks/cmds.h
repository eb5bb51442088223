/* Subcommands of the kueue-ks binary. Each returns the process exit code. */
#ifndef KKS_CMD_KUEUE_KS_CMDS_H
#define KKS_CMD_KUEUE_KS_CMDS_H

#include "pkg/json/jsonx.h"

/* main's give-back hook for the long-running commands' manager (mgr_set_give_back): the JSON
 * pool's empty slabs go back to the kernel (pkg/util/slab.h). NULL: none. */
typedef void (*cmd_give_back_fn)(void *ud);

/* lifetime: main's JSON allocator hint for the agents' pod records (jsonx.h); may be NULL. */
int cmd_run(int argc, char **argv, cmd_give_back_fn give_back, jx_lifetime_fn lifetime);
/* kueue-ks agent: the ClusterMetrics reporter for one cluster (cmd/kueue-ks/agent.c). */
int cmd_agent(int argc, char **argv, cmd_give_back_fn give_back, jx_lifetime_fn lifetime);
/* kueue-ks status: a terminal summary of clusters and quotas (cmd/kueue-ks/status.c). */
int cmd_status(int argc, char **argv);
/* kueue-ks explain: why a job runs where it does, or not (cmd/kueue-ks/explain.c). */
int cmd_explain(int argc, char **argv);

#endif

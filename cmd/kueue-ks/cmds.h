/* Subcommands of the kueue-ks binary. Each returns the process exit code. */
#ifndef KKS_CMD_KUEUE_KS_CMDS_H
#define KKS_CMD_KUEUE_KS_CMDS_H

int cmd_run(int argc, char **argv);
int cmd_status(int argc, char **argv);

#endif

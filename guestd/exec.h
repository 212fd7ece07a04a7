/* SPDX-License-Identifier: MIT */
/*
 * Commands (doc/DESIGN.md G-26): exec runs "bash -c" as the workspace user in
 * its own process group, cwd bots/<bot>/ by default, with env, timeout, output
 * cap, optional stdin and optional streaming of output as binary frames.
 * exec.cancel kills the whole group and confirms it, or answers
 * EXEC_MAY_BE_RUNNING.  Commands die with the connection that started them.
 */
#ifndef GUESTD_EXEC_H
#define GUESTD_EXEC_H

#include <spawn.h>

#include "control.h"

int	exec_op_run(struct control_conn *, uint32_t, json_t *, char *, size_t);
int	exec_op_cancel(struct control_conn *, uint32_t, json_t *, char *, size_t);
unsigned exec_running(void);

/* The environment of the bot's shell tool (bot may be NULL), for the
 * terminal (pty.c); free with exec_env_free(). */
char	**exec_env_new(const char *bot);
void	  exec_env_free(char **envp);

/*
 * posix_spawn attributes for every child guestd starts (commands, shells,
 * browsers): a session of its own, an empty signal mask and default
 * dispositions, since guestd itself blocks signals for its signalfd and
 * ignores SIGPIPE.  Release with posix_spawnattr_destroy().
 */
void	 exec_spawnattr_init(posix_spawnattr_t *attr);

#endif

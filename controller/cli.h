/* SPDX-License-Identifier: MIT */
/*
 * The rakazoctl command line: one table entry per top-level verb, in the
 * style of tmux's cmd_entry, so adding a verb is adding a file that
 * exports its entry and listing it in main.c.  fn gets argv starting at
 * the verb's own name and returns the process exit status.
 */
#ifndef CONTROLLER_CLI_H
#define CONTROLLER_CLI_H

/* Exit statuses shared by every verb (see rakazoctl(1)). */
#define CLI_EXIT_OK		0
#define CLI_EXIT_ERROR		1	/* an error reply or local failure */
#define CLI_EXIT_USAGE		2	/* bad command line */
#define CLI_EXIT_CONNECT	3	/* CONNECT_FAILED / UNAUTHORIZED */
#define CLI_EXIT_CANCELLED	130	/* interrupted by SIGINT/SIGTERM */

struct cli_cmd {
	const char	*name;
	const char	*usage;		/* arguments after the name */
	int		(*fn)(int argc, char **argv);
};

extern const struct cli_cmd	cli_guest_entry;
/* The controller's verbs (serve.c, cli-*.c). */
extern const struct cli_cmd	cli_serve_entry;
extern const struct cli_cmd	cli_health_entry;
extern const struct cli_cmd	cli_computer_entry;
extern const struct cli_cmd	cli_shell_entry;
extern const struct cli_cmd	cli_put_entry;
extern const struct cli_cmd	cli_get_entry;
extern const struct cli_cmd	cli_activity_entry;
extern const struct cli_cmd	cli_open_entry;
extern const struct cli_cmd	cli_screenshot_entry;
extern const struct cli_cmd	cli_act_entry;
extern const struct cli_cmd	cli_screen_url_entry;
extern const struct cli_cmd	cli_take_control_entry;
extern const struct cli_cmd	cli_release_control_entry;
extern const struct cli_cmd	cli_checkpoint_entry;
extern const struct cli_cmd	cli_restore_entry;
extern const struct cli_cmd	cli_homes_entry;
extern const struct cli_cmd	cli_s3_entry;

/* Print "rakazoctl: <msg>" to stderr, redacted (doc/DESIGN.md X-5). */
void	cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Print "usage: rakazoctl <name> <usage>" and return CLI_EXIT_USAGE. */
int	cli_usage(const struct cli_cmd *cmd);

#endif

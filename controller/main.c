/* SPDX-License-Identifier: MIT */
/*
 * rakazoctl: the operator's command line (doc/DESIGN.md C-5).  main()
 * only finds the top-level verb in cli_cmds[] and hands it argv; each verb
 * lives in its own cli-*.c file and owns its options, output and exit
 * status.
 */
#include "autoconf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libwebsockets.h>

#include "cli.h"
#include "redact.h"

static const struct cli_cmd *const cli_cmds[] = {
	&cli_guest_entry,
	&cli_serve_entry,
	&cli_health_entry,
	&cli_computer_entry,
	&cli_open_entry,
	&cli_shell_entry,
	&cli_put_entry,
	&cli_get_entry,
	&cli_screenshot_entry,
	&cli_act_entry,
	&cli_screen_url_entry,
	&cli_take_control_entry,
	&cli_release_control_entry,
	&cli_activity_entry,
	&cli_checkpoint_entry,
	&cli_restore_entry,
	&cli_homes_entry,
	&cli_s3_entry,
};

#define CLI_NCMDS	(sizeof(cli_cmds) / sizeof(cli_cmds[0]))

void
cli_error(const char *fmt, ...)
{
	char	 raw[1024], red[1024];
	va_list	 ap;
	size_t	 code;

	va_start(ap, fmt);
	vsnprintf(raw, sizeof(raw), fmt, ap);
	va_end(ap);
	/*
	 * A leading stable code ("UNAUTHORIZED: ...") stays as it is: the
	 * redactor would take "AUTH...: value" for a credential.
	 */
	code = strspn(raw, "ABCDEFGHIJKLMNOPQRSTUVWXYZ_");
	if (code == 0 || strncmp(raw + code, ": ", 2) != 0)
		code = 0;
	else
		code += 2;
	redact_text(red, sizeof(red), raw + code);
	fprintf(stderr, "rakazoctl: %.*s%s\n", (int)code, raw, red);
}

int
cli_usage(const struct cli_cmd *cmd)
{
	fprintf(stderr, "usage: rakazoctl %s %s\n", cmd->name, cmd->usage);
	return CLI_EXIT_USAGE;
}

static void
main_help(FILE *f)
{
	size_t	 i;

	fprintf(f, "usage: rakazoctl [--version | --help] COMMAND ...\n"
	    "commands:\n");
	for (i = 0; i < CLI_NCMDS; i++)
		fprintf(f, "  %s %s\n", cli_cmds[i]->name, cli_cmds[i]->usage);
}

int
main(int argc, char **argv)
{
	size_t	 i;

	/* lws chatter would mix with command output; errors are ours. */
	lws_set_log_level(0, NULL);
	if (argc < 2) {
		main_help(stderr);
		return CLI_EXIT_USAGE;
	}
	if (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "-V") == 0) {
		printf("rakazoctl %s\n", VERSION);
		return CLI_EXIT_OK;
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
	    strcmp(argv[1], "help") == 0) {
		main_help(stdout);
		return CLI_EXIT_OK;
	}
	for (i = 0; i < CLI_NCMDS; i++)
		if (strcmp(argv[1], cli_cmds[i]->name) == 0)
			return cli_cmds[i]->fn(argc - 1, argv + 1);
	cli_error("unknown command '%s'", argv[1]);
	main_help(stderr);
	return CLI_EXIT_USAGE;
}

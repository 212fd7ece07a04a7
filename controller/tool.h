/* SPDX-License-Identifier: MIT */
/*
 * The computer tools (doc/DESIGN.md C-4), one file per tool (tool-*.c), each
 * exporting a struct tool_entry: its name, a sentence, the JSON schema of
 * its arguments, flags and the function.  api-tools.c looks tools up
 * here, takes the bot's execution lease for TOOL_LEASE tools, runs the
 * function and records a computer.command event (G-30) for TOOL_RECORD
 * ones with the summary the tool left in ctx->summary.
 */
#ifndef CONTROLLER_TOOL_H
#define CONTROLLER_TOOL_H

#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

#include "store.h"
#include "provider.h"

struct errmsg;

#define TOOL_LEASE	0x01	/* mutates the computer: lease + fence */
#define TOOL_RECORD	0x02	/* leaves an activity event */
#define TOOL_NOSTART	0x04	/* works without a running computer */
/*
 * May hand out a control capability (a result with "policy":"control"):
 * the API records it under the caller's lease so it ends with the lease.
 */
#define TOOL_CONTROL	0x08

#define TOOL_SUMMARY_MAX	1024

struct tool_ctx {
	struct store		*store;
	struct provider		*prov;
	struct store_computer	*computer;
	const char		*bot;
	int64_t			 fence;		/* the lease's; 0 without */
	const char		*holder;
	/*
	 * When the caller's lease ends (wall ms; 0: no lease of its own):
	 * a control capability granted under it gets no longer a ttl, so
	 * it dies with the lease even when no controller is left to revoke
	 * it; the heartbeat renews both.
	 */
	int64_t			 lease_expires_ms;
	/* The attachment size limit (ATTACHMENT_MAX_BYTES); 0: 25 MiB. */
	int64_t			 attach_max;
	/* DATA_DIR: a stopped computer's files come from its home store. */
	const char		*data_dir;
	json_t			*args;		/* the request body (borrowed) */
	char			 summary[TOOL_SUMMARY_MAX];
	/*
	 * Run by the first tool_guest(): takes the lease and starts the
	 * computer, so a call refused for its arguments changes nothing.
	 */
	int			(*prepare)(struct tool_ctx *t,
	    struct errmsg *err);
	void			*prepare_arg;
	int			 prepared;
};

struct tool_entry {
	const char	*name;
	const char	*description;
	const char	*schema;	/* JSON Schema of the tool's own args */
	int		 flags;
	/* 0 and *result, or ERR_* with "CODE: sentence" or a sentence in err */
	int		(*fn)(struct tool_ctx *t, json_t **result,
	    struct errmsg *err);
};

extern const struct tool_entry	tool_shell_entry;
extern const struct tool_entry	tool_read_file_entry;
extern const struct tool_entry	tool_write_file_entry;
extern const struct tool_entry	tool_list_files_entry;
extern const struct tool_entry	tool_observe_entry;
extern const struct tool_entry	tool_act_entry;
extern const struct tool_entry	tool_request_takeover_entry;
extern const struct tool_entry	tool_screen_url_entry;
extern const struct tool_entry	tool_terminal_url_entry;
extern const struct tool_entry	tool_attach_file_entry;
extern const struct tool_entry	tool_open_path_entry;
extern const struct tool_entry	tool_launch_app_entry;
extern const struct tool_entry	tool_browser_navigate_entry;
extern const struct tool_entry	tool_browser_snapshot_entry;
extern const struct tool_entry	tool_browser_act_entry;

const struct tool_entry	*tool_find(const char *name);
/* {"tools":[{name, description, input_schema}]} */
json_t	*tool_list_json(void);

/*
 * One guestd op for the tool: args stolen; for TOOL_LEASE tools bot and
 * fence are added so guestd can refuse a stale driver (G-32).
 */
int	tool_guest(struct tool_ctx *t, const char *op, json_t *args,
	    int fenced, const void *in, size_t inlen, json_t **result,
	    void **out, size_t *outlen, struct errmsg *err);
/* The tool's own args: the body without computer/bot/lease/holder. */
int	tool_only_keys(struct tool_ctx *t, const char *const *keys,
	    struct errmsg *err);
/* Decode standard base64; 0 or ERR_BAD_REQUEST. *out malloc'd. */
int	tool_unbase64(const char *s, void **out, size_t *outlen);

#endif

/* SPDX-License-Identifier: MIT */
/*
 * The op table of the control channel, and hello and health, which belong
 * to no other module.  Adding an op is adding a line here and a handler in
 * the module that owns the concern.
 */
#include "autoconf.h"

#include <sys/stat.h>

#include <stdlib.h>
#include <string.h>

#include "capability.h"
#include "browser.h"
#include "page.h"
#include "act.h"
#include "control.h"
#include "display.h"
#include "err.h"
#include "exec.h"
#include "files.h"
#include "gateway.h"
#include "guestd.h"
#include "json.h"
#include "loop.h"
#include "observe.h"
#include "ops.h"
#include "proto.h"
#include "workspace.h"

const struct control_op ops_table[] = {
	{ "hello",		ops_hello,		0 },
	{ "health",		ops_health,		0 },
	{ "exec",		exec_op_run,		1 },
	{ "exec.cancel",	exec_op_cancel,		1 },
	{ "file.list",		files_op_list,		0 },
	{ "file.stat",		files_op_stat,		0 },
	{ "file.read",		files_op_read,		0 },
	{ "file.write",		files_op_write,		1 },
	{ "file.mkdir",		files_op_mkdir,		1 },
	{ "file.remove",	files_op_remove,	1 },
	{ "workspace.export",	workspace_op_export,	0 },
	{ "workspace.fingerprint", workspace_op_fingerprint, 0 },
	{ "workspace.import",	workspace_op_import,	1 },
	{ "workspace.imported",	workspace_op_imported,	0 },
	{ "display.open",	display_op_open,	1 },
	{ "display.close",	display_op_close,	1 },
	{ "display.list",	display_op_list,	0 },
	{ "display.observe",	observe_op,		0 },
	{ "display.act",	act_op,			1 },
	{ "capability.grant",	capability_op_grant,	1 },
	{ "capability.revoke",	capability_op_revoke,	1 },
	{ "capability.renew",	capability_op_renew,	1 },
	{ "browser.open",	browser_op_open,	1 },
	{ "browser.close",	browser_op_close,	1 },
	{ "browser.quiesce",	browser_op_quiesce,	0 },
	{ "browser.list",	browser_op_list,	0 },
	{ "page.navigate",	page_op_navigate,	1 },
	{ "page.snapshot",	page_op_snapshot,	0 },
	{ "page.act",		page_op_act,		1 },
};
const size_t ops_count = sizeof ops_table / sizeof ops_table[0];

int
ops_hello(struct control_conn *c, uint32_t id, json_t *args, char *detail,
    size_t detaillen)
{
	static const char *const keys[] = { "version", "client", NULL };
	const char	*client;
	json_t		*caps, *res;
	int64_t		 version;
	size_t		 i;
	int		 r;

	if ((r = jsonx_only_keys(args, keys, detail)) != 0)
		return r;
	if ((r = jsonx_int(args, "version", 1, 1000000, &version,
	    detail)) != 0)
		return r == ERR_NOT_FOUND ? ERR_BAD_REQUEST : r;
	r = jsonx_str(args, "client", 128, &client, detail);
	if (r != 0 && r != ERR_NOT_FOUND)
		return r;
	if (version != PROTO_VERSION) {
		snprintf(detail, detaillen, "(client %lld, guestd %d)",
		    (long long)version, PROTO_VERSION);
		return ERR_UNSUPPORTED_VERSION;
	}
	caps = json_array();
	for (i = 0; i < ops_count; i++)
		json_array_append_new(caps, json_string(ops_table[i].name));
	res = json_pack("{s:i,s:s,s:o,s:{s:i,s:i,s:i,s:I,s:I,s:I,s:I}}",
	    "protocol", PROTO_VERSION,
	    "server", GUESTD_VERSION_STRING,
	    "capabilities", caps,
	    "limits",
	    "max_json", PROTO_MAX_JSON,
	    "max_binary", PROTO_MAX_BINARY,
	    "chunk", PROTO_CHUNK,
	    "import_max_bytes", (json_int_t)guestd.home_max_bytes,
	    "import_max_entries", (json_int_t)guestd.import_max_entries,
	    "exec_max_output", (json_int_t)guestd.exec_max_output,
	    "exec_max_timeout_ms", (json_int_t)guestd.exec_max_timeout_ms);
	if (res == NULL)
		return ERR_NOMEM;
	/* Screen URLs are built from it; 0: no gateway. */
	json_object_set_new(res, "gateway_port", json_integer(gateway_port()));
	control_hello_done(c);
	return control_reply(c, id, res);
}

int
ops_health(struct control_conn *c, uint32_t id, json_t *args, char *detail,
    size_t detaillen)
{
	static const char *const keys[] = { NULL };
	struct stat	 st;
	const char	*ws;
	int		 r;

	if ((r = jsonx_only_keys(args, keys, detail)) != 0)
		return r;
	ws = (stat(guestd.workspace, &st) == 0 && S_ISDIR(st.st_mode)) ?
	    "ok" : "missing";
	return control_reply(c, id, json_pack("{s:s,s:I,s:i,s:i,s:s}",
	    "state", strcmp(ws, "ok") == 0 ? "ok" : "degraded",
	    "uptime_ms", (json_int_t)(loop_now_ms() - guestd.started_ms),
	    "connections", (int)control_count(),
	    "execs_running", (int)exec_running(),
	    "workspace", ws));
}

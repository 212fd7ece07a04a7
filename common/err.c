/* SPDX-License-Identifier: MIT */
/*
 * Stable error codes and their sentences (doc/DESIGN.md X-6).  The table
 * is indexed by -code so err_name() and err_message() are a bounds check
 * and a load; names never change once published because clients match on
 * them.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

#include "err.h"

struct err_entry {
	const char	*name;
	const char	*message;
};

static const struct err_entry err_table[] = {
	[0] = { "OK", "Success." },
	[-ERR_INTERNAL] = { "INTERNAL", "An internal error occurred." },
	[-ERR_NOMEM] = { "OUT_OF_MEMORY", "The daemon ran out of memory." },
	[-ERR_BAD_REQUEST] = { "BAD_REQUEST", "The request is malformed." },
	[-ERR_BAD_JSON] = { "BAD_JSON", "The message is not valid JSON." },
	[-ERR_TOO_LARGE] = { "TOO_LARGE", "The input exceeds the size limit." },
	[-ERR_UNKNOWN_OP] = { "UNKNOWN_OP", "The operation is not known." },
	[-ERR_HELLO_REQUIRED] = { "HELLO_REQUIRED",
	    "The first request must be hello." },
	[-ERR_UNSUPPORTED_VERSION] = { "UNSUPPORTED_VERSION",
	    "The protocol version is not supported." },
	[-ERR_UNAUTHORIZED] = { "UNAUTHORIZED",
	    "The credentials are missing or wrong." },
	[-ERR_NOT_FOUND] = { "NOT_FOUND", "The object was not found." },
	[-ERR_EXISTS] = { "ALREADY_EXISTS", "The object already exists." },
	[-ERR_NOT_DIR] = { "NOT_A_DIRECTORY",
	    "A path component is not a directory." },
	[-ERR_IS_DIR] = { "IS_A_DIRECTORY", "The path is a directory." },
	[-ERR_PATH_OUTSIDE] = { "PATH_OUTSIDE_WORKSPACE",
	    "The path leads outside the workspace." },
	[-ERR_PATH_INVALID] = { "PATH_INVALID", "The path is not valid." },
	[-ERR_NAME_TOO_LONG] = { "NAME_TOO_LONG",
	    "The path or a name in it is too long." },
	[-ERR_PERMISSION] = { "PERMISSION_DENIED",
	    "Permission was denied." },
	[-ERR_NO_SPACE] = { "NO_SPACE",
	    "There is no space left on the device." },
	[-ERR_IO] = { "IO_ERROR", "An input/output error occurred." },
	[-ERR_NOT_EMPTY] = { "DIRECTORY_NOT_EMPTY",
	    "The directory is not empty." },
	[-ERR_BUSY] = { "BUSY", "The resource is busy; try again later." },
	[-ERR_EXEC_MAY_BE_RUNNING] = { "EXEC_MAY_BE_RUNNING",
	    "The command may still be running." },
	[-ERR_EXEC_SPAWN] = { "EXEC_SPAWN_FAILED",
	    "The command could not be started." },
	[-ERR_CANCELLED] = { "CANCELLED", "The operation was cancelled." },
	[-ERR_TAR_INVALID] = { "TAR_INVALID", "The tar archive is invalid." },
	[-ERR_TAR_ENTRY_REJECTED] = { "TAR_ENTRY_REJECTED",
	    "A tar entry was rejected." },
	[-ERR_TAR_TOO_LARGE] = { "TAR_TOO_LARGE",
	    "The tar archive exceeds the size limit." },
	[-ERR_TAR_TOO_MANY_ENTRIES] = { "TAR_TOO_MANY_ENTRIES",
	    "The tar archive has too many entries." },
	[-ERR_TAR_TRUNCATED] = { "TAR_TRUNCATED",
	    "The tar archive is truncated." },
	[-ERR_STALE_FENCE] = { "STALE_FENCE",
	    "The fence is stale; a newer holder exists." },
	[-ERR_INVALID_BOT] = { "INVALID_BOT", "The bot name is not valid." },
	[-ERR_PEER_GONE] = { "PEER_GONE", "The peer went away." },
	[-ERR_CONFIG] = { "CONFIG_INVALID", "The configuration is invalid." },
	[-ERR_CONNECT] = { "CONNECT_FAILED", "The connection failed." },
	[-ERR_PROTOCOL] = { "PROTOCOL_ERROR",
	    "The peer violated the protocol." },
	[-ERR_NEED_MORE] = { "NEED_MORE", "More input is needed." },
	[-ERR_NOT_REGULAR] = { "NOT_A_REGULAR_FILE",
	    "The path is not a regular file." },
	[-ERR_RANGE] = { "RANGE_INVALID", "The range is not valid." },
	[-ERR_ACTION_INVALID] = { "ACTION_INVALID",
	    "An action is malformed or not known." },
	[-ERR_COORDINATES] = { "COORDINATES_OUT_OF_RANGE",
	    "The coordinates lie outside the screen." },
	[-ERR_KEY_UNKNOWN] = { "KEY_UNKNOWN", "A key name is not known." },
	[-ERR_X] = { "X_ERROR", "The X server reported an error." },
	[-ERR_MULTI_SCREEN_UNAVAILABLE] = { "MULTI_SCREEN_UNAVAILABLE",
	    "No more desktops can be open at once; shell and file tools still "
	    "work." },
	[-ERR_DISPLAY_FAILED] = { "DISPLAY_START_FAILED",
	    "The desktop's X server could not be started." },
	[-ERR_NO_DISPLAY] = { "DISPLAY_NOT_OPEN",
	    "The bot has no open desktop; open one first." },
	[-ERR_UNCHANGED_REPEAT] = { "UNCHANGED_AFTER_REPEAT",
	    "The same action was repeated and the screen did not change; read "
	    "the page with the page-text tools (browser_snapshot) instead." },
	[-ERR_LEASE_HELD] = { "LEASE_HELD",
	    "Another driver holds this bot's lease." },
	[-ERR_STOP_THE_BOT_FIRST] = { "STOP_THE_BOT_FIRST",
	    "Stop the bot first: it is running and has not asked for a "
	    "takeover." },
	[-ERR_LEASE_EXPIRED] = { "LEASE_EXPIRED",
	    "The lease expired or was released." },
	[-ERR_SHARED_USER] = { "SHARED_USER",
	    "Local computers would share one user; this controller accepts "
	    "only one (run it as root, or give --allow-shared-user)." },
	[-ERR_COMPUTERS_DISABLED] = { "COMPUTERS_DISABLED",
	    "Computers are disabled on this controller (SANDBOX_PROVIDER=none)." },
	[-ERR_UNKNOWN_TOOL] = { "UNKNOWN_TOOL", "The tool is not known." },
	[-ERR_STORE] = { "STATE_STORE_ERROR",
	    "The state store failed." },
	[-ERR_METHOD] = { "METHOD_NOT_ALLOWED",
	    "The method is not allowed on this path." },
	[-ERR_PROVIDER] = { "PROVIDER_FAILED",
	    "The computer provider failed." },
	[-ERR_STALE_REF] = { "STALE_REF",
	    "Stale element ref. Take a fresh snapshot." },
	[-ERR_BROWSER_NOT_RUNNING] = { "BROWSER_NOT_RUNNING",
	    "The bot's browser is not running: open it with browser.open." },
	[-ERR_URL_REFUSED] = { "URL_REFUSED",
	    "Only http(s) URLs without embedded credentials are accepted." },
	[-ERR_PAGE_AMBIGUOUS] = { "PAGE_AMBIGUOUS",
	    "More than one tab is visible; close or focus one." },
	[-ERR_CDP] = { "CDP_ERROR",
	    "The browser's DevTools protocol reported an error." },
	[-ERR_BROWSER_PORT_BUSY] = { "BROWSER_PORT_BUSY",
	    "The bot's DevTools port is already in use." },
	[-ERR_BROWSER_START] = { "BROWSER_START_FAILED",
	    "The browser could not be started." },
	[-ERR_PAGE_UNSUPPORTED] = { "PAGE_UNSUPPORTED",
	    "The page tools cannot do this; use the desktop tools." },
	[-ERR_PAGE_ACTION] = { "PAGE_ACTION_FAILED",
	    "A page action failed." },
	[-ERR_TIMEOUT] = { "TIMEOUT",
	    "The wait ended before what it waited for happened." },
	[-ERR_SIZE_MISMATCH] = { "SIZE_MISMATCH",
	    "The body's length differs from the size announced for it." },
	[-ERR_LENGTH_REQUIRED] = { "LENGTH_REQUIRED",
	    "The request needs a Content-Length header." },
	[-ERR_DISPLAY_MISMATCH] = { "DISPLAY_MISMATCH",
	    "The command names another display than the request's." },
	[-ERR_CHECKPOINT_FAILED] = { "CHECKPOINT_FAILED",
	    "The workspace could not be saved to the home store; the "
	    "previous revision is unchanged." },
	[-ERR_RESTORE_FAILED] = { "RESTORE_FAILED",
	    "The stored workspace could not be restored; the computer's "
	    "workspace and the home store are unchanged." },
	[-ERR_NO_REVISION] = { "NO_SUCH_REVISION",
	    "The home store holds no such revision of this computer." },
	[-ERR_HOME_STORE] = { "HOME_STORE_ERROR",
	    "The home store failed." },
	[-ERR_STORE_UNAVAILABLE] = { "STATE_STORE_UNAVAILABLE",
	    "The state store cannot be reached; try again." },
	[-ERR_SEAL_FORMAT] = { "SEAL_FORMAT_INVALID",
	    "The sealed archive's header is not valid." },
	[-ERR_SEAL_VERSION] = { "SEAL_VERSION_UNSUPPORTED",
	    "The sealed archive has a version this build cannot read." },
	[-ERR_SEAL_AUTH] = { "SEAL_AUTH_FAILED",
	    "A segment of the sealed archive failed authentication." },
	[-ERR_SEAL_TRUNCATED] = { "SEAL_TRUNCATED",
	    "The sealed archive ends before its final segment." },
	[-ERR_SEAL_WRONG_OBJECT] = { "SEAL_WRONG_OBJECT",
	    "The sealed archive belongs to another home or revision." },
	[-ERR_KEY_INVALID] = { "KEY_INVALID",
	    "A key or key file is not valid." },
	[-ERR_S3] = { "OBJECT_STORE_ERROR",
	    "The object store refused the request." },
	[-ERR_S3_DENIED] = { "OBJECT_STORE_DENIED",
	    "The object store refused the credentials or the signature." },
	[-ERR_S3_NO_BUCKET] = { "OBJECT_STORE_NO_BUCKET",
	    "The object store has no such bucket." },
	[-ERR_PROVIDER_UNSURE] = { "PROVIDER_CANNOT_TELL",
	    "The provider cannot tell whether the computer runs; it is "
	    "not replaced." },
	[-ERR_K8S] = { "KUBERNETES_ERROR",
	    "The Kubernetes API refused the request." },
	[-ERR_K8S_UNAUTHORIZED] = { "KUBERNETES_UNAUTHORIZED",
	    "The Kubernetes API refused the controller's credentials." },
	[-ERR_K8S_FORBIDDEN] = { "KUBERNETES_FORBIDDEN",
	    "The controller's service account may not do this (RBAC)." },
	[-ERR_K8S_NOT_FOUND] = { "KUBERNETES_NOT_FOUND",
	    "The Kubernetes object or namespace does not exist." },
	[-ERR_K8S_CONFLICT] = { "KUBERNETES_ALREADY_EXISTS",
	    "The Kubernetes object already exists." },
	[-ERR_K8S_INVALID] = { "KUBERNETES_INVALID",
	    "The Kubernetes API found the object invalid." },
	[-ERR_K8S_THROTTLED] = { "KUBERNETES_TOO_MANY_REQUESTS",
	    "The Kubernetes API asks to retry later." },
	[-ERR_K8S_UNAVAILABLE] = { "KUBERNETES_UNAVAILABLE",
	    "The Kubernetes API cannot be reached or failed." },
	[-ERR_K8S_NOT_READY] = { "KUBERNETES_POD_NOT_READY",
	    "The computer's pod did not become ready in time." },
};

/* Unknown codes read as INTERNAL: a client never sees an unnamed error. */
static const struct err_entry *
err_lookup(int code)
{
	size_t	 i;

	if (code > 0 || code <= ERR__LAST)
		return &err_table[-ERR_INTERNAL];
	i = (size_t)-code;
	if (i >= sizeof(err_table) / sizeof(err_table[0]) ||
	    err_table[i].name == NULL)
		return &err_table[-ERR_INTERNAL];
	return &err_table[i];
}

const char *
err_name(int code)
{
	return err_lookup(code)->name;
}

const char *
err_message(int code)
{
	return err_lookup(code)->message;
}

int
err_from_errno(int errnum)
{
	switch (errnum) {
	case 0:
		return ERR_INTERNAL;
	case ENOENT:
		return ERR_NOT_FOUND;
	case EEXIST:
		return ERR_EXISTS;
	case ENOTDIR:
		return ERR_NOT_DIR;
	case EISDIR:
		return ERR_IS_DIR;
	case EACCES:
	case EPERM:
		return ERR_PERMISSION;
	case ENOSPC:
	case EDQUOT:
		return ERR_NO_SPACE;
	case ENAMETOOLONG:
		return ERR_NAME_TOO_LONG;
	case ENOTEMPTY:
		return ERR_NOT_EMPTY;
	case EXDEV:
	case ELOOP:
		/* Confined opens (RESOLVE_BENEATH/NO_SYMLINKS) fail so. */
		return ERR_PATH_OUTSIDE;
	case ENOMEM:
		return ERR_NOMEM;
	case EINVAL:
		return ERR_BAD_REQUEST;
	default:
		return ERR_IO;
	}
}

int
errmsg_vset(struct errmsg *e, int code, const char *fmt, va_list ap)
{
	if (e == NULL)
		return code;
	e->code = code;
	if (vsnprintf(e->msg, sizeof(e->msg), fmt, ap) < 0)
		e->msg[0] = '\0';
	return code;
}

int
errmsg_set(struct errmsg *e, int code, const char *fmt, ...)
{
	va_list	ap;
	int	r;

	va_start(ap, fmt);
	r = errmsg_vset(e, code, fmt, ap);
	va_end(ap);
	return r;
}

int
errmsg_code(struct errmsg *e, int code)
{
	if (e != NULL) {
		e->code = code;
		e->msg[0] = '\0';
	}
	return code;
}

void
errmsg_clear(struct errmsg *e)
{
	if (e != NULL) {
		e->code = 0;
		e->cause = 0;
		e->msg[0] = '\0';
	}
}

const char *
errmsg_str(const struct errmsg *e)
{
	if (e == NULL)
		return err_message(ERR_INTERNAL);
	return e->msg[0] != '\0' ? e->msg : err_message(e->code);
}

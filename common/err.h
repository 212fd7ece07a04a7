/* SPDX-License-Identifier: MIT */
/*
 * Stable error codes (doc/DESIGN.md X-6).  Every error a client can see has a
 * machine-readable name that never changes and a human sentence.  Codes are
 * negative ints so functions can return them directly; 0 is success.
 * Add new codes at the end of the table in err.c, never renumber.
 */
#ifndef COMMON_ERR_H
#define COMMON_ERR_H

#include <stdarg.h>

enum err_code {
	ERR_OK = 0,
	ERR_INTERNAL = -1,		/* INTERNAL */
	ERR_NOMEM = -2,			/* OUT_OF_MEMORY */
	ERR_BAD_REQUEST = -3,		/* BAD_REQUEST */
	ERR_BAD_JSON = -4,		/* BAD_JSON */
	ERR_TOO_LARGE = -5,		/* TOO_LARGE */
	ERR_UNKNOWN_OP = -6,		/* UNKNOWN_OP */
	ERR_HELLO_REQUIRED = -7,	/* HELLO_REQUIRED */
	ERR_UNSUPPORTED_VERSION = -8,	/* UNSUPPORTED_VERSION */
	ERR_UNAUTHORIZED = -9,		/* UNAUTHORIZED */
	ERR_NOT_FOUND = -10,		/* NOT_FOUND */
	ERR_EXISTS = -11,		/* ALREADY_EXISTS */
	ERR_NOT_DIR = -12,		/* NOT_A_DIRECTORY */
	ERR_IS_DIR = -13,		/* IS_A_DIRECTORY */
	ERR_PATH_OUTSIDE = -14,		/* PATH_OUTSIDE_WORKSPACE */
	ERR_PATH_INVALID = -15,		/* PATH_INVALID */
	ERR_NAME_TOO_LONG = -16,	/* NAME_TOO_LONG */
	ERR_PERMISSION = -17,		/* PERMISSION_DENIED */
	ERR_NO_SPACE = -18,		/* NO_SPACE */
	ERR_IO = -19,			/* IO_ERROR */
	ERR_NOT_EMPTY = -20,		/* DIRECTORY_NOT_EMPTY */
	ERR_BUSY = -21,			/* BUSY */
	ERR_EXEC_MAY_BE_RUNNING = -22,	/* EXEC_MAY_BE_RUNNING */
	ERR_EXEC_SPAWN = -23,		/* EXEC_SPAWN_FAILED */
	ERR_CANCELLED = -24,		/* CANCELLED */
	ERR_TAR_INVALID = -25,		/* TAR_INVALID */
	ERR_TAR_ENTRY_REJECTED = -26,	/* TAR_ENTRY_REJECTED */
	ERR_TAR_TOO_LARGE = -27,	/* TAR_TOO_LARGE */
	ERR_TAR_TOO_MANY_ENTRIES = -28,	/* TAR_TOO_MANY_ENTRIES */
	ERR_TAR_TRUNCATED = -29,	/* TAR_TRUNCATED */
	ERR_STALE_FENCE = -30,		/* STALE_FENCE */
	ERR_INVALID_BOT = -31,		/* INVALID_BOT */
	ERR_PEER_GONE = -32,		/* PEER_GONE */
	ERR_CONFIG = -33,		/* CONFIG_INVALID */
	ERR_CONNECT = -34,		/* CONNECT_FAILED */
	ERR_PROTOCOL = -35,		/* PROTOCOL_ERROR */
	ERR_NEED_MORE = -36,		/* NEED_MORE (internal: parser wants bytes) */
	ERR_NOT_REGULAR = -37,		/* NOT_A_REGULAR_FILE */
	ERR_RANGE = -38,		/* RANGE_INVALID */
	ERR_ACTION_INVALID = -39,	/* ACTION_INVALID */
	ERR_COORDINATES = -40,		/* COORDINATES_OUT_OF_RANGE */
	ERR_KEY_UNKNOWN = -41,		/* KEY_UNKNOWN */
	ERR_X = -42,			/* X_ERROR */
	ERR_MULTI_SCREEN_UNAVAILABLE = -43,	/* MULTI_SCREEN_UNAVAILABLE */
	ERR_DISPLAY_FAILED = -44,	/* DISPLAY_START_FAILED */
	ERR_NO_DISPLAY = -45,		/* DISPLAY_NOT_OPEN */
	ERR_UNCHANGED_REPEAT = -46,	/* UNCHANGED_AFTER_REPEAT */
	ERR_LEASE_HELD = -47,		/* LEASE_HELD */
	ERR_STOP_THE_BOT_FIRST = -48,	/* STOP_THE_BOT_FIRST */
	ERR_LEASE_EXPIRED = -49,	/* LEASE_EXPIRED */
	ERR_COMPUTERS_DISABLED = -50,	/* COMPUTERS_DISABLED */
	ERR_UNKNOWN_TOOL = -51,		/* UNKNOWN_TOOL */
	ERR_STORE = -52,		/* STATE_STORE_ERROR */
	ERR_METHOD = -53,		/* METHOD_NOT_ALLOWED */
	ERR_PROVIDER = -54,		/* PROVIDER_FAILED */
	ERR_STALE_REF = -55,	/* STALE_REF */
	ERR_BROWSER_NOT_RUNNING = -56,	/* BROWSER_NOT_RUNNING */
	ERR_URL_REFUSED = -57,	/* URL_REFUSED */
	ERR_PAGE_AMBIGUOUS = -58,	/* PAGE_AMBIGUOUS */
	ERR_CDP = -59,	/* CDP_ERROR */
	ERR_BROWSER_PORT_BUSY = -60,	/* BROWSER_PORT_BUSY */
	ERR_BROWSER_START = -61,	/* BROWSER_START_FAILED */
	ERR_PAGE_UNSUPPORTED = -62,	/* PAGE_UNSUPPORTED */
	ERR_PAGE_ACTION = -63,	/* PAGE_ACTION_FAILED */
	ERR_TIMEOUT = -64,	/* TIMEOUT */
	ERR_SIZE_MISMATCH = -65,	/* SIZE_MISMATCH */
	ERR_LENGTH_REQUIRED = -66,	/* LENGTH_REQUIRED */
	ERR_DISPLAY_MISMATCH = -67,	/* DISPLAY_MISMATCH */
	ERR_SHARED_USER = -68,	/* SHARED_USER */
	ERR_CHECKPOINT_FAILED = -69,	/* CHECKPOINT_FAILED */
	ERR_RESTORE_FAILED = -70,	/* RESTORE_FAILED */
	ERR_NO_REVISION = -71,	/* NO_SUCH_REVISION */
	ERR_HOME_STORE = -72,	/* HOME_STORE_ERROR */
	ERR_STORE_UNAVAILABLE = -73,	/* STATE_STORE_UNAVAILABLE */
	ERR_SEAL_FORMAT = -74,	/* SEAL_FORMAT_INVALID */
	ERR_SEAL_VERSION = -75,	/* SEAL_VERSION_UNSUPPORTED */
	ERR_SEAL_AUTH = -76,	/* SEAL_AUTH_FAILED */
	ERR_SEAL_TRUNCATED = -77,	/* SEAL_TRUNCATED */
	ERR_SEAL_WRONG_OBJECT = -78,	/* SEAL_WRONG_OBJECT */
	ERR_KEY_INVALID = -79,	/* KEY_INVALID */
	ERR_S3 = -80,	/* OBJECT_STORE_ERROR */
	ERR_S3_DENIED = -81,	/* OBJECT_STORE_DENIED */
	ERR_S3_NO_BUCKET = -82,	/* OBJECT_STORE_NO_BUCKET */
	ERR_PROVIDER_UNSURE = -83,	/* PROVIDER_CANNOT_TELL */
	ERR_K8S = -84,	/* KUBERNETES_ERROR */
	ERR_K8S_UNAUTHORIZED = -85,	/* KUBERNETES_UNAUTHORIZED */
	ERR_K8S_FORBIDDEN = -86,	/* KUBERNETES_FORBIDDEN */
	ERR_K8S_NOT_FOUND = -87,	/* KUBERNETES_NOT_FOUND */
	ERR_K8S_CONFLICT = -88,	/* KUBERNETES_ALREADY_EXISTS */
	ERR_K8S_INVALID = -89,	/* KUBERNETES_INVALID */
	ERR_K8S_THROTTLED = -90,	/* KUBERNETES_TOO_MANY_REQUESTS */
	ERR_K8S_UNAVAILABLE = -91,	/* KUBERNETES_UNAVAILABLE */
	ERR_K8S_NOT_READY = -92,	/* KUBERNETES_POD_NOT_READY */
	ERR__LAST = -93
};

/* "PATH_OUTSIDE_WORKSPACE"; "INTERNAL" for unknown codes. */
const char	*err_name(int code);
/* "The path leads outside the workspace." */
const char	*err_message(int code);
/* Map an errno value to the closest code (ENOENT -> ERR_NOT_FOUND ...). */
int		 err_from_errno(int errnum);

/*
 * The one error sink: a failing function stores its code and a sentence
 * for a person here and returns the code, so callers pass one pointer
 * instead of a char buffer and its length.  The sentence may quote a
 * peer's words, so it is redacted where it is logged, not here.
 */
#define ERRMSG_MAX	512

struct errmsg {
	int	code;			/* ERR_*; 0 while nothing failed */
	/* What a summary code (RESTORE_FAILED) stands for, when a stable
	 * code of its own (SEAL_AUTH_FAILED); 0 otherwise.  Set only by
	 * whoever sums up, cleared by errmsg_clear. */
	int	cause;
	char	msg[ERRMSG_MAX];	/* "" means err_message(code) */
};

/* Record code with a printf sentence; returns code.  e may be NULL. */
int		 errmsg_set(struct errmsg *e, int code, const char *fmt, ...)
		    __attribute__((format(printf, 3, 4)));
/* errmsg_set with a va_list, for functions that take a format. */
int		 errmsg_vset(struct errmsg *e, int code, const char *fmt,
		    va_list ap) __attribute__((format(printf, 3, 0)));
/* Record code with its table sentence; returns code.  e may be NULL. */
int		 errmsg_code(struct errmsg *e, int code);
/* Forget what was recorded. */
void		 errmsg_clear(struct errmsg *e);
/* The sentence: msg, or err_message(code) when msg is empty. */
const char	*errmsg_str(const struct errmsg *e);

#endif

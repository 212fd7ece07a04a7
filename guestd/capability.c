/* SPDX-License-Identifier: MIT */
/*
 * Screen capabilities: tokens, their Unix sockets, expiry and revocation.
 *
 * Every capability listens on its own Unix socket (a random name in a
 * 0700 directory of ours).  The gateway connects to it for each viewer;
 * whatever connects gets the display's RFB with the capability's policy.
 * The socket path, not the display slot, is what a viewer reaches, so a
 * slot recycled for another bot can never be reached through an old
 * capability: the socket is gone with the capability, and the capability
 * is gone before the slot is freed (display.c's closing hook).
 *
 * Revocation is synchronous on the loop: the gateway closes the viewers'
 * websockets, rfb.c shuts the viewers' sockets down, the listener is
 * closed and unlinked.
 *
 * A capability with a ttl dies on its own: a one-shot loop timer revokes
 * it (reason "expired"), so a controller that vanished cannot leave a
 * control capability behind.  The controller ties a control capability's
 * ttl to its lease and renews it (capability.renew) with the lease's
 * heartbeat; between the deadline and the timer's turn, lookups already
 * treat it as gone.
 */
#include "autoconf.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "capability.h"
#include "control.h"
#include "display.h"
#include "err.h"
#include "gateway.h"
#include "json.h"
#include "log.h"
#include "loop.h"
#include "path.h"
#include "queue-compat.h"
#include "rfb.h"
#include "token.h"
#include "xmalloc.h"

#define CAP_TTL_MAX	(30LL * 86400)	/* seconds */
#define CAP_BACKLOG	64

struct capability {
	char			 token[TOKEN_STRLEN + 1];
	char			 id[17];	/* public, for diagnostics */
	int			 control;
	struct display		*d;
	char			 bot[65];
	struct sockaddr_un	 sun;
	struct loop_fd		*lf;		/* the listener */
	struct loop_timer	*expiry;
	int64_t			 expires_ms;	/* wall clock; 0: never */
	LIST_ENTRY(capability)	 entry;
};

static LIST_HEAD(, capability)	 cap_list =
    LIST_HEAD_INITIALIZER(cap_list);
static void			(*cap_revoke_hook)(const struct capability *);
static char			 cap_dir[PATH_MAX];

static void	cap_revoke(struct capability *, const char *);

static uint64_t
cap_wall_ms(void)
{
	struct timeval	tv;

	gettimeofday(&tv, NULL);
	return (uint64_t)tv.tv_sec * 1000 + (uint64_t)tv.tv_usec / 1000;
}

static void
cap_cleanup(void)
{
	struct capability	*cap;

	LIST_FOREACH(cap, &cap_list, entry)
		(void)unlink(cap->sun.sun_path);
	if (cap_dir[0] != '\0')
		(void)rmdir(cap_dir);
}

static int
cap_dir_init(void)
{
	const char	*tmp;

	if (cap_dir[0] != '\0')
		return 0;
	tmp = getenv("TMPDIR");
	if (tmp == NULL || *tmp != '/')
		tmp = "/tmp";
	snprintf(cap_dir, sizeof cap_dir, "%s/guestd-screen.XXXXXX", tmp);
	/* mkdtemp makes it 0700: only guestd's user reaches the sockets. */
	if (mkdtemp(cap_dir) == NULL) {
		log_error("capability.dir", "error=\"%s\"", strerror(errno));
		cap_dir[0] = '\0';
		return ERR_INTERNAL;
	}
	atexit(cap_cleanup);
	return 0;
}

int
capability_token_wellformed(const char *s, size_t n)
{
	size_t	i;

	if (n != TOKEN_STRLEN)
		return 0;
	for (i = 0; i < n; i++) {
		if (!((s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= 'a' &&
		    s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') ||
		    s[i] == '-' || s[i] == '_'))
			return 0;
	}
	return 1;
}

struct capability *
capability_find(const char *t, size_t n)
{
	struct capability	*cap, *found = NULL;

	if (!capability_token_wellformed(t, n))
		return NULL;
	/* Every entry is compared, in constant time each. */
	LIST_FOREACH(cap, &cap_list, entry) {
		if (token_equal(cap->token, strlen(cap->token), t, n))
			found = cap;
	}
	/* Past its deadline it opens nothing, even before its timer ran. */
	if (found != NULL && found->expires_ms > 0 &&
	    (int64_t)cap_wall_ms() >= found->expires_ms)
		return NULL;
	return found;
}

/* By public id (not a secret: a plain comparison). */
struct capability *
capability_find_id(const char *id)
{
	struct capability	*cap;

	LIST_FOREACH(cap, &cap_list, entry)
		if (strcmp(cap->id, id) == 0)
			return cap;
	return NULL;
}

int
capability_control(const struct capability *cap)
{
	return cap->control;
}

const char *
capability_id(const struct capability *cap)
{
	return cap->id;
}

const char *
capability_socket(const struct capability *cap)
{
	return cap->sun.sun_path;
}

const char *
capability_bot(const struct capability *cap)
{
	return cap->bot;
}

void
capability_on_revoke(void (*fn)(const struct capability *))
{
	cap_revoke_hook = fn;
}

/* ---- the per-capability socket ------------------------------------------ */

static void
cap_accept_cb(struct loop_fd *lf, int events, void *arg)
{
	struct capability	*cap = arg;
	int			 fd;

	if (events & LOOP_HUP) {
		cap->lf = NULL;
		return;
	}
	while ((fd = accept4(loop_fd_get(lf), NULL, NULL, SOCK_CLOEXEC)) !=
	    -1) {
		if (rfb_add_viewer(cap->d, fd, cap->control, cap) != 0)
			log_warn("capability.viewer_refused", "id=%s", cap->id);
	}
}

/*
 * The socket's name is a short serial number: only guestd's user reaches
 * the 0700 directory, so the name needs no secrecy, and a short one keeps
 * sun_path's 108 bytes for a deep TMPDIR (a local computer's lies inside
 * the controller's data directory).
 */
static int
cap_listen(struct capability *cap)
{
	static unsigned long	serial;
	int			fd, r;

	if ((r = cap_dir_init()) != 0)
		return r;
	cap->sun.sun_family = AF_UNIX;
	if (snprintf(cap->sun.sun_path, sizeof cap->sun.sun_path, "%s/%lu",
	    cap_dir, ++serial) >= (int)sizeof cap->sun.sun_path) {
		cap->sun.sun_path[0] = '\0';
		return ERR_NAME_TOO_LONG;
	}
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK,
	    0)) == -1)
		return err_from_errno(errno);
	if (bind(fd, (struct sockaddr *)&cap->sun, sizeof cap->sun) == -1 ||
	    listen(fd, CAP_BACKLOG) == -1) {
		r = err_from_errno(errno);
		close(fd);
		return r;
	}
	if ((cap->lf = loop_fd_add(fd, cap_accept_cb, cap)) == NULL) {
		(void)unlink(cap->sun.sun_path);
		return ERR_INTERNAL;
	}
	return 0;
}

/* ---- lifecycle ----------------------------------------------------------- */

static void
cap_update_controlled(struct display *d)
{
	struct capability	*cap;
	int			 on = 0;

	LIST_FOREACH(cap, &cap_list, entry) {
		if (cap->d == d && cap->control)
			on = 1;
	}
	display_set_controlled(d, on);
}

static void
cap_free(struct capability *cap)
{
	loop_timer_cancel(cap->expiry);
	loop_fd_close(cap->lf);
	if (cap->sun.sun_path[0] != '\0')
		(void)unlink(cap->sun.sun_path);
	token_wipe(cap->token, sizeof cap->token);
	free(cap);
}

static void
cap_revoke(struct capability *cap, const char *reason)
{
	struct display		*d = cap->d;

	LIST_REMOVE(cap, entry);
	/* Websockets first (closed_by revoked), then the RFB side. */
	gateway_drop(cap);
	if (cap_revoke_hook != NULL)
		cap_revoke_hook(cap);	/* its terminals (pty.c, G-20) */
	rfb_drop_owner(d, cap);
	log_info("screen.capability.revoked", "id=%s policy=%s reason=%s",
	    cap->id, cap->control ? "control" : "view", reason);
	control_broadcast("screen.capability.revoked", json_pack(
	    "{s:s,s:s,s:s}", "id", cap->id, "policy",
	    cap->control ? "control" : "view", "reason", reason));
	/* A closing display is past caring whether it is controlled. */
	if (cap->control && strcmp(reason, "display_closed") != 0)
		cap_update_controlled(d);
	cap_free(cap);
}

static void
cap_expire(void *arg)
{
	struct capability	*cap = arg;

	cap->expiry = NULL;
	cap_revoke(cap, "expired");
}

static void
cap_display_closing(struct display *d)
{
	struct capability	*cap, *next;

	LIST_FOREACH_SAFE(cap, &cap_list, entry, next) {
		if (cap->d == d)
			cap_revoke(cap, "display_closed");
	}
	rfb_display_closing(d);
}

void
capability_init(void)
{
	display_set_hooks(rfb_display_ready, cap_display_closing);
}

/* ---- ops ----------------------------------------------------------------- */

int
capability_op_grant(struct control_conn *c, uint32_t id, json_t *args,
    char *detail, size_t detaillen)
{
	static const char *const keys[] = { "bot", "fence", "policy", "ttl",
	    NULL };
	struct capability	*cap = NULL;
	struct display		*d;
	struct rfb		*scr;
	const char		*bot, *policy;
	int64_t			 ttl = 0;
	json_t			*res;
	char			 path[16 + TOKEN_STRLEN];
	int			 r = ERR_INTERNAL;

	(void)detaillen;
	if ((r = jsonx_only_keys(args, keys, detail)) != 0)
		return r;
	if ((r = jsonx_str(args, "bot", 64, &bot, detail)) != 0)
		return r == ERR_NOT_FOUND ? ERR_BAD_REQUEST : r;
	if ((r = path_bot_valid(bot)) != 0)
		return r;
	if ((r = jsonx_str(args, "policy", 16, &policy, detail)) != 0)
		return r == ERR_NOT_FOUND ? ERR_BAD_REQUEST : r;
	if (strcmp(policy, "view") != 0 && strcmp(policy, "control") != 0) {
		snprintf(detail, detaillen, "(policy is view or control)");
		return ERR_BAD_REQUEST;
	}
	r = jsonx_int(args, "ttl", 1, CAP_TTL_MAX, &ttl, detail);
	if (r != 0 && r != ERR_NOT_FOUND)
		return r;
	/* An absent ttl is fine: its "missing" must not explain a later error. */
	detail[0] = '\0';
	if ((d = display_find(bot)) == NULL)
		return ERR_NO_DISPLAY;
	if ((r = rfb_screen(d, &scr)) != 0)
		return r;
	cap = xcalloc(1, sizeof *cap);
	cap->d = d;
	cap->control = strcmp(policy, "control") == 0;
	snprintf(cap->bot, sizeof cap->bot, "%s", bot);
	if ((r = token_new(cap->token, sizeof cap->token)) != 0 ||
	    (r = token_hex(cap->id, 8)) != 0)
		goto out;
	if ((r = cap_listen(cap)) != 0)
		goto out;
	if (ttl > 0) {
		cap->expires_ms = (int64_t)cap_wall_ms() + ttl * 1000;
		cap->expiry = loop_timer_add((uint64_t)ttl * 1000, cap_expire,
		    cap);
	}
	LIST_INSERT_HEAD(&cap_list, cap, entry);
	if (cap->control)
		display_set_controlled(d, 1);
	snprintf(path, sizeof path, "/screen/%s", cap->token);
	res = json_pack("{s:s,s:s,s:s,s:s,s:s}", "token", cap->token,
	    "id", cap->id, "policy", policy, "bot", bot, "path", path);
	json_object_set_new(res, "expires_ms", cap->expires_ms > 0 ?
	    json_integer(cap->expires_ms) : json_null());
	explicit_bzero(path, sizeof path);
	log_info("screen.capability.granted", "id=%s policy=%s bot=%s "
	    "ttl=%lld", cap->id, policy, bot, (long long)ttl);
	cap = NULL;
	r = control_reply(c, id, res);
out:
	if (cap != NULL)
		cap_free(cap);
	return r;
}

int
capability_op_revoke(struct control_conn *c, uint32_t id, json_t *args,
    char *detail, size_t detaillen)
{
	static const char *const keys[] = { "token", "id", "bot", "fence",
	    NULL };
	struct capability	*cap;
	const char		*t = NULL, *cidarg = NULL;
	char			 cid[17];
	int			 r, rt, ri;

	if ((r = jsonx_only_keys(args, keys, detail)) != 0)
		return r;
	/* The token, or the public id: a controller need not keep tokens. */
	rt = jsonx_str(args, "token", 256, &t, detail);
	ri = jsonx_str(args, "id", sizeof cid - 1, &cidarg, detail);
	if ((rt != 0 && rt != ERR_NOT_FOUND) ||
	    (ri != 0 && ri != ERR_NOT_FOUND))
		return rt != 0 && rt != ERR_NOT_FOUND ? rt : ri;
	if ((t == NULL) == (cidarg == NULL)) {
		snprintf(detail, detaillen, "Give exactly one of token and id.");
		return ERR_BAD_REQUEST;
	}
	cap = t != NULL ? capability_find(t, strlen(t)) :
	    capability_find_id(cidarg);
	if (cap == NULL)
		return ERR_NOT_FOUND;
	snprintf(cid, sizeof cid, "%s", cap->id);
	cap_revoke(cap, "revoked");
	return control_reply(c, id, json_pack("{s:s,s:b}", "id", cid,
	    "revoked", 1));
}

/*
 * Move the deadline of a live capability to ttl seconds from now (the
 * controller's lease heartbeat).  An expired one stays dead: NOT_FOUND.
 */
int
capability_op_renew(struct control_conn *c, uint32_t id, json_t *args,
    char *detail, size_t detaillen)
{
	static const char *const keys[] = { "token", "id", "ttl", "bot",
	    "fence", NULL };
	struct capability	*cap;
	const char		*t = NULL, *cidarg = NULL;
	int64_t			 ttl;
	int			 r, rt, ri;

	if ((r = jsonx_only_keys(args, keys, detail)) != 0)
		return r;
	rt = jsonx_str(args, "token", 256, &t, detail);
	ri = jsonx_str(args, "id", 16, &cidarg, detail);
	if ((rt != 0 && rt != ERR_NOT_FOUND) ||
	    (ri != 0 && ri != ERR_NOT_FOUND))
		return rt != 0 && rt != ERR_NOT_FOUND ? rt : ri;
	if ((t == NULL) == (cidarg == NULL)) {
		snprintf(detail, detaillen, "Give exactly one of token and id.");
		return ERR_BAD_REQUEST;
	}
	if ((r = jsonx_int(args, "ttl", 1, CAP_TTL_MAX, &ttl, detail)) != 0)
		return r == ERR_NOT_FOUND ? ERR_BAD_REQUEST : r;
	cap = t != NULL ? capability_find(t, strlen(t)) :
	    capability_find_id(cidarg);
	if (cap == NULL || (cap->expires_ms > 0 &&
	    (int64_t)cap_wall_ms() >= cap->expires_ms))
		return ERR_NOT_FOUND;
	loop_timer_cancel(cap->expiry);
	cap->expires_ms = (int64_t)cap_wall_ms() + ttl * 1000;
	cap->expiry = loop_timer_add((uint64_t)ttl * 1000, cap_expire, cap);
	log_debug("screen.capability.renewed", "id=%s ttl=%lld", cap->id,
	    (long long)ttl);
	return control_reply(c, id, json_pack("{s:s,s:I}", "id", cap->id,
	    "expires_ms", (json_int_t)cap->expires_ms));
}

/* SPDX-License-Identifier: MIT */
/*
 * The drop-in /v1/desktop control server (doc/DESIGN.md G-33).
 *
 * Today's images run a small HTTP server that spawns xdotool once per
 * step and grabs the screen with another process; controllers written for
 * it send xdotool argv lists.  We accept the same requests and run them
 * in-process: every argv is translated into native actions (vocab.h),
 * the whole request becomes one batch that is validated before any event
 * is sent, and xtest.c applies it on the loop.  keydown/keyup have no
 * native kind (a native hold always releases), so they are ACTION_HOLD
 * entries marked in the plan and sent here with XTest between the
 * xtest.c segments.  Waits, the executor's own pauses and the settle time
 * are loop timers: nothing ever blocks the loop.
 *
 * The token is guestd's control secret, compared in constant time with
 * token_equal; a failed token is never logged.  The body is read through
 * LWS_CALLBACK_HTTP_BODY under a hard cap: past it the rest is discarded
 * unread into memory and the answer is 400 TOO_LARGE.
 */
#include "autoconf.h"

#include <sys/types.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <spawn.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <X11/Xatom.h>
#include <X11/Xlib.h>
#include <X11/extensions/XTest.h>
#include <jansson.h>
#include <libwebsockets.h>

#include "vocab.h"
#include "base64.h"
#include "capture.h"
#include "deskserver.h"
#include "conncap.h"
#include "conncap-lws.h"
#include "display.h"
#include "err.h"
#include "exec.h"
#include "guestd.h"
#include "http-head.h"
#include "xtest.h"
#include "keymap.h"
#include "json.h"
#include "log.h"
#include "loop.h"
#include "observe.h"
#include "queue-compat.h"
#include "token.h"
#include "xmalloc.h"

#define DESKSERVER_CHUNK		(64 * 1024)
#define DESKSERVER_DISCARD_MAX	(4 * 1024 * 1024)	/* then just close */
#define DESKSERVER_TITLE_MAX	1024
#define DESKSERVER_QUEUE_MAX	8	/* requests waiting per display */
#define DESKSERVER_QUEUE_MS		10000	/* how long one may wait its turn */
#define DESKSERVER_LAUNCH_MS	200	/* a launch that fails fails by then */
/*
 * Connections (conncap.h): a peer address holds at most
 * DESKSERVER_PEER_CONNS, those without the token at most
 * DESKSERVER_MAX_CONNS - DESKSERVER_RESERVE; past either a newcomer sheds
 * the oldest without the token.  Small: guestd's fds must stay below
 * FD_SETSIZE for libvncserver.
 */
#define DESKSERVER_MAX_CONNS	64
#define DESKSERVER_RESERVE	16
#define DESKSERVER_PEER_CONNS	32

/* ---- argv -> actions ----------------------------------------------------- */

/* A plan under construction: native action objects plus their roles. */
struct deskserver_build {
	json_t		*arr;
	unsigned char	*keyev;
	size_t		*step;
	struct deskserver_launch **launch;	/* DESKSERVER_LAUNCH: what to run */
	size_t		 n, cap;
	size_t		 stepno;
	int		 slot;		/* the request's display; -1: any */
	struct vocab_error *err;
};

static int deskserver_fail(struct vocab_error *, int, int, const char *, ...)
    __attribute__((format(printf, 4, 5)));

static int
deskserver_fail(struct vocab_error *err, int code, int index, const char *fmt,
    ...)
{
	va_list	ap;

	err->code = code;
	err->index = index;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof err->msg, fmt, ap);
	va_end(ap);
	return code;
}

/* Append o (stolen) with its role. */
static int
deskserver_add(struct deskserver_build *cb, json_t *o, int keyev)
{
	if (o == NULL)
		return deskserver_fail(cb->err, ERR_NOMEM, -1, "out of memory");
	if (cb->n >= VOCAB_MAX) {
		json_decref(o);
		return deskserver_fail(cb->err, ERR_TOO_LARGE, -1, "the steps "
		    "make more than %d actions", VOCAB_MAX);
	}
	if (cb->n == cb->cap) {
		cb->cap = cb->cap == 0 ? 16 : cb->cap * 2;
		cb->keyev = xrealloc(cb->keyev, cb->cap);
		cb->step = xrealloc(cb->step, cb->cap * sizeof *cb->step);
		cb->launch = xrealloc(cb->launch, cb->cap *
		    sizeof *cb->launch);
	}
	cb->keyev[cb->n] = (unsigned char)keyev;
	cb->step[cb->n] = cb->stepno;
	cb->launch[cb->n] = NULL;
	cb->n++;
	json_array_append_new(cb->arr, o);
	return 0;
}

static const char *const deskserver_commands[] = {
	"key", "keydown", "keyup", "type", "mousemove", "click",
	"mousedown", "mouseup", "sleep", NULL
};

static int
deskserver_is_command(const char *s)
{
	size_t	i;

	for (i = 0; deskserver_commands[i] != NULL; i++)
		if (strcmp(s, deskserver_commands[i]) == 0)
			return 1;
	return 0;
}

/* The argv being read: position i of n. */
struct deskserver_xdo {
	const char *const	*argv;
	size_t			 n, i;
	const char		*cmd;
	struct deskserver_build	*cb;
};

#define COPT_CLEAR	0x01
#define COPT_DELAY	0x02
#define COPT_SYNC	0x04
#define COPT_REPEAT	0x08

/* Integer in [min, max], the whole string. */
static int
deskserver_int(const char *s, long min, long max, long *out)
{
	char	*end;
	long	 v;

	if (*s == '\0' || strlen(s) > 12)
		return -1;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno != 0 || *end != '\0' || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

/*
 * Options of the current command (getopt_long_only style: "-opt",
 * "--opt", "--opt=V", "--opt V"; "--" ends them; the first non-option
 * ends them too).  Only those in allowed are accepted.
 */
static int
deskserver_options(struct deskserver_xdo *x, unsigned allowed, long *repeat)
{
	static const struct { const char *name; unsigned bit; int val; } o[] = {
		{ "clearmodifiers", COPT_CLEAR, 0 },
		{ "delay", COPT_DELAY, 1 },
		{ "sync", COPT_SYNC, 0 },
		{ "repeat", COPT_REPEAT, 1 },
	};
	const char	*a, *name, *val, *eq;
	size_t		 k, nlen;
	long		 v;

	while (x->i < x->n) {
		a = x->argv[x->i];
		if (strcmp(a, "--") == 0) {
			x->i++;
			return 0;
		}
		/* "-5" is a number, not an option. */
		if (a[0] != '-' || a[1] == '\0' ||
		    (a[1] >= '0' && a[1] <= '9'))
			return 0;
		name = a + (a[1] == '-' ? 2 : 1);
		eq = strchr(name, '=');
		nlen = eq != NULL ? (size_t)(eq - name) : strlen(name);
		for (k = 0; k < sizeof o / sizeof o[0]; k++)
			if (strlen(o[k].name) == nlen &&
			    strncmp(o[k].name, name, nlen) == 0)
				break;
		if (k == sizeof o / sizeof o[0] || !(allowed & o[k].bit))
			return deskserver_fail(x->cb->err, ERR_ACTION_INVALID,
			    (int)x->i, "xdotool %s: option %.40s is not "
			    "supported", x->cmd, a);
		val = NULL;
		if (o[k].val) {
			if (eq != NULL)
				val = eq + 1;
			else if (x->i + 1 < x->n)
				val = x->argv[++x->i];
			else
				return deskserver_fail(x->cb->err,
				    ERR_ACTION_INVALID, (int)x->i, "xdotool "
				    "%s: option %s needs a value", x->cmd,
				    o[k].name);
			if (deskserver_int(val, o[k].bit == COPT_REPEAT ? 1 : 0,
			    o[k].bit == COPT_REPEAT ? DESKSERVER_REPEAT_MAX :
			    86400000, &v) != 0)
				return deskserver_fail(x->cb->err,
				    ERR_ACTION_INVALID, (int)x->i, "xdotool "
				    "%s: %s wants a number%s", x->cmd,
				    o[k].name, o[k].bit == COPT_REPEAT ?
				    " from 1 to 100" : "");
			if (o[k].bit == COPT_REPEAT && repeat != NULL)
				*repeat = v;
		} else if (eq != NULL)
			return deskserver_fail(x->cb->err, ERR_ACTION_INVALID,
			    (int)x->i, "xdotool %s: option %s takes no "
			    "value", x->cmd, o[k].name);
		x->i++;
	}
	return 0;
}

/* The next argument of the command, or an error naming what is missing. */
static int
deskserver_arg(struct deskserver_xdo *x, const char *what, const char **out)
{
	*out = "";
	if (x->i >= x->n)
		return deskserver_fail(x->cb->err, ERR_ACTION_INVALID, (int)x->i,
		    "xdotool %s: %s is missing", x->cmd, what);
	*out = x->argv[x->i++];
	return 0;
}

static const char *
deskserver_button_name(long b)
{
	static const char *const names[] = { NULL, "left", "middle", "right",
	    NULL, NULL, NULL, NULL, "back", "forward" };

	return b >= 1 && b <= 9 ? names[b] : NULL;
}

static int
deskserver_button(struct deskserver_xdo *x, long *b)
{
	const char	*s;
	int		 r;

	if ((r = deskserver_arg(x, "the button", &s)) != 0)
		return r;
	if (deskserver_int(s, 1, 9, b) != 0)
		return deskserver_fail(x->cb->err, ERR_ACTION_INVALID,
		    (int)x->i - 1, "xdotool %s: button must be 1 to 9",
		    x->cmd);
	return 0;
}

/* key, keydown, keyup: key sequences until the end or the next command. */
static int
deskserver_key(struct deskserver_xdo *x, int keyev)
{
	const char	*a;
	json_t		*o;
	size_t		 first;
	int		 r;

	if ((r = deskserver_options(x, COPT_CLEAR | COPT_DELAY, NULL)) != 0)
		return r;
	first = x->i;
	while (x->i < x->n && !deskserver_is_command(x->argv[x->i])) {
		a = x->argv[x->i];
		if (keyev == DESKSERVER_KEY_NONE)
			o = json_pack("{s:s,s:s}", "kind", "key", "keys", a);
		else
			o = json_pack("{s:s,s:s,s:i}", "kind", "hold", "keys",
			    a, "duration_ms", 0);
		if (o == NULL)
			return deskserver_fail(x->cb->err, ERR_KEY_UNKNOWN,
			    (int)x->i, "xdotool %s: the key sequence is not "
			    "valid UTF-8", x->cmd);
		if ((r = deskserver_add(x->cb, o, keyev)) != 0)
			return r;
		x->i++;
	}
	if (x->i == first)
		return deskserver_fail(x->cb->err, ERR_ACTION_INVALID, (int)x->i,
		    "xdotool %s: a key sequence is missing", x->cmd);
	return 0;
}

/* type: every remaining argument, concatenated (xdotool types each). */
static int
deskserver_type(struct deskserver_xdo *x)
{
	char	*s;
	size_t	 len = 0, k, off = 0;
	json_t	*o;
	int	 r;

	if ((r = deskserver_options(x, COPT_CLEAR | COPT_DELAY, NULL)) != 0)
		return r;
	if (x->i >= x->n)
		return deskserver_fail(x->cb->err, ERR_ACTION_INVALID, (int)x->i,
		    "xdotool type: the text is missing");
	for (k = x->i; k < x->n; k++)
		len += strlen(x->argv[k]);
	if (len == 0) {
		x->i = x->n;
		return 0;	/* nothing to type */
	}
	s = xmalloc(len + 1);
	for (k = x->i; k < x->n; k++) {
		memcpy(s + off, x->argv[k], strlen(x->argv[k]));
		off += strlen(x->argv[k]);
	}
	s[len] = '\0';
	o = json_pack("{s:s,s:s%}", "kind", "type", "text", s, len);
	free(s);
	if (o == NULL)
		return deskserver_fail(x->cb->err, ERR_ACTION_INVALID, (int)x->i,
		    "xdotool type: the text is not valid UTF-8");
	x->i = x->n;
	return deskserver_add(x->cb, o, DESKSERVER_KEY_NONE);
}

static int
deskserver_mousemove(struct deskserver_xdo *x)
{
	const char	*sx, *sy;
	long		 px, py;
	int		 r;

	if ((r = deskserver_options(x, COPT_CLEAR | COPT_SYNC, NULL)) != 0 ||
	    (r = deskserver_arg(x, "X", &sx)) != 0 ||
	    (r = deskserver_arg(x, "Y", &sy)) != 0)
		return r;
	if (deskserver_int(sx, -VOCAB_COORD_MAX, VOCAB_COORD_MAX, &px) != 0 ||
	    deskserver_int(sy, -VOCAB_COORD_MAX, VOCAB_COORD_MAX, &py) != 0)
		return deskserver_fail(x->cb->err, ERR_ACTION_INVALID,
		    (int)x->i - 2, "xdotool mousemove: X and Y must be "
		    "integers (window, polar and restore forms are not "
		    "supported)");
	/*
	 * The X server keeps the pointer on the screen, so xdotool moves
	 * to an off-screen point land on the nearest edge: the far edges
	 * are clamped once the screen is known (deskserver_clamp).
	 */
	if (px < 0)
		px = 0;
	if (py < 0)
		py = 0;
	return deskserver_add(x->cb, json_pack("{s:s,s:i,s:i}", "kind", "move",
	    "x", (int)px, "y", (int)py), DESKSERVER_KEY_NONE);
}

/* Wheel "buttons" 4..7 are scrolls; the others clicks of up to 3. */
static int
deskserver_click(struct deskserver_xdo *x)
{
	static const char *const dirs[] = { "up", "down", "left", "right" };
	long	 b, repeat = 1, k;
	int	 r;

	if ((r = deskserver_options(x, COPT_CLEAR | COPT_DELAY | COPT_REPEAT,
	    &repeat)) != 0 || (r = deskserver_button(x, &b)) != 0)
		return r;
	if (b >= 4 && b <= 7) {
		for (; repeat > 0; repeat -= k) {
			k = repeat > VOCAB_SCROLL_MAX ? VOCAB_SCROLL_MAX :
			    repeat;
			if ((r = deskserver_add(x->cb, json_pack("{s:s,s:s,s:i}",
			    "kind", "scroll", "direction", dirs[b - 4],
			    "amount", (int)k), DESKSERVER_KEY_NONE)) != 0)
				return r;
		}
		return 0;
	}
	for (; repeat > 0; repeat -= k) {
		k = repeat > 3 ? 3 : repeat;
		if ((r = deskserver_add(x->cb, json_pack("{s:s,s:s,s:i}", "kind",
		    "click", "button", deskserver_button_name(b), "count", (int)k),
		    DESKSERVER_KEY_NONE)) != 0)
			return r;
	}
	return 0;
}

static int
deskserver_mousebutton(struct deskserver_xdo *x, int down)
{
	long	 b;
	int	 r;

	if ((r = deskserver_options(x, COPT_CLEAR, NULL)) != 0 ||
	    (r = deskserver_button(x, &b)) != 0)
		return r;
	if (b >= 4 && b <= 7)
		return deskserver_fail(x->cb->err, ERR_ACTION_INVALID,
		    (int)x->i - 1, "xdotool %s: the wheel (4 to 7) can only "
		    "be clicked", x->cmd);
	return deskserver_add(x->cb, json_pack("{s:s,s:s}", "kind",
	    down ? "down" : "up", "button", deskserver_button_name(b)),
	    DESKSERVER_KEY_NONE);
}

static int
deskserver_wait(struct deskserver_build *cb, double ms)
{
	if (ms > DESKSERVER_WAIT_MAX_MS)
		ms = DESKSERVER_WAIT_MAX_MS;
	return deskserver_add(cb, json_pack("{s:s,s:i}", "kind", "wait", "ms",
	    (int)ms), DESKSERVER_KEY_NONE);
}

static int
deskserver_sleep(struct deskserver_xdo *x)
{
	const char	*s;
	char		*end;
	double		 sec;
	int		 r;

	if ((r = deskserver_arg(x, "the seconds", &s)) != 0)
		return r;
	errno = 0;
	sec = strtod(s, &end);
	if (*s == '\0' || *end != '\0' || errno != 0 || !isfinite(sec) ||
	    sec < 0)
		return deskserver_fail(x->cb->err, ERR_ACTION_INVALID,
		    (int)x->i - 1, "xdotool sleep: seconds must be a number "
		    ">= 0");
	return deskserver_wait(x->cb, sec * 1000 > DESKSERVER_WAIT_MAX_MS ?
	    DESKSERVER_WAIT_MAX_MS : sec * 1000);
}

/* ---- env, launches and the paste pipeline ----------------------------- */

static void
deskserver_launch_free(struct deskserver_launch *l)
{
	size_t	k;

	if (l == NULL)
		return;
	for (k = 0; l->argv != NULL && l->argv[k] != NULL; k++)
		free(l->argv[k]);
	free(l->argv);
	free(l->profile);
	free(l);
}

/* A display in an env assignment: ":N" or ":N.0", nothing else. */
static int
deskserver_display_str(const char *s, int *slot)
{
	char	*end;
	long	 n;

	if (s[0] != ':' || s[1] < '0' || s[1] > '9' || strlen(s) > 16)
		return -1;
	errno = 0;
	n = strtol(s + 1, &end, 10);
	if (errno != 0 || n > 65535 || (*end != '\0' &&
	    strcmp(end, ".0") != 0))
		return -1;
	*slot = (int)n;
	return 0;
}

/*
 * Upstream's supervisor runs every step through env(1): ["env",
 * "DISPLAY=:40", ("RAKAZO_BROWSER_PROFILE=…",) command …].  Only those
 * names and XAUTHORITY may be set, once each; DISPLAY must name the
 * request's display; XAUTHORITY is accepted and not used (guestd owns
 * the display's cookie file).  *profile: the profile assignment, if any.
 */
static int
deskserver_env(struct deskserver_xdo *x, const char **profile)
{
	const char	*a, *eq, *v;
	size_t		 nlen;
	int		 slot, seen_d = 0, seen_x = 0;

	*profile = NULL;
	x->i = 1;
	x->cmd = "env";
	while (x->i < x->n && (eq = strchr(a = x->argv[x->i], '=')) != NULL &&
	    eq != a) {
		nlen = (size_t)(eq - a);
		v = eq + 1;
		if (nlen == 7 && strncmp(a, "DISPLAY", 7) == 0 && !seen_d) {
			seen_d = 1;
			if (deskserver_display_str(v, &slot) != 0)
				return deskserver_fail(x->cb->err,
				    ERR_ACTION_INVALID, (int)x->i, "env: "
				    "DISPLAY=%.20s is not a display of this "
				    "machine (:N)", v);
			if (x->cb->slot >= 0 && slot != x->cb->slot)
				return deskserver_fail(x->cb->err,
				    ERR_DISPLAY_MISMATCH, (int)x->i, "env: "
				    "DISPLAY=:%d, but the request is for "
				    "display :%d", slot, x->cb->slot);
		} else if (nlen == 10 && strncmp(a, "XAUTHORITY", 10) == 0 &&
		    !seen_x)
			seen_x = 1;
		else if (nlen == 22 && strncmp(a, "RAKAZO_BROWSER_PROFILE",
		    22) == 0 && *profile == NULL) {
			if (v[0] != '/' || strstr(v, "/..") != NULL ||
			    strlen(v) > 1024)
				return deskserver_fail(x->cb->err,
				    ERR_ACTION_INVALID, (int)x->i, "env: "
				    "RAKAZO_BROWSER_PROFILE must be an "
				    "absolute path without ..");
			*profile = a;
		} else
			return deskserver_fail(x->cb->err, ERR_ACTION_INVALID,
			    (int)x->i, "env: only DISPLAY, XAUTHORITY and "
			    "RAKAZO_BROWSER_PROFILE may be set, once each "
			    "(not %.*s)", (int)(nlen > 40 ? 40 : nlen), a);
		x->i++;
	}
	if (x->i >= x->n)
		return deskserver_fail(x->cb->err, ERR_ACTION_INVALID, (int)x->i,
		    "env: the command is missing");
	return 0;
}

/*
 * The programs upstream's supervisor starts through this server, with
 * how many arguments they take.  They start as guestd's own children
 * would (the workspace user, a session of their own, the desktop's
 * DISPLAY and XAUTHORITY), like the tools API's launch_app and
 * open_path; any other program is refused.
 */
static const struct {
	const char	*name;
	size_t		 minargs, maxargs;
	int		 profile;	/* may get RAKAZO_BROWSER_PROFILE */
} deskserver_launchers[] = {
	{ "xdg-open", 1, 1, 1 },
	{ "rakazo-browser", 0, 1, 1 },
	{ "xterm", 0, 1, 0 },
};

static int
deskserver_launch_parse(struct deskserver_xdo *x, const char *profile)
{
	struct deskserver_launch	*l;
	const char		*c = x->argv[x->i];
	size_t			 k, nargs = x->n - x->i - 1;
	json_t			*o;
	int			 r;

	for (k = 0; k < sizeof deskserver_launchers / sizeof deskserver_launchers[0];
	    k++)
		if (strcmp(c, deskserver_launchers[k].name) == 0)
			break;
	if (k == sizeof deskserver_launchers / sizeof deskserver_launchers[0])
		return deskserver_fail(x->cb->err, ERR_ACTION_INVALID, (int)x->i,
		    "%.40s is not run by this server (it runs xdotool forms, "
		    "xdg-open, rakazo-browser and xterm); start other "
		    "programs with the launch_app tool or exec", c);
	if (nargs < deskserver_launchers[k].minargs ||
	    nargs > deskserver_launchers[k].maxargs)
		return deskserver_fail(x->cb->err, ERR_ACTION_INVALID, (int)x->i,
		    "%s takes %s argument%s", c,
		    deskserver_launchers[k].minargs == 1 ? "one" : "at most one",
		    "");
	if (profile != NULL && !deskserver_launchers[k].profile)
		return deskserver_fail(x->cb->err, ERR_ACTION_INVALID, (int)x->i,
		    "env: RAKAZO_BROWSER_PROFILE is for xdg-open and "
		    "rakazo-browser only");
	o = json_pack("{s:s,s:i}", "kind", "wait", "ms", 0);
	if ((r = deskserver_add(x->cb, o, DESKSERVER_LAUNCH)) != 0)
		return r;
	l = xcalloc(1, sizeof *l);
	l->argv = xcalloc(nargs + 2, sizeof *l->argv);
	for (k = 0; k <= nargs; k++)
		l->argv[k] = xstrdup(x->argv[x->i + k]);
	l->profile = profile != NULL ? xstrdup(profile) : NULL;
	x->cb->launch[x->cb->n - 1] = l;
	x->i = x->n;
	return 0;
}

/* Strict base64 (RFC 4648, padded); the length decoded or -1. */
static ssize_t
deskserver_unbase64(const char *in, size_t n, char *out)
{
	static const char	 t[] =
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	size_t			 i, k, o = 0, pad;
	uint32_t		 v;
	const char		*p;

	if (n % 4 != 0)
		return -1;
	for (i = 0; i < n; i += 4) {
		v = 0;
		pad = 0;
		for (k = 0; k < 4; k++) {
			if (in[i + k] == '=' && i + 4 == n && k >= 2) {
				pad++;
				v <<= 6;
				continue;
			}
			if (pad > 0 || in[i + k] == '\0' ||
			    (p = strchr(t, in[i + k])) == NULL)
				return -1;
			v = v << 6 | (uint32_t)(p - t);
		}
		out[o++] = (char)(v >> 16);
		if (pad < 2)
			out[o++] = (char)(v >> 8);
		if (pad < 1)
			out[o++] = (char)v;
	}
	return (ssize_t)o;
}

/*
 * Upstream types text off the ASCII range by a shell pipeline that puts
 * it on the clipboard and presses ctrl+v.  Exactly that pipeline is
 * accepted and becomes a type action of the same text (guestd types any
 * character); any other shell line is refused.
 */
#define DESKSERVER_PASTE_HEAD	"printf %s "
#define DESKSERVER_PASTE_TAIL	" | base64 -d | xclip -selection clipboard " \
				"-input && sleep 0.2 && xdotool key " \
				"--clearmodifiers ctrl+v"

static int
deskserver_paste_parse(struct deskserver_xdo *x)
{
	const char	*s, *b64;
	char		*text;
	size_t		 n, hl = strlen(DESKSERVER_PASTE_HEAD),
			 tl = strlen(DESKSERVER_PASTE_TAIL);
	ssize_t		 len;
	json_t		*o;

	if (x->n - x->i != 3 || strcmp(x->argv[x->i + 1], "-c") != 0 ||
	    (n = strlen(s = x->argv[x->i + 2])) <= hl + tl ||
	    strncmp(s, DESKSERVER_PASTE_HEAD, hl) != 0 ||
	    strcmp(s + n - tl, DESKSERVER_PASTE_TAIL) != 0)
		return deskserver_fail(x->cb->err, ERR_ACTION_INVALID, (int)x->i,
		    "sh is run only for the clipboard paste of upstream's "
		    "supervisor; run shell commands with exec (the shell "
		    "tool)");
	b64 = s + hl;
	n -= hl + tl;
	text = xmalloc(n / 4 * 3 + 1);
	if ((len = deskserver_unbase64(b64, n, text)) < 0) {
		free(text);
		return deskserver_fail(x->cb->err, ERR_ACTION_INVALID,
		    (int)x->i + 2, "sh: the pasted text is not base64");
	}
	o = json_pack("{s:s,s:s%}", "kind", "type", "text", text,
	    (size_t)len);
	free(text);
	if (o == NULL)
		return deskserver_fail(x->cb->err, ERR_ACTION_INVALID,
		    (int)x->i + 2, "sh: the pasted text is not valid UTF-8");
	x->i = x->n;
	return len == 0 ? (json_decref(o), 0) :
	    deskserver_add(x->cb, o, DESKSERVER_KEY_NONE);
}

static int
deskserver_xdo_parse(struct deskserver_build *cb, const char *const *argv, size_t n)
{
	struct deskserver_xdo	 x;
	const char		*c, *base, *profile = NULL;
	size_t			 k;
	int			 r;

	if (n == 0)
		return deskserver_fail(cb->err, ERR_BAD_REQUEST, -1, "argv is "
		    "empty");
	if (n > DESKSERVER_ARGV_MAX)
		return deskserver_fail(cb->err, ERR_TOO_LARGE, -1, "argv has more "
		    "than %d entries", DESKSERVER_ARGV_MAX);
	for (k = 0; k < n; k++)
		if (strlen(argv[k]) > DESKSERVER_ARG_MAX)
			return deskserver_fail(cb->err, ERR_TOO_LARGE, (int)k,
			    "argv[%zu] is longer than %d bytes", k,
			    DESKSERVER_ARG_MAX);
	memset(&x, 0, sizeof x);
	x.argv = argv;
	x.n = n;
	x.cb = cb;
	if (strcmp(argv[0], "env") == 0) {
		if ((r = deskserver_env(&x, &profile)) != 0)
			return r;
		c = argv[x.i];
		if (strcmp(c, "sh") == 0 && profile == NULL)
			return deskserver_paste_parse(&x);
		if (strcmp(c, "xdotool") != 0 || profile != NULL)
			return deskserver_launch_parse(&x, profile);
		x.i++;
	} else {
		base = strrchr(argv[0], '/');
		if (strcmp(base != NULL ? base + 1 : argv[0], "xdotool") == 0)
			x.i = 1;
		else if (!deskserver_is_command(argv[0]))
			return deskserver_launch_parse(&x, NULL);
	}
	if (x.i >= n)
		return deskserver_fail(cb->err, ERR_BAD_REQUEST, -1, "argv names "
		    "no xdotool command");
	while (x.i < n) {
		c = x.cmd = argv[x.i++];
		if (strcmp(c, "key") == 0)
			r = deskserver_key(&x, DESKSERVER_KEY_NONE);
		else if (strcmp(c, "keydown") == 0)
			r = deskserver_key(&x, DESKSERVER_KEY_DOWN);
		else if (strcmp(c, "keyup") == 0)
			r = deskserver_key(&x, DESKSERVER_KEY_UP);
		else if (strcmp(c, "type") == 0)
			r = deskserver_type(&x);
		else if (strcmp(c, "mousemove") == 0)
			r = deskserver_mousemove(&x);
		else if (strcmp(c, "click") == 0)
			r = deskserver_click(&x);
		else if (strcmp(c, "mousedown") == 0)
			r = deskserver_mousebutton(&x, 1);
		else if (strcmp(c, "mouseup") == 0)
			r = deskserver_mousebutton(&x, 0);
		else if (strcmp(c, "sleep") == 0)
			r = deskserver_sleep(&x);
		else
			r = deskserver_fail(cb->err, ERR_ACTION_INVALID,
			    (int)x.i - 1, "xdotool command %.40s is not "
			    "supported (key, keydown, keyup, type, mousemove, "
			    "click, mousedown, mouseup, sleep)", c);
		if (r != 0)
			return r;
	}
	return 0;
}

static void
deskserver_build_clear(struct deskserver_build *cb)
{
	size_t	k;

	for (k = 0; cb->launch != NULL && k < cb->n; k++)
		deskserver_launch_free(cb->launch[k]);
	free(cb->launch);
	free(cb->keyev);
	free(cb->step);
	json_decref(cb->arr);
	cb->launch = NULL;
	cb->keyev = NULL;
	cb->step = NULL;
	cb->arr = NULL;
}

static void
deskserver_build_init(struct deskserver_build *cb, struct vocab_error *err)
{
	memset(cb, 0, sizeof *cb);
	memset(err, 0, sizeof *err);
	err->index = -1;
	cb->err = err;
	cb->slot = -1;
	if ((cb->arr = json_array()) == NULL)
		fatal("out of memory");
}

/* Parse the collected actions into the plan; frees cb's parts. */
static int
deskserver_build_finish(struct deskserver_build *cb, size_t nsteps,
    struct deskserver_plan **out)
{
	struct deskserver_plan	*p;
	struct vocab_error	 aerr;
	const char		*m;
	int			 r = 0;

	p = xcalloc(1, sizeof *p);
	p->nsteps = nsteps;
	if (cb->n > 0) {
		r = vocab_parse(cb->arr, 1, &p->b, &aerr);
		if (r != 0) {
			/* "action N: why" -> "step K: why" */
			m = aerr.msg;
			if (strncmp(m, "action ", 7) == 0 &&
			    strstr(m, ": ") != NULL)
				m = strstr(m, ": ") + 2;
			deskserver_fail(cb->err, r, aerr.index >= 0 &&
			    (size_t)aerr.index < cb->n ?
			    (int)cb->step[aerr.index] : -1, "%s", m);
		}
	}
	if (r == 0) {
		p->keyev = cb->keyev;
		p->step = cb->step;
		p->launch = cb->launch;
		cb->keyev = NULL;
		cb->step = NULL;
		cb->launch = NULL;
		*out = p;
		p = NULL;
	}
	deskserver_plan_free(p);
	deskserver_build_clear(cb);
	return r;
}

int
deskserver_xdotool_parse(const char *const *argv, size_t n,
    struct deskserver_plan **out, struct vocab_error *err)
{
	struct deskserver_build	 cb;
	int			 r;

	*out = NULL;
	deskserver_build_init(&cb, err);
	if ((r = deskserver_xdo_parse(&cb, argv, n)) != 0) {
		deskserver_build_clear(&cb);
		return r;
	}
	if ((r = deskserver_build_finish(&cb, 1, out)) != 0)
		err->index = -1;	/* which entry is not known here */
	return r;
}

/* One {argv} step: strings only. */
static int
deskserver_step_argv(struct deskserver_build *cb, json_t *v, size_t step)
{
	const char	*argv[DESKSERVER_ARGV_MAX];
	size_t		 i, n;
	json_t		*s;
	int		 r;

	if (!json_is_array(v))
		return deskserver_fail(cb->err, ERR_BAD_REQUEST, (int)step,
		    "step %zu: argv must be an array of strings", step);
	n = json_array_size(v);
	if (n > DESKSERVER_ARGV_MAX)
		return deskserver_fail(cb->err, ERR_TOO_LARGE, (int)step,
		    "step %zu: argv has more than %d entries", step,
		    DESKSERVER_ARGV_MAX);
	for (i = 0; i < n; i++) {
		s = json_array_get(v, i);
		if (!json_is_string(s))
			return deskserver_fail(cb->err, ERR_BAD_REQUEST,
			    (int)step, "step %zu: argv[%zu] is not a string",
			    step, i);
		if (json_string_length(s) > DESKSERVER_ARG_MAX)
			return deskserver_fail(cb->err, ERR_TOO_LARGE, (int)step,
			    "step %zu: argv[%zu] is longer than %d bytes",
			    step, i, DESKSERVER_ARG_MAX);
		if (strlen(json_string_value(s)) != json_string_length(s))
			return deskserver_fail(cb->err, ERR_BAD_REQUEST,
			    (int)step, "step %zu: argv[%zu] holds a NUL",
			    step, i);
		argv[i] = json_string_value(s);
	}
	if ((r = deskserver_xdo_parse(cb, argv, n)) != 0) {
		char	m[VOCAB_ERRLEN];

		snprintf(m, sizeof m, "%s", cb->err->msg);
		deskserver_fail(cb->err, r, (int)step, "step %zu: %s", step, m);
	}
	return r;
}

int
deskserver_steps_parse(json_t *steps, int slot, struct deskserver_plan **out,
    struct vocab_error *err)
{
	struct deskserver_build	 cb;
	json_t			*st, *argv, *wait;
	size_t			 i, n = 0;
	int			 r = 0;

	*out = NULL;
	deskserver_build_init(&cb, err);
	cb.slot = slot;
	if (steps != NULL && !json_is_array(steps)) {
		r = deskserver_fail(err, ERR_BAD_REQUEST, -1, "steps must be an "
		    "array");
		goto out;
	}
	n = steps != NULL ? json_array_size(steps) : 0;
	if (n > VOCAB_MAX) {
		r = deskserver_fail(err, ERR_TOO_LARGE, -1, "more than %d steps",
		    VOCAB_MAX);
		goto out;
	}
	for (i = 0; i < n && r == 0; i++) {
		cb.stepno = i;
		st = json_array_get(steps, i);
		argv = json_object_get(st, "argv");
		wait = json_object_get(st, "waitMs");
		if (!json_is_object(st) || (argv == NULL) == (wait == NULL))
			r = deskserver_fail(err, ERR_BAD_REQUEST, (int)i, "step "
			    "%zu: a step is {argv: [...]} or {waitMs: n}", i);
		else if (argv != NULL)
			r = deskserver_step_argv(&cb, argv, i);
		else if (!json_is_number(wait) || json_number_value(wait) < 0)
			r = deskserver_fail(err, ERR_BAD_REQUEST, (int)i, "step "
			    "%zu: waitMs must be a number >= 0", i);
		else
			r = deskserver_wait(&cb, json_number_value(wait));
	}
out:
	if (r != 0) {
		deskserver_build_clear(&cb);
		return r;
	}
	if ((r = deskserver_build_finish(&cb, n, out)) != 0 &&
	    err->index >= 0) {
		char	m[VOCAB_ERRLEN];

		snprintf(m, sizeof m, "%s", err->msg);
		deskserver_fail(err, r, err->index, "step %d: %s", err->index, m);
	}
	return r;
}

void
deskserver_plan_free(struct deskserver_plan *p)
{
	size_t	k;

	if (p == NULL)
		return;
	for (k = 0; p->launch != NULL && p->b != NULL && k < p->b->n; k++)
		deskserver_launch_free(p->launch[k]);
	free(p->launch);
	vocab_free(p->b);
	free(p->keyev);
	free(p->step);
	free(p);
}

/* ---- the server ---------------------------------------------------------- */

struct deskserver_job;

/* Per HTTP connection (lws's per-session data); reset per request. */
struct deskserver_conn {
	struct lws		*wsi;
	/* request */
	char			*body;
	size_t			 bodylen;
	int			 discard;	/* a verdict is already set */
	int			 v_code;	/* the verdict, an ERR_* */
	char			 v_msg[VOCAB_ERRLEN];
	struct deskserver_job	*job;
	/* response */
	int			 status;
	char			*out;
	size_t			 outlen, outoff;
	int			 hdr_sent;
	int			 close_after;
	uint8_t			*chunk;
};

/* A started program, until it exits (it may outlive its job). */
struct deskserver_child {
	struct deskserver_job	*job;		/* NULL once the job moved on */
	int			 exited;
	int			 status;
};

/* One request's steps, waiting its turn or running on a display. */
struct deskserver_job {
	struct deskserver_conn	*conn;
	int			 queued;	/* waiting for the display */
	uint64_t		 seq;		/* arrival order */
	struct deskserver_child	*child;		/* the launch being checked */
	struct deskserver_plan	*plan;
	int			 slot;
	uint64_t		 gen;
	int			 observe;
	int			 settle_ms;
	uint64_t		 frame0;
	uint64_t		 start_ms;
	size_t			 i;		/* next action */
	size_t			 seg_end;
	struct vocab_batch	 view;		/* b->v[i .. seg_end) */
	struct xtest_exec	*ex;
	struct loop_timer	*timer;
	int			 settling;
	LIST_ENTRY(deskserver_job) entry;	/* linked from creation */
};

static char			 deskserver_secret[SECRET_MAX + 1];
static size_t			 deskserver_secret_len;
static struct lws_vhost		*deskserver_vh;
static int			 deskserver_port_bound;
static LIST_HEAD(, deskserver_job) deskserver_jobs =
    LIST_HEAD_INITIALIZER(deskserver_jobs);
static uint64_t			 deskserver_seq;
static struct conncap		*deskserver_cap;
static unsigned			 deskserver_nconns;

void
deskserver_set_secret(const char *secret)
{
	deskserver_secret_len = strlen(secret);
	if (deskserver_secret_len > SECRET_MAX)
		fatal("secret too long");
	memcpy(deskserver_secret, secret, deskserver_secret_len);
}

int
deskserver_port(void)
{
	return deskserver_port_bound;
}

static unsigned
deskserver_http_status(int code)
{
	switch (code) {
	case 0:
		return HTTP_STATUS_OK;
	case ERR_UNAUTHORIZED:
		return HTTP_STATUS_UNAUTHORIZED;
	case ERR_NOT_FOUND:
	case ERR_NO_DISPLAY:
		return HTTP_STATUS_NOT_FOUND;
	case ERR_METHOD:
		return HTTP_STATUS_METHOD_NOT_ALLOWED;
	case ERR_LENGTH_REQUIRED:
		return HTTP_STATUS_LENGTH_REQUIRED;
	case ERR_BUSY:
		return HTTP_STATUS_CONFLICT;
	case ERR_BAD_REQUEST:
	case ERR_BAD_JSON:
	case ERR_TOO_LARGE:
	case ERR_ACTION_INVALID:
	case ERR_KEY_UNKNOWN:
	case ERR_COORDINATES:
	case ERR_DISPLAY_MISMATCH:
		return HTTP_STATUS_BAD_REQUEST;
	default:
		return HTTP_STATUS_INTERNAL_SERVER_ERROR;
	}
}

/* Queue the answer (body stolen) and ask to write it. */
static void
deskserver_respond(struct deskserver_conn *c, unsigned status, json_t *body)
{
	size_t	len = 0;

	if (body == NULL)
		body = json_pack("{s:s,s:s}", "error", err_message(ERR_NOMEM),
		    "code", err_name(ERR_NOMEM));
	c->out = jsonx_dump(body, &len);
	json_decref(body);
	if (c->out == NULL) {
		c->out = xstrdup("{}");
		len = 2;
	}
	c->outlen = len;
	c->outoff = 0;
	c->status = (int)status;
	c->hdr_sent = 0;
	lws_callback_on_writable(c->wsi);
}

/*
 * {"error": "message", "code": "STABLE_CODE"}: upstream's callers print
 * String(payload.error), so the message is a string and the code beside
 * it.
 */
static json_t *
deskserver_error_body(int code, const char *msg)
{
	return json_pack("{s:s,s:s}", "error", msg != NULL && *msg != '\0' ?
	    msg : err_message(code), "code", err_name(code));
}

static void
deskserver_respond_error(struct deskserver_conn *c, int code, const char *msg)
{
	deskserver_respond(c, deskserver_http_status(code),
	    deskserver_error_body(code, msg));
}

/* ---- running a job ------------------------------------------------------- */

static struct display *
deskserver_job_display(struct deskserver_job *j)
{
	struct display	*d = display_find_slot(j->slot);

	if (d == NULL || display_generation(d) != j->gen ||
	    display_capture(d) == NULL)
		return NULL;
	return d;
}

static void	deskserver_job_begin(struct deskserver_job *);

static void
deskserver_job_free(struct deskserver_job *j)
{
	struct display		 *d;
	int			  slot, queued;

	LIST_REMOVE(j, entry);

	loop_timer_cancel(j->timer);
	if (j->child != NULL) {
		if (j->child->exited)
			free(j->child);
		else
			j->child->job = NULL;	/* freed when it exits */
	}
	if (!j->queued) {
		if ((d = deskserver_job_display(j)) != NULL) {
			xtest_exec_free(j->ex);
			display_input_release(d, j);
		} else
			xtest_exec_abandon(j->ex);
	}
	if (j->conn != NULL)
		j->conn->job = NULL;
	deskserver_plan_free(j->plan);
	slot = j->slot;
	queued = j->queued;
	free(j);
	if (!queued)
		deskserver_kick(slot);
}

static int	 deskserver_xerr;

static int
deskserver_xerror(Display *dpy, XErrorEvent *e)
{
	(void)dpy;
	if (deskserver_xerr == 0)
		deskserver_xerr = e->error_code;
	return 0;
}

/* keydown: press the chord in order; keyup: release it in reverse. */
static int
deskserver_keys(Display *dpy, const struct action *a, int down)
{
	int	(*old)(Display *, XErrorEvent *);
	KeyCode	 kc;
	size_t	 k;
	int	 r = 0;

	old = XSetErrorHandler(deskserver_xerror);
	deskserver_xerr = 0;
	for (k = 0; k < a->nkeys; k++) {
		kc = XKeysymToKeycode(dpy, a->keys[down ? k :
		    a->nkeys - 1 - k]);
		if (kc == 0)
			continue;	/* checked before the start */
		XTestFakeKeyEvent(dpy, kc, down ? True : False, CurrentTime);
	}
	XSync(dpy, False);
	if (deskserver_xerr != 0)
		r = ERR_X;
	deskserver_xerr = 0;
	XSetErrorHandler(old);
	return r;
}

/* Steps completed when action k failed (k == n: all). */
static size_t
deskserver_steps_done(const struct deskserver_plan *p, size_t k)
{
	if (p->b == NULL || k >= p->b->n)
		return p->nsteps;
	return p->step[k];
}

static void
deskserver_job_fail(struct deskserver_job *j, int code, const char *msg,
    size_t failed_action, int uncertain)
{
	json_t	*body;

	log_info("compat.desktop", "display=%d steps=%zu code=%s", j->slot,
	    j->plan->nsteps, err_name(code));
	body = deskserver_error_body(code, msg);
	if (body != NULL) {
		json_object_set_new(body, "completed", json_integer(
		    (json_int_t)deskserver_steps_done(j->plan, failed_action)));
		json_object_set_new(body, "total",
		    json_integer((json_int_t)j->plan->nsteps));
		json_object_set_new(body, "uncertain", json_boolean(uncertain));
	}
	if (j->conn != NULL)
		deskserver_respond(j->conn, deskserver_http_status(code), body);
	else
		json_decref(body);
	deskserver_job_free(j);
}

/* A window's title: _NET_WM_NAME (UTF-8), else WM_NAME. */
static int
deskserver_title(Display *dpy, Window w, char *out, size_t len)
{
	Atom		 utf8, net, type;
	unsigned char	*data = NULL;
	unsigned long	 nitems, after;
	char		*name = NULL;
	int		 fmt;

	out[0] = '\0';
	utf8 = XInternAtom(dpy, "UTF8_STRING", False);
	net = XInternAtom(dpy, "_NET_WM_NAME", False);
	if (XGetWindowProperty(dpy, w, net, 0, DESKSERVER_TITLE_MAX / 4, False,
	    utf8, &type, &fmt, &nitems, &after, &data) == Success &&
	    data != NULL && type == utf8 && fmt == 8 && nitems > 0) {
		snprintf(out, len, "%.*s", (int)nitems, (char *)data);
		XFree(data);
		return 1;
	}
	if (data != NULL)
		XFree(data);
	if (XFetchName(dpy, w, &name) && name != NULL) {
		snprintf(out, len, "%s", name);
		XFree(name);
		return 1;
	}
	return 0;
}

/*
 * The active window: _NET_ACTIVE_WINDOW on the root when a window manager
 * keeps it, else the input focus; the title from it or the nearest
 * ancestor that has one.
 */
static json_t *
deskserver_active_window(Display *dpy)
{
	int		(*old)(Display *, XErrorEvent *);
	Atom		 act, type;
	Window		 w = None, root, parent, *kids, t;
	unsigned char	*data = NULL;
	unsigned long	 nitems, after;
	unsigned	 nkids;
	char		 title[DESKSERVER_TITLE_MAX + 1], id[24];
	json_t		*o;
	int		 fmt, revert, depth;

	old = XSetErrorHandler(deskserver_xerror);
	title[0] = '\0';
	root = DefaultRootWindow(dpy);
	act = XInternAtom(dpy, "_NET_ACTIVE_WINDOW", True);
	if (act != None && XGetWindowProperty(dpy, root, act, 0, 1, False,
	    XA_WINDOW, &type, &fmt, &nitems, &after, &data) == Success &&
	    data != NULL && type == XA_WINDOW && fmt == 32 && nitems == 1)
		w = (Window)((unsigned long *)(void *)data)[0];
	if (data != NULL)
		XFree(data);
	if (w == None) {
		XGetInputFocus(dpy, &w, &revert);
		if (w == PointerRoot)
			w = None;
	}
	for (t = w, depth = 0; t != None && t != root && depth < 8;
	    depth++) {
		if (deskserver_title(dpy, t, title, sizeof title))
			break;
		kids = NULL;
		if (!XQueryTree(dpy, t, &root, &parent, &kids, &nkids))
			break;
		if (kids != NULL)
			XFree(kids);
		t = parent;
	}
	XSync(dpy, False);
	deskserver_xerr = 0;
	XSetErrorHandler(old);
	if (w == None)
		return NULL;
	/*
	 * As upstream shapes it from xdotool's output: the id as the decimal
	 * string getactivewindow prints, the title only when there is one.
	 */
	snprintf(id, sizeof id, "%lu", (unsigned long)w);
	o = json_pack("{s:s}", "id", id);
	if (o != NULL && title[0] != '\0')	/* not a Latin-1 WM_NAME */
		json_object_set_new(o, "title", json_string(title));
	return o;
}

static json_t *
deskserver_observation(struct capture *cap, uint64_t frame0, int *code)
{
	const uint8_t		*px;
	struct capture_box	 box;
	uint8_t			*png = NULL;
	size_t			 pnglen = 0, stride;
	char			*b64;
	json_t			*o, *aw;
	int			 w, h, cx = 0, cy = 0;

	capture_sync(cap);
	px = capture_pixels(cap, &w, &h, &stride);
	if ((*code = observe_encode_png(px, w, h, stride, 1, &png,
	    &pnglen)) != 0)
		return NULL;
	b64 = base64_encode_new(png, pnglen);
	free(png);
	(void)capture_cursor(cap, &cx, &cy);
	capture_damage_since(cap, frame0, &box);
	o = json_pack("{s:s,s:s,s:i,s:i,s:{s:i,s:i}}", "image", b64,
	    "mimeType", "image/png", "width", w, "height", h,
	    "cursor", "x", cx, "y", cy);
	/* As upstream: no activeWindow without one, no damage without any. */
	if (o != NULL && (aw = deskserver_active_window(capture_xdisplay(cap))) !=
	    NULL)
		json_object_set_new(o, "activeWindow", aw);
	if (o != NULL && box.w > 0 && box.h > 0)
		json_object_set_new(o, "damage", json_pack("{s:i,s:i,s:i,s:i}",
		    "x", box.x, "y", box.y, "width", box.w, "height", box.h));
	free(b64);
	if (o == NULL)
		*code = ERR_NOMEM;
	return o;
}

static void
deskserver_job_settled(void *arg)
{
	struct deskserver_job	*j = arg;
	struct display		*d;
	struct capture		*cap;
	json_t			*body, *obs;
	int			 code = 0;

	j->timer = NULL;
	if ((d = deskserver_job_display(j)) == NULL) {
		deskserver_job_fail(j, ERR_NO_DISPLAY, "the desktop closed before "
		    "it could be observed", j->plan->b != NULL ?
		    j->plan->b->n : 0, 0);
		return;
	}
	cap = display_capture(d);
	display_touch(d);
	capture_sync(cap);
	body = json_pack("{s:I,s:I,s:I}", "completed",
	    (json_int_t)j->plan->nsteps, "total", (json_int_t)j->plan->nsteps,
	    "frame", (json_int_t)capture_frame(cap));
	if (j->observe && body != NULL) {
		if ((obs = deskserver_observation(cap, j->frame0, &code)) == NULL) {
			json_decref(body);
			deskserver_job_fail(j, code, "the screen could not be "
			    "encoded", j->plan->b != NULL ? j->plan->b->n : 0,
			    0);
			return;
		}
		json_object_set_new(body, "observation", obs);
	}
	log_info("compat.desktop", "display=%d steps=%zu observe=%d ms=%llu",
	    j->slot, j->plan->nsteps, j->observe,
	    (unsigned long long)(loop_now_ms() - j->start_ms));
	if (j->conn != NULL)
		deskserver_respond(j->conn, HTTP_STATUS_OK, body);
	else
		json_decref(body);
	deskserver_job_free(j);
}

static void	deskserver_job_step(void *);

static void
deskserver_child_exit(pid_t pid, int status, void *arg)
{
	struct deskserver_child	*ch = arg;

	(void)pid;
	ch->exited = 1;
	ch->status = status;
	if (ch->job == NULL)
		free(ch);
}

/*
 * Start a launch step the way guestd starts every child: the workspace
 * user (guestd runs as it), a session of its own, default signals, cwd
 * the workspace, /dev/null on 0/1/2, the environment of the shell tool
 * plus the desktop's DISPLAY and XAUTHORITY (and the browser profile
 * upstream names).  0, or ERR_EXEC_SPAWN with msg.
 */
static int
deskserver_spawn(struct display *d, const struct deskserver_launch *l, pid_t *pidp,
    char *msg, size_t msglen)
{
	posix_spawn_file_actions_t	 fa;
	posix_spawnattr_t		 attr;
	char				**base, **envp, dpy[16], *xa;
	size_t				 n, k, m = 0;
	int				 e;

	base = exec_env_new(NULL);
	for (n = 0; base[n] != NULL; n++)
		;
	envp = xcalloc(n + 4, sizeof *envp);
	for (k = 0; k < n; k++)
		if (strncmp(base[k], "DISPLAY=", 8) != 0 &&
		    strncmp(base[k], "XAUTHORITY=", 11) != 0 &&
		    strncmp(base[k], "RAKAZO_BROWSER_PROFILE=", 23) != 0)
			envp[m++] = base[k];
	snprintf(dpy, sizeof dpy, "DISPLAY=:%d", display_slot(d));
	envp[m++] = dpy;
	xa = xmalloc(strlen(display_xauthority(d)) + 12);
	sprintf(xa, "XAUTHORITY=%s", display_xauthority(d));
	envp[m++] = xa;
	if (l->profile != NULL)
		envp[m++] = l->profile;
	envp[m] = NULL;

	exec_spawnattr_init(&attr);
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
	posix_spawn_file_actions_addchdir_np(&fa, guestd.workspace);
	posix_spawn_file_actions_addclosefrom_np(&fa, 3);
	e = posix_spawnp(pidp, l->argv[0], &fa, &attr, l->argv, envp);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&attr);
	free(envp);
	free(xa);
	exec_env_free(base);
	if (e != 0) {
		snprintf(msg, msglen, "%s could not be started: %s; start "
		    "programs with the launch_app or open_path tool",
		    l->argv[0], strerror(e));
		return ERR_EXEC_SPAWN;
	}
	return 0;
}

/* DESKSERVER_LAUNCH_MS after a launch: a program that failed at once fails. */
static void
deskserver_launch_check(void *arg)
{
	struct deskserver_job	*j = arg;
	struct deskserver_child	*ch = j->child;
	const char		*name = j->plan->launch[j->i]->argv[0];
	char			 msg[VOCAB_ERRLEN];

	j->timer = NULL;
	if (ch->exited && (!WIFEXITED(ch->status) ||
	    WEXITSTATUS(ch->status) != 0)) {
		if (WIFEXITED(ch->status))
			snprintf(msg, sizeof msg, "%s exited with status %d",
			    name, WEXITSTATUS(ch->status));
		else
			snprintf(msg, sizeof msg, "%s was killed by signal "
			    "%d", name, WTERMSIG(ch->status));
		deskserver_job_fail(j, ERR_EXEC_SPAWN, msg, j->i, 1);
		return;
	}
	if (ch->exited)
		free(ch);
	else
		ch->job = NULL;		/* runs on; freed when it exits */
	j->child = NULL;
	j->i++;
	deskserver_job_step(j);
}

static int
deskserver_launch_start(struct deskserver_job *j, struct display *d)
{
	char	msg[VOCAB_ERRLEN];
	pid_t	pid;
	int	r;

	if ((r = deskserver_spawn(d, j->plan->launch[j->i], &pid, msg,
	    sizeof msg)) != 0) {
		deskserver_job_fail(j, r, msg, j->i, 0);
		return r;
	}
	log_info("compat.launch", "display=%d program=%s pid=%ld", j->slot,
	    j->plan->launch[j->i]->argv[0], (long)pid);
	j->child = xcalloc(1, sizeof *j->child);
	j->child->job = j;
	(void)loop_child_watch(pid, deskserver_child_exit, j->child);
	j->timer = loop_timer_add(DESKSERVER_LAUNCH_MS, deskserver_launch_check, j);
	return 0;
}

/* Run the current xtest.c segment; 1 when it must wait (timer set). */
static int
deskserver_job_segment(struct deskserver_job *j, size_t *failed)
{
	const struct xtest_result	*res;
	uint64_t			 delay = 0;

	if (xtest_run(j->ex, &delay) == XTEST_AGAIN) {
		j->timer = loop_timer_add(delay, deskserver_job_step, j);
		return 1;
	}
	res = xtest_result(j->ex);
	if (res->code != 0) {
		*failed = j->i + (res->failed >= 0 ? (size_t)res->failed : 0);
		return -1;
	}
	xtest_exec_free(j->ex);
	j->ex = NULL;
	j->i = j->seg_end;
	return 0;
}

static void
deskserver_job_step(void *arg)
{
	struct deskserver_job		*j = arg;
	const struct vocab_batch	*b = j->plan->b;
	struct vocab_error		 aerr;
	struct display			*d;
	struct keymap			*km;
	Display				*dpy;
	uint64_t			 delay;
	size_t				 failed = 0;
	int				 r, kerr;

	j->timer = NULL;
	if ((d = deskserver_job_display(j)) == NULL) {
		deskserver_job_fail(j, ERR_NO_DISPLAY, "the desktop closed during "
		    "the steps", j->i, 1);
		return;
	}
	dpy = capture_xdisplay(display_capture(d));
	while (b != NULL && (j->ex != NULL || j->i < b->n)) {
		if (j->ex != NULL) {
			if ((r = deskserver_job_segment(j, &failed)) == 1)
				return;
			if (r < 0) {
				const struct xtest_result *res =
				    xtest_result(j->ex);

				deskserver_job_fail(j, res->code, res->msg, failed,
				    res->uncertain);
				return;
			}
			continue;
		}
		if (j->plan->keyev[j->i] == DESKSERVER_LAUNCH) {
			(void)deskserver_launch_start(j, d);
			return;		/* its timer, or failed and freed */
		}
		if (j->plan->keyev[j->i] == DESKSERVER_KEY_DOWN &&
		    (km = keymap_get(dpy, &kerr)) != NULL &&
		    (delay = keymap_focus_wait(km)) > 0) {
			/* After a click, the focus first (keymap.h). */
			j->timer = loop_timer_add(delay, deskserver_job_step, j);
			return;
		}
		if (j->plan->keyev[j->i] != DESKSERVER_KEY_NONE) {
			if (deskserver_keys(dpy, &b->v[j->i], j->plan->keyev[j->i] ==
			    DESKSERVER_KEY_DOWN) != 0) {
				deskserver_job_fail(j, ERR_X, "the X server "
				    "refused a key event", j->i, 1);
				return;
			}
			j->i++;
			continue;
		}
		for (j->seg_end = j->i; j->seg_end < b->n &&
		    j->plan->keyev[j->seg_end] == DESKSERVER_KEY_NONE; j->seg_end++)
			;
		j->view.v = b->v + j->i;
		j->view.n = j->seg_end - j->i;
		j->view.scale = b->scale;
		if ((r = xtest_exec_new(dpy, &j->view, &j->ex, &aerr)) != 0) {
			deskserver_job_fail(j, r, aerr.msg, j->i, 0);
			return;
		}
	}
	display_touch(d);
	j->settling = 1;
	j->timer = loop_timer_add((uint64_t)j->settle_ms, deskserver_job_settled,
	    j);
}

/*
 * Everything that can be refused is refused here, before any event:
 * points off the screen (xtest.c's own check, on the whole batch) and
 * keydown/keyup keys that have no keycode.
 */
static int
deskserver_precheck(Display *dpy, const struct deskserver_plan *p, char *msg,
    size_t msglen)
{
	const struct action	*a;
	struct vocab_error	 aerr;
	struct xtest_exec	*ex = NULL;
	size_t			 i, k;
	int			 r;

	if (p->b == NULL)
		return 0;
	if ((r = xtest_exec_new(dpy, p->b, &ex, &aerr)) != 0) {
		const char *m = aerr.msg;

		if (strncmp(m, "action ", 7) == 0 && strstr(m, ": ") != NULL)
			m = strstr(m, ": ") + 2;
		if (aerr.index >= 0 && (size_t)aerr.index < p->b->n)
			snprintf(msg, msglen, "step %zu: %.120s",
			    p->step[aerr.index], m);
		else
			snprintf(msg, msglen, "%s", m);
		return r;
	}
	xtest_exec_free(ex);
	for (i = 0; i < p->b->n; i++) {
		if (p->keyev[i] == DESKSERVER_KEY_NONE)
			continue;
		a = &p->b->v[i];
		for (k = 0; k < a->nkeys; k++)
			if (XKeysymToKeycode(dpy, a->keys[k]) == 0) {
				snprintf(msg, msglen, "step %zu: keysym 0x%lx "
				    "is not on the keymap, so it cannot be "
				    "held down", p->step[i], a->keys[k]);
				return ERR_KEY_UNKNOWN;
			}
	}
	return 0;
}

/* display: 1, "1", ":1" or ":1.0". */
static int
deskserver_display_slot(json_t *v, int *slot)
{
	const char	*s;
	char		*end;
	long		 n;

	if (json_is_integer(v)) {
		if (json_integer_value(v) < 0 ||
		    json_integer_value(v) > 65535)
			return -1;
		*slot = (int)json_integer_value(v);
		return 0;
	}
	if (!json_is_string(v) || json_string_length(v) > 16)
		return -1;
	s = json_string_value(v);
	if (*s == ':')
		s++;
	if (*s < '0' || *s > '9')
		return -1;
	n = strtol(s, &end, 10);
	if (n > 65535 || (*end != '\0' && strcmp(end, ".0") != 0))
		return -1;
	*slot = (int)n;
	return 0;
}


/*
 * Points past the right or bottom edge land on it, as the X server puts
 * xdotool's pointer there; the left and top were clamped when parsed.
 */
static void
deskserver_clamp(struct vocab_batch *b, int w, int h)
{
	struct action	*a;
	size_t		 i, k;

	for (i = 0; b != NULL && i < b->n; i++) {
		a = &b->v[i];
		if (a->has_xy) {
			a->x = a->x >= w ? w - 1 : a->x;
			a->y = a->y >= h ? h - 1 : a->y;
		}
		for (k = 0; k < a->npath; k++) {
			a->path[k].x = a->path[k].x >= w ? w - 1 :
			    a->path[k].x;
			a->path[k].y = a->path[k].y >= h ? h - 1 :
			    a->path[k].y;
		}
	}
}

static int
deskserver_job_running(int slot, uint64_t gen)
{
	struct deskserver_job	*j;

	LIST_FOREACH(j, &deskserver_jobs, entry)
		if (j->slot == slot && j->gen == gen && !j->queued)
			return 1;
	return 0;
}

static size_t
deskserver_queue_len(int slot)
{
	struct deskserver_job	*j;
	size_t			 n = 0;

	LIST_FOREACH(j, &deskserver_jobs, entry)
		if (j->slot == slot && j->queued)
			n++;
	return n;
}

static void
deskserver_queue_timeout(void *arg)
{
	struct deskserver_job	*j = arg;
	char			 msg[128];

	j->timer = NULL;
	if (display_find_slot(j->slot) == NULL) {
		snprintf(msg, sizeof msg, "display :%d closed while the "
		    "request waited; nothing was done", j->slot);
		deskserver_job_fail(j, ERR_NO_DISPLAY, msg, 0, 0);
		return;
	}
	snprintf(msg, sizeof msg, "display :%d stayed busy for %d s; nothing "
	    "was done", j->slot, DESKSERVER_QUEUE_MS / 1000);
	deskserver_job_fail(j, ERR_BUSY, msg, 0, 0);
}

void
deskserver_kick(int slot)
{
	struct deskserver_job	*j, *first = NULL;

	LIST_FOREACH(j, &deskserver_jobs, entry)
		if (j->slot == slot && j->queued &&
		    (first == NULL || j->seq < first->seq))
			first = j;
	if (first != NULL)
		deskserver_job_begin(first);
}

/*
 * Start a job whose turn may have come: the display must be free of
 * another request and of display.act; else it keeps waiting (its timer
 * runs).  Everything that can be refused is refused here, before any
 * event is sent.
 */
static void
deskserver_job_begin(struct deskserver_job *j)
{
	char		 msg[VOCAB_ERRLEN];
	struct display	*d;
	struct capture	*cap;
	int		 code, w, h;
	size_t		 stride;

	if ((d = display_find_slot(j->slot)) == NULL ||
	    (cap = display_capture(d)) == NULL) {
		snprintf(msg, sizeof msg, "display :%d is not open", j->slot);
		j->queued = 0;
		j->gen = 0;
		deskserver_job_fail(j, ERR_NO_DISPLAY, msg, 0, 0);
		return;
	}
	if (deskserver_job_running(j->slot, display_generation(d)) ||
	    display_input_claim(d, j) != 0)
		return;		/* not yet: deskserver_kick comes back */
	loop_timer_cancel(j->timer);
	j->timer = NULL;
	j->queued = 0;
	j->gen = display_generation(d);
	(void)capture_pixels(cap, &w, &h, &stride);
	deskserver_clamp(j->plan->b, w, h);
	if ((code = deskserver_precheck(capture_xdisplay(cap), j->plan, msg,
	    sizeof msg)) != 0) {
		log_info("compat.desktop", "refused=%s", err_name(code));
		deskserver_job_fail(j, code, msg, 0, 0);
		return;
	}
	j->start_ms = loop_now_ms();
	capture_sync(cap);
	j->frame0 = capture_frame(cap);
	log_info("compat.begin", "display=%d seq=%llu steps=%zu", j->slot,
	    (unsigned long long)j->seq, j->plan->nsteps);
	display_touch(d);
	deskserver_job_step(j);
}

/* The body is in: parse, check, then run or wait for the display. */
static void
deskserver_request(struct deskserver_conn *c)
{
	char			 msg[JSONX_ERRLEN > VOCAB_ERRLEN ?
				    JSONX_ERRLEN : VOCAB_ERRLEN];
	struct vocab_error	 aerr;
	struct deskserver_plan	*plan = NULL;
	struct deskserver_job	*j;
	json_t			*req, *v;
	double			 settle = 0;
	int			 code, slot = 1, observe = 1;

	req = jsonx_parse(c->body != NULL ? c->body : "", c->bodylen,
	    DESKSERVER_BODY_MAX, 1, &code, msg);
	free(c->body);
	c->body = NULL;
	if (req == NULL) {
		deskserver_respond_error(c, code, msg);
		return;
	}
	code = ERR_BAD_REQUEST;
	/* As upstream: display ":1" and observe true when left out. */
	if ((v = json_object_get(req, "display")) != NULL &&
	    deskserver_display_slot(v, &slot) != 0) {
		snprintf(msg, sizeof msg, "display must be a display number "
		    "(1 or \":1\")");
		goto fail;
	}
	if ((v = json_object_get(req, "observe")) != NULL) {
		if (!json_is_boolean(v)) {
			snprintf(msg, sizeof msg, "observe must be a boolean");
			goto fail;
		}
		observe = json_is_true(v);
	}
	if ((v = json_object_get(req, "settleMs")) != NULL &&
	    !json_is_null(v)) {
		if (!json_is_number(v) || json_number_value(v) < 0) {
			snprintf(msg, sizeof msg, "settleMs must be a number "
			    ">= 0");
			goto fail;
		}
		settle = json_number_value(v);
		if (settle > DESKSERVER_WAIT_MAX_MS)
			settle = DESKSERVER_WAIT_MAX_MS;
	}
	if ((code = deskserver_steps_parse(json_object_get(req, "steps"), slot,
	    &plan, &aerr)) != 0) {
		snprintf(msg, sizeof msg, "%s", aerr.msg);
		goto fail;
	}
	if (display_find_slot(slot) == NULL) {
		code = ERR_NO_DISPLAY;
		snprintf(msg, sizeof msg, "display :%d is not open", slot);
		goto fail;
	}
	if (deskserver_queue_len(slot) >= DESKSERVER_QUEUE_MAX) {
		code = ERR_BUSY;
		snprintf(msg, sizeof msg, "%d requests already wait for "
		    "display :%d", DESKSERVER_QUEUE_MAX, slot);
		goto fail;
	}
	json_decref(req);

	/* Queued first, so requests start in the order they came. */
	j = xcalloc(1, sizeof *j);
	j->conn = c;
	j->plan = plan;
	j->slot = slot;
	j->observe = observe;
	j->settle_ms = (int)settle;
	j->queued = 1;
	j->seq = ++deskserver_seq;
	LIST_INSERT_HEAD(&deskserver_jobs, j, entry);
	c->job = j;
	j->timer = loop_timer_add(DESKSERVER_QUEUE_MS, deskserver_queue_timeout, j);
	deskserver_kick(slot);
	return;
fail:
	log_info("compat.desktop", "refused=%s", err_name(code));
	deskserver_plan_free(plan);
	json_decref(req);
	deskserver_respond_error(c, code, msg);
}

/* ---- HTTP ---------------------------------------------------------------- */

static void
deskserver_conn_reset(struct deskserver_conn *c)
{
	free(c->body);
	free(c->out);
	free(c->chunk);
	c->body = NULL;
	c->bodylen = 0;
	c->discard = 0;
	c->v_code = 0;
	c->v_msg[0] = '\0';
	c->out = NULL;
	c->outlen = c->outoff = 0;
	c->hdr_sent = 0;
	c->close_after = 0;
	c->chunk = NULL;
}

static void
deskserver_verdict(struct deskserver_conn *c, int code, const char *msg)
{
	if (c->v_code != 0)
		return;
	c->v_code = code;
	snprintf(c->v_msg, sizeof c->v_msg, "%s", msg);
}

static int
deskserver_authorized(struct lws *wsi)
{
	char	auth[SECRET_MAX + 16];
	int	n, ok;

	if (lws_hdr_total_length(wsi, WSI_TOKEN_HTTP_AUTHORIZATION) >=
	    (int)sizeof auth)
		return 0;
	n = lws_hdr_copy(wsi, auth, sizeof auth, WSI_TOKEN_HTTP_AUTHORIZATION);
	ok = n > 7 && strncasecmp(auth, "Bearer ", 7) == 0 &&
	    deskserver_secret_len > 0 && token_equal(auth + 7, strlen(auth + 7),
	    deskserver_secret, deskserver_secret_len);
	explicit_bzero(auth, sizeof auth);
	return ok;
}

static int
deskserver_on_http(struct deskserver_conn *c, struct lws *wsi, const char *uri)
{
	char		 cl[32];
	unsigned long long len = 0;
	char		*end;
	int		 post, r;

	if (c->job != NULL || c->out != NULL)
		return -1;	/* pipelining over a running request */
	deskserver_conn_reset(c);
	c->wsi = wsi;
	post = lws_hdr_total_length(wsi, WSI_TOKEN_POST_URI) > 0;
	/* lws reads a body by its length only (http-head.h). */
	if ((r = http_head_req_framing(
	    lws_hdr_total_length(wsi, WSI_TOKEN_HTTP_CONTENT_LENGTH) > 0,
	    lws_hdr_total_length(wsi, WSI_TOKEN_HTTP_TRANSFER_ENCODING) > 0))
	    != 0) {
		deskserver_verdict(c, r, r == ERR_LENGTH_REQUIRED ?
		    "chunked bodies are not accepted: send Content-Length" :
		    "Content-Length and Transfer-Encoding together");
		c->close_after = 1;
	}
	if (strcmp(uri, "/v1/desktop") != 0)
		deskserver_verdict(c, ERR_NOT_FOUND, "no such path; the endpoint "
		    "is POST /v1/desktop");
	else if (!post)
		deskserver_verdict(c, ERR_METHOD, "/v1/desktop takes POST only");
	else if (!deskserver_authorized(wsi))
		deskserver_verdict(c, ERR_UNAUTHORIZED, "a valid Authorization: "
		    "Bearer token is required");
	else if (conncap_trust(deskserver_cap, wsi) != 0)
		return -1;	/* shed meanwhile: its close is on its way */
	if (lws_hdr_copy(wsi, cl, sizeof cl,
	    WSI_TOKEN_HTTP_CONTENT_LENGTH) > 0) {
		len = strtoull(cl, &end, 10);
		if (*end != '\0')
			len = ULLONG_MAX;
	} else if (post) {
		deskserver_verdict(c, ERR_BAD_REQUEST, "Content-Length is "
		    "required");
		c->close_after = 1;
	}
	if (len > DESKSERVER_BODY_MAX)
		deskserver_verdict(c, ERR_TOO_LARGE, "the body is larger than "
		    "256 KiB");
	if (len > DESKSERVER_DISCARD_MAX)
		c->close_after = 1;
	if (c->v_code != 0) {
		c->discard = 1;
		/* Answer now unless a body will arrive to be drained. */
		if (len == 0 || c->close_after)
			deskserver_respond_error(c, c->v_code, c->v_msg);
		return 0;
	}
	if (len == 0)
		deskserver_request(c);
	return 0;
}

static void
deskserver_on_body(struct deskserver_conn *c, const void *in, size_t len)
{
	/*
	 * lws reports a "Content-Length: 0" body too, as in == NULL and len
	 * 0, after the request already ran: nothing to add, and memcpy from
	 * NULL is undefined even for no bytes.
	 */
	if (c->discard || len == 0)
		return;
	if (len > DESKSERVER_BODY_MAX - c->bodylen) {
		deskserver_verdict(c, ERR_TOO_LARGE, "the body is larger than "
		    "256 KiB");
		c->discard = 1;
		free(c->body);
		c->body = NULL;
		return;
	}
	if (c->body == NULL)
		c->body = xmalloc(DESKSERVER_BODY_MAX + 1);
	memcpy(c->body + c->bodylen, in, len);
	c->bodylen += len;
}

static int
deskserver_on_writeable(struct deskserver_conn *c, struct lws *wsi)
{
	unsigned char	 hdr[LWS_PRE + 1024], *p, *end;
	size_t		 n;
	int		 last;

	if (c->out == NULL)
		return 0;
	if (!c->hdr_sent) {
		p = hdr + LWS_PRE;
		end = hdr + sizeof hdr - 1;
		if (lws_add_http_common_headers(wsi, (unsigned)c->status,
		    "application/json", (lws_filepos_t)c->outlen, &p, end) ||
		    lws_add_http_header_by_name(wsi, (const unsigned char *)
		    "cache-control:", (const unsigned char *)"no-store", 8,
		    &p, end))
			return -1;
		if (c->status == HTTP_STATUS_METHOD_NOT_ALLOWED &&
		    lws_add_http_header_by_name(wsi, (const unsigned char *)
		    "allow:", (const unsigned char *)"POST", 4, &p, end))
			return -1;
		if (c->status == HTTP_STATUS_UNAUTHORIZED &&
		    lws_add_http_header_by_name(wsi, (const unsigned char *)
		    "www-authenticate:", (const unsigned char *)"Bearer", 6,
		    &p, end))
			return -1;
		if (c->close_after && lws_add_http_header_by_name(wsi,
		    (const unsigned char *)"connection:",
		    (const unsigned char *)"close", 5, &p, end))
			return -1;
		if (lws_finalize_write_http_header(wsi, hdr + LWS_PRE, &p, end))
			return -1;
		c->hdr_sent = 1;
		lws_callback_on_writable(wsi);
		return 0;
	}
	if (c->chunk == NULL)
		c->chunk = xmalloc(LWS_PRE + DESKSERVER_CHUNK);
	n = c->outlen - c->outoff;
	if (n > DESKSERVER_CHUNK)
		n = DESKSERVER_CHUNK;
	last = c->outoff + n == c->outlen;
	memcpy(c->chunk + LWS_PRE, c->out + c->outoff, n);
	if (lws_write(wsi, c->chunk + LWS_PRE, n, last ?
	    LWS_WRITE_HTTP_FINAL : LWS_WRITE_HTTP) < (int)n)
		return -1;
	c->outoff += n;
	if (!last) {
		lws_callback_on_writable(wsi);
		return 0;
	}
	last = c->close_after;
	deskserver_conn_reset(c);
	if (last)
		return -1;
	return lws_http_transaction_completed(wsi) ? -1 : 0;
}

static void
deskserver_on_closed(struct deskserver_conn *c)
{
	if (c->job != NULL) {
		/* The caller left: stop now, release what xtest.c held. */
		c->job->conn = NULL;
		deskserver_job_free(c->job);
		c->job = NULL;
	}
	deskserver_conn_reset(c);
}

static int
deskserver_cb(struct lws *wsi, enum lws_callback_reasons reason, void *user,
    void *in, size_t len)
{
	struct deskserver_conn	*c = user;

	switch (reason) {
	case LWS_CALLBACK_FILTER_PROTOCOL_CONNECTION:
		return -1;	/* no websockets here */
	case LWS_CALLBACK_HTTP_CONFIRM_UPGRADE:
		/* Nor h2c: lws would answer it 101 before any token. */
		return -1;
	case LWS_CALLBACK_FILTER_NETWORK_CONNECTION:
		/* The fds' ceiling, with room for sheds still closing. */
		return deskserver_nconns >= DESKSERVER_MAX_CONNS +
		    DESKSERVER_MAX_CONNS / 4 ? -1 : 0;
	case LWS_CALLBACK_WSI_CREATE:
		deskserver_nconns++;
		return 0;
	case LWS_CALLBACK_WSI_DESTROY:
		if (deskserver_nconns > 0)
			deskserver_nconns--;
		conncap_gone(deskserver_cap, wsi);
		return 0;
	case LWS_CALLBACK_SERVER_NEW_CLIENT_INSTANTIATED:
		if (conncap_lws_admit(deskserver_cap, wsi, "compat.conn") != 0) {
			lws_set_timeout(wsi, PENDING_TIMEOUT_HTTP_CONTENT,
			    LWS_TO_KILL_ASYNC);
			return -1;
		}
		return 0;
	case LWS_CALLBACK_HTTP:
		if (c == NULL)
			return -1;
		return deskserver_on_http(c, wsi, in != NULL ? (const char *)in :
		    "");
	case LWS_CALLBACK_HTTP_BODY:
		if (c != NULL)
			deskserver_on_body(c, in, len);
		return 0;
	case LWS_CALLBACK_HTTP_BODY_COMPLETION:
		if (c == NULL || c->out != NULL || c->job != NULL)
			return 0;
		if (c->v_code != 0)
			deskserver_respond_error(c, c->v_code, c->v_msg);
		else
			deskserver_request(c);
		return 0;
	case LWS_CALLBACK_HTTP_WRITEABLE:
		return c != NULL ? deskserver_on_writeable(c, wsi) : 0;
	case LWS_CALLBACK_CLOSED_HTTP:
		if (c != NULL)
			deskserver_on_closed(c);
		return 0;
	default:
		return lws_callback_http_dummy(wsi, reason, user, in, len);
	}
}

static struct lws_protocols deskserver_protocols[] = {
	{ "compat-http", deskserver_cb, sizeof(struct deskserver_conn), 0, 0, NULL,
	  0 },
	{ NULL, NULL, 0, 0, 0, NULL, 0 }
};

int
deskserver_start(struct lws_context *ctx, const char *host, int port)
{
	if (deskserver_cap == NULL)
		deskserver_cap = conncap_new(DESKSERVER_MAX_CONNS,
		    DESKSERVER_RESERVE, DESKSERVER_PEER_CONNS);
	if ((deskserver_vh = loop_listen(ctx, "compat", host, port,
	    deskserver_protocols)) == NULL)
		return ERR_CONNECT;
	deskserver_port_bound = lws_get_vhost_listen_port(deskserver_vh);
	log_info("compat.listening", "addr=%s port=%d", host,
	    deskserver_port_bound);
	return 0;
}

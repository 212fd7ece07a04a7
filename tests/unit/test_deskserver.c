/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of guestd/deskserver.c's translators: xdotool argv forms (options,
 * chaining, the wheel buttons, keydown/keyup roles, clamped sleeps) become
 * the right native actions, and bad argv is refused with a code and no
 * plan; the steps array maps errors to their step.
 */
#include "autoconf.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <X11/keysym.h>

#include "vocab.h"
#include "deskserver.h"
#include "err.h"
#include "guestd.h"

/* deskserver.c starts launches with exec.c, which reads the settings. */
struct guestd_settings guestd;

static struct deskserver_plan	*p;
static struct vocab_error	 e;

#define ARGV(...)	((const char *const []){ __VA_ARGS__ })
#define NARGS(...)	(sizeof((const char *const []){ __VA_ARGS__ }) / \
			    sizeof(const char *))
#define XDO(...)	xdo(ARGV(__VA_ARGS__), NARGS(__VA_ARGS__))

static int
xdo(const char *const *argv, size_t n)
{
	int	r;

	deskserver_plan_free(p);
	p = NULL;
	r = deskserver_xdotool_parse(argv, n, &p, &e);
	if (r != 0) {
		assert_null(p);
		assert_int_equal(r, e.code);
		assert_non_null(memchr(e.msg, '\0', sizeof e.msg));
		assert_true(e.msg[0] != '\0');
	} else
		assert_non_null(p);
	return r;
}

static int	steps_slot = -1;

static int
steps(const char *text)
{
	json_error_t	 je;
	json_t		*j;
	int		 r;

	deskserver_plan_free(p);
	p = NULL;
	if ((j = json_loads(text, JSON_DECODE_ANY, &je)) == NULL)
		fail_msg("test JSON: %s", je.text);
	r = deskserver_steps_parse(j, steps_slot, &p, &e);
	json_decref(j);
	return r;
}

static const struct action *
act(size_t i)
{
	assert_non_null(p->b);
	assert_true(i < p->b->n);
	return &p->b->v[i];
}

static void
test_key(void **state)
{
	(void)state;
	assert_int_equal(XDO("xdotool", "key", "--clearmodifiers", "--delay",
	    "12", "ctrl+a", "Return"), 0);
	assert_int_equal(p->b->n, 2);
	assert_int_equal(act(0)->kind, ACTION_KEY);
	assert_int_equal(act(0)->nkeys, 2);
	assert_int_equal(act(0)->keys[0], XK_Control_L);
	assert_int_equal(act(0)->keys[1], XK_a);
	assert_int_equal(act(1)->keys[0], XK_Return);
	assert_int_equal(p->keyev[0], DESKSERVER_KEY_NONE);
	/* getopt_long_only spellings */
	assert_int_equal(XDO("key", "-delay=5", "--", "super"), 0);
	assert_int_equal(act(0)->keys[0], XK_Super_L);
	/* a key list ends at the next command */
	assert_int_equal(XDO("key", "a", "mousemove", "1", "2"), 0);
	assert_int_equal(p->b->n, 2);
	assert_int_equal(act(1)->kind, ACTION_MOVE);
}

static void
test_keydown_keyup(void **state)
{
	(void)state;
	assert_int_equal(XDO("keydown", "ctrl+shift", "click", "1", "keyup",
	    "ctrl+shift"), 0);
	assert_int_equal(p->b->n, 3);
	assert_int_equal(act(0)->kind, ACTION_HOLD);
	assert_int_equal(act(0)->duration_ms, 0);
	assert_int_equal(act(0)->nkeys, 2);
	assert_int_equal(p->keyev[0], DESKSERVER_KEY_DOWN);
	assert_int_equal(p->keyev[1], DESKSERVER_KEY_NONE);
	assert_int_equal(p->keyev[2], DESKSERVER_KEY_UP);
	assert_int_equal(act(2)->keys[1], XK_Shift_L);
}

static void
test_type(void **state)
{
	(void)state;
	assert_int_equal(XDO("type", "--delay", "12", "--", "hé", " 中"), 0);
	assert_int_equal(p->b->n, 1);
	assert_int_equal(act(0)->kind, ACTION_TYPE);
	assert_int_equal(act(0)->ntext, 4);
	assert_int_equal(act(0)->text[1], 0xe9);
	assert_int_equal(act(0)->text[3], 0x4e2d);
	/* after --, option-looking text and command names are text */
	assert_int_equal(XDO("type", "--", "--delay", "key"), 0);
	assert_int_equal(act(0)->ntext, 10);
	/* nothing to type is nothing */
	assert_int_equal(XDO("type", ""), 0);
	assert_null(p->b);
	assert_int_equal(XDO("type"), ERR_ACTION_INVALID);
	assert_int_equal(XDO("type", "a\001"), ERR_ACTION_INVALID);
}

static void
test_pointer(void **state)
{
	(void)state;
	assert_int_equal(XDO("mousemove", "--sync", "10", "20", "click",
	    "--repeat", "2", "1"), 0);
	assert_int_equal(p->b->n, 2);
	assert_int_equal(act(0)->kind, ACTION_MOVE);
	assert_int_equal(act(0)->x, 10);
	assert_int_equal(act(0)->y, 20);
	assert_int_equal(act(1)->kind, ACTION_CLICK);
	assert_int_equal(act(1)->button, 1);
	assert_int_equal(act(1)->count, 2);
	assert_false(act(1)->has_xy);
	assert_int_equal(XDO("click", "--repeat", "5", "3"), 0);
	assert_int_equal(p->b->n, 2);
	assert_int_equal(act(0)->count + act(1)->count, 5);
	assert_int_equal(act(0)->button, 3);
	assert_int_equal(XDO("mousedown", "2", "mouseup", "2"), 0);
	assert_int_equal(act(0)->kind, ACTION_DOWN);
	assert_int_equal(act(1)->kind, ACTION_UP);
	assert_int_equal(act(1)->button, 2);
	assert_int_equal(XDO("click", "8"), 0);
	assert_int_equal(act(0)->button, 8);
}

static void
test_wheel(void **state)
{
	(void)state;
	assert_int_equal(XDO("click", "4"), 0);
	assert_int_equal(act(0)->kind, ACTION_SCROLL);
	assert_int_equal(act(0)->scroll_y, -1);
	assert_int_equal(XDO("click", "--repeat", "3", "5"), 0);
	assert_int_equal(act(0)->scroll_y, 3);
	assert_int_equal(XDO("click", "6", "click", "7"), 0);
	assert_int_equal(act(0)->scroll_x, -1);
	assert_int_equal(act(1)->scroll_x, 1);
	assert_int_equal(XDO("click", "--repeat", "100", "5"), 0);
	assert_int_equal(p->b->n, 2);
	assert_int_equal(act(0)->scroll_y + act(1)->scroll_y, 100);
	assert_int_equal(XDO("mousedown", "4"), ERR_ACTION_INVALID);
}

static void
test_sleep(void **state)
{
	(void)state;
	assert_int_equal(XDO("sleep", "0.25"), 0);
	assert_int_equal(act(0)->kind, ACTION_WAIT);
	assert_int_equal(act(0)->duration_ms, 250);
	assert_int_equal(XDO("sleep", "60"), 0);
	assert_int_equal(act(0)->duration_ms, DESKSERVER_WAIT_MAX_MS);
	assert_int_equal(XDO("sleep", "-1"), ERR_ACTION_INVALID);
	assert_int_equal(XDO("sleep", "nan"), ERR_ACTION_INVALID);
	assert_int_equal(XDO("sleep"), ERR_ACTION_INVALID);
}

static void
test_refused(void **state)
{
	const char	*many[DESKSERVER_ARGV_MAX + 1];
	char		*big;
	size_t		 i;

	(void)state;
	assert_int_equal(xdo(NULL, 0), ERR_BAD_REQUEST);
	assert_int_equal(XDO("xdotool"), ERR_BAD_REQUEST);
	assert_int_equal(XDO("getmouselocation"), ERR_ACTION_INVALID);
	assert_non_null(strstr(e.msg, "getmouselocation"));
	assert_int_equal(XDO("key", "a", "windowactivate"), ERR_KEY_UNKNOWN);
	assert_int_equal(XDO("key"), ERR_ACTION_INVALID);
	assert_int_equal(XDO("key", "--window", "1", "a"), ERR_ACTION_INVALID);
	assert_int_equal(XDO("key", "ctrl+nosuchkey"), ERR_KEY_UNKNOWN);
	assert_int_equal(XDO("key", "\xff"), ERR_KEY_UNKNOWN);
	assert_int_equal(XDO("click", "0"), ERR_ACTION_INVALID);
	assert_int_equal(XDO("click", "10"), ERR_ACTION_INVALID);
	assert_int_equal(XDO("click", "x"), ERR_ACTION_INVALID);
	assert_int_equal(XDO("click", "--repeat", "0", "1"),
	    ERR_ACTION_INVALID);
	assert_int_equal(XDO("click", "--repeat"), ERR_ACTION_INVALID);
	assert_int_equal(XDO("click", "--sync", "1"), ERR_ACTION_INVALID);
	assert_int_equal(XDO("mousemove", "1"), ERR_ACTION_INVALID);
	assert_int_equal(XDO("mousemove", "1", "y"), ERR_ACTION_INVALID);
	/* Off the left or top edge lands on it, as with xdotool. */
	assert_int_equal(XDO("mousemove", "-5", "1"), 0);
	assert_int_equal(act(0)->x, 0);
	assert_int_equal(act(0)->y, 1);
	assert_int_equal(XDO("mousemove", "99999999", "1"), ERR_ACTION_INVALID);
	for (i = 0; i < DESKSERVER_ARGV_MAX + 1; i++)
		many[i] = i == 0 ? "key" : "a";
	assert_int_equal(xdo(many, DESKSERVER_ARGV_MAX), 0);
	assert_int_equal(xdo(many, DESKSERVER_ARGV_MAX + 1), ERR_TOO_LARGE);
	big = malloc(DESKSERVER_ARG_MAX + 2);
	memset(big, 'x', DESKSERVER_ARG_MAX + 1);
	big[DESKSERVER_ARG_MAX + 1] = '\0';
	assert_int_equal(XDO("type", big), ERR_TOO_LARGE);
	big[DESKSERVER_ARG_MAX] = '\0';
	assert_int_equal(XDO("type", big), 0);
	assert_int_equal(act(0)->ntext, DESKSERVER_ARG_MAX);
	free(big);
}

static void
test_steps(void **state)
{
	(void)state;
	assert_int_equal(steps("[{\"argv\":[\"key\",\"a\"]},{\"waitMs\":60000},"
	    "{\"argv\":[\"click\",\"1\",\"click\",\"3\"]}]"), 0);
	assert_int_equal(p->nsteps, 3);
	assert_int_equal(p->b->n, 4);
	assert_int_equal(act(1)->kind, ACTION_WAIT);
	assert_int_equal(act(1)->duration_ms, DESKSERVER_WAIT_MAX_MS);
	assert_int_equal(p->step[0], 0);
	assert_int_equal(p->step[1], 1);
	assert_int_equal(p->step[2], 2);
	assert_int_equal(p->step[3], 2);
	assert_int_equal(steps("[]"), 0);
	assert_null(p->b);
	assert_int_equal(p->nsteps, 0);
	assert_int_equal(steps("[{\"argv\":[\"key\",\"a\"]},"
	    "{\"argv\":[\"key\",\"nosuchkey\"]}]"), ERR_KEY_UNKNOWN);
	assert_null(p);
	assert_int_equal(e.index, 1);
	assert_non_null(strstr(e.msg, "step 1"));
	assert_int_equal(steps("[{\"argv\":[\"key\",\"a\"],\"waitMs\":1}]"),
	    ERR_BAD_REQUEST);
	assert_int_equal(steps("[{\"waitMs\":-1}]"), ERR_BAD_REQUEST);
	assert_int_equal(steps("[{\"argv\":[1]}]"), ERR_BAD_REQUEST);
	assert_int_equal(steps("{}"), ERR_BAD_REQUEST);
	assert_int_equal(steps("[{\"argv\":[\"fly\"]}]"), ERR_ACTION_INVALID);
	assert_int_equal(e.index, 0);
}

static void
test_too_many_actions(void **state)
{
	char	 buf[64 * (VOCAB_MAX + 2)];
	size_t	 off = 0, i;

	(void)state;
	off += (size_t)snprintf(buf + off, sizeof buf - off, "[");
	for (i = 0; i <= VOCAB_MAX; i++)
		off += (size_t)snprintf(buf + off, sizeof buf - off,
		    "%s{\"waitMs\":1}", i > 0 ? "," : "");
	snprintf(buf + off, sizeof buf - off, "]");
	assert_int_equal(steps(buf), ERR_TOO_LARGE);
}

static int
teardown(void **state)
{
	(void)state;
	deskserver_plan_free(p);
	p = NULL;
	return 0;
}

/* Upstream's supervisor: env DISPLAY=:N before every command. */
static void
test_env(void **state)
{
	const struct deskserver_launch	*l;

	(void)state;
	steps_slot = 40;
	assert_int_equal(steps("[{\"argv\":[\"env\",\"DISPLAY=:40\","
	    "\"xdotool\",\"key\",\"--clearmodifiers\",\"Return\"]}]"), 0);
	assert_int_equal(act(0)->kind, ACTION_KEY);
	assert_int_equal(act(0)->keys[0], XK_Return);
	assert_int_equal(steps("[{\"argv\":[\"env\",\"DISPLAY=:40.0\","
	    "\"XAUTHORITY=/tmp/x\",\"xdotool\",\"mousemove\",\"--\",\"-3\","
	    "\"7\",\"click\",\"1\"]}]"), 0);
	assert_int_equal(act(0)->kind, ACTION_MOVE);
	assert_int_equal(act(0)->x, 0);
	assert_int_equal(act(1)->kind, ACTION_CLICK);
	/* Another display than the request's: a code of its own. */
	assert_int_equal(steps("[{\"argv\":[\"env\",\"DISPLAY=:41\","
	    "\"xdotool\",\"key\",\"a\"]}]"), ERR_DISPLAY_MISMATCH);
	assert_non_null(strstr(e.msg, ":41"));
	assert_non_null(strstr(e.msg, ":40"));
	assert_int_equal(steps("[{\"argv\":[\"env\",\"DISPLAY=host:40\","
	    "\"xdotool\",\"key\",\"a\"]}]"), ERR_ACTION_INVALID);
	assert_int_equal(steps("[{\"argv\":[\"env\",\"LD_PRELOAD=/x.so\","
	    "\"xdotool\",\"key\",\"a\"]}]"), ERR_ACTION_INVALID);
	assert_non_null(strstr(e.msg, "LD_PRELOAD"));
	assert_int_equal(steps("[{\"argv\":[\"env\",\"DISPLAY=:40\","
	    "\"DISPLAY=:40\",\"xdotool\",\"key\",\"a\"]}]"),
	    ERR_ACTION_INVALID);
	assert_int_equal(steps("[{\"argv\":[\"env\",\"DISPLAY=:40\"]}]"),
	    ERR_ACTION_INVALID);
	/* Launches become DESKSERVER_LAUNCH entries with their argv. */
	assert_int_equal(steps("[{\"argv\":[\"env\",\"DISPLAY=:40\","
	    "\"RAKAZO_BROWSER_PROFILE=/home/u/.p/chromium-bot-1\","
	    "\"xdg-open\",\"https://example.com\"]},{\"argv\":[\"env\","
	    "\"DISPLAY=:40\",\"xterm\"]}]"), 0);
	assert_int_equal(p->b->n, 2);
	assert_int_equal(p->keyev[0], DESKSERVER_LAUNCH);
	l = p->launch[0];
	assert_string_equal(l->argv[0], "xdg-open");
	assert_string_equal(l->argv[1], "https://example.com");
	assert_null(l->argv[2]);
	assert_string_equal(l->profile,
	    "RAKAZO_BROWSER_PROFILE=/home/u/.p/chromium-bot-1");
	assert_int_equal(p->keyev[1], DESKSERVER_LAUNCH);
	assert_null(p->launch[1]->profile);
	assert_int_equal(steps("[{\"argv\":[\"env\",\"DISPLAY=:40\","
	    "\"rm\",\"-rf\",\"/\"]}]"), ERR_ACTION_INVALID);
	assert_non_null(strstr(e.msg, "launch_app"));
	assert_int_equal(steps("[{\"argv\":[\"env\",\"DISPLAY=:40\","
	    "\"/usr/bin/xdg-open\",\"x\"]}]"), ERR_ACTION_INVALID);
	assert_int_equal(steps("[{\"argv\":[\"env\",\"DISPLAY=:40\","
	    "\"xdg-open\"]}]"), ERR_ACTION_INVALID);
	assert_int_equal(steps("[{\"argv\":[\"env\",\"DISPLAY=:40\","
	    "\"RAKAZO_BROWSER_PROFILE=/p\",\"xterm\"]}]"), ERR_ACTION_INVALID);
	assert_int_equal(steps("[{\"argv\":[\"env\",\"DISPLAY=:40\","
	    "\"RAKAZO_BROWSER_PROFILE=/p/../q\",\"rakazo-browser\"]}]"),
	    ERR_ACTION_INVALID);
	steps_slot = -1;
}

/* Upstream's clipboard paste of text off ASCII becomes typing. */
static void
test_paste(void **state)
{
	(void)state;
	/* "héllo ✓" in base64 */
	assert_int_equal(steps("[{\"argv\":[\"env\",\"DISPLAY=:1\",\"sh\","
	    "\"-c\",\"printf %s aMOpbGxvIOKckw== | base64 -d | xclip "
	    "-selection clipboard -input && sleep 0.2 && xdotool key "
	    "--clearmodifiers ctrl+v\"]}]"), 0);
	assert_int_equal(act(0)->kind, ACTION_TYPE);
	assert_int_equal(act(0)->ntext, 7);
	assert_int_equal(act(0)->text[1], 0xe9);
	assert_int_equal(act(0)->text[6], 0x2713);
	assert_int_equal(steps("[{\"argv\":[\"env\",\"DISPLAY=:1\",\"sh\","
	    "\"-c\",\"printf %s aGk= | base64 -d | rm -rf / && sleep 0.2 && "
	    "xdotool key --clearmodifiers ctrl+v\"]}]"), ERR_ACTION_INVALID);
	assert_int_equal(steps("[{\"argv\":[\"env\",\"DISPLAY=:1\",\"sh\","
	    "\"-c\",\"printf %s a$b= | base64 -d | xclip -selection "
	    "clipboard -input && sleep 0.2 && xdotool key --clearmodifiers "
	    "ctrl+v\"]}]"), ERR_ACTION_INVALID);
	assert_int_equal(steps("[{\"argv\":[\"env\",\"DISPLAY=:1\",\"sh\","
	    "\"-c\",\"true\"]}]"), ERR_ACTION_INVALID);
	assert_non_null(strstr(e.msg, "exec"));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_key, teardown),
		cmocka_unit_test_teardown(test_keydown_keyup, teardown),
		cmocka_unit_test_teardown(test_type, teardown),
		cmocka_unit_test_teardown(test_pointer, teardown),
		cmocka_unit_test_teardown(test_wheel, teardown),
		cmocka_unit_test_teardown(test_sleep, teardown),
		cmocka_unit_test_teardown(test_refused, teardown),
		cmocka_unit_test_teardown(test_steps, teardown),
		cmocka_unit_test_teardown(test_env, teardown),
		cmocka_unit_test_teardown(test_paste, teardown),
		cmocka_unit_test_teardown(test_too_many_actions, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

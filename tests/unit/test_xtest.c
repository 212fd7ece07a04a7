/* SPDX-License-Identifier: MIT */
/*
 * Tests of guestd/xtest.c against a real Xvfb and the xinput-recorder
 * fixture: every action kind must arrive as the right X events in the
 * right order.  Each batch is followed by a sentinel key (F12), and the
 * test reads the recorder's lines up to it, so nothing here sleeps: the
 * sentinel proves everything sent before it was received.
 */
#include "autoconf.h"

#include <sys/types.h>
#include <sys/wait.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <X11/Xlib.h>
#include <X11/keysym.h>

#include "vocab.h"
#include "err.h"
#include "xtest.h"

#define MAXLINES	4096
#define LINE_TIMEOUT_MS	10000

static pid_t	 xvfb_pid = -1, rec_pid = -1;
static int	 rec_fd = -1;
static Display	*dpy;
static char	 rbuf[65536];
static size_t	 rlen;
static char	*lines[MAXLINES];
static int	 nlines;

/* ---- plumbing ------------------------------------------------------------ */

/* Read one line from fd within the timeout; NULL on timeout or EOF. */
static char *
read_line(int fd, char *buf, size_t *len, size_t cap)
{
	struct pollfd	 pfd = { .fd = fd, .events = POLLIN };
	char		*nl, *line;
	ssize_t		 n;

	for (;;) {
		if ((nl = memchr(buf, '\n', *len)) != NULL) {
			*nl = '\0';
			line = strdup(buf);
			*len -= (size_t)(nl + 1 - buf);
			memmove(buf, nl + 1, *len);
			return line;
		}
		if (*len == cap || poll(&pfd, 1, LINE_TIMEOUT_MS) != 1)
			return NULL;
		n = read(fd, buf + *len, cap - *len);
		if (n <= 0)
			return NULL;
		*len += (size_t)n;
	}
}

static pid_t
spawn(char *const argv[], int out_fd, int close_fd)
{
	pid_t	 pid = fork();

	if (pid == 0) {
		if (close_fd >= 0)
			close(close_fd);
		if (out_fd >= 0 && out_fd != STDOUT_FILENO) {
			dup2(out_fd, STDOUT_FILENO);
			close(out_fd);
		}
		execvp(argv[0], argv);
		_exit(127);
	}
	return pid;
}

static void
clear_lines(void)
{
	while (nlines > 0)
		free(lines[--nlines]);
}

/* Send the sentinel key and collect every recorder line before it. */
static void
collect(void)
{
	char	 want[64], *l;
	int	 r;
	struct vocab_batch *sb;
	struct vocab_error e;
	struct xtest_result res;
	json_t	*j;

	clear_lines();
	j = json_loads("[{\"kind\":\"key\",\"keys\":\"F12\"}]", 0, NULL);
	assert_int_equal(vocab_parse(j, 1, &sb, &e), 0);
	json_decref(j);
	r = xtest_apply_blocking(dpy, sb, &res);
	vocab_free(sb);
	assert_int_equal(r, 0);
	snprintf(want, sizeof(want), "key press keysym=0x%lx", (long)XK_F12);
	for (;;) {
		l = read_line(rec_fd, rbuf, &rlen, sizeof(rbuf));
		if (l == NULL)
			fail_msg("recorder went quiet before the sentinel");
		if (strncmp(l, want, strlen(want)) == 0) {
			free(l);
			break;
		}
		assert_true(nlines < MAXLINES);
		lines[nlines++] = l;
	}
	l = read_line(rec_fd, rbuf, &rlen, sizeof(rbuf));	/* release */
	assert_non_null(l);
	assert_non_null(strstr(l, "key release"));
	free(l);
}

static int
apply_json(const char *text, struct xtest_result *res)
{
	struct vocab_batch	*b;
	struct vocab_error	 e;
	json_t			*j;
	int			 r;

	j = json_loads(text, 0, NULL);
	assert_non_null(j);
	r = vocab_parse(j, 1, &b, &e);
	json_decref(j);
	if (r != 0)
		fail_msg("%s: %s", text, e.msg);
	r = xtest_apply_blocking(dpy, b, res);
	vocab_free(b);
	return r;
}

/* Apply, then collect; the batch must succeed. */
static void
run(const char *text)
{
	struct xtest_result	 res;
	int			 r = apply_json(text, &res);

	if (r != 0)
		fail_msg("%s: %s", text, res.msg);
	assert_int_equal(res.failed, -1);
	collect();
}

/* Lines with " state=..." cut off, for exact comparison. */
static const char *
bare(int i)
{
	static char	 buf[256];
	char		*p;

	assert_true(i < nlines);
	snprintf(buf, sizeof(buf), "%s", lines[i]);
	if ((p = strstr(buf, " state=")) != NULL)
		*p = '\0';
	return buf;
}

static void
expect_lines(const char *const *want, int n)
{
	int	 i;

	for (i = 0; i < n && i < nlines; i++)
		if (strcmp(bare(i), want[i]) != 0)
			fail_msg("line %d: got \"%s\", want \"%s\"", i, bare(i),
			    want[i]);
	if (nlines != n)
		fail_msg("got %d lines, want %d (first extra: %s)", nlines, n,
		    nlines > n ? lines[n] : want[nlines]);
}

static unsigned
kc(KeySym s)
{
	return XKeysymToKeycode(dpy, s);
}

/* Keycode of a "key ..." line. */
static unsigned
line_keycode(int i)
{
	const char	*p = strstr(lines[i], "keycode=");

	assert_non_null(p);
	return (unsigned)strtoul(p + 8, NULL, 10);
}

static void
expect_key(int i, const char *what, unsigned code)
{
	if (strncmp(lines[i], what, strlen(what)) != 0 ||
	    line_keycode(i) != code)
		fail_msg("line %d: got \"%s\", want %s keycode=%u", i,
		    lines[i], what, code);
}

/* The UTF-8 text of every key press, decoded from the hex. */
static char *
typed_text(void)
{
	static char	 out[8 * MAXLINES];
	const char	*p;
	size_t		 n = 0;
	unsigned	 byte;
	int		 i;

	for (i = 0; i < nlines; i++) {
		if (strncmp(lines[i], "key press", 9) != 0 ||
		    (p = strstr(lines[i], "utf8=")) == NULL)
			continue;
		for (p += 5; sscanf(p, "%2x", &byte) == 1 &&
		    n < sizeof(out) - 1; p += 2)
			out[n++] = (char)byte;
	}
	out[n] = '\0';
	return out;
}

/* ---- fixture ------------------------------------------------------------- */

static int
setup(void **state)
{
	char	 num[32], nbuf[64], dname[40], *l, fdarg[16];
	const char *recorder = getenv("XINPUT_RECORDER");
	size_t	 nlen = 0;
	int	 dfd[2], rfd[2];

	if (recorder == NULL)
		recorder = "tests/fixtures/xinput-recorder";
	if (access(recorder, X_OK) != 0)
		return -1;
	if (pipe(dfd) != 0 || pipe(rfd) != 0)
		return -1;
	snprintf(fdarg, sizeof(fdarg), "%d", dfd[1]);
	{
		char *const argv[] = { "Xvfb", "-displayfd", fdarg,
		    "-nolisten", "tcp", "-noreset", "-screen", "0",
		    "1280x800x24", NULL };
		xvfb_pid = spawn(argv, -1, dfd[0]);
	}
	close(dfd[1]);
	l = read_line(dfd[0], nbuf, &nlen, sizeof(nbuf));
	close(dfd[0]);
	if (l == NULL)
		return -1;
	snprintf(num, sizeof(num), "%s", l);
	free(l);
	snprintf(dname, sizeof(dname), ":%s", num);
	if ((dpy = XOpenDisplay(dname)) == NULL)
		return -1;
	{
		char *const argv[] = { (char *)recorder, dname, NULL };
		rec_pid = spawn(argv, rfd[1], rfd[0]);
	}
	close(rfd[1]);
	rec_fd = rfd[0];
	l = read_line(rec_fd, rbuf, &rlen, sizeof(rbuf));
	if (l == NULL || strcmp(l, "ready") != 0) {
		free(l);
		return -1;
	}
	free(l);
	return 0;
}

static int
teardown(void **state)
{
	clear_lines();
	if (dpy != NULL)
		XCloseDisplay(dpy);
	if (rec_pid > 0) {
		kill(rec_pid, SIGTERM);
		waitpid(rec_pid, NULL, 0);
	}
	if (xvfb_pid > 0) {
		kill(xvfb_pid, SIGTERM);
		waitpid(xvfb_pid, NULL, 0);
	}
	if (rec_fd >= 0)
		close(rec_fd);
	return 0;
}

/* ---- tests --------------------------------------------------------------- */

static void
test_clicks(void **state)
{
	static const char *const want[] = {
		"motion x=100 y=200",
		"motion x=10 y=20",
		"button press 3 x=10 y=20", "button release 3 x=10 y=20",
		"motion x=30 y=40",
		"button press 1 x=30 y=40", "button release 1 x=30 y=40",
		"button press 1 x=30 y=40", "button release 1 x=30 y=40",
		"motion x=50 y=60",
		"button press 1 x=50 y=60", "button release 1 x=50 y=60",
		"button press 1 x=50 y=60", "button release 1 x=50 y=60",
		"button press 1 x=50 y=60", "button release 1 x=50 y=60",
		"motion x=156 y=50",
		"button press 2 x=156 y=50", "button release 2 x=156 y=50",
		"button press 2 x=156 y=50", "button release 2 x=156 y=50",
	};

	run("[{\"kind\":\"move\",\"x\":100,\"y\":200},"
	    "{\"kind\":\"click\",\"x\":10,\"y\":20,\"button\":\"right\"},"
	    "{\"kind\":\"click\",\"x\":30,\"y\":40,\"count\":2},"
	    "{\"action\":\"triple_click\",\"coordinate\":[50,60]},"
	    "{\"type\":\"click\",\"button\":\"wheel\",\"x\":156,\"y\":50},"
	    "{\"action\":\"middle_click\"}]");
	expect_lines(want, sizeof(want) / sizeof(want[0]));
}

static void
test_click_modifiers(void **state)
{
	run("[{\"action\":\"left_click\",\"coordinate\":[500,300],"
	    "\"text\":\"shift\"}]");
	assert_int_equal(nlines, 5);
	assert_string_equal(bare(0), "motion x=500 y=300");
	expect_key(1, "key press", kc(XK_Shift_L));
	assert_string_equal(bare(2), "button press 1 x=500 y=300");
	/* The click saw Shift held. */
	assert_non_null(strstr(lines[2], "state=0x1"));
	assert_string_equal(bare(3), "button release 1 x=500 y=300");
	expect_key(4, "key release", kc(XK_Shift_L));
}

static void
test_down_up_and_drags(void **state)
{
	int	 i, x, y, px, py, inter = 0, corner = 0;

	run("[{\"kind\":\"down\",\"x\":300,\"y\":300},"
	    "{\"kind\":\"move\",\"x\":310,\"y\":300},{\"kind\":\"up\"}]");
	assert_int_equal(nlines, 4);
	assert_string_equal(bare(0), "motion x=300 y=300");
	assert_string_equal(bare(1), "button press 1 x=300 y=300");
	assert_string_equal(bare(2), "motion x=310 y=300");
	assert_non_null(strstr(lines[2], "state=0x100"));	/* held */
	assert_string_equal(bare(3), "button release 1 x=310 y=300");

	run("[{\"kind\":\"drag\",\"path\":[[100,100],[200,100],[200,150]]}]");
	assert_string_equal(bare(0), "motion x=100 y=100");
	assert_string_equal(bare(1), "button press 1 x=100 y=100");
	px = 100;
	py = 100;
	for (i = 2; i < nlines - 1; i++) {
		assert_int_equal(sscanf(lines[i], "motion x=%d y=%d", &x, &y),
		    2);
		assert_non_null(strstr(lines[i], "state=0x100"));
		/* Along the path, never backwards. */
		assert_true(x >= px && y >= py);
		assert_true(y == 100 || x == 200);
		if (x == 200 && y == 100)
			corner = 1;
		else if (!(x == 200 && y == 150))
			inter++;
		px = x;
		py = y;
	}
	assert_true(corner);
	assert_true(inter >= 4);
	assert_int_equal(px, 200);
	assert_int_equal(py, 150);
	assert_string_equal(bare(nlines - 1), "button release 1 x=200 y=150");

	/* OpenAI drag with a path, Anthropic drag from start to end. */
	run("[{\"type\":\"drag\",\"path\":[{\"x\":10,\"y\":10},"
	    "{\"x\":20,\"y\":12}]},{\"action\":\"left_click_drag\","
	    "\"start_coordinate\":[400,400],\"coordinate\":[400,480]}]");
	assert_string_equal(bare(0), "motion x=10 y=10");
	assert_string_equal(bare(1), "button press 1 x=10 y=10");
	assert_string_equal(bare(2), "motion x=20 y=12");
	assert_string_equal(bare(3), "button release 1 x=20 y=12");
	assert_string_equal(bare(4), "motion x=400 y=400");
	assert_string_equal(bare(5), "button press 1 x=400 y=400");
	assert_string_equal(bare(nlines - 2), "motion x=400 y=480");
	assert_string_equal(bare(nlines - 1), "button release 1 x=400 y=480");
	assert_true(nlines >= 9);	/* 80 px: intermediate motions */
}

static void
test_scroll(void **state)
{
	static const char *const want[] = {
		"motion x=400 y=410",
		"button press 5 x=400 y=410", "button release 5 x=400 y=410",
		"button press 5 x=400 y=410", "button release 5 x=400 y=410",
		"button press 5 x=400 y=410", "button release 5 x=400 y=410",
		"motion x=500 y=400",
		"button press 6 x=500 y=400", "button release 6 x=500 y=400",
		"button press 6 x=500 y=400", "button release 6 x=500 y=400",
		"motion x=640 y=401",
		"button press 4 x=640 y=401", "button release 4 x=640 y=401",
		"button press 4 x=640 y=401", "button release 4 x=640 y=401",
		"button press 7 x=640 y=401", "button release 7 x=640 y=401",
	};

	run("[{\"kind\":\"scroll\",\"x\":400,\"y\":410,\"direction\":\"down\","
	    "\"amount\":3},{\"action\":\"scroll\",\"coordinate\":[500,400],"
	    "\"scroll_direction\":\"left\",\"scroll_amount\":2},"
	    "{\"type\":\"scroll\",\"x\":640,\"y\":401,\"scroll_x\":20,"
	    "\"scroll_y\":-150}]");
	expect_lines(want, sizeof(want) / sizeof(want[0]));
}

static void
test_keys(void **state)
{
	run("[{\"kind\":\"key\",\"keys\":\"ctrl+shift+t\"},"
	    "{\"action\":\"key\",\"text\":\"Return\"},"
	    "{\"type\":\"keypress\",\"keys\":[\"CTRL\",\"L\"]},"
	    "{\"action\":\"key\",\"text\":\"super\"}]");
	assert_int_equal(nlines, 14);
	expect_key(0, "key press", kc(XK_Control_L));
	expect_key(1, "key press", kc(XK_Shift_L));
	expect_key(2, "key press", kc(XK_t));
	expect_key(3, "key release", kc(XK_t));
	expect_key(4, "key release", kc(XK_Shift_L));
	expect_key(5, "key release", kc(XK_Control_L));
	expect_key(6, "key press", kc(XK_Return));
	expect_key(7, "key release", kc(XK_Return));
	expect_key(8, "key press", kc(XK_Control_L));
	expect_key(9, "key press", kc(XK_l));
	assert_non_null(strstr(lines[9], "state=0x4"));	/* ctrl, no shift */
	expect_key(10, "key release", kc(XK_l));
	expect_key(11, "key release", kc(XK_Control_L));
	expect_key(12, "key press", kc(XK_Super_L));
	expect_key(13, "key release", kc(XK_Super_L));

	/* A key needing shift gets it; a chord sequence runs in order. */
	run("[{\"kind\":\"key\",\"keys\":\"plus ctrl+a\"}]");
	assert_int_equal(nlines, 8);
	expect_key(0, "key press", kc(XK_Shift_L));
	assert_string_equal(typed_text(), "+\001");
	expect_key(4, "key press", kc(XK_Control_L));
	expect_key(7, "key release", kc(XK_Control_L));
}

static int
keymap_equal(KeySym *a, KeySym *c, int n)
{
	return memcmp(a, c, (size_t)n * sizeof(KeySym)) == 0;
}

static void
test_type_unicode(void **state)
{
	char		 json[512];
	KeySym		*before, *after;
	int		 min, max, per, per2;

	XDisplayKeycodes(dpy, &min, &max);
	before = XGetKeyboardMapping(dpy, (KeyCode)min, max - min + 1, &per);
	snprintf(json, sizeof(json), "[{\"kind\":\"type\",\"text\":\"%s\"},"
	    "{\"kind\":\"key\",\"keys\":\"\xc3\xa9\"}]", "Hello, World! "
	    "~`|{}<>?_\\\"' 123 \xc3\xa9\xe2\x86\x92\xe4\xb8\xad"
	    "\xf0\x9f\x98\x80 end");
	run(json);
	assert_string_equal(typed_text(), "Hello, World! ~`|{}<>?_\"' 123 "
	    "\xc3\xa9\xe2\x86\x92\xe4\xb8\xad\xf0\x9f\x98\x80 end"
	    "\xc3\xa9");
	/* The spare keycodes went back to nothing. */
	after = XGetKeyboardMapping(dpy, (KeyCode)min, max - min + 1, &per2);
	assert_int_equal(per, per2);
	assert_true(keymap_equal(before, after, (max - min + 1) * per));
	XFree(before);
	XFree(after);
}

/* More distinct characters than spare keycodes: rounds, none lost. */
static void
test_type_many_distinct(void **state)
{
	char	*json, *want, *p;
	uint32_t cp;
	int	 i;

	json = malloc(8192);
	want = malloc(4096);
	assert_non_null(json);
	assert_non_null(want);
	p = want;
	for (i = 0; i < 300; i++) {
		cp = 0x4e00 + (uint32_t)i;
		*p++ = (char)(0xe0 | (cp >> 12));
		*p++ = (char)(0x80 | ((cp >> 6) & 0x3f));
		*p++ = (char)(0x80 | (cp & 0x3f));
		if (i % 7 == 0)
			*p++ = 'a' + (i % 26);
	}
	*p = '\0';
	snprintf(json, 8192, "[{\"kind\":\"type\",\"text\":\"%s\"}]",
	    want);
	run(json);
	assert_string_equal(typed_text(), want);
	free(json);
	free(want);
}

static void
test_type_long_ascii(void **state)
{
	char	 text[1001], json[1100];
	int	 i;

	for (i = 0; i < 1000; i++)
		text[i] = "abcdefghijklmnopqrstuvwxyz0123456789 .,;ABC!"[
		    (i * 7) % 44];
	text[1000] = '\0';
	snprintf(json, sizeof(json), "[{\"action\":\"type\",\"text\":\"%s\"}]",
	    text);
	run(json);
	assert_string_equal(typed_text(), text);
}

static void
test_hold_and_wait_do_not_block(void **state)
{
	struct vocab_batch	*b;
	struct vocab_error	 e;
	struct xtest_exec	*ex;
	uint64_t		 delay;
	json_t			*j;
	char			*l;

	j = json_loads("[{\"kind\":\"hold\",\"keys\":\"shift\",\"duration_ms\":"
	    "200},{\"kind\":\"wait\",\"ms\":30},{\"kind\":\"cursor_position\"}]",
	    0, NULL);
	assert_int_equal(vocab_parse(j, 1, &b, &e), 0);
	json_decref(j);
	assert_int_equal(xtest_exec_new(dpy, b, &ex, &e), 0);
	assert_int_equal(xtest_run(ex, &delay), XTEST_AGAIN);
	assert_int_equal(delay, 200);
	/* Shift is down now and stays down until we call again. */
	l = read_line(rec_fd, rbuf, &rlen, sizeof(rbuf));
	assert_non_null(l);
	assert_non_null(strstr(l, "key press"));
	free(l);
	assert_int_equal(xtest_result(ex)->done, 0);
	assert_int_equal(xtest_run(ex, &delay), XTEST_AGAIN);
	assert_int_equal(delay, 30);
	assert_int_equal(xtest_result(ex)->done, 1);
	assert_int_equal(xtest_run(ex, &delay), XTEST_DONE);
	assert_int_equal(xtest_result(ex)->done, 3);
	assert_true(xtest_result(ex)->has_cursor);
	xtest_exec_free(ex);
	vocab_free(b);
	collect();
	assert_int_equal(nlines, 1);
	expect_key(0, "key release", kc(XK_Shift_L));
}

static void
test_cursor_position(void **state)
{
	struct xtest_result	 res;

	assert_int_equal(apply_json("[{\"type\":\"move\",\"x\":123,\"y\":45},"
	    "{\"action\":\"cursor_position\"},{\"action\":\"screenshot\"}]",
	    &res), 0);
	assert_int_equal(res.done, 3);
	assert_true(res.has_cursor);
	assert_int_equal(res.cursor_x, 123);
	assert_int_equal(res.cursor_y, 45);
	collect();
}

static void
test_off_screen_refused_whole(void **state)
{
	struct xtest_result	 res;

	assert_int_equal(apply_json("[{\"kind\":\"move\",\"x\":11,\"y\":11},"
	    "{\"kind\":\"click\",\"x\":1280,\"y\":10}]", &res),
	    ERR_COORDINATES);
	assert_int_equal(res.failed, 1);
	assert_int_equal(res.done, 0);
	assert_int_equal(apply_json("[{\"kind\":\"drag\",\"path\":[[1,1],"
	    "[5,800]]}]", &res), ERR_COORDINATES);
	assert_int_equal(apply_json("[{\"action\":\"zoom\",\"region\":"
	    "[0,0,1281,10]}]", &res), ERR_COORDINATES);
	collect();
	assert_int_equal(nlines, 0);	/* nothing was applied */
}

static void
test_x_error_is_uncertain(void **state)
{
	struct vocab_batch	*b;
	struct vocab_error	 e;
	struct xtest_result	 res;
	json_t			*j;

	j = json_loads("[{\"kind\":\"move\",\"x\":600,\"y\":600},"
	    "{\"kind\":\"click\"},{\"kind\":\"click\"}]", 0, NULL);
	assert_int_equal(vocab_parse(j, 1, &b, &e), 0);
	json_decref(j);
	b->v[1].button = 200;	/* no such button: the server says BadValue */
	assert_int_equal(xtest_apply_blocking(dpy, b, &res), ERR_X);
	assert_int_equal(res.done, 1);
	assert_int_equal(res.failed, 1);
	assert_true(res.uncertain);
	vocab_free(b);
	collect();
	assert_int_equal(nlines, 1);	/* the move, and nothing after */
	assert_string_equal(bare(0), "motion x=600 y=600");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_clicks),
		cmocka_unit_test(test_click_modifiers),
		cmocka_unit_test(test_down_up_and_drags),
		cmocka_unit_test(test_scroll),
		cmocka_unit_test(test_keys),
		cmocka_unit_test(test_type_unicode),
		cmocka_unit_test(test_type_many_distinct),
		cmocka_unit_test(test_type_long_ascii),
		cmocka_unit_test(test_hold_and_wait_do_not_block),
		cmocka_unit_test(test_cursor_position),
		cmocka_unit_test(test_off_screen_refused_whole),
		cmocka_unit_test(test_x_error_is_uncertain),
	};

	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests(tests, setup, teardown);
}

/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of guestd/vocab.c: the native vocabulary, literal Anthropic
 * and OpenAI action objects (from the vendors' schemas and examples),
 * scaling, key names, and malformed batches refused with a code and the
 * index of the offending action.
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
#include "err.h"

static struct vocab_batch	*b;
static struct vocab_error	 e;

static int
parse_scaled(const char *text, double scale)
{
	json_error_t	 je;
	json_t		*j;
	int		 r;

	vocab_free(b);
	b = NULL;
	j = json_loads(text, JSON_DECODE_ANY | JSON_ALLOW_NUL, &je);
	if (j == NULL)
		fail_msg("test JSON does not parse: %s: %s", je.text, text);
	r = vocab_parse(j, scale, &b, &e);
	json_decref(j);
	if (r != 0)
		assert_null(b);
	else
		assert_non_null(b);
	return r;
}

static int
parse(const char *text)
{
	return parse_scaled(text, 1);
}

static int
teardown(void **state)
{
	vocab_free(b);
	b = NULL;
	return 0;
}

static void
expect_fail(const char *text, int code, int index)
{
	int	 r = parse(text);

	if (r != code || e.index != index)
		fail_msg("%s: got %s at %d (%s), want %s at %d", text,
		    err_name(r), e.index, e.msg, err_name(code), index);
	assert_int_equal(e.code, code);
	assert_true(strlen(e.msg) > 5);
}

/* ---- native ------------------------------------------------------------- */

static void
test_native_pointer(void **state)
{
	struct action	*a;

	assert_int_equal(parse("[{\"kind\":\"move\",\"x\":10,\"y\":20},"
	    "{\"kind\":\"click\",\"x\":1,\"y\":2,\"button\":\"right\","
	    "\"count\":3,\"modifiers\":\"ctrl+shift\"},"
	    "{\"kind\":\"click\"},"
	    "{\"kind\":\"down\",\"button\":\"middle\"},"
	    "{\"kind\":\"up\",\"x\":5,\"y\":6},"
	    "{\"kind\":\"drag\",\"path\":[[1,2],[3,4],[5,6]]},"
	    "{\"kind\":\"scroll\",\"x\":7,\"y\":8,\"direction\":\"left\","
	    "\"amount\":4}]"), 0);
	assert_int_equal(b->n, 7);
	a = &b->v[0];
	assert_int_equal(a->kind, ACTION_MOVE);
	assert_true(a->has_xy);
	assert_int_equal(a->x, 10);
	assert_int_equal(a->y, 20);
	a = &b->v[1];
	assert_int_equal(a->kind, ACTION_CLICK);
	assert_int_equal(a->button, 3);
	assert_int_equal(a->count, 3);
	assert_int_equal(a->nmods, 2);
	assert_int_equal(a->mods[0], XK_Control_L);
	assert_int_equal(a->mods[1], XK_Shift_L);
	a = &b->v[2];
	assert_false(a->has_xy);
	assert_int_equal(a->button, 1);
	assert_int_equal(a->count, 1);
	assert_int_equal(b->v[3].kind, ACTION_DOWN);
	assert_int_equal(b->v[3].button, 2);
	assert_int_equal(b->v[4].kind, ACTION_UP);
	assert_true(b->v[4].has_xy);
	a = &b->v[5];
	assert_int_equal(a->kind, ACTION_DRAG);
	assert_int_equal(a->npath, 3);
	assert_int_equal(a->path[2].x, 5);
	assert_int_equal(a->path[2].y, 6);
	assert_false(a->from_current);
	a = &b->v[6];
	assert_int_equal(a->kind, ACTION_SCROLL);
	assert_int_equal(a->scroll_x, -4);
	assert_int_equal(a->scroll_y, 0);
	assert_true(vocab_has_input(b));
}

static void
test_native_keys(void **state)
{
	struct action	*a;

	assert_int_equal(parse("[{\"kind\":\"key\",\"keys\":\"ctrl+shift+t\"},"
	    "{\"kind\":\"key\",\"keys\":\"ctrl+a  Delete\"},"
	    "{\"kind\":\"type\",\"text\":\"h\\u00e9\\u2192\\u4e2d\\ud83d\\ude00\\n\"},"
	    "{\"kind\":\"hold\",\"keys\":\"shift\",\"duration_ms\":250},"
	    "{\"kind\":\"wait\",\"ms\":30},"
	    "{\"kind\":\"cursor_position\"},"
	    "{\"kind\":\"key\",\"keys\":\"ctrl++\"}]"), 0);
	a = &b->v[0];
	assert_int_equal(a->kind, ACTION_KEY);
	assert_int_equal(a->nkeys, 3);
	assert_int_equal(a->keys[0], XK_Control_L);
	assert_int_equal(a->keys[1], XK_Shift_L);
	assert_int_equal(a->keys[2], XK_t);
	a = &b->v[1];
	assert_int_equal(a->nkeys, 4);
	assert_int_equal(a->keys[1], XK_a);
	assert_int_equal(a->keys[2], 0);
	assert_int_equal(a->keys[3], XK_Delete);
	a = &b->v[2];
	assert_int_equal(a->kind, ACTION_TYPE);
	assert_int_equal(a->ntext, 6);
	assert_int_equal(a->text[1], 0xe9);
	assert_int_equal(a->text[2], 0x2192);
	assert_int_equal(a->text[3], 0x4e2d);
	assert_int_equal(a->text[4], 0x1f600);
	assert_int_equal(a->text[5], '\n');
	assert_int_equal(b->v[3].kind, ACTION_HOLD);
	assert_int_equal(b->v[3].duration_ms, 250);
	assert_int_equal(b->v[3].keys[0], XK_Shift_L);
	assert_int_equal(b->v[4].kind, ACTION_WAIT);
	assert_int_equal(b->v[4].duration_ms, 30);
	assert_int_equal(b->v[5].kind, ACTION_CURSOR_POSITION);
	assert_int_equal(b->v[6].nkeys, 2);
	assert_int_equal(b->v[6].keys[1], XK_plus);
}

/* ---- Anthropic -------------------------------------------------------- */

static void
test_anthropic_literal(void **state)
{
	struct action	*a;

	/* Literal `input` objects of Anthropic's computer tool, as documented. */
	assert_int_equal(parse("["
	    "{\"action\": \"left_click\", \"coordinate\": [500, 300], \"text\": \"shift\"},"
	    "{\"action\": \"scroll\", \"coordinate\": [500, 400], \"scroll_direction\": \"down\", \"scroll_amount\": 3},"
	    "{\"action\": \"left_click_drag\", \"start_coordinate\": [100, 100], \"coordinate\": [300, 300]},"
	    "{\"action\": \"key\", \"text\": \"ctrl+s\"},"
	    "{\"action\": \"hold_key\", \"text\": \"shift\", \"duration\": 1},"
	    "{\"action\": \"zoom\", \"region\": [100, 200, 400, 350]}"
	    "]"), 0);
	a = &b->v[0];
	assert_int_equal(a->kind, ACTION_CLICK);
	assert_int_equal(a->button, 1);
	assert_int_equal(a->x, 500);
	assert_int_equal(a->y, 300);
	assert_int_equal(a->nmods, 1);
	assert_int_equal(a->mods[0], XK_Shift_L);
	a = &b->v[1];
	assert_int_equal(a->kind, ACTION_SCROLL);
	assert_int_equal(a->scroll_y, 3);
	assert_int_equal(a->y, 400);
	a = &b->v[2];
	assert_int_equal(a->kind, ACTION_DRAG);
	assert_int_equal(a->npath, 2);
	assert_int_equal(a->path[0].x, 100);
	assert_int_equal(a->path[1].y, 300);
	assert_false(a->from_current);
	a = &b->v[3];
	assert_int_equal(a->kind, ACTION_KEY);
	assert_int_equal(a->keys[0], XK_Control_L);
	assert_int_equal(a->keys[1], XK_s);
	assert_int_equal(b->v[4].kind, ACTION_HOLD);
	assert_int_equal(b->v[4].duration_ms, 1000);
	a = &b->v[5];
	assert_int_equal(a->kind, ACTION_ZOOM);
	assert_int_equal(a->region[0], 100);
	assert_int_equal(a->region[3], 350);
}

static void
test_anthropic_all(void **state)
{
	static const struct {
		const char	*json;
		enum action_kind kind;
		int		 button, count;
	} c[] = {
		{ "{\"action\":\"screenshot\"}", ACTION_SCREENSHOT, 0, 0 },
		{ "{\"action\":\"cursor_position\"}",
		    ACTION_CURSOR_POSITION, 0, 0 },
		{ "{\"action\":\"mouse_move\",\"coordinate\":[1,2]}",
		    ACTION_MOVE, 0, 0 },
		{ "{\"action\":\"left_click\"}", ACTION_CLICK, 1, 1 },
		{ "{\"action\":\"right_click\",\"coordinate\":[3,4]}",
		    ACTION_CLICK, 3, 1 },
		{ "{\"action\":\"middle_click\",\"coordinate\":[3,4]}",
		    ACTION_CLICK, 2, 1 },
		{ "{\"action\":\"double_click\",\"coordinate\":[3,4]}",
		    ACTION_CLICK, 1, 2 },
		{ "{\"action\":\"triple_click\",\"coordinate\":[3,4],"
		    "\"text\":\"ctrl+shift\"}", ACTION_CLICK, 1, 3 },
		{ "{\"action\":\"left_mouse_down\"}", ACTION_DOWN, 1, 0 },
		{ "{\"action\":\"left_mouse_up\"}", ACTION_UP, 1, 0 },
		{ "{\"action\":\"type\",\"text\":\"Hello, world\"}",
		    ACTION_TYPE, 0, 0 },
		{ "{\"action\":\"wait\",\"duration\":0.5}", ACTION_WAIT, 0, 0 },
		{ "{\"action\":\"key\",\"text\":\"Return\"}", ACTION_KEY, 0, 0 },
		{ "{\"action\":\"key\",\"text\":\"alt+Tab\"}", ACTION_KEY, 0, 0 },
		{ "{\"action\":\"key\",\"text\":\"KP_0\"}", ACTION_KEY, 0, 0 },
		{ "{\"action\":\"key\",\"text\":\"Up\"}", ACTION_KEY, 0, 0 },
		{ "{\"action\":\"key\",\"text\":\"super\"}", ACTION_KEY, 0, 0 },
	};
	size_t	 i;
	char	 buf[256];

	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		snprintf(buf, sizeof(buf), "[%s]", c[i].json);
		if (parse(buf) != 0)
			fail_msg("%s: %s", c[i].json, e.msg);
		assert_int_equal(b->v[0].kind, c[i].kind);
		if (c[i].button != 0)
			assert_int_equal(b->v[0].button, c[i].button);
		if (c[i].count != 0)
			assert_int_equal(b->v[0].count, c[i].count);
	}
	assert_int_equal(parse("[{\"action\":\"wait\",\"duration\":0.5}]"), 0);
	assert_int_equal(b->v[0].duration_ms, 500);
	assert_false(vocab_has_input(b));
	/* 20241022 drag: from wherever the pointer is. */
	assert_int_equal(parse("[{\"action\":\"left_click_drag\","
	    "\"coordinate\":[30,40]}]"), 0);
	assert_true(b->v[0].from_current);
	assert_int_equal(b->v[0].path[1].x, 30);
	/* The demo's non-schema modifier field. */
	assert_int_equal(parse("[{\"action\":\"left_click\","
	    "\"coordinate\":[1,1],\"key\":\"ctrl\"}]"), 0);
	assert_int_equal(b->v[0].mods[0], XK_Control_L);
}

/* ---- OpenAI ----------------------------------------------------------- */

static void
test_openai_literal(void **state)
{
	struct action	*a;

	/* OpenAI computer-use actions (the first verbatim from its guide). */
	assert_int_equal(parse("["
	    "{\"type\": \"click\", \"button\": \"left\", \"x\": 156, \"y\": 50},"
	    "{\"type\": \"drag\", \"path\": [{\"x\": 100, \"y\": 200}, {\"x\": 200, \"y\": 300}]},"
	    "{\"type\": \"scroll\", \"x\": 640, \"y\": 400, \"scroll_x\": 0, \"scroll_y\": 300},"
	    "{\"type\": \"keypress\", \"keys\": [\"CTRL\", \"L\"]},"
	    "{\"type\": \"double_click\", \"x\": 1, \"y\": 2, \"keys\": null},"
	    "{\"type\": \"move\", \"x\": 3, \"y\": 4, \"keys\": [\"shift\"]},"
	    "{\"type\": \"type\", \"text\": \"hi\"},"
	    "{\"type\": \"wait\"},"
	    "{\"type\": \"screenshot\"},"
	    "{\"type\": \"click\", \"button\": \"wheel\", \"x\": 1, \"y\": 1},"
	    "{\"type\": \"click\", \"button\": \"back\", \"x\": 1, \"y\": 1},"
	    "{\"type\": \"scroll\", \"x\": 1, \"y\": 1, \"scroll_x\": -50, \"scroll_y\": -1}"
	    "]"), 0);
	a = &b->v[0];
	assert_int_equal(a->kind, ACTION_CLICK);
	assert_int_equal(a->x, 156);
	assert_int_equal(a->y, 50);
	assert_int_equal(a->button, 1);
	assert_int_equal(a->count, 1);
	a = &b->v[1];
	assert_int_equal(a->kind, ACTION_DRAG);
	assert_int_equal(a->path[0].y, 200);
	assert_int_equal(a->path[1].x, 200);
	a = &b->v[2];
	assert_int_equal(a->scroll_y, 3);
	assert_int_equal(a->scroll_x, 0);
	a = &b->v[3];
	assert_int_equal(a->kind, ACTION_KEY);
	assert_int_equal(a->nkeys, 2);
	assert_int_equal(a->keys[0], XK_Control_L);
	assert_int_equal(a->keys[1], XK_l);	/* not shift+L */
	assert_int_equal(b->v[4].count, 2);
	assert_int_equal(b->v[4].nmods, 0);
	assert_int_equal(b->v[5].mods[0], XK_Shift_L);
	assert_int_equal(b->v[6].kind, ACTION_TYPE);
	assert_int_equal(b->v[7].kind, ACTION_WAIT);
	assert_true(b->v[7].duration_ms > 0);
	assert_int_equal(b->v[8].kind, ACTION_SCREENSHOT);
	assert_int_equal(b->v[9].button, 2);
	assert_int_equal(b->v[10].button, 8);
	assert_int_equal(b->v[11].scroll_x, -1);
	assert_int_equal(b->v[11].scroll_y, -1);
}

static void
test_scale(void **state)
{
	json_t	*args;

	/* 1366x768 model space on a 1920x1080 screen. */
	assert_int_equal(parse_scaled("[{\"action\":\"left_click\","
	    "\"coordinate\":[683,384]},{\"type\":\"drag\",\"path\":"
	    "[{\"x\":0,\"y\":0},{\"x\":1365,\"y\":767}]}]", 1366.0 / 1920),
	    0);
	assert_int_equal(b->v[0].x, 960);
	assert_int_equal(b->v[0].y, 540);
	assert_int_equal(b->v[1].path[1].x, 1919);
	assert_int_equal(b->v[1].path[1].y, 1078);
	/* A tiny scale takes a coordinate past any screen: refused. */
	assert_int_equal(parse_scaled("[{\"action\":\"left_click\","
	    "\"coordinate\":[300,300]}]", 5e-75), ERR_COORDINATES);
	assert_int_equal(parse_scaled("[{\"action\":\"left_click\","
	    "\"coordinate\":[0,300]}]", 0.001), ERR_COORDINATES);
	assert_int_equal(parse_scaled("[{\"action\":\"left_click\","
	    "\"coordinate\":[0,100]}]", 0.001), 0);
	assert_int_equal(b->v[0].y, 100000);
	vocab_free(b);
	b = NULL;
	args = json_pack("{s:f,s:[{s:s,s:i,s:i}]}", "scale", 0.5, "actions",
	    "kind", "move", "x", 100, "y", 51);
	assert_int_equal(vocab_parse_args(args, &b, &e), 0);
	assert_int_equal(b->v[0].x, 200);
	assert_int_equal(b->v[0].y, 102);
	json_object_set_new(args, "scale", json_integer(0));
	vocab_free(b);
	b = NULL;
	assert_int_equal(vocab_parse_args(args, &b, &e), ERR_BAD_REQUEST);
	assert_null(b);
	json_object_set_new(args, "scale", json_string("2"));
	assert_int_equal(vocab_parse_args(args, &b, &e), ERR_BAD_REQUEST);
	json_object_del(args, "scale");
	json_object_del(args, "actions");
	assert_int_equal(vocab_parse_args(args, &b, &e), ERR_BAD_REQUEST);
	json_decref(args);
}

/* ---- key names --------------------------------------------------------- */

static unsigned long
ks(const char *s)
{
	return vocab_keysym(s, strlen(s), 0);
}

static void
test_keysyms(void **state)
{
	assert_int_equal(ks("ctrl"), XK_Control_L);
	assert_int_equal(ks("CTRL"), XK_Control_L);
	assert_int_equal(ks("control"), XK_Control_L);
	assert_int_equal(ks("alt"), XK_Alt_L);
	assert_int_equal(ks("shift"), XK_Shift_L);
	assert_int_equal(ks("super"), XK_Super_L);
	assert_int_equal(ks("meta"), XK_Super_L);
	assert_int_equal(ks("cmd"), XK_Super_L);
	assert_int_equal(ks("win"), XK_Super_L);
	assert_int_equal(ks("Return"), XK_Return);
	assert_int_equal(ks("enter"), XK_Return);
	assert_int_equal(ks("ENTER"), XK_Return);
	assert_int_equal(ks("Escape"), XK_Escape);
	assert_int_equal(ks("esc"), XK_Escape);
	assert_int_equal(ks("BackSpace"), XK_BackSpace);
	assert_int_equal(ks("Page_Up"), XK_Prior);
	assert_int_equal(ks("Prior"), XK_Prior);
	assert_int_equal(ks("pagedown"), XK_Next);
	assert_int_equal(ks("ArrowLeft"), XK_Left);
	assert_int_equal(ks("Up"), XK_Up);
	assert_int_equal(ks("F1"), XK_F1);
	assert_int_equal(ks("f12"), XK_F12);
	assert_int_equal(ks("F24"), XK_F24);
	assert_int_equal(ks("KP_0"), XK_KP_0);
	assert_int_equal(ks("space"), XK_space);
	assert_int_equal(ks("a"), XK_a);
	assert_int_equal(ks("A"), XK_A);
	assert_int_equal(vocab_keysym("A", 1, 1), XK_a);
	assert_int_equal(ks("/"), XK_slash);
	assert_int_equal(ks("\xc3\xa9"), 0xe9);		/* é */
	assert_int_equal(ks("\xe2\x86\x92"), 0x1002192);	/* → */
	assert_int_equal(ks("nosuchkey"), 0);
	assert_int_equal(ks("F36"), 0);
	assert_int_equal(ks("F0"), 0);
	assert_int_equal(ks("0xff0d"), XK_Return);	/* xdotool allows it */
	assert_int_equal(ks(""), 0);
	assert_int_equal(ks("VoidSymbol"), 0);
}

/* ---- malformed ---------------------------------------------------------- */

static void
test_malformed(void **state)
{
	expect_fail("[]", ERR_BAD_REQUEST, -1);
	expect_fail("{\"kind\":\"move\"}", ERR_BAD_REQUEST, -1);
	expect_fail("[{\"kind\":\"teleport\"}]", ERR_ACTION_INVALID, 0);
	expect_fail("[{\"kind\":\"move\",\"x\":1,\"y\":1},"
	    "{\"action\":\"fly\"}]", ERR_ACTION_INVALID, 1);
	expect_fail("[{\"type\":\"fly\"}]", ERR_ACTION_INVALID, 0);
	expect_fail("[{\"foo\":1}]", ERR_ACTION_INVALID, 0);
	expect_fail("[42]", ERR_ACTION_INVALID, 0);
	expect_fail("[{\"kind\":3}]", ERR_ACTION_INVALID, 0);
	/* Missing or ill-formed coordinates. */
	expect_fail("[{\"kind\":\"move\"}]", ERR_ACTION_INVALID, 0);
	expect_fail("[{\"kind\":\"move\",\"x\":1}]", ERR_ACTION_INVALID, 0);
	expect_fail("[{\"action\":\"mouse_move\"}]", ERR_ACTION_INVALID, 0);
	expect_fail("[{\"action\":\"mouse_move\",\"coordinate\":[1]}]",
	    ERR_ACTION_INVALID, 0);
	expect_fail("[{\"action\":\"mouse_move\",\"coordinate\":[1,\"2\"]}]",
	    ERR_ACTION_INVALID, 0);
	expect_fail("[{\"type\":\"click\",\"button\":\"left\"}]",
	    ERR_ACTION_INVALID, 0);
	expect_fail("[{\"type\":\"move\",\"x\":-1,\"y\":1}]",
	    ERR_COORDINATES, 0);
	expect_fail("[{\"kind\":\"move\",\"x\":1,\"y\":1e9}]",
	    ERR_COORDINATES, 0);
	expect_fail("[{\"action\":\"left_click_drag\","
	    "\"start_coordinate\":[1,1]}]", ERR_ACTION_INVALID, 0);
	expect_fail("[{\"kind\":\"drag\",\"path\":[[1,1]]}]",
	    ERR_ACTION_INVALID, 0);
	expect_fail("[{\"type\":\"drag\",\"path\":[{\"x\":1},{\"x\":2,"
	    "\"y\":2}]}]", ERR_ACTION_INVALID, 0);
	/* Out-of-range fields and strict native shapes. */
	expect_fail("[{\"kind\":\"click\",\"count\":4}]",
	    ERR_ACTION_INVALID, 0);
	expect_fail("[{\"kind\":\"click\",\"button\":\"wheel\"}]",
	    ERR_ACTION_INVALID, 0);
	expect_fail("[{\"type\":\"click\",\"x\":1,\"y\":1,"
	    "\"button\":\"middle\"}]", ERR_ACTION_INVALID, 0);
	expect_fail("[{\"kind\":\"click\",\"bogus\":1}]",
	    ERR_ACTION_INVALID, 0);
	expect_fail("[{\"kind\":\"scroll\",\"direction\":\"in\","
	    "\"amount\":1}]", ERR_ACTION_INVALID, 0);
	expect_fail("[{\"kind\":\"scroll\",\"direction\":\"up\","
	    "\"amount\":51}]", ERR_ACTION_INVALID, 0);
	expect_fail("[{\"kind\":\"wait\",\"ms\":10001}]",
	    ERR_ACTION_INVALID, 0);
	expect_fail("[{\"action\":\"wait\",\"duration\":11}]",
	    ERR_ACTION_INVALID, 0);
	expect_fail("[{\"action\":\"hold_key\",\"text\":\"a\"}]",
	    ERR_ACTION_INVALID, 0);
	expect_fail("[{\"action\":\"zoom\",\"region\":[5,5,1,1]}]",
	    ERR_ACTION_INVALID, 0);
	expect_fail("[{\"kind\":\"type\"}]", ERR_ACTION_INVALID, 0);
	expect_fail("[{\"kind\":\"type\",\"text\":\"a\\u0007b\"}]",
	    ERR_ACTION_INVALID, 0);
	expect_fail("[{\"kind\":\"type\",\"text\":\"a\\u0000b\"}]",
	    ERR_ACTION_INVALID, 0);
	/* Bad key names. */
	expect_fail("[{\"kind\":\"key\",\"keys\":\"ctrl+nosuchkey\"}]",
	    ERR_KEY_UNKNOWN, 0);
	expect_fail("[{\"kind\":\"key\",\"keys\":\"ctrl+\"}]",
	    ERR_KEY_UNKNOWN, 0);
	expect_fail("[{\"kind\":\"click\",\"modifiers\":\"ctrl++)\"}]",
	    ERR_KEY_UNKNOWN, 0);
	expect_fail("[{\"kind\":\"click\",\"modifiers\":\"ctrl shift\"}]",
	    ERR_KEY_UNKNOWN, 0);
	expect_fail("[{\"action\":\"key\",\"text\":\"\"}]",
	    ERR_ACTION_INVALID, 0);
	expect_fail("[{\"action\":\"key\",\"text\":\"   \"}]",
	    ERR_ACTION_INVALID, 0);
	expect_fail("[{\"type\":\"keypress\",\"keys\":[\"CTRL\",\"Hyperdrive\"]}]",
	    ERR_KEY_UNKNOWN, 0);
	expect_fail("[{\"type\":\"keypress\",\"keys\":[]}]",
	    ERR_ACTION_INVALID, 0);
	expect_fail("[{\"action\":\"left_click\",\"coordinate\":[1,1],"
	    "\"text\":\"shfit\"}]", ERR_KEY_UNKNOWN, 0);
	expect_fail("[{\"kind\":\"key\",\"keys\":\"a\"},{\"kind\":\"key\","
	    "\"keys\":\"F99\"}]", ERR_KEY_UNKNOWN, 1);
}

static void
test_limits(void **state)
{
	char	*big;
	size_t	 i, n;

	/* 256 actions pass, 257 are refused as a whole. */
	n = 2 + 257 * 20;
	big = malloc(n);
	assert_non_null(big);
	strcpy(big, "[");
	for (i = 0; i < 256; i++)
		strcat(big, "{\"kind\":\"click\"},");
	big[strlen(big) - 1] = ']';
	assert_int_equal(parse(big), 0);
	assert_int_equal(b->n, 256);
	big[strlen(big) - 1] = ',';
	strcat(big, "{\"kind\":\"click\"}]");
	expect_fail(big, ERR_TOO_LARGE, -1);
	free(big);

	/* 64 KiB of text pass; one byte more does not. */
	n = VOCAB_TEXT_MAX + 64;
	big = malloc(n);
	assert_non_null(big);
	strcpy(big, "[{\"kind\":\"type\",\"text\":\"");
	i = strlen(big);
	memset(big + i, 'x', VOCAB_TEXT_MAX);
	strcpy(big + i + VOCAB_TEXT_MAX, "\"}]");
	assert_int_equal(parse(big), 0);
	assert_int_equal(b->v[0].ntext, VOCAB_TEXT_MAX);
	big[i + VOCAB_TEXT_MAX] = 'x';
	strcpy(big + i + VOCAB_TEXT_MAX + 1, "\"}]");
	expect_fail(big, ERR_TOO_LARGE, 0);
	free(big);

	/* Key specs: 256 bytes pass, 257 do not. */
	big = malloc(400);
	assert_non_null(big);
	strcpy(big, "[{\"kind\":\"key\",\"keys\":\"");
	i = strlen(big);
	memset(big + i, 'a', VOCAB_KEYSPEC_MAX);
	for (n = 1; n < VOCAB_KEYSPEC_MAX; n += 2)
		big[i + n] = ' ';
	strcpy(big + i + VOCAB_KEYSPEC_MAX, "\"}]");
	assert_int_equal(parse(big), 0);
	big[i + VOCAB_KEYSPEC_MAX] = 'a';
	strcpy(big + i + VOCAB_KEYSPEC_MAX + 1, "\"}]");
	expect_fail(big, ERR_TOO_LARGE, 0);
	free(big);
}

static void
test_bad_utf8(void **state)
{
	json_t	*arr;

	/* jansson never builds such strings from text, but a caller might. */
	arr = json_pack("[{s:s,s:o}]", "kind", "type", "text",
	    json_stringn_nocheck("a\xc3(b", 4));
	assert_int_equal(vocab_parse(arr, 1, &b, &e), ERR_ACTION_INVALID);
	assert_int_equal(e.index, 0);
	json_decref(arr);
	arr = json_pack("[{s:s,s:o}]", "kind", "type", "text",
	    json_stringn_nocheck("\xed\xa0\x80", 3));	/* a surrogate */
	assert_int_equal(vocab_parse(arr, 1, &b, &e), ERR_ACTION_INVALID);
	json_decref(arr);
	arr = json_pack("[{s:s,s:o}]", "kind", "type", "text",
	    json_stringn_nocheck("\xc0\xaf", 2));	/* overlong '/' */
	assert_int_equal(vocab_parse(arr, 1, &b, &e), ERR_ACTION_INVALID);
	json_decref(arr);
	assert_null(b);
}

/* The repeat guard's exemption: navigation keys only. */
static void
test_navigation_only(void **state)
{
	static const char *const nav[] = {
		"[{\"action\":\"key\",\"text\":\"Down\"}]",
		"[{\"kind\":\"key\",\"keys\":\"shift+Tab Page_Down\"}]",
		"[{\"type\":\"keypress\",\"keys\":[\"TAB\"]}]",
		("[{\"kind\":\"key\",\"keys\":\"ctrl+End KP_Up\"},"
		    "{\"kind\":\"wait\",\"ms\":10}]"),
	};
	static const char *const other[] = {
		"[{\"action\":\"key\",\"text\":\"F5\"}]",
		"[{\"kind\":\"key\",\"keys\":\"Down a\"}]",
		"[{\"kind\":\"key\",\"keys\":\"shift\"}]",
		("[{\"kind\":\"key\",\"keys\":\"Down\"},"
		    "{\"kind\":\"click\",\"x\":1,\"y\":1}]"),
		("[{\"kind\":\"scroll\",\"direction\":\"down\","
		    "\"amount\":3}]"),
		"[{\"kind\":\"type\",\"text\":\"x\"}]",
		"[{\"kind\":\"wait\",\"ms\":10}]",
	};
	size_t	i;

	(void)state;
	for (i = 0; i < sizeof nav / sizeof nav[0]; i++) {
		assert_int_equal(parse(nav[i]), 0);
		assert_true(vocab_navigation_only(b));
	}
	for (i = 0; i < sizeof other / sizeof other[0]; i++) {
		assert_int_equal(parse(other[i]), 0);
		assert_false(vocab_navigation_only(b));
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_native_pointer, teardown),
		cmocka_unit_test_teardown(test_native_keys, teardown),
		cmocka_unit_test_teardown(test_anthropic_literal, teardown),
		cmocka_unit_test_teardown(test_anthropic_all, teardown),
		cmocka_unit_test_teardown(test_openai_literal, teardown),
		cmocka_unit_test_teardown(test_scale, teardown),
		cmocka_unit_test(test_keysyms),
		cmocka_unit_test_teardown(test_malformed, teardown),
		cmocka_unit_test_teardown(test_limits, teardown),
		cmocka_unit_test_teardown(test_bad_utf8, teardown),
		cmocka_unit_test_teardown(test_navigation_only, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

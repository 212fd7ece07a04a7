/* SPDX-License-Identifier: MIT */
/*
 * vocab: turn an `act` batch in any of the three accepted vocabularies
 * (native, Anthropic `computer`, OpenAI computer use) into struct action.
 * Everything a batch can get wrong is found here, before xtest.c applies
 * anything: unknown kinds, missing or ill-typed fields, key names that
 * name no keysym, text that is not UTF-8 or too long, too many actions.
 * Native objects are checked strictly (unknown fields are an error); the
 * foreign vocabularies are read leniently, because agents built for them
 * send fields we do not need and must work unchanged (G-11).
 */
#include "autoconf.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <X11/Xlib.h>
#include <X11/keysym.h>

#include "err.h"
#include "json.h"
#include "vocab.h"

/* OpenAI scroll distances are pixels; one wheel click scrolls ~100. */
#define VOCAB_PX_PER_CLICK	100
#define VOCAB_OPENAI_KEYS_MAX	16
#define VOCAB_DEFAULT_WAIT_MS	1000

/* Round half away from zero, without libm; clamped (NaN is 0) so a
 * peer's huge or tiny scale can never overflow the conversion. */
#define VOCAB_ROUND_MAX	1e15

static long
around(double d)
{
	if (!(d == d))
		return 0;
	if (d > VOCAB_ROUND_MAX)
		d = VOCAB_ROUND_MAX;
	else if (d < -VOCAB_ROUND_MAX)
		d = -VOCAB_ROUND_MAX;
	return d >= 0 ? (long)(d + 0.5) : -(long)(-d + 0.5);
}

struct aparse {
	json_t			*o;
	struct action		*a;
	double			 scale;
	int			 index;
	struct vocab_error	*err;
};

static int aerr(struct aparse *, int, const char *, ...)
    __attribute__((format(printf, 3, 4)));

static int
aerr(struct aparse *p, int code, const char *fmt, ...)
{
	va_list	 ap;
	int	 n;

	p->err->code = code;
	p->err->index = p->index;
	n = snprintf(p->err->msg, sizeof(p->err->msg), "action %d: ",
	    p->index);
	if (n < 0 || (size_t)n >= sizeof(p->err->msg))
		n = 0;
	va_start(ap, fmt);
	vsnprintf(p->err->msg + n, sizeof(p->err->msg) - n, fmt, ap);
	va_end(ap);
	return code;
}

/* Present and not null: foreign schemas send "keys": null for none. */
static json_t *
aget(struct aparse *p, const char *key)
{
	json_t	*v = json_object_get(p->o, key);

	return json_is_null(v) ? NULL : v;
}

/* ---- key names ---------------------------------------------------------- */

struct key_alias {
	const char	*name;
	unsigned long	 sym;
};

/*
 * Lower-case aliases: xdotool's modifier names, the names models emit
 * (see the pyautogui and Playwright maps of the vendors' samples), and
 * the OpenAI sample's key table.  Matched case-insensitively.
 */
static const struct key_alias key_aliases[] = {
	{ "ctrl", XK_Control_L }, { "control", XK_Control_L },
	{ "control_l", XK_Control_L }, { "control_r", XK_Control_R },
	{ "alt", XK_Alt_L }, { "option", XK_Alt_L }, { "alt_l", XK_Alt_L },
	{ "alt_r", XK_Alt_R }, { "altgr", XK_ISO_Level3_Shift },
	{ "shift", XK_Shift_L }, { "shift_l", XK_Shift_L },
	{ "shift_r", XK_Shift_R },
	{ "super", XK_Super_L }, { "super_l", XK_Super_L },
	{ "super_r", XK_Super_R }, { "meta", XK_Super_L },
	{ "cmd", XK_Super_L }, { "command", XK_Super_L },
	{ "win", XK_Super_L }, { "windows", XK_Super_L },
	{ "return", XK_Return }, { "enter", XK_Return },
	{ "escape", XK_Escape }, { "esc", XK_Escape },
	{ "backspace", XK_BackSpace }, { "tab", XK_Tab },
	{ "space", XK_space }, { "spacebar", XK_space },
	{ "delete", XK_Delete }, { "del", XK_Delete },
	{ "insert", XK_Insert }, { "ins", XK_Insert },
	{ "home", XK_Home }, { "end", XK_End },
	{ "pageup", XK_Prior }, { "page_up", XK_Prior }, { "pgup", XK_Prior },
	{ "prior", XK_Prior },
	{ "pagedown", XK_Next }, { "page_down", XK_Next },
	{ "pgdn", XK_Next }, { "next", XK_Next },
	{ "up", XK_Up }, { "down", XK_Down }, { "left", XK_Left },
	{ "right", XK_Right },
	{ "arrowup", XK_Up }, { "arrowdown", XK_Down },
	{ "arrowleft", XK_Left }, { "arrowright", XK_Right },
	{ "capslock", XK_Caps_Lock }, { "caps_lock", XK_Caps_Lock },
	{ "numlock", XK_Num_Lock }, { "scrolllock", XK_Scroll_Lock },
	{ "print", XK_Print }, { "printscreen", XK_Print },
	{ "prtsc", XK_Print }, { "pause", XK_Pause }, { "menu", XK_Menu },
	{ "divide", XK_KP_Divide }, { "multiply", XK_KP_Multiply },
	{ "subtract", XK_KP_Subtract }, { "add", XK_KP_Add },
	{ "backslash", XK_backslash }, { "slash", XK_slash },
	{ "minus", XK_minus }, { "plus", XK_plus }, { "equal", XK_equal },
	{ "comma", XK_comma }, { "period", XK_period },
	{ NULL, 0 }
};

/* The keysym X uses for a code point: Latin-1 as is, else 0x01000000 + cp. */
static unsigned long
cp_keysym(uint32_t cp)
{
	if ((cp >= 0x20 && cp <= 0x7e) || (cp >= 0xa0 && cp <= 0xff))
		return cp;
	return 0x01000000UL | cp;
}

unsigned long
vocab_keysym(const char *name, size_t len, int in_chord)
{
	const struct key_alias *k;
	char	 buf[65];
	uint32_t cp;
	KeySym	 sym;
	size_t	 i;
	int	 f;

	if (len == 0 || len >= sizeof(buf))
		return 0;
	/* A single character names its own key: "a", "/", "é", "→". */
	if (jsonx_utf8_len((const uint8_t *)name, len, &cp) == len) {
		if (cp < 0x20 || cp == 0x7f || (cp >= 0x80 && cp < 0xa0))
			return 0;
		if (in_chord && cp >= 'A' && cp <= 'Z')
			cp += 'a' - 'A';
		return cp_keysym(cp);
	}
	for (k = key_aliases; k->name != NULL; k++)
		if (strlen(k->name) == len &&
		    strncasecmp(k->name, name, len) == 0)
			return k->sym;
	memcpy(buf, name, len);
	buf[len] = '\0';
	if ((buf[0] == 'f' || buf[0] == 'F') && len <= 3 &&
	    isdigit((unsigned char)buf[1]) &&
	    (len == 2 || isdigit((unsigned char)buf[2]))) {
		f = atoi(buf + 1);
		if (f >= 1 && f <= 35)
			return XK_F1 + (unsigned long)(f - 1);
		return 0;
	}
	for (i = 0; i < len; i++)
		if (!isalnum((unsigned char)buf[i]) && buf[i] != '_')
			return 0;
	sym = XStringToKeysym(buf);
	if (sym == NoSymbol || sym == XK_VoidSymbol)
		return 0;
	return (unsigned long)sym;
}

/*
 * Parse a key spec into p->a->keys.  Chords are joined by '+', and when
 * seq, sequences of chords are separated by blanks ("ctrl+a Delete").  A
 * '+' where a name should start is the plus key itself ("ctrl++").
 */
static int
parse_keyspec(struct aparse *p, const char *s, size_t n, int seq)
{
	unsigned long	*keys, sym;
	size_t		 i = 0, start, nk = 0, inchord;
	int		 r;

	if (n == 0)
		return aerr(p, ERR_ACTION_INVALID, "the key spec is empty");
	if (n > VOCAB_KEYSPEC_MAX)
		return aerr(p, ERR_TOO_LARGE, "the key spec is longer than %d "
		    "bytes", VOCAB_KEYSPEC_MAX);
	if ((keys = calloc(n + 1, sizeof(*keys))) == NULL)
		return aerr(p, ERR_NOMEM, "out of memory");
	while (i < n) {
		if (seq && isspace((unsigned char)s[i])) {
			i++;
			continue;
		}
		/* One chord: names joined by '+'. */
		inchord = 0;
		for (;;) {
			start = i;
			if (s[i] == '+')
				i++;
			else
				while (i < n && s[i] != '+' &&
				    !(seq && isspace((unsigned char)s[i])))
					i++;
			if (i == start) {
				r = aerr(p, ERR_KEY_UNKNOWN,
				    "a key name in the spec is empty");
				goto fail;
			}
			sym = vocab_keysym(s + start, i - start,
			    (i < n && s[i] == '+') || inchord > 0);
			if (sym == 0) {
				r = aerr(p, ERR_KEY_UNKNOWN, "key name %.*s is "
				    "not known", (int)(i - start > 40 ? 40 :
				    i - start), s + start);
				goto fail;
			}
			keys[nk++] = sym;
			inchord++;
			if (i < n && s[i] == '+') {
				i++;
				if (i == n || (seq &&
				    isspace((unsigned char)s[i]))) {
					r = aerr(p, ERR_KEY_UNKNOWN, "a key "
					    "name in the spec is empty");
					goto fail;
				}
				continue;
			}
			break;
		}
		if (i < n && !(seq && isspace((unsigned char)s[i]))) {
			r = aerr(p, ERR_KEY_UNKNOWN, "key names must be joined "
			    "by '+'");
			goto fail;
		}
		if (i < n)
			keys[nk++] = 0;	/* chord separator */
	}
	while (nk > 0 && keys[nk - 1] == 0)
		nk--;
	if (nk == 0) {
		r = aerr(p, ERR_ACTION_INVALID, "the key spec names no key");
		goto fail;
	}
	p->a->keys = keys;
	p->a->nkeys = nk;
	return 0;
fail:
	free(keys);
	return r;
}

/* Keys held during a pointer action: one chord, a few keys. */
static int
parse_mods(struct aparse *p, const char *s, size_t n)
{
	struct action	*a = p->a;
	size_t		 i;
	int		 r;

	if ((r = parse_keyspec(p, s, n, 0)) != 0)
		return r;
	if (a->nkeys > VOCAB_MODS_MAX) {
		free(a->keys);
		a->keys = NULL;
		a->nkeys = 0;
		return aerr(p, ERR_ACTION_INVALID, "more than %d held keys",
		    VOCAB_MODS_MAX);
	}
	for (i = 0; i < a->nkeys; i++)
		a->mods[i] = a->keys[i];
	a->nmods = (int)a->nkeys;
	free(a->keys);
	a->keys = NULL;
	a->nkeys = 0;
	return 0;
}

static int
get_string(struct aparse *p, const char *key, size_t max, int need,
    const char **s, size_t *n)
{
	json_t	*v = aget(p, key);

	*s = NULL;
	*n = 0;
	if (v == NULL)
		return need ? aerr(p, ERR_ACTION_INVALID, "%s is missing",
		    key) : ERR_NOT_FOUND;
	if (!json_is_string(v))
		return aerr(p, ERR_ACTION_INVALID, "%s must be a string", key);
	*s = json_string_value(v);
	*n = json_string_length(v);
	if (*n > max)
		return aerr(p, ERR_TOO_LARGE, "%s is longer than %zu bytes",
		    key, max);
	if (memchr(*s, '\0', *n) != NULL)
		return aerr(p, ERR_ACTION_INVALID, "%s contains NUL", key);
	return 0;
}

static int
get_keys(struct aparse *p, const char *key, int seq)
{
	const char	*s;
	size_t		 n;
	int		 r;

	if ((r = get_string(p, key, VOCAB_KEYSPEC_MAX, 1, &s, &n)) != 0)
		return r;
	return parse_keyspec(p, s, n, seq);
}

/* Optional modifier chord in a string field. */
static int
get_mods(struct aparse *p, const char *key)
{
	const char	*s;
	size_t		 n;
	int		 r;

	r = get_string(p, key, VOCAB_KEYSPEC_MAX, 0, &s, &n);
	if (r == ERR_NOT_FOUND)
		return 0;
	if (r != 0)
		return r;
	return parse_mods(p, s, n);
}

/* ---- numbers and coordinates ------------------------------------------- */

static int
get_number(json_t *v, double *d)
{
	if (json_is_integer(v))
		*d = (double)json_integer_value(v);
	else if (json_is_real(v))
		*d = json_real_value(v);
	else
		return -1;
	/* NaN and infinities fail the comparison. */
	return (*d > -1e300 && *d < 1e300) ? 0 : -1;
}

static int
get_int(struct aparse *p, const char *key, int min, int max, int need,
    int *out)
{
	json_t	*v = aget(p, key);
	json_int_t i;

	if (v == NULL)
		return need ? aerr(p, ERR_ACTION_INVALID, "%s is missing",
		    key) : ERR_NOT_FOUND;
	if (!json_is_integer(v))
		return aerr(p, ERR_ACTION_INVALID, "%s must be an integer",
		    key);
	i = json_integer_value(v);
	if (i < min || i > max)
		return aerr(p, ERR_ACTION_INVALID, "%s must be within "
		    "%d..%d", key, min, max);
	*out = (int)i;
	return 0;
}

/* Seconds as a number (Anthropic durations) to milliseconds. */
static int
get_seconds(struct aparse *p, const char *key, int need, int *ms)
{
	json_t	*v = aget(p, key);
	double	 d;

	if (v == NULL)
		return need ? aerr(p, ERR_ACTION_INVALID, "%s is missing",
		    key) : ERR_NOT_FOUND;
	if (get_number(v, &d) != 0)
		return aerr(p, ERR_ACTION_INVALID, "%s must be a number", key);
	if (d < 0 || d * 1000 > VOCAB_WAIT_MAX_MS)
		return aerr(p, ERR_ACTION_INVALID, "%s must be within 0..%d "
		    "seconds", key, VOCAB_WAIT_MAX_MS / 1000);
	*ms = (int)around(d * 1000);
	return 0;
}

static int
coord(struct aparse *p, json_t *v, const char *what, int *out)
{
	double	 d;

	if (v == NULL)
		return aerr(p, ERR_ACTION_INVALID, "%s is missing", what);
	if (get_number(v, &d) != 0)
		return aerr(p, ERR_ACTION_INVALID, "%s must be a number",
		    what);
	if (d < 0 || d > VOCAB_COORD_MAX)
		return aerr(p, ERR_COORDINATES, "%s is outside 0..%d", what,
		    VOCAB_COORD_MAX);
	/* A small scale can carry a coordinate far off any screen. */
	d /= p->scale;
	if (d > VOCAB_COORD_MAX)
		return aerr(p, ERR_COORDINATES,
		    "%s is outside 0..%d once scaled", what, VOCAB_COORD_MAX);
	*out = (int)around(d);
	return 0;
}

/* [x, y] */
static int
coord_pair(struct aparse *p, json_t *v, const char *what, int *x, int *y)
{
	int	 r;

	if (!json_is_array(v) || json_array_size(v) != 2)
		return aerr(p, ERR_ACTION_INVALID, "%s must be [x, y]", what);
	if ((r = coord(p, json_array_get(v, 0), what, x)) != 0)
		return r;
	return coord(p, json_array_get(v, 1), what, y);
}

/* Optional "x" and "y" fields, both or neither. */
static int
get_xy(struct aparse *p, int need)
{
	json_t	*x = aget(p, "x"), *y = aget(p, "y");
	int	 r;

	if (x == NULL && y == NULL) {
		if (need)
			return aerr(p, ERR_ACTION_INVALID,
			    "x and y are missing");
		return 0;
	}
	if ((r = coord(p, x, "x", &p->a->x)) != 0 ||
	    (r = coord(p, y, "y", &p->a->y)) != 0)
		return r;
	p->a->has_xy = 1;
	return 0;
}

/* Optional "coordinate": [x, y]. */
static int
get_coordinate(struct aparse *p, int need)
{
	json_t	*v = aget(p, "coordinate");
	int	 r;

	if (v == NULL)
		return need ? aerr(p, ERR_ACTION_INVALID,
		    "coordinate is missing") : 0;
	if ((r = coord_pair(p, v, "coordinate", &p->a->x, &p->a->y)) != 0)
		return r;
	p->a->has_xy = 1;
	return 0;
}

static int
path_alloc(struct aparse *p, size_t n)
{
	if (n < 2 || n > VOCAB_PATH_MAX)
		return aerr(p, ERR_ACTION_INVALID, "a drag path needs 2..%d "
		    "points", VOCAB_PATH_MAX);
	if ((p->a->path = calloc(n, sizeof(*p->a->path))) == NULL)
		return aerr(p, ERR_NOMEM, "out of memory");
	p->a->npath = n;
	return 0;
}

/* ---- text ----------------------------------------------------------- */

static int
parse_text(struct aparse *p, const char *s, size_t n)
{
	uint32_t	*t, cp;
	size_t		 i = 0, k, nt = 0;

	if ((t = calloc(n + 1, sizeof(*t))) == NULL)
		return aerr(p, ERR_NOMEM, "out of memory");
	while (i < n) {
		if ((k = jsonx_utf8_len((const uint8_t *)s + i, n - i,
		    &cp)) == 0) {
			free(t);
			return aerr(p, ERR_ACTION_INVALID, "text is not valid "
			    "UTF-8 at byte %zu", i);
		}
		i += k;
		/* CR LF types one Return, as a lone CR or LF does. */
		if (cp == '\r' && i < n && s[i] == '\n')
			continue;
		if ((cp < 0x20 && cp != '\n' && cp != '\r' && cp != '\t') ||
		    cp == 0x7f || (cp >= 0x80 && cp < 0xa0)) {
			free(t);
			return aerr(p, ERR_ACTION_INVALID, "text has control "
			    "character U+%04X at byte %zu", cp, i - k);
		}
		t[nt++] = cp;
	}
	p->a->text = t;
	p->a->ntext = nt;
	return 0;
}

static int
get_text(struct aparse *p, const char *key)
{
	const char	*s;
	size_t		 n;
	int		 r;

	if ((r = get_string(p, key, VOCAB_TEXT_MAX, 1, &s, &n)) != 0)
		return r;
	return parse_text(p, s, n);
}

/* ---- vocabularies ------------------------------------------------------ */

static int
button_name(const char *s, int openai)
{
	if (strcmp(s, "left") == 0)
		return 1;
	if (strcmp(s, openai ? "wheel" : "middle") == 0)
		return 2;
	if (strcmp(s, "right") == 0)
		return 3;
	if (strcmp(s, "back") == 0)
		return 8;
	if (strcmp(s, "forward") == 0)
		return 9;
	return 0;
}

static int
get_button(struct aparse *p, int openai)
{
	const char	*s;
	size_t		 n;
	int		 r;

	r = get_string(p, "button", 16, 0, &s, &n);
	if (r == ERR_NOT_FOUND) {
		p->a->button = 1;
		return 0;
	}
	if (r != 0)
		return r;
	if ((p->a->button = button_name(s, openai)) == 0)
		return aerr(p, ERR_ACTION_INVALID, "button must be left, %s, "
		    "right, back or forward", openai ? "wheel" : "middle");
	return 0;
}

static int
set_direction(struct aparse *p, const char *key, int amount)
{
	const char	*s;
	size_t		 n;
	int		 r;

	if ((r = get_string(p, key, 16, 1, &s, &n)) != 0)
		return r;
	if (strcmp(s, "up") == 0)
		p->a->scroll_y = -amount;
	else if (strcmp(s, "down") == 0)
		p->a->scroll_y = amount;
	else if (strcmp(s, "left") == 0)
		p->a->scroll_x = -amount;
	else if (strcmp(s, "right") == 0)
		p->a->scroll_x = amount;
	else
		return aerr(p, ERR_ACTION_INVALID, "%s must be up, down, left "
		    "or right", key);
	return 0;
}

static int
only_keys(struct aparse *p, const char *const *allowed)
{
	char	 e[JSONX_ERRLEN];

	if (jsonx_only_keys(p->o, allowed, e) != 0)
		return aerr(p, ERR_ACTION_INVALID, "%s", e);
	return 0;
}

static int
native_drag_path(struct aparse *p)
{
	json_t	*v = aget(p, "path");
	size_t	 i;
	int	 r;

	if (!json_is_array(v))
		return aerr(p, ERR_ACTION_INVALID, "path must be an array of "
		    "[x, y]");
	if ((r = path_alloc(p, json_array_size(v))) != 0)
		return r;
	for (i = 0; i < p->a->npath; i++)
		if ((r = coord_pair(p, json_array_get(v, i), "path point",
		    &p->a->path[i].x, &p->a->path[i].y)) != 0)
			return r;
	return 0;
}

static int
native_parse(struct aparse *p, const char *kind)
{
	static const char *const k_move[] = { "kind", "x", "y", "modifiers",
	    NULL };
	static const char *const k_click[] = { "kind", "x", "y", "button",
	    "count", "modifiers", NULL };
	static const char *const k_btn[] = { "kind", "x", "y", "button",
	    NULL };
	static const char *const k_drag[] = { "kind", "path", "button",
	    "modifiers", NULL };
	static const char *const k_scroll[] = { "kind", "x", "y",
	    "direction", "amount", "modifiers", NULL };
	static const char *const k_key[] = { "kind", "keys", NULL };
	static const char *const k_type[] = { "kind", "text", NULL };
	static const char *const k_hold[] = { "kind", "keys", "duration_ms",
	    NULL };
	static const char *const k_wait[] = { "kind", "ms", NULL };
	static const char *const k_none[] = { "kind", NULL };
	struct action	*a = p->a;
	int		 r, amount;

	if (strcmp(kind, "move") == 0) {
		a->kind = ACTION_MOVE;
		if ((r = only_keys(p, k_move)) != 0 ||
		    (r = get_xy(p, 1)) != 0)
			return r;
		return get_mods(p, "modifiers");
	}
	if (strcmp(kind, "click") == 0) {
		a->kind = ACTION_CLICK;
		if ((r = only_keys(p, k_click)) != 0 ||
		    (r = get_xy(p, 0)) != 0 || (r = get_button(p, 0)) != 0)
			return r;
		a->count = 1;
		r = get_int(p, "count", 1, 3, 0, &a->count);
		if (r != 0 && r != ERR_NOT_FOUND)
			return r;
		return get_mods(p, "modifiers");
	}
	if (strcmp(kind, "down") == 0 || strcmp(kind, "up") == 0) {
		a->kind = kind[0] == 'd' ? ACTION_DOWN : ACTION_UP;
		if ((r = only_keys(p, k_btn)) != 0 ||
		    (r = get_xy(p, 0)) != 0)
			return r;
		return get_button(p, 0);
	}
	if (strcmp(kind, "drag") == 0) {
		a->kind = ACTION_DRAG;
		if ((r = only_keys(p, k_drag)) != 0 ||
		    (r = get_button(p, 0)) != 0 ||
		    (r = native_drag_path(p)) != 0)
			return r;
		return get_mods(p, "modifiers");
	}
	if (strcmp(kind, "scroll") == 0) {
		a->kind = ACTION_SCROLL;
		if ((r = only_keys(p, k_scroll)) != 0 ||
		    (r = get_xy(p, 0)) != 0 ||
		    (r = get_int(p, "amount", 1, VOCAB_SCROLL_MAX, 1,
		    &amount)) != 0 ||
		    (r = set_direction(p, "direction", amount)) != 0)
			return r;
		return get_mods(p, "modifiers");
	}
	if (strcmp(kind, "key") == 0) {
		a->kind = ACTION_KEY;
		if ((r = only_keys(p, k_key)) != 0)
			return r;
		return get_keys(p, "keys", 1);
	}
	if (strcmp(kind, "type") == 0) {
		a->kind = ACTION_TYPE;
		if ((r = only_keys(p, k_type)) != 0)
			return r;
		return get_text(p, "text");
	}
	if (strcmp(kind, "hold") == 0) {
		a->kind = ACTION_HOLD;
		if ((r = only_keys(p, k_hold)) != 0 ||
		    (r = get_int(p, "duration_ms", 0, VOCAB_WAIT_MAX_MS, 1,
		    &a->duration_ms)) != 0)
			return r;
		return get_keys(p, "keys", 0);
	}
	if (strcmp(kind, "wait") == 0) {
		a->kind = ACTION_WAIT;
		if ((r = only_keys(p, k_wait)) != 0)
			return r;
		return get_int(p, "ms", 0, VOCAB_WAIT_MAX_MS, 1,
		    &a->duration_ms);
	}
	if (strcmp(kind, "cursor_position") == 0) {
		a->kind = ACTION_CURSOR_POSITION;
		return only_keys(p, k_none);
	}
	return aerr(p, ERR_ACTION_INVALID, "kind %.32s is not known", kind);
}

/* Anthropic clicks: optional coordinate, modifiers in text (or key). */
static int
anthropic_click(struct aparse *p, int button, int count)
{
	int	 r;

	p->a->kind = ACTION_CLICK;
	p->a->button = button;
	p->a->count = count;
	if ((r = get_coordinate(p, 0)) != 0)
		return r;
	/* The demo reads modifiers from a non-schema "key" field. */
	if ((r = get_mods(p, "text")) != 0)
		return r;
	return p->a->nmods == 0 ? get_mods(p, "key") : 0;
}

static int
anthropic_drag(struct aparse *p)
{
	json_t	*start = aget(p, "start_coordinate");
	int	 r;

	p->a->kind = ACTION_DRAG;
	p->a->button = 1;
	if ((r = path_alloc(p, 2)) != 0)
		return r;
	if (start == NULL)
		p->a->from_current = 1;	/* 20241022: from the pointer */
	else if ((r = coord_pair(p, start, "start_coordinate",
	    &p->a->path[0].x, &p->a->path[0].y)) != 0)
		return r;
	if (aget(p, "coordinate") == NULL)
		return aerr(p, ERR_ACTION_INVALID, "coordinate is missing");
	if ((r = coord_pair(p, aget(p, "coordinate"), "coordinate",
	    &p->a->path[1].x, &p->a->path[1].y)) != 0)
		return r;
	return get_mods(p, "text");
}

static int
anthropic_scroll(struct aparse *p)
{
	int	 r, amount;

	p->a->kind = ACTION_SCROLL;
	if ((r = get_coordinate(p, 0)) != 0 ||
	    (r = get_int(p, "scroll_amount", 0, VOCAB_SCROLL_MAX, 1,
	    &amount)) != 0 ||
	    (r = set_direction(p, "scroll_direction", amount)) != 0)
		return r;
	return get_mods(p, "text");
}

static int
anthropic_zoom(struct aparse *p)
{
	json_t	*v = aget(p, "region");
	size_t	 i;
	int	 r;

	p->a->kind = ACTION_ZOOM;
	if (!json_is_array(v) || json_array_size(v) != 4)
		return aerr(p, ERR_ACTION_INVALID, "region must be [x1, y1, "
		    "x2, y2]");
	for (i = 0; i < 4; i++)
		if ((r = coord(p, json_array_get(v, i), "region",
		    &p->a->region[i])) != 0)
			return r;
	if (p->a->region[2] <= p->a->region[0] ||
	    p->a->region[3] <= p->a->region[1])
		return aerr(p, ERR_ACTION_INVALID, "region must have x2 > x1 "
		    "and y2 > y1");
	return 0;
}

static int
anthropic_parse(struct aparse *p, const char *act)
{
	struct action	*a = p->a;
	int		 r;

	if (strcmp(act, "left_click") == 0)
		return anthropic_click(p, 1, 1);
	if (strcmp(act, "right_click") == 0)
		return anthropic_click(p, 3, 1);
	if (strcmp(act, "middle_click") == 0)
		return anthropic_click(p, 2, 1);
	if (strcmp(act, "double_click") == 0)
		return anthropic_click(p, 1, 2);
	if (strcmp(act, "triple_click") == 0)
		return anthropic_click(p, 1, 3);
	if (strcmp(act, "left_click_drag") == 0)
		return anthropic_drag(p);
	if (strcmp(act, "mouse_move") == 0) {
		a->kind = ACTION_MOVE;
		if ((r = get_coordinate(p, 1)) != 0)
			return r;
		return get_mods(p, "text");
	}
	if (strcmp(act, "left_mouse_down") == 0 ||
	    strcmp(act, "left_mouse_up") == 0) {
		a->kind = act[11] == 'd' ? ACTION_DOWN : ACTION_UP;
		a->button = 1;
		return get_coordinate(p, 0);
	}
	if (strcmp(act, "scroll") == 0)
		return anthropic_scroll(p);
	if (strcmp(act, "key") == 0) {
		a->kind = ACTION_KEY;
		return get_keys(p, "text", 1);
	}
	if (strcmp(act, "hold_key") == 0) {
		a->kind = ACTION_HOLD;
		if ((r = get_seconds(p, "duration", 1,
		    &a->duration_ms)) != 0)
			return r;
		return get_keys(p, "text", 0);
	}
	if (strcmp(act, "type") == 0) {
		a->kind = ACTION_TYPE;
		return get_text(p, "text");
	}
	if (strcmp(act, "wait") == 0) {
		a->kind = ACTION_WAIT;
		a->duration_ms = VOCAB_DEFAULT_WAIT_MS;
		r = get_seconds(p, "duration", 0, &a->duration_ms);
		return r == ERR_NOT_FOUND ? 0 : r;
	}
	if (strcmp(act, "cursor_position") == 0) {
		a->kind = ACTION_CURSOR_POSITION;
		return 0;
	}
	if (strcmp(act, "screenshot") == 0) {
		a->kind = ACTION_SCREENSHOT;
		return 0;
	}
	if (strcmp(act, "zoom") == 0)
		return anthropic_zoom(p);
	return aerr(p, ERR_ACTION_INVALID, "action %.32s is not known", act);
}

/* OpenAI "keys": a list of names pressed together ("CTRL", "L"). */
static int
openai_keys(struct aparse *p, int as_mods)
{
	json_t	*v = aget(p, "keys"), *e;
	char	 buf[VOCAB_KEYSPEC_MAX + 1];
	size_t	 i, n, len = 0;

	if (v == NULL)
		return as_mods ? 0 : aerr(p, ERR_ACTION_INVALID,
		    "keys is missing");
	if (!json_is_array(v) || json_array_size(v) == 0 ||
	    json_array_size(v) > VOCAB_OPENAI_KEYS_MAX)
		return aerr(p, ERR_ACTION_INVALID, "keys must be a list of "
		    "1..%d key names", VOCAB_OPENAI_KEYS_MAX);
	json_array_foreach(v, i, e) {
		if (!json_is_string(e) || (n = json_string_length(e)) == 0)
			return aerr(p, ERR_ACTION_INVALID, "keys must be "
			    "key names");
		if (len + n + 1 > VOCAB_KEYSPEC_MAX)
			return aerr(p, ERR_TOO_LARGE, "keys are longer than "
			    "%d bytes", VOCAB_KEYSPEC_MAX);
		if (memchr(json_string_value(e), '\0', n) != NULL)
			return aerr(p, ERR_ACTION_INVALID, "keys contain NUL");
		if (len > 0)
			buf[len++] = '+';
		memcpy(buf + len, json_string_value(e), n);
		len += n;
	}
	buf[len] = '\0';
	return as_mods ? parse_mods(p, buf, len) :
	    parse_keyspec(p, buf, len, 0);
}

static int
openai_drag(struct aparse *p)
{
	json_t	*v = aget(p, "path"), *e;
	size_t	 i;
	int	 r;

	p->a->kind = ACTION_DRAG;
	p->a->button = 1;
	if (!json_is_array(v))
		return aerr(p, ERR_ACTION_INVALID, "path must be a list of "
		    "{x, y}");
	if ((r = path_alloc(p, json_array_size(v))) != 0)
		return r;
	json_array_foreach(v, i, e) {
		if (!json_is_object(e))
			return aerr(p, ERR_ACTION_INVALID, "path must be a "
			    "list of {x, y}");
		if ((r = coord(p, json_object_get(e, "x"), "path x",
		    &p->a->path[i].x)) != 0 ||
		    (r = coord(p, json_object_get(e, "y"), "path y",
		    &p->a->path[i].y)) != 0)
			return r;
	}
	return openai_keys(p, 1);
}

/* Pixels to wheel clicks: any nonzero distance is at least one click. */
static int
px_clicks(json_int_t px)
{
	json_int_t n;

	if (px == 0)
		return 0;
	n = (px < 0 ? -px : px);
	n = (n + VOCAB_PX_PER_CLICK - 1) / VOCAB_PX_PER_CLICK;
	if (n > VOCAB_SCROLL_MAX)
		n = VOCAB_SCROLL_MAX;
	return px < 0 ? -(int)n : (int)n;
}

static int
openai_scroll(struct aparse *p)
{
	json_t	*sx = aget(p, "scroll_x"), *sy = aget(p, "scroll_y");
	double	 dx = 0, dy = 0;
	int	 r;

	p->a->kind = ACTION_SCROLL;
	if ((r = get_xy(p, 1)) != 0)
		return r;
	if ((sx != NULL && get_number(sx, &dx) != 0) ||
	    (sy != NULL && get_number(sy, &dy) != 0) ||
	    dx > 1e6 || dx < -1e6 || dy > 1e6 || dy < -1e6)
		return aerr(p, ERR_ACTION_INVALID, "scroll_x and scroll_y "
		    "must be numbers of pixels");
	p->a->scroll_x = px_clicks((json_int_t)around(dx));
	p->a->scroll_y = px_clicks((json_int_t)around(dy));
	return openai_keys(p, 1);
}

static int
openai_parse(struct aparse *p, const char *type)
{
	struct action	*a = p->a;
	int		 r;

	if (strcmp(type, "click") == 0 || strcmp(type, "double_click") == 0) {
		a->kind = ACTION_CLICK;
		a->count = type[0] == 'd' ? 2 : 1;
		if ((r = get_xy(p, 1)) != 0 || (r = get_button(p, 1)) != 0)
			return r;
		return openai_keys(p, 1);
	}
	if (strcmp(type, "move") == 0) {
		a->kind = ACTION_MOVE;
		if ((r = get_xy(p, 1)) != 0)
			return r;
		return openai_keys(p, 1);
	}
	if (strcmp(type, "drag") == 0)
		return openai_drag(p);
	if (strcmp(type, "scroll") == 0)
		return openai_scroll(p);
	if (strcmp(type, "keypress") == 0) {
		a->kind = ACTION_KEY;
		return openai_keys(p, 0);
	}
	if (strcmp(type, "type") == 0) {
		a->kind = ACTION_TYPE;
		return get_text(p, "text");
	}
	if (strcmp(type, "wait") == 0) {
		a->kind = ACTION_WAIT;
		a->duration_ms = VOCAB_DEFAULT_WAIT_MS;
		return 0;
	}
	if (strcmp(type, "screenshot") == 0) {
		a->kind = ACTION_SCREENSHOT;
		return 0;
	}
	return aerr(p, ERR_ACTION_INVALID, "type %.32s is not known", type);
}

static int
parse_one(struct aparse *p)
{
	const char	*name;
	json_t		*v;

	if (!json_is_object(p->o))
		return aerr(p, ERR_ACTION_INVALID, "an action must be an "
		    "object");
	if ((v = json_object_get(p->o, "kind")) != NULL) {
		if (!json_is_string(v))
			return aerr(p, ERR_ACTION_INVALID, "kind must be a "
			    "string");
		return native_parse(p, json_string_value(v));
	}
	if ((v = json_object_get(p->o, "action")) != NULL) {
		if (!json_is_string(v))
			return aerr(p, ERR_ACTION_INVALID, "action must be a "
			    "string");
		return anthropic_parse(p, json_string_value(v));
	}
	if ((v = json_object_get(p->o, "type")) != NULL) {
		if (!json_is_string(v))
			return aerr(p, ERR_ACTION_INVALID, "type must be a "
			    "string");
		name = json_string_value(v);
		return openai_parse(p, name);
	}
	return aerr(p, ERR_ACTION_INVALID, "the action has no kind, action "
	    "or type");
}

int
vocab_parse(json_t *array, double scale, struct vocab_batch **out,
    struct vocab_error *err)
{
	struct vocab_batch	*b = NULL;
	struct aparse		 p;
	size_t			 i, n;
	int			 r = ERR_INTERNAL;

	*out = NULL;
	memset(err, 0, sizeof(*err));
	memset(&p, 0, sizeof(p));
	p.err = err;
	p.index = -1;
	p.scale = scale;
	if (!(scale > 0 && scale <= 100)) {
		r = aerr(&p, ERR_BAD_REQUEST, "scale must be within (0, 100]");
		goto out;
	}
	if (!json_is_array(array)) {
		r = aerr(&p, ERR_BAD_REQUEST, "actions must be an array");
		goto out;
	}
	n = json_array_size(array);
	if (n == 0) {
		r = aerr(&p, ERR_BAD_REQUEST, "actions is empty");
		goto out;
	}
	if (n > VOCAB_MAX) {
		r = aerr(&p, ERR_TOO_LARGE, "more than %d actions",
		    VOCAB_MAX);
		goto out;
	}
	if ((b = calloc(1, sizeof(*b))) == NULL ||
	    (b->v = calloc(n, sizeof(*b->v))) == NULL) {
		r = aerr(&p, ERR_NOMEM, "out of memory");
		goto out;
	}
	b->scale = scale;
	for (i = 0; i < n; i++) {
		b->n = i + 1;	/* so vocab_free frees what was parsed */
		p.index = (int)i;
		p.a = &b->v[i];
		p.o = json_array_get(array, i);
		if ((r = parse_one(&p)) != 0)
			goto out;
	}
	*out = b;
	b = NULL;
	r = 0;
out:
	vocab_free(b);
	return r;
}

int
vocab_parse_args(json_t *args, struct vocab_batch **out,
    struct vocab_error *err)
{
	json_t	*v;
	double	 scale = 1;

	*out = NULL;
	memset(err, 0, sizeof(*err));
	err->index = -1;
	if (!json_is_object(args)) {
		err->code = ERR_BAD_REQUEST;
		snprintf(err->msg, sizeof(err->msg), "args must be an object");
		return err->code;
	}
	if ((v = json_object_get(args, "scale")) != NULL &&
	    (get_number(v, &scale) != 0 || !(scale > 0 && scale <= 100))) {
		err->code = ERR_BAD_REQUEST;
		snprintf(err->msg, sizeof(err->msg),
		    "scale must be a number within (0, 100]");
		return err->code;
	}
	return vocab_parse(json_object_get(args, "actions"), scale, out,
	    err);
}

void
vocab_free(struct vocab_batch *b)
{
	size_t	 i;

	if (b == NULL)
		return;
	for (i = 0; i < b->n; i++) {
		free(b->v[i].keys);
		free(b->v[i].text);
		free(b->v[i].path);
	}
	free(b->v);
	free(b);
}

const char *
vocab_kind_name(enum action_kind k)
{
	static const char *const names[] = {
		[ACTION_MOVE] = "move", [ACTION_CLICK] = "click",
		[ACTION_DOWN] = "down", [ACTION_UP] = "up",
		[ACTION_DRAG] = "drag", [ACTION_SCROLL] = "scroll",
		[ACTION_KEY] = "key", [ACTION_TYPE] = "type",
		[ACTION_HOLD] = "hold", [ACTION_WAIT] = "wait",
		[ACTION_CURSOR_POSITION] = "cursor_position",
		[ACTION_SCREENSHOT] = "screenshot", [ACTION_ZOOM] = "zoom",
	};

	if ((unsigned)k >= sizeof(names) / sizeof(names[0]))
		return "unknown";
	return names[k];
}

int
vocab_has_input(const struct vocab_batch *b)
{
	size_t	 i;

	for (i = 0; i < b->n; i++)
		switch (b->v[i].kind) {
		case ACTION_WAIT:
		case ACTION_CURSOR_POSITION:
		case ACTION_SCREENSHOT:
		case ACTION_ZOOM:
			break;
		default:
			return 1;
		}
	return 0;
}

/*
 * Keys whose whole point is to move through something (a list, a form, a
 * page): pressing them again is expected, even when one press changed
 * nothing that shows.  Modifiers may come with them (shift+Tab).
 */
static int
vocab_nav_keysym(unsigned long ks)
{
	switch (ks) {
	case XK_Up: case XK_Down: case XK_Left: case XK_Right:
	case XK_Tab: case XK_ISO_Left_Tab:
	case XK_Page_Up: case XK_Page_Down: case XK_Home: case XK_End:
	case XK_KP_Up: case XK_KP_Down: case XK_KP_Left: case XK_KP_Right:
	case XK_KP_Page_Up: case XK_KP_Page_Down: case XK_KP_Home:
	case XK_KP_End: case XK_KP_Tab:
		return 1;
	default:
		return 0;
	}
}

static int
vocab_modifier_keysym(unsigned long ks)
{
	return (ks >= XK_Shift_L && ks <= XK_Hyper_R) ||
	    (ks >= XK_ISO_Lock && ks <= XK_ISO_Level5_Lock);
}

int
vocab_navigation_only(const struct vocab_batch *b)
{
	const struct action	*a;
	size_t			 i, k;
	int			 nav = 0;

	for (i = 0; i < b->n; i++) {
		a = &b->v[i];
		switch (a->kind) {
		case ACTION_WAIT:
		case ACTION_CURSOR_POSITION:
		case ACTION_SCREENSHOT:
		case ACTION_ZOOM:
			continue;
		case ACTION_KEY:
			break;
		default:
			return 0;
		}
		/* Every chord: modifiers and navigation keys only. */
		for (k = 0; k < a->nkeys; k++) {
			if (a->keys[k] == 0 ||
			    vocab_modifier_keysym(a->keys[k]))
				continue;
			if (!vocab_nav_keysym(a->keys[k]))
				return 0;
			nav = 1;
		}
	}
	return nav;
}

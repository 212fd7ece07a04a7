/* SPDX-License-Identifier: MIT */
/*
 * vocab: the vocabularies of `act` (doc/DESIGN.md G-9..G-11), parsed from
 * JSON into one internal form before anything touches a display.  A batch
 * is a JSON array of 1..VOCAB_MAX action objects; each object is read in
 * one of three vocabularies, chosen by its keys:
 *
 *   native     {"kind": "move"|"click"|"down"|"up"|"drag"|"scroll"|"key"|
 *               "type"|"hold"|"wait"|"cursor_position", ...}
 *   Anthropic  {"action": "left_click", "coordinate": [x, y], ...}
 *   OpenAI     {"type": "click", "x": .., "y": .., "button": "left"}
 *
 * Key names (xdotool style, plus the aliases models emit) are resolved to
 * keysyms here, so an unknown key is refused before anything is applied.
 * Coordinates in the scaled space of an earlier observe are mapped back to
 * real pixels with the batch's scale (x / scale, rounded).  Whether they
 * lie on the screen is checked by xtest.c, which knows the screen.
 */
#ifndef GUESTD_VOCAB_H
#define GUESTD_VOCAB_H

#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

#define VOCAB_MAX		256		/* actions in a batch */
#define VOCAB_TEXT_MAX	(64 * 1024)	/* bytes of type text */
#define VOCAB_KEYSPEC_MAX	256		/* bytes of a key spec */
#define VOCAB_PATH_MAX	1024		/* points of a drag path */
#define VOCAB_MODS_MAX	8		/* keys held during a click */
#define VOCAB_WAIT_MAX_MS	10000		/* wait and hold */
#define VOCAB_SCROLL_MAX	50		/* wheel clicks per axis */
#define VOCAB_COORD_MAX	100000		/* before scaling */
#define VOCAB_ERRLEN		160

enum action_kind {
	ACTION_MOVE,
	ACTION_CLICK,		/* button, count 1..3 */
	ACTION_DOWN,		/* button press only */
	ACTION_UP,		/* button release only */
	ACTION_DRAG,		/* button held along path */
	ACTION_SCROLL,		/* scroll_x / scroll_y wheel clicks */
	ACTION_KEY,		/* chords in sequence */
	ACTION_TYPE,		/* Unicode text */
	ACTION_HOLD,		/* chord held for duration_ms */
	ACTION_WAIT,		/* duration_ms */
	ACTION_CURSOR_POSITION,	/* report the pointer */
	ACTION_SCREENSHOT,	/* no-op marker: the caller observes */
	ACTION_ZOOM		/* no-op marker: the caller observes region */
};

struct action_point {
	int		 x, y;
};

struct action {
	enum action_kind kind;
	int		 has_xy;	/* move there first */
	int		 x, y;		/* real pixels */
	int		 button;	/* X button 1..9 */
	int		 count;		/* clicks, 1..3 */
	int		 scroll_x;	/* wheel clicks, >0 right, <0 left */
	int		 scroll_y;	/* wheel clicks, >0 down, <0 up */
	int		 duration_ms;	/* hold, wait */
	/* Keys held during a pointer action (Anthropic text, OpenAI keys). */
	unsigned long	 mods[VOCAB_MODS_MAX];
	int		 nmods;
	/*
	 * key and hold: keysyms; 0 (NoSymbol) separates chords, so
	 * "ctrl+a ctrl+c" is {Control_L, a, 0, Control_L, c}.
	 */
	unsigned long	*keys;
	size_t		 nkeys;
	/* type: code points, validated UTF-8 decoded. */
	uint32_t	*text;
	size_t		 ntext;
	/* drag: the path; from_current: start at the pointer, not path[0]. */
	struct action_point *path;
	size_t		 npath;
	int		 from_current;
	/* zoom: region x1, y1, x2, y2 in real pixels. */
	int		 region[4];
};

struct vocab_batch {
	struct action	*v;
	size_t		 n;
	double		 scale;		/* as given; 1 when absent */
};

/* Why a batch was refused: a code, the action's index (-1: the batch). */
struct vocab_error {
	int		 code;
	int		 index;
	char		 msg[VOCAB_ERRLEN];
};

/*
 * Parse a JSON array of actions.  scale > 0 divides every coordinate
 * (pass 1 for none).  On failure returns a code (ERR_BAD_REQUEST,
 * ERR_ACTION_INVALID, ERR_KEY_UNKNOWN, ERR_COORDINATES, ERR_TOO_LARGE,
 * ERR_NOMEM) with err filled and *out NULL.
 */
int	 vocab_parse(json_t *array, double scale,
	    struct vocab_batch **out, struct vocab_error *err);

/*
 * Parse the arguments of `act`: {"actions": [...], "scale"?: s}; other
 * keys are the caller's business and are ignored here.
 */
int	 vocab_parse_args(json_t *args, struct vocab_batch **out,
	    struct vocab_error *err);

void	 vocab_free(struct vocab_batch *);

/* "left_click" style name of a kind, for messages and logs. */
const char *vocab_kind_name(enum action_kind);

/*
 * Resolve one key name ("ctrl", "Return", "F5", "é", "KP_0") to a keysym;
 * 0 when unknown.  in_chord: a lone upper-case letter inside a chord means
 * the letter key ("CTRL+L" is ctrl+l, not ctrl+shift+l).
 */
unsigned long vocab_keysym(const char *name, size_t len, int in_chord);

/* True when the batch has an action that changes the screen or input. */
int	 vocab_has_input(const struct vocab_batch *);
/*
 * 1 when the batch's only input is key presses of navigation keys
 * (arrows, Tab, Page_Up/Down, Home, End, their keypad forms, with any
 * modifiers): the repeat guard never counts those (a list is walked by
 * pressing Down again and again).
 */
int	 vocab_navigation_only(const struct vocab_batch *);

#endif

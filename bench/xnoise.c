/* SPDX-License-Identifier: MIT */
/*
 * xnoise: keeps a benchmark desktop busy the way a real one is.  It covers
 * the screen with an override-redirect window, fills it with coloured
 * boxes and lines of text, prints "ready WxH", then obeys stdin:
 *
 *   paint N    draw N more random boxes, each with a line of text
 *   quit       exit
 *
 * After each command it syncs with the X server and prints "ok", so the
 * caller knows the pixels are on the screen.  The random sequence is fixed
 * (xorshift with a constant seed), so every run draws the same pictures.
 * Uses DISPLAY and XAUTHORITY.  Built by `make benchmarks`; not installed.
 */
#include "autoconf.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <X11/Xlib.h>

static Display	*dpy;
static Window	 win;
static GC	 gc;
static int	 sw, sh;
static uint32_t	 seed = 2463534242u;

static uint32_t
xnoise_rand(void)
{
	seed ^= seed << 13;
	seed ^= seed >> 17;
	seed ^= seed << 5;
	return seed;
}

/* One box in a random colour, like a window or a button, with a label. */
static void
xnoise_box(void)
{
	static const char	*words[] = { "File", "Edit", "View", "Open",
	    "Save as", "Settings", "https://example.com/index.html",
	    "The quick brown fox jumps over the lazy dog", "OK", "Cancel" };
	const char		*s;
	int			 x, y, w, h;

	w = 20 + (int)(xnoise_rand() % (uint32_t)(sw / 3));
	h = 10 + (int)(xnoise_rand() % (uint32_t)(sh / 4));
	x = (int)(xnoise_rand() % (uint32_t)sw);
	y = (int)(xnoise_rand() % (uint32_t)sh);
	XSetForeground(dpy, gc, xnoise_rand() & 0xffffff);
	XFillRectangle(dpy, win, gc, x, y, (unsigned)w, (unsigned)h);
	XSetForeground(dpy, gc, xnoise_rand() & 0xffffff);
	s = words[xnoise_rand() % (sizeof(words) / sizeof(words[0]))];
	XDrawString(dpy, win, gc, x + 4, y + 14, s, (int)strlen(s));
}

static void
xnoise_paint(int n)
{
	while (n-- > 0)
		xnoise_box();
}

int
main(void)
{
	XSetWindowAttributes	 a;
	XEvent			 ev;
	char			 line[256];
	int			 n;

	if ((dpy = XOpenDisplay(NULL)) == NULL) {
		fprintf(stderr, "xnoise: cannot open display\n");
		return 1;
	}
	sw = DisplayWidth(dpy, DefaultScreen(dpy));
	sh = DisplayHeight(dpy, DefaultScreen(dpy));
	memset(&a, 0, sizeof a);
	a.override_redirect = True;
	a.background_pixel = 0xf0f0f0;
	win = XCreateWindow(dpy, DefaultRootWindow(dpy), 0, 0, (unsigned)sw,
	    (unsigned)sh, 0, CopyFromParent, InputOutput, CopyFromParent,
	    CWOverrideRedirect | CWBackPixel, &a);
	XSelectInput(dpy, win, ExposureMask);
	XMapRaised(dpy, win);
	gc = XCreateGC(dpy, win, 0, NULL);
	/* Paint after the first Expose: earlier drawing may be lost. */
	do
		XNextEvent(dpy, &ev);
	while (ev.type != Expose);
	xnoise_paint(300);
	XSync(dpy, False);
	printf("ready %dx%d\n", sw, sh);
	fflush(stdout);
	while (fgets(line, sizeof line, stdin) != NULL) {
		if (sscanf(line, "paint %d", &n) == 1 && n >= 0 && n <= 100000)
			xnoise_paint(n);
		else if (strncmp(line, "quit", 4) == 0)
			break;
		else {
			printf("what\n");
			fflush(stdout);
			continue;
		}
		XSync(dpy, False);
		printf("ok\n");
		fflush(stdout);
	}
	XCloseDisplay(dpy);
	return 0;
}

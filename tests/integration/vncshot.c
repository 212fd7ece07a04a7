/* SPDX-License-Identifier: MIT */
/*
 * vncshot: a native VNC client (libvncclient) for the debug port test.
 * It connects straight to HOST:PORT over TCP, takes one full framebuffer
 * update and compares pixels.
 *
 *   vncshot HOST:PORT [X,Y,RRGGBB | key:KEYSYM ...]
 * Prints "size W H" then "ok" per pixel; exit 5 on a mismatch ("pixel X
 * Y got C"), 3 when it cannot connect, 4 on a timeout.  key:KEYSYM (hex)
 * sends that key down and up, as the viewer would.  Not installed.
 */
#include "autoconf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rfb/rfbclient.h>

static int	vs_done;
static long	vs_area;

/* Cursor-only updates do not count: wait until every pixel came. */
static void
vs_got(rfbClient *cl, int x, int y, int w, int h)
{
	(void)x;
	(void)y;
	vs_area += (long)w * h;
	if (vs_area >= (long)cl->width * cl->height)
		vs_done = 1;
}

static void
vs_quiet(const char *fmt, ...)
{
	(void)fmt;
}

int
main(int argc, char **argv)
{
	rfbClient	*cl;
	char		 host[256], *colon;
	unsigned	 want, got;
	uint8_t		*p;
	int		 i, n, x, y, tries, keys = 0;

	if (argc < 2) {
		fprintf(stderr, "usage: vncshot HOST:PORT [X,Y,RRGGBB ...]\n");
		return 2;
	}
	snprintf(host, sizeof host, "%s", argv[1]);
	if ((colon = strrchr(host, ':')) == NULL)
		return 2;
	*colon = '\0';
	rfbClientLog = vs_quiet;
	rfbClientErr = vs_quiet;
	cl = rfbGetClient(8, 3, 4);	/* RGBX in memory */
	free(cl->serverHost);
	cl->serverHost = strdup(host);
	cl->serverPort = atoi(colon + 1);
	cl->GotFrameBufferUpdate = vs_got;
	cl->appData.encodingsString = "raw";
	if (!rfbInitClient(cl, NULL, NULL)) {
		printf("connect-failed\n");
		return 3;
	}
	/* At most 10 s; the first update ends the wait. */
	for (tries = 0; !vs_done && tries < 100; tries++) {
		if ((n = WaitForMessage(cl, 100000)) < 0)
			break;
		if (n > 0 && !HandleRFBServerMessage(cl))
			break;
	}
	if (!vs_done) {
		printf("timeout\n");
		return 4;
	}
	printf("size %d %d\n", cl->width, cl->height);
	for (i = 2; i < argc; i++) {
		if (sscanf(argv[i], "key:%x", &want) == 1) {
			if (!SendKeyEvent(cl, want, TRUE) ||
			    !SendKeyEvent(cl, want, FALSE))
				return 3;
			keys = 1;
			continue;
		}
		if (sscanf(argv[i], "%d,%d,%x", &x, &y, &want) != 3 ||
		    x < 0 || y < 0 || x >= cl->width || y >= cl->height)
			return 2;
		p = cl->frameBuffer + ((size_t)y * (size_t)cl->width +
		    (size_t)x) * 4;
		got = (unsigned)p[0] << 16 | (unsigned)p[1] << 8 | p[2];
		if (got != want) {
			printf("pixel %d %d got %06x\n", x, y, got);
			return 5;
		}
		printf("ok\n");
	}
	if (keys) {
		/* The answer to a request after the keys: they were read. */
		vs_done = 0;
		vs_area = 0;
		if (!SendFramebufferUpdateRequest(cl, 0, 0, cl->width,
		    cl->height, FALSE))
			return 3;
		for (tries = 0; !vs_done && tries < 100; tries++) {
			if ((n = WaitForMessage(cl, 100000)) < 0)
				break;
			if (n > 0 && !HandleRFBServerMessage(cl))
				break;
		}
		if (!vs_done) {
			printf("timeout\n");
			return 4;
		}
	}
	/* The framebuffer is the application's to free. */
	free(cl->frameBuffer);
	cl->frameBuffer = NULL;
	rfbClientCleanup(cl);
	return 0;
}

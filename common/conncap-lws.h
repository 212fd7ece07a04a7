/* SPDX-License-Identifier: MIT */
/*
 * conncap.h on a libwebsockets server (conncap-lws.c).
 */
#ifndef COMMON_CONNCAP_LWS_H
#define COMMON_CONNCAP_LWS_H

struct conncap;
struct lws;

/*
 * From LWS_CALLBACK_SERVER_NEW_CLIENT_INSTANTIATED: admit wsi, closing
 * the connection conncap sheds for it.  -1 if wsi must be refused (return
 * it from the callback: lws then closes it).  event names the debug log
 * line ("serve.conn").  The caller calls conncap_gone() from
 * LWS_CALLBACK_WSI_DESTROY and conncap_trust() once the token is right.
 */
int	conncap_lws_admit(struct conncap *cc, struct lws *wsi,
	    const char *event);

#endif

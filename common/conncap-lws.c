/* SPDX-License-Identifier: MIT */
/*
 * conncap (conncap.h) for a libwebsockets server: admission is decided in
 * LWS_CALLBACK_SERVER_NEW_CLIENT_INSTANTIATED, the first callback where
 * the accepted wsi has its socket (WSI_CREATE comes before it).  A shed
 * connection is closed on the loop's next turn (LWS_TO_KILL_ASYNC):
 * closing another wsi from inside the accept would shift lws's fd table
 * under the listener that is being serviced.  Until then it still holds
 * its descriptor, which the caller's own hard ceiling allows for.
 */
#include "autoconf.h"

#include <libwebsockets.h>

#include "conncap.h"
#include "conncap-lws.h"
#include "log.h"

int
conncap_lws_admit(struct conncap *cc, struct lws *wsi, const char *event)
{
	unsigned char	 peer[CONNCAP_PEER_MAX];
	size_t		 len;
	void		*shed;
	int		 fd;

	fd = lws_get_socket_fd(wsi);
	len = conncap_peer(fd, peer);
	if (conncap_admit(cc, wsi, peer, len, conncap_ready(fd),
	    lws_now_usecs() / 1000, &shed) != 0) {
		log_debug(event, "action=refused");
		return -1;
	}
	if (shed != NULL) {
		/* Per connection, so at debug: a flood must not flood the log. */
		log_debug(event, "action=shed");
		lws_set_timeout(shed, PENDING_TIMEOUT_HTTP_CONTENT,
		    LWS_TO_KILL_ASYNC);
	}
	return 0;
}

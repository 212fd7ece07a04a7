/* SPDX-License-Identifier: MIT */
/*
 * The HTTP/JSON API of rakazoctl serve (doc/DESIGN.md C-1, C-4), independent of
 * the HTTP server: serve.c hands each complete request here (in a task of
 * its own, task.h) and writes back what comes out.  Routes:
 *
 *   GET    /internal/health                   (no auth)
 *   GET    /v1/tools
 *   POST   /v1/tools/{tool}                   {computer, bot, lease?, ...}
 *   GET    /v1/computers                      POST /v1/computers {id?}
 *   GET    /v1/computers/{id}                 DELETE /v1/computers/{id}
 *   POST   /v1/computers/{id}/start|stop
 *   GET    /v1/computers/{id}/activity?after=N&limit=M&wait_ms=W
 *          (long poll: with nothing after N, answer when an event
 *          arrives or after W ms, at most API_WAIT_MAX_MS)
 *   GET    /v1/computers/{id}/runs
 *   POST   /v1/computers/{id}/checkpoint      a new home revision (C-8)
 *   POST   /v1/computers/{id}/restore {revision?}  (C-5: a new revision)
 *   GET    /v1/computers/{id}/homes           its revisions, newest first
 *   POST   /v1/computers/{id}/runs/{lease}/end {outcome}  (G-4: a bot run,
 *          named by its execution lease, ends succeeded|failed|cancelled)
 *   POST   /v1/computers/{id}/control         {bot, holder?, ttl_ms?}
 *   DELETE /v1/computers/{id}/control/{lease}
 *   POST   /v1/leases                         {computer, bot, holder, ttl_ms?}
 *   POST   /v1/leases/{id}/heartbeat          {ttl_ms?}
 *   DELETE /v1/leases/{id}
 *   PUT    /v1/computers/{id}/files?bot=B&path=P[&lease=L][&mode=0644]
 *          [&parents=1]   raw body (Content-Length), streamed to guestd
 *   GET    /v1/computers/{id}/files?bot=B&path=P   raw file, streamed
 *
 * The two file routes stream: serve.c starts a PUT's task as soon as its
 * headers arrive and hands it the body through a bounded pipe (api_req.in),
 * and a GET answers with a byte stream through api_req.out once
 * api_resp.stream is set and api_req.respond() called.
 *
 * Errors are 4xx/5xx with {"error":{"code","message"}} and a stable code.
 */
#ifndef CONTROLLER_API_H
#define CONTROLLER_API_H

#include <stddef.h>
#include <stdint.h>

#include "provider.h"
#include "bytepipe.h"

#define API_MAX_BODY	(1024 * 1024)
/* PUT .../files: the largest body, and the pipes' high-water marks. */
#define API_MAX_UPLOAD		(INT64_C(8) << 30)
#define API_PIPE_IN_HIGH	(1024 * 1024)
#define API_PIPE_OUT_HIGH	(2 * 1024 * 1024)
#define API_WAIT_MAX_MS	60000
#define API_START_LOCK_MS	120000
#define API_START_LOCK_POLL_MS	25

struct api {
	const char	*store_url;	/* DATA_DIR, sqlite:PATH or postgres:// */
	const char	*lock_dir;	/* DATA_DIR: cross-process locks */
	struct provider	*prov;
	const char	*token;		/* bearer token */
	int64_t		 idle_ms;	/* SANDBOX_IDLE_MS; 0 = never */
	const char	*data_dir;	/* DATA_DIR: the local home store */
	int64_t		 home_keep;	/* HOME_KEEP_REVISIONS; 0 = default */
	int64_t		 attach_max;	/* ATTACHMENT_MAX_BYTES; 0 = default */
	/*
	 * Called (from a request's task) when a capability was stored
	 * under a lease that expires at at_ms, so the server's expiry timer
	 * fires by then.  May be NULL.
	 */
	void		(*cap_deadline)(int64_t at_ms);
};

struct api_req {
	const char	*method;	/* GET POST DELETE PUT */
	const char	*path;
	const char	*query;		/* "a=1&b=2" or "" */
	const char	*auth;		/* Authorization header or "" */
	const char	*body;
	size_t		 bodylen;
	int		 too_large;	/* the body passed API_MAX_BODY */
	/* Streaming (api_files_streams_body(), GET .../files), else NULL. */
	int64_t		 length;	/* Content-Length; -1 none */
	struct bytepipe	*in;		/* the body, while it arrives */
	struct bytepipe	*out;		/* a streamed reply's bytes */
	/* Send the headers of a streamed reply (out->stream set) now. */
	void		(*respond)(void *arg);
	void		*respond_arg;
	/* Set by the server when the client left; long polls end early. */
	const int	*peer_gone;
};

struct api_resp {
	int	 status;
	char	*body;			/* malloc'd JSON */
	size_t	 len;
	/* A byte stream instead of body: stream_len bytes through q->out. */
	int	 stream;
	int64_t	 stream_len;
};

void	api_handle(struct api *a, const struct api_req *q,
	    struct api_resp *out);
/* HTTP status for an ERR_* code. */
int	api_status(int code);
/* Does this request's body stream (PUT .../files) instead of buffering? */
int	api_files_streams_body(const char *method, const char *path);

#endif

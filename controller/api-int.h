/* SPDX-License-Identifier: MIT */
/*
 * What api.c, the router, shares with the resource files beside it
 * (api-computers.c, api-leases.c, api-control.c, api-runs.c, api-files.c,
 * api-tools.c) and with the sweeps (sweep.c): the request's context, the
 * route handlers the routing table names, and the helpers more than one
 * of those files uses.  Each is declared here once, by the file that
 * defines it.  Not for callers of the API; they have api.h.
 */
#ifndef CONTROLLER_API_INT_H
#define CONTROLLER_API_INT_H

#include <stdint.h>

#include <jansson.h>

#include "api.h"
#include "err.h"
#include "store.h"

#define API_ERRLEN	512
/* The most path segments a route pattern captures ("*"). */
#define API_ARGS_MAX	4

struct api_ctx {
	struct api		*a;
	const struct api_req	*q;
	struct api_resp		*out;
	struct store		*s;
	json_t			*body;
	struct errmsg	 err;
};

/*
 * A route handler: arg holds the path segments the pattern's "*"s
 * captured, in order.  It answers through api_reply() or api_error().
 */
typedef void	api_handler(struct api_ctx *x, const char **arg);

/* ---- api.c: replies, names, the request body ----------------------- */

/* Reply with j (stolen). */
void	api_reply(struct api_ctx *x, int status, json_t *j);
/* An error reply; msg may be "CODE: sentence" or NULL (the code's). */
void	api_error(struct api_ctx *x, int code, const char *msg);
/* api_error with the error's "cause" (0: none), see struct errmsg. */
void	api_error_cause(struct api_ctx *x, int code, int cause,
	    const char *msg);
/* Computer and bot names: [A-Za-z0-9._-], 1..63, no leading dot or dash. */
int	api_name_ok(const char *s);
/* Parse the JSON body into x->body ({} when empty), or reply and -1. */
int	api_parse_body(struct api_ctx *x);
/* A required name field of the body, or reply and -1. */
int	api_body_name(struct api_ctx *x, const char *key, const char **out);
/* The integer query parameter key, or def. */
int64_t	api_query_int(const char *query, const char *key, int64_t def);
/* A store handle from the requests' pool, and back to it. */
int	api_store_get(struct api *a, struct store **s, struct errmsg *err);
void	api_store_put(struct store *s);

/* ---- api-computers.c: /v1/computers[/{id}[/start|stop|activity]] --- */

/* Load computer id into c, or reply 404 and return -1. */
int	api_computers_find(struct api_ctx *x, const char *id,
	    struct store_computer *c);
/* Make c run (C-6); on failure a sentence in x->err. */
int	api_computers_ensure_running(struct api_ctx *x,
	    struct store_computer *c);
/* Stop (or destroy) c, closing its run with reason. */
int	api_computers_halt(struct api_ctx *x, struct store_computer *c,
	    const char *reason, int destroy);
api_handler	api_computers_list;
api_handler	api_computers_create;
api_handler	api_computers_show;
api_handler	api_computers_delete;
api_handler	api_computers_stop;
api_handler	api_computers_start;
api_handler	api_computers_activity;

/* ---- api-leases.c: /v1/leases[/{id}[/heartbeat]] -------------------- */

/* A mutating call's execution lease (lease NULL: one for this call). */
int	api_leases_take(struct api_ctx *x, const char *computer,
	    const char *bot, const char *lease, struct store_lease *l,
	    int *ephemeral);
/*
 * Release a call's own lease (api_leases_take()'s ephemeral one).  When
 * the store fails the release is kept and tried again, at the next
 * request and from a retry task, until the store takes it: a lease that
 * nobody will release must not block its bot for the rest of its TTL.
 */
void	api_leases_end_call(struct api_ctx *x, const struct store_lease *l);
/* Releases still owed (a store fault); api_leases_retry() tries them. */
int	api_leases_owed(void);
void	api_leases_retry(struct store *s);
json_t	*api_leases_json(const struct store_lease *l);
/* The body's optional ttl_ms, or reply and -1. */
int	api_leases_body_ttl(struct api_ctx *x, int64_t *ttl);
/* End lease id (of computer, unless NULL) and revoke what it granted. */
void	api_leases_release(struct api_ctx *x, const char *id,
	    const char *computer);
api_handler	api_leases_acquire;
api_handler	api_leases_heartbeat;
api_handler	api_leases_delete;

/* ---- api-control.c: /v1/computers/{id}/control, capabilities -------- */

/* Store a capability granted under l (res: guestd's grant reply). */
int	api_control_remember(struct api_ctx *x, const struct store_lease *l,
	    json_t *res);
/* Revoke every capability granted under lease; *count revoked. */
int	api_control_revoke(struct api_ctx *x, const char *lease,
	    const char *why, int *count);
/* Move lease l's capabilities to its new expiry; how many moved. */
int	api_control_renew(struct api_ctx *x, const struct store_lease *l);
/* Revoke one stored capability at guestd and forget it. */
int	api_control_cap_revoke(struct api *a, struct store *s,
	    const struct store_cap *cap, const char *why);
/* Free a capability list, wiping it. */
void	api_control_caps_free(struct store_cap *caps, size_t n);
api_handler	api_control_take;
api_handler	api_control_release;

/* ---- api-runs.c: /v1/computers/{id}/runs[/{lease}/end] -------------- */

api_handler	api_runs_list;
api_handler	api_runs_end;

/* ---- api-files.c: PUT and GET /v1/computers/{id}/files -------------- */

api_handler	api_files_put;
api_handler	api_files_get;

/* ---- api-homes.c: /v1/computers/{id}/checkpoint|restore|homes -------- */

/* {revision, created_ms, bytes, files} of c's newest revision, or NULL. */
json_t	*api_homes_latest_json(struct api_ctx *x, const char *computer);
api_handler	api_homes_checkpoint;
api_handler	api_homes_restore;
api_handler	api_homes_list;

/* ---- api-tools.c: /v1/tools[/{tool}] -------------------------------- */

api_handler	api_tools_list;
api_handler	api_tools_call;

#endif

/*
 * What api.c shares with the route files beside it (api-files.c): the
 * request's context and the helpers every route uses.  Not for callers of
 * the API; they have api.h.
 */
#ifndef CONTROLLER_API_INT_H
#define CONTROLLER_API_INT_H

#include <jansson.h>

#include "api.h"
#include "store.h"

#define API_ERRLEN	512

struct api_ctx {
	struct api		*a;
	const struct api_req	*q;
	struct api_resp		*out;
	struct store		*s;
	json_t			*body;
	char			 err[API_ERRLEN];
};

/* Reply with j (stolen). */
void	api_reply(struct api_ctx *x, int status, json_t *j);
/* An error reply; msg may be "CODE: sentence" or NULL (the code's). */
void	api_error(struct api_ctx *x, int code, const char *msg);
/* Computer and bot names: [A-Za-z0-9._-], 1..63, no leading dot or dash. */
int	api_name_ok(const char *s);
/* Load computer id into c, or reply 404 and return -1. */
int	api_computer_find(struct api_ctx *x, const char *id,
	    struct store_computer *c);
/* Make c run (C-6); on failure a sentence in x->err. */
int	api_ensure_running(struct api_ctx *x, struct store_computer *c);
/* A mutating call's execution lease (lease NULL: one for this call). */
int	api_lease_take(struct api_ctx *x, const char *computer,
	    const char *bot, const char *lease, struct store_lease *l,
	    int *ephemeral);

/* api-files.c: PUT and GET /v1/computers/{id}/files. */
void	api_files_put(struct api_ctx *x, const char *id);
void	api_files_get(struct api_ctx *x, const char *id);

#endif

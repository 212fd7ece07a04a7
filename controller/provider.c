/*
 * Provider selection and the thin front of provider.h: callers never look
 * into a provider's table themselves.  Streaming calls fall back to a
 * buffered call for providers without them (fake, none), with a cap: those
 * serve tests and refusals, never large files.
 */
#include "autoconf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "provider.h"
#include "task.h"
#include "xmalloc.h"

#define PROVIDER_BUFFER_MAX	(64 * 1024 * 1024)

static const struct provider_ops *const provider_all[] = {
	&provider_local_ops, &provider_fake_ops, &provider_none_ops,
};

int
provider_new(struct provider **out, const char *name,
    const struct provider_config *cfg, struct errmsg *err)
{
	struct provider	*p;
	size_t		 i;
	int		 r;

	*out = NULL;
	for (i = 0; i < sizeof provider_all / sizeof provider_all[0]; i++) {
		if (strcmp(provider_all[i]->name, name) != 0)
			continue;
		p = xcalloc(1, sizeof *p);
		p->ops = provider_all[i];
		p->cfg = *cfg;
		if (p->ops->init != NULL &&
		    (r = p->ops->init(p, err)) != 0) {
			provider_free(p);
			return r;
		}
		*out = p;
		return 0;
	}
	return errmsg_set(err, ERR_CONFIG, "unknown SANDBOX_PROVIDER '%.32s' "
	    "(this build has local, fake and none)", name);
}

void
provider_free(struct provider *p)
{
	if (p == NULL)
		return;
	if (p->ops->free != NULL)
		p->ops->free(p);
	free(p);
}

const char *
provider_name(const struct provider *p)
{
	return p->ops->name;
}

const char *
provider_isolation(struct provider *p)
{
	return p->ops->isolation != NULL ? p->ops->isolation(p) : NULL;
}

int
provider_admit(struct provider *p, struct store *s, const char *id,
    struct errmsg *err)
{
	if (p->ops->admit == NULL)
		return 0;
	return p->ops->admit(p, s, id, err);
}

int
provider_start(struct provider *p, struct store_computer *c, struct errmsg *err)
{
	return p->ops->start(p, c, err);
}

int
provider_alive(struct provider *p, const struct store_computer *c)
{
	return p->ops->alive(p, c);
}

int
provider_stop(struct provider *p, struct store_computer *c)
{
	return p->ops->stop(p, c);
}

int
provider_destroy(struct provider *p, struct store_computer *c)
{
	return p->ops->destroy(p, c);
}

int
provider_gateway(struct provider *p, const struct store_computer *c,
    char *hostport, size_t len)
{
	if (p->ops->gateway == NULL)
		return ERR_NOT_FOUND;
	return p->ops->gateway(p, c, hostport, len);
}

int
provider_call(struct provider *p, const struct store_computer *c,
    const char *op, json_t *args, const void *in, size_t inlen,
    json_t **result, void **out, size_t *outlen, struct errmsg *err)
{
	if (out != NULL) {
		*out = NULL;
		*outlen = 0;
	}
	*result = NULL;
	errmsg_clear(err);
	return p->ops->call(p, c, op, args, in, inlen, result, out, outlen,
	    err);
}

/* ---- streaming, and its buffered fallback ------------------------------ */

struct provider_fill {
	struct task_cond	 cv;
};

static void
provider_fill_ready(void *arg)
{
	struct provider_fill	*f = arg;

	task_cond_broadcast(&f->cv);
}

/* Read src whole, waiting for it in the task. */
static int
provider_src_slurp(struct provider_src *src, uint8_t **out, size_t *outlen)
{
	struct provider_fill	 f;
	uint8_t			*buf = NULL;
	size_t			 len = 0, cap = 0;
	ssize_t			 n;
	int			 end = 0, r = 0;

	memset(&f, 0, sizeof f);
	src->ready = provider_fill_ready;
	src->ready_arg = &f;
	while (!end) {
		if (cap - len < 65536) {
			cap = (len + 65536) * 2;
			buf = xrealloc(buf, cap);
		}
		if ((n = src->read(src->arg, buf + len, cap - len,
		    &end)) < 0) {
			r = (int)n;
			break;
		}
		len += (size_t)n;
		if (len > PROVIDER_BUFFER_MAX) {
			r = ERR_TOO_LARGE;
			break;
		}
		if (n == 0 && !end && (r = task_cond_wait(&f.cv, -1)) != 0)
			break;
	}
	src->ready = NULL;
	src->ready_arg = NULL;
	if (r != 0) {
		free(buf);
		return r;
	}
	*out = buf;
	*outlen = len;
	return 0;
}

int
provider_call_upload(struct provider *p, const struct store_computer *c,
    const char *op, json_t *args, struct provider_src *src, json_t **result,
    struct errmsg *err)
{
	uint8_t	*buf = NULL;
	size_t	 len = 0;
	int	 r;

	*result = NULL;
	errmsg_clear(err);
	if (p->ops->call_upload != NULL)
		return p->ops->call_upload(p, c, op, args, src, result, err);
	if ((r = provider_src_slurp(src, &buf, &len)) != 0) {
		json_decref(args);
		errmsg_set(err, r, "%s", err_message(r));
		return r;
	}
	r = p->ops->call(p, c, op, args, buf != NULL ? buf : (void *)"", len,
	    result, NULL, NULL, err);
	free(buf);
	return r;
}

int
provider_call_download(struct provider *p, const struct store_computer *c,
    const char *op, json_t *args, const struct provider_sink *sink,
    json_t **result, struct errmsg *err)
{
	void	*out = NULL;
	size_t	 outlen = 0;
	int	 r;

	*result = NULL;
	errmsg_clear(err);
	if (p->ops->call_download != NULL)
		return p->ops->call_download(p, c, op, args, sink, result, err);
	r = p->ops->call(p, c, op, args, NULL, 0, result, &out, &outlen, err);
	if (r == 0 && outlen > 0)
		(void)sink->write(sink->arg, out, outlen);
	free(out);
	return r;
}

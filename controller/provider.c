/*
 * Provider selection and the thin front of provider.h: callers never look
 * into a provider's table themselves.
 */
#include "autoconf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "log.h"
#include "provider.h"

static const struct provider_ops *const provider_all[] = {
	&provider_local_ops, &provider_fake_ops, &provider_none_ops,
};

int
provider_new(struct provider **out, const char *name,
    const struct provider_config *cfg, char *err, size_t errlen)
{
	struct provider	*p;
	size_t		 i;

	*out = NULL;
	for (i = 0; i < sizeof provider_all / sizeof provider_all[0]; i++) {
		if (strcmp(provider_all[i]->name, name) != 0)
			continue;
		p = xcalloc(1, sizeof *p);
		p->ops = provider_all[i];
		p->cfg = *cfg;
		*out = p;
		return 0;
	}
	snprintf(err, errlen, "unknown SANDBOX_PROVIDER '%.32s' (this build "
	    "has local, fake and none)", name);
	return ERR_CONFIG;
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

int
provider_start(struct provider *p, struct store_computer *c, char *err,
    size_t errlen)
{
	return p->ops->start(p, c, err, errlen);
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
    json_t **result, void **out, size_t *outlen, char *err, size_t errlen)
{
	if (out != NULL) {
		*out = NULL;
		*outlen = 0;
	}
	*result = NULL;
	err[0] = '\0';
	return p->ops->call(p, c, op, args, in, inlen, result, out, outlen,
	    err, errlen);
}

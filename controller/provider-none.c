/* SPDX-License-Identifier: MIT */
/*
 * SANDBOX_PROVIDER=none: this controller serves no computers.  Every
 * lifecycle or tool request answers COMPUTERS_DISABLED, so a deployment
 * that forgot to configure a provider says so instead of pretending.
 */
#include "autoconf.h"

#include <stdio.h>

#include "err.h"
#include "provider.h"

static int
none_start(struct provider *p, struct store_computer *c, struct errmsg *err)
{
	return errmsg_set(err, ERR_COMPUTERS_DISABLED, "%s",
	    err_message(ERR_COMPUTERS_DISABLED));
}

static int
none_alive(struct provider *p, const struct store_computer *c)
{
	return 0;
}

static int
none_stop(struct provider *p, struct store_computer *c)
{
	return 0;
}

static int
none_endpoint(struct provider *p, const struct store_computer *c,
    struct provider_endpoint *ep, struct errmsg *err)
{
	return errmsg_set(err, ERR_COMPUTERS_DISABLED, "%s",
	    err_message(ERR_COMPUTERS_DISABLED));
}

const struct provider_ops provider_none_ops = {
	.name = "none",
	.start = none_start,
	.alive = none_alive,
	.stop = none_stop,
	.destroy = none_stop,
	.endpoint = none_endpoint,
};

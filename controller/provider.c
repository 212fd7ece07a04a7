/* SPDX-License-Identifier: MIT */
/*
 * Provider selection and the thin front of provider.h: callers never look
 * into a provider's table themselves.  The lifecycle front tells the guest
 * module (guest.h) when a computer's endpoint changed, so a connection to
 * a guestd that stopped is never reused for its successor.
 */
#include "autoconf.h"

#include <sys/wait.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "err.h"
#include "guest.h"
#include "provider.h"
#include "task.h"
#include "token.h"
#include "xmalloc.h"

static const struct provider_ops *const provider_all[] = {
	&provider_local_ops, &provider_docker_ops, &provider_kubernetes_ops,
	&provider_fake_ops, &provider_none_ops,
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
	    "(this build has local, docker, kubernetes, fake and none)", name);
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
provider_check(struct provider *p, struct errmsg *err)
{
	errmsg_clear(err);
	return p->ops->check != NULL ? p->ops->check(p, err) : 0;
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
	char	 before[sizeof c->ref];
	int	 r;

	snprintf(before, sizeof before, "%s", c->ref);
	r = p->ops->start(p, c, err);
	/* A reconnect keeps the reference, and its connections. */
	if (r != 0 || strcmp(before, c->ref) != 0)
		guest_forget(c->id);
	return r;
}

int
provider_alive(struct provider *p, const struct store_computer *c)
{
	return p->ops->alive(p, c);
}

int
provider_stop(struct provider *p, struct store_computer *c)
{
	guest_forget(c->id);
	return p->ops->stop(p, c);
}

int
provider_destroy(struct provider *p, struct store_computer *c)
{
	guest_forget(c->id);
	return p->ops->destroy(p, c);
}

int
provider_endpoint(struct provider *p, const struct store_computer *c,
    struct provider_endpoint *ep, struct errmsg *err)
{
	memset(ep, 0, sizeof *ep);
	errmsg_clear(err);
	return p->ops->endpoint(p, c, ep, err);
}

void
provider_endpoint_wipe(struct provider_endpoint *ep)
{
	token_wipe(ep->secret, sizeof ep->secret);
}

int
provider_run(char *const argv[])
{
	pid_t	 pid;
	int	 st;

	if ((pid = fork()) == -1)
		return ERR_IO;
	if (pid == 0) {
		execvp(argv[0], argv);
		_exit(127);
	}
	(void)task_wait_pid(pid, -1);
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) ||
	    WEXITSTATUS(st) != 0)
		return ERR_IO;
	return 0;
}

int
provider_rmtree(const char *path)
{
	char *const	 argv[] = { "rm", "-rf", "--", (char *)path, NULL };

	/* rm -rf copes with whatever guest processes left behind. */
	return provider_run(argv);
}

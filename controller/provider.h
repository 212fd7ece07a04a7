/* SPDX-License-Identifier: MIT */
/*
 * Providers (doc/DESIGN.md P-1, P-2).  Because guestd implements desktop,
 * exec and files the same way everywhere, a provider answers lifecycle
 * only: create or reconnect, is it alive, stop, destroy; and, for a
 * running computer, its endpoint: where its guestd's control channel
 * listens, the secret it takes, where its screen gateway is reached from
 * here and where its workspace lies.  Talking to guestd is guest.h's, the
 * same for every provider: no provider is on a request's path.
 * SANDBOX_PROVIDER picks the table: local (guestd as a child process),
 * docker (a container per computer), kubernetes (a pod per computer), fake (an in-process guestd stand-in,
 * for tests of controller logic) and none (computers disabled).
 *
 * A computer's provider reference (pid, port, secret file) lives in the
 * computer row's ref as JSON: a restarted controller reads it back and
 * reconnects to a guestd that still runs (C-11: an acceleration path, not
 * durable data).
 */
#ifndef CONTROLLER_PROVIDER_H
#define CONTROLLER_PROVIDER_H

#include <sys/types.h>

#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

#include "store.h"
#include "token.h"

struct errmsg;

struct lws_context;
struct lws_vhost;
struct curl_loop;

struct provider_config {
	const char	*data_dir;	/* DATA_DIR */
	const char	*guestd;	/* guestd binary (local) */
	const char	*guest_user;	/* --user for guestd when root */
	/*
	 * Local, as root: "LO-HI", the uids computers get one each of
	 * (LOCAL_UID_RANGE); "" or "off" runs them all as guest_user.
	 */
	const char	*uid_range;
	/* Local, one shared user: accept more than one computer anyway. */
	int		 allow_shared_user;
	/* Docker: DOCKER_HOST (unix://PATH), the image and its tag. */
	const char	*docker_host;
	const char	*image;
	const char	*image_tag;
	/* Docker: "bind" (DATA_DIR/computers/<id>/home) or "volume". */
	const char	*docker_home;
	/* Docker: CPUs ("1.5"), memory bytes (0: none), pids (0: none). */
	const char	*docker_cpus;
	int64_t		 docker_memory;
	int64_t		 docker_pids;
	/* HOME_MAX_BYTES: guestd's home size cap, handed to every
	 * computer's guestd as GUESTD_HOME_MAX_BYTES; 0: guestd's own. */
	uint64_t	 home_max_bytes;
	/*
	 * Kubernetes (KUBERNETES_SANDBOX_*): namespace, computer image,
	 * runtime class, CPU and memory limits (quantities), pod labels and
	 * annotations (JSON objects), the ready deadline, the home claim;
	 * the kubeconfig file (KUBECONFIG; NULL or "": in-cluster).
	 */
	const char	*k8s_namespace;
	const char	*k8s_image;
	const char	*k8s_runtime_class;
	const char	*k8s_cpu;
	const char	*k8s_memory;
	const char	*k8s_labels;
	const char	*k8s_annotations;
	int64_t		 k8s_ready_ms;
	const char	*k8s_home_claim;
	const char	*kubeconfig;
	/*
	 * Which state store this controller shares (a hash, no password):
	 * controllers of one store adopt each other's pods, others meet
	 * the API's 409.
	 */
	const char	*store_id;
	/* libcurl on the serve loop (curl-loop.h), for HTTP APIs. */
	struct curl_loop *curl;
	/* The serve loop (a provider's own I/O, e.g. its engine's API). */
	struct lws_context *ctx;
	struct lws_vhost *vhost;
};

struct provider;

#define PROVIDER_URL_MAX	256

/*
 * Where a running computer's guestd is reached (provider_endpoint).
 * control_url: ws://HOST:PORT of the control channel, or
 * inproc://NAME/COMPUTER for a stand-in served in this process
 * (guest.h).  gateway: HOST:PORT of the screen gateway (G-13) as seen from
 * here, or "" when it is the port guestd's hello names on the control
 * URL's host.  The secret is wiped with provider_endpoint_wipe().
 */
struct provider_endpoint {
	char	control_url[PROVIDER_URL_MAX];
	char	secret[SECRET_MAX + 1];
	char	gateway[PROVIDER_URL_MAX];
	char	workspace[PATH_MAX];
};

struct provider_ops {
	const char	*name;
	/* Optional: check the configuration at start-up.  0 or ERR_*. */
	int	(*init)(struct provider *, struct errmsg *err);
	/*
	 * Optional: how computers are kept apart ("uid": a user each;
	 * "shared-user": one user for all; "container"), for
	 * /internal/health.
	 */
	const char *(*isolation)(struct provider *);
	/*
	 * Optional: is the provider's machinery there (an engine's socket
	 * answers)?  0, or ERR_* with a sentence for /internal/health.
	 */
	int	(*check)(struct provider *, struct errmsg *err);
	/*
	 * Optional: may computer id (about to be created) exist beside the
	 * computers in s?  0, or ERR_* with a sentence in err.
	 */
	int	(*admit)(struct provider *, struct store *s, const char *id,
		    struct errmsg *err);
	/* Start c (stopped) or reconnect; fills c->ref.  0 or ERR_*. */
	int	(*start)(struct provider *, struct store_computer *c,
		    struct errmsg *err);
	/* 1 running, 0 not, < 0 cannot tell. */
	int	(*alive)(struct provider *, const struct store_computer *c);
	int	(*stop)(struct provider *, struct store_computer *c);
	/* Stop and remove the computer's workspace. */
	int	(*destroy)(struct provider *, struct store_computer *c);
	/* Where c's guestd is reached (c started).  0 or ERR_* (err). */
	int	(*endpoint)(struct provider *, const struct store_computer *c,
		    struct provider_endpoint *ep, struct errmsg *err);
	void	(*free)(struct provider *);
};

struct provider {
	const struct provider_ops	*ops;
	struct provider_config		 cfg;
	void				*impl;
};

extern const struct provider_ops	provider_local_ops;
extern const struct provider_ops	provider_fake_ops;
extern const struct provider_ops	provider_none_ops;
extern const struct provider_ops	provider_docker_ops;
extern const struct provider_ops	provider_kubernetes_ops;

/* Provider by name; ERR_CONFIG with a sentence for an unknown one. */
int	provider_new(struct provider **out, const char *name,
	    const struct provider_config *cfg, struct errmsg *err);
void	provider_free(struct provider *p);
const char *provider_name(const struct provider *p);
/* "uid", "shared-user", "container", or NULL when it does not say. */
const char *provider_isolation(struct provider *p);
/* Is the provider's machinery there?  0 or ERR_* (err). */
int	provider_check(struct provider *p, struct errmsg *err);
/* May computer id be created beside those in s?  0 or ERR_* (err). */
int	provider_admit(struct provider *p, struct store *s, const char *id,
	    struct errmsg *err);

/*
 * Lifecycle.  Each one that changes where a computer is reached makes
 * guest.h forget the computer's connections.
 */
int	provider_start(struct provider *p, struct store_computer *c,
	    struct errmsg *err);
int	provider_alive(struct provider *p, const struct store_computer *c);
int	provider_stop(struct provider *p, struct store_computer *c);
int	provider_destroy(struct provider *p, struct store_computer *c);
/* c's endpoint; ep is zeroed first.  0 or ERR_* (err). */
int	provider_endpoint(struct provider *p, const struct store_computer *c,
	    struct provider_endpoint *ep, struct errmsg *err);
void	provider_endpoint_wipe(struct provider_endpoint *ep);
/*
 * For providers: run argv (PATH searched) to its end in a child the
 * calling task waits for, without blocking the loop; 0 when it exits 0,
 * else ERR_IO.  provider_rmtree removes the tree at path as rm -rf does.
 */
int	provider_run(char *const argv[]);
int	provider_rmtree(const char *path);

#endif

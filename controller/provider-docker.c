/* SPDX-License-Identifier: MIT */
/*
 * SANDBOX_PROVIDER=docker (P-2): each computer is a container of the
 * computer image (RAKAZO_COMPUTER_IMAGE:RAKAZO_COMPUTER_IMAGE_TAG, image/),
 * made and driven through the Docker Engine API on its Unix socket
 * (DOCKER_HOST, docker-http.h).  Lifecycle only: guest.h talks to the
 * guestd inside through the ports published here.
 *
 * The container: uid 1000 (the image's workspace user), no-new-privileges,
 * every capability dropped, a pids limit and CPU and memory limits
 * (settings), the default bridge network (never the host's), guestd's
 * control and gateway ports published on 127.0.0.1 only, on ports the
 * engine picks.  The home is DATA_DIR/computers/<id>/home bind-mounted at
 * the image's workspace path, or a named volume (DOCKER_HOME=volume).  The
 * control secret is a file of that directory (mode 0400, the workspace
 * user's) mounted read-only where the image's GUESTD_SECRET_FILE points:
 * never in the environment, the command line or the labels, which anyone
 * who may inspect the container reads.
 *
 * Labels (rakazo.computer, rakazo.instance) name the computer and the
 * controller, so a controller that lost a reference (a restart, a row
 * restored from elsewhere) finds the container by name and labels and
 * reconnects to it or starts it again (a warm start) instead of making a
 * second one.  A stop removes the container (the home stays); a destroy
 * removes the container, its volume and its directory.  A container
 * removed or dead behind our back answers alive 0: the run closes gone
 * and the next call makes a new one.  An engine that does not answer is a
 * setup failure (provider_check, /internal/health).
 *
 * The engine reports no readiness of the program inside, short of a
 * HEALTHCHECK whose interval is far too coarse for a start: after the
 * start we open the control channel (websocket, secret, hello) until it
 * answers, with a backoff, within DOCKER_READY_MS.
 */
#include "autoconf.h"

#include <sys/stat.h>
#include <sys/types.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "docker-http.h"
#include "err.h"
#include "guest-client.h"
#include "log.h"
#include "provider.h"
#include "task.h"
#include "token.h"
#include "xmalloc.h"

#define DOCKER_API_MS		30000
#define DOCKER_READY_MS		60000
#define DOCKER_STOP_S		5
#define DOCKER_UID		1000
#define DOCKER_CONTROL_PORT	"7000/tcp"
#define DOCKER_GATEWAY_PORT	"6080/tcp"
#define DOCKER_WORKSPACE	"/home/user/rakazo-home"
#define DOCKER_SECRET_PATH	"/run/secrets/guestd"
#define DOCKER_SHM_BYTES	(256LL * 1024 * 1024)

struct docker_cfg {
	char	 socket[PATH_MAX];
	char	 image[512];
	char	 instance[17];		/* the controller, in labels */
	int	 volume;		/* the home is a named volume */
	int64_t	 nano_cpus;
	int64_t	 memory;
	int64_t	 pids;
};

struct docker_ref {
	char	 container[80];
	int	 port;
	int	 gateway_port;
	char	 secret_file[PATH_MAX];
};

static const struct docker_cfg *
docker_cfg(struct provider *p)
{
	return p->impl;
}

/* FNV-1a of the data directory: which controller a container is of. */
static void
docker_instance(const char *data_dir, char *out, size_t len)
{
	uint64_t	 h = 1469598103934665603ULL;
	const char	*s;

	for (s = data_dir; *s != '\0'; s++) {
		h ^= (unsigned char)*s;
		h *= 1099511628211ULL;
	}
	snprintf(out, len, "%016llx", (unsigned long long)h);
}

static int
docker_init(struct provider *p, struct errmsg *err)
{
	const struct provider_config	*pc = &p->cfg;
	struct docker_cfg		*dc;
	const char			*host = pc->docker_host;
	char				*end;
	double				 cpus;

	dc = xcalloc(1, sizeof *dc);
	p->impl = dc;
	if (host == NULL || *host == '\0')
		host = "unix:///var/run/docker.sock";
	if (strncmp(host, "unix://", 7) != 0 || host[7] != '/' ||
	    strlen(host + 7) >= sizeof dc->socket)
		return errmsg_set(err, ERR_CONFIG, "DOCKER_HOST must be "
		    "unix:///PATH (the engine's Unix socket)");
	snprintf(dc->socket, sizeof dc->socket, "%s", host + 7);
	if (pc->image == NULL || *pc->image == '\0' ||
	    strpbrk(pc->image, " \t\r\n\"") != NULL ||
	    (size_t)snprintf(dc->image, sizeof dc->image, "%s:%s", pc->image,
	    pc->image_tag != NULL && *pc->image_tag != '\0' ?
	    pc->image_tag : "latest") >= sizeof dc->image)
		return errmsg_set(err, ERR_CONFIG, "RAKAZO_COMPUTER_IMAGE "
		    "names no image");
	if (pc->docker_home != NULL && strcmp(pc->docker_home, "volume") == 0)
		dc->volume = 1;
	else if (pc->docker_home != NULL && *pc->docker_home != '\0' &&
	    strcmp(pc->docker_home, "bind") != 0)
		return errmsg_set(err, ERR_CONFIG, "DOCKER_HOME is bind or "
		    "volume");
	errno = 0;
	cpus = strtod(pc->docker_cpus != NULL ? pc->docker_cpus : "2", &end);
	if (errno != 0 || *end != '\0' || !(cpus >= 0.01 && cpus <= 1024))
		return errmsg_set(err, ERR_CONFIG, "DOCKER_CPUS is a number "
		    "of CPUs between 0.01 and 1024");
	dc->nano_cpus = (int64_t)(cpus * 1e9);
	dc->memory = pc->docker_memory;
	dc->pids = pc->docker_pids;
	if (dc->memory != 0 && dc->memory < 64LL * 1024 * 1024)
		return errmsg_set(err, ERR_CONFIG, "DOCKER_MEMORY is 64M at "
		    "least (or 0: no limit)");
	docker_instance(pc->data_dir, dc->instance, sizeof dc->instance);
	return 0;
}

static void
docker_free(struct provider *p)
{
	free(p->impl);
	p->impl = NULL;
}

static const char *
docker_isolation(struct provider *p)
{
	return "container";
}

/* One engine request; 0 with the status, or ERR_* (err). */
static int
docker_req(struct provider *p, const char *method, const char *path,
    json_t *body, long *status, json_t **reply, struct errmsg *err)
{
	return docker_http_request(p->cfg.curl, docker_cfg(p)->socket,
	    method, path, body, DOCKER_API_MS, status, reply, err);
}

static int
docker_check(struct provider *p, struct errmsg *err)
{
	long	 st = 0;
	int	 r;

	if ((r = docker_req(p, "GET", "/_ping", NULL, &st, NULL, err)) != 0)
		return r;
	if (st != 200)
		return errmsg_set(err, ERR_PROVIDER, "the Docker engine at %s "
		    "answers /_ping with HTTP %ld", docker_cfg(p)->socket, st);
	return 0;
}

static void
docker_name(struct provider *p, const char *id, char *out, size_t len)
{
	snprintf(out, len, "rakazo-%s-%s", docker_cfg(p)->instance, id);
}

static int
docker_ref_parse(const struct store_computer *c, struct docker_ref *ref)
{
	json_t		*j;
	const char	*ct = NULL, *sf = NULL;
	json_int_t	 port = 0, gw = 0;
	int		 r = ERR_NOT_FOUND;

	memset(ref, 0, sizeof *ref);
	if ((j = json_loads(c->ref, 0, NULL)) == NULL)
		return ERR_NOT_FOUND;
	if (json_unpack(j, "{s:s, s:I, s:I, s:s}", "container", &ct, "port",
	    &port, "gateway_port", &gw, "secret_file", &sf) == 0 &&
	    port > 0 && port < 65536 && gw > 0 && gw < 65536 &&
	    strlen(ct) < sizeof ref->container &&
	    strspn(ct, "0123456789abcdef") == strlen(ct)) {
		snprintf(ref->container, sizeof ref->container, "%s", ct);
		ref->port = (int)port;
		ref->gateway_port = (int)gw;
		snprintf(ref->secret_file, sizeof ref->secret_file, "%s", sf);
		r = 0;
	}
	json_decref(j);
	return r;
}

/* An engine error status as ERR_PROVIDER with its message. */
static int
docker_refused(const char *what, long st, json_t *reply, struct errmsg *err)
{
	return errmsg_set(err, ERR_PROVIDER, "the Docker engine refused to "
	    "%s (HTTP %ld): %.300s", what, st, docker_http_message(reply));
}

/* The host port bound to port (e.g. "7000/tcp") in an inspect reply. */
static int
docker_host_port(json_t *inspect, const char *port)
{
	json_t	*b;

	b = json_object_get(json_object_get(json_object_get(inspect,
	    "NetworkSettings"), "Ports"), port);
	return atoi(json_string_value(json_object_get(json_array_get(b, 0),
	    "HostPort")) ?: "0");
}

/*
 * Inspect container name (or id): *state 0 absent, 1 running, 2 there but
 * not running; *inspect the reply when it is there.
 */
static int
docker_inspect(struct provider *p, const char *name, int *state,
    json_t **inspect, struct errmsg *err)
{
	char	 path[256];
	json_t	*j = NULL;
	long	 st = 0;
	int	 r;

	*state = 0;
	*inspect = NULL;
	snprintf(path, sizeof path, "/containers/%s/json", name);
	if ((r = docker_req(p, "GET", path, NULL, &st, &j, err)) != 0)
		return r;
	if (st == 404) {
		json_decref(j);
		return 0;
	}
	if (st != 200) {
		r = docker_refused("inspect a container", st, j, err);
		json_decref(j);
		return r;
	}
	*state = json_is_true(json_object_get(json_object_get(j, "State"),
	    "Running")) ? 1 : 2;
	*inspect = j;
	return 0;
}

static int
docker_alive(struct provider *p, const struct store_computer *c)
{
	struct docker_ref	 ref;
	struct errmsg		 err;
	json_t			*j = NULL;
	int			 state, r;

	if (docker_ref_parse(c, &ref) != 0)
		return 0;
	if ((r = docker_inspect(p, ref.container, &state, &j, &err)) != 0) {
		log_warn("docker.alive", "computer=%s %s", c->id,
		    errmsg_str(&err));
		return -1;
	}
	/* Restarted behind our back: the ports of the reference are gone. */
	if (state == 1 && (docker_host_port(j, DOCKER_CONTROL_PORT) !=
	    ref.port || docker_host_port(j, DOCKER_GATEWAY_PORT) !=
	    ref.gateway_port))
		state = 2;
	json_decref(j);
	return state == 1;
}

static int
docker_mkdir(const char *path, mode_t mode)
{
	if (mkdir(path, mode) == -1 && errno != EEXIST)
		return err_from_errno(errno);
	return 0;
}

/* DATA_DIR/computers/<id>[/leaf] into out. */
static int
docker_path(struct provider *p, const char *id, const char *leaf, char *out,
    size_t len)
{
	if ((size_t)snprintf(out, len, "%s/computers/%s%s%s",
	    p->cfg.data_dir, id, leaf != NULL ? "/" : "",
	    leaf != NULL ? leaf : "") >= len)
		return ERR_NAME_TOO_LONG;
	return 0;
}

/*
 * The computer's directory with its home (bind mode) and a fresh secret,
 * the workspace user's (when we are root: otherwise serve must run as
 * that uid for guestd to read them).
 */
static int
docker_prepare(struct provider *p, const char *id, char *secretp, size_t len,
    struct errmsg *err)
{
	char	 dir[PATH_MAX], home[PATH_MAX], secret[TOKEN_STRLEN + 1];
	size_t	 n;
	int	 fd = -1, r;

	if ((r = docker_path(p, id, NULL, dir, sizeof dir)) != 0 ||
	    (r = docker_path(p, id, "home", home, sizeof home)) != 0 ||
	    (r = docker_path(p, id, "secret", secretp, len)) != 0)
		return errmsg_set(err, r, "the data directory path is too "
		    "long");
	snprintf(home, sizeof home, "%s/computers", p->cfg.data_dir);
	if ((r = docker_mkdir(home, 0700)) != 0 ||
	    (r = docker_mkdir(dir, 0700)) != 0)
		return errmsg_set(err, r, "cannot create the computer's "
		    "directory");
	if (!docker_cfg(p)->volume) {
		(void)docker_path(p, id, "home", home, sizeof home);
		if ((r = docker_mkdir(home, 0700)) != 0 ||
		    (geteuid() == 0 && chown(home, DOCKER_UID, DOCKER_UID) !=
		    0))
			return errmsg_set(err, r != 0 ? r : ERR_IO, "cannot "
			    "hand the home to the workspace user");
	}
	if ((r = token_new(secret, sizeof secret)) != 0)
		return errmsg_set(err, r, "cannot make a control secret");
	(void)unlink(secretp);
	fd = open(secretp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0400);
	n = strlen(secret);
	r = fd == -1 || write(fd, secret, n) != (ssize_t)n ||
	    (geteuid() == 0 && fchown(fd, DOCKER_UID, DOCKER_UID) != 0) ?
	    ERR_IO : 0;
	token_wipe(secret, sizeof secret);
	if (fd != -1 && close(fd) != 0)
		r = ERR_IO;
	if (r != 0)
		return errmsg_set(err, r, "cannot write the control secret");
	return 0;
}

static json_t *
docker_port_binding(void)
{
	return json_pack("[{s:s, s:s}]", "HostIp", "127.0.0.1", "HostPort",
	    "");
}

/* The container's spec (POST /containers/create). */
static json_t *
docker_spec(struct provider *p, const char *id, const char *name,
    const char *secretp)
{
	const struct docker_cfg	*dc = docker_cfg(p);
	char			 home[PATH_MAX + 64], sec[PATH_MAX + 64];
	char			 hp[PATH_MAX];
	json_t			*hc, *spec;

	(void)docker_path(p, id, "home", hp, sizeof hp);
	if (dc->volume)
		snprintf(home, sizeof home, "%s-home:%s", name,
		    DOCKER_WORKSPACE);
	else
		snprintf(home, sizeof home, "%s:%s", hp, DOCKER_WORKSPACE);
	snprintf(sec, sizeof sec, "%s:%s:ro", secretp, DOCKER_SECRET_PATH);
	hc = json_pack("{s:[s, s], s:s, s:[s], s:[s], s:{s:o, s:o}, s:I, "
	    "s:I, s:{s:s}, s:b}",
	    "Binds", home, sec,
	    "NetworkMode", "bridge",
	    "SecurityOpt", "no-new-privileges",
	    "CapDrop", "ALL",
	    "PortBindings", DOCKER_CONTROL_PORT, docker_port_binding(),
	    DOCKER_GATEWAY_PORT, docker_port_binding(),
	    "NanoCpus", (json_int_t)dc->nano_cpus,
	    "ShmSize", (json_int_t)DOCKER_SHM_BYTES,
	    "RestartPolicy", "Name", "no",
	    "Init", 0);
	if (dc->memory > 0)
		json_object_set_new(hc, "Memory", json_integer(dc->memory));
	if (dc->pids > 0)
		json_object_set_new(hc, "PidsLimit", json_integer(dc->pids));
	spec = json_pack("{s:s, s:s, s:{s:s, s:s, s:s}, s:{s:{}, s:{}}, "
	    "s:o}",
	    "Image", dc->image,
	    "User", "1000:1000",
	    "Labels", "rakazo.computer", id, "rakazo.instance", dc->instance,
	    "rakazo.managed", "1",
	    "ExposedPorts", DOCKER_CONTROL_PORT, DOCKER_GATEWAY_PORT,
	    "HostConfig", hc);
	json_object_set_new(spec, "Env", json_pack("[s]",
	    "GUESTD_SECRET_FILE=" DOCKER_SECRET_PATH));
	if (p->cfg.home_max_bytes != 0) {
		snprintf(hp, sizeof hp, "GUESTD_HOME_MAX_BYTES=%llu",
		    (unsigned long long)p->cfg.home_max_bytes);
		json_array_append_new(json_object_get(spec, "Env"),
		    json_string(hp));
	}
	return spec;
}

static int
docker_create(struct provider *p, const struct store_computer *c,
    const char *name, struct errmsg *err)
{
	char	 secretp[PATH_MAX], path[256];
	json_t	*spec, *reply = NULL;
	long	 st = 0;
	int	 r;

	if ((r = docker_prepare(p, c->id, secretp, sizeof secretp, err)) != 0)
		return r;
	spec = docker_spec(p, c->id, name, secretp);
	snprintf(path, sizeof path, "/containers/create?name=%s", name);
	r = docker_req(p, "POST", path, spec, &st, &reply, err);
	json_decref(spec);
	if (r == 0 && st != 201)
		r = st == 404 ? errmsg_set(err, ERR_PROVIDER, "the computer "
		    "image %s is not in the Docker engine (build image/, or "
		    "set RAKAZO_COMPUTER_IMAGE): %.200s",
		    docker_cfg(p)->image, docker_http_message(reply)) :
		    docker_refused("create the computer's container", st,
		    reply, err);
	json_decref(reply);
	return r;
}

static int
docker_post(struct provider *p, const char *name, const char *verb,
    const char *what, struct errmsg *err)
{
	char	 path[256];
	json_t	*reply = NULL;
	long	 st = 0;
	int	 r;

	snprintf(path, sizeof path, "/containers/%s/%s", name, verb);
	if ((r = docker_req(p, "POST", path, NULL, &st, &reply, err)) == 0 &&
	    st != 204 && st != 304 && !(st == 404 && strncmp(verb, "stop",
	    4) == 0))
		r = docker_refused(what, st, reply, err);
	json_decref(reply);
	return r;
}

/* Remove name (and its anonymous volumes); absent is fine. */
static int
docker_remove(struct provider *p, const char *name, struct errmsg *err)
{
	char	 path[256];
	json_t	*reply = NULL;
	long	 st = 0;
	int	 r;

	snprintf(path, sizeof path, "/containers/%s?force=1&v=1", name);
	if ((r = docker_req(p, "DELETE", path, NULL, &st, &reply, err)) == 0 &&
	    st != 204 && st != 404)
		r = docker_refused("remove a container", st, reply, err);
	json_decref(reply);
	return r;
}

/* Open the control channel until guestd answers its hello. */
static int
docker_wait_ready(struct provider *p, const struct docker_ref *ref,
    struct errmsg *err)
{
	struct gclient_opts	 o;
	struct gclient		*gc = NULL;
	char			 url[64], secret[SECRET_MAX + 1];
	int64_t			 deadline, backoff = 5;
	int			 r;

	if ((r = token_read_file(ref->secret_file, secret, sizeof secret,
	    0)) != 0)
		return errmsg_set(err, r, "cannot read the computer's secret");
	snprintf(url, sizeof url, "ws://127.0.0.1:%d", ref->port);
	memset(&o, 0, sizeof o);
	o.url = url;
	o.secret = secret;
	o.timeout_ms = 2000;
	o.ctx = p->cfg.ctx;
	o.vhost = p->cfg.vhost;
	deadline = lws_now_usecs() / 1000 + DOCKER_READY_MS;
	for (;;) {
		if ((r = gclient_connect(&gc, &o, err)) == 0)
			break;
		if (r == ERR_UNAUTHORIZED ||
		    lws_now_usecs() / 1000 + backoff >= deadline)
			break;
		(void)task_sleep(backoff);
		if (backoff < 40)
			backoff *= 2;
	}
	token_wipe(secret, sizeof secret);
	gclient_free(gc);
	if (r != 0)
		errmsg_set(err, ERR_PROVIDER, "guestd in the container did not "
		    "answer within %d ms (%s)", DOCKER_READY_MS,
		    errmsg_str(err));
	return r != 0 ? ERR_PROVIDER : 0;
}

/* Does inspect carry the labels this controller gives computer id? */
static int
docker_is_ours(struct provider *p, const char *id, json_t *inspect)
{
	json_t		*l;
	const char	*cid, *inst;

	l = json_object_get(json_object_get(inspect, "Config"), "Labels");
	cid = json_string_value(json_object_get(l, "rakazo.computer"));
	inst = json_string_value(json_object_get(l, "rakazo.instance"));
	return cid != NULL && inst != NULL && strcmp(cid, id) == 0 &&
	    strcmp(inst, docker_cfg(p)->instance) == 0;
}

static int
docker_start(struct provider *p, struct store_computer *c, struct errmsg *err)
{
	struct docker_ref	 ref;
	char			 name[128], *s = NULL;
	json_t			*j = NULL, *jref = NULL;
	int			 state, r, warm = 0;

	docker_name(p, c->id, name, sizeof name);
	if ((r = docker_inspect(p, name, &state, &j, err)) != 0)
		goto out;
	/* The name is ours; a container under it without our labels is not. */
	if (state != 0 && !docker_is_ours(p, c->id, j)) {
		r = errmsg_set(err, ERR_PROVIDER, "a container named %s exists "
		    "without this controller's labels: remove it or give this "
		    "controller another data directory", name);
		goto out;
	}
	if (state == 2) {
		/* Ours, stopped (an engine restart, a kill): start again. */
		warm = 1;
		if ((r = docker_post(p, name, "start", "start the computer's "
		    "container", err)) != 0) {
			/* Unusable (its image or mounts are gone): anew. */
			if ((r = docker_remove(p, name, err)) != 0)
				goto out;
			state = 0;
			warm = 0;
		}
	}
	if (state == 0) {
		if ((r = docker_create(p, c, name, err)) != 0 ||
		    (r = docker_post(p, name, "start", "start the computer's "
		    "container", err)) != 0)
			goto out;
	}
	json_decref(j);
	if ((r = docker_inspect(p, name, &state, &j, err)) != 0)
		goto out;
	memset(&ref, 0, sizeof ref);
	snprintf(ref.container, sizeof ref.container, "%s",
	    json_string_value(json_object_get(j, "Id")) ?: "");
	ref.port = docker_host_port(j, DOCKER_CONTROL_PORT);
	ref.gateway_port = docker_host_port(j, DOCKER_GATEWAY_PORT);
	(void)docker_path(p, c->id, "secret", ref.secret_file,
	    sizeof ref.secret_file);
	if (state != 1 || ref.container[0] == '\0' || ref.port <= 0 ||
	    ref.gateway_port <= 0) {
		r = errmsg_set(err, ERR_PROVIDER, "the computer's container "
		    "%s stopped at once or published no ports (see docker "
		    "logs %s)", name, name);
		goto out;
	}
	if ((r = docker_wait_ready(p, &ref, err)) != 0)
		goto out;
	jref = json_pack("{s:s, s:i, s:i, s:s}", "container", ref.container,
	    "port", ref.port, "gateway_port", ref.gateway_port,
	    "secret_file", ref.secret_file);
	if (jref == NULL || (s = json_dumps(jref, JSON_COMPACT)) == NULL ||
	    strlen(s) >= sizeof c->ref) {
		r = errmsg_set(err, ERR_INTERNAL, "the container's reference "
		    "does not fit");
		goto out;
	}
	snprintf(c->ref, sizeof c->ref, "%s", s);
	log_info("docker.started", "computer=%s container=%.12s port=%d "
	    "gateway=%d warm=%d", c->id, ref.container, ref.port,
	    ref.gateway_port, warm);
	r = 0;
out:
	free(s);
	json_decref(jref);
	json_decref(j);
	return r;
}

static int
docker_stop(struct provider *p, struct store_computer *c)
{
	char		 name[128], path[64];
	struct errmsg	 err;
	int		 r;

	docker_name(p, c->id, name, sizeof name);
	snprintf(path, sizeof path, "stop?t=%d", DOCKER_STOP_S);
	/* The home stays (bind directory or volume); the machine goes. */
	if ((r = docker_post(p, name, path, "stop the computer's container",
	    &err)) == 0)
		r = docker_remove(p, name, &err);
	if (r != 0)
		log_warn("docker.stop", "computer=%s %s", c->id,
		    errmsg_str(&err));
	return r;
}

static int
docker_destroy(struct provider *p, struct store_computer *c)
{
	char		 name[128], path[256], dir[PATH_MAX];
	struct errmsg	 err;
	json_t		*reply = NULL;
	long		 st = 0;
	int		 r;

	docker_name(p, c->id, name, sizeof name);
	if ((r = docker_remove(p, name, &err)) != 0) {
		log_warn("docker.destroy", "computer=%s %s", c->id,
		    errmsg_str(&err));
		return r;
	}
	if (docker_cfg(p)->volume) {
		snprintf(path, sizeof path, "/volumes/%s-home?force=1", name);
		if ((r = docker_req(p, "DELETE", path, NULL, &st, &reply,
		    &err)) == 0 && st != 204 && st != 404)
			r = docker_refused("remove the home volume", st, reply,
			    &err);
		json_decref(reply);
		if (r != 0) {
			log_warn("docker.destroy", "computer=%s %s", c->id,
			    errmsg_str(&err));
			return r;
		}
	}
	if (docker_path(p, c->id, NULL, dir, sizeof dir) != 0)
		return ERR_NAME_TOO_LONG;
	return provider_rmtree(dir);
}

static int
docker_endpoint(struct provider *p, const struct store_computer *c,
    struct provider_endpoint *ep, struct errmsg *err)
{
	struct docker_ref	 ref;
	int			 r;

	if (docker_ref_parse(c, &ref) != 0)
		return errmsg_set(err, ERR_CONNECT, "the computer is not "
		    "running");
	if ((r = token_read_file(ref.secret_file, ep->secret,
	    sizeof ep->secret, 0)) != 0)
		return errmsg_set(err, r, "cannot read the computer's secret");
	snprintf(ep->control_url, sizeof ep->control_url,
	    "ws://127.0.0.1:%d", ref.port);
	snprintf(ep->gateway, sizeof ep->gateway, "127.0.0.1:%d",
	    ref.gateway_port);
	snprintf(ep->workspace, sizeof ep->workspace, "%s", DOCKER_WORKSPACE);
	return 0;
}

const struct provider_ops provider_docker_ops = {
	.name = "docker",
	.init = docker_init,
	.free = docker_free,
	.isolation = docker_isolation,
	.check = docker_check,
	.start = docker_start,
	.alive = docker_alive,
	.stop = docker_stop,
	.destroy = docker_destroy,
	.endpoint = docker_endpoint,
};

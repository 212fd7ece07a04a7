/* SPDX-License-Identifier: MIT */
/*
 * SANDBOX_PROVIDER=kubernetes (P-2, P-3): each computer is a pod of the
 * computer image (KUBERNETES_SANDBOX_COMPUTER_IMAGE, image/), made and
 * watched through the Kubernetes REST API (k8s.h, libcurl on the serve
 * loop), with in-cluster or kubeconfig credentials (kubeconfig.h).
 * Lifecycle only: guest.h talks to the guestd in the pod on the pod's IP.
 *
 * The pod (kube_pod_spec): uid and gid 1000, runAsNonRoot, no
 * privilege escalation, every capability dropped, the runtime default
 * seccomp profile, no service-account token and no service links,
 * restartPolicy Never (a computer that dies is replaced and restored,
 * never restarted half-way), CPU and memory limits, the runtime class,
 * labels app.kubernetes.io/name=rakazo-computer, rakazo-bot-id and
 * rakazo-computer-id plus KUBERNETES_SANDBOX_POD_LABELS, and
 * KUBERNETES_SANDBOX_POD_ANNOTATIONS.  Its name is a function of the
 * computer id alone, so two controllers name the same pod, never a
 * second computer; its rakazo.dev/store annotation (a hash of the state
 * store, no password) tells them apart: a create that meets a live pod
 * of our store adopts it (another replica's start, or ours whose record
 * a crash lost), one of another store is the API's 409, reported as
 * KUBERNETES_ALREADY_EXISTS.  A stop deletes only the uid it started.
 *
 * The control secret is a Secret named as the pod, owned by it (the
 * garbage collector removes it with the pod, evicted or deleted).  It is
 * mounted read-only; Kubernetes makes secret files group-readable for
 * the pod's fsGroup, which guestd refuses for a secret, so an init
 * container copies it (umask 077) into a memory-backed volume that
 * guestd reads.  Never the environment, the command line or a label.
 *
 * The home: an emptyDir, or with KUBERNETES_SANDBOX_HOME_CLAIM a
 * subPath of that PersistentVolumeClaim per computer, with a pod
 * affinity that puts every pod of the claim on one node (a
 * ReadWriteOnce volume is attached to one node at a time).  Saved work
 * lives in the home store either way (C-8): a pod that goes is replaced
 * and restored.
 *
 * Readiness: the pod's Ready condition (a TCP readiness probe on the
 * control port) followed through a watch from the create's
 * resourceVersion, resumed from the last seen version when the server
 * ends it, listed again when that version expired (410): no polling.
 *
 * alive(): 1 running, 0 gone (404, deleted, failed, evicted, another
 * pod under the name), < 0 when the API cannot be asked (network,
 * 401/403, 5xx): "cannot tell" never lets the caller replace a computer
 * (C-13).
 */
#include "autoconf.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "base64.h"
#include "err.h"
#include "k8s.h"
#include "kubeconfig.h"
#include "log.h"
#include "provider.h"
#include "queue-compat.h"
#include "task.h"
#include "token.h"
#include "xmalloc.h"

#define KUBE_API_MS		30000
#define KUBE_READY_MS_DEFAULT	120000
#define KUBE_CONTROL_PORT	7000
#define KUBE_GATEWAY_PORT	6080
#define KUBE_UID		1000
#define KUBE_WORKSPACE		"/home/user/rakazo-home"
#define KUBE_SECRET_SRC		"/run/rakazo/secret-src"
#define KUBE_SECRET_DIR		"/run/secrets/rakazo"
#define KUBE_SECRET_KEY		"guestd"
#define KUBE_APP_LABEL		"rakazo-computer"
#define KUBE_NAME_MAX		64
#define KUBE_WATCH_BACKOFF_MS	1000

/* The secret of a pod this controller started, so endpoint() needs no GET. */
struct kube_secret {
	char			 id[STORE_ID_MAX];
	char			 uid[64];
	char			 secret[SECRET_MAX + 1];
	LIST_ENTRY(kube_secret)	 entry;
};

struct kube {
	struct k8s	*api;
	char		 ns[KUBE_NAME_MAX];
	char		 image[512];
	char		*runtime_class;
	char		*cpu;
	char		*memory;
	char		*claim;
	json_t		*labels;
	json_t		*annotations;
	int64_t		 ready_ms;
	char		 store[17];	/* provider_config.store_id */
	LIST_HEAD(, kube_secret) secrets;
};

/* What a pod says of itself. */
struct kube_podst {
	int	 found;
	int	 ready;
	int	 deleting;
	int	 ours;
	char	 uid[64];
	char	 rv[64];
	char	 phase[32];
	char	 reason[64];
	char	 ip[64];
	char	 store[17];	/* its rakazo.dev/store annotation */
};

/* The computer's reference (store row). */
struct kube_ref {
	char	 pod[KUBE_NAME_MAX];
	char	 uid[64];
	char	 ip[64];
	int	 port;
	int	 gateway_port;
};

static int	kube_secret_get(struct provider *, const char *, char *, size_t,
		    struct errmsg *);

static struct kube *
kube(struct provider *p)
{
	return p->impl;
}

/* ---- settings ----------------------------------------------------------- */

/* A DNS-1123 label: [a-z0-9-], alphanumeric at both ends, <= 63. */
static int
kube_dns_label(const char *s)
{
	size_t	 n = strlen(s);

	return n > 0 && n <= 63 && strspn(s, "abcdefghijklmnopqrstuvwxyz"
	    "0123456789-") == n && s[0] != '-' && s[n - 1] != '-';
}

/* [A-Za-z0-9._-], alphanumeric at both ends, 1..max (0 when may_empty). */
static int
kube_label_word(const char *s, size_t n, size_t max, int may_empty)
{
	size_t	 i;

	if (n == 0)
		return may_empty;
	if (n > max || !isalnum((unsigned char)s[0]) ||
	    !isalnum((unsigned char)s[n - 1]))
		return 0;
	for (i = 0; i < n; i++)
		if (!isalnum((unsigned char)s[i]) && s[i] != '-' &&
		    s[i] != '_' && s[i] != '.')
			return 0;
	return 1;
}

/* A label or annotation key: [DNS-subdomain-prefix/]name. */
static int
kube_label_key(const char *k)
{
	const char	*slash = strchr(k, '/');
	size_t		 i, n;

	if (slash == NULL)
		return kube_label_word(k, strlen(k), 63, 0);
	n = (size_t)(slash - k);
	if (n == 0 || n > 253)
		return 0;
	for (i = 0; i < n; i++)
		if (!(islower((unsigned char)k[i]) ||
		    isdigit((unsigned char)k[i]) || k[i] == '-' || k[i] == '.'))
			return 0;
	return kube_label_word(slash + 1, strlen(slash + 1), 63, 0);
}

/* A JSON object of strings (labels, annotations); NULL/"": empty. */
static int
kube_json_map(const char *what, const char *s, int labels, json_t **out,
    struct errmsg *e)
{
	json_error_t	 je;
	const char	*k;
	json_t		*j, *v;
	int		 r = 0;

	*out = NULL;
	if (s == NULL || *s == '\0') {
		*out = json_object();
		return 0;
	}
	if (strlen(s) > 65536)
		return errmsg_set(e, ERR_CONFIG, "%s is longer than 64 KiB",
		    what);
	if ((j = json_loads(s, JSON_REJECT_DUPLICATES, &je)) == NULL)
		return errmsg_set(e, ERR_CONFIG, "%s is not valid JSON (%.80s "
		    "at column %d)", what, je.text, je.column);
	if (!json_is_object(j)) {
		json_decref(j);
		return errmsg_set(e, ERR_CONFIG, "%s must be a JSON object of "
		    "strings", what);
	}
	/* The sentence quotes k, which j owns: made before j goes. */
	json_object_foreach(j, k, v) {
		if (!json_is_string(v))
			r = errmsg_set(e, ERR_CONFIG, "%s: the value of "
			    "\"%.60s\" must be a string", what, k);
		/* What the API would refuse at the first pod, refused now. */
		else if (!kube_label_key(k) || (labels && !kube_label_word(
		    json_string_value(v), json_string_length(v), 63, 1)))
			r = errmsg_set(e, ERR_CONFIG, "%s: \"%.60s\" is not "
			    "a valid %s", what, k, labels ? "label (key: "
			    "[prefix/]name, value: up to 63 of A-Z a-z 0-9 - _ "
			    ".)" : "annotation key");
		if (r != 0) {
			json_decref(j);
			return r;
		}
	}
	*out = j;
	return 0;
}

static int
kube_credentials(struct provider *p, struct kubeconfig *kc,
    struct errmsg *e)
{
	const char	*path = p->cfg.kubeconfig;
	char		 first[4096];

	if (path != NULL && *path != '\0') {
		/* KUBECONFIG may list files: the first one is read. */
		snprintf(first, sizeof first, "%s", path);
		first[strcspn(first, ":")] = '\0';
		return kubeconfig_load(first, kc, e);
	}
	return kubeconfig_incluster(NULL, kc, e);
}

static int
kube_init(struct provider *p, struct errmsg *e)
{
	const struct provider_config	*pc = &p->cfg;
	struct kubeconfig		 kc;
	struct kube			*k;
	const char			*ns;
	int				 r;

	k = xcalloc(1, sizeof *k);
	LIST_INIT(&k->secrets);
	p->impl = k;
	k->ready_ms = pc->k8s_ready_ms > 0 ? pc->k8s_ready_ms :
	    KUBE_READY_MS_DEFAULT;
	if ((r = kube_json_map("KUBERNETES_SANDBOX_POD_LABELS", pc->k8s_labels,
	    1, &k->labels, e)) != 0 || (r = kube_json_map(
	    "KUBERNETES_SANDBOX_POD_ANNOTATIONS", pc->k8s_annotations, 0,
	    &k->annotations, e)) != 0)
		return r;
	if (pc->k8s_image == NULL || *pc->k8s_image == '\0' ||
	    strpbrk(pc->k8s_image, " \t\r\n\"") != NULL ||
	    strlen(pc->k8s_image) >= sizeof k->image)
		return errmsg_set(e, ERR_CONFIG, "KUBERNETES_SANDBOX_COMPUTER_"
		    "IMAGE names no image");
	snprintf(k->image, sizeof k->image, "%s", pc->k8s_image);
	if (pc->k8s_runtime_class != NULL && *pc->k8s_runtime_class != '\0')
		k->runtime_class = xstrdup(pc->k8s_runtime_class);
	if (pc->k8s_cpu != NULL && *pc->k8s_cpu != '\0')
		k->cpu = xstrdup(pc->k8s_cpu);
	if (pc->k8s_memory != NULL && *pc->k8s_memory != '\0')
		k->memory = xstrdup(pc->k8s_memory);
	if (pc->k8s_home_claim != NULL && *pc->k8s_home_claim != '\0') {
		if (!kube_dns_label(pc->k8s_home_claim))
			return errmsg_set(e, ERR_CONFIG, "KUBERNETES_SANDBOX_"
			    "HOME_CLAIM is not a claim name");
		k->claim = xstrdup(pc->k8s_home_claim);
	}
	if (pc->curl == NULL)
		return errmsg_set(e, ERR_INTERNAL, "no HTTP loop");
	if ((r = kube_credentials(p, &kc, e)) != 0)
		return r == ERR_NOT_FOUND ? errmsg_set(e, ERR_CONFIG, "%s",
		    errmsg_str(e)) : r;
	ns = pc->k8s_namespace != NULL && *pc->k8s_namespace != '\0' ?
	    pc->k8s_namespace : kc.namespace != NULL ? kc.namespace :
	    "default";
	if (!kube_dns_label(ns)) {
		kubeconfig_release(&kc);
		return errmsg_set(e, ERR_CONFIG, "KUBERNETES_SANDBOX_NAMESPACE "
		    "is not a namespace name");
	}
	snprintf(k->ns, sizeof k->ns, "%s", ns);
	snprintf(k->store, sizeof k->store, "%s", pc->store_id != NULL ?
	    pc->store_id : "");
	return k8s_new(&k->api, pc->curl, &kc, e);
}

static void
kube_free(struct provider *p)
{
	struct kube		*k = p->impl;
	struct kube_secret	*s;

	if (k == NULL)
		return;
	while ((s = LIST_FIRST(&k->secrets)) != NULL) {
		LIST_REMOVE(s, entry);
		token_wipe(s, sizeof *s);
		free(s);
	}
	k8s_free(k->api);
	free(k->runtime_class);
	free(k->cpu);
	free(k->memory);
	free(k->claim);
	json_decref(k->labels);
	json_decref(k->annotations);
	free(k);
	p->impl = NULL;
}

static const char *
kube_isolation(struct provider *p)
{
	(void)p;
	return "container";
}

/* ---- names, references, secrets ---------------------------------------- */

/* rakazo-<id, lowercased, [a-z0-9-]>-<8 hex of the id>: one per id. */
static void
kube_pod_name(const char *id, char *out, size_t len)
{
	uint32_t	 h = 2166136261u;
	char		 base[41];
	size_t		 i, n = 0;

	for (i = 0; id[i] != '\0'; i++) {
		h ^= (unsigned char)id[i];
		h *= 16777619u;
		if (n + 1 < sizeof base)
			base[n++] = (id[i] >= 'A' && id[i] <= 'Z') ?
			    (char)(id[i] - 'A' + 'a') :
			    ((id[i] >= 'a' && id[i] <= 'z') ||
			    (id[i] >= '0' && id[i] <= '9')) ? id[i] : '-';
	}
	base[n] = '\0';
	snprintf(out, len, "rakazo-%s-%08x", base, h);
}

static int
kube_ref_parse(const struct store_computer *c, struct kube_ref *ref)
{
	const char	*pod = NULL, *uid = NULL, *ip = NULL;
	json_int_t	 port = 0, gw = 0;
	json_t		*j;
	int		 r = ERR_NOT_FOUND;

	memset(ref, 0, sizeof *ref);
	if ((j = json_loads(c->ref, 0, NULL)) == NULL)
		return ERR_NOT_FOUND;
	if (json_unpack(j, "{s:s, s:s, s:s, s:I, s:I}", "pod", &pod, "uid",
	    &uid, "ip", &ip, "port", &port, "gateway_port", &gw) == 0 &&
	    strlen(pod) < sizeof ref->pod && strlen(uid) < sizeof ref->uid &&
	    strlen(ip) < sizeof ref->ip && strspn(ip, "0123456789abcdef.:") ==
	    strlen(ip) && port > 0 && port < 65536 && gw > 0 && gw < 65536) {
		snprintf(ref->pod, sizeof ref->pod, "%s", pod);
		snprintf(ref->uid, sizeof ref->uid, "%s", uid);
		snprintf(ref->ip, sizeof ref->ip, "%s", ip);
		ref->port = (int)port;
		ref->gateway_port = (int)gw;
		r = 0;
	}
	json_decref(j);
	return r;
}

static struct kube_secret *
kube_secret_find(struct kube *k, const char *id)
{
	struct kube_secret	*s;

	LIST_FOREACH(s, &k->secrets, entry)
		if (strcmp(s->id, id) == 0)
			return s;
	return NULL;
}

static void
kube_secret_forget(struct kube *k, const char *id)
{
	struct kube_secret	*s;

	if ((s = kube_secret_find(k, id)) == NULL)
		return;
	LIST_REMOVE(s, entry);
	token_wipe(s, sizeof *s);
	free(s);
}

static void
kube_secret_keep(struct kube *k, const char *id, const char *uid,
    const char *secret)
{
	struct kube_secret	*s;

	kube_secret_forget(k, id);
	s = xcalloc(1, sizeof *s);
	snprintf(s->id, sizeof s->id, "%s", id);
	snprintf(s->uid, sizeof s->uid, "%s", uid);
	snprintf(s->secret, sizeof s->secret, "%s", secret);
	LIST_INSERT_HEAD(&k->secrets, s, entry);
}

/* ---- API calls ----------------------------------------------------------- */

static int
kube_req(struct provider *p, const char *method, const char *path,
    json_t *body, long *st, json_t **reply, struct errmsg *e)
{
	return k8s_request(kube(p)->api, method, path, body, KUBE_API_MS, st,
	    reply, e);
}

static void
kube_path(struct provider *p, const char *kind, const char *name,
    char *out, size_t len)
{
	snprintf(out, len, "/api/v1/namespaces/%s/%s%s%s", kube(p)->ns, kind,
	    name != NULL ? "/" : "", name != NULL ? name : "");
}

static void
kube_podst_read(json_t *pod, const char *id, struct kube_podst *st)
{
	json_t		*md, *status, *cond, *labels;
	const char	*s, *app;
	char		 want[64];
	size_t		 i;

	memset(st, 0, sizeof *st);
	if (!json_is_object(pod))
		return;
	st->found = 1;
	md = json_object_get(pod, "metadata");
	status = json_object_get(pod, "status");
	labels = json_object_get(md, "labels");
	snprintf(st->uid, sizeof st->uid, "%s",
	    json_string_value(json_object_get(md, "uid")) ?: "");
	snprintf(st->rv, sizeof st->rv, "%s",
	    json_string_value(json_object_get(md, "resourceVersion")) ?: "");
	st->deleting = json_object_get(md, "deletionTimestamp") != NULL &&
	    !json_is_null(json_object_get(md, "deletionTimestamp"));
	snprintf(st->phase, sizeof st->phase, "%s",
	    json_string_value(json_object_get(status, "phase")) ?: "Pending");
	snprintf(st->reason, sizeof st->reason, "%s",
	    json_string_value(json_object_get(status, "reason")) ?: "");
	snprintf(st->ip, sizeof st->ip, "%s",
	    json_string_value(json_object_get(status, "podIP")) ?: "");
	snprintf(st->store, sizeof st->store, "%s",
	    json_string_value(json_object_get(json_object_get(md,
	    "annotations"), "rakazo.dev/store")) ?: "");
	json_array_foreach(json_object_get(status, "conditions"), i, cond) {
		s = json_string_value(json_object_get(cond, "type"));
		if (s != NULL && strcmp(s, "Ready") == 0)
			st->ready = (s = json_string_value(json_object_get(cond,
			    "status"))) != NULL && strcmp(s, "True") == 0;
	}
	/* Ours: the app label and this computer's id label. */
	s = json_string_value(json_object_get(labels, "rakazo-computer-id"));
	if (s == NULL || id == NULL || (app = json_string_value(
	    json_object_get(labels, "app.kubernetes.io/name"))) == NULL ||
	    strcmp(app, KUBE_APP_LABEL) != 0)
		return;
	k8s_label_value(id, want, sizeof want);
	st->ours = strcmp(s, want) == 0;
}

static int
kube_terminal(const struct kube_podst *st)
{
	return strcmp(st->phase, "Failed") == 0 ||
	    strcmp(st->phase, "Succeeded") == 0;
}

/* GET the pod; st->found 0 on 404.  0 or ERR_* (e). */
static int
kube_pod_get(struct provider *p, const char *name, const char *id,
    struct kube_podst *st, struct errmsg *e)
{
	char	 path[256];
	json_t	*j = NULL;
	long	 code = 0;
	int	 r;

	memset(st, 0, sizeof *st);
	kube_path(p, "pods", name, path, sizeof path);
	if ((r = kube_req(p, "GET", path, NULL, &code, &j, e)) != 0)
		return r;
	if (code == 200)
		kube_podst_read(j, id, st);
	else if (code != 404)
		r = k8s_status_error(code, j, "read the computer's pod", e);
	json_decref(j);
	return r;
}

/*
 * The pod through a list of one: the list's resourceVersion is the
 * store's now, never older than a compaction, so a watch from it is not
 * refused as expired (an object's own version may be).
 */
static int
kube_pod_list(struct provider *p, const char *name, const char *id,
    struct kube_podst *st, struct errmsg *e)
{
	char		 path[256];
	const char	*rv;
	json_t		*j = NULL, *items;
	long		 code = 0;
	int		 r;

	memset(st, 0, sizeof *st);
	snprintf(path, sizeof path, "/api/v1/namespaces/%s/pods?"
	    "fieldSelector=metadata.name%%3D%s", kube(p)->ns, name);
	if ((r = kube_req(p, "GET", path, NULL, &code, &j, e)) != 0)
		return r;
	if (code != 200) {
		r = k8s_status_error(code, j, "list the computer's pod", e);
		json_decref(j);
		return r;
	}
	items = json_object_get(j, "items");
	if (json_array_size(items) > 0)
		kube_podst_read(json_array_get(items, 0), id, st);
	rv = json_string_value(json_object_get(json_object_get(j,
	    "metadata"), "resourceVersion"));
	if (st->found && rv != NULL)
		snprintf(st->rv, sizeof st->rv, "%s", rv);
	json_decref(j);
	return 0;
}

/*
 * DELETE kind/name; absent is fine.  With uid, only that object: the
 * API refuses (409, ERR_K8S_CONFLICT) when the name is another one's
 * now, so a stop never deletes a pod this controller did not start.
 */
static int
kube_delete(struct provider *p, const char *kind, const char *name,
    const char *uid, struct errmsg *e)
{
	char	 path[256], what[64];
	json_t	*j = NULL, *opts = NULL;
	long	 code = 0;
	int	 r;

	kube_path(p, kind, name, path, sizeof path);
	if (uid != NULL && *uid != '\0')
		opts = json_pack("{s:s, s:s, s:{s:s}}", "apiVersion", "v1",
		    "kind", "DeleteOptions", "preconditions", "uid", uid);
	r = kube_req(p, "DELETE", path, opts, &code, &j, e);
	json_decref(opts);
	if (r == 0 && code != 200 && code != 202 && code != 404) {
		snprintf(what, sizeof what, "delete the computer's %s",
		    strcmp(kind, "pods") == 0 ? "pod" : "secret");
		r = k8s_status_error(code, j, what, e);
	}
	json_decref(j);
	return r;
}

/* ---- the pod ---------------------------------------------------------- */

static json_t *
kube_labels(struct provider *p, const char *id)
{
	struct kube	*k = kube(p);
	char		 v[64];
	json_t		*l;

	l = json_deep_copy(k->labels);
	k8s_label_value(id, v, sizeof v);
	json_object_set_new(l, "app.kubernetes.io/name",
	    json_string(KUBE_APP_LABEL));
	json_object_set_new(l, "app.kubernetes.io/managed-by",
	    json_string("rakazoctl"));
	/* A computer is its bot's desktop: the bot names it. */
	json_object_set_new(l, "rakazo-bot-id", json_string(v));
	json_object_set_new(l, "rakazo-computer-id", json_string(v));
	if (k->claim != NULL)
		json_object_set_new(l, "rakazo-home-claim",
		    json_string(k->claim));
	return l;
}

static json_t *
kube_security(void)
{
	return json_pack("{s:b, s:{s:[s]}, s:b, s:i, s:i}",
	    "allowPrivilegeEscalation", 0,
	    "capabilities", "drop", "ALL",
	    "runAsNonRoot", 1,
	    "runAsUser", KUBE_UID,
	    "runAsGroup", KUBE_UID);
}

static json_t *
kube_resources(struct provider *p)
{
	struct kube	*k = kube(p);
	json_t		*lim = json_object();

	if (k->cpu != NULL)
		json_object_set_new(lim, "cpu", json_string(k->cpu));
	if (k->memory != NULL)
		json_object_set_new(lim, "memory", json_string(k->memory));
	json_t		*r;

	/* Requests equal to limits: the scheduler reserves what may be used. */
	r = json_pack("{s:O, s:O}", "limits", lim, "requests", lim);
	json_decref(lim);
	return r;
}

static json_t *
kube_home_volume(struct provider *p)
{
	struct kube	*k = kube(p);

	if (k->claim != NULL)
		return json_pack("{s:s, s:{s:s}}", "name", "home",
		    "persistentVolumeClaim", "claimName", k->claim);
	return json_pack("{s:s, s:{}}", "name", "home", "emptyDir");
}

/* Every pod of the claim on one node: a ReadWriteOnce volume follows. */
static json_t *
kube_affinity(struct provider *p)
{
	return json_pack("{s:{s:[{s:{s:{s:s}}, s:s}]}}",
	    "podAffinity", "requiredDuringSchedulingIgnoredDuringExecution",
	    "labelSelector", "matchLabels", "rakazo-home-claim",
	    kube(p)->claim, "topologyKey", "kubernetes.io/hostname");
}

static json_t *
kube_containers(struct provider *p, const char *id)
{
	char	 home_sub[64], cap[24];
	json_t	*guestd, *mounts;

	k8s_label_value(id, home_sub, sizeof home_sub);
	mounts = json_pack("[{s:s, s:s, s:b}, {s:s, s:s}, {s:s, s:s}]",
	    "name", "secret", "mountPath", KUBE_SECRET_DIR, "readOnly", 1,
	    "name", "home", "mountPath", KUBE_WORKSPACE,
	    "name", "shm", "mountPath", "/dev/shm");
	if (kube(p)->claim != NULL)
		json_object_set_new(json_array_get(mounts, 1), "subPath",
		    json_string(home_sub));
	guestd = json_pack("{s:s, s:s, s:s, s:[s, s, s, s, s, s, s, s], "
	    "s:[{s:s, s:i, s:s}, {s:s, s:i, s:s}], s:[{s:s, s:s}], s:o, "
	    "s:o, s:o, s:{s:{s:s}, s:i, s:i}}",
	    "name", "guestd",
	    "image", kube(p)->image,
	    "imagePullPolicy", "IfNotPresent",
	    "args", "--listen", "0.0.0.0:7000", "--gateway", "0.0.0.0:6080",
	    "--secret-file", KUBE_SECRET_DIR "/" KUBE_SECRET_KEY,
	    "--workspace", KUBE_WORKSPACE,
	    "ports", "name", "control", "containerPort", KUBE_CONTROL_PORT,
	    "protocol", "TCP", "name", "gateway", "containerPort",
	    KUBE_GATEWAY_PORT, "protocol", "TCP",
	    "env", "name", "GUESTD_SECRET_FILE", "value",
	    KUBE_SECRET_DIR "/" KUBE_SECRET_KEY,
	    "securityContext", kube_security(),
	    "resources", kube_resources(p),
	    "volumeMounts", mounts,
	    "readinessProbe", "tcpSocket", "port", "control",
	    "periodSeconds", 1, "failureThreshold", 3);
	/* The home size cap (HOME_MAX_BYTES). */
	if (guestd != NULL && p->cfg.home_max_bytes != 0) {
		snprintf(cap, sizeof cap, "%llu",
		    (unsigned long long)p->cfg.home_max_bytes);
		json_array_append_new(json_object_get(guestd, "env"),
		    json_pack("{s:s, s:s}", "name", "GUESTD_HOME_MAX_BYTES",
		    "value", cap));
	}
	return json_pack("[o]", guestd);
}

/* Copies the Secret's file, group-readable by fsGroup, to guestd's 0400. */
static json_t *
kube_init_containers(struct provider *p)
{
	return json_pack("[{s:s, s:s, s:s, s:[s, s, s], s:o, s:o, "
	    "s:[{s:s, s:s, s:b}, {s:s, s:s}]}]",
	    "name", "secret",
	    "image", kube(p)->image,
	    "imagePullPolicy", "IfNotPresent",
	    "command", "/bin/sh", "-c", "umask 077 && cp " KUBE_SECRET_SRC
	    "/" KUBE_SECRET_KEY " " KUBE_SECRET_DIR "/" KUBE_SECRET_KEY,
	    "securityContext", kube_security(),
	    "resources", kube_resources(p),
	    "volumeMounts", "name", "secret-src", "mountPath", KUBE_SECRET_SRC,
	    "readOnly", 1, "name", "secret", "mountPath", KUBE_SECRET_DIR);
}

static json_t *
kube_pod_spec(struct provider *p, const char *id, const char *name)
{
	struct kube	*k = kube(p);
	json_t		*spec, *pod, *ann;

	ann = json_deep_copy(k->annotations);
	json_object_set_new(ann, "rakazo.dev/computer", json_string(id));
	json_object_set_new(ann, "rakazo.dev/store", json_string(k->store));
	spec = json_pack("{s:b, s:b, s:s, s:i, s:{s:b, s:i, s:i, s:i, "
	    "s:{s:s}}, s:o, s:o, s:[{s:s, s:{s:s, s:i}}, {s:s, s:{s:s, "
	    "s:s}}, o, {s:s, s:{s:s, s:s}}]}",
	    "automountServiceAccountToken", 0,
	    "enableServiceLinks", 0,
	    "restartPolicy", "Never",
	    "terminationGracePeriodSeconds", 10,
	    "securityContext", "runAsNonRoot", 1, "runAsUser", KUBE_UID,
	    "runAsGroup", KUBE_UID, "fsGroup", KUBE_UID,
	    "seccompProfile", "type", "RuntimeDefault",
	    "initContainers", kube_init_containers(p),
	    "containers", kube_containers(p, id),
	    "volumes",
	    "name", "secret-src", "secret", "secretName", name, "defaultMode",
	    0440,
	    "name", "secret", "emptyDir", "medium", "Memory", "sizeLimit",
	    "1Mi",
	    kube_home_volume(p),
	    "name", "shm", "emptyDir", "medium", "Memory", "sizeLimit",
	    "256Mi");
	if (k->runtime_class != NULL)
		json_object_set_new(spec, "runtimeClassName",
		    json_string(k->runtime_class));
	if (k->claim != NULL)
		json_object_set_new(spec, "affinity", kube_affinity(p));
	pod = json_pack("{s:s, s:s, s:{s:s, s:s, s:o, s:o}, s:o}",
	    "apiVersion", "v1", "kind", "Pod",
	    "metadata", "name", name, "namespace", k->ns,
	    "labels", kube_labels(p, id), "annotations", ann,
	    "spec", spec);
	if (pod == NULL)
		fatal("kube_pod_spec: json_pack");
	return pod;
}

/* The Secret, owned by the pod (uid) so it goes with it. */
static json_t *
kube_secret_spec(struct provider *p, const char *id, const char *name,
    const char *uid, const char *secret)
{
	char	*b64;
	json_t	*j;

	b64 = base64_encode_new(secret, strlen(secret));
	j = json_pack("{s:s, s:s, s:s, s:{s:s, s:s, s:o, s:[{s:s, s:s, "
	    "s:s, s:s, s:b}]}, s:{s:s}, s:b}",
	    "apiVersion", "v1", "kind", "Secret", "type", "Opaque",
	    "metadata", "name", name, "namespace", kube(p)->ns,
	    "labels", kube_labels(p, id),
	    "ownerReferences", "apiVersion", "v1", "kind", "Pod", "name", name,
	    "uid", uid, "blockOwnerDeletion", 0,
	    "data", KUBE_SECRET_KEY, b64,
	    "immutable", 1);
	explicit_bzero(b64, strlen(b64));
	free(b64);
	if (j == NULL)
		fatal("kube_secret_spec: json_pack");
	return j;
}

/* ---- readiness -------------------------------------------------------- */

struct kube_wait {
	const char		*id;
	struct kube_podst	 st;
	int			 want_gone;	/* wait for DELETED only */
	int			 gone;
	int			 expired;
};

static int
kube_decided(const struct kube_wait *w)
{
	if (w->want_gone)
		return w->gone;
	return w->gone || w->st.deleting || kube_terminal(&w->st) ||
	    (w->st.ready && w->st.ip[0] != '\0');
}

/* A watch event (on the loop): wake the task when the pod is decided. */
static int
kube_wait_event(void *arg, const char *type, json_t *obj)
{
	struct kube_wait	*w = arg;
	const char		*rv;
	json_int_t		 code;

	if (strcmp(type, "ERROR") == 0) {
		code = json_integer_value(json_object_get(obj, "code"));
		w->expired = code == 410;
		return 1;
	}
	if (strcmp(type, "BOOKMARK") == 0) {
		rv = json_string_value(json_object_get(json_object_get(obj,
		    "metadata"), "resourceVersion"));
		if (rv != NULL)
			snprintf(w->st.rv, sizeof w->st.rv, "%s", rv);
		return 0;
	}
	if (strcmp(type, "DELETED") == 0) {
		w->gone = 1;
		return 1;
	}
	kube_podst_read(obj, w->id, &w->st);
	return kube_decided(w);
}

/* One watch from w->st.rv until decided, ended or the deadline. */
static int
kube_watch_once(struct provider *p, const char *name, struct kube_wait *w,
    int64_t deadline, int *events, struct errmsg *e)
{
	struct k8s_watch	 kw;
	char			 path[512];
	int64_t			 left;
	int			 ended = 0, r;

	left = deadline - lws_now_usecs() / 1000;
	snprintf(path, sizeof path, "/api/v1/namespaces/%s/pods?watch=1&"
	    "fieldSelector=metadata.name%%3D%s&resourceVersion=%s&"
	    "allowWatchBookmarks=true&timeoutSeconds=%lld", kube(p)->ns, name,
	    w->st.rv, (long long)(left / 1000 + 1));
	if ((r = k8s_watch_start(kube(p)->api, &kw, path, kube_wait_event, w,
	    e)) != 0)
		return r;
	while (!kube_decided(w) && !w->expired && !ended) {
		left = deadline - lws_now_usecs() / 1000;
		if (left <= 0) {
			r = ERR_TIMEOUT;
			break;
		}
		if ((r = k8s_watch_wait(&kw, left, &ended, e)) != 0)
			break;
	}
	*events = kw.events;
	if (r == 0 && ended && kw.status != 200 && !kube_decided(w)) {
		if (kw.status == 410)
			w->expired = 1;
		else if (kw.status != 0)
			r = k8s_status_error(kw.status, kw.error,
			    "watch the computer's pod", e);
		else
			r = errmsg_set(e, ERR_K8S_UNAVAILABLE, "the watch of "
			    "the computer's pod failed: %s",
			    curl_easy_strerror(kw.x.result));
	}
	k8s_watch_stop(&kw);
	return r;
}

/*
 * A failure a wait outlives: the server unreachable, 5xx or 429.  Never
 * one that says something about the pod or the credentials.
 */
static int
kube_transient(int r)
{
	return r == ERR_K8S_UNAVAILABLE || r == ERR_K8S_THROTTLED;
}

/* Sleep *backoff (doubling it up to the cap), never past the deadline. */
static void
kube_backoff(int64_t *backoff, int64_t deadline)
{
	int64_t	left = deadline - lws_now_usecs() / 1000;

	(void)task_sleep(*backoff < left ? *backoff : left > 0 ? left : 0);
	if (*backoff < KUBE_WATCH_BACKOFF_MS)
		*backoff *= 2;
}

/*
 * Until the pod is Ready with an IP, gone or failed (want_gone: until it
 * is deleted), or the deadline.
 * A watch the server ends is resumed from the last version seen; one
 * whose version expired starts again from a fresh GET.  A list or watch
 * that fails for a while (the API server restarting, a load balancer
 * between) is tried again with backoff until the deadline, which then
 * reports that failure rather than a bare timeout.
 */
static int
kube_wait_pod(struct provider *p, const char *name, struct kube_wait *w,
    struct errmsg *e)
{
	int64_t	 deadline, backoff = 50;
	int	 r, events, drops = 0, lists = 0, failed = 0;

	deadline = lws_now_usecs() / 1000 + kube(p)->ready_ms;
	while (!kube_decided(w)) {
		if (lws_now_usecs() / 1000 >= deadline)
			return failed != 0 ? failed : ERR_TIMEOUT;
		if (w->expired || w->st.rv[0] == '\0') {
			/* Expired again at once: do not spin on the server. */
			if (lists++ > 0)
				kube_backoff(&backoff, deadline);
			w->expired = 0;
			r = kube_pod_list(p, name, w->id, &w->st, e);
			if (r != 0 && kube_transient(r)) {
				failed = r;
				w->st.rv[0] = '\0';
				log_info("kubernetes.retry", "pod=%s %s", name,
				    errmsg_str(e));
				continue;
			}
			if (r != 0)
				return r;
			if (!w->st.found) {
				w->gone = 1;
				break;
			}
			continue;
		}
		events = 0;
		r = kube_watch_once(p, name, w, deadline, &events, e);
		if (r != 0 && kube_transient(r)) {
			failed = r;
			log_info("kubernetes.retry", "pod=%s %s", name,
			    errmsg_str(e));
			kube_backoff(&backoff, deadline);
			continue;
		}
		if (r != 0)
			return r;
		failed = 0;
		errmsg_clear(e);
		if (events > 0)
			lists = 0;
		if (kube_decided(w) || w->expired)
			continue;
		/* Ended by the server: resume; back off if it said nothing. */
		drops++;
		log_info("kubernetes.watch_resumed", "pod=%s rv=%s drops=%d",
		    name, w->st.rv, drops);
		if (events == 0)
			kube_backoff(&backoff, deadline);
		else
			backoff = 50;
	}
	return 0;
}

/* ---- lifecycle -------------------------------------------------------- */

static int
kube_check(struct provider *p, struct errmsg *e)
{
	char	 path[256];
	json_t	*j = NULL;
	long	 code = 0;
	int	 r;

	snprintf(path, sizeof path, "/api/v1/namespaces/%s/pods?limit=1&"
	    "labelSelector=app.kubernetes.io%%2Fname%%3D" KUBE_APP_LABEL,
	    kube(p)->ns);
	if ((r = kube_req(p, "GET", path, NULL, &code, &j, e)) == 0 &&
	    code != 200)
		r = k8s_status_error(code, j, "list the computers' pods", e);
	json_decref(j);
	return r;
}

static int
kube_alive(struct provider *p, const struct store_computer *c)
{
	struct kube_podst	 st;
	struct kube_ref		 ref;
	struct errmsg		 e;

	if (kube_ref_parse(c, &ref) != 0)
		return 0;
	memset(&e, 0, sizeof e);
	if (kube_pod_get(p, ref.pod, c->id, &st, &e) != 0) {
		/* The API's words, never a token: it has none of ours. */
		log_warn("kubernetes.alive", "computer=%s code=%s %s", c->id,
		    err_name(e.code), errmsg_str(&e));
		return -1;
	}
	if (!st.found || strcmp(st.uid, ref.uid) != 0 || st.deleting ||
	    kube_terminal(&st) || strcmp(st.ip, ref.ip) != 0) {
		if (st.found)
			log_info("kubernetes.gone", "computer=%s pod=%s "
			    "phase=%s reason=%s deleting=%d", c->id, ref.pod,
			    st.phase, st.reason, st.deleting);
		return 0;
	}
	return 1;
}

/* POST the pod; on 409 clear a dead pod of ours once and try again. */
static int
kube_create_pod(struct provider *p, const struct store_computer *c,
    const char *name, struct kube_podst *st, int *adopted, struct errmsg *e)
{
	struct kube_wait	 w;
	struct kube_podst	 old;
	struct errmsg		 e2;
	char			 path[256];
	json_t			*spec, *j = NULL;
	long			 code = 0;
	int			 r, tries;

	*adopted = 0;
	kube_path(p, "pods", NULL, path, sizeof path);
	spec = kube_pod_spec(p, c->id, name);
	for (tries = 0; tries < 2; tries++) {
		json_decref(j);
		j = NULL;
		if ((r = kube_req(p, "POST", path, spec, &code, &j, e)) != 0)
			break;
		if (code == 201 || code == 200) {
			kube_podst_read(j, c->id, st);
			break;
		}
		r = k8s_status_error(code, j, "create the computer's pod", e);
		if (r != ERR_K8S_CONFLICT || tries > 0)
			break;
		/* Ours and dead (evicted, failed, going): it makes way. */
		memset(&e2, 0, sizeof e2);
		if (kube_pod_get(p, name, c->id, &old, &e2) != 0)
			break;
		/*
		 * Alive and made by a controller of our store: this
		 * computer's own pod (another replica's start, or ours
		 * before a crash lost its reference).  Adopted, not made
		 * again; any other live pod is the 409 it was.
		 */
		if (old.found && old.ours && !kube_terminal(&old) &&
		    !old.deleting && old.store[0] != '\0' &&
		    strcmp(old.store, kube(p)->store) == 0) {
			*st = old;
			*adopted = 1;
			r = 0;
			break;
		}
		if (old.found && (!old.ours || (!kube_terminal(&old) &&
		    !old.deleting)))
			break;
		if (old.found) {
			log_info("kubernetes.clear", "computer=%s pod=%s "
			    "phase=%s reason=%s", c->id, name, old.phase,
			    old.reason);
			if ((r = kube_delete(p, "pods", name, old.uid,
			    e)) != 0)
				break;
			memset(&w, 0, sizeof w);
			w.id = c->id;
			w.want_gone = 1;
			w.expired = 1;	/* a fresh GET, then the watch */
			if ((r = kube_wait_pod(p, name, &w, e)) != 0) {
				if (r == ERR_TIMEOUT)
					r = errmsg_set(e, ERR_K8S_NOT_READY,
					    "the computer's old pod %s was not "
					    "deleted in time", name);
				break;
			}
		}
	}
	json_decref(spec);
	json_decref(j);
	return r;
}

/* POST the Secret (once more after clearing a stale one). */
static int
kube_create_secret(struct provider *p, const struct store_computer *c,
    const char *name, const char *uid, const char *secret, struct errmsg *e)
{
	char	 path[256];
	json_t	*spec, *j = NULL;
	long	 code = 0;
	int	 r, tries;

	kube_path(p, "secrets", NULL, path, sizeof path);
	spec = kube_secret_spec(p, c->id, name, uid, secret);
	for (tries = 0; tries < 2; tries++) {
		json_decref(j);
		j = NULL;
		if ((r = kube_req(p, "POST", path, spec, &code, &j, e)) != 0)
			break;
		if (code == 201 || code == 200)
			break;
		r = k8s_status_error(code, j, "create the computer's secret",
		    e);
		/*
		 * Left by a pod the collector has not reached yet; the pod
		 * we own now is the only one under the name.
		 */
		if (r != ERR_K8S_CONFLICT || tries > 0 ||
		    (r = kube_delete(p, "secrets", name, NULL, e)) != 0)
			break;
	}
	/* The body held the secret. */
	json_decref(spec);
	json_decref(j);
	return r;
}

static int
kube_ref_store(struct store_computer *c, const char *name,
    const struct kube_podst *st, struct errmsg *e)
{
	json_t	*j;
	char	*s;
	int	 r = 0;

	j = json_pack("{s:s, s:s, s:s, s:i, s:i}", "pod", name, "uid", st->uid,
	    "ip", st->ip, "port", KUBE_CONTROL_PORT, "gateway_port",
	    KUBE_GATEWAY_PORT);
	if (j == NULL || (s = json_dumps(j, JSON_COMPACT)) == NULL)
		fatal("kube_ref_store");
	if (strlen(s) >= sizeof c->ref)
		r = errmsg_set(e, ERR_INTERNAL, "the pod's reference does not "
		    "fit");
	else
		snprintf(c->ref, sizeof c->ref, "%s", s);
	free(s);
	json_decref(j);
	return r;
}

/* A start that failed after the pod was made: it goes (with its secret). */
static void
kube_abandon(struct provider *p, const struct store_computer *c,
    const char *name, const char *uid)
{
	struct errmsg	 e;

	memset(&e, 0, sizeof e);
	if (kube_delete(p, "pods", name, uid, &e) != 0)
		log_warn("kubernetes.abandon", "computer=%s pod=%s %s", c->id,
		    name, errmsg_str(&e));
	else
		(void)kube_delete(p, "secrets", name, NULL, &e);
}

static int
kube_start(struct provider *p, struct store_computer *c, struct errmsg *e)
{
	struct kube_wait	 w;
	char			 name[KUBE_NAME_MAX], secret[SECRET_MAX + 1];
	int			 r, adopted = 0;

	kube_pod_name(c->id, name, sizeof name);
	memset(&w, 0, sizeof w);
	w.id = c->id;
	if ((r = token_new(secret, sizeof secret)) != 0)
		return errmsg_set(e, r, "cannot make a control secret");
	if ((r = kube_create_pod(p, c, name, &w.st, &adopted, e)) != 0)
		goto out;
	if (adopted) {
		/* Its secret is the one its maker stored; never replaced. */
		log_info("kubernetes.adopted", "computer=%s pod=%s phase=%s",
		    c->id, name, w.st.phase);
		if ((r = kube_secret_get(p, name, secret, sizeof secret,
		    e)) != 0)
			goto out;
	} else if ((r = kube_create_secret(p, c, name, w.st.uid, secret,
	    e)) != 0) {
		kube_abandon(p, c, name, w.st.uid);
		goto out;
	}
	if ((r = kube_wait_pod(p, name, &w, e)) != 0 || !w.st.ready ||
	    w.gone) {
		if (r == ERR_TIMEOUT || r == 0)
			r = errmsg_set(e, ERR_K8S_NOT_READY, "the computer's "
			    "pod %s was not ready within %lld ms (phase %s%s%s%s)",
			    name, (long long)kube(p)->ready_ms, w.gone ?
			    "deleted" : w.st.phase, w.st.reason[0] != '\0' ?
			    ", " : "", w.st.reason, w.st.deleting ?
			    ", deleting" : "");
		/* An adopted pod is its maker's to give up on. */
		if (!adopted)
			kube_abandon(p, c, name, w.st.uid);
		goto out;
	}
	if ((r = kube_ref_store(c, name, &w.st, e)) != 0) {
		kube_abandon(p, c, name, w.st.uid);
		goto out;
	}
	kube_secret_keep(kube(p), c->id, w.st.uid, secret);
	log_info("kubernetes.started", "computer=%s pod=%s ip=%s", c->id, name,
	    w.st.ip);
out:
	token_wipe(secret, sizeof secret);
	return r;
}

static int
kube_stop(struct provider *p, struct store_computer *c)
{
	struct kube_ref	 ref;
	struct errmsg	 e;
	int		 r;

	memset(&e, 0, sizeof e);
	kube_secret_forget(kube(p), c->id);
	/* No pod of ours is known: whatever is under the name is not ours. */
	if (kube_ref_parse(c, &ref) != 0)
		return 0;
	r = kube_delete(p, "pods", ref.pod, ref.uid, &e);
	if (r == ERR_K8S_CONFLICT) {
		log_info("kubernetes.stop_foreign", "computer=%s pod=%s msg=\"the "
		    "pod under the name is not the one this controller started; "
		    "left alone\"", c->id, ref.pod);
		return 0;
	}
	/* The secret goes with its owner too; asked here for an old API. */
	if (r == 0)
		r = kube_delete(p, "secrets", ref.pod, NULL, &e);
	if (r != 0)
		log_warn("kubernetes.stop", "computer=%s code=%s %s", c->id,
		    err_name(r), errmsg_str(&e));
	return r;
}

/* The home is the pod's (or the claim's): saved work is the home store's. */
static int
kube_destroy(struct provider *p, struct store_computer *c)
{
	return kube_stop(p, c);
}

/* The secret from the API when this process did not start the pod. */
static int
kube_secret_get(struct provider *p, const char *pod, char *out, size_t len,
    struct errmsg *e)
{
	unsigned char	 buf[SECRET_MAX + 4];
	const char	*b64;
	char		 path[256];
	json_t		*j = NULL;
	long		 code = 0;
	int		 n, r;

	kube_path(p, "secrets", pod, path, sizeof path);
	if ((r = kube_req(p, "GET", path, NULL, &code, &j, e)) != 0)
		return r;
	if (code != 200) {
		r = k8s_status_error(code, j, "read the computer's secret", e);
		json_decref(j);
		return r;
	}
	b64 = json_string_value(json_object_get(json_object_get(j, "data"),
	    KUBE_SECRET_KEY));
	n = b64 != NULL && strlen(b64) <= (SECRET_MAX / 3 + 1) * 4 ?
	    EVP_DecodeBlock(buf, (const unsigned char *)b64,
	    (int)strlen(b64)) : -1;
	if (n > 0)
		while (n > 0 && (buf[n - 1] == '\0' || buf[n - 1] == '\n'))
			n--;
	if (n <= 0 || (size_t)n >= len || memchr(buf, '\0', (size_t)n) !=
	    NULL)
		r = errmsg_set(e, ERR_K8S, "the computer's secret holds no "
		    "control secret");
	else {
		memcpy(out, buf, (size_t)n);
		out[n] = '\0';
	}
	token_wipe(buf, sizeof buf);
	/* The reply holds the secret too. */
	if (b64 != NULL)
		explicit_bzero((char *)b64, strlen(b64));
	json_decref(j);
	return r;
}

static int
kube_endpoint(struct provider *p, const struct store_computer *c,
    struct provider_endpoint *ep, struct errmsg *e)
{
	struct kube_secret	*s;
	struct kube_ref		 ref;
	int			 r, v6;

	if (kube_ref_parse(c, &ref) != 0)
		return errmsg_set(e, ERR_CONNECT, "the computer is not "
		    "running");
	if ((s = kube_secret_find(kube(p), c->id)) != NULL &&
	    strcmp(s->uid, ref.uid) == 0)
		snprintf(ep->secret, sizeof ep->secret, "%s", s->secret);
	else if ((r = kube_secret_get(p, ref.pod, ep->secret,
	    sizeof ep->secret, e)) != 0)
		return r;
	else
		kube_secret_keep(kube(p), c->id, ref.uid, ep->secret);
	v6 = strchr(ref.ip, ':') != NULL;
	snprintf(ep->control_url, sizeof ep->control_url, "ws://%s%s%s:%d",
	    v6 ? "[" : "", ref.ip, v6 ? "]" : "", ref.port);
	snprintf(ep->gateway, sizeof ep->gateway, "%s%s%s:%d", v6 ? "[" : "",
	    ref.ip, v6 ? "]" : "", ref.gateway_port);
	snprintf(ep->workspace, sizeof ep->workspace, "%s", KUBE_WORKSPACE);
	return 0;
}

const struct provider_ops provider_kubernetes_ops = {
	.name = "kubernetes",
	.init = kube_init,
	.free = kube_free,
	.isolation = kube_isolation,
	.check = kube_check,
	.start = kube_start,
	.alive = kube_alive,
	.stop = kube_stop,
	.destroy = kube_destroy,
	.endpoint = kube_endpoint,
};

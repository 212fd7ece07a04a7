/* SPDX-License-Identifier: MIT */
/*
 * kubeconfig and in-cluster credentials (kubeconfig.h).  libyaml loads
 * the text (capped at KUBECONFIG_MAX bytes) into a document whose node
 * count is checked before anything is read from it; lookups go by key
 * through mappings and by name through the clusters/contexts/users
 * lists, so aliases (which libyaml keeps as references, not copies)
 * cannot make a lookup costlier than the document.
 */
#include "autoconf.h"

#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <curl/curl.h>
#include <openssl/evp.h>
#include <yaml.h>

#include "err.h"
#include "kubeconfig.h"
#include "token.h"
#include "xmalloc.h"

#define KUBE_TOKEN_MAX	16384

/* The value of key in mapping n, or NULL. */
static yaml_node_t *
kc_get(yaml_document_t *d, yaml_node_t *n, const char *key)
{
	yaml_node_pair_t	*pr;
	yaml_node_t		*k;
	size_t			 kl = strlen(key);

	if (n == NULL || n->type != YAML_MAPPING_NODE)
		return NULL;
	for (pr = n->data.mapping.pairs.start; pr < n->data.mapping.pairs.top;
	    pr++) {
		k = yaml_document_get_node(d, pr->key);
		if (k != NULL && k->type == YAML_SCALAR_NODE &&
		    k->data.scalar.length == kl &&
		    memcmp(k->data.scalar.value, key, kl) == 0)
			return yaml_document_get_node(d, pr->value);
	}
	return NULL;
}

/*
 * The scalar text of n: 1 with *s (NUL-free, into the document), 0
 * when n is absent or null, -1 when it is not a string.
 */
static int
kc_str(yaml_node_t *n, const char **s)
{
	*s = NULL;
	if (n == NULL)
		return 0;
	if (n->type != YAML_SCALAR_NODE)
		return -1;
	if (n->data.scalar.length == 0 ||
	    (n->data.scalar.style == YAML_PLAIN_SCALAR_STYLE &&
	    (strcmp((char *)n->data.scalar.value, "null") == 0 ||
	    strcmp((char *)n->data.scalar.value, "~") == 0)))
		return 0;
	if (strlen((char *)n->data.scalar.value) != n->data.scalar.length)
		return -1;
	*s = (const char *)n->data.scalar.value;
	return 1;
}

/* The entry of list (clusters, contexts, users) called name: its body. */
static yaml_node_t *
kc_named(yaml_document_t *d, const char *list, const char *name,
    const char *body)
{
	yaml_node_t		*l, *it;
	yaml_node_item_t	*i;
	const char		*s;

	l = kc_get(d, yaml_document_get_root_node(d), list);
	if (l == NULL || l->type != YAML_SEQUENCE_NODE)
		return NULL;
	for (i = l->data.sequence.items.start; i < l->data.sequence.items.top;
	    i++) {
		it = yaml_document_get_node(d, *i);
		if (kc_str(kc_get(d, it, "name"), &s) == 1 &&
		    strcmp(s, name) == 0)
			return kc_get(d, it, body);
	}
	return NULL;
}

/* base64 text into new bytes; 0 or -1 when it is not base64. */
static int
kc_unbase64(const char *s, char **out, size_t *outlen)
{
	size_t	 n = strlen(s), pad = 0;
	char	*buf;
	int	 k;

	*out = NULL;
	*outlen = 0;
	if (n == 0 || n % 4 != 0 || n > KUBECONFIG_MAX)
		return -1;
	if (s[n - 1] == '=')
		pad++;
	if (s[n - 2] == '=')
		pad++;
	buf = xmalloc(n / 4 * 3 + 1);
	k = EVP_DecodeBlock((unsigned char *)buf, (const unsigned char *)s,
	    (int)n);
	if (k < 0 || (size_t)k < pad) {
		free(buf);
		return -1;
	}
	buf[k - pad] = '\0';
	*out = buf;
	*outlen = (size_t)k - pad;
	return 0;
}

/* dir/name unless name is absolute. */
static char *
kc_path(const char *dir, const char *name)
{
	char	*p;

	if (name[0] == '/' || dir == NULL || *dir == '\0')
		return xstrdup(name);
	if (asprintf(&p, "%s/%s", dir, name) == -1)
		fatal("asprintf");
	return p;
}

/* One PEM: field (a file) or field-data (inline base64). */
static int
kc_pem(yaml_document_t *d, yaml_node_t *n, const char *field,
    const char *dir, struct kubeconfig_pem *pem, struct errmsg *e)
{
	char		 dkey[64];
	const char	*f, *b;
	int		 rf, rb;

	snprintf(dkey, sizeof dkey, "%s-data", field);
	rf = kc_str(kc_get(d, n, field), &f);
	rb = kc_str(kc_get(d, n, dkey), &b);
	if (rf < 0 || rb < 0)
		return errmsg_set(e, ERR_CONFIG, "kubeconfig: %s is not a "
		    "string", rf < 0 ? field : dkey);
	if (rb == 1) {
		if (kc_unbase64(b, &pem->data, &pem->len) != 0)
			return errmsg_set(e, ERR_CONFIG, "kubeconfig: %s is "
			    "not base64", dkey);
	} else if (rf == 1)
		pem->file = kc_path(dir, f);
	return 0;
}

/*
 * s is an http(s) URL with a host, as libcurl parses it: "https://" alone
 * or with a path and no host would become a request to nowhere.
 */
static int
kc_server_ok(const char *s)
{
	CURLU	*u;
	char	*host = NULL;
	int	 ok;

	if (strncmp(s, "https://", 8) != 0 && strncmp(s, "http://", 7) != 0)
		return 0;
	if ((u = curl_url()) == NULL)
		fatal("curl_url");
	ok = curl_url_set(u, CURLUPART_URL, s, 0) == CURLUE_OK &&
	    curl_url_get(u, CURLUPART_HOST, &host, 0) == CURLUE_OK &&
	    host != NULL && host[0] != '\0';
	curl_free(host);
	curl_url_cleanup(u);
	return ok;
}

static int
kc_cluster(yaml_document_t *d, yaml_node_t *cl, const char *dir,
    struct kubeconfig *kc, struct errmsg *e)
{
	const char	*s;
	int		 r;

	if (kc_str(kc_get(d, cl, "server"), &s) != 1)
		return errmsg_set(e, ERR_CONFIG, "kubeconfig: the cluster has "
		    "no server");
	if (!kc_server_ok(s))
		return errmsg_set(e, ERR_CONFIG, "kubeconfig: the server is "
		    "not an http(s) URL with a host");
	kc->server = xstrdup(s);
	/* A trailing slash would double in every path. */
	if (kc->server[strlen(kc->server) - 1] == '/')
		kc->server[strlen(kc->server) - 1] = '\0';
	if ((r = kc_pem(d, cl, "certificate-authority", dir, &kc->ca, e)) != 0)
		return r;
	if (kc_str(kc_get(d, cl, "insecure-skip-tls-verify"), &s) == 1 &&
	    strcmp(s, "true") == 0)
		kc->insecure = 1;
	return 0;
}

static int
kc_user(yaml_document_t *d, yaml_node_t *u, const char *dir,
    struct kubeconfig *kc, struct errmsg *e)
{
	const char	*s;
	int		 r;

	if (kc_get(d, u, "exec") != NULL ||
	    kc_get(d, u, "auth-provider") != NULL)
		return errmsg_set(e, ERR_CONFIG, "kubeconfig: the user's exec "
		    "or auth-provider plugin is not supported (give a token or "
		    "a client certificate)");
	if ((r = kc_str(kc_get(d, u, "token"), &s)) < 0)
		return errmsg_set(e, ERR_CONFIG, "kubeconfig: token is not a "
		    "string");
	if (r == 1) {
		if (strlen(s) > KUBE_TOKEN_MAX || strpbrk(s, " \t\r\n") != NULL)
			return errmsg_set(e, ERR_CONFIG, "kubeconfig: the "
			    "token is malformed");
		kc->token = xstrdup(s);
	} else if (kc_str(kc_get(d, u, "tokenFile"), &s) == 1)
		kc->token_file = kc_path(dir, s);
	if ((r = kc_pem(d, u, "client-certificate", dir, &kc->cert, e)) != 0 ||
	    (r = kc_pem(d, u, "client-key", dir, &kc->key, e)) != 0)
		return r;
	if ((kc->cert.file != NULL || kc->cert.data != NULL) !=
	    (kc->key.file != NULL || kc->key.data != NULL))
		return errmsg_set(e, ERR_CONFIG, "kubeconfig: a client "
		    "certificate needs its key and a key its certificate");
	return 0;
}

static int
kc_document(yaml_document_t *d, const char *dir, struct kubeconfig *kc,
    struct errmsg *e)
{
	yaml_node_t	*root, *ctx, *cl, *u;
	const char	*cur, *cname, *uname, *ns;
	int		 r;

	root = yaml_document_get_root_node(d);
	if (root == NULL || root->type != YAML_MAPPING_NODE)
		return errmsg_set(e, ERR_CONFIG, "kubeconfig: not a mapping");
	if (d->nodes.top - d->nodes.start > KUBECONFIG_NODES_MAX)
		return errmsg_set(e, ERR_CONFIG, "kubeconfig: too many nodes");
	if (kc_str(kc_get(d, root, "current-context"), &cur) != 1)
		return errmsg_set(e, ERR_CONFIG, "kubeconfig: no "
		    "current-context");
	if ((ctx = kc_named(d, "contexts", cur, "context")) == NULL)
		return errmsg_set(e, ERR_CONFIG, "kubeconfig: the current "
		    "context %.64s is not in contexts", cur);
	if (kc_str(kc_get(d, ctx, "cluster"), &cname) != 1 ||
	    (cl = kc_named(d, "clusters", cname, "cluster")) == NULL)
		return errmsg_set(e, ERR_CONFIG, "kubeconfig: the context's "
		    "cluster is not in clusters");
	if ((r = kc_cluster(d, cl, dir, kc, e)) != 0)
		return r;
	if (kc_str(kc_get(d, ctx, "user"), &uname) == 1) {
		if ((u = kc_named(d, "users", uname, "user")) == NULL)
			return errmsg_set(e, ERR_CONFIG, "kubeconfig: the "
			    "context's user is not in users");
		if ((r = kc_user(d, u, dir, kc, e)) != 0)
			return r;
	}
	if (kc_str(kc_get(d, ctx, "namespace"), &ns) == 1)
		kc->namespace = xstrdup(ns);
	return 0;
}

int
kubeconfig_parse(const char *buf, size_t len, const char *dir,
    struct kubeconfig *out, struct errmsg *e)
{
	yaml_parser_t	 p;
	yaml_document_t	 d;
	int		 r, loaded = 0;

	memset(out, 0, sizeof *out);
	if (len > KUBECONFIG_MAX)
		return errmsg_set(e, ERR_CONFIG, "kubeconfig: larger than "
		    "%d bytes", KUBECONFIG_MAX);
	if (!yaml_parser_initialize(&p))
		fatal("yaml_parser_initialize");
	yaml_parser_set_input_string(&p, (const unsigned char *)buf, len);
	if (!yaml_parser_load(&p, &d)) {
		r = errmsg_set(e, ERR_CONFIG, "kubeconfig: not YAML (line "
		    "%zu: %.80s)", p.problem_mark.line + 1,
		    p.problem != NULL ? p.problem : "?");
		goto out;
	}
	loaded = 1;
	r = kc_document(&d, dir, out, e);
out:
	if (loaded)
		yaml_document_delete(&d);
	yaml_parser_delete(&p);
	if (r != 0)
		kubeconfig_release(out);
	return r;
}

/* A small file whole; 0 or ERR_*. */
static int
kc_read(const char *path, size_t max, char **out, size_t *outlen)
{
	struct stat	 st;
	char		*buf;
	ssize_t		 n;
	size_t		 got = 0;
	int		 fd, r = 0;

	*out = NULL;
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return err_from_errno(errno);
	if (fstat(fd, &st) == -1 || !S_ISREG(st.st_mode) ||
	    (size_t)st.st_size > max) {
		close(fd);
		return ERR_TOO_LARGE;
	}
	buf = xmalloc((size_t)st.st_size + 1);
	while (got < (size_t)st.st_size) {
		n = read(fd, buf + got, (size_t)st.st_size - got);
		if (n <= 0) {
			r = n == 0 ? 0 : err_from_errno(errno);
			break;
		}
		got += (size_t)n;
	}
	close(fd);
	if (r != 0) {
		free(buf);
		return r;
	}
	buf[got] = '\0';
	*out = buf;
	*outlen = got;
	return 0;
}

int
kubeconfig_load(const char *path, struct kubeconfig *out, struct errmsg *e)
{
	char	*buf = NULL, *dir, *slash;
	size_t	 len = 0;
	int	 r;

	memset(out, 0, sizeof *out);
	if ((r = kc_read(path, KUBECONFIG_MAX, &buf, &len)) != 0)
		return errmsg_set(e, ERR_CONFIG, "cannot read the kubeconfig "
		    "%.200s (%s)", path, err_name(r));
	dir = xstrdup(path);
	if ((slash = strrchr(dir, '/')) != NULL)
		*slash = '\0';
	else
		dir[0] = '\0';
	r = kubeconfig_parse(buf, len, dir, out, e);
	explicit_bzero(buf, len);
	free(buf);
	free(dir);
	return r;
}

int
kubeconfig_incluster(const char *sa_dir, struct kubeconfig *out,
    struct errmsg *e)
{
	const char	*host = getenv("KUBERNETES_SERVICE_HOST");
	const char	*port = getenv("KUBERNETES_SERVICE_PORT");
	char		*ns = NULL, tok[64];
	size_t		 len;
	int		 v6;

	memset(out, 0, sizeof *out);
	if (sa_dir == NULL)
		sa_dir = KUBE_SA_DIR;
	if (host == NULL || *host == '\0')
		return errmsg_set(e, ERR_NOT_FOUND, "not in a Kubernetes pod "
		    "(no KUBERNETES_SERVICE_HOST) and no KUBECONFIG");
	if (port == NULL || *port == '\0')
		port = "443";
	if (strlen(host) > 255 || strlen(port) > 5 ||
	    strspn(port, "0123456789") != strlen(port))
		return errmsg_set(e, ERR_CONFIG, "KUBERNETES_SERVICE_HOST/PORT "
		    "are malformed");
	v6 = strchr(host, ':') != NULL;
	if (asprintf(&out->server, "https://%s%s%s:%s", v6 ? "[" : "", host,
	    v6 ? "]" : "", port) == -1)
		fatal("asprintf");
	out->ca.file = kc_path(sa_dir, "ca.crt");
	out->token_file = kc_path(sa_dir, "token");
	if (access(out->token_file, R_OK) != 0 ||
	    access(out->ca.file, R_OK) != 0) {
		kubeconfig_release(out);
		return errmsg_set(e, ERR_CONFIG, "in a pod, but its service "
		    "account token or CA under %.100s cannot be read "
		    "(automountServiceAccountToken?)", sa_dir);
	}
	snprintf(tok, sizeof tok, "%s/namespace", sa_dir);
	if (kc_read(tok, 256, &ns, &len) == 0) {
		ns[strcspn(ns, " \r\n")] = '\0';
		out->namespace = ns;
	}
	return 0;
}

int
kubeconfig_token(const struct kubeconfig *kc, char *out, size_t len)
{
	char	*buf = NULL;
	size_t	 n = 0;
	int	 r;

	if (len == 0)
		return ERR_INTERNAL;
	out[0] = '\0';
	if (kc->token != NULL) {
		if (strlen(kc->token) >= len)
			return ERR_TOO_LARGE;
		snprintf(out, len, "%s", kc->token);
		return 0;
	}
	if (kc->token_file == NULL)
		return 0;
	/* Read each time: projected service-account tokens rotate. */
	if ((r = kc_read(kc->token_file, KUBE_TOKEN_MAX, &buf, &n)) != 0)
		return r;
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\r' ||
	    buf[n - 1] == ' '))
		buf[--n] = '\0';
	r = n == 0 || n >= len || strpbrk(buf, " \t\r\n") != NULL ?
	    ERR_CONFIG : 0;
	if (r == 0)
		memcpy(out, buf, n + 1);
	explicit_bzero(buf, n);
	free(buf);
	return r;
}

static void
kc_pem_release(struct kubeconfig_pem *p)
{
	free(p->file);
	if (p->data != NULL) {
		explicit_bzero(p->data, p->len);
		free(p->data);
	}
	memset(p, 0, sizeof *p);
}

void
kubeconfig_release(struct kubeconfig *kc)
{
	if (kc == NULL)
		return;
	free(kc->server);
	free(kc->namespace);
	kc_pem_release(&kc->ca);
	kc_pem_release(&kc->cert);
	kc_pem_release(&kc->key);
	if (kc->token != NULL) {
		explicit_bzero(kc->token, strlen(kc->token));
		free(kc->token);
	}
	free(kc->token_file);
	memset(kc, 0, sizeof *kc);
}

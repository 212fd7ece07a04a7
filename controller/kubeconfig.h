/* SPDX-License-Identifier: MIT */
/*
 * Where the Kubernetes API is and how the controller proves who it is
 * (provider-kubernetes.c): read from a kubeconfig file (KUBECONFIG, for a
 * controller outside the cluster) or from the service account a pod is
 * given (in-cluster).  A kubeconfig is YAML; it is parsed with libyaml
 * into a document tree, capped in bytes and in nodes, and only the
 * fields named below are looked up (no walk of the whole tree, so an
 * alias-heavy document costs no more than its size).
 *
 * Of a kubeconfig: current-context, then that context's cluster (server,
 * certificate-authority or certificate-authority-data,
 * insecure-skip-tls-verify), user (token, tokenFile, client-certificate
 * (-data), client-key(-data)) and namespace.  Relative file names are
 * relative to the kubeconfig's directory, as kubectl reads them.
 * Exec and auth-provider plugins are refused, not run.
 */
#ifndef CONTROLLER_KUBECONFIG_H
#define CONTROLLER_KUBECONFIG_H

#include <stddef.h>

#define KUBECONFIG_MAX		(1024 * 1024)
#define KUBECONFIG_NODES_MAX	20000
#define KUBE_SA_DIR		"/var/run/secrets/kubernetes.io/serviceaccount"

struct errmsg;

/* PEM bytes given inline (…-data) or a file's name; never both set. */
struct kubeconfig_pem {
	char	*file;
	char	*data;
	size_t	 len;
};

struct kubeconfig {
	char			*server;	/* https://HOST:PORT */
	char			*namespace;	/* the context's, or NULL */
	struct kubeconfig_pem	 ca;
	struct kubeconfig_pem	 cert;
	struct kubeconfig_pem	 key;
	char			*token;		/* a bearer token, or NULL */
	char			*token_file;	/* read again per request */
	int			 insecure;
};

/*
 * Parse the kubeconfig text buf[0..len); dir: where its relative names
 * lead (NULL: the working directory).  0, or ERR_CONFIG with a sentence
 * that names the field, never a credential.
 */
int	kubeconfig_parse(const char *buf, size_t len, const char *dir,
	    struct kubeconfig *out, struct errmsg *e);
/* Read and parse the file path (KUBECONFIG's first name). */
int	kubeconfig_load(const char *path, struct kubeconfig *out,
	    struct errmsg *e);
/*
 * In-cluster: KUBERNETES_SERVICE_HOST/PORT, and sa_dir's token, ca.crt
 * and namespace (sa_dir NULL: KUBE_SA_DIR).  ERR_NOT_FOUND when this is
 * no pod (no service host), ERR_CONFIG when it is one but incomplete.
 */
int	kubeconfig_incluster(const char *sa_dir, struct kubeconfig *out,
	    struct errmsg *e);
/* The current bearer token (token, else token_file's) into out. */
int	kubeconfig_token(const struct kubeconfig *kc, char *out, size_t len);
/* Frees and wipes; the struct is all zero after. */
void	kubeconfig_release(struct kubeconfig *kc);

#endif

/* SPDX-License-Identifier: MIT */
/*
 * kubeconfig: the current context's cluster, user and namespace picked
 * out of a kubeconfig with several of each; inline (-data) and file
 * credentials, relative names against the file's directory; what is
 * refused (no current context, a context naming nothing, a plugin, a
 * certificate without its key, bad base64, not YAML, too big) with a
 * sentence that never carries the token; in-cluster credentials from a
 * service-account directory; the token read again from its file.
 */
#include "autoconf.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "unit-tmpdir.h"

#include "err.h"
#include "kubeconfig.h"

#define KC_HEAD \
	"apiVersion: v1\n" \
	"kind: Config\n" \
	"current-context: work\n" \
	"clusters:\n" \
	"- name: home\n" \
	"  cluster:\n" \
	"    server: https://home.example:6443\n" \
	"- name: prod\n" \
	"  cluster:\n" \
	"    server: https://10.0.0.1:6443/\n" \
	"    certificate-authority-data: LS0tLS1CRUdJTg==\n" \
	"contexts:\n" \
	"- name: play\n" \
	"  context: {cluster: home, user: me}\n" \
	"- name: work\n" \
	"  context:\n" \
	"    cluster: prod\n" \
	"    user: robot\n" \
	"    namespace: computers\n"

static int
parse(const char *text, struct kubeconfig *kc, struct errmsg *e)
{
	memset(e, 0, sizeof *e);
	return kubeconfig_parse(text, strlen(text), "/etc/kube", kc, e);
}

static void
test_token_context(void **state)
{
	struct kubeconfig	 kc;
	struct errmsg		 e;
	char			 tok[64];

	(void)state;
	assert_int_equal(parse(KC_HEAD
	    "users:\n"
	    "- name: me\n"
	    "  user: {token: not-this-one}\n"
	    "- name: robot\n"
	    "  user:\n"
	    "    token: s3cr3t-token\n", &kc, &e), 0);
	assert_string_equal(kc.server, "https://10.0.0.1:6443");
	assert_string_equal(kc.namespace, "computers");
	assert_int_equal(kc.ca.len, 10);
	assert_memory_equal(kc.ca.data, "-----BEGIN", 10);
	assert_null(kc.ca.file);
	assert_string_equal(kc.token, "s3cr3t-token");
	assert_int_equal(kubeconfig_token(&kc, tok, sizeof tok), 0);
	assert_string_equal(tok, "s3cr3t-token");
	assert_null(kc.cert.file);
	assert_int_equal(kc.insecure, 0);
	kubeconfig_release(&kc);
	assert_null(kc.server);
}

static void
test_client_cert_files(void **state)
{
	struct kubeconfig	 kc;
	struct errmsg		 e;

	(void)state;
	assert_int_equal(parse(KC_HEAD
	    "users:\n"
	    "- name: robot\n"
	    "  user:\n"
	    "    client-certificate: certs/robot.crt\n"
	    "    client-key: /abs/robot.key\n", &kc, &e), 0);
	assert_string_equal(kc.cert.file, "/etc/kube/certs/robot.crt");
	assert_string_equal(kc.key.file, "/abs/robot.key");
	assert_null(kc.token);
	kubeconfig_release(&kc);

	assert_int_equal(parse(KC_HEAD
	    "users:\n"
	    "- name: robot\n"
	    "  user:\n"
	    "    client-certificate-data: Y2VydA==\n"
	    "    client-key-data: a2V5\n", &kc, &e), 0);
	assert_int_equal(kc.cert.len, 4);
	assert_memory_equal(kc.cert.data, "cert", 4);
	assert_int_equal(kc.key.len, 3);
	assert_memory_equal(kc.key.data, "key", 3);
	kubeconfig_release(&kc);
}

static void
expect_refused(const char *text, const char *words)
{
	struct kubeconfig	 kc;
	struct errmsg		 e;

	assert_int_equal(parse(text, &kc, &e), ERR_CONFIG);
	assert_non_null(strstr(e.msg, words));
	/* Never the credentials in the sentence. */
	assert_null(strstr(e.msg, "s3cr3t"));
	assert_null(kc.server);
}

static void
test_refused(void **state)
{
	(void)state;
	expect_refused("a: [1, 2\n", "not YAML");
	expect_refused("- just\n- a list\n", "not a mapping");
	expect_refused("clusters: []\n", "no current-context");
	expect_refused("current-context: nowhere\ncontexts: []\n",
	    "not in contexts");
	expect_refused(KC_HEAD "users:\n- name: robot\n  user:\n"
	    "    exec: {command: aws}\n", "plugin");
	expect_refused(KC_HEAD "users:\n- name: robot\n  user:\n"
	    "    client-certificate: c.crt\n", "needs its key");
	expect_refused(KC_HEAD "users:\n- name: robot\n  user:\n"
	    "    client-key-data: '%%%%'\n", "not base64");
	expect_refused(KC_HEAD "users:\n- name: robot\n  user:\n"
	    "    token: [s3cr3t]\n", "token is not a string");
	expect_refused(KC_HEAD "users:\n- name: robot\n  user:\n"
	    "    token: \"s3cr3t with space\"\n", "malformed");
	expect_refused(KC_HEAD "users:\n- name: someone-else\n"
	    "  user: {token: s3cr3t}\n", "not in users");
	expect_refused("current-context: a\ncontexts:\n- name: a\n"
	    "  context: {cluster: c}\nclusters:\n- name: c\n"
	    "  cluster: {server: ftp://x}\n", "http(s) URL");
	/* Found by fuzz_kubeconfig: no host, or a path where it would be. */
	expect_refused("current-context: a\ncontexts:\n- name: a\n"
	    "  context: {cluster: c}\nclusters:\n- name: c\n"
	    "  cluster: {server: \"https://\"}\n", "with a host");
	expect_refused("current-context: a\ncontexts:\n- name: a\n"
	    "  context: {cluster: c}\nclusters:\n- name: c\n"
	    "  cluster: {server: \"https://:6443\"}\n", "with a host");
}

static void
test_too_big(void **state)
{
	struct kubeconfig	 kc;
	struct errmsg		 e;
	char			*big;

	(void)state;
	big = calloc(1, KUBECONFIG_MAX + 2);
	assert_non_null(big);
	memset(big, ' ', KUBECONFIG_MAX + 1);
	memset(&e, 0, sizeof e);
	assert_int_equal(kubeconfig_parse(big, KUBECONFIG_MAX + 1, NULL, &kc,
	    &e), ERR_CONFIG);
	assert_non_null(strstr(e.msg, "larger than"));
	free(big);
}

/* Aliases are references in libyaml's tree: no blow-up, found as usual. */
static void
test_aliases(void **state)
{
	struct kubeconfig	 kc;
	struct errmsg		 e;

	(void)state;
	assert_int_equal(parse(
	    "x: &a [1, 1, 1, 1, 1, 1, 1, 1]\n"
	    "y: &b [*a, *a, *a, *a, *a, *a, *a, *a]\n"
	    "z: &c [*b, *b, *b, *b, *b, *b, *b, *b]\n"
	    "current-context: &ctx t\n"
	    "contexts:\n- name: *ctx\n  context: {cluster: c}\n"
	    "clusters:\n- name: c\n  cluster: {server: 'http://127.0.0.1:1',"
	    " insecure-skip-tls-verify: true}\n", &kc, &e), 0);
	assert_string_equal(kc.server, "http://127.0.0.1:1");
	assert_int_equal(kc.insecure, 1);
	assert_null(kc.token);
	kubeconfig_release(&kc);
}

static void
write_file(const char *dir, const char *name, const char *text)
{
	char	 path[256];
	FILE	*f;

	snprintf(path, sizeof path, "%s/%s", dir, name);
	assert_non_null(f = fopen(path, "w"));
	fputs(text, f);
	fclose(f);
}

static void
test_incluster(void **state)
{
	struct kubeconfig	 kc;
	struct errmsg		 e;
	char			 tok[64];

	(void)state;
	memset(&e, 0, sizeof e);
	unsetenv("KUBERNETES_SERVICE_HOST");
	assert_int_equal(kubeconfig_incluster(unit_tmpdir, &kc, &e),
	    ERR_NOT_FOUND);
	setenv("KUBERNETES_SERVICE_HOST", "10.96.0.1", 1);
	setenv("KUBERNETES_SERVICE_PORT", "443", 1);
	/* A pod, but without its token: automountServiceAccountToken? */
	assert_int_equal(kubeconfig_incluster(unit_tmpdir, &kc, &e),
	    ERR_CONFIG);
	write_file(unit_tmpdir, "token", "first-token\n");
	write_file(unit_tmpdir, "ca.crt", "-----BEGIN CERTIFICATE-----\n");
	write_file(unit_tmpdir, "namespace", "rakazo\n");
	assert_int_equal(kubeconfig_incluster(unit_tmpdir, &kc, &e), 0);
	assert_string_equal(kc.server, "https://10.96.0.1:443");
	assert_string_equal(kc.namespace, "rakazo");
	assert_non_null(strstr(kc.ca.file, "/ca.crt"));
	assert_int_equal(kubeconfig_token(&kc, tok, sizeof tok), 0);
	assert_string_equal(tok, "first-token");
	/* Projected tokens rotate: each request reads the file again. */
	write_file(unit_tmpdir, "token", "second-token");
	assert_int_equal(kubeconfig_token(&kc, tok, sizeof tok), 0);
	assert_string_equal(tok, "second-token");
	kubeconfig_release(&kc);
	setenv("KUBERNETES_SERVICE_HOST", "fd00::1", 1);
	assert_int_equal(kubeconfig_incluster(unit_tmpdir, &kc, &e), 0);
	assert_string_equal(kc.server, "https://[fd00::1]:443");
	kubeconfig_release(&kc);
	unsetenv("KUBERNETES_SERVICE_HOST");
}

static int
setup(void **state)
{
	(void)state;
	return unit_tmpdir_new("test_kubeconfig");
}

static int
teardown(void **state)
{
	(void)state;
	unit_tmpdir_remove();
	return 0;
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_token_context),
		cmocka_unit_test(test_client_cert_files),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_too_big),
		cmocka_unit_test(test_aliases),
		cmocka_unit_test_setup_teardown(test_incluster, setup,
		    teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

/* SPDX-License-Identifier: MIT */
/*
 * k8s: Kubernetes Status bodies and HTTP statuses as stable codes, each
 * sentence naming what was tried and quoting the API's reason and
 * message (control characters flattened, length bounded); label values
 * made from computer ids.
 */
#include "autoconf.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "err.h"
#include "k8s.h"

static json_t *
status_body(int code, const char *reason, const char *message)
{
	return json_pack("{s:s, s:s, s:s, s:s, s:s, s:i}", "kind", "Status",
	    "apiVersion", "v1", "status", "Failure", "reason", reason,
	    "message", message, "code", code);
}

static void
expect(long st, const char *reason, const char *message, int code,
    const char *name)
{
	struct errmsg	 e;
	json_t		*j = status_body((int)st, reason, message);

	memset(&e, 0, sizeof e);
	assert_int_equal(k8s_status_error(st, j, "create the computer's pod",
	    &e), code);
	assert_int_equal(e.code, code);
	assert_string_equal(err_name(code), name);
	assert_non_null(strstr(e.msg, "create the computer's pod"));
	assert_non_null(strstr(e.msg, message));
	assert_non_null(strstr(e.msg, reason));
	json_decref(j);
}

static void
test_status_codes(void **state)
{
	(void)state;
	expect(401, "Unauthorized", "Unauthorized", ERR_K8S_UNAUTHORIZED,
	    "KUBERNETES_UNAUTHORIZED");
	expect(403, "Forbidden", "pods is forbidden: User \"system:"
	    "serviceaccount:rakazo:rakazo-controller\" cannot create "
	    "resource \"pods\"", ERR_K8S_FORBIDDEN, "KUBERNETES_FORBIDDEN");
	expect(404, "NotFound", "namespaces \"nope\" not found",
	    ERR_K8S_NOT_FOUND, "KUBERNETES_NOT_FOUND");
	expect(409, "AlreadyExists", "pods \"rakazo-team-1\" already exists",
	    ERR_K8S_CONFLICT, "KUBERNETES_ALREADY_EXISTS");
	expect(422, "Invalid", "Pod \"x\" is invalid: spec.containers[0]."
	    "image: Required value", ERR_K8S_INVALID, "KUBERNETES_INVALID");
	expect(429, "TooManyRequests", "the server has received too many "
	    "requests", ERR_K8S_THROTTLED, "KUBERNETES_TOO_MANY_REQUESTS");
	expect(500, "InternalError", "etcdserver: request timed out",
	    ERR_K8S_UNAVAILABLE, "KUBERNETES_UNAVAILABLE");
	expect(503, "ServiceUnavailable", "the server is currently unable",
	    ERR_K8S_UNAVAILABLE, "KUBERNETES_UNAVAILABLE");
	expect(400, "BadRequest", "the body is not JSON", ERR_K8S,
	    "KUBERNETES_ERROR");
	expect(410, "Expired", "too old resource version", ERR_K8S,
	    "KUBERNETES_ERROR");
}

static void
test_odd_bodies(void **state)
{
	struct errmsg	 e;
	json_t		*j;
	char		 longmsg[2000];

	(void)state;
	/* No body at all (a proxy's HTML page): the status alone. */
	memset(&e, 0, sizeof e);
	assert_int_equal(k8s_status_error(502, NULL, "read the pod", &e),
	    ERR_K8S_UNAVAILABLE);
	assert_non_null(strstr(e.msg, "HTTP 502"));
	assert_non_null(strstr(e.msg, "no message"));
	/* A 409 that is AlreadyExists by reason on an odd status. */
	j = status_body(400, "AlreadyExists", "x");
	assert_int_equal(k8s_status_code(400, j), ERR_K8S_CONFLICT);
	json_decref(j);
	/* Wrong types are ignored, not trusted. */
	j = json_pack("{s:i, s:[]}", "message", 7, "reason");
	assert_int_equal(k8s_status_error(403, j, "x", &e), ERR_K8S_FORBIDDEN);
	json_decref(j);
	/* Control characters flattened; the sentence stays bounded. */
	memset(longmsg, 'a', sizeof longmsg - 1);
	longmsg[sizeof longmsg - 1] = '\0';
	longmsg[3] = '\n';
	longmsg[4] = '\x1b';
	j = status_body(422, "Invalid", longmsg);
	assert_int_equal(k8s_status_error(422, j, "x", &e), ERR_K8S_INVALID);
	assert_null(strchr(e.msg, '\n'));
	assert_null(strchr(e.msg, '\x1b'));
	assert_true(strlen(e.msg) < ERRMSG_MAX);
	json_decref(j);
}

static void
label(const char *in, const char *want)
{
	char	 out[64];

	k8s_label_value(in, out, sizeof out);
	assert_string_equal(out, want);
}

static void
test_label_value(void **state)
{
	(void)state;
	label("team", "team");
	label("Team_1", "Team_1");
	label("bot.-", "bot");
	label("-_x_-", "x");
	label("a b/c", "a_b_c");
	label("...", "");
	label("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
	    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_status_codes),
		cmocka_unit_test(test_odd_bodies),
		cmocka_unit_test(test_label_value),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

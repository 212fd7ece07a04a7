/* SPDX-License-Identifier: MIT */
/*
 * One vhost, several protocols (serve's inner loop): lws 4.1 calls the
 * vhost's protocols[0] (gclient_protocol) with LWS_CALLBACK_WSI_DESTROY
 * for every descriptor of the vhost, whatever its protocol.  The guest
 * client must not take another protocol's opaque data for a client: here
 * that data is freed before the destroy, as serve's store watch did, so
 * under AddressSanitizer (CI's unit pass) a read of it fails the test.
 */
#include "autoconf.h"

#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <libwebsockets.h>

#include "guest-client.h"
#include "task.h"
#include "unit-loop.h"

#define FOREIGN_PROTOCOL	"test-foreign"

static struct lws_context	*ctx;
static struct lws_vhost		*vh;
static int			 foreign_rx, foreign_closed;

/* Frees its object on the first byte and asks lws to close. */
static int
foreign_cb(struct lws *wsi, enum lws_callback_reasons reason, void *user,
    void *in, size_t len)
{
	char	 c;

	(void)user;
	(void)in;
	(void)len;
	switch (reason) {
	case LWS_CALLBACK_RAW_RX_FILE:
		foreign_rx++;
		if (read(lws_get_socket_fd(wsi), &c, 1) != 1)
			return -1;
		/* The opaque pointer is left dangling on purpose. */
		free(lws_get_opaque_user_data(wsi));
		return -1;
	case LWS_CALLBACK_RAW_CLOSE_FILE:
		foreign_closed++;
		return 0;
	default:
		return 0;
	}
}

static struct lws_protocols	 protos[4];

static int
setup(void **state)
{
	(void)state;
	protos[0] = gclient_protocol;
	protos[1] = task_fd_protocol;
	protos[2] = (struct lws_protocols){ FOREIGN_PROTOCOL, foreign_cb, 0,
	    0, 0, NULL, 0 };
	memset(&protos[3], 0, sizeof protos[3]);
	foreign_rx = foreign_closed = 0;
	return unit_loop_new(protos, &ctx, &vh);
}

static int
teardown(void **state)
{
	(void)state;
	unit_loop_end(ctx);
	return 0;
}

static void
test_foreign_destroy_ignored(void **state)
{
	lws_adopt_desc_t	 ad;
	char			*obj;
	int			 pfd[2];
	time_t			 end;

	(void)state;
	assert_int_equal(pipe2(pfd, O_CLOEXEC), 0);
	/* A client's layout would put its wsi here: the object's bytes say
	 * nothing lws could match. */
	obj = calloc(1, 256);
	assert_non_null(obj);
	memset(&ad, 0, sizeof ad);
	ad.vh = vh;
	ad.type = LWS_ADOPT_RAW_FILE_DESC;
	ad.fd.filefd = pfd[0];
	ad.vh_prot_name = FOREIGN_PROTOCOL;
	ad.opaque = obj;
	assert_non_null(lws_adopt_descriptor_vhost_via_info(&ad));
	assert_int_equal(write(pfd[1], "x", 1), 1);
	end = time(NULL) + 10;
	while (foreign_closed == 0 && time(NULL) < end)
		assert_true(lws_service(ctx, 100) >= 0);
	assert_int_equal(foreign_rx, 1);
	assert_int_equal(foreign_closed, 1);
	close(pfd[1]);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_foreign_destroy_ignored,
		    setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

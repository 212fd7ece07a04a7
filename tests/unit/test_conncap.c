/* SPDX-License-Identifier: MIT */
/*
 * conncap: a newcomer past a bound sheds the oldest untrusted connection
 * (of its own address when the per-peer cap is the bound), never a
 * trusted one; with none to shed it is refused; a shed connection is
 * forgotten (trust fails, gone is a no-op); the reserve holds places
 * that only trusted connections use.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "conncap.h"
#include "err.h"

static const unsigned char	 A[4] = { 10, 0, 0, 2 };
static const unsigned char	 B[4] = { 10, 0, 0, 3 };
static const unsigned char	 C[4] = { 10, 0, 0, 4 };
static char			 conns[64];	/* their addresses are the ids */

static void *
admit(struct conncap *cc, int i, const unsigned char *peer, int want)
{
	void	*shed = &conns[63];

	assert_int_equal(conncap_admit(cc, &conns[i], peer, 4, 0, 1000,
	    &shed), want);
	return shed;
}

static void
test_per_peer(void **state)
{
	struct conncap	*cc = conncap_new(16, 4, 3);
	unsigned	 u;

	assert_null(admit(cc, 0, A, 0));
	assert_null(admit(cc, 1, B, 0));
	assert_null(admit(cc, 2, A, 0));
	assert_null(admit(cc, 3, A, 0));
	/* A's fourth sheds A's oldest, not B's older one. */
	assert_ptr_equal(admit(cc, 4, A, 0), &conns[0]);
	assert_ptr_equal(admit(cc, 5, A, 0), &conns[2]);
	assert_int_equal(conncap_count(cc, &u), 4);
	assert_int_equal(u, 4);
	/* Shed: forgotten. */
	assert_int_equal(conncap_trust(cc, &conns[0]), ERR_NOT_FOUND);
	conncap_gone(cc, &conns[0]);
	assert_int_equal(conncap_count(cc, NULL), 4);
	/* Trusted ones are never shed: A's trusted three refuse a fourth. */
	assert_int_equal(conncap_trust(cc, &conns[3]), 0);
	assert_int_equal(conncap_trust(cc, &conns[4]), 0);
	assert_int_equal(conncap_trust(cc, &conns[5]), 0);
	assert_int_equal(conncap_trust(cc, &conns[5]), 0);
	admit(cc, 6, A, ERR_BUSY);
	conncap_gone(cc, &conns[4]);
	assert_null(admit(cc, 6, A, 0));
	assert_int_equal(conncap_count(cc, &u), 4);
	assert_int_equal(u, 2);
	conncap_free(cc);
}

static void
test_global(void **state)
{
	struct conncap	*cc = conncap_new(6, 2, 4);
	int		 i;

	/* Untrusted ones hold max - reserve = 4 places. */
	assert_null(admit(cc, 0, A, 0));
	assert_null(admit(cc, 1, B, 0));
	assert_null(admit(cc, 2, C, 0));
	assert_null(admit(cc, 3, A, 0));
	assert_ptr_equal(admit(cc, 4, B, 0), &conns[0]);
	assert_ptr_equal(admit(cc, 5, C, 0), &conns[1]);
	/* Trusted ones fill the reserve, then the rest. */
	for (i = 2; i <= 5; i++)
		assert_int_equal(conncap_trust(cc, &conns[i]), 0);
	assert_null(admit(cc, 6, A, 0));
	assert_null(admit(cc, 7, B, 0));
	assert_int_equal(conncap_count(cc, NULL), 6);
	/* Full: the oldest untrusted goes. */
	assert_ptr_equal(admit(cc, 8, C, 0), &conns[6]);
	assert_int_equal(conncap_trust(cc, &conns[7]), 0);
	assert_int_equal(conncap_trust(cc, &conns[8]), 0);
	/* Full of trusted ones: refused. */
	admit(cc, 9, A, ERR_BUSY);
	conncap_gone(cc, &conns[2]);
	assert_null(admit(cc, 9, A, 0));
	conncap_free(cc);
	conncap_free(NULL);
}

/* A ready connection is not shed within CONNCAP_READY_MS. */
static void
test_ready(void **state)
{
	struct conncap	*cc = conncap_new(16, 4, 2);
	void		*shed;

	assert_int_equal(conncap_admit(cc, &conns[0], A, 4, 0, 1000, &shed),
	    0);
	assert_int_equal(conncap_admit(cc, &conns[1], A, 4, 1, 1000, &shed),
	    0);
	/* The one that is not ready goes, though older ones come first. */
	assert_int_equal(conncap_admit(cc, &conns[2], A, 4, 0, 1001, &shed),
	    0);
	assert_ptr_equal(shed, &conns[0]);
	assert_int_equal(conncap_admit(cc, &conns[3], A, 4, 0, 1002, &shed),
	    0);
	assert_ptr_equal(shed, &conns[2]);
	/* Only ready ones left, within their time: refused. */
	assert_int_equal(conncap_admit(cc, &conns[4], A, 4, 1, 1003, &shed),
	    0);
	assert_ptr_equal(shed, &conns[3]);
	assert_int_equal(conncap_admit(cc, &conns[5], A, 4, 0, 1004, &shed),
	    ERR_BUSY);
	/* Past it, the oldest goes again. */
	assert_int_equal(conncap_admit(cc, &conns[5], A, 4, 0,
	    1000 + CONNCAP_READY_MS, &shed), 0);
	assert_ptr_equal(shed, &conns[1]);
	conncap_free(cc);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_per_peer),
		cmocka_unit_test(test_global),
		cmocka_unit_test(test_ready),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

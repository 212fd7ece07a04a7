#!/bin/bash
# SPDX-License-Identifier: MIT
# The store and lease unit tests (test_store, test_lease) again, against a
# real PostgreSQL 15 cluster of this test's own (tests/lib-postgres.sh):
# the same assertions must hold on both backends.  Skipped (77) when the
# server binaries are not installed.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/lib-postgres.sh"

pg_available || { echo "# no PostgreSQL server installed"; exit 77; }
trap 'rc=$?; pg_stop; (exit $rc); t_cleanup' EXIT
pg_start || t_fail "the PostgreSQL cluster did not start"
for t in test_store test_lease; do
	RAKAZO_TEST_STORE_URL=$PG_URL "$top_builddir/tests/unit/$t" ||
	    t_fail "$t against PostgreSQL"
done
echo "ok: test_store and test_lease against PostgreSQL"

/* SPDX-License-Identifier: MIT */
/*
 * Which state store a store or lease unit test runs against: a SQLite
 * file in the test's temporary directory, or, when RAKAZO_TEST_STORE_URL
 * names a PostgreSQL database (tests/unit/store-pg.sh starts one), that
 * database emptied before each test.  Header-only, after unit-tmpdir.h.
 */
#ifndef TESTS_UNIT_STORE_H
#define TESTS_UNIT_STORE_H

#include <stdlib.h>
#include <string.h>

#include <libpq-fe.h>

static inline const char *
unit_store_url(void)
{
	const char	*u = getenv("RAKAZO_TEST_STORE_URL");

	return u != NULL && *u != '\0' ? u : unit_tmpdir;
}

static inline int
unit_store_pg(void)
{
	return strncmp(unit_store_url(), "postgres", 8) == 0;
}

/* The backend store_backend() should report. */
static inline const char *
unit_store_backend(void)
{
	return unit_store_pg() ? "postgres" : "sqlite";
}

/* A fresh store per test: drop every table of the database.  0 or -1. */
static inline int
unit_store_reset(void)
{
	PGconn		*c;
	PGresult	*res;
	int		 ok;

	if (!unit_store_pg())
		return 0;
	c = PQconnectdb(unit_store_url());
	if (PQstatus(c) != CONNECTION_OK) {
		PQfinish(c);
		return -1;
	}
	res = PQexec(c, "DROP SCHEMA public CASCADE; CREATE SCHEMA public");
	ok = PQresultStatus(res) == PGRES_COMMAND_OK;
	PQclear(res);
	PQfinish(c);
	return ok ? 0 : -1;
}

#endif

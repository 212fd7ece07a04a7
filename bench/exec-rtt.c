/* SPDX-License-Identifier: MIT */
/*
 * Exec round trip: N sequential `true` commands through guestd's control
 * channel (one connection, as a controller holds it) against N local
 * `bash -c true` spawns in the same run.  Prints medians, p90 and the
 * ratio.  Built by `make benchmarks`; not part of `make check`.
 *
 *   exec-rtt URL SECRET-FILE [N]
 */
#include "autoconf.h"

#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>

#include <libwebsockets.h>

#include "err.h"
#include "timing.h"
#include "guest-client.h"
#include "token.h"

extern char **environ;

static void
report(const char *what, double *v, int n, double *median)
{
	bench_sort(v, (size_t)n);
	*median = v[n / 2];
	printf("%-28s n=%d median=%.0fus p90=%.0fus min=%.0fus\n", what, n,
	    v[n / 2], v[(n * 9) / 10], v[0]);
}

static int
exec_rtt_main(int argc, char **argv)
{
	struct gclient_opts	 o;
	struct gclient		*c;
	struct errmsg		 err;
	char			 secret[SECRET_MAX + 1];
	char			*bash_argv[] = { "bash", "-c", "true", NULL };
	double			*guest, *local, t0, mg, ml;
	json_t			*res;
	pid_t			 pid;
	int			 n = 1000, i, st, r;

	if (argc < 3) {
		fprintf(stderr, "usage: exec-rtt URL SECRET-FILE [N]\n");
		return 2;
	}
	if (argc > 3)
		n = atoi(argv[3]);
	if (n < 10)
		n = 10;
	if ((r = token_read_file(argv[2], secret, sizeof secret, 0)) != 0) {
		fprintf(stderr, "secret: %s\n", err_name(r));
		return 1;
	}
	lws_set_log_level(0, NULL);
	memset(&o, 0, sizeof o);
	o.url = argv[1];
	o.secret = secret;
	if (gclient_connect(&c, &o, &err) != 0) {
		fprintf(stderr, "connect: %s\n", err.msg);
		return 1;
	}
	guest = calloc((size_t)n, sizeof *guest);
	local = calloc((size_t)n, sizeof *local);
	for (i = 0; i < n; i++) {
		t0 = bench_now_us();
		r = gclient_call(c, "exec", json_pack("{s:s}", "command",
		    "true"), &res, &err);
		if (r != 0) {
			fprintf(stderr, "exec: %s\n", err.msg);
			return 1;
		}
		json_decref(res);
		guest[i] = bench_now_us() - t0;
	}
	for (i = 0; i < n; i++) {
		t0 = bench_now_us();
		if (posix_spawn(&pid, "/bin/bash", NULL, NULL, bash_argv,
		    environ) != 0 || waitpid(pid, &st, 0) != pid)
			return 1;
		local[i] = bench_now_us() - t0;
	}
	report("guestd exec `true`", guest, n, &mg);
	report("local spawn `bash -c true`", local, n, &ml);
	printf("ratio guestd/local (median): %.2f\n", mg / ml);
	gclient_free(c);
	return 0;
}

/* The body is a task on the client's loop (guest-client.h). */
int
main(int argc, char **argv)
{
	return gclient_main(argc, argv, exec_rtt_main);
}

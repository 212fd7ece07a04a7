/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: kubeconfig_parse (controller/kubeconfig.c) on
 * arbitrary YAML.  Invariants: no crash, leak or unbounded work (the
 * parser caps bytes and nodes and looks up by key, so alias graphs cost
 * their size); an accepted config has a server URL and, when it has
 * inline credentials, their decoded bytes; a refused one is ERR_CONFIG
 * with a sentence and leaves nothing allocated.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "kubeconfig.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct kubeconfig	 kc;
	struct errmsg		 e;
	int			 r;

	memset(&e, 0, sizeof e);
	r = kubeconfig_parse((const char *)data, size, "/kube", &kc, &e);
	if (r == 0) {
		if (kc.server == NULL || (strncmp(kc.server, "http://", 7) != 0 &&
		    strncmp(kc.server, "https://", 8) != 0))
			abort();
		if ((kc.ca.data == NULL && kc.ca.len != 0) ||
		    (kc.cert.data == NULL && kc.cert.len != 0))
			abort();
		if (kc.ca.data != NULL && kc.ca.file != NULL)
			abort();
		kubeconfig_release(&kc);
		if (kc.server != NULL || kc.token != NULL)
			abort();
	} else if (r != ERR_CONFIG || e.code != ERR_CONFIG ||
	    e.msg[0] == '\0' || kc.server != NULL || kc.token != NULL)
		abort();
	return 0;
}

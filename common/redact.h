/* SPDX-License-Identifier: MIT */
/*
 * Redaction of secrets in free text (doc/DESIGN.md X-5).  Used by every log and
 * error path.  It masks:
 *   - credentials in URLs:      scheme://user:pass@host -> scheme://[REDACTED]@host
 *   - Authorization / Proxy-Authorization / Cookie / Set-Cookie header values
 *   - "Bearer <tok>" and "Basic <tok>"
 *   - key=value and "key": "value" pairs whose key names a secret
 *     (token, secret, password, passwd, passphrase, key, apikey, api_key,
 *     credential, auth, session, cookie, signature, x-amz-*, and pass,
 *     pwd or sig as a component: DB_PASS, MYSQL_PWD, ?sig=)
 *   - capability paths: /screen/<tok>, /term/<tok>, ?token=<tok>
 *   - by value shape: API keys by prefix (sk-, sk-ant-, ghp_, gho_,
 *     github_pat_, glpat-, xoxb-, xoxp-, AKIA, AIza, sk_live_, npm_, hf_
 *     ...) when long and random enough, kept prefix + mask; JWTs
 *   - long options named like a secret with a separate value
 *     (--token X, --password X, --client-secret X)
 *   - command-line passwords: mysql/mariadb -pX, sshpass -p X,
 *     curl -u/--user[=]user:X, redis-cli -a X, docker/podman/nerdctl
 *     login -p X, aws configure set <secret-name> X (within that command
 *     only), and openssl's pass:X anywhere
 *   - PEM private-key blocks (the body between BEGIN and END lines),
 *     HashiCorp Vault tokens (hvs., hvb., hvr.), Slack and Discord
 *     webhook URLs (their path), presigned URLs' sig= and X-Amz-*
 * The mask is the literal "[REDACTED]".
 */
#ifndef COMMON_REDACT_H
#define COMMON_REDACT_H

#include <stddef.h>

#define REDACT_MASK "[REDACTED]"

/*
 * Copy src to dst (at most dstlen bytes including NUL), masking secrets.
 * Output is truncated, never overflowed.  Returns the length written.
 */
size_t	 redact_text(char *dst, size_t dstlen, const char *src);
/* Allocating form; never returns NULL (aborts on OOM). */
char	*redact_dup(const char *src);
/* 1 if a key/header/variable name names a secret (case-insensitive). */
int	 redact_key_is_secret(const char *key);

#endif

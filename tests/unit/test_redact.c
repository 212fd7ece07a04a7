/* SPDX-License-Identifier: MIT */
/*
 * redact: each secret shape of redact.h is masked, ordinary text passes
 * unchanged, output is bounded for every dstlen, and time stays linear.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "redact.h"

static void
check(const char *in, const char *want)
{
	char	 out[1024], *d;
	size_t	 n;

	n = redact_text(out, sizeof(out), in);
	if (strcmp(out, want) != 0)
		fail_msg("redact(%s)\n got  %s\n want %s", in, out, want);
	assert_int_equal(n, strlen(want));
	d = redact_dup(in);
	assert_string_equal(d, want);
	free(d);
}

static void
test_unchanged(void **state)
{
	static const char *const plain[] = {
		"",
		"hello world",
		"ts=2026-11-29T17:50:51.123Z level=info ident=guestd "
		    "event=exec.start id=7 pid=1234 cmd=\"ls -l /tmp\"",
		"listen=127.0.0.1:8080 peer=[::1]:5555",
		"https://example.com/path?x=1&y=2#frag",
		"https://auth.example.com:443/login",
		"keys=3 keyboard=us monkeys=2",
		"a basic idea, basic-auth off",
		"path=/home/user/screenshots/terminal/x",
		"mail user@example.com",
		"unicode \xc3\xa9t\xc3\xa9 ok",
		NULL
	};
	size_t	 i;

	for (i = 0; plain[i] != NULL; i++)
		check(plain[i], plain[i]);
}

static void
test_urls(void **state)
{
	check("fetch https://user:pa55@host.example/x?y",
	    "fetch https://[REDACTED]@host.example/x?y");
	check("s3://AKIAXXX@bucket/key", "s3://[REDACTED]@bucket/key");
	check("git+ssh://me:x@h:22/r.git", "git+ssh://[REDACTED]@h:22/r.git");
	check("u=\"http://a:b@c\"", "u=\"http://[REDACTED]@c\"");
}

static void
test_headers(void **state)
{
	check("Authorization: Bearer abc.def",
	    "Authorization: [REDACTED]");
	check("Proxy-Authorization: Basic dXNlcjpwYXNz\r\nHost: x",
	    "Proxy-Authorization: [REDACTED]\r\nHost: x");
	check("Cookie: sid=1; other=2\nnext line",
	    "Cookie: [REDACTED]\nnext line");
	check("Set-Cookie: a=b; Path=/", "Set-Cookie: [REDACTED]");
	check("hdr=\"Authorization: Bearer xyz\" peer=1",
	    "hdr=\"Authorization: [REDACTED]\" peer=1");
	check("X-Amz-Security-Token: FQoG", "X-Amz-Security-Token: [REDACTED]");
}

static void
test_bearer_basic(void **state)
{
	check("sent Bearer eyJhbGciOi.x_y-z+/= done",
	    "sent Bearer [REDACTED] done");
	check("basic  dXNlcjpwYXNz", "basic  [REDACTED]");
	check("BEARER\tabc", "BEARER\t[REDACTED]");
	check("Bearer x", "Bearer [REDACTED]");
	check("basic usage", "basic usage");
}

static void
test_key_value(void **state)
{
	check("token=abc user=bob", "token=[REDACTED] user=bob");
	check("GUESTD_TOKEN=s3cr3t", "GUESTD_TOKEN=[REDACTED]");
	check("--password=hunter2 -v", "--password=[REDACTED] -v");
	check("passwd='a b c' x=1", "passwd='[REDACTED]' x=1");
	check("secret=\"a \\\" b\" x=1", "secret=\"[REDACTED]\" x=1");
	check("api_key=1 apikey=2 key=3 AWS_SECRET_ACCESS_KEY=4 sshKey=5",
	    "api_key=[REDACTED] apikey=[REDACTED] key=[REDACTED] "
	    "AWS_SECRET_ACCESS_KEY=[REDACTED] sshKey=[REDACTED]");
	check("credentials=a auth=b session_id=c cookie=d signature=e",
	    "credentials=[REDACTED] auth=[REDACTED] session_id=[REDACTED] "
	    "cookie=[REDACTED] signature=[REDACTED]");
	check("X-Amz-Date=20260101 X-Amz-Credential=AK/x",
	    "X-Amz-Date=[REDACTED] X-Amz-Credential=[REDACTED]");
	check("password: hunter2", "password: [REDACTED]");
	check("token= next", "token= next");
	check("password = hunter2\nuser = bob",
	    "password = [REDACTED]\nuser = bob");
}

static void
test_json_pairs(void **state)
{
	check("{\"token\": \"abc\", \"id\": 7}",
	    "{\"token\": \"[REDACTED]\", \"id\": 7}");
	check("{\"password\":\"p\\\"q\",\"x\":1}",
	    "{\"password\":\"[REDACTED]\",\"x\":1}");
	check("{\"apiKey\": 12345}", "{\"apiKey\": [REDACTED]}");
	check("{\"Authorization\": \"Bearer x\"}",
	    "{\"Authorization\": \"[REDACTED]\"}");
	/* JSON inside a log_quote()d value: the quotes are escaped. */
	check("args=\"{\\\"secret\\\": \\\"s3\\\", \\\"n\\\": 1}\"",
	    "args=\"{\\\"secret\\\": \\\"[REDACTED]\\\", \\\"n\\\": 1}\"");
	check("{\"auth\": {\"user\": \"u\"}}", "{\"auth\": {\"user\": \"u\"}}");
}

static void
test_capabilities(void **state)
{
	check("GET /screen/AbC123-_x HTTP/1.1",
	    "GET /screen/[REDACTED] HTTP/1.1");
	check("url=http://h:1/term/tok?x=1", "url=http://h:1/term/[REDACTED]?x=1");
	check("ws://h/control?token=abc&v=1",
	    "ws://h/control?token=[REDACTED]&v=1");
	check("/screen/ alone", "/screen/ alone");
}

static void
test_command_passwords(void **state)
{
	check("mysql -uroot -pS3cretPw db", "mysql -uroot -p[REDACTED] db");
	check("mysqldump -h h -p'a b' db >x.sql",
	    "mysqldump -h h -p'[REDACTED]' db >x.sql");
	check("mysql -p\"s3 cr\" db", "mysql -p\"[REDACTED]\" db");
	check("mariadb -pS3c.r!t -e 'select 1'",
	    "mariadb -p[REDACTED] -e 'select 1'");
	check("/usr/bin/mysql --user=u -pZz9",
	    "/usr/bin/mysql --user=u -p[REDACTED]");
	check("sshpass -p hunter2 ssh -p 2222 u@h",
	    "sshpass -p [REDACTED] ssh -p 2222 u@h");
	check("sshpass -phunter2 scp f h:", "sshpass -p[REDACTED] scp f h:");
	check("curl -u alice:Pa55w0rd https://h/x",
	    "curl -u alice:[REDACTED] https://h/x");
	check("curl -s https://h/x --user bob:hunter2 -o f",
	    "curl -s https://h/x --user bob:[REDACTED] -o f");
	check("curl -ualice:Pa55 h", "curl -ualice:[REDACTED] h");
	check("curl -U proxy:pw -x p h", "curl -U proxy:[REDACTED] -x p h");
	check("redis-cli -a R3dis! ping", "redis-cli -a [REDACTED] ping");
	/* Inside a log_quote()d value. */
	check("event=exec.start cmd=\"mysql -pS3cret -e \\\"select 1\\\"\" x=1",
	    "event=exec.start cmd=\"mysql -p[REDACTED] -e \\\"select 1\\\"\" "
	    "x=1");
}

static void
test_secret_options(void **state)
{
	check("gh auth login --token ghx123 --verbose",
	    "gh auth login --token [REDACTED] --verbose");
	check("app --password hunter2 -v", "app --password [REDACTED] -v");
	check("app --token=abc --password=def",
	    "app --token=[REDACTED] --password=[REDACTED]");
	check("vault --client-secret \"a b\" x",
	    "vault --client-secret \"[REDACTED]\" x");
	check("x --api-key K1 --db-pass P2",
	    "x --api-key [REDACTED] --db-pass [REDACTED]");
	/* A flag followed by the next option or nothing keeps both. */
	check("mysql --password --verbose", "mysql --password --verbose");
	check("run --token", "run --token");
}

static void
test_assignments(void **state)
{
	check("DB_PASS=hunter2 ./run", "DB_PASS=[REDACTED] ./run");
	check("export SMTP_PASSWORD='x y' PGPASSWORD=z",
	    "export SMTP_PASSWORD='[REDACTED]' PGPASSWORD=[REDACTED]");
	check("MY_SECRET=a GH_TOKEN=b AWS_KEY=c CREDENTIALS=d X_AUTH=e",
	    "MY_SECRET=[REDACTED] GH_TOKEN=[REDACTED] AWS_KEY=[REDACTED] "
	    "CREDENTIALS=[REDACTED] X_AUTH=[REDACTED]");
	check("MYSQL_PWD=p1 dbPass=p2 pass=p3 passphrase=p4",
	    "MYSQL_PWD=[REDACTED] dbPass=[REDACTED] pass=[REDACTED] "
	    "passphrase=[REDACTED]");
}

static void
test_key_shapes(void **state)
{
	check("key sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z end",
	    "key sk-[REDACTED] end");
	check("sk-ant-api03-Xy7Zq2Wv9Ut4Sr1Pq6On3Ml8Kj5Ih0GfEdCbA-aBcD",
	    "sk-ant-[REDACTED]");
	check("echo ghp_1a2B3c4D5e6F7g8H9i0J1k2L3m4N5o6P7q8R done",
	    "echo ghp_[REDACTED] done");
	check("gho_abcdefghijklmnopqrstuvwxyz0123456789",
	    "gho_[REDACTED]");
	check("github_pat_11ABCDEFG0123456789_abcdefghijklmnop",
	    "github_pat_[REDACTED]");
	check("SLACK xoxb-123456789012-1234567890123-AbCdEfGh x",
	    "SLACK xoxb-[REDACTED] x");
	check("xoxp-2222222222-3333333333 x", "xoxp-[REDACTED] x");
	check("aws AKIAIOSFODNN7EXAMPLE us-east-1",
	    "aws AKIA[REDACTED] us-east-1");
	check("\"k\":\"sk_live_4eC39HqLyjWDarjtT1zdp7dc\"",
	    "\"k\":\"sk_live_[REDACTED]\"");
	check("AIzaSyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q",
	    "AIza[REDACTED]");
}

static void
test_jwt(void **state)
{
	check("t eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.sig-_nature9 x",
	    "t [REDACTED] x");
	check("jwt=eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.ab",
	    "jwt=[REDACTED]");
	/* Unsigned: the signature is empty. */
	check("eyJhbGciOiJub25lIn0.eyJzdWIiOiIxIn0. ok", "[REDACTED] ok");
}

/*
 * More shapes that carry no secret-looking name (issue 26): one row per
 * form, the input and what the log must read instead.
 */
static const struct shape_case {
	const char	*in;
	const char	*want;
} shape_cases[] = {
	/* curl's --user and --proxy-user with '=' */
	{ "curl --user=u:Xc1pw https://h/x",
	  "curl --user=u:[REDACTED] https://h/x" },
	{ "curl -s --proxy-user=p:Xc2pw -x p h",
	  "curl -s --proxy-user=p:[REDACTED] -x p h" },
	{ "curl --user='u:X c3' h", "curl --user='[REDACTED]' h" },
	/* docker login and its kin */
	{ "docker login -p Dk1pw -u bob reg.io",
	  "docker login -p [REDACTED] -u bob reg.io" },
	{ "docker login -u bob -pDk2pw reg.io",
	  "docker login -u bob -p[REDACTED] reg.io" },
	{ "docker --config /c login -p 'Dk 3' r",
	  "docker --config /c login -p '[REDACTED]' r" },
	{ "podman login --password Pd4pw q", "podman login --password "
	  "[REDACTED] q" },
	{ "nerdctl login -p Nd5pw r", "nerdctl login -p [REDACTED] r" },
	/* openssl's pass: arguments */
	{ "openssl enc -aes-256-cbc -pass pass:Os1pw -in f",
	  "openssl enc -aes-256-cbc -pass pass:[REDACTED] -in f" },
	{ "openssl rsa -passin pass:Os2pw -passout pass:'Os 3'",
	  "openssl rsa -passin pass:[REDACTED] -passout pass:'[REDACTED]'" },
	{ "openssl pkcs12 -password=pass:Os4pw",
	  "openssl pkcs12 -password=[REDACTED]" },
	/* aws configure set NAME VALUE */
	{ "aws configure set aws_secret_access_key Aw1sk --profile p",
	  "aws configure set aws_secret_access_key [REDACTED] --profile p" },
	{ "aws configure set default.aws_session_token Aw2tk",
	  "aws configure set default.aws_session_token [REDACTED]" },
	/* PEM private keys, raw and inside a log_quote()d value */
	{ "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAx\nabc==\n"
	  "-----END RSA PRIVATE KEY-----\nnext",
	  "-----BEGIN RSA PRIVATE KEY-----[REDACTED]"
	  "-----END RSA PRIVATE KEY-----\nnext" },
	{ "out=\"-----BEGIN OPENSSH PRIVATE KEY-----\\nb3Blbn\\n"
	  "-----END OPENSSH PRIVATE KEY-----\\n\" x=1",
	  "out=\"-----BEGIN OPENSSH PRIVATE KEY-----[REDACTED]"
	  "-----END OPENSSH PRIVATE KEY-----\\n\" x=1" },
	{ "cat k: -----BEGIN PRIVATE KEY-----\nMIIEvQ",
	  "cat k: -----BEGIN PRIVATE KEY-----[REDACTED]" },
	{ "-----BEGIN PGP PRIVATE KEY BLOCK-----\n\nlQOYBF\n"
	  "-----END PGP PRIVATE KEY BLOCK-----",
	  "-----BEGIN PGP PRIVATE KEY BLOCK-----[REDACTED]"
	  "-----END PGP PRIVATE KEY BLOCK-----" },
	/* webhooks whose path is the credential */
	{ "post https://hooks.slack.com/services/T0001/B0002/Sl1ckSecret ok",
	  "post https://hooks.slack.com/services/[REDACTED] ok" },
	{ "url=\"https://hooks.slack.com/workflows/T1/A2/3/Wf2\"",
	  "url=\"https://hooks.slack.com/workflows/[REDACTED]\"" },
	{ "https://discord.com/api/webhooks/123/Dc3tok x",
	  "https://discord.com/api/webhooks/[REDACTED] x" },
	/* presigned URLs: Azure SAS sig=, S3 X-Amz-Signature= */
	{ "https://a.blob.core.windows.net/c/b?sv=2022-11-02&sig=Az1%2Bs&sp=r",
	  "https://a.blob.core.windows.net/c/b?sv=2022-11-02&sig=[REDACTED]"
	  "&sp=r" },
	{ "https://b.s3.amazonaws.com/k?X-Amz-Date=20260101T000000Z&"
	  "X-Amz-Signature=Am1sig&x=1",
	  "https://b.s3.amazonaws.com/k?X-Amz-Date=[REDACTED]&"
	  "X-Amz-Signature=[REDACTED]&x=1" },
	/* Vault tokens */
	{ "VAULT_TOKEN hvs.CAESIJlWhXyZ1234abcdEFGHijklMNOP ok",
	  "VAULT_TOKEN hvs.[REDACTED] ok" },
	{ "vault login hvb.AAAAAQJzZ2V0dGluZ3NfdG9rZW5fYmF0Y2g x",
	  "vault login hvb.[REDACTED] x" },
	{ NULL, NULL }
};

/* ... and their near misses: each passes unchanged. */
static const char *const shape_plain[] = {
	"docker run -p 8080:80 img", "docker ps -a; ls -p",
	"podman build -p x .", "curl --user=alice https://h",
	"openssl enc -pass env:PW -in f", "openssl rsa -passin file:/p",
	"tests passed: 5, pass:", "bypass:1",
	"aws configure set region us-east-1", "aws s3 cp secret.txt s3://b/",
	"-----BEGIN CERTIFICATE-----\nMIIC\n-----END CERTIFICATE-----",
	"-----BEGIN PUBLIC KEY-----\nMFkw\n-----END PUBLIC KEY-----",
	"https://hooks.slack.com/ https://example.com/services/x/y",
	"signal=15 design=x sigma=2", "hvs.short hvs.abcdefghijklmnopqrstuvwxyz",
	NULL
};

static void
test_more_shapes(void **state)
{
	size_t	 i;

	for (i = 0; shape_cases[i].in != NULL; i++)
		check(shape_cases[i].in, shape_cases[i].want);
	for (i = 0; shape_plain[i] != NULL; i++)
		check(shape_plain[i], shape_plain[i]);
}

/* Near misses: each must pass unchanged (no hidden command). */
static void
test_near_misses(void **state)
{
	static const char *const plain[] = {
		"ls -p /tmp", "mkdir -p a/b/c", "gcc -pthread -pipe x.c",
		"grep -u x f", "sort -u f | uniq -u", "ssh -p 2222 u@h",
		"docker run -u 1000:1000 img", "sudo -u postgres psql",
		"tar -xpf a.tar", "ps -u root", "git add -u",
		"mysql -p db", "mysql -P 3306 -h h db",
		"curl -u alice https://h/x", "curl -s -o out https://h/x",
		"ls; -pfoo", "echo mysql; ls -palh",
		"sshpass -f pwfile ssh -p 22 h",
		"cmd=\"mysql -u root -p\" cwd=/w",
		"pip install sk-learn scikit-learn",
		"sk-learn-tutorial-for-beginners-2024",
		"sk-abcdefghijklmnopqrstuvwxyz",
		"AKIATOOSHORT AKIAIOSFODNN7EXAMPLEX akia1234567890123456",
		"ghp_short xoxb- xoxb-12 github_pat_",
		"eyJ eyJhbGciOi.x eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0",
		"bypass=1 passthrough=2 compass=3 passenger=4",
		"PWD=/home/u OLDPWD=/tmp", "version 1.2.3 file.tar.gz",
		"--tokens 5 --password-file /etc/p --passes 3",
		NULL
	};
	size_t	 i;

	for (i = 0; plain[i] != NULL; i++)
		check(plain[i], plain[i]);
}

static void
test_bounds(void **state)
{
	const char	*in = "token=abcdef and more text here";
	char		 full[128], out[128];
	size_t		 n, i, flen;

	flen = redact_text(full, sizeof(full), in);
	assert_int_equal(redact_text(out, 0, in), 0);
	out[0] = 'X';
	assert_int_equal(redact_text(out, 1, in), 0);
	assert_int_equal(out[0], '\0');
	for (i = 1; i <= flen + 2; i++) {
		memset(out, 'Z', sizeof(out));
		n = redact_text(out, i, in);
		assert_true(n < i);
		assert_int_equal(strlen(out), n);
		assert_int_equal(out[i], 'Z');
		assert_memory_equal(out, full, n);
		/* A cut never shows bytes of the secret. */
		assert_null(strstr(out, "abc"));
	}
	assert_int_equal(redact_text(out, sizeof(out), NULL), 0);
}

static void
test_linear(void **state)
{
	static const char *const units[] = {
		"a", "token", "\"token\" ", "Bearer ", "http://", "/screen",
		"x=", "\\\"", "mysql -p", "curl -u a", "--token ",
		"eyJaaaaaaaaaaa.", "sk-", NULL
	};
	size_t	 big = 1 << 20, i, j, ul;
	char	*in, *out;
	clock_t	 t0;

	in = malloc(big + 1);
	out = malloc(big * 12);
	assert_non_null(in);
	assert_non_null(out);
	for (i = 0; units[i] != NULL; i++) {
		ul = strlen(units[i]);
		for (j = 0; j + ul <= big; j += ul)
			memcpy(in + j, units[i], ul);
		in[j] = '\0';
		t0 = clock();
		redact_text(out, big * 12, in);
		/* Quadratic behaviour on 1 MiB would take minutes. */
		assert_true((double)(clock() - t0) / CLOCKS_PER_SEC < 5.0);
	}
	free(in);
	free(out);
}

static void
test_key_is_secret(void **state)
{
	assert_true(redact_key_is_secret("GUESTD_TOKEN"));
	assert_true(redact_key_is_secret("Authorization"));
	assert_true(redact_key_is_secret("x-amz-date"));
	assert_true(redact_key_is_secret("api-key"));
	assert_true(redact_key_is_secret("KEY"));
	assert_false(redact_key_is_secret("listen"));
	assert_false(redact_key_is_secret("keyboard"));
	assert_false(redact_key_is_secret("max-size"));
	assert_false(redact_key_is_secret(""));
	assert_false(redact_key_is_secret(NULL));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_unchanged),
		cmocka_unit_test(test_urls),
		cmocka_unit_test(test_headers),
		cmocka_unit_test(test_bearer_basic),
		cmocka_unit_test(test_key_value),
		cmocka_unit_test(test_json_pairs),
		cmocka_unit_test(test_capabilities),
		cmocka_unit_test(test_command_passwords),
		cmocka_unit_test(test_secret_options),
		cmocka_unit_test(test_assignments),
		cmocka_unit_test(test_key_shapes),
		cmocka_unit_test(test_jwt),
		cmocka_unit_test(test_near_misses),
		cmocka_unit_test(test_more_shapes),
		cmocka_unit_test(test_bounds),
		cmocka_unit_test(test_linear),
		cmocka_unit_test(test_key_is_secret),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

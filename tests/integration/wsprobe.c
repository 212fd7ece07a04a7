/* SPDX-License-Identifier: MIT */
/*
 * wsprobe: a scriptable raw websocket client for the integration tests.
 * It speaks to guestd's /control without any of rakazoctl's manners, so a
 * test can send exactly the bytes it wants (bad JSON, oversize messages,
 * hostile frames, a reader that stalls) and see exactly what comes back.
 *
 *   wsprobe --url ws://127.0.0.1:PORT [--secret-file F | --secret S |
 *           --no-auth] [--path /control] [--subprotocol P |
 *           --no-subprotocol] [--hello]  < script
 *
 * Script lines (one command each):
 *   text <rest>          send a text message
 *   textfile <path>      send a file as one text message
 *   textbig <n>          send an n-byte text message of JSON with padding
 *   bin <id> <ch> <fl> <len>  send a frame header + len bytes of 'x'
 *   binraw <hex>         send raw bytes as a binary message
 *   recv                 print the next message (10 s max)
 *   expect <substr>      skip until a text message containing substr
 *   drain <substr>       the same, reading everything in between
 *   count                print "bytes N": binary payload received so far
 *   stall <ms>           stop reading for ms milliseconds
 * Output: "text <json>", "bin <id> <ch> <flags> <len>", "closed <code>
 * <reason>" (then exit 0), "timeout" (exit 4), "connect-failed <why>"
 * (exit 3).  Not installed.
 */
#include "autoconf.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>
#include <libwebsockets.h>

#include "proto.h"

#define PROBE_RECV_TIMEOUT_MS	10000
#define PROBE_MAX_MSG		(64 * 1024 * 1024)

enum probe_kind { PROBE_TEXT, PROBE_BIN, PROBE_CLOSED };

struct probe_msg {
	struct probe_msg	*next;
	enum probe_kind		 kind;
	size_t			 len;
	char			*data;		/* NUL-terminated copy */
};

struct probe_out {
	struct probe_out	*next;
	int			 binary;
	size_t			 len;
	unsigned char		 data[];	/* LWS_PRE + len */
};

struct probe {
	struct lws_context	*ctx;
	struct lws		*wsi;
	int			 open;
	int			 closed;
	int			 failed;
	char			 fail_why[256];
	int			 closing;

	const char		*auth;		/* "Bearer ..." or NULL */

	struct probe_out	*ohead, **otail;
	struct probe_msg	*rhead, **rtail;
	char			*rx;
	size_t			 rxlen, rxcap;
	int			 rx_binary;
	unsigned long long	 bin_bytes;

	int			 close_code;
	char			 close_reason[128];

	lws_sorted_usec_list_t	 sul_timeout;
	int			 timed_out;
	lws_sorted_usec_list_t	 sul_stall;
	int			 stall_done;
};

static struct probe	 P;

static void *
probe_alloc(size_t n)
{
	void	*p = malloc(n ? n : 1);

	if (p == NULL) {
		fprintf(stderr, "wsprobe: out of memory\n");
		exit(1);
	}
	return p;
}

static void
probe_push(enum probe_kind kind, const char *data, size_t len)
{
	struct probe_msg	*m = probe_alloc(sizeof(*m));

	m->next = NULL;
	m->kind = kind;
	m->len = len;
	m->data = probe_alloc(len + 1);
	if (len > 0)
		memcpy(m->data, data, len);
	m->data[len] = '\0';
	*P.rtail = m;
	P.rtail = &m->next;
}

static void
probe_send(int binary, const void *p, size_t n)
{
	struct probe_out	*o;

	if (P.closed || P.wsi == NULL)
		return;		/* the next recv reports the close */
	o = probe_alloc(sizeof(*o) + LWS_PRE + n);
	o->next = NULL;
	o->binary = binary;
	o->len = n;
	memcpy(o->data + LWS_PRE, p, n);
	*P.otail = o;
	P.otail = &o->next;
	lws_callback_on_writable(P.wsi);
}

static void
probe_rx(struct lws *wsi, const void *in, size_t len)
{
	if (lws_is_first_fragment(wsi)) {
		P.rxlen = 0;
		P.rx_binary = lws_frame_is_binary(wsi);
	}
	if (P.rxlen + len > PROBE_MAX_MSG) {
		fprintf(stderr, "wsprobe: message over %d bytes\n",
		    PROBE_MAX_MSG);
		exit(1);
	}
	if (P.rxlen + len > P.rxcap) {
		P.rxcap = (P.rxlen + len) * 2;
		P.rx = realloc(P.rx, P.rxcap);
		if (P.rx == NULL) {
			fprintf(stderr, "wsprobe: out of memory\n");
			exit(1);
		}
	}
	memcpy(P.rx + P.rxlen, in, len);
	P.rxlen += len;
	if (!lws_is_final_fragment(wsi))
		return;
	if (P.rx_binary) {
		if (P.rxlen > PROTO_FRAME_HDR)
			P.bin_bytes += P.rxlen - PROTO_FRAME_HDR;
		probe_push(PROBE_BIN, P.rx, P.rxlen);
	} else
		probe_push(PROBE_TEXT, P.rx, P.rxlen);
	P.rxlen = 0;
}

static int
probe_writeable(struct lws *wsi)
{
	struct probe_out	*o;
	int			 n;

	if (P.closing && P.ohead == NULL) {
		lws_close_reason(wsi, LWS_CLOSE_STATUS_NORMAL, NULL, 0);
		return -1;
	}
	if ((o = P.ohead) == NULL)
		return 0;
	P.ohead = o->next;
	if (P.ohead == NULL)
		P.otail = &P.ohead;
	n = lws_write(wsi, o->data + LWS_PRE, o->len, o->binary ?
	    LWS_WRITE_BINARY : LWS_WRITE_TEXT);
	free(o);
	if (n < 0)
		return -1;
	if (P.ohead != NULL || P.closing)
		lws_callback_on_writable(wsi);
	return 0;
}

static int
probe_cb(struct lws *wsi, enum lws_callback_reasons reason, void *user,
    void *in, size_t len)
{
	unsigned	 status;

	switch (reason) {
	case LWS_CALLBACK_CLIENT_APPEND_HANDSHAKE_HEADER:
		if (P.auth != NULL) {
			unsigned char **p = in, *end = *p + len;

			if (lws_add_http_header_by_token(wsi,
			    WSI_TOKEN_HTTP_AUTHORIZATION,
			    (const unsigned char *)P.auth,
			    (int)strlen(P.auth), p, end))
				return -1;
		}
		break;
	case LWS_CALLBACK_CLIENT_CONNECTION_ERROR:
		status = lws_http_client_http_response(wsi);
		if (status != 0)
			snprintf(P.fail_why, sizeof(P.fail_why), "%u", status);
		else
			snprintf(P.fail_why, sizeof(P.fail_why), "%s",
			    in != NULL ? (const char *)in : "unknown");
		P.failed = 1;
		P.wsi = NULL;
		break;
	case LWS_CALLBACK_CLIENT_ESTABLISHED:
		P.open = 1;
		if (P.ohead != NULL)
			lws_callback_on_writable(wsi);
		break;
	case LWS_CALLBACK_CLIENT_RECEIVE:
		probe_rx(wsi, in, len);
		break;
	case LWS_CALLBACK_CLIENT_WRITEABLE:
		return probe_writeable(wsi);
	case LWS_CALLBACK_WS_PEER_INITIATED_CLOSE:
		if (len >= 2) {
			const unsigned char *b = in;
			size_t rl = len - 2;

			P.close_code = (b[0] << 8) | b[1];
			if (rl >= sizeof(P.close_reason))
				rl = sizeof(P.close_reason) - 1;
			memcpy(P.close_reason, b + 2, rl);
			P.close_reason[rl] = '\0';
		} else
			P.close_code = 1005;
		break;
	case LWS_CALLBACK_CLIENT_CLOSED:
		if (!P.closed) {
			char	 line[200];
			int	 n;

			n = snprintf(line, sizeof(line), "%d %s",
			    P.close_code ? P.close_code : 1006,
			    P.close_reason);
			probe_push(PROBE_CLOSED, line, (size_t)n);
		}
		P.closed = 1;
		P.wsi = NULL;
		break;
	default:
		break;
	}
	return 0;
}

static const struct lws_protocols probe_protocols[] = {
	{ "wsprobe", probe_cb, 0, 65536, 0, NULL, 0 },
	{ NULL, NULL, 0, 0, 0, NULL, 0 }
};

/*
 * lws runs ripe timers just before it polls: without the wake-up the poll
 * would sleep on until the next unrelated event.
 */
static void
probe_timeout_cb(lws_sorted_usec_list_t *sul)
{
	P.timed_out = 1;
	lws_cancel_service(P.ctx);
}

static void
probe_stall_cb(lws_sorted_usec_list_t *sul)
{
	P.stall_done = 1;
	lws_cancel_service(P.ctx);
}

/* Next received message, or NULL after PROBE_RECV_TIMEOUT_MS of nothing. */
static struct probe_msg *
probe_next(void)
{
	struct probe_msg	*m;

	P.timed_out = 0;
	lws_sul_schedule(P.ctx, 0, &P.sul_timeout, probe_timeout_cb,
	    (lws_usec_t)PROBE_RECV_TIMEOUT_MS * 1000);
	while (P.rhead == NULL && !P.timed_out)
		lws_service(P.ctx, 0);
	lws_sul_cancel(&P.sul_timeout);
	if ((m = P.rhead) == NULL)
		return NULL;
	P.rhead = m->next;
	if (P.rhead == NULL)
		P.rtail = &P.rhead;
	return m;
}

static void
probe_msg_free(struct probe_msg *m)
{
	free(m->data);
	free(m);
}

static void
probe_print(struct probe_msg *m)
{
	const unsigned char	*b = (const unsigned char *)m->data;

	switch (m->kind) {
	case PROBE_TEXT:
		printf("text %s\n", m->data);
		break;
	case PROBE_BIN:
		if (m->len >= PROTO_FRAME_HDR)
			printf("bin %u %u %u %zu\n",
			    (unsigned)b[0] << 24 | (unsigned)b[1] << 16 |
			    (unsigned)b[2] << 8 | b[3], b[4], b[5],
			    m->len - PROTO_FRAME_HDR);
		else
			printf("bin short %zu\n", m->len);
		break;
	case PROBE_CLOSED:
		printf("closed %s\n", m->data);
		break;
	}
	fflush(stdout);
}

/* Consume a message: print and exit on close or timeout. */
static struct probe_msg *
probe_next_or_exit(void)
{
	struct probe_msg	*m = probe_next();

	if (m == NULL) {
		printf("timeout\n");
		fflush(stdout);
		exit(4);
	}
	if (m->kind == PROBE_CLOSED) {
		probe_print(m);
		exit(0);
	}
	return m;
}

/* Wait until everything queued has been handed to the socket. */
static void
probe_flush(void)
{
	while (P.ohead != NULL && !P.closed)
		lws_service(P.ctx, 0);
}

static void
probe_cmd_expect(const char *sub)
{
	struct probe_msg	*m;

	for (;;) {
		m = probe_next_or_exit();
		if (m->kind == PROBE_TEXT && strstr(m->data, sub) != NULL) {
			probe_print(m);
			probe_msg_free(m);
			return;
		}
		probe_msg_free(m);
	}
}

static void
probe_cmd_textbig(size_t n)
{
	static const char	 pre[] = "{\"id\":9,\"op\":\"health\","
	    "\"args\":{\"pad\":\"";
	static const char	 post[] = "\"}}";
	size_t			 fixed = sizeof(pre) - 1 + sizeof(post) - 1;
	char			*s;

	if (n < fixed)
		n = fixed;
	s = probe_alloc(n);
	memcpy(s, pre, sizeof(pre) - 1);
	memset(s + sizeof(pre) - 1, 'x', n - fixed);
	memcpy(s + n - (sizeof(post) - 1), post, sizeof(post) - 1);
	probe_send(0, s, n);
	free(s);
	probe_flush();
}

static void
probe_cmd_bin(const char *argsline)
{
	unsigned long long	 id, ch, fl, len;
	unsigned char		*b;

	if (sscanf(argsline, "%llu %llu %llu %llu", &id, &ch, &fl, &len) !=
	    4 || id > UINT32_MAX || ch > 255 || fl > 255 ||
	    len > PROBE_MAX_MSG) {
		fprintf(stderr, "wsprobe: bad bin line\n");
		exit(2);
	}
	b = probe_alloc(PROTO_FRAME_HDR + len);
	b[0] = (unsigned char)(id >> 24);
	b[1] = (unsigned char)(id >> 16);
	b[2] = (unsigned char)(id >> 8);
	b[3] = (unsigned char)id;
	b[4] = (unsigned char)ch;
	b[5] = (unsigned char)fl;
	memset(b + PROTO_FRAME_HDR, 'x', len);
	probe_send(1, b, PROTO_FRAME_HDR + len);
	free(b);
	probe_flush();
}

static void
probe_cmd_binraw(const char *hex)
{
	size_t		 n = 0, i;
	unsigned char	*b;
	unsigned	 v;

	b = probe_alloc(strlen(hex) / 2 + 1);
	for (i = 0; hex[i] != '\0' && hex[i + 1] != '\0'; i += 2) {
		if (!isxdigit((unsigned char)hex[i]) ||
		    !isxdigit((unsigned char)hex[i + 1]) ||
		    sscanf(hex + i, "%2x", &v) != 1) {
			fprintf(stderr, "wsprobe: bad hex\n");
			exit(2);
		}
		b[n++] = (unsigned char)v;
	}
	probe_send(1, b, n);
	free(b);
	probe_flush();
}

static void
probe_cmd_textfile(const char *path)
{
	FILE	*f;
	char	*s;
	long	 n;

	if ((f = fopen(path, "rb")) == NULL || fseek(f, 0, SEEK_END) != 0 ||
	    (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0) {
		fprintf(stderr, "wsprobe: cannot read %s\n", path);
		exit(2);
	}
	s = probe_alloc((size_t)n);
	if (n > 0 && fread(s, 1, (size_t)n, f) != (size_t)n) {
		fprintf(stderr, "wsprobe: cannot read %s\n", path);
		exit(2);
	}
	fclose(f);
	probe_send(0, s, (size_t)n);
	free(s);
	probe_flush();
}

static void
probe_cmd_stall(long ms)
{
	if (P.wsi != NULL)
		lws_rx_flow_control(P.wsi, 0);
	P.stall_done = 0;
	lws_sul_schedule(P.ctx, 0, &P.sul_stall, probe_stall_cb,
	    (lws_usec_t)ms * 1000);
	while (!P.stall_done)
		lws_service(P.ctx, 0);
	if (P.wsi != NULL)
		lws_rx_flow_control(P.wsi, 1);
}

static void
probe_run_line(char *line)
{
	struct probe_msg	*m;
	char			*arg;

	line[strcspn(line, "\n")] = '\0';
	if (*line == '\0' || *line == '#')
		return;
	arg = strchr(line, ' ');
	if (arg != NULL)
		*arg++ = '\0';
	else
		arg = line + strlen(line);
	if (strcmp(line, "text") == 0) {
		probe_send(0, arg, strlen(arg));
		probe_flush();
	} else if (strcmp(line, "textfile") == 0)
		probe_cmd_textfile(arg);
	else if (strcmp(line, "textbig") == 0)
		probe_cmd_textbig(strtoull(arg, NULL, 10));
	else if (strcmp(line, "bin") == 0)
		probe_cmd_bin(arg);
	else if (strcmp(line, "binraw") == 0)
		probe_cmd_binraw(arg);
	else if (strcmp(line, "recv") == 0) {
		m = probe_next_or_exit();
		probe_print(m);
		probe_msg_free(m);
	} else if (strcmp(line, "expect") == 0 || strcmp(line, "drain") == 0)
		probe_cmd_expect(arg);
	else if (strcmp(line, "count") == 0) {
		printf("bytes %llu\n", P.bin_bytes);
		fflush(stdout);
	} else if (strcmp(line, "stall") == 0)
		probe_cmd_stall(strtol(arg, NULL, 10));
	else {
		fprintf(stderr, "wsprobe: unknown command '%s'\n", line);
		exit(2);
	}
}

static char *
probe_read_secret(const char *path)
{
	char	 buf[4097];
	FILE	*f;
	size_t	 n;

	if ((f = fopen(path, "r")) == NULL) {
		fprintf(stderr, "wsprobe: cannot open the secret file\n");
		exit(2);
	}
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	buf[strcspn(buf, "\r\n")] = '\0';
	return strdup(buf);
}

/* A response (not an event) to request id. */
static int
probe_is_reply(struct probe_msg *m, json_int_t id)
{
	json_t	*j;
	int	 yes;

	if (m->kind != PROBE_TEXT)
		return 0;
	j = json_loadb(m->data, m->len, 0, NULL);
	yes = json_is_object(j) && json_object_get(j, "event") == NULL &&
	    json_integer_value(json_object_get(j, "id")) == id;
	json_decref(j);
	return yes;
}

static void
probe_usage(void)
{
	fprintf(stderr, "usage: wsprobe --url ws://HOST:PORT [--secret-file F "
	    "| --secret S | --no-auth] [--path P] [--subprotocol P | "
	    "--no-subprotocol] [--hello] < script\n");
	exit(2);
}

int
main(int argc, char **argv)
{
	static const struct option	 opts[] = {
		{ "url", required_argument, NULL, 'u' },
		{ "secret-file", required_argument, NULL, 'f' },
		{ "secret", required_argument, NULL, 's' },
		{ "no-auth", no_argument, NULL, 'n' },
		{ "path", required_argument, NULL, 'p' },
		{ "subprotocol", required_argument, NULL, 'P' },
		{ "no-subprotocol", no_argument, NULL, 'N' },
		{ "hello", no_argument, NULL, 'H' },
		{ NULL, 0, NULL, 0 }
	};
	struct lws_context_creation_info	 info;
	struct lws_client_connect_info		 ci;
	const char	*url = NULL, *path = PROTO_PATH;
	const char	*subproto = PROTO_SUBPROTOCOL;
	char		*secret = NULL, host[256], hosthdr[300], *line = NULL;
	size_t		 linecap = 0;
	char		*auth = NULL, *colon, *slash;
	struct probe_msg *m;
	int		 ch, hello = 0, noauth = 0, port;

	while ((ch = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (ch) {
		case 'u': url = optarg; break;
		case 'f': secret = probe_read_secret(optarg); break;
		case 's': secret = strdup(optarg); break;
		case 'n': noauth = 1; break;
		case 'p': path = optarg; break;
		case 'P': subproto = optarg; break;
		case 'N': subproto = NULL; break;
		case 'H': hello = 1; break;
		default: probe_usage();
		}
	}
	if (url == NULL || strncmp(url, "ws://", 5) != 0 ||
	    (secret == NULL && !noauth))
		probe_usage();
	snprintf(host, sizeof(host), "%s", url + 5);
	if ((slash = strchr(host, '/')) != NULL)
		*slash = '\0';
	if ((colon = strrchr(host, ':')) == NULL)
		probe_usage();
	*colon = '\0';
	port = atoi(colon + 1);
	snprintf(hosthdr, sizeof(hosthdr), "%s:%d", host, port);
	if (secret != NULL && !noauth) {
		if (asprintf(&auth, "Bearer %s", secret) < 0)
			exit(1);
		P.auth = auth;
	}

	lws_set_log_level(0, NULL);
	P.otail = &P.ohead;
	P.rtail = &P.rhead;
	memset(&info, 0, sizeof(info));
	info.port = CONTEXT_PORT_NO_LISTEN;
	info.protocols = probe_protocols;
	info.gid = -1;
	info.uid = -1;
	if ((P.ctx = lws_create_context(&info)) == NULL) {
		fprintf(stderr, "wsprobe: cannot create the lws context\n");
		return 1;
	}
	memset(&ci, 0, sizeof(ci));
	ci.context = P.ctx;
	ci.address = host;
	ci.port = port;
	ci.path = path;
	ci.host = hosthdr;
	ci.origin = hosthdr;
	ci.protocol = subproto;
	ci.local_protocol_name = "wsprobe";
	ci.pwsi = &P.wsi;
	if (lws_client_connect_via_info(&ci) == NULL && !P.failed) {
		P.failed = 1;
		snprintf(P.fail_why, sizeof(P.fail_why), "connect");
	}
	P.timed_out = 0;
	lws_sul_schedule(P.ctx, 0, &P.sul_timeout, probe_timeout_cb,
	    (lws_usec_t)PROBE_RECV_TIMEOUT_MS * 1000);
	while (!P.open && !P.failed && !P.closed && !P.timed_out)
		lws_service(P.ctx, 0);
	lws_sul_cancel(&P.sul_timeout);
	if (!P.open) {
		printf("connect-failed %s\n", P.failed ? P.fail_why :
		    P.timed_out ? "timeout" : "closed");
		fflush(stdout);
		lws_context_destroy(P.ctx);
		free(secret);
		free(auth);
		return 3;
	}

	if (hello) {
		static const char hmsg[] =
		    "{\"id\":1,\"op\":\"hello\",\"args\":{\"version\":1}}";

		probe_send(0, hmsg, sizeof(hmsg) - 1);
		probe_flush();
		for (;;) {
			m = probe_next_or_exit();
			if (probe_is_reply(m, 1)) {
				probe_msg_free(m);
				break;
			}
			probe_msg_free(m);
		}
	}

	while (getline(&line, &linecap, stdin) != -1)
		probe_run_line(line);
	free(line);

	/* Close politely and wait (bounded) for the peer to agree. */
	if (P.wsi != NULL && !P.closed) {
		P.closing = 1;
		lws_callback_on_writable(P.wsi);
		P.timed_out = 0;
		lws_sul_schedule(P.ctx, 0, &P.sul_timeout, probe_timeout_cb,
		    2 * LWS_US_PER_SEC);
		while (!P.closed && !P.timed_out)
			lws_service(P.ctx, 0);
		lws_sul_cancel(&P.sul_timeout);
	}
	lws_context_destroy(P.ctx);
	free(secret);
	free(auth);
	return 0;
}

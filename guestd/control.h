/* SPDX-License-Identifier: MIT */
/*
 * The control channel (doc/DESIGN.md G-31): the /control websocket the
 * controller speaks to.  control.c authenticates, reassembles messages
 * under hard caps, dispatches requests to the op table, queues replies,
 * events and binary frames, and applies backpressure:
 *
 *   outbound: producers check control_out_full() and, when it says so,
 *     register with control_stream_pause(); the stream's resume() is called
 *     once the queue drains below the low-water mark.  Nothing is produced
 *     while a controller does not read, so memory stays bounded.
 *   inbound:  binary frames for request id go to that stream's data()
 *     callback; when it returns ERR_BUSY the connection stops reading
 *     (TCP backpressure) until control_stream_rx_resume() is called, and the
 *     same frame is offered again then.
 */
#ifndef GUESTD_CONTROL_H
#define GUESTD_CONTROL_H

#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

#include "queue-compat.h"

struct lws_protocols;
struct control_conn;

/* Outbound queue marks, in bytes. */
#define CONTROL_OUT_HIGH	(2 * 1024 * 1024)
#define CONTROL_OUT_LOW		(512 * 1024)

struct control_stream;
struct control_stream_ops {
	/* Outbound space is available again (after a pause). */
	void	(*resume)(struct control_stream *s);
	/*
	 * Inbound binary frame for this stream.  Return 0 when consumed,
	 * ERR_BUSY to be offered the same frame again after
	 * control_stream_rx_resume(), or another ERR_* to fail the request
	 * (the stream must then reply and close itself).
	 */
	int	(*data)(struct control_stream *s, const uint8_t *p, size_t n,
		    int end);
	/* The connection is going away: release everything, reply nothing. */
	void	(*abort)(struct control_stream *s);
};

/* Embed in the owner's struct; control.c links it into the connection. */
struct control_stream {
	const struct control_stream_ops	*ops;
	struct control_conn		*conn;
	uint32_t			 id;
	int				 paused;
	LIST_ENTRY(control_stream)	 entry;	/* in conn's, while conn set */
};

/* An op handler: reply now or later.  Return 0 when it has replied or
 * will reply; return ERR_* to have control.c reply with that error (and an
 * optional sentence put in detail). */
typedef int	(*control_op_fn)(struct control_conn *c, uint32_t id,
		    json_t *args, char *detail, size_t detaillen);

struct control_op {
	const char	*name;
	control_op_fn	 fn;
	int		 mutating;	/* checks bot + fence (G-32) */
};

extern const struct lws_protocols control_protocol;

/* hello succeeded on this connection: other ops are allowed from now. */
void	 control_hello_done(struct control_conn *c);

/* Set at start-up by main.c. */
void	 control_set_secret(const char *secret);
void	 control_set_ops(const struct control_op *ops, size_t n);
/* Close every connection (shutdown). */
void	 control_close_all(void);
unsigned control_count(void);

/* Replies: each consumes (steals) result / body. */
int	 control_reply(struct control_conn *c, uint32_t id, json_t *result);
int	 control_reply_error(struct control_conn *c, uint32_t id, int code,
	    const char *detail);
/* The same with extra fields in the error object (extra is stolen). */
int	 control_reply_error_ex(struct control_conn *c, uint32_t id, int code,
	    const char *detail, json_t *extra);
int	 control_event(struct control_conn *c, const char *name, uint32_t id,
	    json_t *body);
/* An event to every connection past hello that is not backed up; steals
 * body. */
void	 control_broadcast(const char *name, json_t *body);
/* Queue one binary frame (n <= PROTO_MAX_BINARY - header). */
int	 control_send_data(struct control_conn *c, uint32_t id,
	    uint8_t channel, const void *p, size_t n, int end);
int	 control_out_full(const struct control_conn *c);
/*
 * A binary frame whose payload a producer reads straight into it (from a
 * pipe, say): one copy less than control_send_data.  control_data_new
 * gives room for max bytes at *payload; control_data_send queues n of
 * them as a frame and takes the message (also on failure);
 * control_data_free drops it unsent.
 */
struct control_out;
struct control_out *control_data_new(size_t max, uint8_t **payload);
int	 control_data_send(struct control_conn *c, struct control_out *o,
	    uint32_t id, uint8_t channel, size_t n, int end);
void	 control_data_free(struct control_out *o);

void	 control_stream_attach(struct control_conn *c,
	    struct control_stream *s, uint32_t id,
	    const struct control_stream_ops *ops);
void	 control_stream_detach(struct control_stream *s);
/* Producer is blocked on output: resume() when there is room. */
void	 control_stream_pause(struct control_stream *s);
/* The stream can take inbound frames again. */
void	 control_stream_rx_resume(struct control_stream *s);

#endif

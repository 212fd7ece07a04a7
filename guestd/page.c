/* SPDX-License-Identifier: MIT */
/*
 * Page tools over CDP (doc/DESIGN.md G-24, G-36).
 *
 * Every request is a short chain of CDP calls driven by one reply
 * function and a phase: find the page targets, pick the one visible tab,
 * attach a flattened session to it, make sure an isolated world exists in
 * its main frame, then do the work.  Our scripts run only in that world:
 * the page's scripts cannot see our element map or patch the functions
 * we call, and the world (with its refs) dies with the document, which is
 * what makes an old ref stale rather than redirected.
 *
 * Refs are 128 random bits from token_random, generated here and handed to
 * the snapshot script, which keeps ref -> WeakRef(element) in the world.
 * An act step first resolves its ref there (gone or disconnected: STALE_REF)
 * and only then acts: clicks and keys as trusted input through the Input
 * domain at the element's checked position, text through Input.insertText,
 * select and scroll in the world.  A failure reports how many steps were
 * done and whether the failing one may have had an effect; nothing is
 * retried after input was sent.
 */
#include "autoconf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "browser.h"
#include "cdp.h"
#include "control.h"
#include "err.h"
#include "json.h"
#include "page.h"
#include "path.h"
#include "token.h"
#include "xmalloc.h"

#define PAGE_WORLD		"rakazo-page"
#define PAGE_MAX_SESSIONS	16
#define PAGE_MAX_TYPE		10000	/* characters of one type step */
#define PAGE_LOAD_WAIT_MS	10000

struct page_session {
	char	target[64];
	char	session[64];
};

/* Per browser, freed with it (browser_page_state). */
struct page_state {
	struct page_session	sessions[PAGE_MAX_SESSIONS];
	size_t			nsessions;
	char			world_target[64];
	int			world_ctx;	/* 0: none */
};

enum page_op { PG_FOCUS, PG_NAVIGATE, PG_SNAPSHOT, PG_ACT };

enum page_phase {
	PH_TARGETS, PH_CREATE, PH_ATTACH, PH_VIS, PH_ACTIVATE, PH_NAVIGATE,
	PH_WORLD, PH_WAIT, PH_SNAPSHOT, PH_RESOLVE, PH_INPUT
};

struct page_req {
	struct control_stream	 s;	/* first */
	enum page_op		 op;
	enum page_phase		 phase;
	struct browser		*b;
	uint64_t		 gen;
	int			 gone;
	int			 busy;	/* a CDP reply is owed to us */
	page_done_fn		 done;
	void			*done_arg;
	char			*url;
	json_t			*steps;
	json_t			*cands;		/* candidate target ids */
	size_t			 ci;
	int			 visible;
	char			 target[64];
	char			 session[64];
	int			 world_tries;
	size_t			 step;		/* act: current step */
	size_t			 completed;
	int			 inputs;	/* input calls left in a step */
	json_t			*pending;	/* more input calls */
};

static void	page_reply(void *, int, json_t *, const char *);
static void	page_next_target(struct page_req *);
static void	page_begin_op(struct page_req *);
static void	page_world(struct page_req *);
static void	page_act_step(struct page_req *);

/* ---- scripts (run in the isolated world) ---------------------------------- */

static const char page_js_wait[] =
"(async (ms) => {"
" if (document.readyState !== 'complete') await new Promise(r => {"
"  window.addEventListener('load', r, {once: true}); setTimeout(r, ms); });"
" return {url: location.href, title: document.title}; })";

static const char page_js_snapshot[] =
"(async (R, MAXT, MAXE) => {"
" if (document.readyState === 'loading') await new Promise(r => {"
"  document.addEventListener('DOMContentLoaded', r, {once: true});"
"  setTimeout(r, 5000); });"
" const W = globalThis.__rk || (globalThis.__rk = {m: new Map()});"
" const sel = 'a[href],button,input,select,textarea,summary,iframe,"
"[role=button],[role=link],[role=checkbox],[role=radio],[role=tab],"
"[role=menuitem],[role=textbox],[role=combobox],[role=switch],"
"[contenteditable=\"\"],[contenteditable=true],[tabindex]';"
" const cut = (s, n) => (s || '').replace(/\\s+/g, ' ').trim().slice(0, n);"
" const role = el => { const r = el.getAttribute('role'); if (r) return r;"
"  const t = el.tagName.toLowerCase();"
"  if (t === 'a') return 'link'; if (t === 'button' || t === 'summary')"
"  return 'button'; if (t === 'select') return 'combobox';"
"  if (t === 'textarea') return 'textbox'; if (t === 'iframe') return 'frame';"
"  if (t === 'input') { const y = (el.type || 'text').toLowerCase();"
"   if (y === 'checkbox' || y === 'radio') return y;"
"   if (['button', 'submit', 'reset', 'image'].includes(y)) return 'button';"
"   if (y === 'range') return 'slider'; return 'textbox'; }"
"  return el.isContentEditable ? 'textbox' : 'generic'; };"
" const name = el => { let s = el.getAttribute('aria-label');"
"  if (!s && el.getAttribute('aria-labelledby')) s = el.getAttribute("
"   'aria-labelledby').split(/\\s+/).map(i => { const e ="
"   document.getElementById(i); return e ? e.innerText : ''; }).join(' ');"
"  if (!s && el.labels && el.labels.length) s = el.labels[0].innerText;"
"  if (!s) s = el.getAttribute('placeholder') || el.getAttribute('alt') ||"
"   el.getAttribute('title');"
"  if (!s && el.tagName !== 'INPUT' && el.tagName !== 'SELECT' &&"
"   el.tagName !== 'TEXTAREA') s = el.innerText;"
"  if (!s && el.tagName === 'INPUT' && ['button', 'submit', 'reset']"
"   .includes((el.type || '').toLowerCase())) s = el.value;"
"  if (!s) s = el.getAttribute('name'); return cut(s, 100); };"
" const shown = el => { if (!el.getClientRects().length) return false;"
"  const st = getComputedStyle(el); return st.visibility !== 'hidden' &&"
"  st.display !== 'none'; };"
" const els = []; let frames = 0;"
" for (const el of document.querySelectorAll(sel)) {"
"  if (els.length >= MAXE) break;"
"  if (el.tagName === 'INPUT' && (el.type || '').toLowerCase() === 'hidden')"
"   continue;"
"  if (el.getAttribute('tabindex') === '-1' && !el.matches("
"   'a[href],button,input,select,textarea,summary,[role]')) continue;"
"  if (!shown(el)) continue;"
"  const ref = R[els.length]; const e = {ref, role: role(el), name: name(el)};"
"  if (el.tagName === 'IFRAME') { frames++; e.frame = true; }"
"  W.m.set(ref, new WeakRef(el));"
"  const t = el.tagName;"
"  if (t === 'INPUT' || t === 'TEXTAREA' || t === 'SELECT') {"
"   const y = (el.type || '').toLowerCase();"
"   if (y === 'password') e.value = el.value ? '\\u2022\\u2022\\u2022\\u2022' : '';"
"   else if (y === 'checkbox' || y === 'radio') e.checked = el.checked;"
"   else e.value = String(el.value).slice(0, 200); }"
"  if (el.disabled) e.disabled = true;"
"  els.push(e); }"
" while (W.m.size > 2000) W.m.delete(W.m.keys().next().value);"
" let text = document.body ? document.body.innerText || '' : '';"
" const truncated = text.length > MAXT; text = text.slice(0, MAXT);"
" return {url: location.href, title: document.title, text, truncated,"
"  elements: els, frames}; })";

/*
 * Resolve a ref and prepare one step.  Answers {stale}, {error}, {frame},
 * or what the C side needs next: {x, y} to click, {focused} to type or
 * press, {done} when the world did it all (select, scroll, focus).
 */
static const char page_js_step[] =
"((ref, kind, arg) => {"
" const W = globalThis.__rk; const wr = W && W.m.get(ref);"
" const el = wr && wr.deref();"
" if (!el || !el.isConnected || el.ownerDocument !== document)"
"  return {stale: true};"
" if (el.tagName === 'IFRAME') return {frame: true};"
" if (el.disabled) return {error: 'the element is disabled'};"
" if (kind === 'scroll') { el.scrollBy(arg.dx, arg.dy); return {done: true}; }"
" el.scrollIntoView({block: 'center', inline: 'center'});"
" if (kind === 'focus') { el.focus(); return {done: document.activeElement"
"  === el || el.contains(document.activeElement)}; }"
" if (kind === 'select') { if (el.tagName !== 'SELECT') return {unsupported:"
"  true}; const o = Array.from(el.options).find(o => o.value === arg.value ||"
"  o.text.trim() === arg.value); if (!o) return {error: 'no such option'};"
"  el.value = o.value; el.dispatchEvent(new Event('input', {bubbles: true}));"
"  el.dispatchEvent(new Event('change', {bubbles: true}));"
"  return {done: true}; }"
" if (kind === 'type' || kind === 'press') { el.focus();"
"  if (document.activeElement !== el && !el.contains(document.activeElement))"
"   return {unsupported: true};"
"  if (kind === 'type' && arg.clear && 'value' in el) el.select &&"
"   el.select(); return {focused: true}; }"
" const r = el.getBoundingClientRect();"
" if (r.width <= 0 || r.height <= 0) return {unsupported: true};"
" const x = r.left + r.width / 2, y = r.top + r.height / 2;"
" const hit = document.elementFromPoint(x, y);"
" if (!hit || (hit !== el && !el.contains(hit))) return {covered: true};"
" return {x, y}; })";

/* ---- URL rule (G-36) ------------------------------------------------------- */

int
page_url_check(const char *url)
{
	const char	*p, *end;
	size_t		 n = strlen(url);

	if (n == 0 || n > PAGE_MAX_URL)
		return ERR_URL_REFUSED;
	for (p = url; *p != '\0'; p++) {
		if ((unsigned char)*p <= 0x20 || *p == 0x7f)
			return ERR_URL_REFUSED;
	}
	if (strncasecmp(url, "http://", 7) == 0)
		p = url + 7;
	else if (strncasecmp(url, "https://", 8) == 0)
		p = url + 8;
	else
		return ERR_URL_REFUSED;
	/* The authority ends at / ? # or \ (browsers read \ as /). */
	end = p + strcspn(p, "/?#\\");
	if (end == p || memchr(p, '@', (size_t)(end - p)) != NULL)
		return ERR_URL_REFUSED;
	return 0;
}

/* ---- state ----------------------------------------------------------------- */

void
page_state_free(void *state)
{
	free(state);
}

static struct page_state *
page_state(struct browser *b)
{
	void	**pp = browser_page_state(b);

	if (*pp == NULL)
		*pp = xcalloc(1, sizeof(struct page_state));
	return *pp;
}

static const char *
page_session_find(struct page_state *ps, const char *target)
{
	size_t	i;

	for (i = 0; i < ps->nsessions; i++) {
		if (strcmp(ps->sessions[i].target, target) == 0)
			return ps->sessions[i].session;
	}
	return NULL;
}

static void
page_session_put(struct page_state *ps, const char *target,
    const char *session)
{
	if (ps->nsessions == PAGE_MAX_SESSIONS) {
		memmove(&ps->sessions[0], &ps->sessions[1],
		    (PAGE_MAX_SESSIONS - 1) * sizeof ps->sessions[0]);
		ps->nsessions--;
	}
	snprintf(ps->sessions[ps->nsessions].target,
	    sizeof ps->sessions[0].target, "%s", target);
	snprintf(ps->sessions[ps->nsessions].session,
	    sizeof ps->sessions[0].session, "%s", session);
	ps->nsessions++;
}

static void
page_session_drop(struct page_state *ps, const char *target)
{
	size_t	i;

	for (i = 0; i < ps->nsessions; i++) {
		if (strcmp(ps->sessions[i].target, target) == 0) {
			memmove(&ps->sessions[i], &ps->sessions[i + 1],
			    (ps->nsessions - i - 1) * sizeof ps->sessions[0]);
			ps->nsessions--;
			return;
		}
	}
	if (strcmp(ps->world_target, target) == 0)
		ps->world_ctx = 0;
}

/* ---- requests -------------------------------------------------------------- */

static void
page_req_free(struct page_req *q)
{
	control_stream_detach(&q->s);
	free(q->url);
	json_decref(q->steps);
	json_decref(q->cands);
	json_decref(q->pending);
	free(q);
}

static void
page_req_abort(struct control_stream *s)
{
	struct page_req	*q = (struct page_req *)s;

	q->gone = 1;
	if (!q->busy)
		page_req_free(q);
}

static const struct control_stream_ops page_req_ops = {
	NULL, NULL, page_req_abort
};

/* Finish q with an answer (result stolen) or an error. */
static void
page_finish(struct page_req *q, int code, const char *msg, json_t *result,
    json_t *extra)
{
	struct control_conn	*c = q->s.conn;

	if (q->done != NULL)
		q->done(q->done_arg, code, msg);
	else if (!q->gone && c != NULL) {
		if (code != 0)
			control_reply_error_ex(c, q->s.id, code, msg, extra);
		else
			control_reply(c, q->s.id, result);
		extra = result = NULL;
	}
	json_decref(result);
	json_decref(extra);
	page_req_free(q);
}

/* An act failure: completed steps, and whether this one may have acted. */
static void
page_act_fail(struct page_req *q, int code, const char *msg, int uncertain,
    int fallback)
{
	json_t	*extra;

	extra = json_pack("{s:i,s:b}", "completed", (int)q->completed,
	    "uncertain", uncertain);
	if (fallback)
		json_object_set_new(extra, "fallback",
		    json_string("computer_act"));
	json_object_set_new(extra, "step", json_integer((json_int_t)q->step));
	page_finish(q, code, msg, NULL, extra);
}

static int
page_call(struct page_req *q, enum page_phase ph, const char *session,
    const char *method, json_t *params, uint64_t timeout_ms)
{
	int	r;

	q->phase = ph;
	r = cdp_call(browser_cdp(q->b), session, method, params, timeout_ms,
	    page_reply, q);
	if (r == 0)
		q->busy = 1;
	return r;
}

/* Run a script of ours in the world: fn(args...) by value, awaited. */
static int
page_eval(struct page_req *q, enum page_phase ph, const char *fn,
    json_t *argv)
{
	struct page_state	*ps = page_state(q->b);
	char			*a, *expr;
	size_t			 n;
	int			 r;

	a = jsonx_dump(argv, &n);
	json_decref(argv);
	if (a == NULL)
		return ERR_NOMEM;
	/* The array's brackets become the call's parentheses. */
	a[0] = '(';
	a[n - 1] = ')';
	if (asprintf(&expr, "%s%s", fn, a) == -1)
		fatal("out of memory");
	free(a);
	r = page_call(q, ph, q->session, "Runtime.evaluate", json_pack(
	    "{s:s,s:i,s:b,s:b,s:b}", "expression", expr, "contextId",
	    ps->world_ctx, "returnByValue", 1, "awaitPromise", 1,
	    "userGesture", 1), PAGE_LOAD_WAIT_MS + 5000);
	free(expr);
	return r;
}

static int
page_fail_call(struct page_req *q, int r)
{
	if (q->op == PG_ACT)
		page_act_fail(q, r, "(the browser connection failed)", 0, 0);
	else
		page_finish(q, r, "(the browser connection failed)", NULL,
		    NULL);
	return r;
}

/* ---- choosing the tab ------------------------------------------------------ */

static void
page_start(struct page_req *q)
{
	int	r;

	if ((r = page_call(q, PH_TARGETS, NULL, "Target.getTargets", NULL,
	    0)) != 0)
		page_fail_call(q, r);
}

static void
page_got_targets(struct page_req *q, json_t *res)
{
	json_t		*infos, *ti;
	const char	*type, *id, *url;
	size_t		 i;
	int		 r;

	q->cands = json_array();
	infos = json_object_get(res, "targetInfos");
	json_array_foreach(infos, i, ti) {
		type = json_string_value(json_object_get(ti, "type"));
		id = json_string_value(json_object_get(ti, "targetId"));
		url = json_string_value(json_object_get(ti, "url"));
		if (type == NULL || id == NULL || strcmp(type, "page") != 0 ||
		    strlen(id) >= sizeof q->target)
			continue;
		/* DevTools windows are not the bot's tabs. */
		if (url != NULL && strncmp(url, "devtools://", 11) == 0)
			continue;
		json_array_append_new(q->cands, json_string(id));
	}
	if (json_array_size(q->cands) == 0) {
		if (q->op == PG_SNAPSHOT || q->op == PG_ACT) {
			page_finish(q, ERR_NOT_FOUND, "(the browser has no open "
			    "tab)", NULL, NULL);
			return;
		}
		if ((r = page_call(q, PH_CREATE, NULL, "Target.createTarget",
		    json_pack("{s:s}", "url", "about:blank"), 0)) != 0)
			page_fail_call(q, r);
		return;
	}
	q->ci = 0;
	q->visible = 0;
	q->target[0] = '\0';
	page_next_target(q);
}

/* Attach to candidate ci (or reuse its session), then check visibility. */
static void
page_next_target(struct page_req *q)
{
	struct page_state	*ps = page_state(q->b);
	const char		*id, *sess;
	int			 r;

	if (q->ci >= json_array_size(q->cands)) {
		if (q->visible > 1) {
			page_finish(q, ERR_PAGE_AMBIGUOUS, "(more than one tab "
			    "is visible)", NULL, NULL);
			return;
		}
		if (q->visible == 0) {
			page_finish(q, ERR_PAGE_AMBIGUOUS, "(no tab is "
			    "visible)", NULL, NULL);
			return;
		}
		sess = page_session_find(ps, q->target);
		snprintf(q->session, sizeof q->session, "%s", sess);
		page_begin_op(q);
		return;
	}
	id = json_string_value(json_array_get(q->cands, q->ci));
	if ((sess = page_session_find(ps, id)) != NULL) {
		/* One tab: it is the target; no need to ask. */
		if (json_array_size(q->cands) == 1) {
			snprintf(q->target, sizeof q->target, "%s", id);
			snprintf(q->session, sizeof q->session, "%s", sess);
			page_begin_op(q);
			return;
		}
		r = page_call(q, PH_VIS, sess, "Runtime.evaluate", json_pack(
		    "{s:s,s:b}", "expression", "document.visibilityState",
		    "returnByValue", 1), 0);
	} else
		r = page_call(q, PH_ATTACH, NULL, "Target.attachToTarget",
		    json_pack("{s:s,s:b}", "targetId", id, "flatten", 1), 0);
	if (r != 0)
		page_fail_call(q, r);
}

/* ---- the operations -------------------------------------------------------- */

static void
page_begin_op(struct page_req *q)
{
	struct page_state	*ps = page_state(q->b);
	int			 r;

	if (strcmp(ps->world_target, q->target) != 0) {
		ps->world_ctx = 0;
		snprintf(ps->world_target, sizeof ps->world_target, "%s",
		    q->target);
	}
	switch (q->op) {
	case PG_FOCUS:
		r = page_call(q, PH_ACTIVATE, NULL, "Target.activateTarget",
		    json_pack("{s:s}", "targetId", q->target), 0);
		break;
	case PG_NAVIGATE:
		ps->world_ctx = 0;
		r = page_call(q, PH_NAVIGATE, q->session, "Page.navigate",
		    json_pack("{s:s}", "url", q->url), 0);
		break;
	default:
		if (ps->world_ctx == 0) {
			page_world(q);
			return;
		}
		if (q->op == PG_SNAPSHOT) {
			char	hex[33];
			json_t	*refs = json_array();
			int	i;

			for (i = 0; i < PAGE_MAX_ELEMENTS; i++) {
				if (token_hex(hex, 16) != 0)
					fatal("no randomness");
				json_array_append_new(refs, json_string(hex));
			}
			r = page_eval(q, PH_SNAPSHOT, page_js_snapshot,
			    json_pack("[o,i,i]", refs, PAGE_MAX_TEXT,
			    PAGE_MAX_ELEMENTS));
		} else {
			page_act_step(q);
			return;
		}
		break;
	}
	if (r != 0)
		page_fail_call(q, r);
}

static void
page_world(struct page_req *q)
{
	int	r;

	if (++q->world_tries > 3) {
		page_finish(q, ERR_CDP, "(the page kept changing)", NULL, NULL);
		return;
	}
	/* For a page target, the main frame's id is the target's id. */
	r = page_call(q, PH_WORLD, q->session, "Page.createIsolatedWorld",
	    json_pack("{s:s,s:s,s:b}", "frameId", q->target, "worldName",
	    PAGE_WORLD, "grantUniveralAccess", 0), 0);
	if (r != 0)
		page_fail_call(q, r);
}

static const char *
page_step_str(json_t *st, const char *key)
{
	return json_string_value(json_object_get(st, key));
}

static void
page_act_step(struct page_req *q)
{
	json_t		*st, *arg;
	const char	*kind, *ref;
	int		 r;

	if (q->step >= json_array_size(q->steps)) {
		page_finish(q, 0, NULL, json_pack("{s:i}", "completed",
		    (int)q->completed), NULL);
		return;
	}
	st = json_array_get(q->steps, q->step);
	kind = page_step_str(st, "kind");
	ref = page_step_str(st, "ref");
	arg = json_object();
	if (strcmp(kind, "scroll") == 0) {
		json_object_set_new(arg, "dx", json_integer(json_integer_value(
		    json_object_get(st, "dx"))));
		json_object_set_new(arg, "dy", json_integer(json_integer_value(
		    json_object_get(st, "dy"))));
	} else if (strcmp(kind, "select") == 0)
		json_object_set(arg, "value", json_object_get(st, "value"));
	else if (strcmp(kind, "type") == 0 &&
	    json_is_true(json_object_get(st, "clear")))
		json_object_set_new(arg, "clear", json_true());
	r = page_eval(q, PH_RESOLVE, page_js_step, json_pack("[s,s,o]", ref,
	    kind, arg));
	if (r != 0)
		page_act_fail(q, r, "(the browser connection failed)", 0, 0);
}

/* Key name -> what Input.dispatchKeyEvent needs. */
struct page_key {
	const char	*key;
	const char	*code;
	int		 vk;
	const char	*text;
};

static const struct page_key page_keys[] = {
	{ "Enter", "Enter", 13, "\r" },
	{ "Tab", "Tab", 9, NULL },
	{ "Escape", "Escape", 27, NULL },
	{ "Backspace", "Backspace", 8, NULL },
	{ "Delete", "Delete", 46, NULL },
	{ "ArrowUp", "ArrowUp", 38, NULL },
	{ "ArrowDown", "ArrowDown", 40, NULL },
	{ "ArrowLeft", "ArrowLeft", 37, NULL },
	{ "ArrowRight", "ArrowRight", 39, NULL },
	{ "Home", "Home", 36, NULL },
	{ "End", "End", 35, NULL },
	{ "PageUp", "PageUp", 33, NULL },
	{ "PageDown", "PageDown", 34, NULL },
	{ "Space", "Space", 32, " " },
};

/* Queue the input calls of the current step in q->pending. */
static int
page_step_inputs(struct page_req *q, json_t *val)
{
	json_t		*st = json_array_get(q->steps, q->step);
	const char	*kind = page_step_str(st, "kind");
	const char	*key;
	double		 x, y;
	size_t		 i;

	json_decref(q->pending);
	q->pending = json_array();
	if (strcmp(kind, "click") == 0) {
		x = json_number_value(json_object_get(val, "x"));
		y = json_number_value(json_object_get(val, "y"));
		json_array_append_new(q->pending, json_pack("{s:s,s:{s:s,s:f,"
		    "s:f,s:s,s:i,s:i}}", "m", "Input.dispatchMouseEvent", "p",
		    "type", "mousePressed", "x", x, "y", y, "button", "left",
		    "buttons", 1, "clickCount", 1));
		json_array_append_new(q->pending, json_pack("{s:s,s:{s:s,s:f,"
		    "s:f,s:s,s:i,s:i}}", "m", "Input.dispatchMouseEvent", "p",
		    "type", "mouseReleased", "x", x, "y", y, "button", "left",
		    "buttons", 0, "clickCount", 1));
		return 0;
	}
	if (strcmp(kind, "type") == 0) {
		json_array_append_new(q->pending, json_pack("{s:s,s:{s:O}}",
		    "m", "Input.insertText", "p", "text",
		    json_object_get(st, "text")));
		return 0;
	}
	key = page_step_str(st, "key");
	for (i = 0; i < sizeof page_keys / sizeof page_keys[0]; i++) {
		if (strcmp(page_keys[i].key, key) == 0)
			break;
	}
	if (i < sizeof page_keys / sizeof page_keys[0]) {
		const struct page_key *k = &page_keys[i];
		json_t *down = json_pack("{s:s,s:s,s:s,s:i}", "type",
		    k->text != NULL ? "keyDown" : "rawKeyDown", "key", k->key,
		    "code", k->code, "windowsVirtualKeyCode", k->vk);

		if (k->text != NULL)
			json_object_set_new(down, "text", json_string(k->text));
		json_array_append_new(q->pending, json_pack("{s:s,s:o}", "m",
		    "Input.dispatchKeyEvent", "p", down));
		json_array_append_new(q->pending, json_pack("{s:s,s:{s:s,s:s,"
		    "s:s,s:i}}", "m", "Input.dispatchKeyEvent", "p", "type",
		    "keyUp", "key", k->key, "code", k->code,
		    "windowsVirtualKeyCode", k->vk));
		return 0;
	}
	/* One printable character: the key and its text. */
	if (strlen(key) >= 1 && strlen(key) <= 4 && (unsigned char)key[0] >=
	    0x20) {
		json_array_append_new(q->pending, json_pack("{s:s,s:{s:s,s:s,"
		    "s:s}}", "m", "Input.dispatchKeyEvent", "p", "type",
		    "keyDown", "key", key, "text", key));
		json_array_append_new(q->pending, json_pack("{s:s,s:{s:s,s:s}}",
		    "m", "Input.dispatchKeyEvent", "p", "type", "keyUp", "key",
		    key));
		return 0;
	}
	return ERR_KEY_UNKNOWN;
}

static void
page_send_input(struct page_req *q)
{
	json_t	*in;
	int	 r;

	if (json_array_size(q->pending) == 0) {
		q->completed++;
		q->step++;
		page_act_step(q);
		return;
	}
	in = json_incref(json_array_get(q->pending, 0));
	json_array_remove(q->pending, 0);
	r = page_call(q, PH_INPUT, q->session, json_string_value(
	    json_object_get(in, "m")), json_incref(json_object_get(in, "p")),
	    0);
	json_decref(in);
	if (r != 0)
		page_act_fail(q, r, "(the browser connection failed)", 1, 0);
}

static void
page_resolved(struct page_req *q, json_t *val)
{
	json_t		*err;
	int		 r;

	if (!json_is_object(val)) {
		page_act_fail(q, ERR_PAGE_ACTION, "(the step gave no answer)",
		    1, 0);
		return;
	}
	if (json_is_true(json_object_get(val, "stale"))) {
		page_act_fail(q, ERR_STALE_REF, NULL, 0, 0);
		return;
	}
	if (json_is_true(json_object_get(val, "frame")) ||
	    json_is_true(json_object_get(val, "unsupported")) ||
	    json_is_true(json_object_get(val, "covered"))) {
		page_act_fail(q, ERR_PAGE_UNSUPPORTED, json_is_true(
		    json_object_get(val, "covered")) ? "(another element "
		    "covers it; use the desktop tools)" : "(use the desktop "
		    "tools for this element)", 0, 1);
		return;
	}
	if ((err = json_object_get(val, "error")) != NULL) {
		page_act_fail(q, ERR_PAGE_ACTION, json_string_value(err), 0, 0);
		return;
	}
	if (json_object_get(val, "done") != NULL) {
		if (!json_is_true(json_object_get(val, "done"))) {
			page_act_fail(q, ERR_PAGE_UNSUPPORTED, "(it cannot take "
			    "focus)", 0, 1);
			return;
		}
		q->completed++;
		q->step++;
		page_act_step(q);
		return;
	}
	if ((r = page_step_inputs(q, val)) != 0) {
		page_act_fail(q, r, "(unknown key name)", 0, 0);
		return;
	}
	page_send_input(q);
}

/* A context error: the document changed under us. */
static int
page_ctx_lost(const char *msg)
{
	return msg != NULL && (strstr(msg, "context") != NULL ||
	    strstr(msg, "Context") != NULL);
}

static json_t *
page_eval_value(json_t *res, const char **exc)
{
	json_t	*ed;

	*exc = NULL;
	if ((ed = json_object_get(res, "exceptionDetails")) != NULL) {
		*exc = json_string_value(json_object_get(json_object_get(ed,
		    "exception"), "description"));
		if (*exc == NULL)
			*exc = json_string_value(json_object_get(ed, "text"));
		if (*exc == NULL)
			*exc = "(script exception)";
		return NULL;
	}
	return json_object_get(json_object_get(res, "result"), "value");
}

static void
page_snapshot_done(struct page_req *q, json_t *val)
{
	json_t	*out, *els;

	if (!json_is_object(val)) {
		page_finish(q, ERR_CDP, "(the snapshot gave no answer)", NULL,
		    NULL);
		return;
	}
	els = json_object_get(val, "elements");
	if (!json_is_array(els) || json_array_size(els) > PAGE_MAX_ELEMENTS) {
		page_finish(q, ERR_CDP, "(bad snapshot)", NULL, NULL);
		return;
	}
	out = json_pack("{s:O,s:O,s:O,s:O,s:O,s:O}",
	    "url", json_object_get(val, "url"),
	    "title", json_object_get(val, "title"),
	    "text", json_object_get(val, "text"),
	    "truncated", json_object_get(val, "truncated"),
	    "elements", els,
	    "frames", json_object_get(val, "frames"));
	page_finish(q, out != NULL ? 0 : ERR_CDP, "(bad snapshot)", out, NULL);
}

static void
page_reply(void *arg, int code, json_t *res, const char *msg)
{
	struct page_req		*q = arg;
	struct page_state	*ps;
	const char		*s, *exc;
	json_t			*val;
	int			 r;

	q->busy = 0;
	if (q->gone) {
		page_req_free(q);
		return;
	}
	if (browser_find(browser_bot(q->b)) != q->b ||
	    browser_generation(q->b) != q->gen) {
		if (q->op == PG_ACT)
			page_act_fail(q, ERR_BROWSER_NOT_RUNNING, NULL,
			    q->phase == PH_INPUT, 0);
		else
			page_finish(q, ERR_BROWSER_NOT_RUNNING, NULL, NULL,
			    NULL);
		return;
	}
	ps = page_state(q->b);
	if (code != 0 && code != ERR_CDP) {
		if (q->op == PG_ACT)
			page_act_fail(q, code, msg, q->phase == PH_INPUT, 0);
		else
			page_finish(q, code, msg, NULL, NULL);
		return;
	}
	switch (q->phase) {
	case PH_TARGETS:
		if (code != 0)
			break;
		page_got_targets(q, res);
		return;
	case PH_CREATE:
		if (code != 0)
			break;
		page_start(q);
		return;
	case PH_ATTACH:
		if (code != 0) {
			/* The tab closed since the list was made: not a
			 * candidate any more. */
			json_array_remove(q->cands, q->ci);
			page_next_target(q);
			return;
		}
		if ((s = json_string_value(json_object_get(res,
		    "sessionId"))) == NULL || strlen(s) >= 64)
			break;
		page_session_put(ps, json_string_value(json_array_get(q->cands,
		    q->ci)), s);
		page_next_target(q);
		return;
	case PH_VIS:
		if (code != 0) {
			/* A stale session (the tab closed): attach again. */
			page_session_drop(ps, json_string_value(json_array_get(
			    q->cands, q->ci)));
			page_next_target(q);
			return;
		}
		val = page_eval_value(res, &exc);
		if (json_is_string(val) && strcmp(json_string_value(val),
		    "visible") == 0) {
			q->visible++;
			snprintf(q->target, sizeof q->target, "%s",
			    json_string_value(json_array_get(q->cands, q->ci)));
		}
		q->ci++;
		page_next_target(q);
		return;
	case PH_ACTIVATE:
		if (code != 0)
			break;
		if (q->url == NULL) {
			page_finish(q, 0, NULL, NULL, NULL);
			return;
		}
		r = page_call(q, PH_NAVIGATE, q->session, "Page.navigate",
		    json_pack("{s:s}", "url", q->url), 0);
		if (r != 0)
			page_fail_call(q, r);
		return;
	case PH_NAVIGATE:
		if (code != 0)
			break;
		if ((s = json_string_value(json_object_get(res,
		    "errorText"))) != NULL && *s != '\0') {
			page_finish(q, ERR_CDP, s, NULL, NULL);
			return;
		}
		ps->world_ctx = 0;
		if (q->op == PG_FOCUS) {
			page_finish(q, 0, NULL, NULL, NULL);
			return;
		}
		page_world(q);
		return;
	case PH_WORLD:
		if (code != 0 || !json_is_integer(json_object_get(res,
		    "executionContextId")))
			break;
		ps->world_ctx = (int)json_integer_value(json_object_get(res,
		    "executionContextId"));
		if (q->op == PG_NAVIGATE) {
			r = page_eval(q, PH_WAIT, page_js_wait, json_pack("[i]",
			    PAGE_LOAD_WAIT_MS));
			if (r != 0)
				page_fail_call(q, r);
			return;
		}
		page_begin_op(q);
		return;
	case PH_WAIT:
		if (code != 0 && page_ctx_lost(msg)) {
			/* Committed after we asked: the world is the new one. */
			page_world(q);
			return;
		}
		if (code != 0)
			break;
		val = page_eval_value(res, &exc);
		page_finish(q, 0, NULL, json_pack("{s:O,s:O}", "url",
		    json_object_get(val, "url"), "title",
		    json_object_get(val, "title")), NULL);
		return;
	case PH_SNAPSHOT:
		if (code != 0 && page_ctx_lost(msg)) {
			ps->world_ctx = 0;
			page_world(q);
			return;
		}
		if (code != 0)
			break;
		val = page_eval_value(res, &exc);
		if (exc != NULL) {
			page_finish(q, ERR_CDP, "(the snapshot script failed)",
			    NULL, NULL);
			return;
		}
		page_snapshot_done(q, val);
		return;
	case PH_RESOLVE:
		if (code != 0 && page_ctx_lost(msg)) {
			/* New document: every ref of the old one is stale. */
			ps->world_ctx = 0;
			page_act_fail(q, ERR_STALE_REF, NULL, 0, 0);
			return;
		}
		if (code != 0) {
			page_act_fail(q, code, msg, 0, 0);
			return;
		}
		val = page_eval_value(res, &exc);
		if (exc != NULL) {
			page_act_fail(q, ERR_PAGE_ACTION, "(the step script "
			    "failed)", 1, 0);
			return;
		}
		page_resolved(q, val);
		return;
	case PH_INPUT:
		if (code != 0) {
			page_act_fail(q, ERR_CDP, msg, 1, 0);
			return;
		}
		page_send_input(q);
		return;
	}
	/* A CDP error, or a reply of the wrong shape. */
	if (q->op == PG_ACT)
		page_act_fail(q, ERR_CDP, msg != NULL ? msg : "(bad reply)", 0,
		    0);
	else
		page_finish(q, ERR_CDP, msg != NULL ? msg : "(bad reply)", NULL,
		    NULL);
}

/* ---- entry points ---------------------------------------------------------- */

static struct page_req *
page_req_new(struct browser *b, enum page_op op)
{
	struct page_req	*q;

	q = xcalloc(1, sizeof *q);
	q->b = b;
	q->gen = browser_generation(b);
	q->op = op;
	return q;
}

int
page_focus(struct browser *b, const char *url, page_done_fn done, void *arg)
{
	struct page_req	*q;

	if (browser_cdp(b) == NULL)
		return ERR_BROWSER_NOT_RUNNING;
	q = page_req_new(b, PG_FOCUS);
	q->done = done;
	q->done_arg = arg;
	q->url = url != NULL ? xstrdup(url) : NULL;
	page_start(q);
	return 0;
}

static int
page_args_bot(json_t *args, struct browser **b, char *detail)
{
	const char	*bot;
	int		 r;

	if ((r = jsonx_str(args, "bot", 64, &bot, detail)) != 0)
		return r == ERR_NOT_FOUND ? ERR_BAD_REQUEST : r;
	if ((r = path_bot_valid(bot)) != 0)
		return r;
	if ((*b = browser_find(bot)) == NULL || browser_cdp(*b) == NULL)
		return ERR_BROWSER_NOT_RUNNING;
	return 0;
}

int
page_op_navigate(struct control_conn *c, uint32_t id, json_t *args,
    char *detail, size_t detaillen)
{
	static const char *const keys[] = { "bot", "fence", "url", NULL };
	struct browser	*b;
	struct page_req	*q;
	const char	*url;
	int		 r;

	(void)detaillen;
	if ((r = jsonx_only_keys(args, keys, detail)) != 0)
		return r;
	if ((r = jsonx_str(args, "url", PAGE_MAX_URL, &url, detail)) != 0)
		return r == ERR_NOT_FOUND ? ERR_BAD_REQUEST : r;
	if ((r = page_url_check(url)) != 0)
		return r;
	if ((r = page_args_bot(args, &b, detail)) != 0)
		return r;
	q = page_req_new(b, PG_NAVIGATE);
	q->url = xstrdup(url);
	control_stream_attach(c, &q->s, id, &page_req_ops);
	page_start(q);
	return 0;
}

int
page_op_snapshot(struct control_conn *c, uint32_t id, json_t *args,
    char *detail, size_t detaillen)
{
	static const char *const keys[] = { "bot", "fence", NULL };
	struct browser	*b;
	struct page_req	*q;
	int		 r;

	(void)detaillen;
	if ((r = jsonx_only_keys(args, keys, detail)) != 0)
		return r;
	if ((r = page_args_bot(args, &b, detail)) != 0)
		return r;
	q = page_req_new(b, PG_SNAPSHOT);
	control_stream_attach(c, &q->s, id, &page_req_ops);
	page_start(q);
	return 0;
}

/* Shape of one step; everything is checked before anything runs. */
static int
page_step_check(json_t *st, size_t i, char *detail, size_t detaillen)
{
	static const char *const kinds[] = { "click", "type", "select",
	    "press", "scroll", "focus", NULL };
	static const char *const keys[] = { "kind", "ref", "text", "value",
	    "key", "dx", "dy", "clear", NULL };
	const char	*kind, *ref, *s;
	int64_t		 v;
	size_t		 k;

	if (!json_is_object(st) || jsonx_only_keys(st, keys, NULL) != 0)
		goto bad;
	if (jsonx_str(st, "kind", 16, &kind, NULL) != 0)
		goto bad;
	for (k = 0; kinds[k] != NULL; k++) {
		if (strcmp(kinds[k], kind) == 0)
			break;
	}
	if (kinds[k] == NULL)
		goto bad;
	if (jsonx_str(st, "ref", 32, &ref, NULL) != 0 || strlen(ref) != 32 ||
	    strspn(ref, "0123456789abcdef") != 32)
		goto bad;
	if (strcmp(kind, "type") == 0 && (jsonx_str(st, "text", PAGE_MAX_TYPE,
	    &s, NULL) != 0))
		goto bad;
	if (strcmp(kind, "select") == 0 && jsonx_str(st, "value", 1000, &s,
	    NULL) != 0)
		goto bad;
	if (strcmp(kind, "press") == 0 && jsonx_str(st, "key", 16, &s,
	    NULL) != 0)
		goto bad;
	if (strcmp(kind, "scroll") == 0) {
		if (jsonx_int(st, "dx", -100000, 100000, &v, NULL) ==
		    ERR_BAD_REQUEST || jsonx_int(st, "dy", -100000, 100000, &v,
		    NULL) == ERR_BAD_REQUEST)
			goto bad;
	}
	return 0;
bad:
	snprintf(detail, detaillen, "(step %zu: want {kind: click|type|select|"
	    "press|scroll|focus, ref: 32 hex digits, text|value|key|dx|dy})",
	    i);
	return ERR_BAD_REQUEST;
}

int
page_op_act(struct control_conn *c, uint32_t id, json_t *args, char *detail,
    size_t detaillen)
{
	static const char *const keys[] = { "bot", "fence", "steps", NULL };
	struct browser	*b;
	struct page_req	*q;
	json_t		*steps, *st;
	size_t		 i;
	int		 r;

	if ((r = jsonx_only_keys(args, keys, detail)) != 0)
		return r;
	steps = json_object_get(args, "steps");
	if (!json_is_array(steps) || json_array_size(steps) < 1 ||
	    json_array_size(steps) > PAGE_MAX_STEPS) {
		snprintf(detail, detaillen, "(steps: 1 to %d steps)",
		    PAGE_MAX_STEPS);
		return ERR_BAD_REQUEST;
	}
	json_array_foreach(steps, i, st) {
		if ((r = page_step_check(st, i, detail, detaillen)) != 0)
			return r;
	}
	if ((r = page_args_bot(args, &b, detail)) != 0)
		return r;
	q = page_req_new(b, PG_ACT);
	q->steps = json_incref(steps);
	control_stream_attach(c, &q->s, id, &page_req_ops);
	page_start(q);
	return 0;
}

/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What in git's own files makes git run a command (git_code.h).
 *
 * The config keys are those git-config(1) (git 2.39, Debian's git-man)
 * describes as a command, a program, a shell snippet, a hook directory
 * or a file to read more config from; plus every alias (an alias can
 * pass `-c core.pager=...` to a command) and config-based hooks
 * (hook.*.command, newer git). The parser follows git's config.c
 * (git_parse_source, get_base_var, get_value, parse_value): what git
 * would reject is rejected here too, so a key cannot hide from it
 * behind syntax the two read differently.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "git_code.h"
#include "utils.h"

/* keys without a subsection: section.name */
static const char *const plain_keys[] = {
	"core.fsmonitor",
	"core.hookspath",
	"core.pager",
	"core.editor",
	"core.sshcommand",
	"core.askpass",
	"core.gitproxy",
	"core.alternaterefscommand",
	"credential.helper",
	"diff.external",
	"sequence.editor",
	"gpg.program",
	"imap.tunnel",
	"instaweb.httpd",
	"instaweb.browser",
	"interactive.difffilter",
	"man.viewer",
	"web.browser",
	"uploadpack.packobjectshook",
	"include.path",
	"sendemail.smtpserver",
	"sendemail.sendmailcmd",
	"sendemail.tocmd",
	"sendemail.cccmd",
	"sendemail.headercmd",
};

/* keys with a subsection: section.<any>.name */
static const char *const sub_keys[] = {
	"credential.helper",
	"diff.command",
	"diff.textconv",
	"difftool.cmd",
	"difftool.path",
	"filter.clean",
	"filter.smudge",
	"filter.process",
	"gpg.program",
	"gpg.defaultkeycommand",
	"guitool.cmd",
	"browser.cmd",
	"browser.path",
	"man.cmd",
	"man.path",
	"merge.driver",
	"mergetool.cmd",
	"mergetool.path",
	"includeif.path",
	"remote.uploadpack",
	"remote.receivepack",
	"tar.command",
	"trailer.command",
	"trailer.cmd",
	"hook.command",
	"sendemail.smtpserver",
	"sendemail.sendmailcmd",
	"sendemail.tocmd",
	"sendemail.cccmd",
	"sendemail.headercmd",
};

static bool is_bool(const char *v)
{
	static const char *const b[] = { "true", "false", "yes", "no",
					 "on",	 "off",	  "1",	 "0" };

	if (!v || !*v)
		return true;
	for (size_t i = 0; i < AR_ARRAY_SIZE(b); i++)
		if (strcasecmp(v, b[i]) == 0)
			return true;
	return false;
}

bool sb_git_code_key(const char *section, const char *sub, const char *name,
		     const char *value)
{
	char k[256];

	if (strcmp(section, "alias") == 0 || strcmp(section, "pager") == 0)
		return true; /* alias.*, pager.<cmd> */
	if (strcmp(section, "submodule") == 0 && sub &&
	    strcmp(name, "update") == 0)
		return value && value[0] == '!';
	/* fsmonitor = true/false: git's own daemon, no command */
	if (!sub && strcmp(section, "core") == 0 &&
	    strcmp(name, "fsmonitor") == 0)
		return !is_bool(value);
	if (snprintf(k, sizeof(k), "%s.%s", section, name) >= (int)sizeof(k))
		return true; /* no such key: the safe side */
	if (!sub) {
		for (size_t i = 0; i < AR_ARRAY_SIZE(plain_keys); i++)
			if (strcmp(k, plain_keys[i]) == 0)
				return true;
		return false;
	}
	for (size_t i = 0; i < AR_ARRAY_SIZE(sub_keys); i++)
		if (strcmp(k, sub_keys[i]) == 0)
			return true;
	return false;
}

/* ---- the parser ---- */

struct buf {
	char *s;
	size_t n, cap;
};

static void put(struct buf *b, const char *s, size_t n)
{
	if (!b->s || b->n + n + 1 > b->cap) {
		b->cap = (b->n + n + 1) * 2;
		b->s = ar_xrealloc(b->s, b->cap);
	}
	memcpy(b->s + b->n, s, n);
	b->n += n;
	b->s[b->n] = '\0';
}

static void putc_(struct buf *b, char c)
{
	put(b, &c, 1);
}

struct src {
	const char *s;
	size_t len, pos;
	bool eof;
};

/* git's get_next_char: "\r\n" reads as '\n', the end as '\n' */
static int next(struct src *c)
{
	int ch;

	if (c->pos >= c->len) {
		c->eof = true;
		return '\n';
	}
	ch = (unsigned char)c->s[c->pos++];
	if (ch == '\r' && c->pos < c->len && c->s[c->pos] == '\n')
		ch = (unsigned char)c->s[c->pos++];
	return ch;
}

static bool keychar(int c)
{
	return isalnum(c) || c == '-';
}

/* One entry: section (lower case), sub (NULL: none), name (lower case),
 * value (NULL: a bare key), [start, end) its text up to the newline. */
typedef void (*entry_fn)(void *arg, const char *section, const char *sub,
			 const char *name, const char *value, size_t start,
			 size_t end);

/* after '[': section, subsection; -1: rejected */
static int header(struct src *c, struct buf *sec, struct buf *sub,
		  bool *has_sub)
{
	sec->n = sub->n = 0;
	putc_(sec, '\0');
	sec->n = 0;
	*has_sub = false;
	for (;;) {
		int ch = next(c);

		if (c->eof)
			return -1;
		if (ch == ']')
			break;
		if (isspace(ch)) {
			do {
				if (ch == '\n')
					return -1;
				ch = next(c);
			} while (isspace(ch));
			if (ch != '"')
				return -1;
			*has_sub = true;
			putc_(sub, '\0');
			sub->n = 0;
			for (;;) {
				ch = next(c);
				if (ch == '\n')
					return -1;
				if (ch == '"')
					break;
				if (ch == '\\') {
					ch = next(c);
					if (ch == '\n')
						return -1;
				}
				putc_(sub, (char)ch);
			}
			if (next(c) != ']')
				return -1;
			break;
		}
		if (!keychar(ch) && ch != '.')
			return -1;
		putc_(sec, (char)tolower(ch));
	}
	/* [section.sub]: the old syntax, all in lower case */
	if (!*has_sub && memchr(sec->s, '.', sec->n)) {
		char *dot = memchr(sec->s, '.', sec->n);

		*has_sub = true;
		sub->n = 0;
		put(sub, dot + 1, sec->n - (size_t)(dot + 1 - sec->s));
		sec->n = (size_t)(dot - sec->s);
		sec->s[sec->n] = '\0';
	}
	return 0;
}

/* after '=': git's parse_value; -1: rejected */
static int value(struct src *c, struct buf *v)
{
	bool quote = false, comment = false;
	size_t space = 0;

	v->n = 0;
	putc_(v, '\0');
	v->n = 0;
	for (;;) {
		int ch = next(c);

		if (ch == '\n')
			return quote ? -1 : 0;
		if (comment)
			continue;
		if (isspace(ch) && !quote) {
			if (v->n)
				space++;
			continue;
		}
		if (!quote && (ch == ';' || ch == '#')) {
			comment = true;
			continue;
		}
		for (; space; space--)
			putc_(v, ' ');
		if (ch == '\\') {
			ch = next(c);
			switch (ch) {
			case '\n':
				if (c->eof)
					return -1;
				continue;
			case 't':
				ch = '\t';
				break;
			case 'b':
				ch = '\b';
				break;
			case 'n':
				ch = '\n';
				break;
			case '\\':
			case '"':
				break;
			default:
				return -1;
			}
			putc_(v, (char)ch);
			continue;
		}
		if (ch == '"') {
			quote = !quote;
			continue;
		}
		putc_(v, (char)ch);
	}
}

static int parse(const char *in, size_t len, entry_fn fn, void *arg)
{
	struct src c = { in, len, 0, false };
	struct buf sec = { 0 }, sub = { 0 }, name = { 0 }, v = { 0 };
	bool has_sub = false, comment = false;
	int r = 0;

	putc_(&sec, '\0');
	sec.n = 0;
	if (len >= 3 && memcmp(in, "\xef\xbb\xbf", 3) == 0)
		c.pos = 3;
	for (;;) {
		int ch = next(&c);
		size_t start, end;

		if (ch == '\n') {
			if (c.eof)
				break;
			comment = false;
			continue;
		}
		if (comment || isspace(ch))
			continue;
		if (ch == '#' || ch == ';') {
			comment = true;
			continue;
		}
		if (ch == '[') {
			if (header(&c, &sec, &sub, &has_sub) < 0) {
				r = -1;
				break;
			}
			continue;
		}
		if (!isalpha(ch) || sec.n == 0) {
			r = -1; /* git: a key before any section is an error */
			break;
		}
		start = c.pos - 1;
		name.n = 0;
		putc_(&name, (char)tolower(ch));
		for (;;) {
			ch = next(&c);
			if (c.eof || !keychar(ch))
				break;
			putc_(&name, (char)tolower(ch));
		}
		while (ch == ' ' || ch == '\t')
			ch = next(&c);
		if (ch != '\n') {
			if (ch != '=' || value(&c, &v) < 0) {
				r = -1;
				break;
			}
		}
		/* c.pos is past the newline ("\r\n"), or at the end */
		end = c.eof ? c.len : c.pos - 1;
		if (!c.eof && end > start && c.s[end - 1] == '\r')
			end--;
		fn(arg, sec.s, has_sub ? sub.s : NULL, name.s,
		   ch == '\n' ? NULL : v.s, start, end);
		if (c.eof)
			break;
	}
	free(sec.s);
	free(sub.s);
	free(name.s);
	free(v.s);
	return r;
}

/* ---- neutralise ---- */

struct neut {
	const char *in;
	struct buf out, keys;
	size_t last;
	int n;
	bool keep_includes; /* sb_git_config_filter */
};

static bool is_include(const char *section, const char *sub, const char *name)
{
	return strcmp(name, "path") == 0 &&
	       ((strcmp(section, "include") == 0 && !sub) ||
		(strcmp(section, "includeif") == 0 && sub));
}

static void neut_entry(void *arg, const char *section, const char *sub,
		       const char *name, const char *val, size_t start,
		       size_t end)
{
	static const char mark[] = "#agentrun# ";
	struct neut *n = arg;
	size_t ls = start;

	if (!sb_git_code_key(section, sub, name, val) ||
	    (n->keep_includes && is_include(section, sub, name)))
		return;
	put(&n->out, n->in + n->last, start - n->last);
	while (ls > 0 && n->in[ls - 1] != '\n' &&
	       (n->in[ls - 1] == ' ' || n->in[ls - 1] == '\t'))
		ls--;
	if (ls > 0 && n->in[ls - 1] != '\n')
		putc_(&n->out, '\n'); /* after a header on the same line */
	put(&n->out, mark, sizeof(mark) - 1);
	for (size_t i = start; i < end; i++) {
		putc_(&n->out, n->in[i]);
		if (n->in[i] == '\n')
			put(&n->out, mark, sizeof(mark) - 1);
	}
	n->last = end;
	if (n->keys.n)
		put(&n->keys, ", ", 2);
	put(&n->keys, section, strlen(section));
	putc_(&n->keys, '.');
	if (sub) {
		put(&n->keys, sub, strlen(sub));
		putc_(&n->keys, '.');
	}
	put(&n->keys, name, strlen(name));
	n->n++;
}

static int neutralise(const char *in, size_t len, bool keep_includes,
		      char **out, char **keys)
{
	struct neut n = { .in = in, .keep_includes = keep_includes };

	if (parse(in, len, neut_entry, &n) < 0) {
		free(n.out.s);
		free(n.keys.s);
		return -1;
	}
	put(&n.out, in + n.last, len - n.last);
	putc_(&n.keys, '\0');
	*out = n.out.s;
	*keys = n.keys.s;
	return n.n;
}

int sb_git_config_neutralise(const char *in, size_t len, char **out,
			     char **keys)
{
	return neutralise(in, len, false, out, keys);
}

int sb_git_config_filter(const char *in, size_t len, char **out, char **keys)
{
	return neutralise(in, len, true, out, keys);
}

/* ---- includes, hooksPath ---- */

struct collect {
	char **v;
	size_t n;
};

static void include_entry(void *arg, const char *section, const char *sub,
			  const char *name, const char *val, size_t start,
			  size_t end)
{
	struct collect *c = arg;

	(void)start;
	(void)end;
	if (!val || !is_include(section, sub, name))
		return;
	c->v = ar_xrealloc(c->v, (c->n + 2) * sizeof(char *));
	c->v[c->n++] = ar_xstrdup(val);
	c->v[c->n] = NULL;
}

char **sb_git_config_includes(const char *in, size_t len)
{
	struct collect c = { 0 };

	c.v = ar_xcalloc(1, sizeof(char *));
	if (parse(in, len, include_entry, &c) < 0) {
		ar_strv_free(c.v);
		return NULL;
	}
	return c.v;
}

struct value {
	const char *section, *name;
	char *v;
};

static void value_entry(void *arg, const char *section, const char *sub,
			const char *name, const char *val, size_t start,
			size_t end)
{
	struct value *c = arg;

	(void)start;
	(void)end;
	if (val && !sub && strcmp(section, c->section) == 0 &&
	    strcmp(name, c->name) == 0) {
		free(c->v);
		c->v = ar_xstrdup(val);
	}
}

char *sb_git_config_value(const char *in, size_t len, const char *section,
			  const char *name)
{
	struct value c = { section, name, NULL };

	if (parse(in, len, value_entry, &c) < 0) {
		free(c.v);
		return NULL;
	}
	return c.v;
}

char *sb_git_config_hookspath(const char *in, size_t len)
{
	return sb_git_config_value(in, len, "core", "hookspath");
}

/* ---- rebase todo ---- */

int sb_git_todo_neutralise(const char *in, size_t len, char **out)
{
	struct buf b = { 0 };
	int n = 0;

	for (size_t i = 0; i < len;) {
		const char *nl = memchr(in + i, '\n', len - i);
		size_t end = nl ? (size_t)(nl - in) + 1 : len, j = i;

		while (j < end && (in[j] == ' ' || in[j] == '\t'))
			j++;
		/* "exec CMD" or "x CMD" (git's parse_insn_line) */
		if ((end - j > 4 && strncmp(in + j, "exec", 4) == 0 &&
		     (in[j + 4] == ' ' || in[j + 4] == '\t')) ||
		    (end - j > 1 && in[j] == 'x' &&
		     (in[j + 1] == ' ' || in[j + 1] == '\t'))) {
			put(&b, "# agentrun: ", 12);
			n++;
		}
		put(&b, in + i, end - i);
		i = end;
	}
	if (n == 0) {
		free(b.s);
		return 0;
	}
	*out = b.s;
	return n;
}

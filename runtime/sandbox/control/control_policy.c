/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The effective policy of a running sandbox (control_policy.h). */
#define _GNU_SOURCE
#include "control_policy.h"

#include <stdlib.h>
#include <string.h>

#include "egress/egress_tls.h"
#include "utils.h"

static char **rule_texts(const struct ar_egress_policy *pol, size_t *n)
{
	char **v = ar_xcalloc(pol->n_rules + 1, sizeof(char *));

	for (size_t i = 0; i < pol->n_rules; i++)
		v[i] = ar_xstrdup(pol->rules[i].text ? pol->rules[i].text :
						       "?");
	*n = pol->n_rules;
	return v;
}

void ctl_policy_set(struct ctl_policy *p, const struct ar_egress_policy *pol,
		    const struct ar_egress_secret *s, size_t n)
{
	ctl_policy_release(p);
	p->egress = true;
	p->ask = pol->ask;
	p->shadow = pol->shadow;
	p->allow = rule_texts(pol, &p->n_allow);
	p->secrets = ar_xcalloc(n + 1, sizeof(*p->secrets));
	/* the name and where it goes: never the value or the placeholder */
	for (size_t i = 0; i < n; i++) {
		p->secrets[i].name = ar_xstrdup(s[i].name ? s[i].name : "?");
		p->secrets[i].hosts =
			rule_texts(&s[i].hosts, &p->secrets[i].n_hosts);
	}
	p->n_secrets = n;
}

void ctl_policy_release(struct ctl_policy *p)
{
	for (size_t i = 0; i < p->n_allow; i++)
		free(p->allow[i]);
	free(p->allow);
	for (size_t i = 0; i < p->n_secrets; i++) {
		free(p->secrets[i].name);
		for (size_t j = 0; j < p->secrets[i].n_hosts; j++)
			free(p->secrets[i].hosts[j]);
		free(p->secrets[i].hosts);
	}
	free(p->secrets);
	memset(p, 0, sizeof(*p));
}

void ctl_policy_reply(const struct ctl_policy *p, const char *name,
		      const char *profile, struct ctl_grants *g,
		      struct ctl_queue *q, struct ar_jbuf *b)
{
	ar_jbuf_lit(b, "{\"ok\":true,\"sandbox\":");
	ar_jbuf_cstr(b, name);
	ar_jbuf_key(b, "profile");
	ar_jbuf_cstr(b, profile);
	ar_jbuf_addf(b, ",\"egress\":%s,\"ask\":%s,\"shadow\":%s",
		     p->egress ? "true" : "false", p->ask ? "true" : "false",
		     p->shadow ? "true" : "false");
	ar_jbuf_key(b, "allow");
	ar_jbuf_strv(b, p->allow, p->n_allow);
	ar_jbuf_key(b, "secrets");
	ar_jbuf_lit(b, "[");
	for (size_t i = 0; i < p->n_secrets; i++) {
		ar_jbuf_addf(b, "%s{\"name\":", i ? "," : "");
		ar_jbuf_cstr(b, p->secrets[i].name);
		ar_jbuf_key(b, "hosts");
		ar_jbuf_strv(b, p->secrets[i].hosts, p->secrets[i].n_hosts);
		ar_jbuf_lit(b, "}");
	}
	ar_jbuf_lit(b, "]");
	ar_jbuf_key(b, "grants");
	ctl_grants_list(g, b);
	ar_jbuf_key(b, "session");
	ctl_queue_session_list(q, b);
	ar_jbuf_lit(b, "}\n");
}

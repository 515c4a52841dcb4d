/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Credential injection through TLS interception (egress_tls.h). */
#define _GNU_SOURCE
#include "egress_tls.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <arpa/inet.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "utils.h"

/*
 * libssl is loaded (dlopen) by the first --secret, not linked: linked,
 * its relocations alone cost every `agentrun run` milliseconds at start.
 * Each function used below goes through this table (the macros after it
 * turn the calls, and the calls OpenSSL's own macros expand to, into
 * table calls).
 */
#define AR_OSSL_FUNCS(X)                                                       \
	X(BN_bin2bn)                                                           \
	X(BN_free)                                                             \
	X(BN_to_ASN1_INTEGER)                                                  \
	X(ERR_clear_error)                                                     \
	X(ERR_error_string_n)                                                  \
	X(ERR_get_error)                                                       \
	X(EVP_PKEY_Q_keygen)                                                   \
	X(EVP_PKEY_free)                                                       \
	X(EVP_sha256)                                                          \
	X(PEM_write_X509)                                                      \
	X(RAND_bytes)                                                          \
	X(SSL_CTX_free)                                                        \
	X(SSL_CTX_new)                                                         \
	X(SSL_CTX_set_alpn_protos)                                             \
	X(SSL_CTX_set_alpn_select_cb)                                          \
	X(SSL_CTX_set_default_verify_paths)                                    \
	X(SSL_CTX_ctrl)                                                        \
	X(SSL_CTX_set_verify)                                                  \
	X(SSL_CTX_use_PrivateKey)                                              \
	X(SSL_CTX_use_certificate)                                             \
	X(SSL_accept)                                                          \
	X(SSL_connect)                                                         \
	X(SSL_free)                                                            \
	X(SSL_get_error)                                                       \
	X(SSL_new)                                                             \
	X(SSL_pending)                                                         \
	X(SSL_read)                                                            \
	X(SSL_set1_host)                                                       \
	X(SSL_set_fd)                                                          \
	X(SSL_ctrl)                                                            \
	X(SSL_shutdown)                                                        \
	X(SSL_write)                                                           \
	X(TLS_client_method)                                                   \
	X(TLS_server_method)                                                   \
	X(X509V3_EXT_conf_nid)                                                 \
	X(X509V3_set_ctx)                                                      \
	X(X509_EXTENSION_free)                                                 \
	X(X509_NAME_add_entry_by_txt)                                          \
	X(X509_add_ext)                                                        \
	X(X509_free)                                                           \
	X(X509_get_serialNumber)                                               \
	X(X509_get_subject_name)                                               \
	X(X509_getm_notAfter)                                                  \
	X(X509_getm_notBefore)                                                 \
	X(X509_gmtime_adj)                                                     \
	X(X509_new)                                                            \
	X(X509_set_issuer_name)                                                \
	X(X509_set_pubkey)                                                     \
	X(X509_set_version)                                                    \
	X(X509_sign)

static struct {
#define X(f) __typeof__(&f) f;
	AR_OSSL_FUNCS(X)
#undef X
} ossl;

static int ossl_load(struct ar_error *err)
{
	static const char *const names[] = {
#define X(f) #f,
		AR_OSSL_FUNCS(X)
#undef X
	};
	void **slot = (void **)&ossl;
	void *h;

	if (ossl.SSL_new)
		return 0;
	h = dlopen("libssl.so.3", RTLD_NOW | RTLD_LOCAL);
	if (!h)
		return ar_error_set_plain(
			err, ENOENT,
			"--secret: cannot load OpenSSL's libssl.so.3 (Debian/Ubuntu: apt-get install libssl3): %s",
			dlerror());
	for (size_t i = 0; i < AR_ARRAY_SIZE(names); i++) {
		slot[i] = dlsym(h, names[i]);
		if (!slot[i]) {
			memset(&ossl, 0, sizeof(ossl));
			return ar_error_set_plain(
				err, ENOENT, "--secret: libssl.so.3 has no %s",
				names[i]);
		}
	}
	return 0;
}

/* calls through the table from here on */
#define BN_bin2bn ossl.BN_bin2bn
#define BN_free ossl.BN_free
#define BN_to_ASN1_INTEGER ossl.BN_to_ASN1_INTEGER
#define ERR_clear_error ossl.ERR_clear_error
#define ERR_error_string_n ossl.ERR_error_string_n
#define ERR_get_error ossl.ERR_get_error
#define EVP_PKEY_Q_keygen ossl.EVP_PKEY_Q_keygen
#define EVP_PKEY_free ossl.EVP_PKEY_free
#define EVP_sha256 ossl.EVP_sha256
#define PEM_write_X509 ossl.PEM_write_X509
#define RAND_bytes ossl.RAND_bytes
#define SSL_CTX_free ossl.SSL_CTX_free
#define SSL_CTX_new ossl.SSL_CTX_new
#define SSL_CTX_set_alpn_protos ossl.SSL_CTX_set_alpn_protos
#define SSL_CTX_set_alpn_select_cb ossl.SSL_CTX_set_alpn_select_cb
#define SSL_CTX_set_default_verify_paths ossl.SSL_CTX_set_default_verify_paths
#define SSL_CTX_ctrl ossl.SSL_CTX_ctrl
#define SSL_CTX_set_verify ossl.SSL_CTX_set_verify
#define SSL_CTX_use_PrivateKey ossl.SSL_CTX_use_PrivateKey
#define SSL_CTX_use_certificate ossl.SSL_CTX_use_certificate
#define SSL_accept ossl.SSL_accept
#define SSL_connect ossl.SSL_connect
#define SSL_free ossl.SSL_free
#define SSL_get_error ossl.SSL_get_error
#define SSL_new ossl.SSL_new
#define SSL_pending ossl.SSL_pending
#define SSL_read ossl.SSL_read
#define SSL_set1_host ossl.SSL_set1_host
#define SSL_set_fd ossl.SSL_set_fd
#define SSL_ctrl ossl.SSL_ctrl
#define SSL_shutdown ossl.SSL_shutdown
#define SSL_write ossl.SSL_write
#define TLS_client_method ossl.TLS_client_method
#define TLS_server_method ossl.TLS_server_method
#define X509V3_EXT_conf_nid ossl.X509V3_EXT_conf_nid
#define X509V3_set_ctx ossl.X509V3_set_ctx
#define X509_EXTENSION_free ossl.X509_EXTENSION_free
#define X509_NAME_add_entry_by_txt ossl.X509_NAME_add_entry_by_txt
#define X509_add_ext ossl.X509_add_ext
#define X509_free ossl.X509_free
#define X509_get_serialNumber ossl.X509_get_serialNumber
#define X509_get_subject_name ossl.X509_get_subject_name
#define X509_getm_notAfter ossl.X509_getm_notAfter
#define X509_getm_notBefore ossl.X509_getm_notBefore
#define X509_gmtime_adj ossl.X509_gmtime_adj
#define X509_new ossl.X509_new
#define X509_set_issuer_name ossl.X509_set_issuer_name
#define X509_set_pubkey ossl.X509_set_pubkey
#define X509_set_version ossl.X509_set_version
#define X509_sign ossl.X509_sign

#define HEAD_MAX 65536
#define SYSTEM_BUNDLE "/etc/ssl/certs/ca-certificates.crt"

struct ar_egress_tls {
	EVP_PKEY *ca_key;
	X509 *ca;
	EVP_PKEY *leaf_key; /* one key for every host's certificate */
	SSL_CTX *client; /* upstream: the system's trust store */
};

static const char *ssl_error(void)
{
	static __thread char buf[256];
	unsigned long e = ERR_get_error();

	if (!e)
		return "unknown error";
	ERR_error_string_n(e, buf, sizeof(buf));
	ERR_clear_error();
	return buf;
}

static bool add_ext(X509 *x, X509 *issuer, int nid, const char *value)
{
	X509V3_CTX ctx;
	X509_EXTENSION *e;
	bool ok;

	X509V3_set_ctx(&ctx, issuer, x, NULL, NULL, 0);
	e = X509V3_EXT_conf_nid(NULL, &ctx, nid, value);
	if (!e)
		return false;
	ok = X509_add_ext(x, e, -1) == 1;
	X509_EXTENSION_free(e);
	return ok;
}

/* A certificate for `cn` with public key `key`, issued by issuer/ikey
 * (NULL: self-signed), valid from an hour ago for two days. */
static X509 *make_cert(const char *cn, EVP_PKEY *key, X509 *issuer,
		       EVP_PKEY *ikey, bool ca, const char *san)
{
	X509 *x = X509_new();
	unsigned char serial[16];
	BIGNUM *bn = NULL;
	bool ok;

	if (!x)
		return NULL;
	ok = RAND_bytes(serial, sizeof(serial)) == 1;
	serial[0] &= 0x7f;
	bn = ok ? BN_bin2bn(serial, sizeof(serial), NULL) : NULL;
	ok = bn && X509_set_version(x, 2) == 1 &&
	     BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(x)) &&
	     X509_gmtime_adj(X509_getm_notBefore(x), -3600) &&
	     X509_gmtime_adj(X509_getm_notAfter(x), 2 * 86400) &&
	     X509_set_pubkey(x, key) == 1 &&
	     X509_NAME_add_entry_by_txt(X509_get_subject_name(x), "CN",
					MBSTRING_UTF8,
					(const unsigned char *)cn, -1, -1,
					0) == 1 &&
	     X509_set_issuer_name(x, X509_get_subject_name(issuer ? issuer :
								    x)) == 1;
	BN_free(bn);
	if (ok && ca)
		ok = add_ext(x, x, NID_basic_constraints, "critical,CA:TRUE") &&
		     add_ext(x, x, NID_key_usage,
			     "critical,keyCertSign,cRLSign") &&
		     add_ext(x, x, NID_subject_key_identifier, "hash");
	else if (ok)
		ok = add_ext(x, issuer, NID_basic_constraints,
			     "critical,CA:FALSE") &&
		     add_ext(x, issuer, NID_key_usage,
			     "critical,digitalSignature") &&
		     add_ext(x, issuer, NID_ext_key_usage, "serverAuth") &&
		     add_ext(x, issuer, NID_subject_alt_name, san) &&
		     add_ext(x, issuer, NID_authority_key_identifier, "keyid");
	if (ok)
		ok = X509_sign(x, ikey ? ikey : key, EVP_sha256()) > 0;
	if (!ok) {
		X509_free(x);
		return NULL;
	}
	return x;
}

static int write_pem(const char *path, X509 *ca, const char *prefix_file,
		     struct ar_error *err)
{
	_cleanup_free_ char *sys = NULL;
	size_t syslen = 0;
	FILE *f;
	int fd;

	if (prefix_file) {
		struct ar_error ignored = AR_ERROR_INIT;

		/* no system bundle: the CA alone */
		if (ar_read_file_at(AT_FDCWD, prefix_file, 16u << 20, &sys,
				    &syslen, &ignored) < 0)
			syslen = 0;
	}
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW,
		  0644);
	if (fd < 0)
		return ar_error_set(err, errno, "--secret: write %s", path);
	f = fdopen(fd, "w");
	if (!f) {
		close(fd);
		return ar_error_set(err, errno, "--secret: write %s", path);
	}
	if ((syslen && fwrite(sys, 1, syslen, f) != syslen) ||
	    (syslen && sys[syslen - 1] != '\n' && fputc('\n', f) == EOF) ||
	    PEM_write_X509(f, ca) != 1) {
		fclose(f);
		return ar_error_set_plain(err, EIO, "--secret: write %s", path);
	}
	if (fclose(f) != 0)
		return ar_error_set(err, errno, "--secret: write %s", path);
	return 0;
}

int ar_egress_tls_new(const char *dir, struct ar_egress_tls **out,
		      struct ar_error *err)
{
	struct ar_egress_tls *t = ar_xcalloc(1, sizeof(*t));
	_cleanup_free_ char *ca = ar_xasprintf("%s/ca.pem", dir);
	_cleanup_free_ char *bundle = ar_xasprintf("%s/bundle.pem", dir);

	*out = NULL;
	if (ossl_load(err) < 0) {
		free(t);
		return -1;
	}
	t->ca_key = EVP_EC_gen("P-256");
	t->leaf_key = EVP_EC_gen("P-256");
	t->ca = t->ca_key ? make_cert("agentrun sandbox CA", t->ca_key, NULL,
				      NULL, true, NULL) :
			    NULL;
	t->client = SSL_CTX_new(TLS_client_method());
	if (!t->ca_key || !t->leaf_key || !t->ca || !t->client ||
	    SSL_CTX_set_default_verify_paths(t->client) != 1 ||
	    SSL_CTX_set_min_proto_version(t->client, TLS1_2_VERSION) != 1 ||
	    SSL_CTX_set_alpn_protos(
		    t->client, (const unsigned char *)"\x08http/1.1", 9) != 0) {
		ar_error_set_plain(err, EIO, "--secret: the sandbox's CA: %s",
				   ssl_error());
		ar_egress_tls_free(t);
		return -1;
	}
	SSL_CTX_set_verify(t->client, SSL_VERIFY_PEER, NULL);
	if (write_pem(ca, t->ca, NULL, err) < 0 ||
	    write_pem(bundle, t->ca, SYSTEM_BUNDLE, err) < 0) {
		ar_egress_tls_free(t);
		return -1;
	}
	*out = t;
	return 0;
}

void ar_egress_tls_free(struct ar_egress_tls *t)
{
	if (!t)
		return;
	EVP_PKEY_free(t->ca_key);
	EVP_PKEY_free(t->leaf_key);
	X509_free(t->ca);
	SSL_CTX_free(t->client);
	free(t);
}

bool ar_egress_secrets_for(const struct ar_egress_secret *s, size_t n,
			   const char *host, unsigned port)
{
	for (size_t i = 0; i < n; i++)
		if (ar_egress_host_allowed(&s[i].hosts, host, (uint16_t)port))
			return true;
	return false;
}

const struct ar_egress_secret *
ar_egress_placeholder_in(const struct ar_egress_secret *s, size_t n,
			 const char *buf, size_t len)
{
	for (size_t i = 0; i < n; i++)
		if (memmem(buf, len, s[i].placeholder,
			   strlen(s[i].placeholder)))
			return &s[i];
	return NULL;
}

static bool hop_header(const char *l, size_t len)
{
	static const char *const names[] = { "connection", "keep-alive",
					     "proxy-connection", NULL };

	for (const char *const *nm = names; *nm; nm++) {
		size_t nl = strlen(*nm);

		if (len > nl && l[nl] == ':' && strncasecmp(l, *nm, nl) == 0)
			return true;
	}
	return false;
}

/* An HTTP token character (RFC 9110 tchar). */
static bool tchar(unsigned char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ||
	       (c >= 'A' && c <= 'Z') || (c && strchr("!#$%&'*+-.^_`|~", c));
}

/* Does the authority `a` (len bytes: "host[:port]", "[v6][:port]", as
 * the request wrote it) name exactly host:port? Case-insensitive; the
 * port omitted is `dflt`; no user info, no trailing dot, nothing a
 * name or an address does not hold. */
static bool authority_is(const char *a, size_t len, uint16_t dflt,
			 const char *host, unsigned port)
{
	char h[256];
	uint16_t p;
	size_t hl = len;

	if (len == 0 || memchr(a, '@', len))
		return false;
	if (a[0] != '[') {
		const char *colon = memchr(a, ':', len);

		if (colon &&
		    !memchr(colon + 1, ':', len - (size_t)(colon - a) - 1))
			hl = (size_t)(colon - a);
	}
	if (hl == 0 || a[hl - 1] == '.')
		return false;
	if (!ar_egress_split_hostport(a, len, h, sizeof(h), dflt, &p))
		return false;
	return strcasecmp(h, host) == 0 && p == port;
}

enum ar_secret_verdict ar_egress_request_verdict(const char *head, size_t hlen,
						 const char *host,
						 unsigned port, char *why,
						 size_t wsize, char *asked,
						 size_t asize)
{
	const char *end = head + hlen, *eol, *sp1, *sp2, *target;
	const char *hv = NULL, *auth = NULL;
	size_t hvlen = 0, alen = 0, tlen;
	uint16_t adflt = 443;
	int n_host = 0;

	why[0] = asked[0] = '\0';
	if (hlen < 4 || memcmp(end - 4, "\r\n\r\n", 4) != 0 ||
	    memchr(head, '\0', hlen)) {
		snprintf(why, wsize, "not a complete request head");
		return AR_SECRET_WITHHOLD;
	}
	/* the request line: METHOD SP TARGET SP HTTP/1.x */
	eol = memmem(head, hlen, "\r\n", 2);
	sp1 = memchr(head, ' ', (size_t)(eol - head));
	sp2 = sp1 ? memchr(sp1 + 1, ' ', (size_t)(eol - sp1 - 1)) : NULL;
	for (const char *c = head; sp1 && c < sp1; c++)
		if (!tchar((unsigned char)*c))
			sp1 = NULL;
	if (!sp1 || sp1 == head || !sp2 || sp2 == sp1 + 1 ||
	    (size_t)(eol - sp2 - 1) != 8 ||
	    (memcmp(sp2 + 1, "HTTP/1.1", 8) != 0 &&
	     memcmp(sp2 + 1, "HTTP/1.0", 8) != 0)) {
		snprintf(why, wsize, "not an HTTP/1.x request line");
		return AR_SECRET_WITHHOLD;
	}
	target = sp1 + 1;
	tlen = (size_t)(sp2 - target);
	for (size_t i = 0; i < tlen; i++)
		if ((unsigned char)target[i] <= 0x20 ||
		    (unsigned char)target[i] >= 0x7f) {
			snprintf(why, wsize, "a malformed request target");
			return AR_SECRET_WITHHOLD;
		}
	/* the header lines: NAME ":" VALUE, no folding, no lone CR or LF;
	 * the Host lines counted */
	for (const char *l = eol + 2; l < end - 2;) {
		const char *e = memmem(l, (size_t)(end - l), "\r\n", 2);
		const char *colon = memchr(l, ':', (size_t)(e - l));

		if (colon == l || !colon || memchr(l, '\r', (size_t)(e - l)) ||
		    memchr(l, '\n', (size_t)(e - l))) {
			snprintf(why, wsize, "a malformed header line");
			return AR_SECRET_WITHHOLD;
		}
		for (const char *c = l; c < colon; c++)
			if (!tchar((unsigned char)*c)) {
				snprintf(why, wsize, "a malformed header line");
				return AR_SECRET_WITHHOLD;
			}
		if (colon - l == 4 && strncasecmp(l, "host", 4) == 0) {
			const char *v = colon + 1, *ve = e;

			while (v < ve && (*v == ' ' || *v == '\t'))
				v++;
			while (ve > v && (ve[-1] == ' ' || ve[-1] == '\t'))
				ve--;
			if (n_host++ == 0) {
				hv = v;
				hvlen = (size_t)(ve - v);
			}
		}
		l = e + 2;
	}
	if (hv)
		ar_quote_to(asked, asize, hv, hvlen > 200 ? 200 : hvlen);
	if (n_host > 1) {
		snprintf(why, wsize, "more than one Host header");
		return AR_SECRET_REFUSE;
	}
	/* the target: origin form, "*", or absolute with an authority */
	if (tlen >= 8 && strncasecmp(target, "https://", 8) == 0) {
		auth = target + 8;
	} else if (tlen >= 7 && strncasecmp(target, "http://", 7) == 0) {
		auth = target + 7;
		adflt = 80;
	} else if (target[0] != '/' && !(tlen == 1 && target[0] == '*')) {
		if (!asked[0])
			ar_quote_to(asked, asize, target,
				    tlen > 200 ? 200 : tlen);
		snprintf(why, wsize,
			 "its target is neither a path nor an https:// URL");
		return AR_SECRET_WITHHOLD;
	}
	if (auth) {
		alen = strcspn(auth, "/?# ");
		if (!authority_is(auth, alen, adflt, host, port)) {
			ar_quote_to(asked, asize, auth,
				    alen > 200 ? 200 : alen);
			snprintf(why, wsize, "its target names another host");
			return AR_SECRET_WITHHOLD;
		}
	}
	if (!hv) {
		if (auth)
			return AR_SECRET_INJECT; /* HTTP/1.0, absolute URL */
		snprintf(why, wsize, "no Host header");
		return AR_SECRET_WITHHOLD;
	}
	if (!authority_is(hv, hvlen, 443, host, port)) {
		snprintf(why, wsize, "its Host header names another host");
		return AR_SECRET_WITHHOLD;
	}
	return AR_SECRET_INJECT;
}

bool ar_egress_secrets_apply(const struct ar_egress_secret *s, size_t n,
			     const char *host, unsigned port, bool inject,
			     char *buf, size_t *len, size_t size)
{
	_cleanup_free_ char *out = ar_xmalloc(size);
	const char *end = buf + *len - 2; /* the final empty line */
	const char *l = strstr(buf, "\r\n");
	size_t o;

	if (!l || l >= end)
		return false;
	o = (size_t)(l + 2 - buf);
	if (o >= size)
		return false;
	memcpy(out, buf, o); /* the request line, untouched */
	for (l += 2; l < end;) {
		const char *e = strstr(l, "\r\n");
		size_t ll = (size_t)(e - l);

		if (!hop_header(l, ll)) {
			for (size_t k = 0; k < ll;) {
				bool done = false;

				for (size_t i = 0; i < n && !done; i++) {
					size_t pl = strlen(s[i].placeholder);
					size_t vl = strlen(s[i].value);

					if (!inject || k + pl > ll ||
					    memcmp(l + k, s[i].placeholder,
						   pl) != 0 ||
					    !ar_egress_host_allowed(
						    &s[i].hosts, host,
						    (uint16_t)port))
						continue;
					if (o + vl >= size)
						return false;
					memcpy(out + o, s[i].value, vl);
					o += vl;
					k += pl;
					done = true;
				}
				if (!done) {
					if (o + 1 >= size)
						return false;
					out[o++] = l[k++];
				}
			}
			if (o + 2 >= size)
				return false;
			out[o++] = '\r';
			out[o++] = '\n';
		}
		l = e + 2;
	}
	if (o + 21 >= size)
		return false;
	o += (size_t)snprintf(out + o, size - o, "Connection: close\r\n\r\n");
	memcpy(buf, out, o);
	*len = o;
	return true;
}

static int alpn_select(SSL *ssl, const unsigned char **out,
		       unsigned char *outlen, const unsigned char *in,
		       unsigned int inlen, void *arg)
{
	(void)ssl;
	(void)arg;
	for (unsigned int i = 0; i + 1 <= inlen; i += 1u + in[i]) {
		if (in[i] == 8 && i + 9 <= inlen &&
		    memcmp(in + i + 1, "http/1.1", 8) == 0) {
			*out = in + i + 1;
			*outlen = 8;
			return SSL_TLSEXT_ERR_OK;
		}
	}
	return SSL_TLSEXT_ERR_NOACK; /* no ALPN: HTTP/1.1 anyway */
}

/* A server context with a certificate for host. */
static SSL_CTX *server_ctx(struct ar_egress_tls *t, const char *host)
{
	struct in6_addr a;
	bool ip = inet_pton(AF_INET, host, &a) == 1 ||
		  inet_pton(AF_INET6, host, &a) == 1;
	_cleanup_free_ char *san =
		ar_xasprintf("%s:%s", ip ? "IP" : "DNS", host);
	X509 *leaf = make_cert(host, t->leaf_key, t->ca, t->ca_key, false, san);
	SSL_CTX *ctx = leaf ? SSL_CTX_new(TLS_server_method()) : NULL;

	if (ctx && (SSL_CTX_use_certificate(ctx, leaf) != 1 ||
		    SSL_CTX_use_PrivateKey(ctx, t->leaf_key) != 1)) {
		SSL_CTX_free(ctx);
		ctx = NULL;
	}
	if (ctx)
		SSL_CTX_set_alpn_select_cb(ctx, alpn_select, NULL);
	X509_free(leaf);
	return ctx;
}

static void set_timeout(int fd, int seconds)
{
	struct timeval tv = { .tv_sec = seconds };

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
}

static bool ssl_write_all(SSL *s, const char *buf, size_t len)
{
	while (len > 0) {
		int w = SSL_write(s, buf,
				  len > INT32_MAX ? INT32_MAX : (int)len);

		if (w <= 0)
			return false;
		buf += w;
		len -= (size_t)w;
	}
	return true;
}

/* Both ways until one side ends. A readable socket may hold a record
 * that is not data (TLS 1.3 session tickets, a key update): without
 * SSL_MODE_AUTO_RETRY, SSL_read then returns SSL_ERROR_WANT_READ
 * instead of blocking for data that may never come (a server waiting
 * for the rest of a request body) while the other side's bytes wait. */
static void pump(SSL *cs, int c, SSL *us, int up)
{
	char buf[16384];

	SSL_clear_mode(cs, SSL_MODE_AUTO_RETRY);
	SSL_clear_mode(us, SSL_MODE_AUTO_RETRY);

	for (;;) {
		struct pollfd pfd[2] = { { .fd = c, .events = POLLIN },
					 { .fd = up, .events = POLLIN } };
		SSL *from, *to;
		int r;

		if (SSL_pending(cs) > 0) {
			from = cs;
			to = us;
		} else if (SSL_pending(us) > 0) {
			from = us;
			to = cs;
		} else {
			if (poll(pfd, 2, -1) < 0) {
				if (errno == EINTR)
					continue;
				return;
			}
			from = pfd[1].revents ? us : cs;
			to = from == us ? cs : us;
		}
		r = SSL_read(from, buf, sizeof(buf));
		if (r <= 0 && SSL_get_error(from, r) == SSL_ERROR_WANT_READ)
			continue;
		if (r <= 0 || !ssl_write_all(to, buf, (size_t)r))
			return;
	}
}

/* The sandbox's request refused: a 400 with the reason, on its TLS. */
static void tls_reply_400(SSL *cs, const char *why)
{
	char buf[512];
	int n = snprintf(buf, sizeof(buf),
			 "HTTP/1.1 400 Bad Request\r\n"
			 "Content-Type: text/plain; charset=utf-8\r\n"
			 "Content-Length: %zu\r\n"
			 "Connection: close\r\n"
			 "X-Agentrun-Egress: blocked\r\n\r\n"
			 "agentrun: %s\n",
			 strlen(why) + 11, why);

	if (n > 0 && (size_t)n < sizeof(buf))
		(void)ssl_write_all(cs, buf, (size_t)n);
}

void ar_egress_tls_relay(struct ar_egress_tls *t, int c, int up,
			 const char *host, unsigned port,
			 const struct ar_egress_secret *s, size_t n,
			 struct ar_egress_tls_outcome *res)
{
	SSL_CTX *sctx = server_ctx(t, host);
	SSL *cs = NULL, *us = NULL;
	_cleanup_free_ char *head = ar_xmalloc(HEAD_MAX + 1);
	size_t len = 0, hlen = 0;
	char *reason = res->reason;
	size_t size = sizeof(res->reason);

	reason[0] = res->why[0] = res->asked[0] = '\0';
	res->verdict = AR_SECRET_INJECT;
	set_timeout(c, 30);
	set_timeout(up, 30);
	cs = sctx ? SSL_new(sctx) : NULL;
	us = SSL_new(t->client);
	if (!cs || !us || SSL_set_fd(cs, c) != 1 || SSL_set_fd(us, up) != 1) {
		snprintf(reason, size, "agentrun: TLS for %s: %s", host,
			 ssl_error());
		goto out;
	}
	if (SSL_accept(cs) != 1) {
		snprintf(
			reason, size,
			"agentrun: TLS with the sandbox for %s: %s (does it trust the sandbox's CA?)",
			host, ssl_error());
		goto out;
	}
	SSL_set_tlsext_host_name(us, host);
	SSL_set1_host(us, host);
	if (SSL_connect(us) != 1) {
		snprintf(reason, size, "agentrun: TLS to %s:%u: %s", host, port,
			 ssl_error());
		goto out;
	}
	/* the request head */
	for (;;) {
		char *e;
		int r;

		head[len] = '\0';
		e = strstr(head, "\r\n\r\n");
		if (e) {
			hlen = (size_t)(e + 4 - head);
			break;
		}
		if (len == HEAD_MAX)
			goto out;
		r = SSL_read(cs, head + len, (int)(HEAD_MAX - len));
		if (r <= 0)
			goto out;
		if (memchr(head + len, '\0', (size_t)r))
			goto out;
		len += (size_t)r;
	}
	/* the value goes only to a request for the host it was decided
	 * for (a shared front routes by Host, not by the connection) */
	res->verdict = ar_egress_request_verdict(head, hlen, host, port,
						 res->why, sizeof(res->why),
						 res->asked,
						 sizeof(res->asked));
	if (res->on_verdict)
		res->on_verdict(res, res->data);
	if (res->verdict == AR_SECRET_REFUSE) {
		tls_reply_400(cs, res->why);
		SSL_shutdown(cs);
		goto out;
	}
	{
		_cleanup_free_ char *req = ar_xmalloc(HEAD_MAX + 1024);
		size_t rlen = hlen;

		memcpy(req, head, hlen);
		if (!ar_egress_secrets_apply(s, n, host, port,
					     res->verdict == AR_SECRET_INJECT,
					     req, &rlen, HEAD_MAX + 1024) ||
		    !ssl_write_all(us, req, rlen) ||
		    (len > hlen && !ssl_write_all(us, head + hlen, len - hlen)))
			goto out;
	}
	set_timeout(c, 0);
	set_timeout(up, 0);
	pump(cs, c, us, up);
	SSL_shutdown(cs);
out:
	SSL_free(cs);
	SSL_free(us);
	SSL_CTX_free(sctx);
	ERR_clear_error();
}

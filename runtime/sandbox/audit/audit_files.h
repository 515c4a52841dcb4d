/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The "files" event of the audit log (audit_files.c): the files changed
 * in the workspace, from the overlay's upper layer with --overlay,
 * otherwise from a scan before and after the run (type, size, mtime and
 * inode of each entry; git's object stores are not entered, and a
 * change below a protected path (protect.h) says which; at most
 * SB_SCAN_MAX entries, then the event says "truncated": true).
 */
#ifndef AGENTRUN_AUDIT_FILES_H
#define AGENTRUN_AUDIT_FILES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct ar_audit;
struct ar_overlay;
struct sb_protect;

#define SB_SCAN_MAX 200000
#define SB_SCAN_MAX_LISTED 10000

struct sb_scan_entry {
	char *path; /* relative to the root */
	uint64_t ino, size;
	int64_t mtime_ns;
	mode_t type; /* S_IFMT bits */
};

struct sb_scan {
	struct sb_scan_entry *v;
	size_t n, cap;
	bool truncated;
};

/* Scan the tree at root (same filesystem, symlinks not followed). */
void sb_scan_take(const char *root, struct sb_scan *out);
void sb_scan_free(struct sb_scan *s);

/* Changes between two scans as "A path", "M path", "D path" lines
 * (sorted by path) passed to fn; returns the number of changes. */
size_t sb_scan_diff(const struct sb_scan *before, const struct sb_scan *after,
		    void (*fn)(char kind, const char *path, bool dir,
			       void *data),
		    void *data);

/* Emit the "files" event: from the scans, or from the overlay. */
void sb_audit_files_scan(struct ar_audit *a, const struct sb_scan *before,
			 const char *root, const struct sb_protect *protect);
void sb_audit_files_overlay(struct ar_audit *a, const struct ar_overlay *ov);

#endif

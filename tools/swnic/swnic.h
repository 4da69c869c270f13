/* SPDX-License-Identifier: GPL-2.0 */
/*
 * swnic(8): shared declarations of the management tool.
 */
#ifndef SWNIC_TOOL_H
#define SWNIC_TOOL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <libmnl/libmnl.h>
#include <linux/swnic.h>
#include <linux/swnic_netlink.h>

/* ---- the tool's state, one per run (batch lines share it) ------------- */

struct sw {
	int argc;			/* arguments left */
	char **argv;			/* next argument */
	bool json;			/* -j */
	bool pretty;			/* -p */
	bool force;			/* -f: go on after a failed batch line */

	struct mnl_socket *nl;		/* open on first use */
	uint32_t portid;
	uint32_t seq;
	uint16_t family;		/* generic netlink id of "swnic" */
	uint32_t mcgrp_events;		/* id of the "events" group */
	char *buf;			/* MNL_SOCKET_BUFFER_SIZE bytes */
};

/* A command table: the first entry runs when no command is given. */
struct sw_cmd {
	const char *name;
	int (*fn)(struct sw *sw);
};

/* ---- arguments (swnic.c) ---------------------------------------------- */

/*
 * Arguments of one command at most: no more than 20 bytes of request each
 * (a name, a number), so that every request fits NL_SEND_SIZE.
 */
#define SW_MAX_ARGS	256

int sw_argc(const struct sw *sw);
const char *sw_argv(const struct sw *sw);
bool sw_argv_is(const struct sw *sw, const char *word);
void sw_next(struct sw *sw);
int sw_exec(struct sw *sw, const struct sw_cmd *cmds, const char *what,
	    void (*usage)(void));
int sw_need_arg(struct sw *sw, const char *key, const char **val);
int sw_arg_u32(struct sw *sw, const char *key, uint32_t *val);
int sw_arg_u64(struct sw *sw, const char *key, uint64_t *val);
int sw_unknown_arg(const struct sw *sw, void (*usage)(void));
int sw_parse_u32(const char *s, uint32_t *val);
int sw_parse_u64(const char *s, uint64_t *val);

/* ---- netlink (nl.c) ---------------------------------------------------- */

/* Attribute table of a message: tb[type] = last attribute of that type. */
struct sw_attrs {
	const struct nlattr *tb[SWNIC_A_MAX + 1];
};

int nl_open(struct sw *sw);
void nl_close(struct sw *sw);
struct nlmsghdr *nl_msg(struct sw *sw, uint8_t cmd, uint16_t flags);
int nl_run(struct sw *sw, struct nlmsghdr *nlh, mnl_cb_t cb, void *data);
int nl_dump(struct sw *sw, uint8_t cmd,
	    int (*put)(struct nlmsghdr *nlh, void *data), void *put_data,
	    mnl_cb_t cb, void *data);
int nl_subscribe(struct sw *sw);
int nl_recv_events(struct sw *sw, mnl_cb_t cb, void (*lost)(void *data),
		   void *data);
int nl_parse(const struct nlmsghdr *nlh, struct sw_attrs *a);
uint8_t nl_cmd(const struct nlmsghdr *nlh);
const char *nl_attr_name(unsigned int type);

bool attr_u32(const struct nlattr *a, uint32_t *v);
bool attr_u64(const struct nlattr *a, uint64_t *v);
const char *attr_str(const struct nlattr *a);

/*
 * Put the string @s as attribute @type if the kernel takes it: shorter
 * than @size bytes with its NUL (SWNIC_NAME_MAX, IFNAMSIZ). Else say that
 * the @what is too long and fail: nothing longer reaches the request.
 */
int nl_put_name(struct nlmsghdr *nlh, uint16_t type, const char *what,
		const char *s, size_t size);
/* Put DEV_NAME, or DEV_INDEX for an all-digit name; -1 if too long. */
int nl_put_dev(struct nlmsghdr *nlh, const char *dev);

/* ---- output (print.c): JSON or human text from the same calls --------- */

enum pr_style {
	PR_TABLE,	/* text: aligned columns; JSON: one array */
	PR_LINES,	/* text: "key value ..." lines; JSON: one object a line */
};

void pr_init(bool json, bool pretty);
void pr_begin(enum pr_style style);
int pr_end(void);
void pr_discard(void);

void pr_row_begin(void);
void pr_row_end(void);
void pr_str(const char *key, const char *val);
void pr_u32(const char *key, uint32_t val);
void pr_u64(const char *key, uint64_t val);
void pr_hex64(const char *key, uint64_t val);
void pr_bool(const char *key, bool val);
void pr_list_begin(const char *key);
void pr_list_u32(uint32_t val);
void pr_list_end(void);
void pr_map_begin(const char *key, const char *name_col, const char *val_col);
void pr_map_u64(const char *name, uint64_t val);
void pr_map_end(void);

/* ---- objects ----------------------------------------------------------- */

int cmd_dev(struct sw *sw);
int cmd_domain(struct sw *sw);
int cmd_stat(struct sw *sw);
int cmd_service(struct sw *sw);
int cmd_monitor(struct sw *sw);
int cmd_mr(struct sw *sw);
int cmd_peer(struct sw *sw);

/* Print one message's objects (shared by show commands and monitor). */
void dev_print(const struct sw_attrs *a);
void domain_print(const struct sw_attrs *a);
void service_print(const struct sw_attrs *a);
void mr_print(const struct sw_attrs *a);
const char *dev_state_name(uint32_t state);

/* stat.c: the counters of a SWNIC_A_STATS nest, as a map (stat, peer). */
void stat_for_each(const struct nlattr *stats,
		   void (*fn)(const char *name, uint64_t value, void *arg),
		   void *arg);
void stat_print_entries(const struct nlattr *stats);

#endif /* SWNIC_TOOL_H */

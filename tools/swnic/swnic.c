// SPDX-License-Identifier: GPL-2.0
/*
 * swnic(8): manage swnic devices, domains, services and events, and show
 * the wire's peers, over the generic netlink family "swnic".
 *
 *   swnic [-j] [-p] OBJECT COMMAND [ARGS]
 *   swnic [-f] -b FILE
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "swnic.h"

#define SWNIC_TOOL_VERSION "0.1"
#define BATCH_MAX_ARGS 64

static void usage(void)
{
	fprintf(stderr,
		"Usage: swnic [OPTIONS] OBJECT { COMMAND | help }\n"
		"       swnic [-f] -b FILE\n"
		"where  OBJECT := { dev | domain | mr | stat | service | peer | monitor\n"
		"                  | help }\n"
		"       OPTIONS := { -j[son] | -p[retty] | -V[ersion] | -h[elp] }\n"
		"See swnic(8) and `swnic OBJECT help`.\n");
}

static int cmd_help(struct sw *sw)
{
	usage();
	return 0;
}

int sw_argc(const struct sw *sw)
{
	return sw->argc;
}

const char *sw_argv(const struct sw *sw)
{
	return sw->argc > 0 ? sw->argv[0] : NULL;
}

bool sw_argv_is(const struct sw *sw, const char *word)
{
	return sw->argc > 0 && !strcmp(sw->argv[0], word);
}

void sw_next(struct sw *sw)
{
	if (sw->argc > 0) {
		sw->argc--;
		sw->argv++;
	}
}

/*
 * Run the command named by the next argument (a unique prefix is enough),
 * the table's first entry when there is none; "help" prints @usage.
 */
int sw_exec(struct sw *sw, const struct sw_cmd *cmds, const char *what,
	    void (*usage_fn)(void))
{
	const struct sw_cmd *c, *found = NULL;
	const char *word = sw_argv(sw);
	size_t len;

	if (!word)
		return cmds[0].fn(sw);
	if (!strcmp(word, "help") || !strcmp(word, "-h") ||
	    !strcmp(word, "--help")) {
		usage_fn();
		return 0;
	}
	len = strlen(word);
	for (c = cmds; c->name; c++) {
		if (!strcmp(c->name, word)) {
			found = c;
			break;
		}
		if (!strncmp(c->name, word, len)) {
			if (found) {
				fprintf(stderr, "swnic: ambiguous %s \"%s\"\n",
					what, word);
				usage_fn();
				return -1;
			}
			found = c;
		}
	}
	if (!found) {
		fprintf(stderr, "swnic: unknown %s \"%s\"\n", what, word);
		usage_fn();
		return -1;
	}
	sw_next(sw);
	return found->fn(sw);
}

/* Consume "KEY VALUE"; the current argument is KEY. */
int sw_need_arg(struct sw *sw, const char *key, const char **val)
{
	sw_next(sw);
	if (!sw_argc(sw)) {
		fprintf(stderr, "swnic: \"%s\" needs a value\n", key);
		return -1;
	}
	*val = sw_argv(sw);
	sw_next(sw);
	return 0;
}

/*
 * A decimal number, digits only: no sign or blank (strtoull() would take
 * them, " -1" as UINT64_MAX), no octal or hex (uid 01000 is uid 1000).
 */
int sw_parse_u64(const char *s, uint64_t *val)
{
	unsigned long long v;
	char *end;

	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end)
		return -1;
	*val = v;
	return 0;
}

int sw_parse_u32(const char *s, uint32_t *val)
{
	uint64_t v;

	if (sw_parse_u64(s, &v) || v > UINT32_MAX)
		return -1;
	*val = v;
	return 0;
}

int sw_arg_u32(struct sw *sw, const char *key, uint32_t *val)
{
	const char *s;

	if (sw_need_arg(sw, key, &s))
		return -1;
	if (sw_parse_u32(s, val)) {
		fprintf(stderr, "swnic: \"%s\": \"%s\" is not a 32-bit number\n",
			key, s);
		return -1;
	}
	return 0;
}

/* A u64 with an optional K/M/G/T binary suffix (sizes). */
int sw_arg_u64(struct sw *sw, const char *key, uint64_t *val)
{
	static const char suffixes[] = "KMGT";
	char num[32];
	const char *s, *sfx;
	size_t len;
	uint64_t v;
	int shift = 0;

	if (sw_need_arg(sw, key, &s))
		return -1;
	len = strlen(s);
	if (len && len < sizeof(num) && (sfx = strchr(suffixes, s[len - 1])) &&
	    *sfx) {
		shift = 10 * (int)(sfx - suffixes + 1);
		memcpy(num, s, len - 1);
		num[len - 1] = '\0';
	} else if (len < sizeof(num)) {
		memcpy(num, s, len + 1);
	} else {
		num[0] = '\0';
	}
	if (sw_parse_u64(num, &v) || (shift && v > (UINT64_MAX >> shift))) {
		fprintf(stderr, "swnic: \"%s\": \"%s\" is not a size\n", key, s);
		return -1;
	}
	*val = v << shift;
	return 0;
}

int sw_unknown_arg(const struct sw *sw, void (*usage_fn)(void))
{
	fprintf(stderr, "swnic: unknown argument \"%s\"\n", sw_argv(sw));
	usage_fn();
	return -1;
}

static const struct sw_cmd objects[] = {
	{ "help", cmd_help },
	{ "dev", cmd_dev },
	{ "domain", cmd_domain },
	{ "mr", cmd_mr },
	{ "stat", cmd_stat },
	{ "service", cmd_service },
	{ "peer", cmd_peer },
	{ "monitor", cmd_monitor },
	{ NULL, NULL },
};

static int run(struct sw *sw, int argc, char **argv)
{
	sw->argc = argc;
	sw->argv = argv;
	return sw_exec(sw, objects, "object", usage);
}

/* Split @line in place into words; '#' starts a comment. */
static int split_line(char *line, char **words, int max)
{
	int n = 0;
	char *p = line;

	for (;;) {
		while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
			p++;
		if (!*p || *p == '#')
			return n;
		if (n == max)
			return -1;
		words[n++] = p;
		while (*p && *p != ' ' && *p != '\t' && *p != '\n' &&
		       *p != '\r')
			p++;
		if (*p)
			*p++ = '\0';
	}
}

static int batch(struct sw *sw, const char *path)
{
	char *words[BATCH_MAX_ARGS];
	char *line = NULL;
	size_t cap = 0;
	int lineno = 0, ret = 0, n;
	FILE *f;

	f = strcmp(path, "-") ? fopen(path, "r") : stdin;
	if (!f) {
		fprintf(stderr, "swnic: %s: %s\n", path, strerror(errno));
		return -1;
	}
	while (getline(&line, &cap, f) > 0) {
		lineno++;
		n = split_line(line, words, BATCH_MAX_ARGS);
		if (n < 0) {
			fprintf(stderr, "swnic: %s:%d: too many arguments\n",
				path, lineno);
			ret = -1;
		} else if (n && run(sw, n, words)) {
			fprintf(stderr, "swnic: %s:%d: command failed\n",
				path, lineno);
			ret = -1;
		} else {
			continue;
		}
		if (!sw->force)
			break;
	}
	free(line);
	if (f != stdin)
		fclose(f);
	return ret;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "pretty", no_argument, NULL, 'p' },
		{ "batch", required_argument, NULL, 'b' },
		{ "force", no_argument, NULL, 'f' },
		{ "version", no_argument, NULL, 'V' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *batch_file = NULL;
	struct sw sw = { 0 };
	int opt, ret;

	while ((opt = getopt_long(argc, argv, "+jpb:fVh", opts, NULL)) != -1) {
		switch (opt) {
		case 'j':
			sw.json = true;
			break;
		case 'p':
			sw.pretty = true;
			break;
		case 'b':
			batch_file = optarg;
			break;
		case 'f':
			sw.force = true;
			break;
		case 'V':
			printf("swnic %s\n", SWNIC_TOOL_VERSION);
			return 0;
		case 'h':
			usage();
			return 0;
		default:
			usage();
			return 1;
		}
	}
	pr_init(sw.json, sw.pretty);

	if (batch_file) {
		if (optind < argc) {
			fprintf(stderr, "swnic: -b takes no other arguments\n");
			usage();
			return 1;
		}
		ret = batch(&sw, batch_file);
	} else if (optind == argc) {
		usage();
		ret = -1;
	} else if (argc - optind > SW_MAX_ARGS) {
		fprintf(stderr, "swnic: too many arguments (at most %d)\n",
			SW_MAX_ARGS);
		ret = -1;
	} else {
		ret = run(&sw, argc - optind, argv + optind);
	}
	nl_close(&sw);
	return ret ? 1 : 0;
}

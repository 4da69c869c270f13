// SPDX-License-Identifier: GPL-2.0
/*
 * swnic(8): output. Every command prints through these calls; with -j they
 * build json-c objects (one array per listing, or one object per line for
 * events), otherwise human text: an aligned table per listing, or one
 * "key value ..." line per event; strings are escaped there, a value
 * being one field (text_escape()).
 *
 * A "map" (name -> u64, e.g. counters) is an object in JSON; in a text
 * table it expands into one row per entry with two extra columns.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "swnic.h"

struct cell {
	char *key;
	char *val;
};

struct row {
	struct cell *cells;
	size_t ncells;
};

static struct {
	bool json;
	bool pretty;
	enum pr_style style;

	/* JSON */
	struct json_object *array;	/* the listing (PR_TABLE) */
	struct json_object *obj;	/* the row being built */
	struct json_object *list;	/* an open list or map */
	const char *list_key;

	/* text */
	struct row *rows;
	size_t nrows;
	struct row cur;			/* the row being built */
	char *list_buf;			/* an open list, comma-joined */
	const char *map_name_col;
	const char *map_val_col;
	struct row map;			/* open map: name/value pairs */
} pr;

static void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n);
	if (!p) {
		perror("swnic");
		exit(1);
	}
	return p;
}

static char *xstrdup(const char *s)
{
	char *d = strdup(s);

	if (!d) {
		perror("swnic");
		exit(1);
	}
	return d;
}

void pr_init(bool json, bool pretty)
{
	pr.json = json;
	pr.pretty = pretty;
}

static void row_add(struct row *r, const char *key, const char *val)
{
	r->cells = xrealloc(r->cells, (r->ncells + 1) * sizeof(*r->cells));
	r->cells[r->ncells].key = xstrdup(key);
	r->cells[r->ncells].val = xstrdup(val);
	r->ncells++;
}

static void row_free(struct row *r)
{
	size_t i;

	for (i = 0; i < r->ncells; i++) {
		free(r->cells[i].key);
		free(r->cells[i].val);
	}
	free(r->cells);
	r->cells = NULL;
	r->ncells = 0;
}

static void row_copy(struct row *dst, const struct row *src)
{
	size_t i;

	for (i = 0; i < src->ncells; i++)
		row_add(dst, src->cells[i].key, src->cells[i].val);
}

static void rows_push(struct row *r)
{
	pr.rows = xrealloc(pr.rows, (pr.nrows + 1) * sizeof(*pr.rows));
	pr.rows[pr.nrows++] = *r;
	memset(r, 0, sizeof(*r));
}

static void rows_free(void)
{
	size_t i;

	for (i = 0; i < pr.nrows; i++)
		row_free(&pr.rows[i]);
	free(pr.rows);
	pr.rows = NULL;
	pr.nrows = 0;
}

void pr_begin(enum pr_style style)
{
	pr.style = style;
	if (pr.json && style == PR_TABLE)
		pr.array = json_object_new_array();
}

void pr_discard(void)
{
	if (pr.json && pr.array) {
		json_object_put(pr.array);
		pr.array = json_object_new_array();
	}
	rows_free();
}

static void json_print(struct json_object *o)
{
	int flags = JSON_C_TO_STRING_NOSLASHESCAPE;

	flags |= pr.pretty ? JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED
			   : JSON_C_TO_STRING_PLAIN;
	puts(json_object_to_json_string_ext(o, flags));
}

/* Print the table: columns in order of first appearance, '-' if absent. */
static void table_print(void)
{
	const char **cols = NULL;
	size_t *width = NULL;
	size_t ncols = 0, i, j, c;

	for (i = 0; i < pr.nrows; i++) {
		for (j = 0; j < pr.rows[i].ncells; j++) {
			const struct cell *cell = &pr.rows[i].cells[j];

			for (c = 0; c < ncols; c++)
				if (!strcmp(cols[c], cell->key))
					break;
			if (c == ncols) {
				cols = xrealloc(cols, (ncols + 1) * sizeof(*cols));
				width = xrealloc(width,
						 (ncols + 1) * sizeof(*width));
				cols[ncols] = cell->key;
				width[ncols] = strlen(cell->key);
				ncols++;
			}
			if (strlen(cell->val) > width[c])
				width[c] = strlen(cell->val);
		}
	}
	for (c = 0; c < ncols; c++) {
		for (j = 0; cols[c][j]; j++)
			putchar(cols[c][j] >= 'a' && cols[c][j] <= 'z' ?
				cols[c][j] - 'a' + 'A' : cols[c][j]);
		printf(c + 1 < ncols ? "%*s" : "\n",
		       (int)(width[c] - strlen(cols[c]) + 2), "");
	}
	for (i = 0; i < pr.nrows; i++) {
		for (c = 0; c < ncols; c++) {
			const char *val = "-";

			for (j = 0; j < pr.rows[i].ncells; j++)
				if (!strcmp(pr.rows[i].cells[j].key, cols[c]))
					val = pr.rows[i].cells[j].val;
			if (c + 1 < ncols)
				printf("%-*s", (int)width[c] + 2, val);
			else
				printf("%s\n", val);
		}
	}
	free(cols);
	free(width);
}

int pr_end(void)
{
	if (pr.json && pr.style == PR_TABLE) {
		json_print(pr.array);
		json_object_put(pr.array);
		pr.array = NULL;
	} else if (!pr.json && pr.style == PR_TABLE) {
		table_print();
	}
	rows_free();
	return fflush(stdout) ? -1 : 0;
}

void pr_row_begin(void)
{
	if (pr.json)
		pr.obj = json_object_new_object();
}

static void line_print(const struct row *r)
{
	size_t i;

	for (i = 0; i < r->ncells; i++)
		printf("%s%s %s", i ? " " : "", r->cells[i].key,
		       r->cells[i].val);
	putchar('\n');
}

void pr_row_end(void)
{
	size_t i;

	if (pr.json) {
		if (pr.style == PR_TABLE) {
			json_object_array_add(pr.array, pr.obj);
		} else {
			json_print(pr.obj);
			json_object_put(pr.obj);
			fflush(stdout);
		}
		pr.obj = NULL;
		return;
	}
	if (pr.style == PR_LINES) {
		row_copy(&pr.cur, &pr.map);
		line_print(&pr.cur);
		fflush(stdout);
		row_free(&pr.cur);
	} else if (!pr.map.ncells) {
		rows_push(&pr.cur);
	} else {
		/* A map: one text row per entry. */
		for (i = 0; i + 1 < pr.map.ncells; i += 2) {
			struct row r = { 0 };

			row_copy(&r, &pr.cur);
			row_add(&r, pr.map_name_col, pr.map.cells[i].val);
			row_add(&r, pr.map_val_col, pr.map.cells[i + 1].val);
			rows_push(&r);
		}
		row_free(&pr.cur);
	}
	row_free(&pr.map);
}

static void json_add(const char *key, struct json_object *v)
{
	json_object_object_add(pr.obj, key, v);
}

/*
 * @s as text shows it: bytes outside printable ASCII, the space (fields
 * are separated by spaces) and the backslash as \ooo, as ls -b and
 * /proc/mounts do; "" for the empty string. A value is one field on one
 * line, whatever a process named itself (a domain's comm).
 */
static char *text_escape(const char *s)
{
	char *d, *p;

	if (!*s)
		return xstrdup("\"\"");
	d = p = xrealloc(NULL, 4 * strlen(s) + 1);
	for (; *s; s++) {
		unsigned char c = *s;

		if (c <= ' ' || c >= 0x7f || c == '\\')
			p += sprintf(p, "\\%03o", c);
		else
			*p++ = c;
	}
	*p = '\0';
	return d;
}

void pr_str(const char *key, const char *val)
{
	char *s;

	if (pr.json) {
		json_add(key, val ? json_object_new_string(val) : NULL);
	} else if (!val) {
		row_add(&pr.cur, key, "-");
	} else {
		s = text_escape(val);
		row_add(&pr.cur, key, s);
		free(s);
	}
}

void pr_u32(const char *key, uint32_t val)
{
	char s[16];

	if (pr.json) {
		json_add(key, json_object_new_int64(val));
		return;
	}
	snprintf(s, sizeof(s), "%" PRIu32, val);
	row_add(&pr.cur, key, s);
}

void pr_u64(const char *key, uint64_t val)
{
	char s[24];

	if (pr.json) {
		json_add(key, json_object_new_uint64(val));
		return;
	}
	snprintf(s, sizeof(s), "%" PRIu64, val);
	row_add(&pr.cur, key, s);
}

void pr_hex64(const char *key, uint64_t val)
{
	char s[24];

	if (pr.json) {
		json_add(key, json_object_new_uint64(val));
		return;
	}
	snprintf(s, sizeof(s), "0x%" PRIx64, val);
	row_add(&pr.cur, key, s);
}

void pr_bool(const char *key, bool val)
{
	if (pr.json)
		json_add(key, json_object_new_boolean(val));
	else
		row_add(&pr.cur, key, val ? "yes" : "no");
}

void pr_list_begin(const char *key)
{
	pr.list_key = key;
	if (pr.json)
		pr.list = json_object_new_array();
	else
		pr.list_buf = NULL;
}

void pr_list_u32(uint32_t val)
{
	char *s;

	if (pr.json) {
		json_object_array_add(pr.list, json_object_new_int64(val));
		return;
	}
	if (asprintf(&s, "%s%s%" PRIu32, pr.list_buf ? pr.list_buf : "",
		     pr.list_buf ? "," : "", val) < 0) {
		perror("swnic");
		exit(1);
	}
	free(pr.list_buf);
	pr.list_buf = s;
}

void pr_list_end(void)
{
	if (pr.json) {
		json_object_object_add(pr.obj, pr.list_key, pr.list);
		pr.list = NULL;
		return;
	}
	row_add(&pr.cur, pr.list_key, pr.list_buf ? pr.list_buf : "-");
	free(pr.list_buf);
	pr.list_buf = NULL;
}

void pr_map_begin(const char *key, const char *name_col, const char *val_col)
{
	pr.list_key = key;
	pr.map_name_col = name_col;
	pr.map_val_col = val_col;
	if (pr.json)
		pr.list = json_object_new_object();
}

void pr_map_u64(const char *name, uint64_t val)
{
	char s[24];

	if (pr.json) {
		json_object_object_add(pr.list, name,
				       json_object_new_uint64(val));
		return;
	}
	snprintf(s, sizeof(s), "%" PRIu64, val);
	if (pr.style == PR_LINES) {
		row_add(&pr.map, name, s);
	} else {
		row_add(&pr.map, pr.map_name_col, name);
		row_add(&pr.map, pr.map_val_col, s);
	}
}

void pr_map_end(void)
{
	if (pr.json) {
		json_object_object_add(pr.obj, pr.list_key, pr.list);
		pr.list = NULL;
	}
}

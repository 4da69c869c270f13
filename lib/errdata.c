// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * What CQs (cq.c) and EQs (eq.c) share when an application reads an
 * error entry: the copy-out of its provider error data (fi_cq_readerr,
 * fi_eq_readerr) and the printable error string (fi_cq_strerror,
 * fi_eq_strerror).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "swnic.h"

/**
 * swnic_err_data_out() - give a reader an error entry's err_data
 * @api_version: the version the application opened its fabric with
 * @data: the entry's error data (@len bytes)
 * @len: its size
 * @err_data: the reader's err_data field
 * @err_data_size: the reader's err_data_size field
 * @prov_buf: the queue's own buffer: what a previous read returned
 *
 * As fi_cq(3) and fi_eq(3) say: if the application opened the fabric
 * with release 1.5 or later and gives a non-zero err_data_size, err_data
 * is its buffer of that size; the data is copied there (truncated to fit)
 * and err_data_size is set to the bytes copied. Else any err_data given
 * is ignored and err_data is set to a buffer the provider owns, valid
 * until the next read of the queue (@prov_buf, replaced here). Before 1.5
 * the entry has no err_data_size field: it is neither read nor written.
 * Caller holds the queue's lock (@prov_buf).
 */
void swnic_err_data_out(uint32_t api_version, const void *data, size_t len,
			void **err_data, size_t *err_data_size,
			uint8_t **prov_buf)
{
	bool has_size = !FI_VERSION_LT(api_version, FI_VERSION(1, 5));

	/* A size without a buffer is no buffer (not a write to NULL). */
	if (has_size && *err_data_size && *err_data) {
		if (len > *err_data_size)
			len = *err_data_size;
		if (len)
			memcpy(*err_data, data, len);
		*err_data_size = len;
		return;
	}
	free(*prov_buf);
	*prov_buf = NULL;
	if (len) {
		*prov_buf = malloc(len);
		if (*prov_buf)
			memcpy(*prov_buf, data, len);
		else
			len = 0;
	}
	*err_data = *prov_buf;
	if (has_size)
		*err_data_size = len;
}

/* fi_cq_strerror/fi_eq_strerror: @prov_errno is an errno. */
const char *swnic_strerror(int prov_errno, char *buf, size_t len)
{
	const char *str = strerror(prov_errno);

	if (buf && len) {
		snprintf(buf, len, "%s", str);
		return buf;
	}
	return str;
}

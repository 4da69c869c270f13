/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _SWNIC_AV_H
#define _SWNIC_AV_H

struct swnic_domain;
struct swnic_av_file;

int swnic_av_open_ioctl(struct swnic_domain *dom, void *arg);
int swnic_av_write_ioctl(struct swnic_av_file *f, void *arg);

#endif /* _SWNIC_AV_H */

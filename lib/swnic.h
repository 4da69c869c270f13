/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * swnic libfabric provider - internal definitions shared by every object.
 *
 * One file per fi object (fabric.c, domain.c, mr.c, ...), as libfabric's
 * prov/tcp, plus what several objects share: the ring/post layer
 * (post.c), error-entry copy-out (errdata.c) and the "not supported"
 * stubs (stubs.c); Documentation/datapath.rst lists them all. Only libfabric's public headers are used: the small helpers the
 * core's util/ layer would give (locks, lists, wait objects) are here.
 *
 * Locking model (fi_domain(3) "threading"):
 *  - Control paths (open/close/bind, MR registration, AV changes, EQ) are
 *    always thread safe: they take the owning object's ctl_lock.
 *  - Data paths (CQ and counter reads/writes, later endpoint posts) take
 *    the object's data lock only if the domain's threading model needs it
 *    (FI_THREAD_SAFE, FI_THREAD_FID, FI_THREAD_ENDPOINT). Under
 *    FI_THREAD_DOMAIN and FI_THREAD_COMPLETION the lock is a no-op.
 */
#ifndef SWNIC_PROV_H
#define SWNIC_PROV_H

#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_ext.h>
#include <rdma/providers/fi_log.h>
#include <rdma/providers/fi_prov.h>

#include <linux/swnic.h>
#include <linux/swnic_queue.h>

#include "rdma/fi_ext_swnic.h"
#include "rdma/fi_swnic_compat.h"

#include "stubs.h"

#define SWNIC_PROV_NAME		"swnic"
#define SWNIC_FABRIC_NAME	"swnic"
#define SWNIC_ADDR_STR_PREFIX	"fi_swnic://"
#define SWNIC_PROV_VERSION	FI_VERSION(1, 0)
/*
 * The newest API whose structures this provider fills in: the headers it
 * was built against (1.17 on Debian 12, 2.1 on Debian 13). The core hands
 * a provider only the applications that ask for no newer an API.
 */
#define SWNIC_FI_VERSION	FI_VERSION(FI_MAJOR_VERSION, FI_MINOR_VERSION)

#define SWNIC_SYSFS_CLASS	"/sys/class/swnic"
#define SWNIC_DEV_DIR		"/dev"

/* Provider specific protocol (fi_ep_attr.protocol): the swnic wire format. */
#define SWNIC_PROTO		(SWNIC_PROV_SPECIFIC | 0x5e)
#define SWNIC_PROTO_VERSION	1

/*
 * libfabric 1.17's core passes this fi_getinfo flag (its OFI_CORE_PROV_ONLY)
 * when a utility provider (ofi_rxm, ofi_rxd) looks for a core provider to
 * layer over. It is not part of the public API; see info.c for why swnic
 * declines such lookups by default.
 */
#define SWNIC_CORE_PROV_ONLY	(1ULL << 59)

/*
 * fi_domain2 flag of the provider's own: a domain the provider opens for
 * itself (connection management, cm.c). It serves objects like any other
 * but is never offered as fi_info's domain_attr->domain.
 */
#define SWNIC_DOMAIN_INTERNAL	(1ULL << 58)

extern struct fi_provider swnic_prov;

#define SWNIC_WARN(sub, ...)	FI_WARN(&swnic_prov, sub, __VA_ARGS__)
#define SWNIC_INFO(sub, ...)	FI_INFO(&swnic_prov, sub, __VA_ARGS__)

#define SWNIC_ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#define swnic_container_of(ptr, type, member) \
	((type *)((char *)(ptr) - offsetof(type, member)))

/* ---- provider parameters (init.c) ---------------------------------------- */

struct swnic_params {
	int layering;		/* answer core-only lookups of util providers */
	int mr_odp;		/* default registration mode: on-demand */
	int mr_cache;		/* enable the registration cache */
	size_t mr_cache_max;	/* cached, unused registrations kept */
	size_t recv_reg_min;	/* receives from this size register (0: no) */
	int doorbell_engine;	/* endpoints use their domain's engine */
	int remote_comm;	/* claim FI_REMOTE_COMM (one-host jobs) */
	int busy_poll;		/* an empty CQ read polls the wire (opt-in) */
	int copy_help;		/* an empty CQ read helps a large copy */
};

extern struct swnic_params swnic_params;

/* ---- lists ---------------------------------------------------------------- */

struct swnic_list {
	struct swnic_list *next, *prev;
};

static inline void swnic_list_init(struct swnic_list *h)
{
	h->next = h->prev = h;
}

static inline bool swnic_list_empty(const struct swnic_list *h)
{
	return h->next == h;
}

static inline void swnic_list_add_tail(struct swnic_list *h,
				       struct swnic_list *n)
{
	n->prev = h->prev;
	n->next = h;
	h->prev->next = n;
	h->prev = n;
}

static inline void swnic_list_del(struct swnic_list *n)
{
	n->prev->next = n->next;
	n->next->prev = n->prev;
	n->next = n->prev = n;
}

#define swnic_list_entry(ptr, type, member) swnic_container_of(ptr, type, member)
#define swnic_list_for_each(pos, head) \
	for ((pos) = (head)->next; (pos) != (head); (pos) = (pos)->next)
#define swnic_list_for_each_safe(pos, tmp, head) \
	for ((pos) = (head)->next, (tmp) = (pos)->next; (pos) != (head); \
	     (pos) = (tmp), (tmp) = (pos)->next)

/* ---- locks (wait.c) -------------------------------------------------------- */

/*
 * A mutex that is either real or compiled into a branch: data-path objects
 * of an FI_THREAD_DOMAIN / FI_THREAD_COMPLETION domain get the no-op kind.
 */
struct swnic_lock {
	pthread_mutex_t mutex;
	bool active;
};

void swnic_lock_init(struct swnic_lock *lock, bool active);
void swnic_lock_destroy(struct swnic_lock *lock);

static inline void swnic_lock_acquire(struct swnic_lock *lock)
{
	if (lock->active)
		pthread_mutex_lock(&lock->mutex);
}

static inline void swnic_lock_release(struct swnic_lock *lock)
{
	if (lock->active)
		pthread_mutex_unlock(&lock->mutex);
}

/* Does this threading model need the provider to serialise data paths? */
bool swnic_threading_locks(enum fi_threading threading);

/* ---- wait objects (wait.c) ------------------------------------------------- */

/*
 * The wait object behind an EQ, CQ or counter. For FI_WAIT_FD (and
 * FI_WAIT_UNSPEC) it is an epoll fd holding an eventfd the provider signals;
 * a kernel-backed queue adds its own fd (e.g. a CQ ring's fd, readable
 * while the ring is not empty) with swnic_wait_add_fd(), and the epoll fd
 * handed to the application stays the same. FI_WAIT_MUTEX_COND uses a
 * mutex and condition variable; FI_WAIT_YIELD spins with sched_yield().
 *
 * The signal is level-triggered: the owner calls swnic_wait_set() when its
 * queue becomes non-empty (or on fi_cq_signal) and swnic_wait_clear() when
 * it has drained it, so poll() on the fd means "something to read".
 * Provider threads (sread, fi_cntr_wait) sleep on a condition variable
 * keyed by a sequence number that every set() bumps.
 */
struct swnic_wait {
	enum fi_wait_obj type;
	int epfd;			/* FD: what the application polls */
	int evfd;			/* FD: the provider's own signal */
	pthread_mutex_t mutex;		/* waiters; MUTEX_COND's object */
	pthread_cond_t cond;		/* waiters; MUTEX_COND's object */
	atomic_uint signals;		/* set, not yet cleared */
	atomic_uint seq;		/* bumped by each set */
	atomic_uint waiters;		/* provider threads in wait */
	struct swnic_waitset *set;	/* FI_WAIT_SET: the set, or NULL */
};

int swnic_wait_init(struct swnic_wait *w, enum fi_wait_obj type);
void swnic_wait_fini(struct swnic_wait *w);
int swnic_wait_add_fd(struct swnic_wait *w, int fd);
void swnic_wait_set(struct swnic_wait *w);
void swnic_wait_kick(struct swnic_wait *w);
void swnic_wait_clear(struct swnic_wait *w);
void swnic_wait_drain(struct swnic_wait *w);
/* Block until signalled or timeout (ms, <0 forever); 0 or -FI_ETIMEDOUT. */
int swnic_wait_wait(struct swnic_wait *w, unsigned int seen_seq, int timeout);
int swnic_wait_control(struct swnic_wait *w, int command, void *arg);
/* waitset.c: wait sets and poll sets */
int swnic_wait_init_attr(struct swnic_wait *w, enum fi_wait_obj type,
			 struct fid_wait *set);
void swnic_wait_member(struct swnic_wait *w, struct fid *fid);
void swnic_wait_leave(struct swnic_wait *w);
void swnic_wait_set_parent(struct swnic_wait *w);
int swnic_waitset_trywait(struct fid *fid);
int swnic_waitset_open(struct fid_fabric *fabric, struct fi_wait_attr *attr,
		       struct fid_wait **waitset);
int swnic_pollset_open(struct fid_domain *domain, struct fi_poll_attr *attr,
		       struct fid_poll **pollset);
int swnic_eq_trywait(struct fid *fid);
int swnic_cq_trywait(struct fid *fid);
int swnic_cntr_trywait(struct fid *fid);
/* fi_cq_read, and whom each received message came from (cq.c) */
ssize_t swnic_cq_read_from(struct fid_cq *cq_fid, void *buf, size_t count,
			   struct sockaddr_in *from);

static inline unsigned int swnic_wait_seq(struct swnic_wait *w)
{
	return atomic_load(&w->seq);
}

/* Milliseconds left of @timeout since @start_ms (negative: forever). */
uint64_t swnic_now_ms(void);
int swnic_timeout_left(int timeout, uint64_t start_ms);

/* ---- devices (dev.c) ------------------------------------------------------- */

struct swnic_dev {
	char name[SWNIC_NAME_MAX];
	struct swnic_query_device attr;	/* the kernel's answer */
	struct sockaddr_in addr;	/* the device's IPv4 address, port 0 */
};

int swnic_dev_open(const char *name, int *fd);
int swnic_dev_query(int fd, struct swnic_dev *dev);
int swnic_dev_scan(struct swnic_dev **devs, size_t *count);
int swnic_dev_set_auth_key(int fd, uint32_t key);
int swnic_dev_get_auth_key(int fd, uint32_t *key);
int swnic_dev_auth_key_ok(const char *name, uint32_t key);

/* ---- addresses (addr.c) ---------------------------------------------------- */

/* Room for "fi_swnic://A.B.C.D:PORT" and its NUL. */
#define SWNIC_ADDR_STRLEN	72

bool swnic_addr_format_ok(uint32_t fmt);
int swnic_addr_parse_str(const char *str, struct sockaddr_in *sin);
int swnic_addr_to_str(const struct sockaddr_in *sin, char *buf, size_t len);
/* The same in IPv4's dotted form, also for an IPv6 peer's name. */
int swnic_addr_to_str4(const struct sockaddr_in *sin, char *buf, size_t len);
/* Read @addr of @addrlen in format @fmt (FI_SOCKADDR*, FI_ADDR_STR). */
int swnic_addr_read(uint32_t fmt, const void *addr, size_t addrlen,
		    struct sockaddr_in *sin);
/* Write @sin as format @fmt into a new buffer (fi_info src/dest_addr). */
int swnic_addr_dup(uint32_t fmt, const struct sockaddr_in *sin,
		   void **addr, size_t *addrlen);
size_t swnic_addr_len(uint32_t fmt);
int swnic_addr_copy_out(uint32_t fmt, const struct sockaddr_in *sin,
			void *addr, size_t *addrlen);
int swnic_addr_resolve_node(const char *node, bool numeric, bool remote_ok,
			    struct in_addr *ip);
int swnic_addr_parse_service(const char *service, uint16_t *port);
/*
 * IPv6 (SWNIC_FEAT_WIRE_IPV6): an IPv6 peer is named by 32 bits in
 * 0.0.0.0/8 (uapi swnic.h), which is what sockaddr_in's sin_addr holds
 * inside the provider; these translate, through a bound device's
 * namespace (@fd: a device fd, or -1 for the first bound device).
 */
int swnic_addr6_name(int fd, const struct in6_addr *a, uint32_t scope,
		     struct in_addr *name);
int swnic_addr6_lookup(struct in_addr name, struct sockaddr_in6 *sin6);
static inline bool swnic_addr_is_v6(struct in_addr a)
{
	return swnic_addr_is_name6(a.s_addr);
}
bool swnic_addr_is_local_host(const char *name);

/* ---- fi_info (attr.c, info.c) ---------------------------------------------- */

struct fi_info *swnic_info_alloc(const struct swnic_dev *dev,
				 enum fi_ep_type type);
uint64_t swnic_ep_caps(enum fi_ep_type type, const struct swnic_dev *dev);
uint64_t swnic_domain_caps(const struct swnic_dev *dev);
size_t swnic_max_ep_auth_key(const struct swnic_dev *dev);
size_t swnic_max_ep_ctx(const struct swnic_dev *dev);
size_t swnic_max_ep_srx_ctx(const struct swnic_dev *dev);
int swnic_getinfo(uint32_t version, const char *node, const char *service,
		  uint64_t flags, const struct fi_info *hints,
		  struct fi_info **info);
int swnic_check_domain_attr(const struct swnic_dev *dev,
			    const struct fi_domain_attr *attr,
			    uint32_t api_version, uint64_t caps);
bool swnic_tclass_valid(uint32_t tclass);
uint8_t swnic_tclass_dscp(uint32_t tclass);

/* ---- fabric (fabric.c) ----------------------------------------------------- */

struct swnic_fabric {
	struct fid_fabric fabric_fid;
	uint32_t api_version;
	pthread_mutex_t lock;		/* protects the counts below */
	unsigned int ndomains;
	unsigned int neqs;
	unsigned int nwaits;		/* wait sets */
	unsigned int npeps;		/* passive endpoints */
	struct swnic_list node;		/* on the registry, swnic_registry_lock */
};

int swnic_fabric(struct fi_fabric_attr *attr, struct fid_fabric **fabric,
		 void *context);
void swnic_fabric_child(struct swnic_fabric *fab, unsigned int *count,
			int delta);

/* Open fabrics and domains, for fi_info's fabric/domain fields. */
extern pthread_mutex_t swnic_registry_lock;
extern struct swnic_list swnic_fabrics;
extern struct swnic_list swnic_domains;

struct swnic_fabric *swnic_fabric_registered(const struct fid_fabric *fid);
struct fid_fabric *swnic_fabric_first(void);

/* ---- EQ (eq.c) ------------------------------------------------------------- */

struct swnic_eq;

int swnic_eq_open(struct fid_fabric *fabric, struct fi_eq_attr *attr,
		  struct fid_eq **eq, void *context);
struct swnic_eq *swnic_eq_from_fid(struct fid *fid);
int swnic_eq_bind_check(const struct swnic_eq *eq,
			const struct swnic_fabric *fabric,
			enum fi_log_subsys subsys, const char *call);
/* Queue an event or an error event; -FI_EOVERRUN if the EQ is full. */
int swnic_eq_report(struct swnic_eq *eq, uint32_t event, fid_t fid,
		    void *context, uint64_t data);
int swnic_eq_report_err(struct swnic_eq *eq, fid_t fid, void *context,
			uint64_t data, int err, int prov_errno);
int swnic_eq_report_err_data(struct swnic_eq *eq, fid_t fid, void *context,
			     uint64_t data, int err, int prov_errno,
			     const void *err_data, size_t err_len);
int swnic_eq_report_cm(struct swnic_eq *eq, uint32_t event, fid_t fid,
		       struct fi_info *info, const void *data, size_t len);
/* Free an FI_CONNREQ event's fi_info and its request (cm.c). */
void swnic_cm_info_free(struct fi_info *info);
void swnic_eq_bind_get(struct swnic_eq *eq);
void swnic_eq_bind_put(struct swnic_eq *eq);

/* ---- domain (domain.c) ----------------------------------------------------- */

/* The kinds of object a domain owns, for fi_close -FI_EBUSY reports. */
enum swnic_child {
	SWNIC_CHILD_MR,
	SWNIC_CHILD_AV,
	SWNIC_CHILD_CQ,
	SWNIC_CHILD_CNTR,
	SWNIC_CHILD_EP,
	SWNIC_CHILD_POLL,
	SWNIC_CHILD_MAX
};

struct swnic_mr_cache;

struct swnic_domain {
	struct fid_domain domain_fid;
	struct swnic_fabric *fabric;
	struct swnic_dev dev;		/* the device and its limits */
	int fd;				/* the kernel domain: /dev/<name> */
	uint32_t api_version;

	/* fi_domain_attr values this domain was opened with */
	enum fi_threading threading;
	enum fi_progress control_progress;
	enum fi_progress data_progress;
	enum fi_resource_mgmt resource_mgmt;
	enum fi_av_type av_type;
	int mr_mode;
	uint64_t caps;
	uint32_t tclass;		/* default for endpoints (data path) */
	bool has_auth_key;
	uint32_t auth_key;
	bool av_auth_key;		/* FI_AV_AUTH_KEY: keys from the AV */
	bool data_locks;		/* threading needs data-path locks */
	bool internal;			/* the provider's own (cm.c) */

	pthread_mutex_t ctl_lock;	/* control paths: EQ binding, children */
	atomic_uint children[SWNIC_CHILD_MAX];

	struct swnic_eq *eq;		/* bound EQ (or NULL), ctl_lock */
	uint64_t eq_flags;		/* FI_REG_MR if registration is async */

	struct fi_hmem_override_ops hmem_ops; /* fi_set_ops, or all NULL */
	bool hmem_override;

	uint32_t addr_format;		/* of the fi_info it was opened with */
	uint64_t info_caps;		/* fi_info caps it was opened with */

	struct swnic_mr_cache *mr_cache;
	struct swnic_mr_async *mr_async; /* FI_REG_MR worker, mr.c */
	struct swnic_mr *_Atomic mr_spare; /* the last MR closed, for reuse */
	bool mr_odp;			/* default registration mode */

	/* The kernel's invalidation page, mapped once (ctl_lock). */
	const volatile struct swnic_inval_page *inval;
	size_t inval_len;
	const volatile struct swnic_inval_rec *inval_ring;
	uint32_t inval_entries;

	struct swnic_list node;		/* on swnic_domains */
};

int swnic_domain_open(struct fid_fabric *fabric, struct fi_info *info,
		      struct fid_domain **domain, void *context);
int swnic_domain_open2(struct fid_fabric *fabric, struct fi_info *info,
		       struct fid_domain **domain, uint64_t flags,
		       void *context);
struct swnic_domain *swnic_domain_registered(const struct fid_domain *fid);
struct fid_domain *swnic_domain_first(const char *name);
bool swnic_domain_has_key(struct swnic_domain *dom, uint32_t key);

static inline void swnic_domain_child(struct swnic_domain *dom,
				      enum swnic_child kind, int delta)
{
	if (delta > 0)
		atomic_fetch_add(&dom->children[kind], 1);
	else
		atomic_fetch_sub(&dom->children[kind], 1);
}

/* No limit of the provider's own (the kernel's applies when it creates). */
#define SWNIC_NO_LIMIT		UINT32_MAX

/**
 * swnic_domain_reserve() - count one more object of @kind in @dom
 * @dom: the domain
 * @kind: what is being opened
 * @limit: how many @dom may have (the device's, as fi_info says it)
 * @sub, @attr, @what: for the warning: the log subsystem, the fi_domain_attr
 *        field that tells the limit and what the objects are called
 *
 * Open functions reserve before they build the object and give the
 * reservation back (swnic_domain_child(dom, kind, -1)) if they fail after
 * it, so two threads cannot both take the last one. Return: 0, or
 * -FI_ENOSPC when @dom has @limit already.
 */
static inline int swnic_domain_reserve(struct swnic_domain *dom,
				       enum swnic_child kind, uint32_t limit,
				       enum fi_log_subsys sub,
				       const char *attr, const char *what)
{
	unsigned int n = atomic_load(&dom->children[kind]);

	do {
		if (n >= limit) {
			SWNIC_WARN(sub, "domain %s has %s (%u) %s\n",
				   dom->dev.name, attr, limit, what);
			return -FI_ENOSPC;
		}
	} while (!atomic_compare_exchange_weak(&dom->children[kind], &n,
					       n + 1));
	return 0;
}

/* The copy helpers every provider copy of application memory goes through. */
ssize_t swnic_copy_from_iface(struct swnic_domain *dom, void *dest,
			      size_t size, enum fi_hmem_iface iface,
			      uint64_t device, const struct iovec *iov,
			      size_t iov_count, uint64_t offset);
ssize_t swnic_copy_to_iface(struct swnic_domain *dom,
			    enum fi_hmem_iface iface, uint64_t device,
			    const struct iovec *iov, size_t iov_count,
			    uint64_t offset, const void *src, size_t size);
int swnic_hmem_set_ops(struct swnic_domain *dom, void *ops);

/* ---- MR (mr.c, mr_cache.c) ------------------------------------------------- */

extern struct fi_ops_mr swnic_mr_ops;
int swnic_mr_domain_init(struct swnic_domain *dom);
void swnic_mr_domain_fini(struct swnic_domain *dom);
int swnic_mr_open_ops(struct swnic_domain *dom, void **ops);
int swnic_domain_inval_page(struct fid_domain *domain,
			    struct fi_swnic_inval_page *page);

/* ---- CQ, counters, AV, endpoints ------------------------------------------ */

int swnic_cq_open(struct fid_domain *domain, struct fi_cq_attr *attr,
		  struct fid_cq **cq, void *context);
/* trigger.c: fi_control(domain, FI_QUEUE_WORK, ...) and co */
int swnic_trig_domain_control(struct swnic_domain *dom, int command,
			      void *arg);
int swnic_cntr_open(struct fid_domain *domain, struct fi_cntr_attr *attr,
		    struct fid_cntr **cntr, void *context);
int swnic_av_open(struct fid_domain *domain, struct fi_av_attr *attr,
		  struct fid_av **av, void *context);
int swnic_endpoint(struct fid_domain *domain, struct fi_info *info,
		   struct fid_ep **ep, void *context);
int swnic_scalable_ep(struct fid_domain *domain, struct fi_info *info,
		      struct fid_ep **sep, void *context);
int swnic_stx_ctx(struct fid_domain *domain, struct fi_tx_attr *attr,
		  struct fid_stx **stx, void *context);
int swnic_srx_ctx(struct fid_domain *domain, struct fi_rx_attr *attr,
		  struct fid_ep **rx_ep, void *context);
bool swnic_is_pep(const struct fid *fid);
int swnic_passive_ep(struct fid_fabric *fabric, struct fi_info *info,
		     struct fid_pep **pep, void *context);

/* ---- error entries of CQs and EQs (errdata.c) ----------------------------- */

void swnic_err_data_out(uint32_t api_version, const void *data, size_t len,
			void **err_data, size_t *err_data_size,
			uint8_t **prov_buf);
const char *swnic_strerror(int prov_errno, char *buf, size_t len);

#endif /* SWNIC_PROV_H */

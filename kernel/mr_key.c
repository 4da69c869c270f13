// SPDX-License-Identifier: GPL-2.0
/*
 * MR keys and lookups.
 *
 * A domain's MRs live in an xarray by handle. A provider key is the handle
 * in its low SWNIC_MR_HANDLE_BITS (24) bits under a random 40-bit tag, so a
 * key resolves with one xa_load() and a compare, and one guess in 2^40 is
 * right (a 32-bit tag took 2^31 MR_ACCESS calls on average, some 40
 * minutes at a microsecond each). Handles are allocated cyclically, so a
 * key is not handed out again until 2^24 registrations later, and then
 * with a new tag. User keys live in a hash table by (auth key, key). Keys
 * are unique per (domain, auth key) across both kinds.
 *
 * Lookups run under RCU and take a reference with kref_get_unless_zero();
 * changes to the tables are serialised by mrd->lock.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/random.h>
#include <linux/rhashtable.h>

#include "mr.h"

static const struct rhashtable_params swnic_mr_ukey_params = {
	.key_len = sizeof(struct swnic_mr_ukey),
	.key_offset = offsetof(struct swnic_mr, ukey),
	.head_offset = offsetof(struct swnic_mr, ukey_node),
	.automatic_shrinking = true,
};

/**
 * swnic_mr_keys_init() - set up a new MR domain's user key table
 * @mrd: the MR domain
 *
 * Return: 0 or -ENOMEM.
 */
int swnic_mr_keys_init(struct swnic_mr_domain *mrd)
{
	return rhashtable_init(&mrd->user_keys, &swnic_mr_ukey_params);
}

/**
 * swnic_mr_keys_destroy() - free an MR domain's (empty) tables
 * @mrd: the MR domain, unreachable: no lookup may run any more
 */
void swnic_mr_keys_destroy(struct swnic_mr_domain *mrd)
{
	xa_destroy(&mrd->mrs);
	rhashtable_destroy(&mrd->user_keys);
}

/**
 * swnic_mr_lookup_key() - find an MR by key
 * @mrd: the MR domain
 * @auth_key: the auth key the MR was registered under
 * @key: its key
 *
 * Return: the MR with a reference held, or NULL. Any state.
 */
struct swnic_mr *swnic_mr_lookup_key(struct swnic_mr_domain *mrd,
				     u32 auth_key, u64 key)
{
	struct swnic_mr_ukey ukey = { .key = key, .auth_key = auth_key };
	struct swnic_mr *mr;

	rcu_read_lock();
	mr = xa_load(&mrd->mrs, key & SWNIC_MR_HANDLE_MAX);
	if (mr && ((mr->flags & SWNIC_MR_REG_USER_KEY) || mr->key != key ||
		   mr->auth_key != auth_key))
		mr = NULL;
	if (!mr)
		mr = rhashtable_lookup(&mrd->user_keys, &ukey,
				       swnic_mr_ukey_params);
	if (mr && !kref_get_unless_zero(&mr->ref))
		mr = NULL;
	rcu_read_unlock();
	return mr;
}

/**
 * swnic_mr_lookup_handle() - find a published MR by handle
 * @mrd: the MR domain
 * @handle: its handle
 *
 * Return: the MR with a reference held, or NULL. Any state.
 */
struct swnic_mr *swnic_mr_lookup_handle(struct swnic_mr_domain *mrd,
					u32 handle)
{
	struct swnic_mr *mr;

	rcu_read_lock();
	mr = xa_load(&mrd->mrs, handle);
	if (mr && !kref_get_unless_zero(&mr->ref))
		mr = NULL;
	rcu_read_unlock();
	return mr;
}

/* ---- keys and publication ------------------------------------------------ */

/* Is the key @key free under @auth_key in @mrd? */
static bool swnic_mr_key_free(struct swnic_mr_domain *mrd, u32 auth_key,
			      u64 key)
{
	struct swnic_mr_ukey ukey = { .key = key, .auth_key = auth_key };
	struct swnic_mr *mr;

	lockdep_assert_held(&mrd->lock);
	mr = xa_load(&mrd->mrs, key & SWNIC_MR_HANDLE_MAX);
	if (mr && !(mr->flags & SWNIC_MR_REG_USER_KEY) && mr->key == key &&
	    mr->auth_key == auth_key)
		return false;
	return !rhashtable_lookup_fast(&mrd->user_keys, &ukey,
				       swnic_mr_ukey_params);
}

/**
 * swnic_mr_key_assign() - give a new MR a handle and a key
 * @mrd: the MR domain
 * @mr: the MR; SWNIC_MR_REG_USER_KEY in its flags asks for @user_key
 * @user_key: the key asked for, if so
 *
 * The handle's slot stays reserved (xa_load() sees nothing there) until
 * swnic_mr_publish(); a user key is in the hash table from here on, but
 * the MR refuses access until it is VALID.
 *
 * Return: 0, -EEXIST (user key taken under the MR's auth key), -ENODEV
 * (domain closing), -EBUSY (no handle left), -ENOMEM.
 */
int swnic_mr_key_assign(struct swnic_mr_domain *mrd, struct swnic_mr *mr,
			u64 user_key)
{
	int ret;

	mutex_lock(&mrd->lock);
	if (mrd->dead) {
		ret = -ENODEV;
		goto out;
	}
	ret = xa_alloc_cyclic(&mrd->mrs, &mr->handle, NULL,
			      XA_LIMIT(1, SWNIC_MR_HANDLE_MAX),
			      &mrd->next_handle,
			      GFP_KERNEL_ACCOUNT);
	if (ret < 0)
		goto out;

	if (mr->flags & SWNIC_MR_REG_USER_KEY) {
		mr->key = user_key;
		mr->ukey.key = user_key;
		mr->ukey.auth_key = mr->auth_key;
		ret = -EEXIST;
		if (swnic_mr_key_free(mrd, mr->auth_key, user_key))
			ret = rhashtable_lookup_insert_fast(&mrd->user_keys,
							    &mr->ukey_node,
							    swnic_mr_ukey_params);
		if (ret) {
			xa_erase(&mrd->mrs, mr->handle);
			mr->handle = 0;
			goto out;
		}
	} else {
		/* Not 0, and never a user key's twin (unique per auth key). */
		do {
			mr->key = get_random_u64() << SWNIC_MR_HANDLE_BITS |
				  mr->handle;
		} while (!(mr->key >> SWNIC_MR_HANDLE_BITS) ||
			 !swnic_mr_key_free(mrd, mr->auth_key, mr->key));
	}
	ret = 0;
out:
	mutex_unlock(&mrd->lock);
	return ret;
}

/**
 * swnic_mr_key_release() - undo swnic_mr_key_assign() before publication
 * @mrd: the MR domain
 * @mr: an MR that got a key but was never published
 */
void swnic_mr_key_release(struct swnic_mr_domain *mrd, struct swnic_mr *mr)
{
	mutex_lock(&mrd->lock);
	xa_erase(&mrd->mrs, mr->handle);
	if (mr->flags & SWNIC_MR_REG_USER_KEY)
		rhashtable_remove_fast(&mrd->user_keys, &mr->ukey_node,
				       swnic_mr_ukey_params);
	mutex_unlock(&mrd->lock);
}

/**
 * swnic_mr_publish() - make a VALID MR visible by handle and provider key
 * @mrd: the MR domain
 * @mr: the MR, with a key from swnic_mr_key_assign()
 *
 * Return: 0, or -EAGAIN if its pages already changed (it was revoked
 * before its registration returned).
 */
int swnic_mr_publish(struct swnic_mr_domain *mrd, struct swnic_mr *mr)
{
	int ret = 0;

	mutex_lock(&mrd->lock);
	spin_lock_bh(&mr->lock);
	if (mr->state != SWNIC_MR_STATE_VALID)
		ret = -EAGAIN;
	spin_unlock_bh(&mr->lock);
	if (!ret)
		xa_store(&mrd->mrs, mr->handle, mr, GFP_KERNEL_ACCOUNT);
	mutex_unlock(&mrd->lock);
	return ret;
}

/**
 * swnic_mr_unpublish() - take an MR out of the tables
 * @mrd: the MR domain, its lock held
 * @mr: a published MR; lookups fail from now on (the caller keeps the
 *	tables' reference)
 */
void swnic_mr_unpublish(struct swnic_mr_domain *mrd, struct swnic_mr *mr)
{
	lockdep_assert_held(&mrd->lock);
	xa_erase(&mrd->mrs, mr->handle);
	if (mr->flags & SWNIC_MR_REG_USER_KEY)
		rhashtable_remove_fast(&mrd->user_keys, &mr->ukey_node,
				       swnic_mr_ukey_params);
	mrd->nmr--;
}

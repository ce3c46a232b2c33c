/*
 * fork.h: what entry.c needs of fork.c (a forked child is served by a
 * second copy of this library, see fork.c).
 */
#ifndef MODEXP_FORK_H
#define MODEXP_FORK_H

#include "pkcs11_3.h"

/* The copy's function lists, one per interface version. */
struct modexp_fork_lists {
	const CK_FUNCTION_LIST_3_2 *v32;
	const CK_FUNCTION_LIST_3_0 *v30;
	const CK_FUNCTION_LIST *v240;
};

/* Set in every forked child. */
extern int modexp_forked_child;

const struct modexp_fork_lists *modexp_fork_target(CK_RV *rv);
CK_VOID_PTR modexp_fork_take_handover(CK_VOID_PTR init_args, CK_C_INITIALIZE_ARGS *stripped);
CK_RV modexp_fork_initialize(CK_VOID_PTR init_args);
CK_RV modexp_fork_finalize(CK_VOID_PTR reserved);

#endif

/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the model's two files share (watch-model.c: controllers,
 * namespaces, scans and timers; watch-pending.c: the kernel-side
 * detection's events). Not a public interface: see watch-model.h.
 */
#ifndef VWC_WATCH_MODEL_INT_H
#define VWC_WATCH_MODEL_INT_H

#include "watch-model.h"

/**
 * vwc_model_find_instance() - a controller by its instance number
 * @w:		the model
 * @instance:	N of nvmeN
 *
 * Return: the controller, or NULL if not watched.
 */
struct vwc_wctrl *vwc_model_find_instance(struct vwc_model *w, int instance);

/**
 * vwc_model_expire() - give up on every Set Features 06h in flight
 * @c:		the controller
 *
 * Their late completions still count (VWC_MODEL_EXPIRED_N).
 */
void vwc_model_expire(struct vwc_wctrl *c);

#endif

/*
 * bugclasses.h - for each bug class of sim/attn/kernel.c's table, the
 * test in which `fragsim diff` (diffcase_diagnose or the command line)
 * names it exactly and alone from a dump written by a model of the buggy
 * kernel that is not fragsim's emulation (issue 22). test_bugclasses.c
 * fails when a class has no row here, or a row names no class, or
 * docs/bug-classes.md's table disagrees: a new class must bring its
 * model. test_diffmatrix.c checks its own rows: each such class is named
 * there from bugmodel.h's dump on some map and mode.
 */
#ifndef BUGCLASSES_H
#define BUGCLASSES_H

struct bugclass_model {
	const char *cls;	/* key=value, as `fragsim mutate` prints it */
	const char *file;	/* the test file, under tests/ */
	const char *test;	/* the function in it that asserts the naming */
	const char *model;	/* the model that writes the dump */
};

#define BC_MATRIX "test_diffmatrix.c", "diff_names_every_class_on_three_maps", "tests/bugmodel.h"
#define BC_SOFTMAX(f) "test_softmax_bugs.c", f, "test_softmax_bugs.c model()"
#define BC_PV "test_pv_int8.c", "model_dumps_name_pv_classes", "test_pv_int8.c pv_model()"

static const struct bugclass_model bugclass_models[] = {
	{ "c_columns=contiguous", BC_MATRIX },
	{ "operand_order=kq", BC_MATRIX },
	{ "head_dim_loaded=half", BC_MATRIX },
	{ "scale_recovery=after_softmax", BC_MATRIX },
	{ "k_scale_index=per_tile", BC_MATRIX },
	{ "gqa_map=modulo", BC_MATRIX },
	{ "tail_mask=contiguous", BC_MATRIX },
	{ "page_walk=none", BC_MATRIX },
	{ "page_walk=identity", BC_MATRIX },
	{ "transpose=none", BC_MATRIX },
	{ "q_position=chunk", BC_MATRIX },
	{ "split_merge=no_rescale", BC_SOFTMAX("split_merge_values") },
	{ "pv_mask=none", BC_SOFTMAX("pv_mask_none") },
	{ "mask_value=finite", BC_SOFTMAX("mask_value_finite_and_additive") },
	{ "mask_value=additive", BC_SOFTMAX("mask_value_finite_and_additive") },
	{ "window_edge=inclusive", BC_SOFTMAX("window_edge_inclusive_and_exclusive") },
	{ "window_edge=exclusive", BC_SOFTMAX("window_edge_inclusive_and_exclusive") },
	{ "q_position=chunk_keys", BC_MATRIX },
	{ "q_position=future", BC_MATRIX },
	{ "q_position=off_by_one", BC_MATRIX },
	{ "q_position=tile_rounded", BC_SOFTMAX("q_position_values") },
	{ "soft_cap_apply=dropped", BC_SOFTMAX("soft_cap_apply_values") },
	{ "soft_cap_apply=after_mask", BC_SOFTMAX("soft_cap_apply_values") },
	{ "soft_cap_apply=exp_tanh", BC_SOFTMAX("soft_cap_apply_values") },
	{ "alibi_bias=ignored", BC_SOFTMAX("alibi_bias_values") },
	{ "alibi_bias=sign_flipped", BC_SOFTMAX("alibi_bias_values") },
	{ "alibi_bias=no_log2e", BC_SOFTMAX("alibi_bias_values") },
	{ "alibi_bias=offset", BC_SOFTMAX("alibi_bias_values") },
	{ "exp_base=exp2_no_log2e", BC_SOFTMAX("exp_base_exp2") },
	{ "split_merge=empty_nan", BC_SOFTMAX("split_merge_values") },
	{ "split_merge=stale_lse", BC_SOFTMAX("split_merge_values") },
	{ "block_offset=dense", "test_diffcase.c", "block_offset_named_from_an_independent_model",
	  "tests/data/boff/model.py" },
	{ "k_scale_walk=identity", BC_MATRIX },
	{ "v_page_walk=identity", BC_MATRIX },
	{ "block_size_assumed=16", BC_MATRIX },
	{ "scale_recovery=no_k_scale", BC_MATRIX },
	{ "scale_recovery=no_q_scale", BC_MATRIX },
	{ "k_scale_index=first_key", BC_MATRIX },
	{ "gqa_map=kv_divide", BC_MATRIX },
	{ "gqa_map=grid_permuted", BC_MATRIX },
	{ "gqa_map=spill", BC_MATRIX },
	{ "operand_load=swap_k_halves", BC_MATRIX },
	{ "operand_load=unswizzled", BC_MATRIX },
	{ "c_rows=interleaved", BC_MATRIX },
	{ "p_regroup=none", BC_PV },
	{ "pv_group_max=per_tile", BC_PV },
	{ "v_scale_apply=after_product", BC_PV },
	{ "p_scale_index=per_tile", BC_PV },
	{ "pv_rescale=missing", BC_PV },
	{ "block_offset=int32", "test_diffcase.c", "block_wrap_named_from_an_independent_model",
	  "tests/data/bwrap/model.py" },
	{ "block_offset=u16", "test_diffcase.c", "block_wrap_named_from_an_independent_model",
	  "tests/data/bwrap/model.py" },
};

#endif

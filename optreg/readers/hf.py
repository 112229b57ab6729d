"""Hugging Face `TrainingArguments` (a JSON or YAML file as HfArgumentParser reads it, or the mapping) as a config
format: the optimizer and schedule transformers 5.23's Trainer builds from them (`create_optimizer_and_scheduler`).

Read into optreg's own form (`optreg convert` writes it out):
- `optim`: the torch-backed names (adamw_torch, adamw_torch_fused: torch AdamW with betas (adam_beta1, adam_beta2)
  and eps adam_epsilon; sgd, adagrad, rmsprop with `optim_args` as the Trainer parses them), and the bitsandbytes
  and torchao names (adamw_8bit, paged_adamw_32bit, lion_8bit, ademamix, rmsprop_bnb, adamw_torch_4bit, ...: the
  bitsandbytes and torchao dialects, with the Trainer's kwargs, `_library_optimizer`); names that need galore,
  apollo, lomo, schedule-free or another package are refused with the package;
- `learning_rate`, and `weight_decay` under the Trainer's decay rule (`hf_decay_groups`: two groups, the decayed
  parameters and the rest, at 0: biases, LayerNorm modules, names with layernorm / rmsnorm / norm);
- `lr_scheduler_type` + `lr_scheduler_kwargs` (the `hf` dialect), `warmup_steps` (an int, or a float below 1: a
  ratio, ceil(ratio·total) as transformers 5 reads it; transformers 4's `warmup_ratio` is read the same way);
- the run: `max_steps` (> 0), else `num_train_epochs` epochs of the Trainer's optimizer steps per epoch, the
  dataloader's length / `gradient_accumulation_steps` rounded up (`build(steps_per_epoch=)` or `total_steps=`, or
  optreg's `train:` beside the arguments, read as the own form reads it: its steps_per_epoch, its steps);
- `max_grad_norm` (default 1.0): the global norm (`clip_grad.max_norm`); 0 or a negative value turns clipping
  off, as the Trainer clips only when `max_grad_norm > 0`.
TRL's config classes (SFTConfig, DPOConfig, GRPOConfig, ...: what TRL's, open-r1's and alignment-handbook's scripts
parse a recipe with) default learning_rate otherwise: a file whose TRL fields one class has, or several that agree
on the default, gets it (`TRL`, `trl_defaults`); any other file gets TrainingArguments' and the report says which
classes it could be for and what theirs would be. A file read as a class (`--format trl_sft`) whose TRL fields are
another class's is warned of (`trl_foreign`), at its first, with those classes' learning_rate defaults. TRL's
experimental classes (GOLDConfig 1e-7, OnlineDPOConfig and TPOConfig 5e-7, AsyncGRPOConfig 1e-6 with a constant
schedule, ...: `TRL_EXPERIMENTAL`) read a file whose fields beyond the trainers' classes' say them
(`_says_experimental`); a class's default schedule applies as its learning_rate does.
Every other key is the Trainer's (batch sizes, precision, logging, saving) or the application's (an
HfArgumentParser reads model and data arguments from the same file): reported as the trainer's.
"""

from __future__ import annotations

import math
from typing import Any, Mapping

from optreg.config.formats import Choice, KeyUse
from optreg.config.run import epochs_run, length_replaced
from optreg.config.translate import TRAINER, read_translated
from optreg.core.models import bound_message, number_message
from optreg.errors import Collector, closest, first_few, show, warn_at

#: TrainingArguments' defaults of the keys read here (transformers 5.23)
DEFAULTS = {"learning_rate": 5e-5, "weight_decay": 0.0, "adam_beta1": 0.9, "adam_beta2": 0.999,
            "adam_epsilon": 1e-8, "max_grad_norm": 1.0, "num_train_epochs": 3.0, "max_steps": -1,
            "lr_scheduler_type": "linear", "warmup_steps": 0, "optim": "adamw_torch_fused"}
READ = (*DEFAULTS, "lr_scheduler_kwargs", "optim_args", "warmup_ratio")
#: optreg's `train:` beside TrainingArguments or a ds_config (no key of theirs): the run, as the own form reads it
BESIDE = "train"


def read_beside(data: Mapping[str, Any], own: dict[str, Any], report: list, beside: str) -> Any:
    """optreg's run beside a foreign file's keys (`train:`, `--steps` as its train.steps, overrides of its keys) into
    the own-form sections `own`, as the own form reads it, reported as beside `beside` (what the file holds); returns
    the section as the file has it (None where it has none)."""
    section = data.get(BESIDE)
    if section is not None and section != {}:   # {}: composing with overrides adds it (hydra.support._primary)
        own["train"] = dict(section) if isinstance(section, Mapping) else section   # not a mapping: its own error
        report.append(KeyUse(BESIDE, "exact", f"optreg's run, beside {beside}"))
    return section


#: what max_steps -1 (any max_steps <= 0: the Trainer takes max_steps when it is > 0) means to the Trainer
EPOCHS_DECIDE = "the epochs decide"
#: TRL 1.16's config classes, those of its trainers (TrainingArguments' subclasses that TRL's scripts, open-r1's
#: and alignment-handbook's parse a recipe with): the fields each has that TrainingArguments has not (how a file says
#: which class reads it: the file names no class), and its defaults of the keys read here where they differ from
#: TrainingArguments' (tests/fixtures/hf/trl.json, recorded by scripts/record_trl.py, holds both).
TRL_TRAINERS = {
    "SFTConfig": ((
        "activation_offloading assistant_only_loss chat_template_path completion_only_loss dataset_kwargs "
        "dataset_num_proc dataset_text_field eos_token eval_packing loss_type max_length model_init_kwargs packing "
        "packing_strategy pad_to_multiple_of pad_token padding_free router_aux_loss_coef shuffle_dataset "
        "truncation_mode trust_remote_code"
    ).split(), {'learning_rate': 2e-05}),
    "DPOConfig": ((
        "activation_offloading beta dataset_num_proc disable_dropout discopop_tau f_alpha_divergence_coef "
        "f_divergence_type label_smoothing ld_alpha loss_type loss_weights max_length model_init_kwargs "
        "pad_to_multiple_of pad_token padding_free precompute_ref_batch_size precompute_ref_log_probs "
        "ref_model_mixup_alpha ref_model_sync_steps router_aux_loss_coef sync_ref_model truncation_mode "
        "trust_remote_code use_weighting"
    ).split(), {'learning_rate': 1e-06}),
    "ORPOConfig": ((
        "beta dataset_num_proc disable_dropout generate_during_eval is_encoder_decoder max_completion_length "
        "max_length model_init_kwargs padding_value trust_remote_code"
    ).split(), {'learning_rate': 1e-06}),
    "GRPOConfig": ((
        "beta cache_implementation cast_lm_head_to_fp32 chat_template_kwargs delta disable_dropout "
        "ds3_gather_for_generation entropy_coef entropy_coef_delta entropy_coef_max entropy_coef_min entropy_target "
        "epsilon epsilon_high generation_batch_size generation_kwargs importance_sampling_level log_completions "
        "log_completions_hub_repo log_multimodal log_unique_prompts loss_type mask_truncated_completions "
        "max_completion_length max_tool_calling_iterations min_p model_init_kwargs multi_objective_aggregation "
        "num_completions_to_print num_generations num_generations_eval num_iterations off_policy_mask_threshold "
        "pad_to_multiple_of ref_model_mixup_alpha ref_model_sync_steps repetition_penalty reward_weights "
        "router_aux_loss_coef sapo_temperature_neg sapo_temperature_pos scale_rewards shuffle_dataset "
        "steps_per_generation sync_ref_model temperature top_entropy_quantile top_k top_p "
        "transformers_continuous_batching_config trust_remote_code use_adaptive_entropy use_bias_correction_kl "
        "use_transformers_continuous_batching use_transformers_paged use_vllm vespo_k_neg vespo_k_pos "
        "vespo_lambda_neg vespo_lambda_pos vllm_enable_sleep_mode vllm_gpu_memory_utilization vllm_group_port "
        "vllm_importance_sampling_cap vllm_importance_sampling_clip_max vllm_importance_sampling_clip_min "
        "vllm_importance_sampling_correction vllm_importance_sampling_mode vllm_max_model_length vllm_mode "
        "vllm_model_impl vllm_server_base_url vllm_server_host vllm_server_port vllm_server_timeout "
        "vllm_structured_outputs_regex vllm_tensor_parallel_size"
    ).split(), {'learning_rate': 1e-06}),
    "RLOOConfig": ((
        "beta cache_implementation chat_template_kwargs disable_dropout ds3_gather_for_generation epsilon "
        "epsilon_high generation_batch_size generation_kwargs log_completions log_multimodal log_unique_prompts "
        "mask_truncated_completions max_completion_length min_p model_init_kwargs normalize_advantages "
        "num_completions_to_print num_generations num_generations_eval num_iterations pad_to_multiple_of "
        "ref_model_mixup_alpha ref_model_sync_steps repetition_penalty reward_clip_range reward_weights "
        "router_aux_loss_coef shuffle_dataset steps_per_generation sync_ref_model temperature top_k top_p "
        "transformers_continuous_batching_config trust_remote_code use_transformers_continuous_batching "
        "use_transformers_paged use_vllm vllm_enable_sleep_mode vllm_gpu_memory_utilization vllm_group_port "
        "vllm_max_model_length vllm_mode vllm_model_impl vllm_server_base_url vllm_server_host vllm_server_port "
        "vllm_server_timeout vllm_structured_outputs_regex vllm_tensor_parallel_size"
    ).split(), {'learning_rate': 1e-06}),
    "KTOConfig": ((
        "activation_offloading beta dataset_num_proc desirable_weight disable_dropout loss_type max_length "
        "model_init_kwargs pad_to_multiple_of precompute_ref_batch_size precompute_ref_log_probs "
        "ref_model_mixup_alpha ref_model_sync_steps router_aux_loss_coef sync_ref_model trust_remote_code "
        "undesirable_weight"
    ).split(), {'learning_rate': 1e-06}),
    "RewardConfig": ((
        "activation_offloading center_rewards_coefficient chat_template_path dataset_num_proc disable_dropout "
        "eos_token max_length model_init_kwargs pad_to_multiple_of pad_token trust_remote_code"
    ).split(), {'learning_rate': 0.0001}),
    "DistillationConfig": ((
        "beta cache_implementation chat_template_kwargs disable_dropout ds3_gather_for_generation generation_kwargs "
        "log_completions log_unique_prompts max_completion_length max_tool_calling_iterations min_p "
        "model_init_kwargs num_completions_to_print pad_to_multiple_of repetition_penalty shuffle_dataset "
        "teacher_model_init_kwargs teacher_model_name_or_path teacher_model_revision temperature top_k top_p "
        "trust_remote_code use_vllm vllm_enable_sleep_mode vllm_gpu_memory_utilization vllm_group_port "
        "vllm_max_model_length vllm_mode vllm_model_impl vllm_server_base_url vllm_server_host vllm_server_port "
        "vllm_server_timeout vllm_structured_outputs_regex vllm_tensor_parallel_size"
    ).split(), {'learning_rate': 1e-06}),
}
#: TRL's experimental config classes (trl.experimental.<name>.<name>_config, those of its experimental trainers:
#: async GRPO, GOLD, Online DPO, TPO, CPO, PPO, ...), as TRL_TRAINERS, recorded from TRL's source at huggingface/trl
#: f2cd577 (2026-07-24, VERSION 1.10.0.dev0: the newest TRL source recorded; fields and defaults may have moved since,
#: as DistillationConfig moved to the trainers' by TRL 1.16) into the fixture's "experimental" entry. A file is read
#: as one of them only where no trainer's class has every TRL field of the file (`trl_fields`): GOLDConfig and
#: GKDConfig subclass SFTConfig, and an SFT recipe is SFTConfig's.
TRL_EXPERIMENTAL = {
    "A2POConfig": ((
        "beta1 beta2 filter_all_incorrect max_completion_length max_prompt_length model_init_kwargs "
        "num_value_samples reward_weights temperature top_k top_p trust_remote_code"
    ).split(), {}),
    "AsyncGRPOConfig": ((
        "chat_template_kwargs epsilon epsilon_high fork_threshold_tokens heartbeat_stale_after_s log_completions "
        "max_completion_length max_inflight_tasks max_staleness max_tool_calling_iterations model_init_kwargs "
        "num_completions_to_print num_generations queue_maxsize request_timeout router_aux_loss_coef temperature "
        "token_budget trust_remote_code vllm_server_base_url vllm_server_timeout weight_sync_steps"
    ).split(), {'learning_rate': 1e-06, 'lr_scheduler_type': 'constant'}),
    "BCOConfig": ((
        "beta dataset_num_proc disable_dropout generate_during_eval is_encoder_decoder max_completion_length "
        "max_density_ratio max_length min_density_ratio model_init_kwargs precompute_ref_log_probs "
        "prompt_sample_size trust_remote_code"
    ).split(), {'learning_rate': 5e-07}),
    "CPOConfig": ((
        "alpha beta cpo_alpha dataset_num_proc disable_dropout generate_during_eval is_encoder_decoder "
        "label_smoothing loss_type max_completion_length max_length model_init_kwargs simpo_gamma trust_remote_code"
    ).split(), {'learning_rate': 1e-06}),
    "GKDConfig": ((
        "activation_offloading assistant_only_loss beta chat_template_path completion_only_loss dataset_kwargs "
        "dataset_num_proc dataset_text_field disable_dropout eos_token eval_packing lmbda loss_type max_length "
        "max_new_tokens model_init_kwargs packing packing_strategy pad_to_multiple_of pad_token padding_free "
        "router_aux_loss_coef seq_kd shuffle_dataset teacher_model_init_kwargs teacher_model_name_or_path "
        "temperature truncation_mode trust_remote_code"
    ).split(), {'learning_rate': 2e-05}),
    # GMPOConfig subclasses GRPOConfig: its fields, recorded at f2cd577, are the trainer's of TRL 1.16 (the test of
    # the table against the fixture says when they part)
    "GMPOConfig": (TRL_TRAINERS["GRPOConfig"][0], {'learning_rate': 1e-06}),
    "GOLDConfig": ((
        "activation_offloading assistant_only_loss beta callbacks chat_template_path completion_only_loss "
        "dataset_kwargs dataset_num_proc dataset_text_field disable_dropout eos_token eval_packing "
        "generation_batch_size lmbda log_completions log_completions_steps loss_type max_completion_length "
        "max_length model_init_kwargs num_completions_to_print num_generations packing packing_strategy "
        "pad_to_multiple_of pad_token padding_free router_aux_loss_coef seq_kd shuffle_dataset "
        "teacher_model_init_kwargs teacher_model_name_or_path teacher_model_revision teacher_tokenizer_name_or_path "
        "temperature top_k top_p truncation_mode trust_remote_code uld_crossentropy_weight uld_distillation_weight "
        "uld_hybrid_matched_weight uld_hybrid_unmatched_weight uld_skip_student_eos uld_skip_teacher_eos "
        "uld_student_temperature uld_teacher_temperature uld_token_merge_strategy uld_use_hybrid_loss "
        "use_extended_uld use_uld_loss use_vllm vllm_enable_sleep_mode vllm_gpu_memory_utilization vllm_group_port "
        "vllm_max_model_length vllm_mode vllm_model_impl vllm_server_base_url vllm_server_host vllm_server_port "
        "vllm_server_timeout vllm_structured_outputs_regex vllm_sync_frequency vllm_tensor_parallel_size "
        "wandb_log_unique_prompts"
    ).split(), {'learning_rate': 1e-07}),
    "GRPOWithReplayBufferConfig": ((
        "beta cache_implementation cast_lm_head_to_fp32 chat_template_kwargs delta disable_dropout "
        "ds3_gather_for_generation entropy_coef entropy_coef_delta entropy_coef_max entropy_coef_min entropy_target "
        "epsilon epsilon_high generation_batch_size generation_kwargs importance_sampling_level log_completions "
        "log_completions_hub_repo log_multimodal log_unique_prompts loss_type mask_truncated_completions "
        "max_completion_length max_tool_calling_iterations min_p model_init_kwargs multi_objective_aggregation "
        "num_completions_to_print num_generations num_generations_eval num_iterations off_policy_mask_threshold "
        "pad_to_multiple_of ref_model_mixup_alpha ref_model_sync_steps repetition_penalty replay_buffer_size "
        "reward_weights router_aux_loss_coef sapo_temperature_neg sapo_temperature_pos scale_rewards "
        "shuffle_dataset steps_per_generation sync_ref_model temperature top_entropy_quantile top_k top_p "
        "transformers_continuous_batching_config trust_remote_code use_adaptive_entropy use_bias_correction_kl "
        "use_transformers_continuous_batching use_transformers_paged use_vllm vespo_k_neg vespo_k_pos "
        "vespo_lambda_neg vespo_lambda_pos vllm_enable_sleep_mode vllm_gpu_memory_utilization vllm_group_port "
        "vllm_importance_sampling_cap vllm_importance_sampling_clip_max vllm_importance_sampling_clip_min "
        "vllm_importance_sampling_correction vllm_importance_sampling_mode vllm_max_model_length vllm_mode "
        "vllm_model_impl vllm_server_base_url vllm_server_host vllm_server_port vllm_server_timeout "
        "vllm_structured_outputs_regex vllm_tensor_parallel_size"
    ).split(), {'learning_rate': 1e-06}),
    "IWOPDConfig": ((
        "beta disable_dropout distillation_objective generation_batch_size iw_opd_epsilon iw_opd_gamma lmbda "
        "log_completions log_completions_steps loss_add_tail loss_top_k max_completion_length max_length "
        "max_prompt_length model_init_kwargs num_completions_to_print num_generations reverse_kl_top_1_mode "
        "teacher_model_init_kwargs teacher_model_name_or_path teacher_model_revision teacher_model_server_url "
        "temperature top_k top_p trust_remote_code use_teacher_server use_vllm vllm_enable_sleep_mode "
        "vllm_gpu_memory_utilization vllm_group_port vllm_max_model_length vllm_mode vllm_model_impl "
        "vllm_server_base_url vllm_server_host vllm_server_port vllm_server_timeout vllm_structured_outputs_regex "
        "vllm_sync_frequency vllm_tensor_parallel_size"
    ).split(), {'learning_rate': 1e-06}),
    "MiniLLMConfig": ((
        "beta cache_implementation cast_lm_head_to_fp32 chat_template_kwargs delta disable_dropout "
        "ds3_gather_for_generation entropy_coef entropy_coef_delta entropy_coef_max entropy_coef_min entropy_target "
        "epsilon epsilon_high gamma generation_batch_size generation_kwargs importance_sampling_level "
        "kd_temperature length_normalization log_completions log_completions_hub_repo log_multimodal "
        "log_unique_prompts loss_type mask_truncated_completions max_completion_length max_tool_calling_iterations "
        "min_p model_init_kwargs multi_objective_aggregation num_completions_to_print num_generations "
        "num_generations_eval num_iterations off_policy_mask_threshold pad_to_multiple_of ref_model_mixup_alpha "
        "ref_model_sync_steps repetition_penalty reward_weights rkl_advantage router_aux_loss_coef "
        "sapo_temperature_neg sapo_temperature_pos scale_rewards shuffle_dataset single_step_decomposition "
        "steps_per_generation sync_ref_model teacher_model_init_kwargs temperature top_entropy_quantile top_k top_p "
        "transformers_continuous_batching_config trust_remote_code use_adaptive_entropy use_bias_correction_kl "
        "use_transformers_continuous_batching use_transformers_paged use_vllm vespo_k_neg vespo_k_pos "
        "vespo_lambda_neg vespo_lambda_pos vllm_enable_sleep_mode vllm_gpu_memory_utilization vllm_group_port "
        "vllm_importance_sampling_cap vllm_importance_sampling_clip_max vllm_importance_sampling_clip_min "
        "vllm_importance_sampling_correction vllm_importance_sampling_mode vllm_max_model_length vllm_mode "
        "vllm_model_impl vllm_server_base_url vllm_server_host vllm_server_port vllm_server_timeout "
        "vllm_structured_outputs_regex vllm_tensor_parallel_size"
    ).split(), {'learning_rate': 1e-06}),
    "NashMDConfig": ((
        "beta cache_implementation disable_dropout ds3_gather_for_generation generation_kwargs loss_type max_length "
        "max_new_tokens min_p missing_eos_penalty mixture_coef model_init_kwargs repetition_penalty "
        "reward_model_path reward_weights temperature top_k top_p trust_remote_code use_vllm vllm_enable_sleep_mode "
        "vllm_gpu_memory_utilization vllm_group_port vllm_mode vllm_model_impl vllm_server_base_url "
        "vllm_server_host vllm_server_port vllm_server_timeout vllm_structured_outputs_regex "
        "vllm_tensor_parallel_size"
    ).split(), {'learning_rate': 5e-07}),
    "OnlineDPOConfig": ((
        "beta cache_implementation disable_dropout ds3_gather_for_generation generation_kwargs loss_type max_length "
        "max_new_tokens min_p missing_eos_penalty model_init_kwargs repetition_penalty reward_model_path "
        "reward_weights temperature top_k top_p trust_remote_code use_vllm vllm_enable_sleep_mode "
        "vllm_gpu_memory_utilization vllm_group_port vllm_mode vllm_model_impl vllm_server_base_url "
        "vllm_server_host vllm_server_port vllm_server_timeout vllm_structured_outputs_regex "
        "vllm_tensor_parallel_size"
    ).split(), {'learning_rate': 5e-07}),
    "PPOConfig": ((
        "batch_size cliprange cliprange_value dataset_num_proc ds3_gather_for_generation gamma kl_coef kl_estimator "
        "lam local_batch_size local_mini_batch_size local_rollout_forward_batch_size micro_batch_size "
        "mini_batch_size missing_eos_penalty model_adapter_name num_mini_batches num_ppo_epochs "
        "num_sample_generations num_total_batches ref_adapter_name response_length reward_model_path sft_model_path "
        "stop_token stop_token_id temperature total_episodes vf_coef whiten_rewards world_size"
    ).split(), {'learning_rate': 3e-06}),
    "PRMConfig": ((
        "dataset_num_proc disable_dropout max_completion_length max_length step_separator train_on_last_step_only"
    ).split(), {'learning_rate': 1e-05}),
    "SDFTConfig": ((
        "cache_implementation chat_template_kwargs disable_dropout distillation_add_tail distillation_alpha "
        "distillation_is_clip distillation_mode distillation_topk ds3_gather_for_generation generate_from_teacher "
        "generation_batch_size generation_kwargs max_completion_length max_prompt_length min_p model_init_kwargs "
        "num_generations num_generations_eval num_iterations num_loss_tokens_to_skip repetition_penalty "
        "shuffle_dataset steps_per_generation teacher_model_kind teacher_prompt_template teacher_sync_steps "
        "teacher_update_rate temperature top_k top_p trust_remote_code use_teacher_server use_vllm "
        "vllm_enable_sleep_mode vllm_gpu_memory_utilization vllm_group_port vllm_max_model_length vllm_mode "
        "vllm_model_impl vllm_server_base_url vllm_server_host vllm_server_port vllm_server_timeout "
        "vllm_tensor_parallel_size"
    ).split(), {}),
    "SDPOConfig": ((
        "beta cache_implementation chat_template_kwargs diagnostics_flat_tolerance diagnostics_warning_interval "
        "disable_dropout distillation_add_tail distillation_alpha distillation_is_clip distillation_mode "
        "distillation_topk distillation_weight dont_reprompt_on_self_success ds3_gather_for_generation "
        "environment_feedback_only_without_solution epsilon epsilon_high feedback_template generation_batch_size "
        "generation_kwargs importance_sampling_level include_environment_feedback loss_type "
        "mask_truncated_completions max_completion_length max_prompt_length max_reprompt_len min_p "
        "model_init_kwargs num_generations num_generations_eval num_iterations remove_thinking_from_demonstration "
        "repetition_penalty reprompt_template reward_weights scale_rewards shuffle_dataset solution_template "
        "steps_per_generation success_reward_threshold teacher_model_kind teacher_sync_steps teacher_update_rate "
        "temperature top_k top_p trust_remote_code use_successful_as_teacher use_teacher_server use_vllm "
        "vllm_enable_sleep_mode vllm_gpu_memory_utilization vllm_group_port vllm_max_model_length vllm_mode "
        "vllm_model_impl vllm_server_base_url vllm_server_host vllm_server_port vllm_server_timeout "
        "vllm_tensor_parallel_size"
    ).split(), {}),
    "SSDConfig": ((
        "cache_implementation chat_template_kwargs disable_dropout ds3_gather_for_generation filter_empty "
        "generation_batch_size generation_kwargs max_completion_length max_prompt_length min_p model_init_kwargs "
        "num_iterations repetition_penalty shuffle_dataset steps_per_generation temperature top_k top_p "
        "trust_remote_code use_vllm vllm_enable_sleep_mode vllm_gpu_memory_utilization vllm_group_port "
        "vllm_max_model_length vllm_mode vllm_model_impl vllm_server_base_url vllm_server_host vllm_server_port "
        "vllm_server_timeout vllm_tensor_parallel_size"
    ).split(), {}),
    "ServerDistillationConfig": ((
        "beta disable_dropout generation_batch_size log_completions log_completions_steps loss_add_tail loss_top_k "
        "max_completion_length model_init_kwargs num_completions_to_print num_generations reverse_kl_top_1_mode "
        "teacher_model_init_kwargs teacher_model_name_or_path teacher_model_revision teacher_model_server_url "
        "temperature top_k top_p trust_remote_code use_vllm vllm_enable_sleep_mode vllm_gpu_memory_utilization "
        "vllm_group_port vllm_max_model_length vllm_mode vllm_model_impl vllm_server_base_url vllm_server_host "
        "vllm_server_port vllm_server_timeout vllm_structured_outputs_regex vllm_sync_frequency "
        "vllm_tensor_parallel_size"
    ).split(), {'learning_rate': 1e-06}),
    "TPOConfig": ((
        "beta dataset_num_proc disable_dropout label_smoothing loss_type max_length model_init_kwargs "
        "pad_to_multiple_of tpo_alpha tpo_l_gamma truncation_mode trust_remote_code"
    ).split(), {'learning_rate': 5e-07}),
    "XPOConfig": ((
        "alpha beta cache_implementation disable_dropout ds3_gather_for_generation generation_kwargs loss_type "
        "max_length max_new_tokens min_p missing_eos_penalty model_init_kwargs repetition_penalty reward_model_path "
        "reward_weights temperature top_k top_p trust_remote_code use_vllm vllm_enable_sleep_mode "
        "vllm_gpu_memory_utilization vllm_group_port vllm_mode vllm_model_impl vllm_server_base_url "
        "vllm_server_host vllm_server_port vllm_server_timeout vllm_structured_outputs_regex "
        "vllm_tensor_parallel_size"
    ).split(), {'learning_rate': 5e-07}),
}
#: every TRL config class the reader knows
TRL = {**TRL_TRAINERS, **TRL_EXPERIMENTAL}


#: the formats that read a file as one TRL trainer's class's (forced only: `--format trl_grpo`), for a file whose
#: fields do not say the class; an experimental class has none
TRL_NAMES = {cls: "trl_" + cls.removesuffix("Config").lower() for cls in TRL_TRAINERS}


def _says_experimental(keys: list[str]) -> bool:
    """Whether a file with these TRL fields is a recipe of an experimental TRL class: it has fields no trainer's
    class has, and the experimental classes that have them all agree on every default read here (AsyncGRPOConfig's
    max_staleness; the Online DPO classes' missing_eos_penalty with max_new_tokens). Not max_prompt_length alone,
    which TRL's trainers dropped and experimental classes of other defaults keep: open-r1's GRPO recipes have it."""
    beyond = [k for k in keys if not any(k in fields for fields, _ in TRL_TRAINERS.values())]
    owners = [own for fields, own in TRL_EXPERIMENTAL.values() if beyond and all(k in fields for k in beyond)]
    return bool(owners) and all(own == owners[0] for own in owners)


def trl_fields(data: Mapping[str, Any]) -> tuple[list[str], list[str]]:
    """(the file's keys that are fields of a TRL class, the TRL classes that have every one of them): a recipe is
    read by a class with all its fields (TrainingArguments' and the application's aside): an experimental class's
    where its fields say so (`_says_experimental`), else a trainer's class (TRL_TRAINERS)."""
    keys = [str(k) for k in data if any(k in fields for fields, _ in TRL.values())]
    if _says_experimental(keys):
        return keys, [cls for cls, (fields, _) in TRL_EXPERIMENTAL.items() if all(k in fields for k in keys)]
    keys = [k for k in keys if any(k in fields for fields, _ in TRL_TRAINERS.values())]
    return keys, [cls for cls, (fields, _) in TRL_TRAINERS.items() if keys and all(k in fields for k in keys)]


def trl_class(data: Mapping[str, Any]) -> str | None:
    """The one TRL config class that has every TRL field of the file, else None."""
    classes = trl_fields(data)[1]
    return classes[0] if len(classes) == 1 else None


def trl_owners(key: str, data: Mapping[str, Any], named: str | None = None) -> list[str]:
    """The TRL classes that have `key` as a field: of those that read the file (`named`, else those that have all of
    its TRL fields), where any has it, else the trainers' that have it, else all; none for a key no TRL class has."""
    having = [cls for cls, (fields, _) in TRL.items() if key in fields]
    reading = [named] if named else trl_fields(data)[1]
    return [cls for cls in having if cls in reading] or _trainers_first(having)


def _trainers_first(classes: list[str]) -> list[str]:
    """Those of `classes` that are TRL trainers' (TRL_TRAINERS) where any is, else all of them (experimental)."""
    return [cls for cls in classes if cls in TRL_TRAINERS] or classes


def _and(names: list[str]) -> str:
    """`A`, `A and B`, `A, B and C`."""
    return " and ".join(names) if len(names) < 3 else f"{', '.join(names[:-1])} and {names[-1]}"


def trl_defaults(data: Mapping[str, Any], report: list, named: str | None = None) -> dict[str, Any]:
    """The defaults the file's reader applies: its TRL class's over TrainingArguments' (DEFAULTS); for each read key
    the file leaves to a default that TRL's classes set otherwise, a report line saying which default it got and why.
    `named`: the class the caller names (the trl_* formats); else the class that has every TRL field of the file, or
    the classes that all have them where they agree on the default; where they do not (or no class has them all,
    or the file has none), TrainingArguments' default, and the report says which classes the file could be for."""
    keys, classes = trl_fields(data)
    if named:
        classes = [named]
    defaults = dict(DEFAULTS)
    having = f"the TRL classes that have all of the file's TRL fields: {first_few(keys)}"
    pool = classes or list(TRL_TRAINERS)   # the classes the file could be for
    for key in sorted({k for cls in pool for k in TRL[cls][1]} - set(data)):
        values = {TRL[cls][1].get(key, DEFAULTS[key]) for cls in classes}
        if len(values) == 1:
            defaults[key] = value = values.pop()
            if named:
                why = f"TRL's {named} default {value!r} (format {TRL_NAMES[named]})"
            elif len(classes) == 1:
                why = f"TRL's {classes[0]} default {value!r} (the file has {first_few(keys)}: {classes[0]}'s fields)"
            else:
                why = f"{value!r}, the default of each of {_and(classes)} ({having})"
            report.append(KeyUse(key, "exact", f"not given: {why}"))
            continue
        theirs = ", ".join(f"{c} {TRL[c][1].get(key, DEFAULTS[key])!r}" for c in pool)
        said = (f"which TRL class reads this file is ambiguous: {_and(classes)} are {having}; they default to "
                f"{theirs}" if classes else
                f"which TRL class reads this file is ambiguous: no one TRL class has all of its TRL fields "
                f"({first_few(keys)}); TRL's classes default to {theirs}" if keys else
                f"TRL's classes default to {theirs}")
        report.append(KeyUse(key, "approximate", f"not given: TrainingArguments' default {defaults[key]!r}; {said} "
                                                 f"(TRL 1.16): give {key} if a TRL script reads this file, or name "
                                                 f"its class (--format trl_sft, trl_grpo, ...)"))
    return defaults


def trl_foreign(data: Mapping[str, Any], named: str) -> tuple[str, str] | None:
    """(the first key, a warning) where the file's TRL fields are not all fields of the class `named` reads it with
    (format trl_sft on a GRPO recipe): which classes they are fields of (those that have them all, else those that
    have any), with their learning_rate defaults; None where `named` has them all."""
    foreign = [k for k in trl_fields(data)[0] if k not in TRL[named][0]]
    if not foreign:
        return None
    classes = trl_fields(data)[1] or _trainers_first([c for c, (fields, _) in TRL.items()
                                                       if any(k in fields for k in foreign)])
    lr = "learning_rate"
    theirs = _and([f"{c} (learning_rate {TRL[c][1].get(lr, DEFAULTS[lr])!r})" for c in classes])
    named_by = [TRL_NAMES[c] for c in classes if c in TRL_NAMES]
    read = f"--format {', '.join(named_by)}" if named_by else "format hf reads a recipe of an experimental class"
    return foreign[0], (f"{first_few(foreign)}: not fields of TRL's {named}, whose defaults format {TRL_NAMES[named]} "
                        f"applies (learning_rate {TRL[named][1].get(lr, DEFAULTS[lr])!r}), but of {theirs}: the "
                        f"file is a recipe of {'one of them' if len(classes) > 1 else 'that class'} ({read})")


#: keys only TrainingArguments files have (the format's signature; `output_dir` with `learning_rate` too)
SIGNATURE_KEYS = ("lr_scheduler_type", "per_device_train_batch_size", "adam_beta1", "adam_beta2", "adam_epsilon",
                  "num_train_epochs", "warmup_ratio", "lr_scheduler_kwargs", "optim_args")
#: optim name -> (torch class, the optim_args keys the Trainer reads for it: float, or bool)
TORCH_OPTIM = {"adamw_torch": ("AdamW", {}), "adamw_torch_fused": ("AdamW", {}),
               "sgd": ("SGD", {"momentum": float, "dampening": float, "weight_decay": float, "nesterov": bool}),
               "adagrad": ("Adagrad", {"lr_decay": float, "weight_decay": float, "eps": float}),
               "rmsprop": ("RMSprop", {"momentum": float, "alpha": float, "eps": float, "weight_decay": float,
                                       "centered": bool})}
#: optim names the Trainer builds from an optimizer library (transformers 5.23 trainer_optimizer.py,
#: `_get_bitsandbytes_optimizer`, `_get_torchao_optimizer`): name -> (dialect, class); the dialect reads the
#: installed library (`optreg.dialects.bitsandbytes`, `optreg.dialects.torchao`)
BNB = ("adamw_bnb_8bit", "adamw_8bit", "paged_adamw_32bit", "paged_adamw_8bit", "ademamix", "ademamix_8bit",
       "paged_ademamix_32bit", "paged_ademamix_8bit", "lion_32bit", "lion_8bit", "paged_lion_32bit",
       "paged_lion_8bit", "rmsprop_bnb", "rmsprop_bnb_8bit", "rmsprop_bnb_32bit")
LIBRARY_OPTIM = {
    **{n: ("bitsandbytes", "AdamW" if "adam" in n else "Lion" if "lion" in n else "RMSprop" if "rmsprop" in n
           else "AdEMAMix") for n in BNB},
    "adamw_torch_4bit": ("torchao", "AdamW4bit"), "adamw_torch_8bit": ("torchao", "AdamW8bit")}
#: optim names refused: the package (or reason) each needs
NEEDS = {"galore": "galore-torch", "apollo": "apollo-torch", "lomo": "lomo-optim",
         "schedule_free": "schedulefree", "grokadamw": "grokadamw", "anyprecision": "torchdistx",
         "xla": "torch_xla", "npu": "torch_npu", "adafactor": "transformers' own Adafactor (not in optreg's "
                                                              "vocabulary)",
         "stable_adamw": "torch-optimi"}
#: the names optreg reads
READ_OPTIM = (*TORCH_OPTIM, *LIBRARY_OPTIM)


def optim_name(name: str) -> str | None:
    """The Trainer's `optim` of optreg's torch optimizer `name` (`SGD` -> `sgd`, `AdamW` -> `adamw_torch`); None for
    one it does not build."""
    return next((optim for optim, (cls, _) in TORCH_OPTIM.items() if cls == name), None)


#: keys that, beside a top-level learning_rate, claim a file too
WITH_LR = ("output_dir", "optim", "warmup_steps", "max_grad_norm", "max_steps", "weight_decay")
NO_KWARGS = ("constant", "constant_with_warmup")   # get_scheduler passes them no lr_scheduler_kwargs
NO_TOTAL = ("constant", "constant_with_warmup", "inverse_sqrt", "reduce_lr_on_plateau")


def _fields() -> set[str] | None:
    """TrainingArguments' field names when transformers is installed, else None."""
    try:
        import dataclasses

        from transformers import TrainingArguments
    except Exception:   # not installed (or broken): every other key is reported as the trainer's
        return None
    return {f.name for f in dataclasses.fields(TrainingArguments)}


def _value(data: Mapping[str, Any], key: str, defaults: Mapping[str, Any] = DEFAULTS) -> Any:
    """The value of `key` (its default when the file leaves it out) as HfArgumentParser reads a float field: a string
    that is a number is that number. Unchecked: the optimizer's options (learning_rate, weight_decay, adam_*) are
    checked once, by the own form, at the key the file gives."""
    value = data.get(key, defaults.get(key))
    if isinstance(value, str):   # HfArgumentParser's YAML: PyYAML reads 2.0e-5 as a number, 1e-5 as a string
        try:
            value = float(value)
        except ValueError:
            pass
    return value


def _number(data: Mapping[str, Any], key: str, errors: Collector, low: float | None = 0.0) -> Any:
    """The value of a key the reader computes with (the run length, warmup, clipping), checked: a finite number >=
    `low`, else an error at the key and its default."""
    value = _value(data, key)
    wrong = number_message(value, low, finite=True)
    if wrong is not None:
        errors.add(key, wrong)
        return DEFAULTS.get(key)
    return value


def _optim_args(args: Mapping[str, str], accepted: Mapping[str, type], errors: Collector) -> dict[str, Any]:
    """The keys of `optim_args` (split: `_raw_optim_args`) the Trainer reads for a torch optimizer, as it converts
    them (float, or a true/1/yes bool); it passes over the others."""
    out: dict[str, Any] = {}
    for key, value in args.items():
        if key not in accepted:
            continue   # the Trainer reads only its own keys for this optimizer
        try:
            out[key] = value.lower() in ("true", "1", "yes") if accepted[key] is bool else float(value)
        except ValueError:
            errors.add("optim_args", f"{key}={value}: not a number")
    return out


def read_optimizer(data: Mapping[str, Any], report: list, errors: Collector,
                   defaults: Mapping[str, Any] = DEFAULTS) -> dict[str, Any]:
    """optreg's optimizer section of the file, a key it leaves out at `defaults` (its TRL class's: trl_defaults)."""
    name = data.get("optim", DEFAULTS["optim"])
    if not isinstance(name, str):
        errors.add("optim", f"expected an optimizer's name, got {show(name)}")
        return {}
    name = name.lower()
    if name in LIBRARY_OPTIM:
        return _library_optimizer(name, data, defaults, report, errors)
    if name not in TORCH_OPTIM:
        need = next((v for k, v in NEEDS.items() if isinstance(name, str) and k in name), None)
        if need is not None:
            errors.add("optim", f"{name} needs {need}; optreg reads: {', '.join(READ_OPTIM)}")
        else:
            errors.add("optim", f"unknown optim {show(name)}; optreg reads: {', '.join(READ_OPTIM)}",
                       closest(str(name), list(READ_OPTIM)))
        return {}
    cls, accepted = TORCH_OPTIM[name]
    section: dict[str, Any] = {"name": cls, "dialect": "torch", "lr": _value(data, "learning_rate", defaults),
                               "weight_decay": _value(data, "weight_decay"), "hf_decay_groups": True}
    if cls == "AdamW":
        section["betas"] = [_value(data, "adam_beta1"), _value(data, "adam_beta2")]
        section["eps"] = _value(data, "adam_epsilon")
    raw = _raw_optim_args(data.get("optim_args"), errors)
    args = _optim_args(raw, accepted, errors)
    args.pop("weight_decay", None)   # each group's weight_decay (the Trainer's two groups) wins over it
    section.update(args)
    if "optim" in data:
        report.append(KeyUse("optim", "exact", f"torch.optim.{cls}" + (" (fused: the same update)" if "fused" in name
                                                                          else "")))
    for key in ("learning_rate", "adam_beta1", "adam_beta2", "adam_epsilon"):
        if key in data:
            report.append(KeyUse(key, "exact" if cls == "AdamW" or not key.startswith("adam") else TRAINER,
                                 "" if cls == "AdamW" or not key.startswith("adam") else f"unused by {cls}"))
    if raw:
        ignored = [k for k in raw if k not in accepted]
        report.append(KeyUse("optim_args", "exact" if len(ignored) < len(raw) else TRAINER,
                             f"the Trainer ignores {', '.join(ignored)} for {name}" if ignored else ""))
    if "weight_decay" in data:
        report.append(KeyUse("weight_decay", "exact", "the Trainer's groups: 0 for biases and norms "
                                                      "(hf_decay_groups)"))
    return section


def _library_optimizer(name: str, data: Mapping[str, Any], defaults: Mapping[str, Any], report: list,
                       errors: Collector) -> dict[str, Any]:
    """The section of an optim name the Trainer builds from bitsandbytes or torchao (transformers 5.23):

    bitsandbytes  optim_bits 8 where the name says 8bit, else 32; is_paged where it says paged (not RMSprop);
                  AdamW: betas (adam_beta1, adam_beta2), eps adam_epsilon; Lion: betas only; AdEMAMix: betas
                  (beta1, beta2, beta3 of optim_args, else adam_beta1, adam_beta2, 0.9999), alpha (5.0), eps,
                  t_alpha, t_beta3 of optim_args; RMSprop: optim_args as they are
    torchao       AdamW4bit / AdamW8bit with block_size 256 and bf16_stochastic_round of optim_args, betas, eps.
    The Trainer hands RMSprop's optim_args and torchao's block_size over as strings, which the optimizer cannot
    use (a TypeError): an error here."""
    dialect, cls = LIBRARY_OPTIM[name]
    args = _raw_optim_args(data.get("optim_args"), errors)
    section: dict[str, Any] = {"name": cls, "dialect": dialect, "lr": _value(data, "learning_rate", defaults),
                               "weight_decay": _value(data, "weight_decay"), "hf_decay_groups": True}
    betas = [_value(data, "adam_beta1"), _value(data, "adam_beta2")]
    eps = _value(data, "adam_epsilon")
    passed = {"RMSprop": tuple(args), "AdamW4bit": ("block_size",), "AdamW8bit": ("block_size",)}.get(cls, ())
    for key in passed:
        if key in args:
            errors.add("optim_args", f"{key}={args[key]}: the Trainer passes it to {dialect}.{cls} as the string "
                                     f"{args[key]!r}, which {cls} cannot use (transformers 5.23 fails with a "
                                     f"TypeError): leave it out")
    if dialect == "torchao":
        section.update(betas=betas, eps=eps, block_size=256,
                       bf16_stochastic_round=_flag(args.get("bf16_stochastic_round", "False"), errors))
    else:
        section["optim_bits"] = 8 if "8bit" in name else 32
        if cls != "RMSprop":
            section["is_paged"] = "paged" in name
        if cls == "AdamW":
            section.update(betas=betas, eps=eps)
        elif cls == "Lion":
            section["betas"] = betas
        elif cls == "AdEMAMix":
            section["betas"] = [_arg(args, "beta1", betas[0], float, errors), _arg(args, "beta2", betas[1], float,
                                                                                   errors),
                                _arg(args, "beta3", 0.9999, float, errors)]
            section["alpha"] = _arg(args, "alpha", 5.0, float, errors)
            section["eps"] = _arg(args, "eps", eps, float, errors)
            for key in ("t_alpha", "t_beta3"):
                if key in args:
                    section[key] = _arg(args, key, None, int, errors)
    if "optim" in data:
        report.append(KeyUse("optim", "exact", f"{dialect}.{cls}" + (
            f" (optim_bits {section['optim_bits']}" + (", paged" if section.get("is_paged") else "") + ")"
            if dialect == "bitsandbytes" else "")))
    for key in ("learning_rate", "adam_beta1", "adam_beta2", "adam_epsilon", "optim_args"):
        if key in data:
            unused = cls == "RMSprop" and key.startswith("adam") or cls == "Lion" and key == "adam_epsilon"
            report.append(KeyUse(key, TRAINER if unused else "exact", f"unused by {cls}" if unused else ""))
    if "weight_decay" in data:
        report.append(KeyUse("weight_decay", "exact", "the Trainer's groups: 0 for biases and norms "
                                                      "(hf_decay_groups)"))
    return section


def _raw_optim_args(raw: Any, errors: Collector) -> dict[str, str]:
    """`optim_args` split as the Trainer splits it (`_parse_optim_args`): key=value strings."""
    if raw in (None, ""):
        return {}
    if not isinstance(raw, str):
        errors.add("optim_args", f"expected a string of key=value items like 'momentum=0.9,nesterov=True', "
                                 f"got {show(raw)}")
        return {}
    out = {}
    for item in raw.replace(" ", "").split(","):
        key, sep, value = item.partition("=")
        if not sep:
            errors.add("optim_args", f"{item!r}: expected key=value")
            continue
        out[key] = value
    return out


def _arg(args: Mapping[str, str], key: str, default: Any, kind: type, errors: Collector) -> Any:
    """optim_args' `key` as the Trainer converts it (float(), int()), else `default`."""
    if key not in args:
        return default
    try:
        return kind(args[key])
    except ValueError:
        errors.add("optim_args", f"{key}={args[key]}: not {'an integer' if kind is int else 'a number'}")
        return default


def _flag(value: str, errors: Collector) -> bool:
    """A flag as transformers' strtobool reads it (y, yes, t, true, on, 1 / n, no, f, false, off, 0)."""
    if value.lower() in ("y", "yes", "t", "true", "on", "1"):
        return True
    if value.lower() not in ("n", "no", "f", "false", "off", "0"):
        errors.add("optim_args", f"bf16_stochastic_round={value}: expected true or false")
    return False


#: warmup_ratio 1 (the whole run) without a run length: the largest fraction below 1, whose ceil(round(·total, 9))
#: is the total (the hf dialect reads a float >= 1 as a step count, as transformers 5 reads warmup_steps)
WHOLE_RUN = math.nextafter(1.0, 0.0)


def warmup(data: Mapping[str, Any], total: int | None, report: list, errors: Collector, own_total: bool = True) -> Any:
    """The warmup steps: an int, or ceil(ratio·total) of a float below 1 (the fraction as is without a total, which
    the schedule counts from its num_training_steps; `own_total` false: it has none, and the fraction waits for the
    run, which the file leaves to the trainer: `Experiment.check_length` refuses it without one, at
    num_train_epochs, or at max_steps for fractional epochs, as it does every file in epochs);
    transformers 4's warmup_ratio (in [0, 1]) is ceil(ratio·total) at 1 too: the whole run."""
    key = "warmup_ratio" if "warmup_ratio" in data and not data.get("warmup_steps") else "warmup_steps"
    value = _number(data, key, errors)
    if value is None:   # not a number (the error is added) and no default
        return 0
    if key == "warmup_ratio" and value > 1:   # TrainingArguments.__post_init__'s range (_number said a value < 0)
        errors.add("warmup_ratio", bound_message("<=", 1, value))   # as MindFormers' warmup_ratio says it
        return 0
    if key == "warmup_steps" and "warmup_ratio" in data:
        report.append(KeyUse("warmup_ratio", TRAINER, "overridden by warmup_steps (transformers 4)"))
    exact = value >= 1 or value == 0 or total is not None
    if key in data:
        why = [] if key == "warmup_steps" else ["transformers 4's ratio: 1, the whole run"] if value == 1 else \
            ["transformers 4's ratio, read as transformers 5 reads warmup_steps < 1"]
        if not exact:
            why.append("ceil(ratio·run length) with the product rounded to 9 digits first (transformers takes the "
                       "float product's ceiling: they differ where it is a hair above a whole number)")
        report.append(KeyUse(key, "exact" if exact else "approximate", "; ".join(why)))
    if key == "warmup_ratio" and value == 1:   # the whole run: ceil(1.0·total) = total
        return total if total is not None else WHOLE_RUN
    if value >= 1:
        return int(value)
    if total is not None:
        return math.ceil(total * value)   # get_warmup_steps, float product and all
    if not own_total:   # no run to count from: the missing run length is said where any epochs file says it
        return 0
    return float(value) if value else 0


def given_total(data: Mapping[str, Any], epochs: Any) -> int | None:
    """The run length given beside a file whose max_steps leaves the run to the epochs: build(total_steps=),
    train.steps beside the file (--steps writes it there) or `epochs` × the steps per epoch (build(steps_per_epoch=),
    train.steps_per_epoch beside the file); None: not given."""
    from optreg.config.run import given_run

    given, train = given_run(), data.get(BESIDE)
    train = train if isinstance(train, Mapping) else {}
    if "total_steps" in given:
        return given["total_steps"]
    if _count(train.get("steps")):
        return train["steps"]
    per_epoch = given.get("steps_per_epoch", train.get("steps_per_epoch"))
    if _count(per_epoch) and _count(epochs):
        return epochs * per_epoch
    return None


def _count(value: Any) -> bool:
    """Whether `value` is an int (not a bool): a count the run's keys take (their own errors say the rest)."""
    return isinstance(value, int) and not isinstance(value, bool)


def read_scheduler(data: Mapping[str, Any], total: int | None, report: list, errors: Collector,
                   run: int | None = None, defaults: Mapping[str, Any] = DEFAULTS) -> dict | None:
    """The hf dialect's schedule of `lr_scheduler_type` (else its default in `defaults`: its TRL class's, as
    AsyncGRPOConfig's constant); `total`: max_steps (> 0), its num_training_steps; `run`: the run length given beside
    a file in epochs (`given_total`), which its warmup fraction is counted from."""
    from optreg.dialects.hf.schedules import HF_SCHEDULES

    name = data.get("lr_scheduler_type", defaults["lr_scheduler_type"])
    if not isinstance(name, str):
        errors.add("lr_scheduler_type", f"expected a schedule's name, got {show(name)}")
        return None
    if name == "reduce_lr_on_plateau" or name == "greedy" or name not in HF_SCHEDULES:
        errors.add("lr_scheduler_type", f"{show(name)} is not a step schedule optreg reads; the names: "
                                        f"{', '.join(HF_SCHEDULES)}",
                   closest(str(name), list(HF_SCHEDULES)) if name not in ("reduce_lr_on_plateau", "greedy")
                   else None)
        return None
    kwargs = data.get("lr_scheduler_kwargs") or {}
    if isinstance(kwargs, str):
        import json

        try:
            kwargs = json.loads(kwargs)
        except ValueError:
            errors.add("lr_scheduler_kwargs", f"expected a mapping or its JSON, got {show(kwargs)}")
            kwargs = {}
    if not isinstance(kwargs, Mapping):
        errors.add("lr_scheduler_kwargs", f"expected a mapping, got {show(kwargs)}")
        kwargs = {}
    spec: dict[str, Any] = {"name": name, "dialect": "hf"}
    uses: list = []
    steps = warmup(data, total if total is not None else run, uses, errors,   # constant's is unused
                   own_total=name == "constant" or name not in NO_TOTAL)
    if name != "constant":
        spec["num_warmup_steps"] = steps
    report.extend(KeyUse(u.path, TRAINER, f"get_scheduler passes no warmup to {name}")
                  if name == "constant" and u.verdict != TRAINER else u for u in uses)
    if name not in NO_TOTAL and total is not None:
        spec["num_training_steps"] = total
    for key in ("num_warmup_steps", "num_training_steps"):
        if key in kwargs and name not in NO_KWARGS:
            errors.add(f"lr_scheduler_kwargs.{key}", f"get_scheduler passes {key} itself (from "
                                                     f"{'warmup_steps' if 'warmup' in key else 'the run length'}): "
                                                     f"the Trainer fails with both")
    for key in ("num_decay_steps", "num_stable_steps"):   # counts to transformers: the hf dialect's fraction is not
        value = kwargs.get(key)
        if name not in NO_KWARGS and isinstance(value, float) and 0 < value < 1:
            errors.add(f"lr_scheduler_kwargs.{key}", f"get_scheduler passes {key} to {name} as a step count, not a "
                                                     f"fraction of the run ({show(value)} is under one step): write "
                                                     f"the count")
    if name not in NO_KWARGS:
        spec.update({k: v for k, v in kwargs.items() if k not in ("num_warmup_steps", "num_training_steps")})
    for key in kwargs:
        report.append(KeyUse(f"lr_scheduler_kwargs.{key}", "exact" if name not in NO_KWARGS else TRAINER,
                             "" if name not in NO_KWARGS else f"get_scheduler passes no kwargs to {name}"))
    if "lr_scheduler_type" in data:
        report.append(KeyUse("lr_scheduler_type", "exact", f"hf.{name}"))
    return spec


class HfFormat:
    """transformers' TrainingArguments: optim, learning_rate, weight_decay, adam_*, lr_scheduler_type,
    warmup_steps, max_steps / num_train_epochs, max_grad_norm; its other keys are the Trainer's."""

    name = "hf"
    doc = "Hugging Face TrainingArguments (JSON / YAML): optim, learning_rate, lr_scheduler_type, warmup_steps"
    keys = tuple(dict.fromkeys((*READ, *WITH_LR, *SIGNATURE_KEYS)))
    signature = "lr_scheduler_type, per_device_train_batch_size, adam_beta1, num_train_epochs, or learning_rate " \
                "with output_dir, optim, warmup_steps or max_steps"
    #: the TRL config class whose defaults apply whatever the file's fields (the trl_* formats); None: hf's own rule
    trl: str | None = None
    #: the key that chooses the optimizer (optreg.config.formats.Choice)
    choices = {"optimizer": Choice("optim", optim_name)}

    def claims(self, data: Mapping[str, Any]) -> bool:
        if self.trl is not None:
            return False   # forced only (format=trl_sft): its files are TrainingArguments files, claimed by hf
        if "optimizer" in data or "scheduler" in data or "trainer" in data:
            return False   # optreg's, DeepSpeed's or Model Zoo's sections
        return any(k in data for k in SIGNATURE_KEYS) or "learning_rate" in data and any(k in data for k in WITH_LR)

    def sections(self, data: Mapping[str, Any]) -> list[Any]:
        return [k for k in data.keys() if k in READ or k == BESIDE]

    def read(self, data: Mapping[str, Any], source: Any = None) -> Any:
        errors, report = Collector(), []
        own: dict[str, Any] = {}
        max_steps = data.get("max_steps", -1)
        total = None
        if (wrong := number_message(max_steps, integer=True, also=f"-1: {EPOCHS_DECIDE}")) is not None:
            errors.add("max_steps", wrong)
        elif max_steps > 0:
            total = max_steps
            report.append(KeyUse("max_steps", "exact", "the run length"))
        beside = read_beside(data, own, report, "TrainingArguments")   # a run length given there replaces the epochs
        given = isinstance(beside, Mapping) and ("steps" in beside or "epochs" in beside)
        if total is None:
            epochs = _number(data, "num_train_epochs", errors)
            if epochs and float(epochs).is_integer():
                if not given:
                    own["train"] = {**(own.get("train") or {}), "epochs": int(epochs)}
                # the Trainer steps the schedule once per optimizer step: an epoch is ⌈batches / accumulation⌉
                accumulation = ("gradient_accumulation_steps", data.get("gradient_accumulation_steps"))
                if "num_train_epochs" in data:
                    report.append(KeyUse("num_train_epochs", "approximate",
                                         length_replaced("the Trainer's", "num_train_epochs", accumulation)) if given
                                  else KeyUse("num_train_epochs", "exact", epochs_run("train.epochs", accumulation)))
            elif "num_train_epochs" in data:
                report.append(KeyUse("num_train_epochs", "approximate", "fractional epochs: give the run length "
                                                                        "(build(total_steps=), --steps)"))
            if "max_steps" in data:
                report.append(KeyUse("max_steps", "exact", f"{show(max_steps)}: {EPOCHS_DECIDE}"
                                     + ("" if max_steps == -1 else " (the Trainer takes max_steps when it is > 0)")))
        elif "num_train_epochs" in data:
            report.append(KeyUse("num_train_epochs", TRAINER, "max_steps overrides it"))
        if self.trl is not None and (foreign := trl_foreign(data, self.trl)) is not None:
            warn_at(foreign[1], foreign[0], source, stacklevel=3)   # at the first, as its errors are located
        defaults = trl_defaults(data, report, self.trl)
        own["optimizer"] = read_optimizer(data, report, errors, defaults)
        run = None if total is not None else given_total(data, (own.get("train") or {}).get("epochs")
                                                          if isinstance(own.get("train"), Mapping) else None)
        own["scheduler"] = read_scheduler(data, total, report, errors, run, defaults)
        clip = _number(data, "max_grad_norm", errors, low=None)   # the Trainer clips when it is > 0
        if clip > 0:
            own["clip_grad"] = {"max_norm": clip}
        if "max_grad_norm" in data:
            report.append(KeyUse("max_grad_norm", "exact", "the global norm" if clip > 0 else
                                 f"{show(clip)}: no clipping (the Trainer clips when it is > 0)"))
        known = _fields()
        used = {u.path.split(".")[0] for u in report}
        for key in data:
            if key in used or key in READ or key == BESIDE:
                continue
            hint = closest(str(key), list(READ), cutoff=0.85)
            if known is not None and key not in known and hint is not None:
                errors.add(str(key), "not a TrainingArguments field", hint)
            owners = trl_owners(str(key), data, self.trl)
            report.append(KeyUse(str(key), TRAINER, f"a field of TRL's {_and(owners)}: the TRL trainer's" if owners
                                 and (known is None or key not in known) else "the Trainer's" if known is None or
                                 key in known else "not a TrainingArguments field: the application's (model or data "
                                                   "arguments)"))
        paths = {"optimizer.lr": "learning_rate", "optimizer.weight_decay": "weight_decay",
                 "optimizer.betas[0]": "adam_beta1", "optimizer.betas[1]": "adam_beta2",
                 "optimizer.betas": "adam_beta1", "optimizer.eps": "adam_epsilon", "optimizer": "optim_args",
                 "optimizer.name": "optim", "scheduler.name": "lr_scheduler_type",
                 "scheduler.num_warmup_steps": "warmup_steps", "scheduler.num_training_steps": "max_steps",
                 "scheduler": "lr_scheduler_kwargs",   # a schedule's options are lr_scheduler_kwargs, given or not
                 "clip_grad": "max_grad_norm", "clip_grad.max_norm": "max_grad_norm",   # the key is the max_norm
                 **({"train.epochs": "num_train_epochs"} if total is None and not given else {})}
        return read_translated(own, source, self.name, paths, report,   # the reader's errors with the own form's
                               format_steps=(total, "max_steps") if total is not None else None,
                               run_length="max_steps" if total is None else None, errors=errors, beside=True)


class TrlFormat(HfFormat):
    """A TrainingArguments file read as one TRL config class's (`TRL`): the file names no class, and one without
    that class's own fields gets its defaults only when the caller names it (`--format trl_sft`)."""

    keys = ()   # forced only: a file without a claim is told of hf, whose keys these are

    def __init__(self, cls: str):
        self.trl, self.name = cls, TRL_NAMES[cls]
        self.doc = f"a TrainingArguments file read by TRL's {cls} (TRL 1.16's defaults; forced only)"
        self.signature = f"none: --format {self.name}"


HF_FORMAT = HfFormat()
#: one forced format per TRL class: trl_sft, trl_dpo, trl_orpo, trl_grpo, trl_rloo, trl_kto, trl_reward,
#: trl_distillation
TRL_FORMATS = {name: TrlFormat(cls) for cls, name in TRL_NAMES.items()}
TRL_SFT, TRL_DPO, TRL_ORPO, TRL_GRPO, TRL_RLOO, TRL_KTO, TRL_REWARD, TRL_DISTILLATION = TRL_FORMATS.values()

__all__ = ["HF_FORMAT", "HfFormat", "TrlFormat", "TRL_FORMATS", "TRL_SFT", "TRL_DPO", "TRL_ORPO", "TRL_GRPO",
           "TRL_RLOO", "TRL_KTO", "TRL_REWARD", "TRL_DISTILLATION"]

"""Every private internal of trl, transformers and Pillow that r1_gui overrides, calls or patches (the table in
docs/architecture.md, "Where r1_gui leans on its dependencies' internals"), checked against the installed versions:
an upgrade that removes one or changes its signature fails here, naming it, before it fails inside a run. Those of
trl and transformers are all reached through `r1_gui.seam` (tests/test_architecture.py checks that no other module
touches them); Pillow's stay in synthetic/screens.py, beside their fallback."""

import inspect

import pytest

# (where, name, the parameters r1_gui relies on, in order (a prefix of the signature)) -- written against
# trl 1.16.0, transformers 5.23.0, Pillow 13.0.0.
METHODS = [
    ("trl.GRPOTrainer", "_calculate_rewards", ["self", "inputs", "prompts", "completions", "completion_ids_list"]),
    ("trl.GRPOTrainer", "_compute_loss", ["self", "model", "inputs"]),
    ("trl.GRPOTrainer", "_generate_and_score_completions", ["self", "inputs"]),
    ("trl.GRPOTrainer", "_prepare_inputs", ["self", "generation_batch"]),
    (
        "trl.GRPOTrainer",
        "_get_per_token_logps_and_entropies",
        ["self", "model", "input_ids", "attention_mask", "logits_to_keep", "batch_size", "compute_entropy",
         "compute_aux_loss", "pixel_values", "image_grid_thw", "num_images"],
    ),  # fmt: skip
    ("trl.GRPOTrainer", "_generate_single_turn", ["self", "prompt_ids", "images", "multimodal_fields", "num_generations"]),
    ("trl.GRPOTrainer", "log", ["self", "logs", "start_time"]),
    ("trl.trainer.grpo_trainer", "shuffle_sequence_dict", ["seq_dict"]),
    ("trl.trainer.utils", "pad", ["tensors", "padding_value", "padding_side"]),
    ("trl.trainer.utils", "split_pixel_values_by_grid", ["batch"]),
    ("trl.trainer.utils", "unsplit_pixel_values_by_grid", ["batch"]),
    ("transformers.generation.utils.GenerationMixin", "_prefill", ["self", "input_ids", "generation_config", "model_kwargs"]),
    ("transformers.models.qwen2_vl.modeling_qwen2_vl.Qwen2VLModel", "get_image_features", ["self", "pixel_values", "image_grid_thw"]),
    ("transformers.models.qwen2_5_vl.modeling_qwen2_5_vl.Qwen2_5_VLModel", "get_image_features", ["self", "pixel_values", "image_grid_thw"]),
    (
        "transformers.integrations.sdpa_attention",
        "sdpa_attention_forward",
        ["module", "query", "key", "value", "attention_mask", "dropout", "scaling", "is_causal"],
    ),
    ("transformers.Trainer", "_load_from_checkpoint", ["self", "resume_from_checkpoint", "model"]),
    ("transformers.Trainer", "get_batch_samples", ["self", "epoch_iterator", "num_batches", "device"]),
    ("PIL.ImageDraw.ImageDraw", "_getink", ["self", "ink", "fill"]),
]  # fmt: skip

# Attributes GRPOTrainer.__init__ sets that r1_gui's trainers read or write (the private ones through the seam's
# record_metric, text_tokenizer, entropy_bonus_enabled and weight_sharding).
GRPO_ATTRIBUTES = [
    "_metrics", "_tokenizer", "_entropy_bonus_enabled", "eos_token_ids", "generation_config", "generation_kwargs",
    "vllm_generation", "use_vllm", "num_generations_eval", "reward_weights", "top_entropy_quantile",
    "aux_loss_enabled", "chat_template_kwargs", "log_completions", "reward_funcs", "num_generations", "scale_rewards",
    "_dist", "pad_to_multiple_of", "use_transformers_continuous_batching",
]  # fmt: skip

# Private attributes of transformers' config objects that the seam reads or sets (r1_gui.seam.models).
CONFIG_ATTRIBUTES = ["_attn_implementation", "_compile_all_devices"]


def _resolve(dotted: str):
    import importlib

    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            owner = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for attribute in parts[cut:]:
            owner = getattr(owner, attribute)
        return owner
    raise ImportError(dotted)


@pytest.mark.parametrize("where, name, parameters", METHODS, ids=[f"{w}.{n}" for w, n, _ in METHODS])
def test_the_internal_is_there_with_the_signature_r1_gui_uses(where, name, parameters):
    owner = _resolve(where)
    assert hasattr(owner, name), f"{where}.{name} is gone: r1_gui overrides, calls or patches it (docs/architecture.md)"
    found = list(inspect.signature(getattr(owner, name)).parameters)
    assert found[: len(parameters)] == parameters, (
        f"{where}.{name} now takes {found}; r1_gui was written against {parameters} (docs/architecture.md)"
    )


@pytest.mark.parametrize("attribute", GRPO_ATTRIBUTES)
def test_grpo_trainer_still_sets_the_attribute(attribute):
    from trl import GRPOTrainer

    source = inspect.getsource(GRPOTrainer.__init__)
    assert f"self.{attribute} =" in source or f"self.{attribute}:" in source, (
        f"trl's GRPOTrainer.__init__ no longer sets self.{attribute}, which r1_gui's trainers use"
    )


def test_the_call_order_the_multi_turn_trainer_assumes():
    """EpisodeBook (r1_gui.multi_turn.trainer): trl scores every row's old log-probs inside
    _generate_and_score_completions, and shuffles the batch with shuffle_sequence_dict in _prepare_inputs."""
    from trl import GRPOTrainer

    assert "_get_per_token_logps_and_entropies(" in inspect.getsource(GRPOTrainer._generate_and_score_completions)
    assert "shuffle_sequence_dict(" in inspect.getsource(GRPOTrainer._prepare_inputs)
    assert "rollout_func" in inspect.signature(GRPOTrainer.__init__).parameters


def test_the_loss_takes_an_advantage_per_token():
    """GiGPO (`--advantage_estimator gigpo`, MultiTurnGRPOTrainer._step_credit) hands trl's loss one advantage per
    completion token, (rows, tokens), where trl's own advantages are one per row: trl 1.16's _compute_loss widens
    only a one-dimensional advantage, and trl's _generate_and_score_completions hands on the advantages it normalised
    per group, sliced to the process's rows."""
    from trl import GRPOTrainer

    assert "if advantages.dim() == 1:" in inspect.getsource(GRPOTrainer._compute_loss)
    generate = inspect.getsource(GRPOTrainer._generate_and_score_completions)
    assert "advantages = advantages[process_slice]" in generate and '"advantages": advantages,' in generate


def test_the_static_cache_and_compile_internals_generation_compile_uses():
    """r1_gui.generation.compiled: transformers compiles the decode step off accelerators only with CompileConfig's
    private `_compile_all_devices`; repeated_prompts keeps a static layer's `batch_size` and fixed addresses after
    copying its `keys` / `values` to the full batch."""
    import torch
    from transformers import CompileConfig
    from transformers.cache_utils import StaticLayer
    from transformers.generation.utils import GenerationMixin

    assert hasattr(CompileConfig(), "_compile_all_devices")
    assert "_compile_all_devices" in inspect.getsource(GenerationMixin._valid_auto_compile_criteria)
    layer = StaticLayer(max_cache_len=8)
    assert layer.is_compileable and not layer.is_initialized
    layer.lazy_initialization(torch.zeros(2, 1, 3, 4), torch.zeros(2, 1, 3, 4))
    assert layer.is_initialized and layer.batch_size == 2 and layer.keys.shape == layer.values.shape == (2, 1, 8, 4)


def test_a_model_config_still_says_its_attention_implementation_in_the_private_field():
    """r1_gui.seam.models.attention_implementation / set_attention_implementation: the vision tower's attention
    (`--vision_attention`) is chosen by a config's private `_attn_implementation`, which transformers reads at each
    forward (test_the_static_cache_and_compile_internals_generation_compile_uses checks `_compile_all_devices`)."""
    from transformers import PretrainedConfig

    config = PretrainedConfig(attn_implementation="sdpa")
    assert config._attn_implementation == "sdpa"
    config._attn_implementation = "eager"
    assert config._attn_implementation == "eager"

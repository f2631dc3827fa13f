"""The run settings in one place: EvalConfig (evaluation, generators) and BuildConfig (builder), each built once
from its command line, with the command line's defaults taken from the dataclass."""

from dataclasses import asdict

import pytest

from r1_gui.builder import BuildConfig, build_config
from r1_gui.builder import parse_args as builder_args
from r1_gui.cli_errors import UserError
from r1_gui.evaluation.config import EvalConfig, eval_config
from r1_gui.evaluation.errors import EvaluationError
from r1_gui.evaluation.steps.cli import parse_args as eval_args


def test_eval_command_line_defaults_are_the_config_defaults():
    args = eval_args(["--model_name_or_path", "m", "--dataset", "d", "--output_dir", "o"])
    assert EvalConfig.from_args(args) == EvalConfig()


def test_eval_command_line_sets_every_field_once():
    argv = ["--model_name_or_path", "m", "--dataset", "d", "--output_dir", "o", "--batch_size", "4",
            "--max_samples", "9", "--max_new_tokens", "64", "--temperature", "0.7", "--prompt_style", "mobile_use",
            "--system_prompt", "Operate the phone.", "--coordinates", "grid999", "--min_pixels", "1000",
            "--max_pixels", "20000", "--backend", "vllm", "--device", "cpu", "--dtype", "bfloat16",
            "--vision_attention", "batched_windows", "--generation_compile", "--vllm_gpu_memory_utilization", "0.5", "--seed", "3", "--gallery_size", "0", "--overwrite",
            "--benchmark", "screenspot", "--protocol", "aitw"]  # fmt: skip
    assert asdict(EvalConfig.from_args(eval_args(argv))) == {
        "prompt_style": "mobile_use", "system_prompt": "Operate the phone.", "coordinates": "grid999",
        "min_pixels": 1000, "max_pixels": 20000, "max_new_tokens": 64, "temperature": 0.7, "seed": 3,
        "backend": "vllm", "device": "cpu", "dtype": "bfloat16", "vision_attention": "batched_windows",
        "generation_compile": True, "vllm_gpu_memory_utilization": 0.5,
        "batch_size": 4, "images_per_prompt": 1, "max_samples": 9, "benchmark": "screenspot", "gallery_size": 0,
        "overwrite": True, "protocol": "aitw",
    }  # fmt: skip


def test_play_command_line_builds_the_generators_config():
    from r1_gui.generation import GenerationSettings
    from r1_gui.play import parse_args as play_args

    args = play_args(["--model", "m", "--prompt_style", "think_answer", "--seed", "5", "--device", "cpu"])
    config = GenerationSettings.from_args(args)
    assert (config.prompt_style, config.seed, config.device) == ("think_answer", 5, "cpu")  # seed: the env's too
    assert config.max_new_tokens == EvalConfig().max_new_tokens  # the shared generation flags' defaults


@pytest.mark.parametrize(
    "setting, message",
    [
        ({"batch_size": 0}, "--batch_size must be at least 1, got 0"),  # nothing to batch
        ({"max_new_tokens": 0}, "--max_new_tokens must be at least 1, got 0"),  # an empty completion
        ({"temperature": -0.1}, r"--temperature must be >= 0 \(0 is greedy\)"),  # no negative sampling
        ({"backend": "onnx"}, "--backend must be one of hf, vllm, got 'onnx'"),  # an unknown backend
        ({"device": "tpu"}, "--device must be auto, cpu or cuda, got 'tpu'"),  # an unknown device
        ({"vision_attention": "flash"}, "--vision_attention must be one of auto, batched_windows, model"),
        ({"coordinates": "grid"}, "--coordinates must be one of auto, normalized, grid1000"),  # a misspelt system
        ({"prompt_style": "qwen"}, "unknown prompt style 'qwen'; valid styles: aguvis"),  # an unknown style
        ({"max_pixels": 0}, r"--max_pixels must be at least 1 \(or left out\), got 0"),  # no screenshot at all
        ({"protocol": "uitars"}, "--protocol must be one of r1v, guir1, aitw, got 'uitars'"),  # an unknown preset
    ],
)
def test_eval_config_says_what_to_change(setting, message):
    """A UserError (printed as one line): the generation settings' own, or an EvaluationError (--protocol)."""
    with pytest.raises(EvaluationError if "protocol" in setting else UserError, match=message):
        EvalConfig(**setting)


def test_keyword_settings_apply_on_top_of_a_config():
    base = EvalConfig(prompt_style="mobile_use", max_new_tokens=64)
    assert eval_config(base, max_new_tokens=8) == EvalConfig(prompt_style="mobile_use", max_new_tokens=8)
    assert eval_config(None) == EvalConfig()
    with pytest.raises(TypeError, match=r"unknown evaluation setting\(s\) max_tokens; valid: prompt_style"):
        eval_config(base, max_tokens=8)


def test_builder_command_line_builds_its_config_once():
    args = builder_args(["--input", "a.json", "b.json", "--output_dir", "out", "--export", "guir1", "--no_progress",
                         "--num_samples", "10", "--strict"])  # fmt: skip
    assert build_config(args) == BuildConfig(
        ["a.json", "b.json"], None, "out", num_samples=10, strict=True, export=("guir1",), progress=False
    )
    defaults = build_config(builder_args(["--input", "a.json", "--output_dir", "out"]))
    assert defaults == BuildConfig(["a.json"], None, "out")  # the flags' defaults are the dataclass's


def test_make_generator_builds_the_backends_generator_from_the_config(monkeypatch):
    from r1_gui.generation import GenerationSettings
    from r1_gui.generation import generators as generate

    made = []
    monkeypatch.setattr(generate, "VLLMGenerator", lambda path, config: made.append(("vllm", path, config)))
    monkeypatch.setattr(generate, "HFGenerator", lambda path, config: made.append(("hf", path, config)))
    generate.make_generator("runs/ckpt", EvalConfig(max_new_tokens=32))
    assert made[-1] == ("hf", "runs/ckpt", EvalConfig(max_new_tokens=32))
    generate.make_generator("runs/ckpt", backend="vllm", vllm_gpu_memory_utilization=0.5)
    vllm = GenerationSettings(backend="vllm", vllm_gpu_memory_utilization=0.5)  # no config: the generation defaults
    assert made[-1] == ("vllm", "runs/ckpt", vllm)
    with pytest.raises(TypeError, match="unknown generation setting"):  # the pre-EvalConfig keyword is gone
        generate.make_generator("runs/ckpt", gpu_memory_utilization=0.5)

"""The check every resume test makes: a run resumed from checkpoint-N at its own --max_steps N ran no further step and
saved exactly the checkpoint's weights (which training had moved away from the base model's)."""

import json
from pathlib import Path

import torch
from safetensors.torch import load_file


def assert_resumed_without_a_step(output_dir: Path, step: int, base_model: Path) -> None:
    state = json.loads((output_dir / "trainer_state.json").read_text())
    assert state["global_step"] == step, f"the resumed run ended at step {state['global_step']}, not {step}"
    assert [e["step"] for e in state["log_history"] if "loss" in e] == list(range(1, step + 1))
    name = "adapter_model.safetensors" if (output_dir / "adapter_model.safetensors").is_file() else "model.safetensors"
    checkpoint, saved = load_file(output_dir / f"checkpoint-{step}" / name), load_file(output_dir / name)
    assert checkpoint.keys() == saved.keys()
    differ = [key for key in checkpoint if not torch.equal(checkpoint[key], saved[key])]
    assert not differ, f"{len(differ)} of {len(checkpoint)} tensors differ from the checkpoint's, e.g. {differ[:3]}"
    if name == "model.safetensors":  # the check can fail: training moved most tensors away from the base model's
        base = load_file(base_model / "model.safetensors")
        moved = [key for key in base if not torch.equal(base[key], checkpoint[key])]
        assert len(moved) > len(base) // 2, f"training moved only {len(moved)} of {len(base)} tensors"
    else:  # a fresh adapter's lora_B is zero; the trained one's is not
        assert any(key.endswith("lora_B.weight") and checkpoint[key].abs().sum() > 0 for key in checkpoint)

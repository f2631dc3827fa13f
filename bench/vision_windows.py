"""The Qwen2.5-VL-3B vision tower on AITW-sized screenshots: attention calls and time, per-window vs batched windows.

    python bench/vision_windows.py                      # 64 screenshots (8 x 8 answers), narrow tower: call counts
    python bench/vision_windows.py --screenshots 8      # the 8 distinct ones the deduplicated loss pass encodes
    python bench/vision_windows.py --width 1280 --time  # the real width, forward + backward timed (on CUDA: bf16)

Under sdpa, transformers runs the tower's attention one window (or, in the 4 full-attention layers, one image) per
call; `--vision_attention batched_windows` (r1_gui.vision_attention) runs one call per distinct window length. The
window layout depends only on the screenshot's grid and the tower's window settings (window_size 112, patch 14,
merge 2, full attention in blocks 7, 15, 23, 31), not on the width, so the call counts of a narrow tower (--width 64,
2 heads) are those of the real one. The screenshots are 1080x2400 resized at max_pixels 501760: 448x1036, a 32 x 74
patch grid, 592 image tokens. Prints a table, then one JSON line.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from unittest import mock

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

SCREEN = (1080, 2400)


def tower(width: int, heads: int, device: str, dtype):
    """A random Qwen2.5-VL-3B-shaped vision tower of the given width (the 3B's: 1280, 16 heads)."""
    import torch
    from transformers import Qwen2_5_VLConfig
    from transformers.models.qwen2_5_vl.modeling_qwen2_5_vl import Qwen2_5_VisionTransformerPretrainedModel

    config = Qwen2_5_VLConfig(
        vision_config={
            "depth": 32,
            "hidden_size": width,
            "intermediate_size": 3420 * width // 1280,
            "num_heads": heads,
            "out_hidden_size": 2048,
            "fullatt_block_indexes": [7, 15, 23, 31],
            "window_size": 112,
            "patch_size": 14,
            "spatial_merge_size": 2,
            "temporal_patch_size": 2,
        }
    ).vision_config
    config._attn_implementation = "sdpa"
    torch.manual_seed(0)
    model = torch.nn.Module()  # a parent, so that use_batched_window_attention finds the tower as in a full model
    model.visual = Qwen2_5_VisionTransformerPretrainedModel._from_config(config, dtype=dtype).to(device)
    return model


def encode(model, pixels, grid, backward: bool):
    """(features, sdpa calls) of one forward (and backward) of the tower."""
    import torch
    import torch.nn.functional as F

    real, calls = F.scaled_dot_product_attention, []

    def counted(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)

    with mock.patch.object(F, "scaled_dot_product_attention", counted), torch.set_grad_enabled(backward):
        features = model.visual(pixels, grid_thw=grid).pooler_output
        if backward:
            features.float().square().mean().backward()
    return features.detach().float(), len(calls)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--screenshots", type=int, default=64, help="screenshots encoded in one forward")
    parser.add_argument(
        "--width", type=int, default=64, help="tower width (1280 is the 3B's); counts do not depend on it"
    )
    parser.add_argument("--heads", type=int, default=None, help="attention heads (default: width / 80, at least 2)")
    parser.add_argument("--device", choices=("auto", "cpu", "cuda"), default="auto")
    parser.add_argument("--time", action="store_true", help="also time forward + backward, median of --repeats")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()

    import torch

    from r1_gui.actions.coords import smart_resize
    from r1_gui.vision_attention import use_batched_window_attention

    device = "cuda" if args.device == "auto" and torch.cuda.is_available() else args.device.replace("auto", "cpu")
    dtype = torch.bfloat16 if device == "cuda" else torch.float32
    heads = args.heads or max(2, args.width // 80)
    height, width = smart_resize(SCREEN[1], SCREEN[0], factor=28, min_pixels=3136, max_pixels=501760)
    grid = torch.tensor([[1, height // 14, width // 14]] * args.screenshots, device=device)
    torch.manual_seed(1)
    pixels = torch.randn(int(grid.prod(-1).sum()), 3 * 2 * 14 * 14, device=device, dtype=dtype)
    model = tower(args.width, heads, device, dtype)

    results = {}
    for mode in ("per_window", "batched_windows"):
        if mode == "batched_windows":
            assert use_batched_window_attention(model)
        features, calls = encode(model, pixels, grid, backward=False)
        seconds = []
        if args.time:
            for _ in range(args.repeats + 1):  # the first is a warm-up
                if device == "cuda":
                    torch.cuda.synchronize()
                start = time.perf_counter()
                encode(model, pixels, grid, backward=True)
                if device == "cuda":
                    torch.cuda.synchronize()
                seconds.append(time.perf_counter() - start)
                model.zero_grad(set_to_none=True)
        results[mode] = {"calls": calls, "features": features, "s": statistics.median(seconds[1:]) if seconds else None}

    expected, got = results["per_window"]["features"], results["batched_windows"]["features"]
    difference = ((got - expected).abs().max() / expected.abs().max()).item()
    tokens = int(grid.prod(-1).sum()) // 4
    print(f"Qwen2.5-VL-3B vision tower (32 blocks, width {args.width}, {heads} heads) on {device} ({dtype}),")
    print(f"{args.screenshots} screenshots of {width}x{height} ({tokens // args.screenshots} image tokens each)")
    print(f"{'':<18}{'sdpa calls':>12}{'fwd+bwd s':>12}")
    for mode, result in results.items():
        timing = f"{result['s']:>12.3f}" if result["s"] is not None else f"{'-':>12}"
        print(f"{mode:<18}{result['calls']:>12,}{timing}")
    ratio = results["batched_windows"]["s"] / results["per_window"]["s"] if args.time else None
    if ratio is not None:
        print(f"time ratio batched / per-window: {ratio:.3f}")
    print(f"largest feature difference: {difference:.2e} of the largest feature")
    record = {
        "benchmark": "vision_windows",
        "device": torch.cuda.get_device_name() if device == "cuda" else "cpu",
        "screenshots": args.screenshots,
        "width": args.width,
        "calls_per_window": results["per_window"]["calls"],
        "calls_batched": results["batched_windows"]["calls"],
        "s_per_window": results["per_window"]["s"],
        "s_batched": results["batched_windows"]["s"],
        "time_ratio": ratio,
        "max_relative_difference": difference,
    }
    print(json.dumps(record))


if __name__ == "__main__":
    main()

"""Off-policy correction for asynchronous rollouts: the decoupled PPO objective, as truncated importance weights.

A turn generated with weights `k` steps old (its lag, `k` >= 1) was sampled from a behaviour policy pi_behav that is
no longer the policy being trained. The loss keeps trl's PPO-clipped ratio pi_theta / pi_prox, where pi_prox is the
proximal policy: the trainer's weights when the batch is scored (trl's `old_per_token_logps`, or the loss pass's own
detached log-probabilities when nothing else moved the weights since). Each token of a lagging turn is then
weighted by the behaviour correction

    w = min(pi_prox(token) / pi_behav(token), cap)                                          (`behaviour_weights`)

computed from the log-probabilities the worker recorded when it sampled the token. This is the decoupled objective
of AReaL (Fu et al. 2025, arXiv 2505.24298: a proximal policy apart from the behaviour policy, the behaviour weight
capped) and the same arithmetic as trl's `vllm_importance_sampling_correction` in its `token_truncate` mode
(C_max = cap), which trl applies only to vLLM's samples. Because the weight is a non-negative constant per token,
multiplying the token's advantage by it is the same as multiplying its PPO loss term by it (trl's own placement):
-min(r w A, clip(r) w A) = w * -min(r A, clip(r) A) for w >= 0; the trainer does the former
(`r1_gui.multi_turn.trainer`).

A turn of lag 0 was sampled from pi_prox itself: its weight is exactly 1 (the ratio of the worker's and the
trainer's log-probabilities of the same weights differs from 1 only by float rounding), so at `--max_staleness 0`
an asynchronous batch trains exactly as a synchronous one.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

DEFAULT_CAP = 3.0  # trl's vllm_importance_sampling_clip_max


def check_cap(cap: float) -> None:
    if not (isinstance(cap, (int, float)) and math.isfinite(cap) and cap >= 1):
        raise ValueError(f"--importance_ratio_cap must be a number >= 1 (the largest behaviour weight), got {cap}")


@dataclass(frozen=True)
class CorrectionStats:
    """What is logged of one batch's correction: over the answer tokens of lagging turns, the importance ratio's mean
    before truncation (1.0 when no token lags) and the share truncated at the cap (0 when none lags); and the share
    of answer tokens that lag."""

    ratio_mean: float
    clipped_frac: float
    lagging_frac: float


def behaviour_weights(
    prox_logps: torch.Tensor,
    behaviour_logps: torch.Tensor,
    lags: torch.Tensor,
    mask: torch.Tensor,
    cap: float = DEFAULT_CAP,
) -> tuple[torch.Tensor, CorrectionStats]:
    """(per-token weights, stats) for tensors of one shape (rows, tokens): the proximal and behaviour
    log-probabilities, each token's lag (its turn's; 0 where it did not lag) and the answer-token mask (1 on the
    tokens the loss counts). The weight is min(exp(prox - behaviour), cap) on answer tokens that lag, 1 elsewhere.

    Example: prox log 0.5, behaviour log 0.25, lag 1 -> 2.0; prox log 0.9, behaviour log 0.1, lag 2 -> 3.0 (9.0
    truncated); lag 0 -> 1.0 whatever the log-probabilities."""
    check_cap(cap)
    if not prox_logps.shape == behaviour_logps.shape == lags.shape == mask.shape:
        raise ValueError(
            f"shapes differ: prox {tuple(prox_logps.shape)}, behaviour {tuple(behaviour_logps.shape)}, lags "
            f"{tuple(lags.shape)}, mask {tuple(mask.shape)}"
        )
    corrected = (lags > 0) & (mask > 0)
    ratio = torch.exp((prox_logps - behaviour_logps).double())
    weights = torch.where(corrected, ratio.clamp(max=cap), torch.ones_like(ratio)).to(prox_logps.dtype)
    answers = int((mask > 0).sum())
    lagging = int(corrected.sum())
    if lagging:
        stats = CorrectionStats(
            ratio_mean=float(ratio[corrected].mean()),
            clipped_frac=float((ratio[corrected] > cap).double().mean()),
            lagging_frac=lagging / answers,
        )
    else:
        stats = CorrectionStats(ratio_mean=1.0, clipped_frac=0.0, lagging_frac=0.0)
    return weights, stats

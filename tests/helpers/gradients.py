"""Gradient comparisons shared by the tests of passes that must leave the gradient unchanged."""

import torch


def assert_same_gradient(got: torch.Tensor, expected: torch.Tensor, name: str) -> None:
    """Equal up to float32 summation order: the copies' gradients are summed in another order than the full batch's
    convolution sums its patches, which moves elements by ~1e-6 of the tensor's largest (measured: <= 4.5e-7), so
    near-zero elements are compared against the tensor's scale, not their own."""
    scale = float(expected.abs().max())
    torch.testing.assert_close(got, expected, rtol=1e-5, atol=1e-5 * scale, msg=lambda m: f"{name}: {m}")

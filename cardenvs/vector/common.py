"""Helpers shared by the batched envs: sampling, action checks, memory, generators."""

from __future__ import annotations

import os

import torch


def make_generator(device: torch.device, seed: int | None) -> torch.Generator:
    """A torch Generator on ``device``, seeded (or from OS entropy when ``seed`` is None)."""
    generator = torch.Generator(device=device)
    if seed is None:
        generator.seed()
    else:
        if isinstance(seed, bool) or not isinstance(seed, int):
            raise ValueError(f"seed must be an int or None, got {seed!r}")
        generator.manual_seed(seed)
    return generator


def random_legal_actions(mask: torch.Tensor, generator: torch.Generator | None = None) -> torch.Tensor:
    """One action per row, uniform among the row's legal actions (``mask`` (B, A) bool, each row
    with at least one).

    One uniform number per row picks the k-th legal action (k uniform below the row's count),
    found as the first column where the running count of legal actions passes k: a quarter of
    the cost of drawing a number per action.
    """
    running = mask.cumsum(dim=1, dtype=torch.int16)
    counts = running[:, -1]
    picks = (torch.rand(mask.shape[0], generator=generator, device=mask.device) * counts).to(torch.int16)
    picks = torch.minimum(picks, counts - 1)  # r * count can round up to count in float32
    return (running > picks.unsqueeze(1)).to(torch.uint8).argmax(dim=1)


def check_actions(actions: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """``actions`` as an int64 (B,) tensor on the mask's device; ValueError naming illegal games."""
    if not isinstance(actions, torch.Tensor):
        raise ValueError(f"actions must be a torch.Tensor, got {type(actions).__name__}")
    if actions.shape != mask.shape[:1]:
        raise ValueError(f"actions must have shape ({mask.shape[0]},), got {tuple(actions.shape)}")
    if actions.dtype.is_floating_point or actions.dtype == torch.bool or actions.is_complex():
        raise ValueError(f"actions must be integers, got dtype {actions.dtype}")
    actions = actions.to(device=mask.device, dtype=torch.int64)
    in_range = (actions >= 0) & (actions < mask.shape[1])
    legal = in_range & mask.gather(1, actions.clamp(0, mask.shape[1] - 1).unsqueeze(1)).squeeze(1)
    if not bool(legal.all()):
        bad = (~legal).nonzero().flatten().tolist()
        shown = ", ".join(f"game {g}: action {int(actions[g])}" for g in bad[:10])
        raise ValueError(f"illegal actions in {len(bad)} game(s) (batch indices): {shown}"
                         + (" ..." if len(bad) > 10 else ""))
    return actions


def available_memory_bytes(device: str | torch.device) -> int | None:
    """Free memory where the arrays would live (None when unknown)."""
    device = torch.device(device)
    if device.type == "cuda":
        free, _ = torch.cuda.mem_get_info(device)
        return int(free)
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None


def tensor_bytes(*tensors: torch.Tensor) -> int:
    return sum(t.element_size() * t.nelement() for t in tensors)

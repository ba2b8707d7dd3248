"""What breaks when porting: a data-dependent branch and an `.item()` in forward, and a sparse
product, each on a line the report must name."""

from __future__ import annotations

import torch
from torch import nn


class Branching(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.proj = nn.Linear(16, 16)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.proj(x)
        if h.sum() > 0:  # BRANCH: a data-dependent Python branch
            h = h * 2
        scale = h.abs().max().item()  # ITEM: a Python scalar from a tensor
        return (h / scale).sum()


class SparseGraph(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.proj = nn.Linear(8, 8)
        torch.manual_seed(0)
        self.adjacency = (torch.rand(6, 6) > 0.7).float()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.proj(x)
        return torch.sparse.mm(self.adjacency.to_sparse(), h).sum()  # SPARSE


def build_branching() -> tuple[nn.Module, tuple[torch.Tensor]]:
    torch.manual_seed(0)
    return Branching(), (torch.randn(4, 16),)


def build_sparse() -> tuple[nn.Module, tuple[torch.Tensor]]:
    torch.manual_seed(0)
    return SparseGraph(), (torch.randn(6, 8),)


class Regressor(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.layers = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 1))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.layers(x)


def build_fused_adamw() -> tuple[nn.Module, tuple[torch.Tensor], None, torch.optim.Optimizer]:
    """The optimizer a CUDA training script brings along: AdamW(fused=True)."""
    torch.manual_seed(0)
    model = Regressor()
    return model, (torch.randn(4, 16),), None, torch.optim.AdamW(model.parameters(), lr=1e-3, fused=True)


def build_foreach_adamw() -> tuple[nn.Module, tuple[torch.Tensor], None, torch.optim.Optimizer]:
    """AdamW(foreach=True): the multi-tensor path, which the XLA device runs."""
    torch.manual_seed(0)
    model = Regressor()
    return model, (torch.randn(4, 16),), None, torch.optim.AdamW(model.parameters(), lr=1e-3, foreach=True)

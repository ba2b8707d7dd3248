"""A model with the patterns users port to Trainium: mask indexing, nonzero, unique, and an einsum."""

import torch
from torch import nn


class Filtering(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.proj = nn.Linear(16, 16)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.proj(x)
        mask = h > 0
        picked = h[mask].sum()
        count = torch.nonzero(mask).shape[0]
        distinct = torch.unique(torch.round(h.detach())).numel()
        mixed = torch.einsum("bi,bj->bij", h, h).sum()
        return picked + mixed + count + distinct


class Rewritten(Filtering):
    """The same computation with static shapes: masked_fill and a sum of the mask instead of indexing."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.proj(x)
        mask = h > 0
        picked = h.masked_fill(~mask, 0).sum()
        count = mask.sum()
        mixed = torch.einsum("bi,bj->bij", h, h).sum()
        return picked + mixed + count


def build() -> tuple[nn.Module, tuple[torch.Tensor]]:
    torch.manual_seed(0)
    return Filtering(), (torch.randn(4, 16),)


def build_rewritten() -> tuple[nn.Module, tuple[torch.Tensor]]:
    torch.manual_seed(0)
    return Rewritten(), (torch.randn(4, 16),)


def explode() -> None:
    raise RuntimeError("boom while building the model")


def hang() -> tuple[nn.Module, tuple[torch.Tensor]]:
    import time

    time.sleep(3600)
    return Filtering(), (torch.randn(4, 16),)

"""A small model called the ways users call theirs: `model(**batch)` (the Hugging Face form, a dict output with a
loss when labels are given), `model(*args, **kwargs)`, and `model(tensor)`."""

from __future__ import annotations

from typing import Any, Optional

import torch
from torch import nn


class TinyClassifier(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.embed = nn.Embedding(32, 16)
        self.head = nn.Linear(16, 3)

    def forward(self, input_ids: torch.Tensor, attention_mask: Optional[torch.Tensor] = None,
                labels: Optional[torch.Tensor] = None) -> dict[str, torch.Tensor]:
        hidden = self.embed(input_ids)
        if attention_mask is not None:
            hidden = hidden * attention_mask.unsqueeze(-1)
        logits = self.head(hidden.mean(dim=1))
        output = {"logits": logits}
        if labels is not None:
            output = {"loss": nn.functional.cross_entropy(logits, labels), **output}
        return output


def _batch() -> dict[str, torch.Tensor]:
    torch.manual_seed(0)
    return {"input_ids": torch.randint(0, 32, (2, 8)), "attention_mask": torch.ones(2, 8),
            "labels": torch.tensor([0, 2])}


def build_dict() -> tuple[nn.Module, dict[str, torch.Tensor]]:
    return TinyClassifier(), _batch()


def build_args_kwargs() -> tuple[nn.Module, tuple[tuple[Any, ...], dict[str, Any]]]:
    batch = _batch()
    return TinyClassifier(), ((batch["input_ids"],), {"attention_mask": batch["attention_mask"]})


def build_tensor() -> tuple[nn.Module, torch.Tensor]:
    return TinyClassifier(), _batch()["input_ids"]


# `probe shapes`: the same classifier called with two sequence lengths, with one fixed shape, and with no list
def _sized(length: int) -> dict[str, torch.Tensor]:
    torch.manual_seed(length)
    return {"input_ids": torch.randint(0, 32, (2, length)), "attention_mask": torch.ones(2, length),
            "labels": torch.tensor([0, 2])}


def two_lengths() -> tuple[nn.Module, dict[str, torch.Tensor], None, list[dict[str, torch.Tensor]]]:
    """What a text model sees from an unpadded data loader: sequences of 8 and 13 tokens."""
    return TinyClassifier(), _sized(8), None, [_sized(8), _sized(13)]


def fixed_shape() -> tuple[nn.Module, dict[str, torch.Tensor], None, list[dict[str, torch.Tensor]]]:
    return TinyClassifier(), _sized(16), None, [_sized(16)]

"""Real models as users port them: Hugging Face classes built from tiny configs (2 layers, hidden
size ≤ 128, random weights, no downloads) called the Hugging Face way, `model(**batch)` with labels so the output
carries the loss, and torchvision's ResNet and MobileNetV2 (the XLA tier only, where torch 2.9 and torchvision 0.24
are a consistent pair). The op-support corpus of scripts/measure_op_support.py and the acceptance tests of
`probe ops` both build these."""

from __future__ import annotations

from typing import Any

import torch
from torch import nn

VOCAB = 256
TOKENS = (2, 16)  # batch, sequence length
TINY = {"num_hidden_layers": 2, "num_attention_heads": 4, "intermediate_size": 128}


def _tokens(seed: int = 0) -> torch.Tensor:
    torch.manual_seed(seed)
    return torch.randint(0, VOCAB, TOKENS)


def _seeded() -> None:
    torch.manual_seed(0)


def build_bert() -> tuple[nn.Module, dict[str, Any]]:
    from transformers import BertConfig, BertForSequenceClassification

    _seeded()
    config = BertConfig(vocab_size=VOCAB, hidden_size=64, max_position_embeddings=64, num_labels=3, **TINY)
    input_ids = _tokens()
    return BertForSequenceClassification(config), {
        "input_ids": input_ids, "attention_mask": torch.ones_like(input_ids),
        "token_type_ids": torch.zeros_like(input_ids), "labels": torch.tensor([0, 2])}


def build_gpt2() -> tuple[nn.Module, dict[str, Any]]:
    from transformers import GPT2Config, GPT2LMHeadModel

    _seeded()
    config = GPT2Config(vocab_size=VOCAB, n_embd=64, n_layer=2, n_head=4, n_positions=64)
    input_ids = _tokens()
    return GPT2LMHeadModel(config), {"input_ids": input_ids, "attention_mask": torch.ones_like(input_ids),
                                     "labels": input_ids}


def build_t5() -> tuple[nn.Module, dict[str, Any]]:
    from transformers import T5Config, T5ForConditionalGeneration

    _seeded()
    config = T5Config(vocab_size=VOCAB, d_model=64, d_kv=16, d_ff=128, num_layers=2, num_decoder_layers=2,
                      num_heads=4, decoder_start_token_id=0, pad_token_id=0)
    input_ids = _tokens()
    return T5ForConditionalGeneration(config), {"input_ids": input_ids, "attention_mask": torch.ones_like(input_ids),
                                                "labels": _tokens(1)}


def build_llama() -> tuple[nn.Module, dict[str, Any]]:
    from transformers import LlamaConfig, LlamaForCausalLM

    _seeded()
    config = LlamaConfig(vocab_size=VOCAB, hidden_size=64, num_key_value_heads=2, max_position_embeddings=64,
                         **TINY)
    input_ids = _tokens()
    return LlamaForCausalLM(config), {"input_ids": input_ids, "attention_mask": torch.ones_like(input_ids),
                                      "labels": input_ids}


def build_llama_unmasked() -> tuple[nn.Module, dict[str, Any]]:
    """The way out for transformers' mask check (an unpadded batch needs no attention_mask)."""
    model, batch = build_llama()
    del batch["attention_mask"]
    return model, batch


def build_vit() -> tuple[nn.Module, dict[str, Any]]:
    from transformers import ViTConfig, ViTForImageClassification

    _seeded()
    config = ViTConfig(image_size=32, patch_size=8, hidden_size=64, num_labels=10, **TINY)
    return ViTForImageClassification(config), {"pixel_values": torch.randn(2, 3, 32, 32),
                                               "labels": torch.tensor([1, 7])}


def _images() -> torch.Tensor:
    _seeded()
    return torch.randn(2, 3, 64, 64)


def build_resnet() -> tuple[nn.Module, tuple[torch.Tensor]]:
    from torchvision.models import resnet18

    _seeded()
    return resnet18(num_classes=10), (_images(),)


def build_mobilenet() -> tuple[nn.Module, tuple[torch.Tensor]]:
    from torchvision.models import mobilenet_v2

    _seeded()
    return mobilenet_v2(num_classes=10), (_images(),)


HF_FACTORIES = ("build_bert", "build_gpt2", "build_t5", "build_llama", "build_vit")
TORCHVISION_FACTORIES = ("build_resnet", "build_mobilenet")

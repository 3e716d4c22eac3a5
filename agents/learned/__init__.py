"""Learned (PyTorch) agents: a masked policy/value network over the environment's observation
(``policy``).  Importing this package needs torch (the ``learn`` extra)."""

from .policy import (
    CheckpointMismatch, LearnedPolicy, PolicyValueNet, export_policy, load_checkpoint, save_checkpoint,
)

__all__ = ["PolicyValueNet", "LearnedPolicy", "save_checkpoint", "load_checkpoint", "export_policy",
           "CheckpointMismatch"]

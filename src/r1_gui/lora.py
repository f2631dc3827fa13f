"""Moved (issue 22): ``LORA_TARGET_MODULES`` and ``lora_config`` to ``r1_gui.training.lora``; the adapter folders
(``ADAPTER_CONFIG``, ``adapter_base``, ``config_folder``, ``load_model``) to ``r1_gui.checkpoints``. This old path
still works and warns."""

from r1_gui._moved import forwarder

__getattr__ = forwarder(
    __name__,
    "r1_gui.checkpoints",
    elsewhere={"LORA_TARGET_MODULES": "r1_gui.training.lora", "lora_config": "r1_gui.training.lora"},
)

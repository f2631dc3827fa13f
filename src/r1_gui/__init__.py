"""r1_gui: GRPO training of vision-language GUI agents (see README.md)."""

import logging
import warnings
from importlib import metadata

try:
    __version__ = metadata.version("r1_gui")  # pyproject.toml's, as installed
except metadata.PackageNotFoundError:  # the source tree run without installing it
    __version__ = "unknown"


class _DropMessage(logging.Filter):
    """Drops the records of one logger whose message starts with ``start``."""

    def __init__(self, start: str):
        super().__init__()
        self.start = start

    def filter(self, record: logging.LogRecord) -> bool:
        return not record.getMessage().startswith(self.start)


# DeepSpeed, imported by accelerate and transformers whether or not --deepspeed is given, logs "Setting accelerator
# to CPU. If you have GPU or other accelerator, we were unable to detect it." on stdout at import on every machine
# without a GPU: on every r1_gui command on a CPU. It tells the user nothing to act on (a GPU machine does not log
# it), so that one message of DeepSpeed's logger is dropped here, before anything imports DeepSpeed (its logger keeps
# filters that were added before it was set up); every other DeepSpeed message stays.
logging.getLogger("DeepSpeed").addFilter(_DropMessage("Setting accelerator to CPU."))

# trl 1.16 calls `is_gradient_checkpointing`, `gradient_checkpointing_disable` and `gradient_checkpointing_enable`
# (deprecated in transformers 5 for their `activation_checkpointing` names) around every generation, and peft reads
# the first when it wraps a model (training with --use_peft, a LoRA evaluation, the merge): transformers then warns,
# in code r1_gui does not own and with nothing for the user to change. Those three FutureWarnings are ignored where
# transformers raises them (its modeling_utils; the TrainingArguments warning about a user's own
# --gradient_checkpointing stays); drop this filter once trl and peft call the new names.
warnings.filterwarnings(
    "ignore",
    message=r"`(is_gradient_checkpointing|gradient_checkpointing_disable|gradient_checkpointing_enable)` is deprecated",
    category=FutureWarning,
    module=r"transformers\.modeling_utils",
)

"""r1_gui: GRPO training of vision-language GUI agents (see README.md)."""

import logging


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

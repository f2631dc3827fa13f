"""Run a command-line script that is killed with SIGKILL, as by `kill -9`, the first time it calls a function.

    python tests/helpers/kill_mid_write.py r1_gui.builder.writers:write_parquet dataset/raw_load_data.py ARGS...

Nothing of the script's own cleanup runs (no except, finally or atexit), as after a real kill -9.
"""

import importlib
import os
import runpy
import signal
import sys

target, script, *arguments = sys.argv[1:]
module_name, _, attribute = target.partition(":")
*owners, name = attribute.split(".")
owner = importlib.import_module(module_name)
for part in owners:
    owner = getattr(owner, part)
setattr(owner, name, lambda *args, **kwargs: os.kill(os.getpid(), signal.SIGKILL))
sys.argv = [script, *arguments]
runpy.run_path(script, run_name="__main__")

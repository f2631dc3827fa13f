"""`r1_gui/Phone-v0`: a simulated phone. The environment (`env.PhoneEnv`), the phone as a state machine (`machine`),
its contents and state (`world`), the task families (`tasks`) and the expert (`expert`)."""

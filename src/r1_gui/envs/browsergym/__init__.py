"""BrowserGym's web tasks by id (`--env browsergym/<task>`): the adapter (`env.BrowserGymEnv`), the mapping of r1_gui's
actions to BrowserGym's coordinate actions (`actions`), and the published MiniWoB++ task lists (`presets`).
Imported only when such an id is made: it needs the `envs` extra (browsergym, playwright)."""

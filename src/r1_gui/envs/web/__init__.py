"""`r1_gui/Web-v0`: MiniWoB++ task pages in a headless Chromium. The environment (`env.WebEnv`), the browser
(`browser`) and the DOM expert (`expert`); imported only when the environment is made (it needs selenium, miniwob and
Debian's chromium)."""

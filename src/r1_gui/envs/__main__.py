"""`python -m r1_gui.envs`: play and draw episodes (see r1_gui.envs.cli)."""

from r1_gui.envs.cli import main

if __name__ == "__main__":
    main()

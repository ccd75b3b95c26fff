"""``python -m detente``: the ``detente`` command, for when the script is not on ``PATH``
(an editor started from a desktop launcher does not see a virtualenv)."""

from detente.cli.main import main

if __name__ == "__main__":
    main()

"""The evaluation's one error type, apart from the modules that raise it so that each can import it without the others."""

from r1_gui.cli_errors import UserError


class EvaluationError(UserError):
    """A problem with the evaluation's inputs or settings that the user fixes; the CLI prints it without a traceback.
    A UserError, as the generators' and the settings' own errors are: ``except UserError`` catches them all."""

"""The evaluation's one error type, apart from the modules that raise it so that each can import it without the others."""


class EvaluationError(ValueError):
    """A problem with the evaluation's inputs or settings that the user fixes; the CLI prints it without a traceback."""

"""The exception of the generated settings check (:mod:`._schema_check`): a module of its own,
so that the generated code and its generator (:mod:`.fastpath`) both import it downward."""


class Refused(ValueError):
    """What the generated check raises for a document it does not accept."""

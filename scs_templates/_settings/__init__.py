"""The standardized cluster settings: model, loading, validation, JSON Schema.

This package re-exports nothing: importing a submodule that needs no model (``naming``,
``versions``, the happy path of ``validate``) must not import pydantic and build the model
classes (docs/performance.md). The model is :mod:`.model`, loading and validating
:mod:`.validate`, the problems it reports :mod:`.problems`.
"""

"""The helm/helmfile toolchain: find the binaries to run, and install the pinned ones.

Everything that runs helm or helmfile asks :mod:`.resolve` for the binary
(:func:`.resolve.find_helm`, :func:`.resolve.find_helmfile`) or :mod:`.install`
(:func:`.install.ensure_tool`, which builds a missing one from verified Go modules) instead of
trusting ``PATH``, so the version rules (helm 4 from 4.1.4, helmfile 1 from 1.8.0) hold
everywhere; :mod:`.pins` holds the pinned versions. This package re-exports nothing: a render
imports the resolver, never the installer. See ``docs/toolchain.md``.
"""

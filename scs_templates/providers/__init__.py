"""Infrastructure providers: the plug-in interface, and the one way to find a provider.

:class:`~scs_templates.providers.interface.Provider` (in :mod:`.interface`, with the types a
provider's methods take and return) and its
:class:`~scs_templates.providers.operations.Operations` (what it does to a cloud and a
workload cluster, loaded only by the commands that touch one) name every difference between
providers; the shipped ones, :mod:`.openstack` and :mod:`.docker`, implement them, and a
separate distribution adds one by declaring its ``Provider`` object under the entry-point
group ``scs_templates.providers`` (:mod:`scs_templates._settings.plugins` finds them; a
provider's own commands under ``scs_templates.commands``). Nothing outside this package
compares ``spec.provider`` with a name: it asks the cluster's provider
(:func:`.registry.provider_of`). See docs/architecture.md, "Adding a provider".

This package re-exports nothing: a provider's command module, which ``--help`` imports,
pays for no submodule it does not import itself.
"""

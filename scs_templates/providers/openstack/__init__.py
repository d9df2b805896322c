"""The OpenStack provider (CAPO): everything OpenStack-specific in Python, in one place.

* :data:`OPENSTACK` (:mod:`.provider`): the provider itself, its settings rules, its part of
  the values (:mod:`.values`, its typed models :mod:`.values_model`) and the workload
  set-up (:mod:`.workload`);
* the cloud side, the library's OpenStack building blocks: per-cluster application
  credentials (:mod:`.appcred`) and the Secret holding them (:mod:`.credentials_secret`),
  preflight checks (:mod:`.preflight`), server groups (:mod:`.servergroups`), rotation
  (:mod:`.rotation`, :mod:`.capo_fence`), cleanup (:mod:`.cleanup`, :mod:`.leftovers`, the
  lines both print: :mod:`.cloud_report`), what install and delete do with them
  (:mod:`.provision`).

This package re-exports nothing: render imports it through the catalogue, and each building
block is imported from its own module where it is used (openstacksdk only when a function
talks to a cloud).

Typical use::

    from scs_templates.providers.openstack.connection import open_cloud
    from scs_templates.providers.openstack.preflight import run_preflight
    from scs_templates.providers.openstack.appcred import ensure_cluster_credentials
    from scs_templates.providers.openstack.credentials_secret import credentials_secret_data
    from scs_templates.providers.openstack.rotation import rotate_credentials

    conn = open_cloud(settings.spec.openstack.cloud)
    report = run_preflight(conn, settings)
    creds = ensure_cluster_credentials(conn, settings, existing=current_secret_data_or_None)
    data = credentials_secret_data(creds, settings)  # {"clouds.yaml": Secret, ...}
    report = rotate_credentials(conn, settings, management_kube_client)  # a new credential
"""

"""Standard services of the workload cluster, installed with helmfile.

* :func:`.catalogue.service_catalogue` - every service release with its chart, repository
  and tested default version;
* :func:`.releases.service_releases` - settings -> the wanted releases (chart source,
  version, values); :func:`.releases.services_state_values` - the state values of
  ``helmfile.d/10-services.yaml.gotmpl``;
* :func:`.deploy.apply` - cluster release, workload kubeconfig, then ``helmfile sync`` of the
  services.

This package re-exports nothing: the settings rules ask the catalogue alone on the CLI's
pydantic-free happy path, without the releases, values and apply machinery (the settings
model, the kubernetes client, the helmfile runner). See ``docs/services.md``.
"""

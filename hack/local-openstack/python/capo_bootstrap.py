"""Idempotent find-or-create of everything the local OpenStack needs beyond its services.

One Python process per step: the openstack CLI costs about two seconds of start-up per call.
Runs as the `capo-admin` cloud of the clouds.yaml named by OS_CLIENT_CONFIG_FILE.

  capo_bootstrap.py identity PASSWORD ENDPOINT_BASE
  capo_bootstrap.py compute HOST:ZONE...
  capo_bootstrap.py computes-up HOST...
  capo_bootstrap.py octavia-prerequisites
  capo_bootstrap.py octavia-zones ZONE...
  capo_bootstrap.py volumes ZONE...
"""
import json
import sys
import time

import openstack

SERVICE_USERS = ('placement', 'glance', 'nova', 'neutron', 'cinder', 'octavia')
ROLES = ('admin', 'service', 'member', 'reader', 'load-balancer_member', 'load-balancer_admin',
         'load-balancer_observer', 'load-balancer_global_observer')
# name, type, port and path of each service's endpoint
ENDPOINTS = (('placement', 'placement', 8778, ''), ('glance', 'image', 9292, ''),
             ('nova', 'compute', 8774, '/v2.1'), ('neutron', 'network', 9696, ''),
             ('cinderv3', 'volumev3', 8776, '/v3/%(project_id)s'), ('octavia', 'load-balancer', 9876, ''))
FLAVORS = (('m1.tiny', 512, 1, 1), ('m1.small', 2048, 10, 1), ('m1.medium', 4096, 20, 2))
# Flavors for machines with volumes: one with no root disk (a server of it boots from a volume
# only), one with an ephemeral disk (what a machine's local additional block devices take).
VOLUME_FLAVORS = (('m1.zero-disk', 512, 0, 1, 0), ('m1.ephemeral', 512, 1, 1, 5))
ONE_MIB = b'\0' * (1 << 20)

cloud = openstack.connect(cloud='capo-admin')


def project(identity, domain, name):
    return (identity.find_project(name, domain_id=domain.id)
            or identity.create_project(name=name, domain_id=domain.id))


def user(identity, domain, name, password):
    return (identity.find_user(name, domain_id=domain.id)
            or identity.create_user(name=name, password=password, domain_id=domain.id))


def identity_step(password, base):
    identity = cloud.identity
    domain = identity.find_domain('default')
    roles = {name: identity.find_role(name) or identity.create_role(name=name) for name in ROLES}
    service = project(identity, domain, 'service')
    for name in SERVICE_USERS:
        account = user(identity, domain, name, password)
        for role in ('admin', 'service'):
            identity.assign_project_role_to_user(service, account, roles[role])
    admin_project = identity.find_project('admin', domain_id=domain.id)
    admin = identity.find_user('admin', domain_id=domain.id)
    for role in ('member', 'load-balancer_admin'):
        identity.assign_project_role_to_user(admin_project, admin, roles[role])
    # The tests run as an unprivileged tenant, as users do.
    demo_project = project(identity, domain, 'demo')
    demo = user(identity, domain, 'demo', password)
    for role in ('member', 'reader', 'load-balancer_member'):
        identity.assign_project_role_to_user(demo_project, demo, roles[role])
    for name, kind, port, path in ENDPOINTS:
        svc = identity.find_service(name) or identity.create_service(name=name, type=kind)
        present = {e.interface for e in identity.endpoints(service_id=svc.id)}
        for interface in ('public', 'internal', 'admin'):
            if interface not in present:
                identity.create_endpoint(service_id=svc.id, interface=interface, region_id='RegionOne',
                                         url='%s:%d%s' % (base, port, path))


def image(name, disk_format, tag=None):
    found = cloud.image.find_image(name)
    if found:
        return found
    created = cloud.create_image(name, data=ONE_MIB, disk_format=disk_format, container_format='bare',
                                 visibility='public', wait=True)
    if tag:
        cloud.image.add_tag(created, tag)
    return created


def compute_step(host_zones):
    compute = cloud.compute
    for name, ram, disk, vcpus in FLAVORS:
        compute.find_flavor(name) or compute.create_flavor(name=name, ram=ram, disk=disk, vcpus=vcpus)
    image('fake-image', 'raw')
    wanted = {entry.split(':')[0] for entry in host_zones}
    deadline = time.monotonic() + 180
    while True:
        services = {s.host for s in compute.services(binary='nova-compute')}
        hypervisors = {h.name for h in compute.hypervisors()}
        if wanted <= services and wanted <= hypervisors:
            break
        if time.monotonic() > deadline:
            sys.exit('nova-compute hosts %s did not register (services %s, hypervisors %s)'
                     % (sorted(wanted), sorted(services), sorted(hypervisors)))
        time.sleep(2)
    for entry in host_zones:
        host, zone = entry.split(':')
        aggregate = (compute.find_aggregate('capo-' + zone)
                     or compute.create_aggregate(name='capo-' + zone, availability_zone=zone))
        if host not in (aggregate.hosts or []):
            compute.add_host_to_aggregate(aggregate, host)
    network = cloud.network
    if not network.find_network('public'):
        public = network.create_network(name='public', is_router_external=True, is_shared=False,
                                        provider_network_type='flat', provider_physical_network='public')
        network.create_subnet(name='public-subnet', network_id=public.id, ip_version=4,
                              cidr='172.24.4.0/24', gateway_ip='172.24.4.1', is_dhcp_enabled=False,
                              allocation_pools=[{'start': '172.24.4.10', 'end': '172.24.4.250'}])
    for name in ('service', 'admin', 'demo'):
        cloud.set_compute_quotas(name, instances=-1, cores=-1, ram=-1)


def computes_up_step(hosts):
    # After a restart, servers can only be scheduled once every compute host reports again.
    deadline = time.monotonic() + 180
    while True:
        up = {s.host for s in cloud.compute.services(binary='nova-compute') if s.state == 'up'}
        if set(hosts) <= up:
            return
        if time.monotonic() > deadline:
            sys.exit('nova-compute hosts %s are not up (up: %s)' % (sorted(hosts), sorted(up)))
        time.sleep(1)


def octavia_prerequisites_step():
    # Amphorae are fake-driver Nova servers on a management network, booted from an image found
    # by its tag; their VIPs are real Neutron ports, so floating IPs attach to them.
    network = cloud.network
    mgmt = network.find_network('lb-mgmt-net')
    if not mgmt:
        mgmt = network.create_network(name='lb-mgmt-net')
        network.create_subnet(name='lb-mgmt-subnet', network_id=mgmt.id, ip_version=4,
                              cidr='10.254.0.0/24')
    flavor = (cloud.compute.find_flavor('amphora')
              or cloud.compute.create_flavor(name='amphora', ram=1024, disk=2, vcpus=1))
    image('amphora-fake', 'qcow2', tag='amphora')
    print('MGMT_NETWORK=%s AMPHORA_FLAVOR=%s' % (mgmt.id, flavor.id))


def octavia_zones_step(zones):
    lb = cloud.load_balancer
    for zone in zones:
        profile = (lb.find_availability_zone_profile('capo-' + zone)
                   or lb.create_availability_zone_profile(
                       name='capo-' + zone, provider_name='amphora',
                       availability_zone_data=json.dumps({'compute_zone': zone})))
        if not lb.find_availability_zone(zone):
            lb.create_availability_zone(name=zone, availability_zone_profile_id=profile.id,
                                        enabled=True)


def volumes_step(zones):
    # After a restart, volumes can only be scheduled once each zone's backend reports again.
    deadline = time.monotonic() + 180
    while True:
        # Debian's openstacksdk has no Cinder services call: the API itself.
        services = cloud.block_storage.get('/os-services?binary=cinder-volume').json()['services']
        up = {s['zone'] for s in services if s['state'] == 'up' and s['status'] == 'enabled'}
        if set(zones) <= up:
            break
        if time.monotonic() > deadline:
            sys.exit('cinder-volume backends of zones %s are not up (up: %s)' % (sorted(zones), sorted(up)))
        time.sleep(1)
    for name, ram, disk, vcpus, ephemeral in VOLUME_FLAVORS:
        (cloud.compute.find_flavor(name)
         or cloud.compute.create_flavor(name=name, ram=ram, disk=disk, vcpus=vcpus, ephemeral=ephemeral))
    cloud.set_volume_quotas('demo', volumes=-1, gigabytes=-1, snapshots=-1)


step, args = sys.argv[1], sys.argv[2:]
if step == 'identity':
    identity_step(*args)
elif step == 'compute':
    compute_step(args)
elif step == 'computes-up':
    computes_up_step(args)
elif step == 'octavia-prerequisites':
    octavia_prerequisites_step()
elif step == 'octavia-zones':
    octavia_zones_step(args)
elif step == 'volumes':
    volumes_step(args)
else:
    sys.exit('unknown step %s' % step)

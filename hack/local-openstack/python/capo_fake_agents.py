"""Stands in for the Neutron agents a real deployment runs, over Neutron's own RPC.

- Every 30 s, DHCP and L3 agent heartbeats in each availability zone given with --zone: Neutron
  checks network and router availability_zone_hints against the zones its agents report.
- Every second, what an L3 agent would do for floating IPs: ACTIVE once associated with a port,
  DOWN once not.

Usage: capo_fake_agents.py --config-file neutron.conf --zone az1 --zone az2 [--once]
"""
import sys
import time

from neutron.agent import rpc as agent_rpc
from neutron.agent.l3.agent import L3PluginApi
from neutron.common import config as neutron_config
from neutron.conf.agent import common as agent_config
from neutron_lib import context as n_context
from neutron_lib import rpc as n_rpc
from neutron_lib.agent import topics
from oslo_config import cfg


def parse(argv):
    zones, once, rest = [], False, []
    it = iter(argv)
    for arg in it:
        if arg == '--zone':
            zones.append(next(it))
        elif arg == '--once':
            once = True
        else:
            rest.append(arg)
    return zones, once, rest


ZONES, ONCE, OSLO_ARGS = parse(sys.argv[1:])
neutron_config.register_common_config_options()
agent_config.register_agent_state_opts_helper(cfg.CONF)
cfg.CONF(OSLO_ARGS, project='neutron')
n_rpc.init(cfg.CONF)
from neutron.objects import router as router_objects  # noqa: E402 (needs the configuration)

AGENTS = (('DHCP agent', 'neutron-dhcp-agent', 'dhcp_agent', {}),
          ('L3 agent', 'neutron-l3-agent', 'l3_agent', {'agent_mode': 'legacy'}))
state_api = agent_rpc.PluginReportStateAPI(topics.REPORTS)
l3_api = L3PluginApi(topics.L3PLUGIN, 'capo-fake-l3-agent')
rpc_context = n_context.get_admin_context_without_session()


def report_agents():
    for zone in ZONES:
        for agent_type, binary, topic, configuration in AGENTS:
            state_api.report_state(rpc_context, {
                'agent_type': agent_type, 'binary': binary, 'topic': topic,
                'host': 'capo-%s-%s' % (topic, zone), 'availability_zone': zone,
                'configurations': configuration, 'start_flag': True,
            }, use_call=True)


def settle_floating_ips():
    db_context = n_context.get_admin_context()
    for fip in router_objects.FloatingIP.get_objects(db_context):
        wanted = 'ACTIVE' if fip.fixed_port_id else 'DOWN'
        router = fip.router_id or fip.last_known_router_id
        if router and fip.status != wanted:
            l3_api.update_floatingip_statuses(rpc_context, router, {fip.id: wanted})


report_agents()
reported = time.monotonic()
while not ONCE:
    try:
        if time.monotonic() - reported >= 30:
            report_agents()
            reported = time.monotonic()
        settle_floating_ips()
    except Exception as err:  # Neutron restarting: keep trying
        print('capo_fake_agents: %s' % err, flush=True)
    time.sleep(1)

"""An ML2 mechanism driver for a Neutron without agents.

It binds every port on any host to the first segment offered, as an OVS port, and marks it
ACTIVE, so Nova's fake driver and Octavia see ports that behave like bound ones. It also
declares a trunk driver, without which the trunk service plugin refuses to load.
"""
from neutron.services.trunk.drivers import base as trunk_driver_base
from neutron_lib import constants
from neutron_lib.api.definitions import portbindings
from neutron_lib.plugins.ml2 import api
from neutron_lib.services.trunk import constants as trunk_constants

_trunk_driver = None


class _TrunkDriver(trunk_driver_base.DriverBase):
    @property
    def is_loaded(self):
        return True


class BindEverything(api.MechanismDriver):
    def initialize(self):
        global _trunk_driver
        _trunk_driver = _TrunkDriver(
            'capo_fake', (portbindings.VIF_TYPE_OVS,),
            (trunk_constants.SEGMENTATION_TYPE_VLAN,), None,
            can_trunk_bound_port=True)

    @property
    def connectivity(self):
        return portbindings.CONNECTIVITY_L2

    def bind_port(self, context):
        if not context.segments_to_bind:
            return
        segment = context.segments_to_bind[0]
        details = {portbindings.CAP_PORT_FILTER: True, portbindings.OVS_HYBRID_PLUG: False}
        context.set_binding(segment[api.ID], portbindings.VIF_TYPE_OVS, details,
                            status=constants.PORT_STATUS_ACTIVE)

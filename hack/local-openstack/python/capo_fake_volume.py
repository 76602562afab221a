"""A Cinder volume driver for a machine without storage: Cinder's own fake driver (the one its
functional tests use, which keeps no data and needs no iSCSI target), made to serve images too.

Every volume exists only in Cinder's database. A volume made from an image is "cloned" by the
backend, as Ceph does, so Cinder neither downloads the image nor needs qemu-img; Cinder still
marks it bootable and records the image's metadata, which is all Nova reads. Each backend
reports the name its configuration gives, so that one cinder-volume serves a backend per zone.
"""
from cinder.tests import fake_driver


class Driver(fake_driver.FakeLoggingVolumeDriver):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.backend_name = self.configuration.safe_get('volume_backend_name') or 'fake'

    def clone_image(self, context, volume, image_location, image_meta, image_service):
        return {}, True

    def copy_volume_to_image(self, context, volume, image_service, image_meta):
        pass

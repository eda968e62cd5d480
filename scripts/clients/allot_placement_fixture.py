# A pytest plugin for osc-placement's functional tests (loaded with `-p allot_placement_fixture`):
# their base class asks placement.tests.functional.fixtures.placement.PlacementFixture for an
# endpoint and a token, and the real fixture starts Placement in this process behind a
# wsgi-intercept. This one hands over allot's Placement endpoint instead (ALLOT_PLACEMENT_URL)
# and the token `admin` (noauth2's administrator, as the real fixture uses). The tests themselves
# run unmodified: they drive the `openstack` shell, which talks HTTP to allot.
import os

import fixtures
from placement.tests.functional.fixtures import placement


class AllotPlacementFixture(fixtures.Fixture):
    def __init__(self, token='admin', **_ignored):
        self.token = token

    def _setUp(self):
        self.endpoint = os.environ['ALLOT_PLACEMENT_URL']


placement.PlacementFixture = AllotPlacementFixture

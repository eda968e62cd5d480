# Placement's own test fixture, replaced by one whose endpoint is allot's Placement. Importing
# this module makes the swap: placement.tests.functional.fixtures.placement.PlacementFixture is
# this AllotPlacementFixture from then on, and every class defined later on top of it (Nova's
# PlacementFixture) is built on it. The real fixture starts Placement in this process behind a
# wsgi-intercept; this one hands over allot's endpoint and the token `admin` (noauth2's
# administrator, as the real fixture uses). The tests run unmodified and talk HTTP to allot.
#
# - osc-placement's functional tests load it as a pytest plugin (`-p allot_placement_fixture`):
#   one allot server for the whole run, ALLOT_PLACEMENT_URL.
# - Nova's functional tests (nova_functional.py imports it): a fresh allot server for each test,
#   so no test sees another's providers. ALLOT_PLACEMENT_SERVERS is the URL of a service that
#   hands them out (scripts/clients/placement-per-test.ts): POST answers {"id", "placementUrl"} of
#   a server on a database of its own, DELETE <url>/<id> stops it and drops its database. The
#   first fixture of a test asks for one; every other fixture of the same test (a test may set
#   up two on one database) gets the same; release_server() gives it back when the test ends.
import json
import os
import urllib.error
import urllib.request

import fixtures
from placement.tests.functional.fixtures import placement

# a bound on every call to the server service: starting a server and migrating its database
SERVICE_TIMEOUT_SECONDS = 120

_current = None  # this test's server: {"id", "placementUrl"}


def _service(method, path=''):
    request = urllib.request.Request(os.environ['ALLOT_PLACEMENT_SERVERS'] + path, method=method)
    try:
        with urllib.request.urlopen(request, timeout=SERVICE_TIMEOUT_SECONDS) as answer:
            body = answer.read()
    except urllib.error.HTTPError as error:
        raise RuntimeError('%s %s: %s %s' % (method, request.full_url, error.code, error.read().decode()[-4000:])) from None
    return json.loads(body) if body else None


def _endpoint():
    global _current
    if 'ALLOT_PLACEMENT_URL' in os.environ:
        return os.environ['ALLOT_PLACEMENT_URL']
    if _current is None:
        _current = _service('POST')
    return _current['placementUrl']


def release_server():
    """The test is over: stop its server (if it asked for one)."""
    global _current
    if _current is not None:
        server, _current = _current, None
        _service('DELETE', '/' + server['id'])


class AllotPlacementFixture(fixtures.Fixture):
    # The real fixture's parameters: a database and configuration of its own, which allot keeps.
    def __init__(self, token='admin', conf_fixture=None, db=True, use_intercept=True, register_opts=True):
        super().__init__()
        self.token = token

    def _setUp(self):
        self.endpoint = _endpoint()


placement.PlacementFixture = AllotPlacementFixture

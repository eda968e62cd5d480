# Runs ironic-tempest-plugin's API tests (Debian's ironic-tempest-plugin, unmodified) with stestr,
# as `tempest run` would, against the cloud of the tempest.conf that TEMPEST_CONFIG_DIR and
# TEMPEST_CONFIG name, and writes one JSON line per test to the file ALLOT_RESULTS_FILE names:
# {"test", "outcome": passed|failed|skipped, "reason"}, as allot_results.py does for the pytest
# suites (scripts/test-clients.ts reads both). A class whose setUpClass fails or skips is one line,
# `setUpClass (module.Class)`, as stestr counts it.
#
# Usage: allot_tempest.py WORK_DIR [CONCURRENCY]   (stestr keeps its repository in WORK_DIR)
import io
import json
import os
import subprocess
import sys

import subunit
import testtools

PACKAGES = '/usr/lib/python3/dist-packages'
TESTS = os.path.join(PACKAGES, 'ironic_tempest_plugin/tests/api')
PREFIX = 'ironic_tempest_plugin.tests.api.admin.'
OUTCOMES = {'success': 'passed', 'xfail': 'passed', 'skip': 'skipped', 'fail': 'failed', 'uxsuccess': 'failed'}


def name(test_id):
    """'ironic_tempest_plugin.tests.api.admin.test_nodes.TestNodes.test_x[id-…]' → 'test_nodes.TestNodes.test_x'"""
    return test_id.split('[', 1)[0].replace(PREFIX, '')


def reason(test):
    details = test['details']
    for key in ('reason', 'traceback'):
        if key in details:
            text = details[key].as_text()
            lines = [line for line in text.splitlines() if line.strip()]
            return '\n'.join(lines[-12:])
    return ''


def main():
    work = sys.argv[1]
    concurrency = sys.argv[2] if len(sys.argv) > 2 else '1'
    run = subprocess.run(
        [sys.executable, '-m', 'stestr', '--test-path', TESTS, '--top-dir', PACKAGES, 'run', '--concurrency', concurrency, '--subunit'],
        cwd=work, stdout=subprocess.PIPE, check=False)
    results = []

    def record(test):
        outcome = OUTCOMES.get(test['status'])
        if outcome:
            results.append({'test': name(test['id']), 'outcome': outcome, 'reason': '' if outcome == 'passed' else reason(test)})

    stream = subunit.ByteStreamToStreamResult(io.BytesIO(run.stdout), non_subunit_name='stdout')
    collect = testtools.StreamToDict(record)
    collect.startTestRun()
    stream.run(collect)
    collect.stopTestRun()
    with open(os.environ['ALLOT_RESULTS_FILE'], 'w') as out:
        for entry in results:
            out.write(json.dumps(entry) + '\n')
    # pytest's convention, which test-clients.ts reads: 0 all passed, 1 some failed, else broken
    if not results:
        return 2
    return 1 if any(r['outcome'] == 'failed' for r in results) else 0


if __name__ == '__main__':
    sys.exit(main())

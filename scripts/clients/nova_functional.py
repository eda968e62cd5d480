# Runs Nova's own functional tests (Debian python3-nova's nova/tests/functional), unmodified, and
# writes one JSON line per test to the file ALLOT_RESULTS_FILE names: {"test", "outcome":
# passed|failed|skipped, "reason"}, as allot_results.py does for the pytest suites
# (scripts/test-clients.ts counts both alike).
#
#   nova_functional.py [--placement allot|in-process] NAME [NAME …]
#
# NAME: a module, class or test of nova.tests.functional, as unittest names them. Each test runs
# in this process, one after the other, as stestr's workers run them (pytest cannot: Nova's
# TestCase deletes its own attributes in a cleanup, the test method pytest set on it among them).
# Nova's tests monkey-patch the interpreter with eventlet on import: this process runs nothing else.
#
# --placement allot: before Nova's fixtures are imported, Placement's fixture is replaced by
# allot_placement_fixture.AllotPlacementFixture, whose endpoint is a fresh allot server for each
# test (ALLOT_PLACEMENT_SERVERS hands them out, see allot_placement_fixture.py); Nova's
# PlacementFixture, which subclasses it, sends every report-client call there with the token
# `admin`. --placement in-process: Placement's own fixture, Placement in this process (the reference).
import argparse
import json
import os
import shutil
import sys
import tempfile
import time
import unittest

DEBIAN_API_PASTE = '/etc/nova/api-paste.ini'


def tests_of(suite):
    for test in suite:
        if isinstance(test, unittest.TestSuite):
            yield from tests_of(test)
        else:
            yield test


def traceback_of(text):
    """A failure's traceback without the log lines testtools puts before it."""
    return text.rsplit('\n}}}\n', 1)[-1].strip()


def outcome_of(result, counts_before):
    """What happened to the test that just ran, from what its run added to the result's lists:
    (outcome, reason, the failure with the test's log lines when it failed)."""
    errors, failures, skips, unexpected = counts_before
    new_failures = [text for _, text in result.errors[errors:] + result.failures[failures:]]
    if new_failures:
        return 'failed', '\n'.join(map(traceback_of, new_failures)), '\n'.join(new_failures)
    if len(result.unexpectedSuccesses) > unexpected:
        return 'failed', 'unexpected success', ''
    if len(result.skipped) > skips:
        return 'skipped', result.skipped[-1][1], ''
    return 'passed', '', ''


def use_debian_api_paste(state):
    """Nova's fixtures read $state_path/etc/nova/api-paste.ini, in a source tree; Debian installs
    that file as /etc/nova/api-paste.ini (nova-common). state_path: a directory holding a copy, set
    through oslo.config's environment source, which outlives the configuration resets between tests."""
    os.makedirs(os.path.join(state, 'etc/nova'))
    shutil.copy(DEBIAN_API_PASTE, os.path.join(state, 'etc/nova/api-paste.ini'))
    os.environ['OS_DEFAULT__STATE_PATH'] = state


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--placement', choices=['allot', 'in-process'], default='allot')
    parser.add_argument('names', nargs='+')
    args = parser.parse_args()

    import nova.tests.functional  # noqa: F401  (eventlet's monkey patching, before anything else)

    if args.placement == 'allot':
        import allot_placement_fixture  # the swap happens on import

        release_server = allot_placement_fixture.release_server
    else:
        def release_server():
            pass

    loader = unittest.TestLoader()
    tests = {}
    for name in args.names:
        for test in tests_of(loader.loadTestsFromName(name)):
            tests.setdefault(test.id(), test)

    result = unittest.TestResult()
    failed = False
    with tempfile.TemporaryDirectory(prefix='nova-state-') as state, open(os.environ['ALLOT_RESULTS_FILE'], 'w') as out:
        use_debian_api_paste(state)
        for number, (test_id, test) in enumerate(tests.items(), 1):
            started = time.monotonic()
            before = (len(result.errors), len(result.failures), len(result.skipped), len(result.unexpectedSuccesses))
            try:
                test.run(result)
            finally:
                release_server()
            outcome, reason, details = outcome_of(result, before)
            out.write(json.dumps({'test': test_id, 'outcome': outcome, 'reason': reason}) + '\n')
            out.flush()
            print('%d/%d %s %s (%.1f s)' % (number, len(tests), outcome, test_id, time.monotonic() - started), flush=True)
            if outcome == 'failed':
                print(details or reason, flush=True)  # the suite's log: what Nova logged, then the traceback
                failed = True
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
